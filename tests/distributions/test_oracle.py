"""Every distribution against PyTorch on random float64 parameters: log_prob, cdf, icdf,
entropy, mean, variance, stddev, mode, and the gradients of each with respect to the
parameters (a random weighting of the outputs, backpropagated in both libraries)."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.distributions as ED

from .cases import CASES

torch = pytest.importorskip("torch")
TD = torch.distributions

RTOL, ATOL = 1e-9, 1e-11


def _params(case, seed):
    rng = np.random.default_rng(seed)
    arrays = {name: make(rng) for name, make in case.params.items()}
    if case.float32:
        arrays = {k: v.astype(np.float32) for k, v in arrays.items()}
    mine = {k: ember.tensor(v, requires_grad=True) for k, v in arrays.items()}
    theirs = {k: torch.tensor(v, requires_grad=True) for k, v in arrays.items()}
    return rng, arrays, mine, theirs


def _tolerance(case, name):
    """(rtol, atol) of a value comparison; float32 cases compare to float32 rounding."""
    if case.float32:
        return 2e-5, 1e-5
    return case.rtol.get(name, RTOL), ATOL


def _quantities(case, rng, arrays):
    """[(name, f(dist, lib) -> tensor)] for the methods this case has."""
    values = case.values(rng, arrays)
    probabilities = rng.uniform(0.02, 0.98, size=values.shape)

    if case.float32:
        values = values.astype(np.float32) if values.dtype == np.float64 else values
        probabilities = probabilities.astype(np.float32)

    def value(lib, array):
        return (ember.tensor(array) if lib is ember else torch.tensor(array))

    out = [("log_prob", lambda d, lib: d.log_prob(value(lib, values)))]
    if case.mean:
        out += [("mean", lambda d, lib: d.mean), ("variance", lambda d, lib: d.variance),
                ("stddev", lambda d, lib: d.stddev)]
    if case.entropy:
        out.append(("entropy", lambda d, lib: d.entropy()))
    if case.cdf:
        out.append(("cdf", lambda d, lib: d.cdf(value(lib, values))))
    if case.icdf:
        out.append(("icdf", lambda d, lib: d.icdf(value(lib, probabilities))))
    return out


def _numpy(t):
    return t.detach().cpu().numpy() if hasattr(t, "cpu") else t.detach().numpy()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_values_and_gradients_match_pytorch(case):
    rng, arrays, mine, theirs = _params(case, 0)
    dist_e, dist_t = case.build(ED, mine), case.build(TD, theirs)
    assert tuple(dist_e.batch_shape) == tuple(dist_t.batch_shape)
    assert tuple(dist_e.event_shape) == tuple(dist_t.event_shape)
    assert dist_e.has_rsample == dist_t.has_rsample
    assert dist_e.has_enumerate_support == dist_t.has_enumerate_support
    for name, method in _quantities(case, rng, arrays):
        out_e, out_t = method(dist_e, ember), method(dist_t, torch)
        expected = _numpy(out_t)
        rtol, atol = _tolerance(case, name)
        np.testing.assert_allclose(_numpy(out_e), expected, rtol=rtol, atol=atol,
                                   err_msg=f"{case.name}.{name}")
        if not out_t.requires_grad:
            continue
        weights = rng.normal(size=expected.shape)
        finite = np.isfinite(expected)
        weights = np.where(finite, weights, 0.0)
        skip = case.no_torch_grad.get(name, ())
        names = [k for k in arrays if k not in skip]
        if not names:
            continue
        grads_t = torch.autograd.grad((out_t * torch.tensor(weights)).nansum(),
                                      [theirs[k] for k in names], allow_unused=True,
                                      retain_graph=True)
        masked = ember.where(ember.tensor(finite), out_e, 0.0)
        grads_e = ember.autograd.grad((masked * ember.tensor(weights)).sum(),
                                      [mine[k] for k in names], allow_unused=True,
                                      retain_graph=True)
        for k, g_e, g_t in zip(names, grads_e, grads_t):
            if g_t is None:
                assert g_e is None or np.allclose(_numpy(g_e), 0), f"{case.name}.{name}/{k}"
                continue
            g_t = _numpy(g_t)
            g_e = _numpy(g_e)
            if k in ("cov", "precision"):  # gradients w.r.t. a symmetric matrix
                g_t = (g_t + np.swapaxes(g_t, -1, -2)) / 2
                g_e = (g_e + np.swapaxes(g_e, -1, -2)) / 2
            if k == "tril":  # the upper triangle is never read (PyTorch's cholesky_solve
                g_t, g_e = np.tril(g_t), np.tril(g_e)  # backward fills it anyway)
            # where PyTorch's gradient is NaN (0 * NaN through a masked branch) ember's
            # where() gives the masked branch no gradient: compare the rest
            g_t = np.where(np.isnan(g_t) & ~finite.all(), g_e, g_t)
            rtol, atol = (1e-4, 1e-4) if case.float32 else (case.grad_rtol, 1e-10)
            np.testing.assert_allclose(g_e, g_t, rtol=rtol, atol=atol,
                                       err_msg=f"d {case.name}.{name} / d {k}")


@pytest.mark.parametrize("case", [c for c in CASES if c.mode], ids=lambda c: c.name)
def test_mode_matches_pytorch(case):
    _, _, mine, theirs = _params(case, 1)
    expected = _numpy(case.build(TD, theirs).mode)
    rtol, atol = _tolerance(case, "mode")
    np.testing.assert_allclose(_numpy(case.build(ED, mine).mode), expected, rtol=rtol,
                               atol=atol)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_expand_matches_pytorch(case):
    rng, arrays, mine, theirs = _params(case, 2)
    dist_e, dist_t = case.build(ED, mine), case.build(TD, theirs)
    values = case.values(rng, arrays)
    shape = values.shape[:1] + tuple(dist_t.batch_shape)
    big_e, big_t = dist_e.expand(shape), dist_t.expand(shape)
    assert type(big_e) is type(dist_e)
    assert tuple(big_e.batch_shape) == tuple(big_t.batch_shape)
    assert tuple(big_e.event_shape) == tuple(big_t.event_shape)
    assert big_e._validate_args == dist_e._validate_args
    if case.float32:
        values = values.astype(np.float32)
    expected = big_t.log_prob(torch.tensor(values))
    got = big_e.log_prob(ember.tensor(values))
    rtol, atol = _tolerance(case, "log_prob")
    np.testing.assert_allclose(_numpy(got), _numpy(expected), rtol=rtol, atol=atol)
    assert tuple(big_e.sample().shape) == tuple(big_t.sample().shape)


def test_enumerate_support_matches_pytorch():
    probs = np.random.default_rng(0).dirichlet(np.ones(3), size=2)
    for name in ("Categorical", "OneHotCategorical"):
        mine = getattr(ED, name)(probs=ember.tensor(probs))
        theirs = getattr(TD, name)(probs=torch.tensor(probs))
        for expand in (True, False):
            np.testing.assert_array_equal(_numpy(mine.enumerate_support(expand)),
                                          _numpy(theirs.enumerate_support(expand)))
    mine = ED.Bernoulli(ember.tensor([[0.2, 0.3]]))
    theirs = TD.Bernoulli(torch.tensor([[0.2, 0.3]]))
    for expand in (True, False):
        np.testing.assert_array_equal(_numpy(mine.enumerate_support(expand)),
                                      _numpy(theirs.enumerate_support(expand)))
    independent = ED.Independent(ED.Bernoulli(ember.tensor([[0.2, 0.3]])), 1)
    assert not independent.has_enumerate_support
    with pytest.raises(NotImplementedError, match="cartesian product"):
        independent.enumerate_support()


def test_bernoulli_and_categorical_edge_probabilities_match_pytorch():
    """Probabilities of exactly 0 and 1: log_prob and entropy stay finite where PyTorch's
    do, infinite where its are."""
    probs = [0.0, 1.0, 0.5]
    mine, theirs = ED.Bernoulli(ember.tensor(probs)), TD.Bernoulli(torch.tensor(probs))
    for value in ([0.0, 1.0, 1.0], [1.0, 0.0, 0.0]):
        np.testing.assert_allclose(_numpy(mine.log_prob(ember.tensor(value))),
                                   _numpy(theirs.log_prob(torch.tensor(value))), rtol=1e-6)
    np.testing.assert_allclose(_numpy(mine.entropy()), _numpy(theirs.entropy()), rtol=1e-6)
    np.testing.assert_array_equal(_numpy(mine.mode), _numpy(theirs.mode))
    cat_probs = [[0.0, 0.3, 0.7]]
    mine, theirs = ED.Categorical(ember.tensor(cat_probs)), TD.Categorical(
        torch.tensor(cat_probs))
    np.testing.assert_allclose(_numpy(mine.entropy()), _numpy(theirs.entropy()), rtol=1e-6)
    np.testing.assert_allclose(_numpy(mine.log_prob(ember.tensor([0]))),
                               _numpy(theirs.log_prob(torch.tensor([0]))), rtol=1e-6)


def test_multinomial_log_prob_with_zero_probabilities_matches_pytorch():
    logits = [[-np.inf, 0.0, 1.0]]
    mine = ED.Multinomial(4, logits=ember.tensor(logits, dtype=ember.float64))
    theirs = TD.Multinomial(4, logits=torch.tensor(logits, dtype=torch.float64))
    value = [[0.0, 1.0, 3.0]]
    np.testing.assert_allclose(_numpy(mine.log_prob(ember.tensor(value, dtype=ember.float64))),
                               _numpy(theirs.log_prob(torch.tensor(value, dtype=torch.float64))))


def test_repr_matches_pytorch():
    pairs = [(ED.Normal(0.0, 1.0), TD.Normal(0.0, 1.0)),
             (ED.Normal(ember.zeros(3), ember.ones(3)), TD.Normal(torch.zeros(3), torch.ones(3))),
             (ED.Categorical(logits=ember.zeros(4)), TD.Categorical(logits=torch.zeros(4))),
             (ED.Independent(ED.Normal(ember.zeros(3), ember.ones(3)), 1),
              TD.Independent(TD.Normal(torch.zeros(3), torch.ones(3)), 1))]
    for mine, theirs in pairs:
        assert repr(mine) == repr(theirs).replace("torch.Size", "ember.Size")
    for name in ("real", "positive", "simplex", "unit_interval", "real_vector", "boolean",
                 "nonnegative_integer", "lower_cholesky", "positive_definite", "one_hot"):
        assert repr(getattr(ED.constraints, name)) == repr(getattr(TD.constraints, name))
    assert repr(ED.constraints.integer_interval(0, 4)) == repr(
        TD.constraints.integer_interval(0, 4))
    assert repr(ED.constraints.half_open_interval(0, 4)) == repr(
        TD.constraints.half_open_interval(0, 4))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_support_and_arg_constraints_match_pytorch(case):
    _, _, mine, theirs = _params(case, 3)
    mine = {k: v.detach() for k, v in mine.items()}  # reprs of bounds without grad_fn
    theirs = {k: v.detach() for k, v in theirs.items()}
    dist_e, dist_t = case.build(ED, mine), case.build(TD, theirs)
    assert repr(dist_e.support).replace("ember.", "torch.") == repr(dist_t.support)
    assert dist_e.support.is_discrete == dist_t.support.is_discrete
    assert dist_e.support.event_dim == dist_t.support.event_dim
    constraints_e = {k: repr(v).replace("ember.", "torch.")
                     for k, v in dist_e.arg_constraints.items()}
    constraints_t = {k: repr(v) for k, v in dist_t.arg_constraints.items()}
    assert constraints_e == constraints_t
    if hasattr(dist_t, "param_shape"):
        assert tuple(dist_e.param_shape) == tuple(dist_t.param_shape)
