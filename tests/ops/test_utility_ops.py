"""Edge cases of the utility ops: equal/allclose/isclose, dist, diff, cross, aminmax,
heaviside, gcd/lcm, quantile, mode, cov/corrcoef and the index/structure builders."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember


# ----------------------------------------------------------------------------- closeness
def test_equal_is_a_python_bool_and_checks_shape():
    a = ember.tensor([1.0, 2.0])
    assert ember.equal(a, ember.tensor([1.0, 2.0])) is True
    assert a.equal(ember.tensor([[1.0, 2.0]])) is False
    assert ember.equal(ember.tensor([1, 2]), ember.tensor([1.0, 2.0])) is True
    assert ember.equal(ember.tensor([math.nan]), ember.tensor([math.nan])) is False


def test_equal_and_isclose_need_tensors():
    with pytest.raises(TypeError, match="equal.*other.*Tensor"):
        ember.equal(ember.ones(2), 1.0)
    with pytest.raises(TypeError, match="isclose.*other.*Tensor"):
        ember.isclose(ember.ones(2), 1.0)


def test_isclose_rules():
    a = ember.tensor([1.0, math.inf, math.nan, -math.inf, 1.0])
    b = ember.tensor([1.0 + 1e-7, math.inf, math.nan, math.inf, 1.1])
    assert ember.isclose(a, b).tolist() == [True, True, False, False, False]
    assert a.isclose(b, equal_nan=True).tolist() == [True, True, True, False, False]
    assert ember.isclose(a, b, atol=0.2).tolist() == [True, True, False, False, True]
    assert ember.allclose(ember.ones(2, 1), ember.ones(3)) is True
    assert ember.tensor([1.0]).allclose(ember.tensor([1.5])) is False


def test_isclose_errors():
    with pytest.raises(RuntimeError, match="Long did not match Float"):
        ember.isclose(ember.tensor([1]), ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match="rtol must be greater than or equal to zero"):
        ember.isclose(ember.ones(1), ember.ones(1), rtol=-1.0)
    with pytest.raises(RuntimeError, match="isclose.*size of tensor a"):
        ember.isclose(ember.ones(2), ember.ones(3))


# ----------------------------------------------------------------------------- step, gcd, lcm
def test_heaviside_and_integer_ops():
    x = ember.tensor([-1.5, 0.0, 2.0])
    assert ember.heaviside(x, ember.tensor([0.5])).tolist() == [0.0, 0.5, 1.0]
    with pytest.raises(RuntimeError, match="heaviside needs input and values of one dtype"):
        ember.heaviside(x, ember.tensor([1]))
    assert ember.gcd(ember.tensor([12, -18, 0]), ember.tensor([8, 12, 0])).tolist() == [4, 6, 0]
    assert ember.tensor([4, -6]).lcm(ember.tensor([6, 4])).tolist() == [12, 12]
    with pytest.raises(NotImplementedError, match="gcd.*not implemented for 'Float'"):
        ember.gcd(ember.ones(2), ember.ones(2))
    assert ember.isreal(ember.tensor([1.0, 2.0])).tolist() == [True, True]


# ----------------------------------------------------------------------------- dist, diff, cross
def test_t_and_detach_functions():
    x = ember.ones(2, 3, requires_grad=True)
    assert ember.t(x).shape == (3, 2)
    assert ember.t(ember.ones(3)).shape == (3,)
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
        ember.t(ember.ones(2, 2, 2))
    d = ember.detach(x)
    assert not d.requires_grad and d.grad_fn is None


def test_dist_values_and_zero_gradient():
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = ember.tensor([1.0, 2.0])
    assert ember.dist(ember.tensor([0.0, 0.0]), ember.tensor([3.0, 4.0])).item() == 5.0
    assert ember.dist(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 2.0]), 0).item() == 1.0
    ember.dist(a, b).backward()
    assert a.grad.tolist() == [0.0, 0.0]  # no NaN at a zero distance
    with pytest.raises(RuntimeError, match="dist.*floating-point"):
        ember.dist(ember.tensor([1]), ember.tensor([2]))


def test_diff_orders_and_errors():
    x = ember.tensor([1, 4, 9, 16])
    assert ember.diff(x).tolist() == [3, 5, 7]
    assert x.diff(n=2).tolist() == [2, 2]
    assert ember.diff(x, n=5).shape == (0,)
    assert ember.diff(x, n=0).tolist() == [1, 4, 9, 16]
    assert ember.diff(ember.tensor([True, False, False])).tolist() == [True, False]
    assert ember.diff(x, prepend=ember.tensor([0.5])).tolist() == [0.5, 3, 5, 7]
    with pytest.raises(RuntimeError, match="order must be non-negative but got -1"):
        ember.diff(x, n=-1)
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        ember.diff(ember.tensor(1.0))
    with pytest.raises(RuntimeError, match="diff.*shape of prepend"):
        ember.diff(ember.ones(2, 3), dim=0, prepend=ember.ones(1, 2))


def test_cross_conventions():
    a, b = ember.tensor([[1.0, 0.0, 0.0]]), ember.tensor([[0.0, 1.0, 0.0]])
    assert ember.linalg.cross(a, b).tolist() == [[0.0, 0.0, 1.0]]
    with pytest.warns(UserWarning, match="without specifying the dim"):
        assert a.cross(b).tolist() == [[0.0, 0.0, 1.0]]  # first dim of size 3
    with pytest.raises(RuntimeError, match="dimension 0 must have length 3"):
        ember.cross(a, b, dim=0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        ember.linalg.cross(a, ember.ones(3))


def test_aminmax_is_a_named_tuple():
    result = ember.tensor([[3.0, -1.0], [0.5, 7.0]]).aminmax(dim=0)
    assert result.min.tolist() == [0.5, -1.0] and result.max.tolist() == [3.0, 7.0]
    lo, hi = ember.aminmax(ember.tensor([2.0, -4.0, 1.0]))
    assert (lo.item(), hi.item()) == (-4.0, 2.0)
    with pytest.raises(RuntimeError, match="aminmax.*empty"):
        ember.aminmax(ember.ones(0))


# ----------------------------------------------------------------------------- quantiles, mode
def test_quantile_interpolations():
    x = ember.tensor([0.0, 1.0, 2.0, 3.0])
    q = 0.5  # rank 1.5
    expected = {"linear": 1.5, "lower": 1.0, "higher": 2.0, "midpoint": 1.5, "nearest": 2.0}
    for mode_, value in expected.items():
        assert ember.quantile(x, q, interpolation=mode_).item() == value
    assert x.quantile(ember.tensor([0.0, 1.0])).tolist() == [0.0, 3.0]
    with_nan = ember.tensor([0.0, math.nan, 2.0])
    assert math.isnan(ember.quantile(with_nan, 0.5).item())
    assert ember.nanquantile(with_nan, 0.5).item() == 1.0


def test_quantile_errors():
    x = ember.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="q must be in the range \\[0, 1\\] but got 1.5"):
        ember.quantile(x, 1.5)
    with pytest.raises(RuntimeError, match="float or double"):
        ember.quantile(ember.tensor([1, 2]), 0.5)
    with pytest.raises(RuntimeError, match="same dtype"):
        ember.quantile(x, ember.tensor([0.5], dtype=ember.float64))
    with pytest.raises(RuntimeError, match="interpolation must be one of"):
        ember.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(RuntimeError, match="non-empty"):
        ember.quantile(ember.ones(0), 0.5)


def test_mode_picks_smallest_most_frequent_and_its_last_index():
    values, indices = ember.mode(ember.tensor([[3.0, 1.0, 3.0, 2.0, 1.0], [5, 5, 4, 4, 6]]))
    assert values.tolist() == [1.0, 4.0] and indices.tolist() == [4, 3]
    x = ember.tensor([2.0, 7.0, 2.0], requires_grad=True)
    x.mode().values.backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


def test_cov_and_corrcoef():
    x = ember.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    assert ember.cov(x).tolist() == [[1.0, -1.0], [-1.0, 1.0]]
    assert ember.corrcoef(x).tolist() == [[1.0, -1.0], [-1.0, 1.0]]
    fw = ember.tensor([1, 2, 1])
    np.testing.assert_allclose(ember.cov(x, fweights=fw).numpy(),
                               np.cov(x.numpy(), fweights=fw.numpy()))
    with pytest.raises(RuntimeError, match="fweights cannot be negative"):
        ember.cov(x, fweights=ember.tensor([1, -1, 1]))
    with pytest.raises(RuntimeError, match="aweights to have floating point"):
        ember.cov(x, aweights=ember.tensor([1, 1, 1]))
    with pytest.raises(RuntimeError, match="two or fewer dimensions"):
        ember.cov(ember.ones(2, 2, 2))
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert math.isnan(ember.cov(ember.tensor([1.0])).item())


# ----------------------------------------------------------------------------- builders
def test_index_builders_and_blocks():
    assert ember.tril_indices(3, 3).tolist() == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert ember.triu_indices(2, 3, 1).tolist() == [[0, 0, 1], [1, 2, 2]]
    assert ember.tril_indices(3, 3).dtype is ember.int64
    with pytest.raises(RuntimeError, match="non-negative"):
        ember.triu_indices(-1, 3)
    c = ember.combinations(ember.tensor([1, 2, 3]))
    assert c.tolist() == [[1, 2], [1, 3], [2, 3]]
    assert ember.combinations(ember.tensor([1, 2]), 3).shape == (0, 3)
    assert ember.combinations(ember.tensor([1, 2]), with_replacement=True).tolist() == \
        [[1, 1], [1, 2], [2, 2]]
    assert ember.cartesian_prod(ember.tensor([1, 2]), ember.tensor([3, 4])).tolist() == \
        [[1, 3], [1, 4], [2, 3], [2, 4]]
    assert ember.block_diag(ember.tensor(1), ember.tensor([[2, 3]])).tolist() == \
        [[1, 0, 0], [0, 2, 3]]
    with pytest.raises(RuntimeError, match="2 or fewer dimensions"):
        ember.block_diag(ember.ones(1, 1, 1))
    assert ember.diagflat(ember.tensor([[1, 2]])).tolist() == [[1, 0], [0, 2]]
    assert ember.vander(ember.tensor([2, 3])).tolist() == [[2, 1], [3, 1]]
    assert ember.vander(ember.tensor([2.0]), N=3, increasing=True).tolist() == [[1.0, 2.0, 4.0]]


def test_vander_gradient_at_zero_is_finite():
    x = ember.tensor([0.0, 2.0], requires_grad=True)
    ember.vander(x, N=3).sum().backward()
    assert x.grad.tolist() == [1.0, 5.0]  # d/dx (x^2 + x + 1) = 2x + 1


def test_aminmax_shares_the_gradient_among_ties():
    x = ember.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], requires_grad=True)
    result = ember.aminmax(x, dim=1)
    (result.min * 2 + result.max).sum().backward()
    assert x.grad.tolist() == [[2.0, 0.5, 0.5], [0.5, 0.5, 2.0]]
