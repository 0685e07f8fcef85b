"""kl_divergence: every registered pair against PyTorch (values and gradients), the
dispatch rules of register_kl, and the exponential-family (Bregman) fallback."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
import ember.distributions as ED
from ember.distributions import kl as ember_kl

from .cases import positive, real, simplex, tril, unit

torch = pytest.importorskip("torch")
TD = torch.distributions

B = (2, 3)


def _uniform_low(rng):
    return rng.uniform(-0.5, 0.4, size=B)


FAMILIES = {
    "Normal": (lambda D, p: D.Normal(p["loc"], p["scale"]),
               {"loc": real(B), "scale": positive(B)}),
    "Laplace": (lambda D, p: D.Laplace(p["loc"], p["scale"]),
                {"loc": real(B), "scale": positive(B)}),
    "Uniform": (lambda D, p: D.Uniform(p["low"], p["low"] + p["width"]),
                {"low": _uniform_low, "width": positive(B, 0.2, 1.4)}),
    "Exponential": (lambda D, p: D.Exponential(p["rate"]), {"rate": positive(B)}),
    "Gamma": (lambda D, p: D.Gamma(p["concentration"], p["rate"]),
              {"concentration": positive(B, 0.3, 5.0), "rate": positive(B)}),
    "Beta": (lambda D, p: D.Beta(p["a"], p["b"]),
             {"a": positive(B, 0.3, 4.0), "b": positive(B, 0.3, 4.0)}),
    "Poisson": (lambda D, p: D.Poisson(p["rate"]), {"rate": positive(B, 0.5, 6.0)}),
    "Bernoulli": (lambda D, p: D.Bernoulli(probs=p["probs"]), {"probs": unit(B)}),
    "Categorical": (lambda D, p: D.Categorical(probs=p["probs"]), {"probs": simplex(B + (4,))}),
    "OneHotCategorical": (lambda D, p: D.OneHotCategorical(logits=p["logits"]),
                          {"logits": real(B + (4,))}),
    "Dirichlet": (lambda D, p: D.Dirichlet(p["concentration"]),
                  {"concentration": positive(B + (4,), 0.3, 4.0)}),
    "MultivariateNormal": (lambda D, p: D.MultivariateNormal(p["loc"], scale_tril=p["tril"]),
                           {"loc": real(B), "tril": tril((2,), 3)}),
    "TransformedDistribution": (lambda D, p: D.LogNormal(p["loc"], p["scale"]),
                                {"loc": real(B), "scale": positive(B)}),
    "Independent": (lambda D, p: D.Independent(D.Normal(p["loc"], p["scale"]), 1),
                    {"loc": real(B), "scale": positive(B)}),
    "Binomial": (lambda D, p: D.Binomial(6, probs=p["probs"]), {"probs": unit(B)}),
    "Cauchy": (lambda D, p: D.Cauchy(p["loc"], p["scale"]),
               {"loc": real(B), "scale": positive(B)}),
    "ContinuousBernoulli": (lambda D, p: D.ContinuousBernoulli(probs=p["probs"]),
                            {"probs": unit(B)}),
    "Geometric": (lambda D, p: D.Geometric(probs=p["probs"]), {"probs": unit(B)}),
    "Gumbel": (lambda D, p: D.Gumbel(p["loc"], p["scale"]),
               {"loc": real(B), "scale": positive(B)}),
    "HalfNormal": (lambda D, p: D.HalfNormal(p["scale"]), {"scale": positive(B)}),
    "LowRankMultivariateNormal": (
        lambda D, p: D.LowRankMultivariateNormal(p["loc"], p["factor"], p["diag"]),
        {"loc": real(B), "factor": real((2, 3, 2)), "diag": positive(B)}),
    # alpha on both sides of 1 and 2 (KL to Exponential/Gamma/Normal infinite below)
    "Pareto": (lambda D, p: D.Pareto(p["scale"], p["alpha"]),
               {"scale": positive(B, 0.2, 1.5), "alpha": positive(B, 0.5, 5.0)}),
}

PAIRS = sorted((p.__name__, q.__name__) for p, q in ember_kl._KL_REGISTRY
               if p is not ED.ExponentialFamily)


def _make(name, seed):
    build, makers = FAMILIES[name]
    rng = np.random.default_rng(seed)
    arrays = {k: make(rng) for k, make in makers.items()}
    mine = {k: ember.tensor(v, dtype=ember.float64, requires_grad=True)
            for k, v in arrays.items()}
    theirs = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
              for k, v in arrays.items()}
    return build(ED, mine), build(TD, theirs), mine, theirs


def test_registry_covers_pytorch_pairs_among_ember_families():
    """Every pair PyTorch registers whose two types ember has is registered in ember."""
    ours = {(p.__name__, q.__name__) for p, q in ember_kl._KL_REGISTRY}
    names = set(ED.__all__)
    theirs = {(p.__name__, q.__name__) for p, q in TD.kl._KL_REGISTRY
              if p.__name__ in names and q.__name__ in names}
    assert theirs - ours == set()
    assert ours - theirs == set()


@pytest.mark.parametrize("pair", PAIRS, ids=lambda pair: f"{pair[0]}-{pair[1]}")
def test_kl_matches_pytorch(pair):
    p_e, p_t, p_mine, p_theirs = _make(pair[0], 0)
    q_e, q_t, q_mine, q_theirs = _make(pair[1], 1)
    kl_t = TD.kl_divergence(p_t, q_t)
    kl_e = ED.kl_divergence(p_e, q_e)
    expected = kl_t.detach().numpy()
    np.testing.assert_allclose(kl_e.detach().numpy(), expected, rtol=1e-9, atol=1e-11)
    finite = np.isfinite(expected)
    if not kl_t.requires_grad or not finite.any():
        return
    weights = np.where(finite, np.random.default_rng(2).normal(size=expected.shape), 0.0)
    leaves_t = list(p_theirs.values()) + list(q_theirs.values())
    leaves_e = list(p_mine.values()) + list(q_mine.values())
    grads_t = torch.autograd.grad((kl_t * torch.tensor(weights)).nansum(), leaves_t,
                                  allow_unused=True)
    masked = ember.where(ember.tensor(finite), kl_e, 0.0)
    grads_e = ember.autograd.grad((masked * ember.tensor(weights)).sum(), leaves_e,
                                  allow_unused=True)
    for g_e, g_t in zip(grads_e, grads_t):
        if g_t is None:
            assert g_e is None or np.allclose(g_e.numpy(), 0)
            continue
        np.testing.assert_allclose(g_e.numpy(), g_t.numpy(), rtol=1e-8, atol=1e-10)


def test_kl_is_zero_for_equal_distributions():
    for name in FAMILIES:
        p, _, _, _ = _make(name, 3)
        q, _, _, _ = _make(name, 3)
        np.testing.assert_allclose(ED.kl_divergence(p, q).detach().numpy(), 0.0, atol=1e-12)


def test_unregistered_pair_raises_not_implemented():
    p = ED.Categorical(probs=ember.tensor([0.5, 0.5]))
    with pytest.raises(NotImplementedError, match="p type Categorical and q type Normal"):
        ED.kl_divergence(p, ED.Normal(0.0, 1.0))


def test_register_kl_rejects_non_distribution_types():
    with pytest.raises(TypeError, match="type_q to be a Distribution subclass"):
        ED.register_kl(ED.Normal, int)


def test_dispatch_picks_most_specific_pair_and_warns_when_ambiguous():
    class Base(ED.Normal):
        pass

    class Derived(Base):
        pass

    try:
        # a subclass uses its parent's registered formula
        p, q = Derived(0.0, 1.0), Derived(1.0, 1.0)
        np.testing.assert_allclose(ED.kl_divergence(p, q).item(), 0.5)

        @ED.register_kl(Base, Derived)
        def _first(p, q):
            return ember.tensor(1.0)

        @ED.register_kl(Derived, Base)
        def _second(p, q):
            return ember.tensor(2.0)

        with pytest.warns(RuntimeWarning, match=r"Ambiguous kl_divergence\(Derived, Derived\)"):
            ED.kl_divergence(p, q)

        ED.register_kl(Derived, Derived)(_second)  # break the tie
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert ED.kl_divergence(p, q).item() == 2.0
        assert ED.kl_divergence(Base(0.0, 1.0), p).item() == 1.0
    finally:
        for key in [k for k in ember_kl._KL_REGISTRY if k[0] in (Base, Derived)]:
            del ember_kl._KL_REGISTRY[key]
        ember_kl._KL_MEMOIZE.clear()


EXP_FAMILY = ["Normal", "Exponential", "Gamma", "Beta", "Poisson", "Bernoulli", "Dirichlet",
              "ContinuousBernoulli"]


@pytest.mark.parametrize("name", EXP_FAMILY)
def test_bregman_kl_and_generic_entropy_match_closed_forms(name):
    """The exponential-family formulas (autograd through the log normalizer) agree with
    each family's own closed forms."""
    p, _, _, _ = _make(name, 4)
    q, _, _, _ = _make(name, 5)
    bregman = ember_kl._kl_expfamily_expfamily(p, q)
    np.testing.assert_allclose(bregman.detach().numpy(),
                               ED.kl_divergence(p, q).detach().numpy(), rtol=1e-9)
    if name in ("Poisson", "Beta", "Dirichlet"):  # no carrier measure (as in PyTorch)
        with pytest.raises(NotImplementedError):
            ED.ExponentialFamily.entropy(p)
    else:
        generic = ED.ExponentialFamily.entropy(p)
        np.testing.assert_allclose(generic.detach().numpy(), p.entropy().detach().numpy(),
                                   rtol=1e-9, atol=1e-12)


