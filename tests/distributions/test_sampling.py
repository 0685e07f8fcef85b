"""Sampling: shapes and dtypes, sample moments against the distribution's own mean and
variance (fixed seed, tolerances of several standard errors), reparameterized gradients
(pathwise: d E[x] / d theta estimated from rsample matches the exact derivative), and
determinism under ember.manual_seed."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
import ember.distributions as ED

from .cases import CASES

N = 20000


def _build(case, seed=0):
    rng = np.random.default_rng(seed)
    params = {k: ember.tensor(make(rng), dtype=ember.float64) for k, make in case.params.items()}
    return case.build(ED, params)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_sample_shapes_and_dtypes(case):
    dist = _build(case)
    for sample_shape in ((), (5,), (2, 3)):
        x = dist.sample(sample_shape)
        expected = tuple(sample_shape) + tuple(dist.batch_shape) + tuple(dist.event_shape)
        assert tuple(x.shape) == expected
        assert not x.requires_grad
        discrete_index = case.name.startswith("Categorical")
        assert x.dtype == (ember.int64 if discrete_index else ember.float64)
        if dist.has_rsample:
            assert tuple(dist.rsample(sample_shape).shape) == expected
    assert dist.sample(ember.Size([4])).shape[0] == 4
    assert bool(dist.support.check(dist.sample((50,))).all())


@pytest.mark.parametrize("case", [c for c in CASES if not c.name.startswith("Categorical")
                                  and c.moments], ids=lambda c: c.name)
def test_sample_moments(case):
    ember.manual_seed(1)
    dist = _build(case, seed=3)
    x = dist.sample((N,)).numpy()
    if case.name == "LogNormal":  # heavy tails: check the moments of log(x)
        x, dist = np.log(x), dist.base_dist
    mean, variance = dist.mean.numpy(), dist.variance.numpy()
    np.testing.assert_allclose(x.mean(0), mean, atol=6 * np.sqrt(variance.max() / N) + 1e-9)
    # var of the sample variance ~ 2 var^2 / N for light tails; allow heavy ones
    np.testing.assert_allclose(x.var(0), variance, rtol=0.08, atol=1e-9)


def test_categorical_sample_frequencies():
    ember.manual_seed(2)
    probs = ember.tensor([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], dtype=ember.float64)
    x = ED.Categorical(probs=probs).sample((N,)).numpy()
    for row in range(2):
        freq = np.bincount(x[:, row], minlength=3) / N
        np.testing.assert_allclose(freq, probs[row].numpy(), atol=0.015)


def test_multinomial_counts_sum_to_total_and_zero_total():
    m = ED.Multinomial(7, probs=ember.tensor([[0.2, 0.8], [0.5, 0.5]]))
    x = m.sample((30,))
    assert bool((x.sum(-1) == 7).all())
    zero = ED.Multinomial(0, probs=ember.tensor([0.2, 0.8]))
    assert zero.sample((3,)).sum().item() == 0
    np.testing.assert_allclose(zero.entropy().item(), 0.0, atol=1e-12)


def test_empty_sample_shape():
    assert tuple(ED.Categorical(probs=ember.tensor([0.5, 0.5])).sample((0,)).shape) == (0,)
    assert tuple(ED.Normal(0.0, 1.0).rsample((0, 2)).shape) == (0, 2)


def test_seed_makes_samples_reproducible():
    for case in CASES:
        dist = _build(case)
        ember.manual_seed(7)
        first = dist.sample((3,))
        ember.manual_seed(7)
        np.testing.assert_array_equal(dist.sample((3,)).numpy(), first.numpy())


def _pathwise(make, names, seed=0, n=N):
    """d/d theta of mean(f(rsample)) for each parameter."""
    ember.manual_seed(seed)
    params = {k: ember.tensor(v, dtype=ember.float64, requires_grad=True)
              for k, v in names.items()}
    dist, value = make(params)
    return {k: g.item() for k, g in zip(params, ember.autograd.grad(value(dist), list(
        params.values())))}


def test_rsample_gradients_are_pathwise():
    def mean_of(dist, n=N):
        return dist.rsample((n,)).mean()

    g = _pathwise(lambda p: (ED.Normal(p["loc"], p["scale"]),
                             lambda d: (d.rsample((N,)) ** 2).mean()), {"loc": 0.5, "scale": 2.0})
    assert g["loc"] == pytest.approx(1.0, rel=0.08)       # d E[x^2] / d loc = 2 loc
    assert g["scale"] == pytest.approx(4.0, rel=0.03)     # = 2 scale
    g = _pathwise(lambda p: (ED.Normal(p["loc"], p["scale"]), mean_of),
                  {"loc": 0.5, "scale": 2.0})
    assert g["loc"] == pytest.approx(1.0, abs=1e-12)
    g = _pathwise(lambda p: (ED.Uniform(p["low"], p["high"]), mean_of),
                  {"low": -1.0, "high": 3.0})
    assert g["low"] == pytest.approx(0.5, rel=0.03) and g["high"] == pytest.approx(0.5, rel=0.03)
    g = _pathwise(lambda p: (ED.Exponential(p["rate"]), mean_of), {"rate": 2.0})
    assert g["rate"] == pytest.approx(-0.25, rel=0.04)   # d (1 / rate) = -1 / rate^2
    g = _pathwise(lambda p: (ED.Laplace(p["loc"], p["scale"]),
                             lambda d: (d.rsample((N,)) - 1.0).abs().mean()),
                  {"loc": 1.0, "scale": 1.5})
    assert g["scale"] == pytest.approx(1.0, rel=0.03)    # E|x - loc| = scale
    g = _pathwise(lambda p: (ED.LogNormal(p["loc"], p["scale"]), mean_of),
                  {"loc": 0.2, "scale": 0.5})
    expected = math.exp(0.2 + 0.125)
    assert g["loc"] == pytest.approx(expected, rel=0.03)
    assert g["scale"] == pytest.approx(0.5 * expected, rel=0.06)


def test_multivariate_normal_rsample_gradient():
    loc = ember.tensor([0.5, -1.0], dtype=ember.float64, requires_grad=True)
    tril = ember.tensor([[1.0, 0.0], [0.3, 0.8]], dtype=ember.float64, requires_grad=True)
    x = ED.MultivariateNormal(loc, scale_tril=tril).rsample((N,))
    loc_grad, tril_grad = ember.autograd.grad((x ** 2).sum(-1).mean(), [loc, tril])
    # E|x|^2 = |loc|^2 + trace(L L^T): d/dloc = 2 loc, d/dL = 2 L
    np.testing.assert_allclose(loc_grad.numpy(), 2 * loc.detach().numpy(), rtol=0.08)
    np.testing.assert_allclose(np.tril(tril_grad.numpy()), 2 * tril.detach().numpy(),
                               atol=0.08)


@pytest.mark.parametrize("alpha,rate", [(0.3, 1.0), (1.0, 2.0), (4.0, 0.5), (40.0, 3.0)])
def test_gamma_rsample_gradient(alpha, rate):
    g = _pathwise(lambda p: (ED.Gamma(p["alpha"], p["rate"]),
                             lambda d: d.rsample((N,)).mean()), {"alpha": alpha, "rate": rate})
    assert g["alpha"] == pytest.approx(1 / rate, rel=0.04)          # E = alpha / rate
    assert g["rate"] == pytest.approx(-alpha / rate ** 2, rel=0.04)


def test_beta_and_dirichlet_rsample_gradients():
    a, b = 2.0, 3.0
    g = _pathwise(lambda p: (ED.Beta(p["a"], p["b"]), lambda d: d.rsample((N,)).mean()),
                  {"a": a, "b": b})
    assert g["a"] == pytest.approx(b / (a + b) ** 2, rel=0.05)
    assert g["b"] == pytest.approx(-a / (a + b) ** 2, rel=0.05)
    alpha = ember.tensor([0.5, 2.0, 3.5], dtype=ember.float64, requires_grad=True)
    ember.manual_seed(0)
    x = ED.Dirichlet(alpha).rsample((N,))
    (grad,) = ember.autograd.grad(x[:, 0].mean(), [alpha])
    total = 6.0
    expected = np.array([(total - 0.5) / total ** 2, -0.5 / total ** 2, -0.5 / total ** 2])
    np.testing.assert_allclose(grad.numpy(), expected, rtol=0.06)
    np.testing.assert_allclose(x.sum(-1).detach().numpy(), 1.0, atol=1e-12)


def test_sample_has_no_gradient_and_rsample_is_refused_where_undefined():
    loc = ember.tensor([0.0], requires_grad=True)
    assert not ED.Normal(loc, 1.0).sample().requires_grad
    assert ED.Normal(loc, 1.0).rsample().requires_grad
    for dist in (ED.Poisson(2.0), ED.Bernoulli(0.5), ED.Categorical(ember.tensor([0.5, 0.5])),
                 ED.Multinomial(3, ember.tensor([0.5, 0.5]))):
        assert not dist.has_rsample
        with pytest.raises(NotImplementedError, match="rsample|reparameterized"):
            dist.rsample()


def test_gamma_draws_stay_positive_for_tiny_concentration():
    x = ED.Gamma(ember.tensor([1e-3, 1e-2], dtype=ember.float64), 1.0).rsample((2000,))
    assert bool((x > 0).all())
    x32 = ED.Gamma(ember.tensor([1e-3]), 1.0).sample((2000,))
    assert x32.dtype == ember.float32 and bool((x32 > 0).all())


@pytest.mark.parametrize("case", [c for c in CASES if c.cdf], ids=lambda c: c.name)
def test_samples_follow_the_cdf(case):
    """Kolmogorov-Smirnov: the largest gap between the empirical cdf of the draws and
    the distribution's cdf stays under 2.3 / sqrt(n) (about the 0.01% critical value)."""
    ember.manual_seed(4)
    dist = _build(case, seed=5)
    n = 4000
    x = dist.sample((n,))
    levels = dist.cdf(x).numpy().reshape(n, -1)
    grid = np.arange(1, n + 1) / n
    for column in np.sort(levels, axis=0).T:
        gap = max(np.abs(column - grid).max(), np.abs(column - grid + 1 / n).max())
        assert gap < 2.3 / math.sqrt(n), case.name


