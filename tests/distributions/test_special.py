"""The Gamma-family special functions behind the distributions: values against PyTorch,
gradients by finite differences, and the implicit reparameterization gradient of Gamma
draws."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.distributions import _special as S

torch = pytest.importorskip("torch")

X = np.concatenate([np.linspace(-9.7, 40.0, 997), [1e-8, 1e-3, 0.5, 1.0, 2.0, 1e3, 1e8]])


def _t(array, **kwargs):
    return ember.tensor(array, dtype=ember.float64, **kwargs)


def test_lgamma_and_digamma_match_pytorch():
    np.testing.assert_allclose(S.lgamma(_t(X)).numpy(), torch.lgamma(torch.tensor(X)).numpy(),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(S.digamma(_t(X)).numpy(),
                               torch.digamma(torch.tensor(X)).numpy(), rtol=1e-11, atol=1e-11)


def test_polygamma_matches_pytorch():
    x = X[X > 0]
    for n in (1, 2, 3):
        # PyTorch's trigamma is accurate to about 5e-10 relative
        np.testing.assert_allclose(S.polygamma(n, _t(x)).numpy(),
                                   torch.polygamma(n, torch.tensor(x)).numpy(), rtol=1e-9)
    np.testing.assert_array_equal(S.polygamma(0, _t(x)).numpy(), S.digamma(_t(x)).numpy())
    with pytest.raises(RuntimeError, match="negative n"):
        S.polygamma(-1, _t(x))


def test_special_values_match_pytorch():
    special = np.array([0.0, -1.0, -2.0, np.inf, -np.inf, np.nan])
    for mine, theirs in ((S.lgamma, torch.lgamma), (S.digamma, torch.digamma)):
        np.testing.assert_array_equal(mine(_t(special)).numpy(),
                                      theirs(torch.tensor(special)).numpy())


def test_gradients_by_finite_differences():
    x = _t([0.3, 1.7, 4.2, 11.0, -0.6], requires_grad=True)
    assert ember.autograd.gradcheck(S.lgamma, (x,))
    assert ember.autograd.gradcheck(S.digamma, (x,))
    assert ember.autograd.gradgradcheck(S.lgamma, (x,))
    assert ember.autograd.gradcheck(lambda v: S.polygamma(2, v), (x[:4].detach()
                                                                    .requires_grad_(),))


def test_the_distributions_use_the_registered_ops():
    assert S.lgamma is ember.ops.special.lgamma
    assert S.digamma is ember.ops.special.digamma
    assert S.gammainc is ember.ops.special.igamma
    x = ember.tensor([1.5, 2.5])
    assert S.lgamma(x).tolist() == ember.lgamma(x).tolist()
    assert S.gammainc(x, x).tolist() == ember.special.gammainc(x, x).tolist()


def test_node_names_and_dtypes():
    x = ember.tensor([1.5, 2.5], requires_grad=True)
    assert S.lgamma(x).grad_fn.name() == "LgammaBackward0"
    assert S.digamma(x).grad_fn.name() == "DigammaBackward0"
    assert S.polygamma(1, x).grad_fn.name() == "PolygammaBackward0"
    assert S.lgamma(x).dtype == ember.float32
    assert S.lgamma(ember.tensor([3])).dtype == ember.float32  # integers give floats


def _gamma_grid():
    rng = np.random.default_rng(0)
    a = np.exp(rng.uniform(-3, 5, 400))
    x = a * np.exp(rng.normal(0, 0.6, 400))
    return np.concatenate([a, [0.5, 3.0, 2.0]]), np.concatenate([x, [0.0, np.inf, 1e-30]])


def test_gammainc_matches_pytorch():
    a, x = _gamma_grid()
    np.testing.assert_allclose(S.gammainc(_t(a), _t(x)).numpy(),
                               torch.special.gammainc(torch.tensor(a), torch.tensor(x)).numpy(),
                               rtol=1e-8, atol=1e-14)
    bad = S.gammainc(_t([-1.0, 1.0]), _t([1.0, -1.0])).numpy()
    assert np.isnan(bad).all()


def test_gammainc_gradients():
    a, x = _gamma_grid()
    a, x = a[:-3], x[:-3]
    a_e, x_e = _t(a, requires_grad=True), _t(x, requires_grad=True)
    grad_a, grad_x = ember.autograd.grad(S.gammainc(a_e, x_e).sum(), [a_e, x_e])
    x_t = torch.tensor(x, requires_grad=True)
    (expected_x,) = torch.autograd.grad(torch.special.gammainc(torch.tensor(a), x_t).sum(), x_t)
    np.testing.assert_allclose(grad_x.numpy(), expected_x.numpy(), rtol=1e-9, atol=1e-300)
    # PyTorch has no gradient in a: central differences of ember's own P
    h = 1e-6 * a
    numeric = (S.gammainc(_t(a + h), _t(x)).numpy() - S.gammainc(_t(a - h), _t(x)).numpy()) \
        / (2 * h)
    # the differences lose ~1e-16 / h to rounding of P
    np.testing.assert_allclose(grad_a.numpy(), numeric, rtol=1e-5, atol=1e-9)


def test_standard_gamma_grad_is_the_implicit_derivative():
    """dx/da = -(dP/da) / (dP/dx) at fixed P: exact by finite differences of P (ember's),
    close to PyTorch's approximation (which is accurate to about 1e-3)."""
    a, x = _gamma_grid()
    p = torch.special.gammainc(torch.tensor(a), torch.tensor(x)).numpy()
    bulk = (p > 1e-3) & (p < 1 - 1e-3)  # where differences of P are well conditioned
    a, x = a[bulk], x[bulk]
    assert a.size > 300
    grad = S.standard_gamma_grad(_t(a), _t(x)).numpy()
    h = 1e-6 * a
    dp_da = (S.gammainc(_t(a + h), _t(x)).numpy() - S.gammainc(_t(a - h), _t(x)).numpy()) / (2 * h)
    a_e, x_e = _t(a), _t(x, requires_grad=True)
    (dp_dx,) = ember.autograd.grad(S.gammainc(a_e, x_e).sum(), [x_e])
    np.testing.assert_allclose(grad, -dp_da / dp_dx.numpy(), rtol=1e-5)
    expected = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
    np.testing.assert_allclose(grad, expected, rtol=5e-3)


def test_standard_gamma_backward_uses_the_implicit_gradient():
    alpha = _t([0.4, 2.0, 9.0], requires_grad=True)
    x = S.standard_gamma(alpha)
    assert x.grad_fn.name() == "StandardGammaBackward0"
    (grad,) = ember.autograd.grad(x.sum(), [alpha])
    expected = S.standard_gamma_grad(alpha.detach(), x.detach())
    np.testing.assert_array_equal(grad.numpy(), expected.numpy())
