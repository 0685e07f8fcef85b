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
