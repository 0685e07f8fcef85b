"""nn.init: distributions have the documented bounds / spread, fills are in place and
untracked, and draws follow ember's seed."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn import init


def values(t):
    return t.detach().numpy()


def test_calculate_gain():
    assert init.calculate_gain("linear") == 1
    assert init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", "x")


def test_uniform_and_normal():
    w = nn.Parameter(ember.empty(200, 100))
    out = init.uniform_(w, -0.5, 1.5)
    assert out is w and w.requires_grad and w.is_leaf
    v = values(w)
    assert v.min() >= -0.5 and v.max() <= 1.5
    assert abs(v.mean() - 0.5) < 0.02 and abs(v.std() - 2 / math.sqrt(12)) < 0.02
    init.normal_(w, 3.0, 0.5)
    v = values(w)
    assert abs(v.mean() - 3) < 0.01 and abs(v.std() - 0.5) < 0.01


def test_fills_bump_version_and_record_nothing():
    w = nn.Parameter(ember.ones(3))
    version = w._version
    init.zeros_(w)
    assert w._version == version + 1 and w.grad_fn is None
    np.testing.assert_array_equal(values(w), 0)
    init.ones_(w)
    init.constant_(w, 2.5)
    np.testing.assert_array_equal(values(w), 2.5)


def test_eye_and_dirac():
    w = ember.empty(3, 5)
    init.eye_(w)
    np.testing.assert_array_equal(w.numpy(), np.eye(3, 5))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.eye_(ember.empty(2, 2, 2))
    torch = pytest.importorskip("torch")
    for shape, groups in [((4, 2, 3), 1), ((6, 2, 3, 3), 2), ((2, 3, 3, 3, 3), 1)]:
        e, t = ember.empty(*shape), torch.empty(*shape)
        init.dirac_(e, groups)
        torch.nn.init.dirac_(t, groups)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_xavier():
    w = ember.empty(300, 200)
    init.xavier_uniform_(w, gain=2.0)
    bound = 2.0 * math.sqrt(6 / 500)
    assert np.abs(w.numpy()).max() <= bound and np.abs(w.numpy()).max() > 0.99 * bound
    init.xavier_normal_(w)
    assert abs(w.numpy().std() - math.sqrt(2 / 500)) < 0.003
    conv = ember.empty(16, 8, 3, 3)
    init.xavier_uniform_(conv)
    bound = math.sqrt(6 / (8 * 9 + 16 * 9))
    assert np.abs(conv.numpy()).max() <= bound


def test_kaiming():
    w = ember.empty(400, 250)
    init.kaiming_uniform_(w, nonlinearity="relu")
    bound = math.sqrt(2) * math.sqrt(3 / 250)
    assert np.abs(w.numpy()).max() <= bound and np.abs(w.numpy()).max() > 0.99 * bound
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.numpy().std() - math.sqrt(2 / 400)) < 0.002
    init.kaiming_uniform_(w, a=math.sqrt(5))  # Linear's default: U(-1/sqrt(fan_in), ...)
    assert np.abs(w.numpy()).max() <= 1 / math.sqrt(250)
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_normal_(w, mode="fan_avg")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.kaiming_uniform_(ember.empty(4))


def test_trunc_normal():
    w = ember.empty(100000)
    init.trunc_normal_(w, mean=0.5, std=1.0, a=-0.5, b=1.0)
    v = w.numpy()
    assert v.min() >= -0.5 and v.max() <= 1.0
    # truncated N(0.5, 1) to [-0.5, 1]: mean = 0.5 + (phi(-1) - phi(0.5)) / (Phi(0.5) - Phi(-1))
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    expected = 0.5 + (phi(-1) - phi(0.5)) / (cdf(0.5) - cdf(-1))
    assert abs(v.mean() - expected) < 0.01
    init.trunc_normal_(w, std=0.02)  # timm-style: almost untruncated
    assert abs(w.numpy().std() - 0.02) < 0.001


def test_orthogonal():
    for shape in [(6, 4), (4, 6), (3, 2, 2)]:
        w = ember.empty(*shape)
        init.orthogonal_(w, gain=2.0)
        flat = w.numpy().reshape(shape[0], -1)
        if flat.shape[0] <= flat.shape[1]:
            np.testing.assert_allclose(flat @ flat.T, 4 * np.eye(flat.shape[0]), atol=1e-5)
        else:
            np.testing.assert_allclose(flat.T @ flat, 4 * np.eye(flat.shape[1]), atol=1e-5)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        init.orthogonal_(ember.empty(3))


def test_sparse():
    w = ember.empty(10, 40)
    init.sparse_(w, sparsity=0.3, std=0.5)
    zeros_per_column = (w.numpy() == 0).sum(axis=0)
    assert (zeros_per_column == 3).all()
    nonzero = w.numpy()[w.numpy() != 0]
    assert abs(nonzero.std() - 0.5) < 0.1


def test_draws_follow_the_seed():
    ember.manual_seed(7)
    a = init.normal_(ember.empty(5)).numpy().copy()
    ember.manual_seed(7)
    b = init.normal_(ember.empty(5)).numpy().copy()
    np.testing.assert_array_equal(a, b)
    ember.manual_seed(7)
    l1 = nn.Linear(3, 3).weight.detach().numpy().copy()
    ember.manual_seed(7)
    l2 = nn.Linear(3, 3).weight.detach().numpy().copy()
    np.testing.assert_array_equal(l1, l2)
    g = ember.Generator().manual_seed(3)
    c = init.uniform_(ember.empty(5), generator=g).numpy().copy()
    g.manual_seed(3)
    d = init.uniform_(ember.empty(5), generator=g).numpy().copy()
    np.testing.assert_array_equal(c, d)


def test_float64_and_zero_sized():
    w = ember.empty(3, 3, dtype=ember.float64)
    init.normal_(w)
    assert w.dtype is ember.float64
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(ember.empty(0, 3))