def test_von_mises_circular_moments():
    """E[cos(x - loc)] = I1(k) / I0(k) = 1 - variance, E[sin(x - loc)] = 0, and the
    draws lie in [-pi, pi)."""
    ember.manual_seed(5)
    loc = ember.tensor([0.5, -2.0, 3.0], dtype=ember.float64)
    dist = ED.VonMises(loc, ember.tensor([0.01, 2.0, 50.0], dtype=ember.float64))
    x = dist.sample((N,))
    assert bool(((x >= -math.pi) & (x < math.pi)).all())
    cos = ember.cos(x - loc).numpy()
    np.testing.assert_allclose(cos.mean(0), 1 - dist.variance.numpy(),
                               atol=5 * cos.std(0).max() / math.sqrt(N))
    sin = ember.sin(x - loc).numpy()
    np.testing.assert_allclose(sin.mean(0), 0.0, atol=5 / math.sqrt(N))


def test_heavy_tailed_samples_match_their_medians():
    """Distributions without a mean: the sample median is the analytic one."""
    ember.manual_seed(6)
    loc, scale = ember.tensor(1.5, dtype=ember.float64), ember.tensor(2.0, dtype=ember.float64)
    cases = [(ED.Cauchy(loc, scale), 1.5), (ED.HalfCauchy(scale), 2.0),
             (ED.StudentT(ember.tensor(1.0, dtype=ember.float64), loc, scale), 1.5),
             (ED.Pareto(scale, ember.tensor(0.5, dtype=ember.float64)), 2.0 * 2 ** 2),
             (ED.FisherSnedecor(ember.tensor(2.0, dtype=ember.float64),
                                ember.tensor(2.0, dtype=ember.float64)), 1.0)]
    for dist, median in cases:
        x = dist.sample((N,)).numpy()
        assert np.median(x) == pytest.approx(median, rel=0.05), type(dist).__name__
