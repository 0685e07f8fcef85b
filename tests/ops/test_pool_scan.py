"""Max pooling's branch-free separable scan (``_first_max``) against the masked
per-offset scan that follows PyTorch's loop (``_scanned_max_indices``), and against
PyTorch itself: ties, -inf, windows of only -inf or padding, NaN, every geometry."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.ops import pooling as P

from ..conftest import requires_torch


def _reference(x, geo):
    """Indices and flags of the masked scan alone."""
    n = len(geo.kernel)
    places = [int(np.prod(geo.size[i + 1:])) for i in range(n)]
    padded = P._pad(np, x, geo.pad_lo, geo.pad_hi, -np.inf)
    chosen = P._scanned_max_indices(np, padded, geo, places)
    base, first = P._window_starts(geo, places)
    empty = chosen < 0
    return base + np.where(empty, first, chosen), empty


def _tie_heavy(rng, shape):
    x = rng.integers(0, 3, shape).astype(np.float32)  # many ties
    flat = x.reshape(-1)
    some = flat[::5]
    some[some == 0] = -0.0  # signed zeros tie with zeros
    flat[1::11] = -np.inf
    x[..., :2] = -np.inf    # whole windows of -inf
    return x


def _random_geometry(rng, n):
    kernel = tuple(int(v) for v in rng.integers(1, 4, n))
    stride = tuple(int(v) for v in rng.integers(1, 4, n))
    padding = tuple(int(rng.integers(0, k // 2 + 1)) for k in kernel)
    dilation = tuple(int(v) for v in rng.integers(1, 3, n))
    size = tuple(int(v) for v in rng.integers(3, 8, n))
    return size, dict(kernel_size=kernel, stride=stride, padding=padding, dilation=dilation,
                      ceil_mode=bool(rng.integers(0, 2)))


def test_branch_free_scan_matches_the_masked_scan():
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(120):
        n = int(rng.integers(1, 4))
        size, kw = _random_geometry(rng, n)
        try:
            geo = P._pool_geometry("max_pool", size, kw["kernel_size"], kw["stride"],
                                   kw["padding"], kw["dilation"], kw["ceil_mode"], n,
                                   "effective kernel size")
        except RuntimeError:
            continue
        x = _tie_heavy(rng, (2, 3) + size)
        indices, empty = P._max_pool_indices(np, x, geo)
        expected, expected_empty = _reference(x, geo)
        np.testing.assert_array_equal(indices, expected)
        np.testing.assert_array_equal(empty, expected_empty)
        checked += 1
    assert checked > 60


@pytest.mark.parametrize("kernel", [(2,), (2, 2), (3, 2), (2, 2, 3)])
def test_tiling_windows_with_ties_and_nan(kernel):
    """NaN sends the pooling to the masked scan: a window's last NaN wins."""
    rng = np.random.default_rng(0)
    n = len(kernel)
    x = _tie_heavy(rng, (2, 3) + tuple(2 * k for k in kernel))
    geo = P._pool_geometry("max_pool", x.shape[2:], kernel, None, 0, 1, False, n, "k")
    clean = P._max_pool_indices(np, x, geo)
    np.testing.assert_array_equal(clean[0], _reference(x, geo)[0])
    x.reshape(-1)[::7] = np.nan
    indices, empty = P._max_pool_indices(np, x, geo)
    expected, expected_empty = _reference(x, geo)
    np.testing.assert_array_equal(indices, expected)
    np.testing.assert_array_equal(empty, expected_empty)


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tie_heavy_pooling_matches_torch(dtype):
    """Values (signed zeros included), indices and gradients against PyTorch."""
    import torch

    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(60):
        n = int(rng.integers(1, 4))
        size, kw = _random_geometry(rng, n)
        x = _tie_heavy(rng, (2, 2) + size).astype(dtype)
        tx = torch.tensor(x, requires_grad=True)
        op = f"max_pool{n}d"
        try:
            tout, tidx = getattr(torch.nn.functional, op)(tx, return_indices=True, **kw)
        except RuntimeError:
            continue
        ex = ember.tensor(x, requires_grad=True)
        out, idx = getattr(F, op)(ex, return_indices=True, **kw)
        np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
        np.testing.assert_array_equal(out.detach().numpy(), tout.detach().numpy())
        np.testing.assert_array_equal(np.signbit(out.detach().numpy()),
                                      np.signbit(tout.detach().numpy()))
        if int(tidx.max()) >= int(np.prod(size)):
            continue  # a window of only padding: PyTorch's backward writes past the plane
        upstream = rng.standard_normal(tuple(out.shape)).astype(dtype)
        (gx,) = torch.autograd.grad(tout, (tx,), torch.tensor(upstream))
        (ours,) = ember.autograd.grad(out, (ex,), ember.tensor(upstream))
        np.testing.assert_array_equal(ours.numpy(), gx.numpy())
        checked += 1
    assert checked > 25


@requires_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_pooling_matches_torch(dtype):
    import torch

    rng = np.random.default_rng(1)
    x = rng.integers(-4, 4, (2, 3, 8, 6)).astype(np.float32)
    tx = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    ex = ember.tensor(x, dtype=getattr(ember, dtype), requires_grad=True)
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)):
        tx.grad = ex.grad = None
        tout, tidx = torch.nn.functional.max_pool2d(tx, return_indices=True, **kw)
        out, idx = F.max_pool2d(ex, return_indices=True, **kw)
        assert out.dtype is ex.dtype
        np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
        np.testing.assert_array_equal(out.detach().float().numpy(),
                                      tout.detach().float().numpy())
        tout.sum().backward()
        out.sum().backward()
        np.testing.assert_array_equal(ex.grad.float().numpy(), tx.grad.float().numpy())


def test_integer_pooling_keeps_its_dtype_and_indices():
    x = ember.tensor([[[[1, 5, 5, 2], [5, 0, 2, 9]]]])
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    assert out.dtype is ember.int64
    assert out.tolist() == [[[[5, 9]]]] and idx.tolist() == [[[[1, 7]]]]


def test_tiled_gradient_goes_to_first_maximum():
    x = ember.tensor([[[[1.0, 3.0, 2.0, 2.0], [3.0, 0.0, 2.0, 1.0]]]], requires_grad=True)
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    assert idx.tolist() == [[[[1, 2]]]]
    y.sum().backward()
    assert x.grad.tolist() == [[[[0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]]
