"""The stride-1 convolution kernel (shifted matrix products over padded channels-last rows)
against the im2col kernel and against PyTorch, over the geometries it takes."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.ops import conv as C

from ..conftest import requires_torch

# The shifted kernels are called directly on few channels; through F.conv* (the torch
# comparison) the 32-channel case takes them, the others the im2col route.
CASES = [  # (input shape, weight shape, padding, dilation)
    ((2, 32, 6, 5), (3, 32, 3, 3), (1, 1), (1, 1)),
    ((2, 3, 9), (4, 3, 3), (1,), (1,)),
    ((2, 3, 7, 8), (5, 3, 3, 3), (1, 1), (1, 1)),
    ((1, 2, 9, 7), (3, 2, 3, 2), (0, 2), (2, 1)),
    ((2, 2, 5, 6), (2, 2, 1, 1), (0, 0), (1, 1)),
    ((1, 2, 4, 5, 3), (3, 2, 3, 3, 2), (1, 1, 0), (1, 1, 1)),
]


def _geometry(x_shape, w_shape, padding, dilation, groups=1):
    size, kernel = x_shape[2:], w_shape[2:]
    out = tuple(s + 2 * p - d * (k - 1) for s, p, d, k in zip(size, padding, dilation, kernel))
    n = len(size)
    return C._Geometry(tuple(size), tuple(kernel), (1,) * n, tuple(padding), tuple(padding),
                       tuple(dilation), groups, out)


@pytest.mark.parametrize("x_shape, w_shape, padding, dilation", CASES)
def test_shifted_kernels_match_im2col(x_shape, w_shape, padding, dilation):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    geo = _geometry(x_shape, w_shape, padding, dilation)
    assert C._shifted(geo, C.SHIFTED_MIN_CHANNELS)
    keep: list = []
    y = C._conv_shifted(np, x, w, geo, keep)
    # the im2col route: the same sum written as one GEMM over the im2col matrix
    col = C._im2col(np, x, geo)                                  # (B, 1, C K, P)
    expected = np.einsum("ok,bkp->bop", w.reshape(w.shape[0], -1), col[:, 0])
    np.testing.assert_allclose(y, expected.reshape(y.shape), rtol=1e-10, atol=1e-10)
    dy = rng.standard_normal(y.shape)
    dw = C._conv_weight_shifted(np, x, dy, geo, w.shape, keep[0])
    expected_dw = np.einsum("bop,bkp->ok", dy.reshape(dy.shape[0], dy.shape[1], -1), col[:, 0])
    np.testing.assert_allclose(dw, expected_dw.reshape(w.shape), rtol=1e-10, atol=1e-10)
    # without the kept rows it recomputes them
    np.testing.assert_allclose(C._conv_weight_shifted(np, x, dy, geo, w.shape), dw)


def test_strided_and_grouped_take_the_im2col_route():
    many = C.SHIFTED_MIN_CHANNELS
    assert not C._shifted(_geometry((1, 2, 5, 5), (2, 2, 3, 3), (1, 1), (1, 1))._replace(
        stride=(2, 1)), many)
    assert not C._shifted(_geometry((1, 2, 5, 5), (2, 1, 3, 3), (1, 1), (1, 1), groups=2),
                          many)
    assert not C._shifted(_geometry((1, 2, 5, 5), (2, 2, 3, 3), (1, 1), (1, 1)), many - 1)


def test_empty_batch():
    x = ember.zeros(0, 2, 5, 5, requires_grad=True)
    w = ember.randn(3, 2, 3, 3, requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    assert y.shape == (0, 3, 5, 5)
    y.sum().backward()
    assert x.grad.shape == (0, 2, 5, 5)
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros((3, 2, 3, 3), np.float32))


@requires_torch
@pytest.mark.parametrize("x_shape, w_shape, padding, dilation", CASES)
def test_gradients_match_torch(x_shape, w_shape, padding, dilation):
    import torch

    rng = np.random.default_rng(1)
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[0])
    conv = {3: "conv1d", 4: "conv2d", 5: "conv3d"}[len(x_shape)]
    ex, ew, eb = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ey = getattr(F, conv)(ex, ew, eb, padding=padding, dilation=dilation)
    ty = getattr(torch.nn.functional, conv)(tx, tw, tb, padding=padding, dilation=dilation)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-9, atol=1e-9)
    dy = rng.standard_normal(ty.shape)
    ey.backward(ember.tensor(dy))
    ty.backward(torch.tensor(dy))
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-9)


# 'same' convolutions with 32 channels in and out: both gradients read one padded grid of
# dy (odd and even kernels, asymmetric 'same' padding, dilation, 1-3 spatial dims)
SAME_CASES = [  # (input shape, kernel, padding, dilation)
    ((2, 32, 6, 5), (3, 3), 1, 1),
    ((2, 32, 7, 6), (2, 4), "same", 1),
    ((1, 32, 7, 8), (3, 2), "same", (2, 3)),
    ((2, 32, 9), (5,), 2, 1),
    ((1, 32, 3, 4, 3), (3, 1, 2), "same", 1),
]


@pytest.mark.parametrize("x_shape, kernel, padding, dilation", SAME_CASES)
def test_same_convolution_shares_the_gradient_grid(x_shape, kernel, padding, dilation):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal((33,) + x_shape[1:2] + kernel)
    n = len(kernel)
    dil = (dilation,) * n if isinstance(dilation, int) else dilation
    if padding == "same":
        lo = tuple(d * (k - 1) // 2 for d, k in zip(dil, kernel))
        hi = tuple(d * (k - 1) - a for d, k, a in zip(dil, kernel, lo))
    else:
        lo = hi = (padding,) * n
    geo = C._Geometry(tuple(x_shape[2:]), kernel, (1,) * n, lo, hi, dil, 1, tuple(x_shape[2:]))
    assert C._shares_grid(geo, x.shape[1], w.shape[0])
    keep: list = []
    y = C._conv(np, x, w, geo, keep)
    dy = rng.standard_normal(y.shape)
    dx, dw = C._conv_grads_shifted(np, dy, w, geo, keep[0])
    np.testing.assert_allclose(dx, C._conv_transpose(np, dy, w, geo), rtol=1e-10, atol=1e-10)
    col = C._im2col(np, x, geo)
    expected_dw = np.einsum("bop,bkp->ok", dy.reshape(dy.shape[0], dy.shape[1], -1), col[:, 0])
    np.testing.assert_allclose(dw, expected_dw.reshape(w.shape), rtol=1e-10, atol=1e-10)


def test_grid_sharing_needs_same_size_and_channels():
    geo = _geometry((1, 32, 6, 6), (32, 32, 3, 3), (1, 1), (1, 1))
    assert C._shares_grid(geo, 32, 32)
    assert not C._shares_grid(geo, 32, C.SHIFTED_MIN_CHANNELS - 1)
    assert not C._shares_grid(_geometry((1, 32, 6, 6), (32, 32, 3, 3), (0, 0), (1, 1)), 32, 32)
    assert not C._shares_grid(_geometry((1, 32, 6, 6), (32, 32, 3, 3), (2, 2), (1, 1)), 32, 32)


@requires_torch
@pytest.mark.parametrize("x_shape, kernel, padding, dilation", SAME_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_same_convolution_matches_torch(x_shape, kernel, padding, dilation, dtype):
    """Values and all three gradients through F.conv*, and a gradient of the gradient."""
    import torch

    rng = np.random.default_rng(3)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = (rng.standard_normal((32,) + x_shape[1:2] + kernel) / 8).astype(dtype)
    b = rng.standard_normal(32).astype(dtype)
    conv = {3: "conv1d", 4: "conv2d", 5: "conv3d"}[len(x_shape)]
    ex, ew, eb = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ey = getattr(F, conv)(ex, ew, eb, padding=padding, dilation=dilation)
    ty = getattr(torch.nn.functional, conv)(tx, tw, tb, padding=padding, dilation=dilation)
    tol = 1e-9 if dtype == "float64" else 2e-4
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    assert ey.grad_fn.name() == ty.grad_fn.name()
    dy = rng.standard_normal(ty.shape).astype(dtype)
    egrads = ember.autograd.grad(ey, (ex, ew, eb), ember.tensor(dy), create_graph=True)
    tgrads = torch.autograd.grad(ty, (tx, tw, tb), torch.tensor(dy), create_graph=True)
    for e, t in zip(egrads, tgrads):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol,
                                   atol=tol * 10)
    # the array route (no graph of the backward) gives the same gradients
    ey2 = getattr(F, conv)(ex, ew, eb, padding=padding, dilation=dilation)
    ey2.backward(ember.tensor(dy))
    for e, t in zip((ex, ew, eb), tgrads):
        np.testing.assert_allclose(e.grad.numpy(), t.detach().numpy(), rtol=tol, atol=tol * 10)
    (egg,) = ember.autograd.grad((egrads[0] * egrads[0]).sum() + egrads[1].sum(), (ex,))
    (tgg,) = torch.autograd.grad((tgrads[0] * tgrads[0]).sum() + tgrads[1].sum(), (tx,))
    np.testing.assert_allclose(egg.numpy(), tgg.numpy(), rtol=tol, atol=tol * 10)


@requires_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_same_convolution_in_half_precision(dtype):
    import torch

    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 32, 5, 5)).astype(np.float32)
    w = (rng.standard_normal((32, 32, 3, 3)) / 16).astype(np.float32)
    ex = ember.tensor(x, dtype=getattr(ember, dtype), requires_grad=True)
    ew = ember.tensor(w, dtype=getattr(ember, dtype), requires_grad=True)
    ey = F.conv2d(ex, ew, padding=1)
    assert ey.dtype is ex.dtype
    ey.float().sum().backward()
    assert ex.grad.dtype is ex.dtype and ew.grad.dtype is ew.dtype
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    torch.nn.functional.conv2d(tx, tw, padding=1).sum().backward()
    np.testing.assert_allclose(ex.grad.float().numpy(), tx.grad.numpy(), rtol=0.05, atol=0.1)
    np.testing.assert_allclose(ew.grad.float().numpy(), tw.grad.numpy(), rtol=0.05, atol=0.5)


def test_random_geometries_match_im2col():
    """Seeded fuzzing of the shifted kernels' row layout (blocks that share their padding
    with the next line): 1-3 dims, kernel, dilation and padding on each side (up to past
    the kernel's reach), against the im2col sums; and both gradients of 'same' ones."""
    rng = np.random.default_rng(7)
    checked = shared = 0
    for _ in range(150):
        n = int(rng.integers(1, 4))
        size = tuple(int(v) for v in rng.integers(1, 6, n))
        kernel = tuple(int(v) for v in rng.integers(1, 4, n))
        dilation = tuple(int(v) for v in rng.integers(1, 3, n))
        lo = tuple(int(v) for v in rng.integers(0, 4, n))
        hi = tuple(int(v) for v in rng.integers(0, 4, n))
        if rng.integers(0, 2):  # 'same'
            lo = tuple(d * (k - 1) // 2 for d, k in zip(dilation, kernel))
            hi = tuple(d * (k - 1) - a for d, k, a in zip(dilation, kernel, lo))
        out = tuple(s + a + b - d * (k - 1)
                    for s, a, b, d, k in zip(size, lo, hi, dilation, kernel))
        if min(out) < 1:
            continue
        geo = C._Geometry(size, kernel, (1,) * n, lo, hi, dilation, 1, out)
        batch = int(rng.integers(1, 4))
        x = rng.standard_normal((batch, 3) + size)
        w = rng.standard_normal((4, 3) + kernel)
        keep: list = []
        y = C._conv_shifted(np, x, w, geo, keep)
        col = C._im2col(np, x, geo)[:, 0]                          # (B, C K, P)
        expected = np.einsum("ok,bkp->bop", w.reshape(4, -1), col).reshape(y.shape)
        np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-10)
        dy = rng.standard_normal(y.shape)
        expected_dw = np.einsum("bop,bkp->ok", dy.reshape(batch, 4, -1), col).reshape(w.shape)
        dw = C._conv_weight_shifted(np, x, dy, geo, w.shape, keep[0])
        np.testing.assert_allclose(dw, expected_dw, rtol=1e-10, atol=1e-10)
        if out == size:
            dx, dw = C._conv_grads_shifted(np, dy, w, geo, keep[0])
            expected_dx = C._conv_transpose(np, dy, w, geo)
            np.testing.assert_allclose(dx, expected_dx, rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(dw, expected_dw, rtol=1e-10, atol=1e-10)
            shared += 1
        checked += 1
    assert checked > 80 and shared > 30
