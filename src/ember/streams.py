"""``ember.Stream`` and ``ember.Event``: device-agnostic queues of work and markers in them.

On CUDA they are CuPy streams and events: work queued inside ``with stream:`` runs on that
stream, an event marks a point in a stream that other streams (or the host) can wait for,
and two timing events measure the GPU time between them. On the CPU, ops run at once in
the calling thread: a stream has nothing pending, and events are refused, as in PyTorch.

>>> import ember
>>> s = ember.Stream("cpu")
>>> s.query()
True
>>> s
ember.Stream device_type=cpu, device_index=-1, stream_id=0
"""
from __future__ import annotations

from . import backend
from .backend import cuda as _cuda

__all__ = ["Stream", "Event"]


def _device(device) -> backend.device:
    if device is None:
        return backend.parse_device("cuda" if _cuda.is_available() else "cpu")
    if isinstance(device, int) and not isinstance(device, bool):
        return backend.parse_device(f"cuda:{device}")
    return backend.parse_device(device)


def _index(device: backend.device) -> int:
    return device.index if device.index is not None else _cuda.current_device()


def _no_events(what: str):
    return RuntimeError(f"{what} backend doesn't support events.")


class Stream:
    """An ordered queue of device work. ``with stream:`` makes it current.

    device: 'cuda', 'cuda:1', an index or ``ember.device`` (the accelerator by default);
    priority: CUDA stream priority (lower numbers run first).
    """

    def __init__(self, device=None, *, priority: int = 0):
        self.device = _device(device)
        self._handle = None
        if self.device.type == "cuda":
            self._handle = _cuda.new_stream(_index(self.device), priority)
        self._guard = []

    @property
    def device_type(self) -> str:
        return self.device.type

    @property
    def device_index(self) -> int:
        if self.device.type == "cpu":
            return -1
        return _index(self.device)

    @property
    def stream_id(self) -> int:
        return 0 if self._handle is None else int(self._handle.ptr)

    @property
    def native_handle(self) -> int:
        return self.stream_id

    def query(self) -> bool:
        """True when all work queued on this stream has finished."""
        return True if self._handle is None else bool(self._handle.done)

    def synchronize(self) -> None:
        """Wait for all work queued on this stream."""
        if self._handle is not None:
            self._handle.synchronize()

    def wait_event(self, event: "Event") -> None:
        """Make later work on this stream wait until ``event`` has happened."""
        if self._handle is None:
            raise _no_events(self.device.type)
        event.wait(self)

    def wait_stream(self, stream: "Stream") -> None:
        """Make later work on this stream wait for the work queued on ``stream`` so far."""
        if self._handle is not None and stream._handle is not None:
            self._handle.wait_event(stream._handle.record())

    def record_event(self, event: "Event | None" = None) -> "Event":
        """Record ``event`` (a new one by default) at this point of the stream."""
        if self._handle is None:
            raise _no_events(self.device.type)
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def is_capturing(self) -> bool:
        return False

    def __enter__(self):
        if self._handle is not None:
            self._guard.append(self._handle)
            self._handle.__enter__()
        return self

    def __exit__(self, *exc):
        if self._guard:
            self._guard.pop().__exit__(*exc)
        return False

    def __eq__(self, other) -> bool:
        return (isinstance(other, Stream) and self.device == other.device
                and self.stream_id == other.stream_id)

    def __hash__(self) -> int:
        return hash((self.device.type, self.device_index, self.stream_id))

    def __repr__(self) -> str:
        return (f"ember.Stream device_type={self.device.type}, "
                f"device_index={self.device_index}, stream_id={self.stream_id}")


class Event:
    """A marker in a stream: ``record()`` it after some work, then ``wait()``,
    ``synchronize()`` or ``elapsed_time()`` to another timing event (milliseconds)."""

    def __init__(self, device=None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False):
        self.device = _device(device)
        self.enable_timing = bool(enable_timing)
        self._handle = None
        if self.device.type == "cuda":
            with _cuda.device_guard(_index(self.device)):
                self._handle = _cuda.new_event(self.enable_timing, blocking, interprocess)
        self._recorded = False

    @property
    def event_id(self) -> int:
        return 0 if self._handle is None else id(self._handle)

    def _stream(self, stream):
        if self._handle is None:
            raise _no_events(self.device.type)
        if stream is None:
            return _cuda.current_stream(_index(self.device))
        if not isinstance(stream, Stream):
            raise TypeError(f"expected an ember.Stream, got {type(stream).__name__}")
        return stream._handle

    def record(self, stream: Stream | None = None) -> None:
        """Mark the current point of ``stream`` (the current stream by default)."""
        handle = self._stream(stream)
        self._handle.record(handle)
        self._recorded = True

    def wait(self, stream: Stream | None = None) -> None:
        """Make later work on ``stream`` wait until this event has happened."""
        self._stream(stream).wait_event(self._handle)

    def query(self) -> bool:
        """True when the work before the recorded point has finished (or nothing was
        recorded)."""
        return True if self._handle is None else bool(self._handle.done)

    def synchronize(self) -> None:
        """Wait on the host until the recorded point is reached."""
        if self._handle is None:
            raise _no_events(self.device.type)
        self._handle.synchronize()

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds of device time between this event and ``end_event``."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._handle is None:
            raise _no_events(self.device.type)
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return _cuda.elapsed_ms(self._handle, end_event._handle)

    def __repr__(self) -> str:
        index = -1 if self.device.type == "cpu" else _index(self.device)
        return (f"ember.Event device_type={self.device.type}, device_index={index}, "
                f"event_id={self.event_id}")
