"""What sends ops off the core's fast lane (``autograd.function.fast_lane``) and onto the
general path: a trace being recorded (``ember.compile``), an autocast region, anomaly mode,
saved-tensor hooks.
Autocast's dispatch wrapper reads the same count before it looks for an autocast region.

A leaf module. Each of those features counts itself in here as it switches on and out as it
switches off, so the lane reads one number, ``DETOURS.count``, on every op instead of
asking each feature in turn (three lookups, one of them thread-local). The count is over
all threads: while any thread has a feature on, every thread takes the general path, which
checks each feature for its own thread and gives the same results, only slower. (So does
a thread that ends with anomaly mode switched on: its count stays.)
"""
from __future__ import annotations

import threading


class _Detours:
    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


DETOURS = _Detours()
_LOCK = threading.Lock()


def enter() -> None:
    """A feature that needs the general path switched on."""
    with _LOCK:
        DETOURS.count += 1


def leave() -> None:
    """... and off again."""
    with _LOCK:
        DETOURS.count -= 1
