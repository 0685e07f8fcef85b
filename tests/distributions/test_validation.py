"""Argument validation as in PyTorch: invalid parameters and values outside the support
raise ValueError with PyTorch's message (the parameter, its shape, the distribution and
the constraint), shapes are checked, and validation can be switched off."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.distributions as ED
from ember.distributions import constraints

try:
    import torch
    TD = torch.distributions
except ImportError:  # the message comparisons skip; the rest runs
    torch = TD = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def _lib(lib):
    return ember if lib == "ember" else torch


def _d(lib):
    return ED if lib == "ember" else TD


def _t(lib, data):
    return _lib(lib).tensor(data)


INVALID = {
    "Normal": lambda L: _d(L).Normal(_t(L, [0.0, 1.0]), _t(L, [1.0, -1.0])),
    "NormalScalar": lambda L: _d(L).Normal(0.0, _t(L, -2.0)),
    "Laplace": lambda L: _d(L).Laplace(_t(L, [0.0]), _t(L, [0.0])),
    "Uniform": lambda L: _d(L).Uniform(_t(L, [1.0]), _t(L, [0.0])),
    "Exponential": lambda L: _d(L).Exponential(_t(L, [-1.0])),
    "Gamma": lambda L: _d(L).Gamma(_t(L, [-1.0]), _t(L, [1.0])),
    "GammaRate": lambda L: _d(L).Gamma(_t(L, [1.0]), _t(L, [0.0])),
    "Beta": lambda L: _d(L).Beta(_t(L, [0.0]), _t(L, [1.0])),
    "Dirichlet": lambda L: _d(L).Dirichlet(_t(L, [1.0, -1.0])),
    "Poisson": lambda L: _d(L).Poisson(_t(L, [-1.0])),
    "Bernoulli": lambda L: _d(L).Bernoulli(probs=_t(L, [1.5])),
    "Categorical": lambda L: _d(L).Categorical(probs=_t(L, [0.5, -0.2, 0.7])),
    "CategoricalNan": lambda L: _d(L).Categorical(logits=_t(L, [0.5, float("nan")])),
    "OneHotCategorical": lambda L: _d(L).OneHotCategorical(probs=_t(L, [0.5, -0.2, 0.7])),
    "Multinomial": lambda L: _d(L).Multinomial(3, probs=_t(L, [0.5, -0.2, 0.7])),
    "LogNormal": lambda L: _d(L).LogNormal(_t(L, [0.0]), _t(L, [-1.0])),
    "MVNcov": lambda L: _d(L).MultivariateNormal(_t(L, [0.0, 0.0]),
                                                 _t(L, [[1.0, 2.0], [2.0, 1.0]])),
    "MVNtril": lambda L: _d(L).MultivariateNormal(_t(L, [0.0, 0.0]),
                                                  scale_tril=_t(L, [[1.0, 2.0], [0.0, 1.0]])),
    "MVNprecision": lambda L: _d(L).MultivariateNormal(
        _t(L, [0.0, 0.0]), precision_matrix=_t(L, [[1.0, 0.5], [0.4, 1.0]])),
    "Cauchy": lambda L: _d(L).Cauchy(_t(L, [0.0]), _t(L, [-1.0])),
    "HalfNormal": lambda L: _d(L).HalfNormal(_t(L, [-1.0])),
    "HalfCauchy": lambda L: _d(L).HalfCauchy(_t(L, [0.0])),
    "Gumbel": lambda L: _d(L).Gumbel(_t(L, [0.0]), _t(L, [-2.0])),
    "Pareto": lambda L: _d(L).Pareto(_t(L, [1.0]), _t(L, [-2.0])),
    "Weibull": lambda L: _d(L).Weibull(_t(L, [1.0]), _t(L, [0.0])),
    "Chi2": lambda L: _d(L).Chi2(_t(L, [-3.0])),
    "InverseGamma": lambda L: _d(L).InverseGamma(_t(L, [1.0]), _t(L, [-1.0])),
    "Kumaraswamy": lambda L: _d(L).Kumaraswamy(_t(L, [-1.0]), _t(L, [1.0])),
    "GeneralizedPareto": lambda L: _d(L).GeneralizedPareto(_t(L, [0.0]), _t(L, [-1.0]),
                                                           _t(L, [0.5])),
    "StudentT": lambda L: _d(L).StudentT(_t(L, [-1.0])),
    "FisherSnedecor": lambda L: _d(L).FisherSnedecor(_t(L, [1.0]), _t(L, [0.0])),
    "Geometric": lambda L: _d(L).Geometric(_t(L, [1.5])),
    "GeometricZero": lambda L: _d(L).Geometric(_t(L, [0.0, 0.5])),
    "Binomial": lambda L: _d(L).Binomial(_t(L, [2.5]), _t(L, [0.5])),
    "BinomialProbs": lambda L: _d(L).Binomial(3, _t(L, [1.5])),
    "NegativeBinomial": lambda L: _d(L).NegativeBinomial(_t(L, [-1.0]), _t(L, [0.5])),
    "NegativeBinomialOne": lambda L: _d(L).NegativeBinomial(_t(L, [2.0]), _t(L, [1.0])),
    "ContinuousBernoulli": lambda L: _d(L).ContinuousBernoulli(logits=_t(L, [float("nan")])),
    "VonMises": lambda L: _d(L).VonMises(_t(L, [0.0]), _t(L, [-1.0])),
    "RelaxedBernoulli": lambda L: _d(L).RelaxedBernoulli(_t(L, 0.5), probs=_t(L, [1.5])),
    "RelaxedOneHot": lambda L: _d(L).RelaxedOneHotCategorical(_t(L, 0.5),
                                                             probs=_t(L, [0.5, -0.5])),
    "LogisticNormal": lambda L: _d(L).LogisticNormal(_t(L, [0.0]), _t(L, [-1.0])),
    "LowRankMVN": lambda L: _d(L).LowRankMultivariateNormal(
        _t(L, [0.0, 0.0]), _t(L, [[1.0], [0.0]]), _t(L, [1.0, -1.0])),
    "Wishart": lambda L: _d(L).Wishart(_t(L, 3.0), scale_tril=_t(L, [[1.0, 0.0], [1.0, -1.0]])),
    "LKJCholesky": lambda L: _d(L).LKJCholesky(3, _t(L, -1.0)),
}


def _message(build, lib):
    with pytest.raises(ValueError) as info:
        build(lib)
    return str(info.value).replace("torch.", "ember.")


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_parameters_raise_value_error(name):
    message = _message(INVALID[name], "ember")
    assert message.startswith("Expected parameter ")
    assert "to satisfy the constraint" in message or "to be positive" in message
    if name.startswith("MVN"):
        return  # without validation a matrix that is not positive-definite fails Cholesky
    ED.Distribution.set_default_validate_args(False)  # without validation: accepted
    try:
        INVALID[name]("ember")
    finally:
        ED.Distribution.set_default_validate_args(True)


@needs_torch
@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_parameter_messages_match_pytorch(name):
    assert _message(INVALID[name], "ember") == _message(INVALID[name], "torch")


OUTSIDE = {
    "Normal": (lambda L: _d(L).Normal(_t(L, [0.0]), _t(L, [1.0])), [float("nan")]),
    "Exponential": (lambda L: _d(L).Exponential(_t(L, [1.0])), [-1.0]),
    "Gamma": (lambda L: _d(L).Gamma(_t(L, [1.0]), _t(L, [1.0])), [-0.5]),
    "Beta": (lambda L: _d(L).Beta(_t(L, [1.0]), _t(L, [1.0])), [1.5]),
    "Uniform": (lambda L: _d(L).Uniform(_t(L, [0.0]), _t(L, [1.0])), [2.0]),
    "Poisson": (lambda L: _d(L).Poisson(_t(L, [1.0])), [0.5]),
    "Bernoulli": (lambda L: _d(L).Bernoulli(_t(L, [0.5])), [2.0]),
    "Categorical": (lambda L: _d(L).Categorical(_t(L, [0.5, 0.5])), [2]),
    "OneHot": (lambda L: _d(L).OneHotCategorical(_t(L, [0.5, 0.5])), [[1.0, 1.0]]),
    "Dirichlet": (lambda L: _d(L).Dirichlet(_t(L, [1.0, 1.0])), [0.3, 0.3]),
    "LogNormal": (lambda L: _d(L).LogNormal(_t(L, [0.0]), _t(L, [1.0])), [-1.0]),
    "Multinomial": (lambda L: _d(L).Multinomial(2, _t(L, [0.5, 0.5])), [2.0, 1.0]),
    "Independent": (lambda L: _d(L).Independent(_d(L).Exponential(_t(L, [1.0, 1.0])), 1),
                    [1.0, -1.0]),
    "HalfNormal": (lambda L: _d(L).HalfNormal(_t(L, [1.0])), [-1.0]),
    "Pareto": (lambda L: _d(L).Pareto(_t(L, [2.0]), _t(L, [1.0])), [1.5]),
    "Weibull": (lambda L: _d(L).Weibull(_t(L, [2.0]), _t(L, [1.0])), [-1.5]),
    "GeneralizedPareto": (lambda L: _d(L).GeneralizedPareto(_t(L, [0.0]), _t(L, [1.0]),
                                                            _t(L, [-0.5])), [2.5]),
    "FisherSnedecor": (lambda L: _d(L).FisherSnedecor(_t(L, [1.0]), _t(L, [1.0])), [0.0]),
    "Geometric": (lambda L: _d(L).Geometric(_t(L, [0.5])), [1.5]),
    "Binomial": (lambda L: _d(L).Binomial(3, _t(L, [0.5])), [4.0]),
    "NegativeBinomial": (lambda L: _d(L).NegativeBinomial(3, _t(L, [0.5])), [-1.0]),
    "ContinuousBernoulli": (lambda L: _d(L).ContinuousBernoulli(_t(L, [0.3])), [1.5]),
    "Kumaraswamy": (lambda L: _d(L).Kumaraswamy(_t(L, [1.0]), _t(L, [1.0])), [1.5]),
    "RelaxedOneHot": (lambda L: _d(L).RelaxedOneHotCategorical(_t(L, 0.5), _t(L, [0.5, 0.5])),
                      [0.7, 0.7]),
    "LogisticNormal": (lambda L: _d(L).LogisticNormal(_t(L, [0.0]), _t(L, [1.0])),
                       [0.7, 0.7]),
    "Wishart": (lambda L: _d(L).Wishart(_t(L, 3.0), covariance_matrix=_t(L, [[1.0, 0.0],
                                                                             [0.0, 1.0]])),
                [[1.0, 2.0], [2.0, 1.0]]),
    "LKJCholesky": (lambda L: _d(L).LKJCholesky(2, _t(L, 1.0)), [[1.0, 0.0], [0.5, 0.5]]),
}


@pytest.mark.parametrize("name", sorted(OUTSIDE))
def test_log_prob_outside_support_raises(name):
    build, value = OUTSIDE[name]
    dist = build("ember")
    with pytest.raises(ValueError, match="to be within the support") as info:
        dist.log_prob(ember.tensor(value))
    if torch is not None:
        with pytest.raises(ValueError) as expected:
            build("torch").log_prob(torch.tensor(value))
        assert str(info.value) == str(expected.value).replace("torch.", "ember.")
    if name == "Categorical":
        return  # without validation an out-of-range index fails the gather
    ED.Distribution.set_default_validate_args(False)  # no error without validation
    try:
        build("ember").log_prob(ember.tensor(value))
    finally:
        ED.Distribution.set_default_validate_args(True)


def test_validate_args_false_and_default_switch():
    ED.Normal(ember.tensor([0.0]), ember.tensor([-1.0]), validate_args=False)
    m = ED.Exponential(ember.tensor([1.0]), validate_args=False)
    assert np.isfinite(m.log_prob(ember.tensor([-1.0])).item())
    with pytest.raises(ValueError):
        ED.Distribution.set_default_validate_args("yes")
    ED.Distribution.set_default_validate_args(False)
    try:
        m = ED.Exponential(ember.tensor([-1.0]))
        assert not m._validate_args
    finally:
        ED.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        ED.Exponential(ember.tensor([-1.0]), validate_args=True)
    # expand keeps the setting and does not check again
    m = ED.Normal(ember.tensor([0.0]), ember.tensor([1.0]), validate_args=False)
    assert m.expand((3, 1))._validate_args is False


def test_value_shape_and_type_errors():
    m = ED.Normal(ember.zeros(3), ember.ones(3))
    with pytest.raises(ValueError, match="Value is not broadcastable with batch_shape"):
        m.log_prob(ember.zeros(4))
    with pytest.raises(ValueError, match="must be a Tensor"):
        m.log_prob([0.0, 0.0, 0.0])
    mvn = ED.MultivariateNormal(ember.zeros(2), ember.eye(2))
    with pytest.raises(ValueError, match="right-most size of value must match event_shape"):
        mvn.log_prob(ember.zeros(3))
    with pytest.raises(ValueError, match="right-most size of value must match event_shape"):
        mvn.log_prob(ember.tensor(0.0))


def test_constructor_errors():
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
        ED.Bernoulli(probs=ember.tensor([0.5]), logits=ember.tensor([0.0]))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
        ED.Categorical()
    with pytest.raises(ValueError, match="`probs` parameter must be at least one-dim"):
        ED.Categorical(probs=ember.tensor(1.0))
    with pytest.raises(ValueError, match="`concentration` parameter must be at least one"):
        ED.Dirichlet(ember.tensor(1.0))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix"):
        ED.MultivariateNormal(ember.zeros(2))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix"):
        ED.MultivariateNormal(ember.zeros(2), ember.eye(2), scale_tril=ember.eye(2))
    with pytest.raises(ValueError, match="loc must be at least one-dimensional"):
        ED.MultivariateNormal(ember.tensor(0.0), ember.eye(2))
    with pytest.raises(ValueError, match="scale_tril matrix must be at least two"):
        ED.MultivariateNormal(ember.zeros(2), scale_tril=ember.ones(2))
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count"):
        ED.Multinomial(2.5, probs=ember.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims <= len"):
        ED.Independent(ED.Normal(ember.zeros(3), ember.ones(3)), 2)
    with pytest.raises(ValueError, match="must all be instances of Number"):
        ED.Normal("0", 1.0)
    with pytest.raises(ValueError, match="transforms must be a Transform or list"):
        ED.TransformedDistribution(ED.Normal(0.0, 1.0), "exp")


def test_unimplemented_methods_say_so():
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        _ = ED.Multinomial(2, probs=ember.tensor([0.5, 0.5])).mode
    with pytest.raises(NotImplementedError):
        ED.Poisson(1.0).entropy()
    with pytest.raises(NotImplementedError):
        ED.Beta(1.0, 1.0).cdf(ember.tensor(0.5))


@needs_torch
def test_constraint_checks_match_pytorch():
    rng = np.random.default_rng(0)
    vectors = np.concatenate([rng.normal(size=(20, 3)), rng.dirichlet(np.ones(3), 5),
                              np.eye(3), np.full((1, 3), np.nan),
                              rng.integers(-1, 4, size=(10, 3)).astype(float)])
    square = rng.normal(size=(5, 3, 3))
    matrices = np.concatenate([rng.normal(size=(5, 3, 3)),
                               np.tril(rng.uniform(0.1, 1, size=(5, 3, 3))),
                               square @ np.swapaxes(square, -1, -2) + np.eye(3)])
    names = ["boolean", "real", "positive", "nonnegative", "unit_interval",
             "nonnegative_integer", "positive_integer", "simplex", "one_hot", "real_vector"]
    for name in names:
        mine = getattr(constraints, name).check(ember.tensor(vectors)).numpy()
        theirs = getattr(TD.constraints, name).check(torch.tensor(vectors)).numpy()
        np.testing.assert_array_equal(mine, theirs, err_msg=name)
    built = [("interval", (-0.5, 0.5)), ("half_open_interval", (-0.5, 0.5)),
             ("greater_than", (0.2,)), ("greater_than_eq", (0.0,)), ("less_than", (0.3,)),
             ("integer_interval", (0, 2)), ("multinomial", (3,))]
    for name, args in built:
        mine = getattr(constraints, name)(*args).check(ember.tensor(vectors)).numpy()
        theirs = getattr(TD.constraints, name)(*args).check(torch.tensor(vectors)).numpy()
        np.testing.assert_array_equal(mine, theirs, err_msg=name)
    for name in ("lower_triangular", "lower_cholesky", "square", "symmetric",
                 "positive_definite", "positive_semidefinite"):
        mine = getattr(constraints, name).check(ember.tensor(matrices)).numpy()
        theirs = getattr(TD.constraints, name).check(torch.tensor(matrices)).numpy()
        np.testing.assert_array_equal(mine, theirs, err_msg=name)
    both = constraints.independent(constraints.positive, 1).check(ember.tensor(vectors))
    np.testing.assert_array_equal(
        both.numpy(), TD.constraints.independent(TD.constraints.positive, 1).check(
            torch.tensor(vectors)).numpy())
    cat = constraints.cat([constraints.positive, constraints.real], dim=-1, lengths=[1, 2])
    cat_t = TD.constraints.cat([TD.constraints.positive, TD.constraints.real], dim=-1,
                               lengths=[1, 2])
    np.testing.assert_array_equal(cat.check(ember.tensor(vectors)).numpy(),
                                  cat_t.check(torch.tensor(vectors)).numpy())
    stack = constraints.stack([constraints.positive, constraints.real, constraints.boolean], -1)
    stack_t = TD.constraints.stack([TD.constraints.positive, TD.constraints.real,
                                    TD.constraints.boolean], -1)
    np.testing.assert_array_equal(stack.check(ember.tensor(vectors)).numpy(),
                                  stack_t.check(torch.tensor(vectors)).numpy())


def test_dependent_constraints():
    assert constraints.is_dependent(constraints.dependent)
    assert constraints.is_dependent(ED.Uniform.support)
    assert not constraints.is_dependent(constraints.real)
    with pytest.raises(ValueError, match="Cannot determine validity"):
        constraints.dependent.check(ember.zeros(1))
    with pytest.raises(NotImplementedError, match="cannot be determined statically"):
        _ = constraints.dependent.event_dim
    custom = constraints.dependent(is_discrete=True, event_dim=1)
    assert custom.is_discrete and custom.event_dim == 1
    assert ED.Categorical.support.is_discrete
    assert ED.Uniform(0.0, 2.0).support.upper_bound.item() == 2.0
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        constraints.independent(constraints.real, -1)
