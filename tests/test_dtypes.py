"""PyTorch's type promotion: categories, weak Python scalars, 0-d tensors."""
from __future__ import annotations

import itertools

import pytest

import ember

from .conftest import outcome, requires_torch

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


@requires_torch
@pytest.mark.parametrize("name", ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16",
                                  "float16", "bfloat16", "float32", "float64"])
def test_dtype_properties_match_torch(name):
    import torch

    ours, theirs = getattr(ember, name), getattr(torch, name)
    assert (ours.is_floating_point, ours.is_signed, ours.itemsize) == \
        (theirs.is_floating_point, theirs.is_signed, theirs.itemsize)


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


# Python numbers meeting integer dtypes, as PyTorch treats them: arithmetic wraps the
# number to the dtype (uint8 + -1 adds 255); fills, bounds, exponents and tensor() check
# that it fits; integer remainders by zero raise. (call on a library T)
NUMBERS_INTO_INTEGERS = {
    "uint8 + -1": lambda T: T.tensor([3], dtype=T.uint8) + (-1),
    "-1 + uint8": lambda T: -1 + T.tensor([3], dtype=T.uint8),
    "int8 * 1000": lambda T: T.tensor([1], dtype=T.int8) * 1000,
    "uint8 - 300": lambda T: T.zeros(1, dtype=T.uint8) - 300,
    "uint8 // 300": lambda T: T.tensor([9], dtype=T.uint8) // 300,
    "int32 + 2**40": lambda T: T.zeros(2, dtype=T.int32) + 2 ** 40,
    "int64 + 2**63": lambda T: T.zeros(1, dtype=T.int64) + 2 ** 63,
    "int8 + 2**64": lambda T: T.tensor([1], dtype=T.int8) + 2 ** 64,
    "uint8 < -1": lambda T: T.zeros(2, dtype=T.uint8) < -1,
    "uint8 == 256": lambda T: T.zeros(2, dtype=T.uint8).eq(256),
    "int8 & 1000": lambda T: T.tensor([5], dtype=T.int8) & 1000,
    "fill_ 1000": lambda T: T.tensor([5], dtype=T.int8).fill_(1000),
    "fill_ -1 uint8": lambda T: T.tensor([1], dtype=T.uint8).fill_(-1),
    "fill_ nan": lambda T: T.tensor([1]).fill_(float("nan")),
    "fill_ inf": lambda T: T.tensor([1]).fill_(float("inf")),
    "full 300 uint8": lambda T: T.full((2,), 300, dtype=T.uint8),
    "full -1 uint8": lambda T: T.full((1,), -1, dtype=T.uint8),
    "full nan int64": lambda T: T.full((2,), float("nan"), dtype=T.int64),
    "full 2.5 int8": lambda T: T.full((1,), 2.5, dtype=T.int8),
    "full_like 1000": lambda T: T.full_like(T.tensor([5], dtype=T.int8), 1000),
    "clamp 1000": lambda T: T.tensor([5], dtype=T.int8).clamp(0, 1000),
    "clamp -1 uint8": lambda T: T.tensor([1], dtype=T.uint8).clamp(min=-1),
    "int16 fill 2**20": lambda T: T.zeros(1, dtype=T.int16).fill_(2 ** 20),
    "masked_fill 1000": lambda T: T.tensor([5, 1], dtype=T.int8).masked_fill(
        T.tensor([True, False]), 1000),
    "masked_fill 2**40 int32": lambda T: T.zeros(2, dtype=T.int32).masked_fill(
        T.tensor([True, False]), 2 ** 40),
    "masked_fill -2 uint8": lambda T: T.tensor([1], dtype=T.uint8).masked_fill(
        T.tensor([True]), -2),
    "where 300 uint8": lambda T: T.where(T.tensor([True, False]), T.zeros(2, dtype=T.uint8),
                                         300),
    "where -1 uint8": lambda T: T.where(T.tensor([False]), T.tensor([1], dtype=T.uint8), -1),
    "pow 1000": lambda T: T.tensor([5], dtype=T.int8).pow(1000),
    "tensor 2**63": lambda T: T.tensor(2 ** 63),
    "tensor [2**64]": lambda T: T.tensor([2 ** 64]),
    "tensor [1, 2**63]": lambda T: T.tensor([[1, 2 ** 63]]),
    "tensor [True, 2**63]": lambda T: T.tensor([True, 2 ** 63]),
    "tensor -2**63": lambda T: T.tensor([-2 ** 63]),
    "tensor [1.5, 2**70]": lambda T: T.tensor([1.5, 2 ** 70]),
    "tensor 2**70 float64": lambda T: T.tensor([2 ** 70], dtype=T.float64),
    "tensor 2**63 float32": lambda T: T.tensor(2 ** 63, dtype=T.float32),
    "tensor 2**63 bool": lambda T: T.tensor([2 ** 63], dtype=T.bool),
    "tensor 256 uint8": lambda T: T.tensor([256], dtype=T.uint8),
    "tensor -1 uint8": lambda T: T.tensor([-1], dtype=T.uint8),
    "tensor -200 uint8": lambda T: T.tensor([-200], dtype=T.uint8),
    "tensor 255.7 uint8": lambda T: T.tensor([255.7], dtype=T.uint8),
    "tensor 128 int8": lambda T: T.tensor([128], dtype=T.int8),
    "tensor 2**31 int32": lambda T: T.tensor([2 ** 31], dtype=T.int32),
    "tensor nan int64": lambda T: T.tensor([float("nan")], dtype=T.int64),
    "tensor inf int32": lambda T: T.tensor(float("inf"), dtype=T.int32),
    "tensor 1e30 int64": lambda T: T.tensor([1e30], dtype=T.int64),
    "tensor 3.7 int8": lambda T: T.tensor([3.7, -2.2], dtype=T.int8),
    "int % 0": lambda T: T.tensor([5]) % 0,
    "int remainder tensor 0": lambda T: T.tensor([5]).remainder(T.tensor([0])),
    "int fmod 0": lambda T: T.fmod(T.tensor([5]), 0),
    "uint8 % 0": lambda T: T.tensor([5], dtype=T.uint8) % 0,
    "5 % int tensor with 0": lambda T: 5 % T.tensor([0, 1]),
    "remainder_ 0": lambda T: T.tensor([5]).remainder_(0),
    "float % 0": lambda T: T.tensor([5.0]) % 0,
    "float fmod 0": lambda T: T.fmod(T.tensor([5.0]), 0),
    "dtype=float": lambda T: T.ones(2, dtype=float),
    "to(float)": lambda T: T.zeros(1).to(float),
    "arange dtype=float": lambda T: T.arange(3, dtype=float),
}


@requires_torch
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", list(NUMBERS_INTO_INTEGERS))
def test_python_numbers_meet_integer_dtypes_as_in_torch(case):
    import torch

    call = NUMBERS_INTO_INTEGERS[case]
    expected, got = outcome(call, torch), outcome(call, ember)
    if expected[0] == "RuntimeError" and expected[1] == "ZeroDivisionError":
        assert got[0] == "RuntimeError" and got[1] == "ZeroDivisionError"
    else:
        assert got == expected
