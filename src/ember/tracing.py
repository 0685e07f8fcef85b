"""The switch that ``ember.compile`` flips while it records one call.

A leaf module: the core (Tensor, Function.apply, the engine, optimizers, modules) reads
``state.tracer`` at the few points a trace must see, and does nothing more while it is None.
"""
from __future__ import annotations

import threading


class _State(threading.local):
    # per thread: a trace records only the ops of the thread that runs the compiled call
    tracer = None


state = _State()


def data_dependent(what: str) -> None:
    """A tensor's value reached Python (``.item()``, ``bool()``, ``.tolist()``): the running
    trace, if any, cannot be replayed, because Python may branch on that value."""
    tracer = state.tracer
    if tracer is not None:
        tracer.unsafe(f"{what} read a tensor's value into Python")


def unsupported(what: str) -> None:
    """Something a trace cannot record happened; the running trace, if any, is unsafe."""
    tracer = state.tracer
    if tracer is not None:
        tracer.unsafe(what)
