"""The CPU kernels behind ``backend``: ``where`` with a zero operand masks bits instead of
running np.where's branching loop, and ``c_order`` copies transposed matrices in strips;
the results must be NumPy's own, bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from ember import backend
from ember.backend import cpu

DTYPES = [np.float16, np.float32, np.float64]
try:
    import ml_dtypes

    DTYPES.append(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes comes with the dev extras
    pass


def _case(dtype, shape=(64, 100), seed=0):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape).astype(dtype)
    values.flat[:6] = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-8]).astype(dtype)
    condition = rng.standard_normal(shape) > 0
    condition.flat[:6] = [False, True, False, True, False, True]
    return condition, values


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("zero", [0, 0.0])
def test_select_or_zero_is_np_where_bit_for_bit(dtype, zero):
    condition, values = _case(dtype)
    cases = [(condition, values, zero), (condition, zero, values),
             (condition[:1], values, zero), (condition, values[:1], zero),
             (condition.T, values.T, zero)]  # non-contiguous operands
    for args in cases:
        got = backend.where(np, *args)
        want = np.where(*args)
        if want.dtype != values.dtype:  # backend.where keeps bfloat16 as NumPy does not
            want = want.astype(values.dtype)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.base is None and got.flags.writeable
        np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8),
                                      np.ascontiguousarray(want).view(np.uint8))


def test_select_steps_aside_where_it_does_not_apply():
    condition, values = _case(np.float32)
    assert cpu.select_or_zero(condition[:2, :2], values[:2, :2], True) is None  # small
    assert cpu.select_or_zero(condition, values.astype(np.int32), True) is None
    assert cpu.select_or_zero(condition.astype(np.int8), values, True) is None
    # a negative zero is a value of its own: np.where keeps its sign
    got = backend.where(np, condition, values, -0.0)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.where(condition, values, -0.0)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transposed_gradient_copy_is_c_ordered_and_exact(dtype):
    rng = np.random.default_rng(5)
    for shape in [(300, 517), (3, 4), (1, 70000), (70000, 1)]:
        a = rng.standard_normal(shape).astype(dtype)
        for view in (a.T, a, a[:, ::2].T):
            out = backend.c_order(view)
            assert out.flags.c_contiguous and not np.shares_memory(out, a)
            assert np.array_equal(out, view) and out.dtype == view.dtype


def test_subtract_scaled_is_the_plain_update_bit_for_bit():
    from ember.backend import scratch

    rng = np.random.default_rng(3)
    for shape, dtype in [((512, 784), np.float32), ((7,), np.float64), ((600, 600), np.float64)]:
        value = rng.standard_normal(shape).astype(dtype)
        target = rng.standard_normal(shape).astype(dtype)
        want = target.copy()
        want -= 0.01 * value
        scratch.subtract_scaled(np, target, 0.01, value)
        np.testing.assert_array_equal(target, want)
    # a broadcast value, another dtype, a non-number scale: the plain expression
    target = np.ones((3, 4))
    scratch.subtract_scaled(np, target, 2, np.ones(4, np.float32))
    np.testing.assert_array_equal(target, -np.ones((3, 4)))
    scratch.subtract_scaled(np, target, np.float64(0.5), np.ones((3, 4)))
    np.testing.assert_array_equal(target, np.full((3, 4), -1.5))
