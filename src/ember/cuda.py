"""``ember.cuda``: is a GPU there, which one, and waiting for it. All CuPy work happens in
``ember.backend.cuda``; this module is the PyTorch-named front."""
from __future__ import annotations

from .amp import cuda as amp
from .backend import cuda as _cuda

__all__ = ["amp", "is_available", "device_count", "current_device", "set_device", "synchronize",
           "get_device_name", "memory_allocated", "empty_cache", "manual_seed",
           "manual_seed_all"]


def is_available() -> bool:
    """True when CuPy is installed and a working GPU is present. Cheap; never raises."""
    try:
        return _cuda.is_available()
    except Exception:  # is_available must never raise, whatever the driver does
        return False


def device_count() -> int:
    """The number of GPUs CuPy sees (0 without CUDA)."""
    return _cuda.device_count() if is_available() else 0


def current_device() -> int:
    """The index of the current GPU."""
    return _cuda.current_device()


def set_device(device) -> None:
    """Make ``device`` (an index, 'cuda:1' or an ember.device) the current GPU."""
    from .backend import parse_device

    _cuda.set_device(parse_device(device if not isinstance(device, int) else f"cuda:{device}")
                     .index)


def synchronize(device=None) -> None:
    """Wait until every kernel queued on the GPU has finished (for honest timings)."""
    index = None if device is None else (device if isinstance(device, int) else
                                         __import__("ember").device(device).index)
    _cuda.synchronize(index)


def get_device_name(device=None) -> str:
    """The GPU's name, e.g. 'NVIDIA H200'."""
    index = None if device is None else (device if isinstance(device, int) else
                                         __import__("ember").device(device).index)
    return _cuda.get_device_name(index)


def memory_allocated(device=None) -> int:
    """Bytes held by ember's tensors in CuPy's memory pool."""
    return _cuda.memory_allocated()


def empty_cache() -> None:
    """Give the memory pool's unused blocks back to the driver."""
    _cuda.empty_cache()


def manual_seed(seed: int) -> None:
    """Seed the GPU generators (``ember.manual_seed`` seeds them too)."""
    from . import random

    for index in range(device_count()):
        from .backend import parse_device

        random.generator_for(parse_device(f"cuda:{index}"))
        random._cuda_generators[index].manual_seed(seed)


manual_seed_all = manual_seed
