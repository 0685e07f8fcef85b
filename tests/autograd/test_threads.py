"""Autograd from several threads: grad mode is per thread, separate graphs backpropagate
concurrently to the right gradients, and `.grad` accumulation into a shared leaf loses
nothing."""
from __future__ import annotations

import threading

import numpy as np

import ember


def _run_threads(target, count: int, timeout: float = 60.0):
    """Run ``target(index)`` in ``count`` threads; re-raise the first error of any."""
    errors = []

    def guarded(index):
        try:
            target(index)
        except BaseException as error:  # reported in the main thread below
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
        assert not thread.is_alive(), "a worker thread hung"
    if errors:
        raise errors[0]


# ----------------------------------------------------------------------------- grad mode
def test_no_grad_in_one_thread_leaves_the_others_recording():
    x = ember.ones(3, requires_grad=True)
    inside = threading.Event()
    checked = threading.Event()
    seen = {}

    def quiet(_):
        with ember.no_grad():
            inside.set()
            assert checked.wait(10)
            seen["quiet"] = ((x * 2).requires_grad, ember.is_grad_enabled())

    def recording(_):
        assert inside.wait(10)  # the other thread is inside no_grad now
        seen["recording"] = ((x * 2).requires_grad, ember.is_grad_enabled())
        checked.set()

    _run_threads(lambda i: (quiet, recording)[i](i), 2)
    assert seen == {"quiet": (False, False), "recording": (True, True)}
    assert ember.is_grad_enabled()


def test_a_new_thread_starts_with_grad_enabled_whatever_its_parent_does():
    seen = []
    with ember.no_grad():
        worker = threading.Thread(target=lambda: seen.append(ember.is_grad_enabled()))
        worker.start()
        worker.join()
        assert not ember.is_grad_enabled()
    assert seen == [True]


def test_plain_set_grad_enabled_and_inference_mode_stay_in_their_thread():
    def switch_off(_):
        ember.set_grad_enabled(False)  # a plain call, never undone in this thread
        assert not ember.is_grad_enabled()
        with ember.inference_mode():
            assert ember.is_inference_mode_enabled()

    _run_threads(switch_off, 1)
    assert ember.is_grad_enabled() and not ember.is_inference_mode_enabled()


def test_grad_mode_switches_concurrently_without_leaking_between_threads():
    x = ember.ones(4, requires_grad=True)

    def toggle(index):
        for step in range(300):
            if (step + index) % 2:
                with ember.no_grad():
                    assert not (x * 2).requires_grad
            else:
                with ember.enable_grad():
                    assert (x * 2).requires_grad

    _run_threads(toggle, 4)


# ----------------------------------------------------------------------------- separate graphs
def _train(seed: int, steps: int):
    """A small MLP trained by SGD; returns its final parameters and the last gradients."""
    rng = np.random.default_rng(seed)
    inputs = ember.tensor(rng.standard_normal((16, 5)))
    targets = ember.tensor(rng.standard_normal((16, 1)))
    w1 = ember.tensor(rng.standard_normal((5, 8)) * 0.3, requires_grad=True)
    w2 = ember.tensor(rng.standard_normal((8, 1)) * 0.3, requires_grad=True)
    for _ in range(steps):
        hidden = (inputs @ w1).tanh()
        loss = ((hidden @ w2 - targets) ** 2).mean()
        w1.grad = w2.grad = None
        loss.backward()
        with ember.no_grad():
            w1 -= 0.1 * w1.grad
            w2 -= 0.1 * w2.grad
    return [t.detach().numpy().copy() for t in (w1, w2, w1.grad, w2.grad)]


def test_threads_training_separate_graphs_get_the_serial_results():
    expected = [_train(seed, 100) for seed in range(4)]
    results = [None] * 4

    def work(index):
        results[index] = _train(index, 100)

    _run_threads(work, 4)
    for mine, reference in zip(results, expected):
        for a, b in zip(mine, reference):
            np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------- shared leaf
def test_threads_backpropagating_into_one_leaf_lose_no_gradient():
    # Each trial: four threads finish their forward, meet at a barrier, and backpropagate
    # at once into the same 2**20-element leaf, each adding into its existing .grad.
    # Unsynchronized in-place adds lose updates in about half the trials (on one core
    # too: the OS preempts inside NumPy's loop); the test stops at the first that does.
    size, count = 1 << 20, 4
    for _ in range(60):
        w = ember.zeros(size, dtype=ember.float64, requires_grad=True)
        w.grad = ember.zeros(size, dtype=ember.float64)
        barrier = threading.Barrier(count)

        def work(index):
            loss = (w * float(index + 1)).sum()
            barrier.wait(30)
            loss.backward()

        _run_threads(work, count)
        wrong = int((w.grad.numpy() != sum(range(1, count + 1))).sum())
        assert wrong == 0, f"{wrong} of {size} gradient elements lost an update"



def test_threads_viewing_one_new_tensor_share_one_version_counter(monkeypatch):
    # a new tensor gets its own counter on first need; two threads must not each give it
    # one (a counter that is slow to make holds the first thread inside that step)
    import sys
    import time

    tensor_module = sys.modules["ember.tensor"]

    class SlowCounter(tensor_module.VersionCounter):
        __slots__ = ()

        def __init__(self):
            time.sleep(0.01)
            super().__init__()

    monkeypatch.setattr(tensor_module._Unwritten, "kind", SlowCounter)
    t = ember.ones(4) + 1
    seen = [None, None]

    def view(index):
        seen[index] = t[index:]._version_counter

    _run_threads(view, 2)
    assert seen[0] is seen[1] is t._version_counter
    t[1:].add_(1)
    assert t._version == 1
