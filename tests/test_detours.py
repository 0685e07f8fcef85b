"""ember.detours: every feature that needs the general path counts itself in while it is on,
and out when it goes off, exceptions included; the fast lane then steps aside."""
from __future__ import annotations

import threading

import pytest

import ember
from ember import tracing
from ember.detours import DETOURS


def _switches():
    def compile_call():
        seen = []

        def step(x):
            seen.append(DETOURS.count)
            return (x * 2).sum()

        ember.compile(step)(ember.ones(3))
        return seen[0]

    def inside(manager):
        with manager:
            return DETOURS.count

    def anomaly_switch():
        ember.set_anomaly_enabled(True)
        try:
            return DETOURS.count
        finally:
            ember.set_anomaly_enabled(False)

    def autocast_switch():
        ember.set_autocast_enabled("cpu", True)
        try:
            return DETOURS.count
        finally:
            ember.set_autocast_enabled("cpu", False)

    return {"compile": compile_call,
            "autocast": lambda: inside(ember.autocast("cpu", dtype=ember.bfloat16)),
            "set_autocast_enabled": autocast_switch,
            "detect_anomaly": lambda: inside(ember.autograd.detect_anomaly()),
            "set_detect_anomaly": lambda: inside(ember.autograd.set_detect_anomaly(True)),
            "set_anomaly_enabled": anomaly_switch}


@pytest.mark.parametrize("name", sorted(_switches()))
def test_each_switch_counts_in_and_out(name):
    before = DETOURS.count
    assert _switches()[name]() == before + 1
    assert DETOURS.count == before


def test_an_error_inside_still_counts_out():
    before = DETOURS.count
    with pytest.raises(ValueError):
        with ember.autograd.detect_anomaly():
            raise ValueError("inside")
    with pytest.raises(ValueError):
        with ember.autocast("cpu", dtype=ember.bfloat16):
            raise ValueError("inside")

    def failing(x):
        raise ValueError("inside")

    with pytest.raises(ValueError):
        ember.compile(failing)(ember.ones(2))
    assert DETOURS.count == before


def test_switching_twice_counts_once():
    before = DETOURS.count
    ember.set_anomaly_enabled(True)
    ember.set_anomaly_enabled(True)
    with ember.autograd.detect_anomaly():  # already on: no second count
        assert DETOURS.count == before + 1
    assert DETOURS.count == before + 1
    ember.set_anomaly_enabled(False)
    assert DETOURS.count == before
    tracing.set_tracer(None)  # no tracer to stop
    assert DETOURS.count == before


def test_another_threads_anomaly_mode_is_its_own():
    # the count sends this thread's ops the general way, which still reads this thread's
    # own flag: ops here record no forward stack
    on, done = threading.Event(), threading.Event()

    def other():
        with ember.autograd.detect_anomaly():
            on.set()
            done.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    try:
        assert on.wait(10)
        x = ember.ones(2, requires_grad=True)
        y = x.exp()
        assert DETOURS.count >= 1
        assert getattr(y.grad_fn, "_forward_stack", None) is None
        np_value = y.detach().numpy()
        assert (np_value == ember.ones(2).exp().numpy()).all()
    finally:
        done.set()
        thread.join()
