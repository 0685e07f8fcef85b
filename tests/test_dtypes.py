"""PyTorch's type promotion: categories, weak Python scalars, 0-d tensors."""
from __future__ import annotations

import itertools

import pytest

import ember

from .conftest import requires_torch

ALL = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
       ember.float16, ember.float32, ember.float64]


def test_weak_scalars_keep_the_tensor_dtype():
    assert (ember.ones(2, dtype=ember.float16) + 2.5).dtype is ember.float16
    assert (ember.ones(2, dtype=ember.int32) + 5).dtype is ember.int32
    assert (ember.ones(2, dtype=ember.int32) * 2.5).dtype is ember.float32
    assert (ember.ones(2, dtype=ember.bool) + 1).dtype is ember.int64
    assert (ember.ones(2, dtype=ember.uint8) + True).dtype is ember.uint8


def test_int_division_and_sums():
    a = ember.tensor([1, 2, 3])
    assert (a / a).dtype is ember.float32
    assert a.sum().dtype is ember.int64
    assert ember.tensor([True, False]).sum().dtype is ember.int64
    assert ember.tensor([1, 2], dtype=ember.int8).sum().dtype is ember.int64
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        a.mean()


def test_zero_dim_tensors_rank_below_dimensioned_ones():
    f32 = ember.ones(3)
    f64_scalar = ember.tensor(2.0, dtype=ember.float64)
    assert (f32 + f64_scalar).dtype is ember.float32
    i64 = ember.ones(3, dtype=ember.int64)
    assert (i64 + f64_scalar).dtype is ember.float64
    assert (ember.tensor(1, dtype=ember.int64) + ember.ones(2, dtype=ember.uint8)).dtype \
        is ember.uint8


@requires_torch
@pytest.mark.parametrize("a,b", list(itertools.product(ALL, ALL)))
def test_promote_types_matches_torch(a, b):
    import torch

    expected = torch.promote_types(getattr(torch, a.name), getattr(torch, b.name))
    assert ember.promote_types(a, b).name == str(expected).replace("torch.", "")


@requires_torch
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("scalar", [True, 3, 2.5])
@pytest.mark.parametrize("zero_dim", [False, True])
def test_result_type_with_scalars_and_0d_matches_torch(dtype, scalar, zero_dim):
    import torch

    shape = () if zero_dim else (2,)
    ours = ember.result_type(ember.zeros(shape, dtype=dtype), scalar)
    theirs = torch.result_type(torch.zeros(shape, dtype=getattr(torch, dtype.name)), scalar)
    assert ours.name == str(theirs).replace("torch.", "")


def test_dtype_repr_and_properties():
    assert repr(ember.float32) == "ember.float32"
    assert ember.float32.is_floating_point and not ember.int64.is_floating_point
    assert ember.float64.itemsize == 8
    assert ember.get_default_dtype() is ember.float32
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor([1.5]).dtype is ember.float64
        assert ember.zeros(1).dtype is ember.float64
    finally:
        ember.set_default_dtype(ember.float32)