def test_bregman_kl_refuses_different_families():
    with pytest.raises(NotImplementedError, match="different exponential families"):
        ember_kl._kl_expfamily_expfamily(ED.Normal(0.0, 1.0), ED.Exponential(1.0))


def test_transformed_kl_needs_equal_transforms():
    p = ED.LogNormal(0.0, 1.0)
    q = ED.TransformedDistribution(ED.Normal(0.0, 1.0), [ED.SigmoidTransform()])
    with pytest.raises(NotImplementedError, match="same transforms"):
        ED.kl_divergence(p, q)
    with pytest.raises(NotImplementedError, match="same reinterpreted_batch_ndims"):
        base = ED.Normal(ember.zeros(2, 3), ember.ones(2, 3))
        ED.kl_divergence(ED.Independent(base, 1), ED.Independent(base, 2))


def test_wishart_kl_uses_the_bregman_formula_like_pytorch():
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(2, 3, 3)), rng.normal(size=(3, 3))
    cov_p, cov_q = a @ np.swapaxes(a, -1, -2) + np.eye(3), b @ b.T + np.eye(3)
    df_p, df_q = np.array([4.5, 7.0]), 5.5
    p = ED.Wishart(ember.tensor(df_p), covariance_matrix=ember.tensor(cov_p))
    q = ED.Wishart(ember.tensor(df_q, dtype=ember.float64), covariance_matrix=ember.tensor(cov_q))
    p_t = TD.Wishart(torch.tensor(df_p), covariance_matrix=torch.tensor(cov_p))
    q_t = TD.Wishart(torch.tensor(df_q, dtype=torch.float64), covariance_matrix=torch.tensor(cov_q))
    np.testing.assert_allclose(ED.kl_divergence(p, q).detach().numpy(),
                               TD.kl_divergence(p_t, q_t).detach().numpy(), rtol=1e-9)
    np.testing.assert_allclose(ED.ExponentialFamily.entropy(p).detach().numpy(),
                               p.entropy().numpy(), rtol=1e-9)
