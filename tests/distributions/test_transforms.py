"""Transforms and TransformedDistribution against PyTorch: forward, inverse, log |det J|,
composition, caching, and the log_prob / cdf / icdf of transformed distributions."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.distributions as ED
from ember.distributions import transforms as ET

torch = pytest.importorskip("torch")
TD = torch.distributions
TT = torch.distributions.transforms

X = np.random.default_rng(0).normal(size=(4, 3))


def _pair(name):
    loc, scale = np.array([0.5, -1.0, 2.0]), np.array([2.0, -0.5, 1.5])
    return {
        "Exp": (ET.ExpTransform(), TT.ExpTransform()),
        "Sigmoid": (ET.SigmoidTransform(), TT.SigmoidTransform()),
        "Tanh": (ET.TanhTransform(), TT.TanhTransform()),
        "AffineTensor": (ET.AffineTransform(ember.tensor(loc), ember.tensor(scale)),
                         TT.AffineTransform(torch.tensor(loc), torch.tensor(scale))),
        "AffineNumber": (ET.AffineTransform(1.0, -3.0), TT.AffineTransform(1.0, -3.0)),
        "AffineEvent": (ET.AffineTransform(ember.tensor(loc), ember.tensor(scale), event_dim=1),
                        TT.AffineTransform(torch.tensor(loc), torch.tensor(scale), event_dim=1)),
        "Power": (ET.PowerTransform(ember.tensor(2.5, dtype=ember.float64)),
                  TT.PowerTransform(torch.tensor(2.5, dtype=torch.float64))),
        "Compose": (ET.ComposeTransform([ET.AffineTransform(0.5, 2.0), ET.ExpTransform()]),
                    TT.ComposeTransform([TT.AffineTransform(0.5, 2.0), TT.ExpTransform()])),
        "Inverse": (ET.ExpTransform().inv, TT.ExpTransform().inv),
    }[name]


NAMES = ["Exp", "Sigmoid", "Tanh", "AffineTensor", "AffineNumber", "AffineEvent", "Power",
         "Compose", "Inverse"]


@pytest.mark.parametrize("name", NAMES)
def test_transform_matches_pytorch(name):
    mine, theirs = _pair(name)
    x = np.abs(X) + 0.1 if name in ("Power", "Inverse") else X
    x_e = ember.tensor(x, requires_grad=True)
    x_t = torch.tensor(x, requires_grad=True)
    y_e, y_t = mine(x_e), theirs(x_t)
    np.testing.assert_allclose(y_e.detach().numpy(), y_t.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(mine.inv(y_e).detach().numpy(), x, rtol=1e-9, atol=1e-12)
    ladj_e, ladj_t = mine.log_abs_det_jacobian(x_e, y_e), theirs.log_abs_det_jacobian(x_t, y_t)
    np.testing.assert_allclose(ladj_e.detach().numpy(), ladj_t.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    (g_e,) = ember.autograd.grad((ladj_e.sum() + y_e.sum()), [x_e])
    (g_t,) = torch.autograd.grad((ladj_t.sum() + y_t.sum()), [x_t])
    np.testing.assert_allclose(g_e.numpy(), g_t.numpy(), rtol=1e-9, atol=1e-12)
    assert mine.bijective == theirs.bijective
    assert mine.domain.event_dim == theirs.domain.event_dim
    assert mine.codomain.event_dim == theirs.codomain.event_dim
    sign_e, sign_t = mine.sign, theirs.sign
    np.testing.assert_array_equal(np.asarray(sign_e.numpy() if hasattr(sign_e, "numpy")
                                             else sign_e),
                                  np.asarray(sign_t.numpy() if hasattr(sign_t, "numpy")
                                             else sign_t))
    assert tuple(mine.forward_shape((4, 3))) == tuple(theirs.forward_shape((4, 3)))


def test_inverse_and_equality():
    exp = ET.ExpTransform()
    assert exp.inv.inv is exp
    assert exp == ET.ExpTransform() and exp != ET.SigmoidTransform()
    assert exp.inv == ET.ExpTransform().inv
    assert ET.AffineTransform(1.0, 2.0) == ET.AffineTransform(1.0, 2.0)
    assert ET.AffineTransform(1.0, 2.0) != ET.AffineTransform(1.0, 3.0)
    compose = ET.ComposeTransform([exp, ET.AffineTransform(0.0, 2.0)])
    assert compose.inv.inv is compose
    assert compose == ET.ComposeTransform([ET.ExpTransform(), ET.AffineTransform(0.0, 2.0)])
    assert repr(exp) == "ExpTransform()" and repr(exp.inv) == "_InverseTransform(ExpTransform())"
    x = ember.tensor([1.0, 2.0])
    np.testing.assert_array_equal(ET.identity_transform(x).numpy(), x.numpy())


def test_cache_returns_the_same_tensor():
    cached = ET.ExpTransform(cache_size=1)
    x = ember.tensor([0.5, 1.0])
    y = cached(x)
    assert cached(x) is y
    assert cached.inv(y) is x
    assert ET.ExpTransform().with_cache(1)._cache_size == 1
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        ET.ExpTransform(cache_size=2)


def _transformed(lib):
    D = ED if lib is ember else TD
    T = ET if lib is ember else TT
    base = D.Normal(lib.tensor([0.3, -0.2], dtype=lib.float64),
                    lib.tensor([1.2, 0.7], dtype=lib.float64))
    return [
        D.TransformedDistribution(base, [T.AffineTransform(1.0, -2.0), T.ExpTransform()]),
        D.TransformedDistribution(base, T.SigmoidTransform()),
        D.TransformedDistribution(base, [T.TanhTransform()]),
        D.TransformedDistribution(base, [T.AffineTransform(lib.zeros(3, 2, dtype=lib.float64),
                                                           2.0)]),
        D.TransformedDistribution(D.Normal(lib.zeros(2, 3, dtype=lib.float64), 1.0),
                                  [T.AffineTransform(0.0, 2.0, event_dim=1)]),
    ]


def test_transformed_distributions_match_pytorch():
    values = [np.array([[0.4, 2.5]]), np.array([[0.2, 0.9]]), np.array([[-0.3, 0.6]]),
              np.random.default_rng(1).normal(size=(3, 2)),
              np.random.default_rng(2).normal(size=(2, 3))]
    for mine, theirs, value in zip(_transformed(ember), _transformed(torch), values):
        assert tuple(mine.batch_shape) == tuple(theirs.batch_shape)
        assert tuple(mine.event_shape) == tuple(theirs.event_shape)
        assert repr(mine.support) == repr(theirs.support)
        np.testing.assert_allclose(mine.log_prob(ember.tensor(value)).numpy(),
                                   theirs.log_prob(torch.tensor(value)).numpy(), rtol=1e-10)
        assert tuple(mine.rsample((5,)).shape) == tuple(theirs.rsample((5,)).shape)
        assert mine.has_rsample
    first_e, first_t = _transformed(ember)[0], _transformed(torch)[0]
    value = np.array([[0.4, 2.5]])
    np.testing.assert_allclose(first_e.cdf(ember.tensor(value)).numpy(),
                               first_t.cdf(torch.tensor(value)).numpy(), rtol=1e-10)
    u = np.array([[0.2, 0.7]])
    np.testing.assert_allclose(first_e.icdf(ember.tensor(u)).numpy(),
                               first_t.icdf(torch.tensor(u)).numpy(), rtol=1e-10)
    big = first_e.expand((4, 2))
    assert tuple(big.batch_shape) == (4, 2)
    assert tuple(big.sample().shape) == (4, 2)


def test_transformed_rsample_carries_gradients():
    loc = ember.tensor([0.3], dtype=ember.float64, requires_grad=True)
    dist = ED.TransformedDistribution(ED.Normal(loc, 1.0), [ED.AffineTransform(0.0, 3.0)])
    (grad,) = ember.autograd.grad(dist.rsample((100,)).mean(), [loc])
    assert grad.item() == pytest.approx(3.0)
