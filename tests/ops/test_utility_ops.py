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
    with pytest.raises(RuntimeError, match="heaviside.*different dtypes"):
        ember.heaviside(x, ember.tensor([1]))
    assert ember.gcd(ember.tensor([12, -18, 0]), ember.tensor([8, 12, 0])).tolist() == [4, 6, 0]
    assert ember.tensor([4, -6]).lcm(ember.tensor([6, 4])).tolist() == [12, 12]
    with pytest.raises(RuntimeError, match="gcd.*not defined for float32"):
        ember.gcd(ember.ones(2), ember.ones(2))
    assert ember.isreal(ember.tensor([1.0, 2.0])).tolist() == [True, True]
