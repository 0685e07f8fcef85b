"""Edge cases of the activations: in-place forms, stability at extreme inputs, the
namespaces they live in, and error messages."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ..conftest import requires_torch


def _torch():
    return pytest.importorskip("torch")


def _np(t):
    return t.detach().cpu().numpy()


VALUES = [-3.5, -1.0, -0.2, 0.4, 1.3, 7.0]


# ----------------------------------------------------------------------------- in-place forms
INPLACE = [
    ("relu", lambda m, x: m.nn.functional.relu(x, inplace=True)),
    ("relu_ function", lambda m, x: m.relu_(x)),
    ("F.relu_", lambda m, x: m.nn.functional.relu_(x)),
    ("Tensor.relu_", lambda m, x: x.relu_()),
    ("relu6", lambda m, x: m.nn.functional.relu6(x, inplace=True)),
    ("leaky_relu_", lambda m, x: m.nn.functional.leaky_relu_(x, 0.2)),
    ("leaky_relu", lambda m, x: m.nn.functional.leaky_relu(x, 0.1, inplace=True)),
    ("elu_", lambda m, x: m.nn.functional.elu_(x, 0.7)),
    ("selu_", lambda m, x: m.selu_(x)),
    ("celu_", lambda m, x: m.celu_(x, 1.5)),
    ("hardtanh_", lambda m, x: m.nn.functional.hardtanh_(x, -0.5, 0.5)),
    ("threshold_", lambda m, x: m.nn.functional.threshold_(x, 0.3, -1.0)),
    ("silu", lambda m, x: m.nn.functional.silu(x, inplace=True)),
    ("mish", lambda m, x: m.nn.functional.mish(x, inplace=True)),
    ("hardsigmoid", lambda m, x: m.nn.functional.hardsigmoid(x, inplace=True)),
    ("hardswish", lambda m, x: m.nn.functional.hardswish(x, inplace=True)),
    ("sigmoid_", lambda m, x: m.sigmoid_(x)),
    ("tanh_", lambda m, x: x.tanh_()),
]


@requires_torch
@pytest.mark.parametrize("name,call", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_activation_matches_torch_and_backpropagates(name, call):
    torch = _torch()
    x = ember.tensor(VALUES, dtype=ember.float64, requires_grad=True)
    y = x * 1.0
    out = call(ember, y)
    assert out is y, "in-place form must return its input"
    tx = torch.tensor(VALUES, dtype=torch.float64, requires_grad=True)
    ty = tx * 1.0
    call(torch, ty)
    # PyTorch computes some constants (hardsigmoid's 1/6) in float32
    np.testing.assert_allclose(_np(y), ty.detach().numpy(), rtol=1e-7, atol=1e-12)
    weights = [1.0, -2.0, 3.0, 0.5, 1.5, -1.0]
    (y * ember.tensor(weights, dtype=ember.float64)).sum().backward()
    (ty * torch.tensor(weights, dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(_np(x.grad), tx.grad.numpy(), rtol=1e-7, atol=1e-12)


def test_inplace_on_a_leaf_that_requires_grad_raises():
    leaf = ember.tensor([1.0, -1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        F.relu(leaf, inplace=True)
    with ember.no_grad():
        F.relu(leaf, inplace=True)
    assert _np(leaf).tolist() == [1.0, 0.0]


def test_inplace_without_grad_writes_the_same_memory():
    x = ember.tensor(VALUES)
    view = x[1:3]
    F.elu_(view)
    np.testing.assert_allclose(_np(x)[1:3], np.expm1(VALUES[1:3]), rtol=1e-6)


# ----------------------------------------------------------------------------- stability
def test_sigmoid_softplus_logsigmoid_at_extreme_inputs():
    x = ember.tensor([-1000.0, -400.0, 0.0, 400.0, 1000.0], dtype=ember.float64,
                     requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warnings from NumPy either
        s = ember.sigmoid(x)
        sp = F.softplus(x)
        ls = F.logsigmoid(x)
        silu = F.silu(x)
        mish = F.mish(x)
        (s + sp + ls + silu + mish).sum().backward()
    np.testing.assert_allclose(_np(s), [0.0, np.exp(-400.0), 0.5, 1.0, 1.0],
                               rtol=1e-12, atol=0)
    np.testing.assert_allclose(_np(sp), [0.0, 0.0, np.log(2), 400.0, 1000.0], atol=1e-170)
    np.testing.assert_allclose(_np(ls), [-1000.0, -400.0, -np.log(2), 0.0, 0.0], atol=1e-170)
    np.testing.assert_allclose(_np(silu), [0.0, 0.0, 0.0, 400.0, 1000.0], atol=1e-170)
    np.testing.assert_allclose(_np(mish), [0.0, 0.0, 0.0, 400.0, 1000.0], atol=1e-170)
    assert np.isfinite(_np(x.grad)).all()


@requires_torch
def test_softplus_threshold_and_beta_match_torch():
    torch = _torch()
    values = [-30.0, -2.0, 0.0, 4.9, 5.1, 30.0]
    for beta, threshold in ((1.0, 20.0), (2.0, 10.0), (0.5, 2.0)):
        x = ember.tensor(values, dtype=ember.float64, requires_grad=True)
        tx = torch.tensor(values, dtype=torch.float64, requires_grad=True)
        ours, theirs = F.softplus(x, beta, threshold), torch.nn.functional.softplus(
            tx, beta, threshold)
        np.testing.assert_allclose(_np(ours), theirs.detach().numpy(), rtol=1e-12)
        ours.sum().backward()
        theirs.sum().backward()
        np.testing.assert_allclose(_np(x.grad), tx.grad.numpy(), rtol=1e-12)


@requires_torch
def test_gelu_both_forms_match_torch_in_float64():
    torch = _torch()
    values = np.linspace(-8, 8, 41)
    for approximate in ("none", "tanh"):
        x = ember.tensor(values, requires_grad=True, dtype=ember.float64)
        tx = torch.tensor(values, requires_grad=True)
        ours = F.gelu(x, approximate=approximate)
        theirs = torch.nn.functional.gelu(tx, approximate=approximate)
        np.testing.assert_allclose(_np(ours), theirs.detach().numpy(), rtol=1e-12, atol=1e-14)
        ours.sum().backward()
        theirs.sum().backward()
        np.testing.assert_allclose(_np(x.grad), tx.grad.numpy(), rtol=1e-12, atol=1e-13)


# ----------------------------------------------------------------------------- namespaces
def test_activation_namespaces():
    assert F.sigmoid is ember.sigmoid and F.tanh is ember.tanh
    assert ember.selu is F.selu and ember.celu is F.celu and ember.prelu is F.prelu
    assert ember.threshold is F.threshold
    assert _np(F.relu(ember.tensor([-1.0, 2.0]))).tolist() == [0.0, 2.0]
    for name in ("relu6", "leaky_relu", "elu", "gelu", "silu", "mish", "softplus", "softsign",
                 "hardtanh", "hardsigmoid", "hardswish", "logsigmoid", "glu"):
        assert callable(getattr(F, name)), name
        assert not hasattr(ember, name), f"torch has no torch.{name}; ember should not either"


@requires_torch
def test_prelu_per_channel_weight_gets_its_gradient():
    torch = _torch()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4))
    w = np.array([0.1, -0.2, 0.3])
    ours_x, ours_w = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    t_x, t_w = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ours, theirs = ember.prelu(ours_x, ours_w), torch.prelu(t_x, t_w)
    np.testing.assert_allclose(_np(ours), theirs.detach().numpy())
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(_np(ours_w.grad), t_w.grad.numpy())
    np.testing.assert_allclose(_np(ours_x.grad), t_x.grad.numpy())


# ----------------------------------------------------------------------------- errors
def test_activation_argument_errors():
    x = ember.randn(3, 5)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(x, approximate="fast")
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 "
                                           "is size 5"):
        F.glu(x)
    with pytest.raises(RuntimeError, match="mismatch of parameter numbers and input channel"):
        F.prelu(x, ember.tensor([0.1, 0.2]))
    with pytest.raises(NotImplementedError, match="leaky_relu"):
        F.leaky_relu(ember.tensor([1, -1]))
    with pytest.raises(TypeError, match="'negative_slope' must be a number"):
        F.leaky_relu(x, "0.1")
    with pytest.raises(RuntimeError, match="alpha cannot be 0"):
        F.celu(x, alpha=0.0)
    with pytest.raises(TypeError, match="argument 'input' must be a Tensor"):
        F.elu([1.0, 2.0])


def test_glu_halves_along_dim():
    x = ember.tensor([[1.0, 2.0, 0.0, 100.0]])
    out = F.glu(x)
    np.testing.assert_allclose(_np(out), [[0.5, 2.0]], rtol=1e-6)
    assert F.glu(ember.randn(4, 3), dim=0).shape == (2, 3)


def test_rrelu_training_draws_slopes_in_bounds_and_backpropagates_them():
    ember.manual_seed(3)
    x = -ember.rand(2000, dtype=ember.float64) - 0.5
    x.requires_grad_(True)
    out = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = _np(out) / _np(x)
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    out.sum().backward()
    np.testing.assert_allclose(_np(x.grad), slopes)
    positive = ember.tensor([1.0, 2.0])
    assert _np(F.rrelu(positive, training=True)).tolist() == [1.0, 2.0]
    evaluation = F.rrelu(ember.tensor([-1.0]), 0.1, 0.3)
    np.testing.assert_allclose(_np(evaluation), [-0.2])
    y = ember.tensor([-1.0, 1.0])
    assert ember.rrelu_(y) is y and _np(y)[1] == 1.0
    with pytest.raises(RuntimeError, match="lower bound"):
        F.rrelu(positive, 0.5, 0.1)


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rrelu_training_draws_as_torch_and_keeps_the_stream_in_step(dtype):
    import torch

    results = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        x = lib.tensor([[-1.0, 2.0, 0.0], [-3.0, -0.5, float("nan")]],
                       dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.nn.functional.rrelu(x, 0.1, 0.9, training=True)
        y.sum().backward()  # at 0 the gradient is the drawn slope, as PyTorch draws one
        z = lib.linspace(-3, -0.01, 500, dtype=getattr(lib, dtype))
        lib.nn.functional.rrelu_(z, training=True)
        results.append([repr(y.tolist()), repr(x.grad.tolist()), repr(z.tolist()),
                        repr(lib.rand(3, dtype=lib.float32).tolist())])
    assert results[0] == results[1]


def test_shrinks_at_their_edges():
    x = ember.tensor([-1.0, -0.5, 0.0, 0.5, 0.75])
    assert _np(F.hardshrink(x)).tolist() == [-1.0, 0.0, 0.0, 0.0, 0.75]
    np.testing.assert_allclose(_np(F.softshrink(x)), [-0.5, 0.0, 0.0, 0.0, 0.25], atol=1e-7)
    assert ember.hardshrink is F.hardshrink and x.hardshrink(0.6).shape == (5,)
    with pytest.raises(RuntimeError, match="lambda must be non-negative"):
        F.softshrink(x, -1.0)
