"""The distributions under test, each built the same way in ember and in PyTorch from
random float64 parameters, with valid values to score."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


def real(shape):
    return lambda rng: rng.normal(size=shape)


def positive(shape, low=0.3, high=3.0):
    return lambda rng: rng.uniform(low, high, size=shape)


def unit(shape):
    return lambda rng: rng.uniform(0.05, 0.95, size=shape)


def simplex(shape):
    def make(rng):
        w = rng.uniform(0.1, 1.0, size=shape)
        return w / w.sum(-1, keepdims=True)
    return make


def spd(batch, n):
    def make(rng):
        a = rng.normal(size=batch + (n, n))
        return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return make


def tril(batch, n):
    def make(rng):
        a = np.tril(rng.normal(size=batch + (n, n)) * 0.5)
        index = np.arange(n)
        a[..., index, index] = rng.uniform(0.5, 2.0, size=batch + (n,))
        return a
    return make


@dataclass
class Case:
    name: str
    build: Callable          # build(D, params) -> distribution, D the distributions module
    params: dict             # name -> maker(rng) of a numpy array
    values: Callable         # values(rng, params) -> numpy array of valid values
    cdf: bool = False
    icdf: bool = False
    entropy: bool = True
    mode: bool = True
    # parameters whose gradient PyTorch does not implement for a method
    no_torch_grad: dict = field(default_factory=dict)
    # looser value tolerances where PyTorch itself is less exact
    rtol: dict = field(default_factory=dict)
    grad_rtol: float = 1e-8
    # compare in float32 (where PyTorch's implementation fails in float64)
    float32: bool = False
    # sample mean and variance are checked (False for heavy tails: the cdf is checked)
    moments: bool = True
    # the distribution has mean / variance / stddev (PyTorch leaves some out)
    mean: bool = True


def _uniform_params():
    return {"low": real((2, 3)), "width": positive((2, 3))}


CASES = [
    Case("Normal", lambda D, p: D.Normal(p["loc"], p["scale"]),
         {"loc": real((2, 3)), "scale": positive((2, 3))},
         lambda rng, p: rng.normal(size=(4, 2, 3)), cdf=True, icdf=True),
    Case("Laplace", lambda D, p: D.Laplace(p["loc"], p["scale"]),
         {"loc": real((2, 3)), "scale": positive((2, 3))},
         lambda rng, p: rng.normal(size=(4, 2, 3)), cdf=True, icdf=True),
    Case("Uniform", lambda D, p: D.Uniform(p["low"], p["low"] + p["width"]),
         _uniform_params(),
         lambda rng, p: p["low"] + p["width"] * rng.uniform(0.01, 0.99, size=(4, 2, 3)),
         cdf=True, icdf=True, mode=False),
    Case("Exponential", lambda D, p: D.Exponential(p["rate"]), {"rate": positive((2, 3))},
         lambda rng, p: rng.exponential(size=(4, 2, 3)), cdf=True, icdf=True),
    Case("Gamma", lambda D, p: D.Gamma(p["concentration"], p["rate"]),
         {"concentration": positive((2, 3), 0.2, 5.0), "rate": positive((2, 3))},
         lambda rng, p: rng.gamma(2.0, size=(4, 2, 3)) + 1e-3, cdf=True,
         no_torch_grad={"cdf": ("concentration",)}),
    Case("Beta", lambda D, p: D.Beta(p["a"], p["b"]),
         {"a": positive((2, 3), 0.3, 4.0), "b": positive((2, 3), 0.3, 4.0)},
         lambda rng, p: rng.uniform(0.02, 0.98, size=(4, 2, 3))),
    Case("Dirichlet", lambda D, p: D.Dirichlet(p["concentration"]),
         {"concentration": positive((2, 4), 0.3, 4.0)},
         lambda rng, p: rng.dirichlet(np.ones(4), size=(3, 2))),
    Case("LogNormal", lambda D, p: D.LogNormal(p["loc"], p["scale"]),
         {"loc": real((2, 3)), "scale": positive((2, 3))},
         lambda rng, p: rng.lognormal(size=(4, 2, 3)), cdf=True, icdf=True),
    Case("Poisson", lambda D, p: D.Poisson(p["rate"]), {"rate": positive((2, 3), 0.5, 8.0)},
         lambda rng, p: rng.poisson(3.0, size=(4, 2, 3)).astype(np.float64), entropy=False),
    Case("BernoulliProbs", lambda D, p: D.Bernoulli(probs=p["probs"]), {"probs": unit((2, 3))},
         lambda rng, p: rng.integers(0, 2, size=(4, 2, 3)).astype(np.float64)),
    Case("BernoulliLogits", lambda D, p: D.Bernoulli(logits=p["logits"]),
         {"logits": real((2, 3))},
         lambda rng, p: rng.integers(0, 2, size=(4, 2, 3)).astype(np.float64)),
    Case("CategoricalProbs", lambda D, p: D.Categorical(probs=p["probs"]),
         {"probs": simplex((2, 5))},
         lambda rng, p: rng.integers(0, 5, size=(3, 2)).astype(np.int64)),
    Case("CategoricalLogits", lambda D, p: D.Categorical(logits=p["logits"]),
         {"logits": real((2, 5))},
         lambda rng, p: rng.integers(0, 5, size=(3, 2)).astype(np.int64)),
    Case("OneHotCategorical", lambda D, p: D.OneHotCategorical(probs=p["probs"]),
         {"probs": simplex((2, 4))},
         lambda rng, p: np.eye(4)[rng.integers(0, 4, size=(3, 2))]),
    Case("Multinomial", lambda D, p: D.Multinomial(6, probs=p["probs"]),
         {"probs": simplex((2, 3))},
         lambda rng, p: rng.multinomial(6, [0.2, 0.3, 0.5], size=(3, 2)).astype(np.float64),
         mode=False, rtol={"entropy": 1e-7}),  # PyTorch takes log(n!) in float32
    Case("MultivariateNormalCov",
         lambda D, p: D.MultivariateNormal(p["loc"], covariance_matrix=p["cov"]),
         {"loc": real((2, 3)), "cov": spd((2,), 3)},
         lambda rng, p: rng.normal(size=(4, 2, 3))),
    Case("MultivariateNormalPrecision",
         lambda D, p: D.MultivariateNormal(p["loc"], precision_matrix=p["precision"]),
         {"loc": real((3,)), "precision": spd((2,), 3)},
         lambda rng, p: rng.normal(size=(4, 2, 3))),
    Case("MultivariateNormalTril",
         lambda D, p: D.MultivariateNormal(p["loc"], scale_tril=p["tril"]),
         {"loc": real((2, 3)), "tril": tril((), 3)},
         lambda rng, p: rng.normal(size=(4, 2, 3))),
    Case("IndependentNormal",
         lambda D, p: D.Independent(D.Normal(p["loc"], p["scale"]), 1),
         {"loc": real((2, 3)), "scale": positive((2, 3))},
         lambda rng, p: rng.normal(size=(4, 2, 3))),
    Case("IndependentBeta",
         lambda D, p: D.Independent(D.Beta(p["a"], p["b"]), 2),
         {"a": positive((2, 3), 0.5, 3.0), "b": positive((2, 3), 0.5, 3.0)},
         lambda rng, p: rng.uniform(0.05, 0.95, size=(4, 2, 3))),
]

CASES_BY_NAME = {case.name: case for case in CASES}


def _counts(high):
    return lambda rng, p: rng.integers(0, high + 1, size=(4, 2, 3)).astype(np.float64)


CASES += [
    Case("Cauchy", lambda D, p: D.Cauchy(p["loc"], p["scale"]),
         {"loc": real((2, 3)), "scale": positive((2, 3))},
         lambda rng, p: rng.standard_cauchy(size=(4, 2, 3)), cdf=True, icdf=True, moments=False),
    Case("HalfNormal", lambda D, p: D.HalfNormal(p["scale"]), {"scale": positive((2, 3))},
         lambda rng, p: np.abs(rng.normal(size=(4, 2, 3))), cdf=True, icdf=True),
    Case("HalfCauchy", lambda D, p: D.HalfCauchy(p["scale"]), {"scale": positive((2, 3))},
         lambda rng, p: np.abs(rng.standard_cauchy(size=(4, 2, 3))), cdf=True, icdf=True,
         moments=False),
    Case("Gumbel", lambda D, p: D.Gumbel(p["loc"], p["scale"]),
         {"loc": real((2, 3)), "scale": positive((2, 3))},
         lambda rng, p: rng.gumbel(size=(4, 2, 3)), cdf=True, icdf=True),
    Case("Pareto", lambda D, p: D.Pareto(p["scale"], p["alpha"]),
         {"scale": positive((2, 3), 0.5, 2.0), "alpha": positive((2, 3), 0.5, 5.0)},
         lambda rng, p: p["scale"] * (1 + rng.pareto(2.0, size=(4, 2, 3))), cdf=True,
         icdf=True, moments=False),
    Case("Weibull", lambda D, p: D.Weibull(p["scale"], p["concentration"]),
         {"scale": positive((2, 3)), "concentration": positive((2, 3), 0.5, 4.0)},
         lambda rng, p: rng.weibull(1.5, size=(4, 2, 3)) + 1e-3, cdf=True, icdf=True),
    Case("Chi2", lambda D, p: D.Chi2(p["df"]), {"df": positive((2, 3), 1.0, 8.0)},
         lambda rng, p: rng.chisquare(3.0, size=(4, 2, 3)) + 1e-3, cdf=True,
         no_torch_grad={"cdf": ("df",)}),
    Case("InverseGamma", lambda D, p: D.InverseGamma(p["concentration"], p["rate"]),
         {"concentration": positive((2, 3), 0.5, 5.0), "rate": positive((2, 3))},
         lambda rng, p: 1 / (rng.gamma(2.0, size=(4, 2, 3)) + 1e-2), cdf=True,
         no_torch_grad={"cdf": ("concentration",)}, moments=False),
    Case("Kumaraswamy", lambda D, p: D.Kumaraswamy(p["a"], p["b"]),
         {"a": positive((2, 3), 0.5, 4.0), "b": positive((2, 3), 0.5, 4.0)},
         lambda rng, p: rng.uniform(0.02, 0.98, size=(4, 2, 3)), cdf=True, icdf=True,
         mode=False),  # PyTorch's mode is NaN everywhere; see test_kumaraswamy_mode
    Case("GeneralizedPareto",
         lambda D, p: D.GeneralizedPareto(p["loc"], p["scale"], p["concentration"]),
         {"loc": real((2, 3)), "scale": positive((2, 3)),
          "concentration": lambda rng: rng.uniform(0.05, 0.8, size=(2, 3))},
         lambda rng, p: p["loc"] + rng.exponential(size=(4, 2, 3)), cdf=True, icdf=True,
         float32=True, moments=False),
    Case("GeneralizedParetoNegative",
         lambda D, p: D.GeneralizedPareto(p["loc"], p["scale"], p["concentration"]),
         {"loc": real((2, 3)), "scale": positive((2, 3)),
          "concentration": lambda rng: rng.uniform(-0.9, -0.1, size=(2, 3))},
         lambda rng, p: p["loc"] - p["scale"] / p["concentration"]
         * rng.uniform(0.05, 0.95, size=(4, 2, 3)), cdf=True, icdf=True, float32=True),
    Case("StudentT", lambda D, p: D.StudentT(p["df"], p["loc"], p["scale"]),
         {"df": positive((2, 3), 0.5, 8.0), "loc": real((2, 3)), "scale": positive((2, 3))},
         lambda rng, p: rng.standard_t(3.0, size=(4, 2, 3)), moments=False),
    Case("FisherSnedecor", lambda D, p: D.FisherSnedecor(p["df1"], p["df2"]),
         {"df1": positive((2, 3), 0.5, 8.0), "df2": positive((2, 3), 1.0, 9.0)},
         lambda rng, p: rng.f(3.0, 5.0, size=(4, 2, 3)), entropy=False, moments=False),
    Case("GeometricProbs", lambda D, p: D.Geometric(probs=p["probs"]), {"probs": unit((2, 3))},
         lambda rng, p: rng.geometric(0.3, size=(4, 2, 3)).astype(np.float64) - 1),
    Case("GeometricLogits", lambda D, p: D.Geometric(logits=p["logits"]),
         {"logits": real((2, 3))},
         lambda rng, p: rng.geometric(0.3, size=(4, 2, 3)).astype(np.float64) - 1),
    Case("Binomial", lambda D, p: D.Binomial(7, probs=p["probs"]), {"probs": unit((2, 3))},
         _counts(7)),
    Case("BinomialLogits", lambda D, p: D.Binomial(p["count"], logits=p["logits"]),
         {"count": lambda rng: np.array([5.0, 9.0, 12.0]), "logits": real((2, 3))},
         _counts(5), entropy=False),
    Case("NegativeBinomial", lambda D, p: D.NegativeBinomial(p["count"], probs=p["probs"]),
         {"count": positive((2, 3), 0.5, 6.0), "probs": unit((2, 3))},
         _counts(9), entropy=False),
    Case("NegativeBinomialLogits",
         lambda D, p: D.NegativeBinomial(p["count"], logits=p["logits"]),
         {"count": positive((2, 3), 0.5, 6.0), "logits": real((2, 3))}, _counts(9),
         entropy=False),
    Case("ContinuousBernoulli", lambda D, p: D.ContinuousBernoulli(probs=p["probs"]),
         {"probs": lambda rng: np.array([[0.1, 0.3, 0.4995], [0.5002, 0.7, 0.95]])},
         lambda rng, p: rng.uniform(0.01, 0.99, size=(4, 2, 3)), cdf=True, icdf=True,
         mode=False),
    Case("ContinuousBernoulliLogits",
         lambda D, p: D.ContinuousBernoulli(logits=p["logits"]), {"logits": real((2, 3))},
         lambda rng, p: rng.uniform(0.01, 0.99, size=(4, 2, 3)), cdf=True, icdf=True,
         mode=False),
    Case("VonMises", lambda D, p: D.VonMises(p["loc"], p["concentration"]),
         {"loc": real((2, 3)), "concentration": positive((2, 3), 0.2, 40.0)},
         lambda rng, p: rng.uniform(-np.pi, np.pi, size=(4, 2, 3)), entropy=False,
         # PyTorch's log I_0 is a polynomial fit good to about 1e-7
         rtol={"log_prob": 1e-6, "variance": 1e-4, "stddev": 1e-4}, grad_rtol=1e-3, moments=False),
]

CASES_BY_NAME = {case.name: case for case in CASES}


def _relaxed(D, p, name):
    return getattr(D, name)(p["temperature"][0], probs=p["probs"])


CASES += [
    Case("RelaxedBernoulli", lambda D, p: _relaxed(D, p, "RelaxedBernoulli"),
         {"temperature": positive((1,), 0.3, 2.0), "probs": unit((2, 3))},
         lambda rng, p: rng.uniform(0.02, 0.98, size=(4, 2, 3)), mode=False, entropy=False,
         moments=False, mean=False),
    Case("RelaxedBernoulliLogits",
         lambda D, p: D.RelaxedBernoulli(p["temperature"][0], logits=p["logits"]),
         {"temperature": positive((1,), 0.3, 2.0), "logits": real((2, 3))},
         lambda rng, p: rng.uniform(0.02, 0.98, size=(4, 2, 3)), mode=False, entropy=False,
         moments=False, mean=False),
    Case("RelaxedOneHotCategorical", lambda D, p: _relaxed(D, p, "RelaxedOneHotCategorical"),
         {"temperature": positive((1,), 0.3, 2.0), "probs": simplex((2, 4))},
         lambda rng, p: rng.dirichlet(np.ones(4), size=(3, 2)), mode=False, entropy=False,
         moments=False, mean=False),
    Case("OneHotCategoricalStraightThrough",
         lambda D, p: D.OneHotCategoricalStraightThrough(logits=p["logits"]),
         # mild logits: the sample-variance check is relative, tiny probabilities need more
         {"logits": lambda rng: 0.5 * rng.normal(size=(2, 4))},
         lambda rng, p: np.eye(4)[rng.integers(0, 4, size=(3, 2))]),
    Case("LogisticNormal", lambda D, p: D.LogisticNormal(p["loc"], p["scale"]),
         {"loc": real((2, 3)), "scale": positive((2, 3))},
         lambda rng, p: rng.dirichlet(np.ones(4), size=(3, 2)), mode=False, entropy=False,
         moments=False, mean=False),
    Case("LowRankMultivariateNormal",
         lambda D, p: D.LowRankMultivariateNormal(p["loc"], p["factor"], p["diag"]),
         {"loc": real((2, 3)), "factor": real((2, 3, 2)), "diag": positive((2, 3))},
         lambda rng, p: rng.normal(size=(4, 2, 3))),
    Case("LowRankMultivariateNormalBroadcast",
         lambda D, p: D.LowRankMultivariateNormal(p["loc"], p["factor"], p["diag"]),
         {"loc": real((2, 3)), "factor": real((3, 1)), "diag": positive((3,))},
         lambda rng, p: rng.normal(size=(4, 2, 3))),
    Case("MixtureSameFamilyNormal",
         lambda D, p: D.MixtureSameFamily(D.Categorical(probs=p["weights"]),
                                          D.Normal(p["loc"], p["scale"])),
         {"weights": simplex((2, 3)), "loc": real((2, 3)), "scale": positive((2, 3))},
         lambda rng, p: rng.normal(size=(4, 2)), cdf=True, entropy=False, mode=False),
    Case("MixtureSameFamilyMVN",
         lambda D, p: D.MixtureSameFamily(
             D.Categorical(logits=p["logits"]),
             D.Independent(D.Normal(p["loc"], p["scale"]), 1)),
         {"logits": real((3,)), "loc": real((2, 3, 2)), "scale": positive((2, 3, 2))},
         lambda rng, p: rng.normal(size=(4, 2, 2)), entropy=False, mode=False),
]

CASES_BY_NAME = {case.name: case for case in CASES}


def corr_tril(batch, n):
    def make(rng):
        a = rng.normal(size=batch + (n, n))
        cov = a @ np.swapaxes(a, -1, -2) + np.eye(n)
        d = np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1))
        return np.linalg.cholesky(cov / (d[..., :, None] * d[..., None, :]))
    return make


CASES += [
    Case("Wishart", lambda D, p: D.Wishart(p["df"], covariance_matrix=p["cov"]),
         {"df": positive((2,), 3.5, 8.0), "cov": spd((2,), 3)},
         lambda rng, p: spd((4, 2), 3)(rng), moments=False),
    Case("WishartTril", lambda D, p: D.Wishart(p["df"], scale_tril=p["tril"]),
         {"df": positive((2,), 2.5, 8.0), "tril": tril((), 3)},
         lambda rng, p: spd((4, 2), 3)(rng), moments=False),
    Case("LKJCholesky", lambda D, p: D.LKJCholesky(3, p["concentration"]),
         {"concentration": positive((2,), 0.3, 4.0)},
         lambda rng, p: corr_tril((4, 2), 3)(rng), entropy=False, mode=False, mean=False,
         moments=False),
]

CASES_BY_NAME = {case.name: case for case in CASES}
