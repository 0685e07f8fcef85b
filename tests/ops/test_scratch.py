"""Reused temporary buffers (backend.scratch) and the kernels that use them: a buffer is
reused only for the same name, shape and dtype in the same thread, the cache stays
bounded, and kernels whose temporaries share buffers stay correct when several calls of
the same shape are in flight (two layers alike, two forwards before one backward)."""
from __future__ import annotations

import threading

import numpy as np

import ember
import ember.nn.functional as F
from ember.backend import scratch as _scratch

from ..conftest import requires_torch

BIG = (512, 1024)  # 2 MiB of float32: above the size worth keeping


def test_same_key_reuses_and_other_keys_do_not():
    _scratch.clear()
    a = _scratch.empty(np, "a", BIG, np.float32)
    assert _scratch.empty(np, "a", BIG, np.float32) is a
    assert _scratch.empty(np, "b", BIG, np.float32) is not a
    assert _scratch.empty(np, "a", BIG, np.float64) is not a
    assert _scratch.empty(np, "a", (1024, 512), np.float32) is not a
    small = _scratch.empty(np, "a", (4, 4), np.float32)
    assert _scratch.empty(np, "a", (4, 4), np.float32) is not small  # small: not kept


def test_threads_get_their_own_buffers():
    _scratch.clear()
    mine = _scratch.empty(np, "t", BIG, np.float32)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(_scratch.empty(np, "t", BIG,
                                                                        np.float32)))
    thread.start()
    thread.join()
    assert seen[0] is not mine and seen[0].shape == BIG


def test_the_cache_is_bounded(monkeypatch):
    _scratch.clear()
    monkeypatch.setattr(_scratch, "LIMIT_BYTES", 5 << 20)
    first = _scratch.empty(np, "0", BIG, np.float32)
    for i in range(1, 4):
        _scratch.empty(np, str(i), BIG, np.float32)
    kept = _scratch._local.buffers
    assert sum(b.nbytes for b in kept.values()) <= 5 << 20
    assert _scratch.empty(np, "0", BIG, np.float32) is not first  # the oldest went first


def test_other_array_modules_get_fresh_arrays():
    class FakeXp:
        @staticmethod
        def empty(shape, dtype):
            return np.empty(shape, dtype)

    a = _scratch.empty(FakeXp, "x", BIG, np.float32)
    assert _scratch.empty(FakeXp, "x", BIG, np.float32) is not a


@requires_torch
def test_layers_of_one_shape_and_two_forwards_before_backward():
    import torch

    rng = np.random.default_rng(0)
    # float64: in float32 near-ties of overlapping pooling windows may pick another element
    # than PyTorch's (the convolutions round differently); temporaries above 1 MiB
    x = rng.standard_normal((8, 32, 28, 28))
    weights = [rng.standard_normal((32, 32, 3, 3)) / 17 for _ in range(2)]
    ours = [ember.tensor(w, requires_grad=True) for w in weights]
    theirs = [torch.tensor(w, requires_grad=True) for w in weights]

    def run(lib, ws, functional):
        total = 0
        for scale in (1.0, -0.5):  # two forwards of the same shapes, one backward
            h = lib.tensor(x * scale)
            for w in ws:
                h = functional.max_pool2d(functional.relu(functional.conv2d(h, w, padding=1)),
                                          3, stride=1, padding=1)
            total = total + (h * h).sum()
        total.backward()
        return h

    eh = run(ember, ours, F)
    th = run(torch, theirs, torch.nn.functional)
    np.testing.assert_allclose(eh.detach().numpy(), th.detach().numpy(), rtol=1e-10,
                               atol=1e-10)
    for e, t in zip(ours, theirs):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-8)
