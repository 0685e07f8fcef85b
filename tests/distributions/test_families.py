"""Behaviour of individual families beyond the shared oracle cases: exact samplers
(Binomial's two regimes, the onion method, Bartlett), constructor errors with PyTorch's
messages, special values, and pathwise gradients of rsample."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember
import ember.distributions as ED

from .cases import CASES

try:
    import torch
    TD = torch.distributions
except ImportError:
    torch = TD = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
F64 = ember.float64


def _t(data):
    return ember.tensor(data, dtype=F64)


@pytest.mark.parametrize("n, p", [(4, 0.3), (40, 0.2), (200, 0.3), (300, 0.8), (5000, 0.5)])
def test_binomial_sampler_matches_the_pmf(n, p):
    """Inversion (n min(p, 1-p) < 10) and BTRS (above) both give the exact law: the
    frequencies match the pmf within a chi-square bound, and the moments n p, n p q."""
    ember.manual_seed(11)
    dist = ED.Binomial(n, _t(p))
    draws = dist.sample((20000,)).numpy()
    assert draws.min() >= 0 and draws.max() <= n and np.all(draws == np.round(draws))
    assert draws.mean() == pytest.approx(n * p, abs=5 * math.sqrt(n * p * (1 - p) / 20000))
    assert draws.var() == pytest.approx(n * p * (1 - p), rel=0.05)
    values, counts = np.unique(draws, return_counts=True)
    expected = 20000 * dist.log_prob(_t(values)).exp().numpy()
    keep = expected > 20
    chi2 = ((counts[keep] - expected[keep]) ** 2 / expected[keep]).sum()
    assert chi2 < keep.sum() + 6 * math.sqrt(2 * keep.sum())


def test_binomial_edge_cases():
    assert ED.Binomial(0, _t(0.5)).sample((3,)).sum().item() == 0
    assert bool((ED.Binomial(6, _t([0.0, 1.0])).sample((4,)) == _t([0.0, 6.0])).all())
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        ED.Binomial(_t([2.0, 3.0]), _t([0.5, 0.5])).entropy()
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        ED.Binomial(_t([2.0, 3.0]), _t([0.5, 0.5])).enumerate_support()
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        ED.kl_divergence(ED.Binomial(2, _t(0.5)), ED.Binomial(3, _t(0.5)))
    assert ED.kl_divergence(ED.Binomial(3, _t(0.5)), ED.Binomial(2, _t(0.5))).item() == math.inf


@needs_torch
def test_binomial_enumerate_support_matches_pytorch():
    mine = ED.Binomial(3, _t([[0.2, 0.7]]))
    theirs = TD.Binomial(3, torch.tensor([[0.2, 0.7]], dtype=torch.float64))
    for expand in (True, False):
        np.testing.assert_array_equal(mine.enumerate_support(expand).numpy(),
                                      theirs.enumerate_support(expand).numpy())


def test_geometric_and_negative_binomial_edges():
    assert ED.Geometric(_t([1.0])).log_prob(_t([0.0])).item() == 0.0
    x = ED.NegativeBinomial(_t(0.0), _t(0.5)).log_prob(_t(0.0))
    assert x.item() == 0.0  # total_count 0 puts all mass on 0


def test_kumaraswamy_mode_is_the_density_maximum():
    a, b = _t([2.0, 3.5, 1.5]), _t([2.0, 1.5, 5.0])
    dist = ED.Kumaraswamy(a, b)
    grid = _t(np.linspace(1e-4, 1 - 1e-4, 20001)).unsqueeze(-1)
    best = grid.squeeze(-1)[dist.log_prob(grid).argmax(0)].numpy()
    np.testing.assert_allclose(dist.mode.numpy(), best, atol=1e-4)
    assert bool(ED.Kumaraswamy(_t([0.5, 2.0]), _t([2.0, 0.5])).mode.isnan().all())


def test_mixture_same_family_errors_and_sampling():
    mix = ED.Categorical(probs=_t([0.2, 0.8]))
    comp = ED.Normal(_t([-10.0, 10.0]), _t([0.1, 0.1]))
    with pytest.raises(ValueError, match="needs to be an instance of ember.distributions"
                                         ".Categorical"):
        ED.MixtureSameFamily(comp, comp)
    with pytest.raises(ValueError, match="need to be an instance"):
        ED.MixtureSameFamily(mix, "normal")
    with pytest.raises(ValueError, match="does not equal"):
        ED.MixtureSameFamily(ED.Categorical(probs=_t([0.5, 0.3, 0.2])), comp)
    with pytest.raises(ValueError, match="is not compatible"):
        ED.MixtureSameFamily(ED.Categorical(probs=_t([[0.5, 0.5]] * 3)),
                             ED.Normal(ember.zeros(4, 2, dtype=F64), 1.0))
    ember.manual_seed(3)
    m = ED.MixtureSameFamily(mix, comp)
    x = m.sample((10000,)).numpy()
    assert (x > 0).mean() == pytest.approx(0.8, abs=0.02)
    assert m.expand((3,)).sample((2,)).shape == (2, 3)
    # a mixture batch that broadcasts against the components'
    wide = ED.MixtureSameFamily(mix, ED.Normal(_t([[-10.0, 10.0]] * 3), 0.1))
    assert tuple(wide.sample((5,)).shape) == (5, 3)
    assert repr(m).startswith("MixtureSameFamily(\n  Categorical(")


@needs_torch
def test_lowrank_constructor_errors_and_matrices_match_pytorch():
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices"):
        ED.LowRankMultivariateNormal(ember.zeros(3), ember.zeros(2, 1), ember.ones(3))
    with pytest.raises(ValueError, match="cov_diag must be a batch of vectors"):
        ED.LowRankMultivariateNormal(ember.zeros(3), ember.zeros(3, 1), ember.ones(2))
    with pytest.raises(ValueError, match="cov_factor must be at least two-dimensional"):
        ED.LowRankMultivariateNormal(ember.zeros(3), ember.zeros(3), ember.ones(3))
    with pytest.raises(ValueError, match="Incompatible batch shapes"):
        ED.LowRankMultivariateNormal(ember.zeros(2, 3), ember.zeros(4, 3, 1), ember.ones(3))
    rng = np.random.default_rng(0)
    loc, factor, diag = rng.normal(size=(2, 4)), rng.normal(size=(2, 4, 2)), \
        rng.uniform(0.5, 2, size=(2, 4))
    mine = ED.LowRankMultivariateNormal(_t(loc), _t(factor), _t(diag))
    theirs = TD.LowRankMultivariateNormal(torch.tensor(loc), torch.tensor(factor),
                                          torch.tensor(diag))
    for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
        np.testing.assert_allclose(getattr(mine, name).numpy(),
                                   getattr(theirs, name).numpy(), rtol=1e-10, atol=1e-12)
    ember.manual_seed(0)
    x = mine.rsample((40000,)).numpy()
    cov = np.einsum("nbi,nbj->bij", x - loc, x - loc) / len(x)
    np.testing.assert_allclose(cov, theirs.covariance_matrix.numpy(), atol=0.12)


@needs_torch
def test_wishart_errors_moments_and_gradients():
    with pytest.raises(AssertionError, match="Exactly one of"):
        ED.Wishart(_t(3.0))
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1"):
        ED.Wishart(_t(0.5), covariance_matrix=ember.eye(2, dtype=F64))
    with pytest.warns(UserWarning, match="Low df values"):
        ED.Wishart(_t(1.5), covariance_matrix=ember.eye(2, dtype=F64))
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 3))
    cov = a @ a.T + np.eye(3)
    mine = ED.Wishart(_t(5.5), covariance_matrix=_t(cov))
    theirs = TD.Wishart(torch.tensor(5.5, dtype=torch.float64),
                        covariance_matrix=torch.tensor(cov))
    np.testing.assert_allclose(mine.precision_matrix.numpy(),
                               theirs.precision_matrix.numpy(), rtol=1e-10)
    ember.manual_seed(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no singular draws at this df
        x = mine.sample((20000,)).numpy()
    np.testing.assert_allclose(x.mean(0), mine.mean.numpy(), rtol=0.05, atol=0.1)
    np.testing.assert_allclose(x.var(0), mine.variance.numpy(), rtol=0.15)
    assert bool(ED.constraints.positive_definite.check(_t(x[:50])).all())
    assert bool(ED.Wishart(_t(2.5), covariance_matrix=_t(cov)).mode.isnan().all())
    df = _t(6.0).requires_grad_()
    (grad,) = ember.autograd.grad(ED.Wishart(df, covariance_matrix=_t(cov)).rsample(
        (20000,)).diagonal(dim1=-2, dim2=-1).sum(-1).mean(), [df])
    assert grad.item() == pytest.approx(np.trace(cov), rel=0.05)  # d E[tr W] / d df


def test_lkj_cholesky_samples():
    with pytest.raises(ValueError, match="greater than or equal to 2"):
        ED.LKJCholesky(1, 1.0)
    ember.manual_seed(4)
    dist = ED.LKJCholesky(4, _t([0.5, 3.0]))
    x = dist.sample((500,))
    assert tuple(x.shape) == (500, 2, 4, 4)
    assert bool(ED.constraints.corr_cholesky.check(x).all())
    # dim 2, concentration 1: the correlation L[1, 0] is uniform on (-1, 1)
    r = np.sort(ED.LKJCholesky(2, _t(1.0)).sample((4000,))[:, 1, 0].numpy())
    gap = np.abs(r - np.linspace(-1, 1, len(r))).max() / 2
    assert gap < 2.0 / math.sqrt(len(r))
    big = dist.expand((3, 2))
    assert tuple(big.sample().shape) == (3, 2, 4, 4)


def test_continuous_bernoulli_and_relaxed():
    with pytest.raises(ValueError, match="The parameter probs has invalid values"):
        ED.ContinuousBernoulli(_t([1.5]), validate_args=True)
    ember.manual_seed(5)
    cold = ED.RelaxedBernoulli(_t(0.05), probs=_t([0.3])).sample((4000,)).numpy()
    assert ((cold < 0.01) | (cold > 0.99)).mean() > 0.9
    assert (cold > 0.5).mean() == pytest.approx(0.3, abs=0.03)
    onehot = ED.RelaxedOneHotCategorical(_t(0.05), probs=_t([0.2, 0.8])).sample((4000,))
    assert (onehot.numpy().argmax(-1) == 1).mean() == pytest.approx(0.8, abs=0.03)
    np.testing.assert_allclose(onehot.sum(-1).numpy(), 1.0, rtol=1e-12)


def test_straight_through_rsample():
    probs = _t([0.1, 0.6, 0.3]).requires_grad_()
    dist = ED.OneHotCategoricalStraightThrough(probs=probs)
    x = dist.rsample((5,))
    assert bool(ED.constraints.one_hot.check(x.detach()).all())
    weights = _t([1.0, 2.0, 4.0])
    (grad,) = ember.autograd.grad((x * weights).sum(), [probs], retain_graph=True)
    (expected,) = ember.autograd.grad((5 * dist.probs * weights).sum(), [probs])
    np.testing.assert_allclose(grad.numpy(), expected.numpy())


def test_bessel_functions_against_scipy():
    special = pytest.importorskip("scipy.special")
    from ember.distributions.von_mises import bessel_ratio, log_i0
    x = np.array([0.1, 1.0, 3.75, 10.0, 29.99, 30.0, 75.0, 700.0, 5000.0])
    np.testing.assert_allclose(log_i0(_t(x)).numpy(), np.log(special.i0e(x)) + x, rtol=1e-12)
    # log I0(x) = x^2 / 4 - x^4 / 64 + ... where log(i0e(x)) + x cancels
    for small in (1e-6, 1e-3):
        series = small ** 2 / 4 - small ** 4 / 64
        assert log_i0(_t([small])).item() == pytest.approx(series, rel=1e-12)
    np.testing.assert_allclose(bessel_ratio(_t(x)).numpy(), special.i1e(x) / special.i0e(x),
                               rtol=1e-13)
    k = _t([0.3, 5.0, 40.0]).requires_grad_()
    assert ember.autograd.gradcheck(bessel_ratio, (k,))
    assert ember.autograd.gradgradcheck(log_i0, (k,))


RSAMPLE = [c for c in CASES if c.mean and c.moments and "Categorical" not in c.name
           # LogNormal: heavy tails; ContinuousBernoulli (probs near 1/2): there, as in
           # PyTorch, rsample is the uniform draw itself (no gradient)
           and c.name not in ("Wishart", "WishartTril", "LogNormal", "ContinuousBernoulli")
           and c.build(ED, {k: _t(make(np.random.default_rng(0)))
                            for k, make in c.params.items()}).has_rsample]


@pytest.mark.parametrize("case", RSAMPLE, ids=lambda c: c.name)
def test_rsample_gradients_are_pathwise(case):
    """d/dtheta of a weighted sample mean of rsample draws estimates d/dtheta of the
    same weighting of ``mean`` (within several standard errors)."""
    rng = np.random.default_rng(0)
    arrays = {k: make(rng) for k, make in case.params.items()}
    params = {k: _t(v).requires_grad_() for k, v in arrays.items()}
    dist = case.build(ED, params)
    ember.manual_seed(8)
    n = 20000
    draws = dist.rsample((n,))
    weights = _t(rng.normal(size=tuple(draws.shape[1:])))
    names = list(params)
    estimate = ember.autograd.grad((draws * weights).mean(0).sum(), [params[k] for k in names],
                                   allow_unused=True, retain_graph=True)
    exact = ember.autograd.grad((dist.mean * weights).sum(), [params[k] for k in names],
                                allow_unused=True)
    for name, g_mc, g in zip(names, estimate, exact):
        if g is None:  # the mean does not depend on it: the estimate is noise around 0
            assert g_mc is None or np.allclose(g_mc.numpy(), 0, atol=0.05), name
            continue
        g, g_mc = g.numpy(), g_mc.numpy()
        scale = np.abs(g).max() + 1e-3
        np.testing.assert_allclose(g_mc, g, atol=0.08 * scale + 0.02,
                                   err_msg=f"{case.name} d/d{name}")


def test_heavy_tailed_rsample_gradients_reach_the_degrees_of_freedom():
    """Implicit (Chi2 / Gamma) reparameterization inside StudentT and FisherSnedecor:
    d E[x^2] / d df for StudentT(df) is d/ddf df / (df - 2) = -2 / (df - 2)^2, and
    d E[x] / d df2 for FisherSnedecor is -2 / (df2 - 2)^2."""
    ember.manual_seed(9)
    n = 40000
    df = _t(9.0).requires_grad_()
    (grad,) = ember.autograd.grad(ED.StudentT(df).rsample((n,)).pow(2).mean(), [df])
    assert grad.item() == pytest.approx(-2 / 7 ** 2, rel=0.15)
    df1, df2 = _t(6.0).requires_grad_(), _t(10.0).requires_grad_()
    mean = ED.FisherSnedecor(df1, df2).rsample((n,)).mean()
    g1, g2 = ember.autograd.grad(mean, [df1, df2])
    assert g2.item() == pytest.approx(-2 / 8 ** 2, rel=0.15)
    assert abs(g1.item()) < 0.01  # the mean does not depend on df1
