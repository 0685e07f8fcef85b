"""``ember.accelerator``: the device-agnostic view of the accelerator (CUDA, when a GPU and
CuPy are there), with PyTorch's names.

>>> import ember
>>> acc = ember.accelerator.current_accelerator()
>>> acc is None or acc.type == "cuda"
True
>>> ember.accelerator.device_count() == ember.cuda.device_count()
True
"""
from __future__ import annotations

from . import backend
from . import cuda as _cuda_api
from .backend import cuda as _cuda
from .streams import Stream

__all__ = ["current_accelerator", "is_available", "device_count", "current_device_index",
           "current_device_idx", "set_device_index", "set_device_idx", "device_index",
           "synchronize", "current_stream", "set_stream", "empty_cache", "memory_allocated"]


def is_available() -> bool:
    """Whether an accelerator (a CUDA GPU with CuPy) can be used."""
    return _cuda_api.is_available()


def current_accelerator(check_available: bool = False):
    """``ember.device('cuda')`` when ember can use a GPU, else None."""
    return backend.parse_device("cuda") if is_available() else None


def device_count() -> int:
    """The number of accelerator devices (0 without one)."""
    return _cuda_api.device_count()


def _require() -> None:
    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def _index(device) -> int:
    if device is None:
        return _cuda.current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    parsed = backend.parse_device(device)
    if parsed.type != "cuda":
        raise ValueError(f"{parsed.type} doesn't match the current accelerator cuda.")
    return parsed.index if parsed.index is not None else _cuda.current_device()


def current_device_index() -> int:
    """The index of the current accelerator device."""
    _require()
    return _cuda.current_device()


def set_device_index(device, /) -> None:
    """Make ``device`` (an index, 'cuda:1' or an ember.device) the current one."""
    _require()
    _cuda.set_device(_index(device))


current_device_idx = current_device_index
set_device_idx = set_device_index


class device_index:
    """``with ember.accelerator.device_index(1):`` runs the block on device 1 (None: stay)."""

    def __init__(self, device, /):
        self.index = device
        self._previous = None

    def __enter__(self):
        if self.index is not None:
            _require()
            self._previous = _cuda.current_device()
            _cuda.set_device(self.index)
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            _cuda.set_device(self._previous)
        return False


def synchronize(device=None, /) -> None:
    """Wait for all work queued on the device."""
    _require()
    _cuda.synchronize(_index(device))


def current_stream(device=None, /) -> Stream:
    """The stream work is queued on now."""
    _require()
    index = _index(device)
    stream = Stream.__new__(Stream)
    stream.device = backend.parse_device(f"cuda:{index}")
    stream._handle = _cuda.current_stream(index)
    stream._guard = []
    return stream


def set_stream(stream: Stream) -> None:
    """Make ``stream`` the current stream of its device."""
    _require()
    if not isinstance(stream, Stream):
        raise TypeError(f"set_stream() expected an ember.Stream, got {type(stream).__name__}")
    if stream._handle is not None:
        with _cuda.device_guard(stream.device_index):
            stream._handle.use()


def empty_cache() -> None:
    """Give the accelerator's cached, unused memory back to the driver."""
    if is_available():
        _cuda_api.empty_cache()


def memory_allocated(device_index=None, /) -> int:
    """Bytes held by tensors on the accelerator."""
    _require()
    return _cuda_api.memory_allocated(device_index)
