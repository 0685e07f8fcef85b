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
