"""The switch that ``ember.compile`` flips while it records one call.

A leaf module: the core (Tensor, Function.apply, the engine, optimizers, modules) reads
``state.tracer`` at the few points a trace must see, and does nothing more while it is None.
"""
from __future__ import annotations

from threading import get_ident

from . import detours


class _State:
    __slots__ = ("tracer",)

    def __init__(self) -> None:
        self.tracer = None


state = _State()


def set_tracer(tracer) -> None:
    """Start (a tracer) or stop (None) recording; the fast lane steps aside while one is
    set (``ember.detours``)."""
    previous, state.tracer = state.tracer, tracer
    if previous is None and tracer is not None:
        detours.enter()
    elif previous is not None and tracer is None:
        detours.leave()


def current():
    """The tracer recording on this thread, or None (a trace records only the ops of the
    thread that runs the compiled call)."""
    tracer = state.tracer
    if tracer is not None and tracer.thread == get_ident():
        return tracer
    return None


def data_dependent(what: str) -> None:
    """A tensor's value reached Python (``.item()``, ``bool()``, ``.tolist()``): the running
    trace, if any, cannot be replayed, because Python may branch on that value."""
    tracer = current()
    if tracer is not None:
        tracer.unsafe(f"{what} read a tensor's value into Python")


def unsupported(what: str) -> None:
    """Something a trace cannot record happened; the running trace, if any, is unsafe."""
    tracer = current()
    if tracer is not None:
        tracer.unsafe(what)
