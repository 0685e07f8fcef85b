"""Ops PyTorch offers that are compositions of ember's ops (their gradients come from the
parts): addcmul, addcdiv, deg2rad, rad2deg, inner, float_power, adjoint, positive,
isposinf, isneginf; the functional in-place forms (``torch.exp_(x)``) and the in-place
comparisons (``x.lt_(y)``)."""
from __future__ import annotations

import math

from .. import dtypes
from ..tensor import Tensor
from . import _samples, comparison
from ._util import ensure_tensor
from .arithmetic import _inplace_method, div, mul, pow, sub
from .products import tensordot
from .registry import NAMESPACES, Sample, bind_method, register_op
from .shape import roll, transpose
from .unary import sign


def _ternary(make):
    return [Sample((make((3, 4)), make((3, 4)), make((3, 4), low=0.5, high=2.0)), name="same"),
            Sample((make((2, 3, 4)), make((4,)), make((3, 1), low=0.5, high=2.0)),
                   {"value": -0.5}, name="broadcast, value")]


@register_op(methods=("addcmul",), samples=_ternary)
def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2``, elementwise with broadcasting."""
    ensure_tensor(input, "addcmul", "input")
    return input + value * (tensor1 * tensor2)


@register_op(methods=("addcdiv",), samples=_ternary)
def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``; integer tensor1 and tensor2 are refused, as in
    PyTorch (integer division would truncate)."""
    ensure_tensor(input, "addcdiv", "input")
    for t in (tensor1, tensor2):
        if isinstance(t, Tensor) and not t.dtype.is_floating_point:
            raise RuntimeError(
                "Integer division with addcdiv is no longer supported, and in a future "
                "release addcdiv will perform a true division of tensor1 and tensor2. The "
                "historic addcdiv behavior can be implemented as (input + value * "
                "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                "(input + value * tensor1 / tensor2) for float inputs.")
    return input + value * (tensor1 / tensor2)


def _to_float(input):
    return input if input.dtype.is_floating_point else input.to(dtypes.get_default_dtype())


@register_op(methods=("deg2rad",), samples=_samples.unary(-200.0, 200.0))
def deg2rad(input):
    """Degrees to radians: ``input * pi / 180`` (integers give the default float dtype)."""
    ensure_tensor(input, "deg2rad", "input")
    return _to_float(input) * (math.pi / 180.0)


@register_op(methods=("rad2deg",), samples=_samples.unary())
def rad2deg(input):
    """Radians to degrees: ``input * 180 / pi``."""
    ensure_tensor(input, "rad2deg", "input")
    return _to_float(input) * (180.0 / math.pi)


@register_op(methods=("inner",), samples=lambda make: [
    Sample((make((3,)), make((3,))), name="vectors"),
    Sample((make((2, 3)), make((4, 3))), name="matrices"),
    Sample((make(()), make((2, 3))), name="scalar")])
def inner(input, other):
    """The inner product over the last dimension: ``out[i.., j..] = sum_k input[i.., k] *
    other[j.., k]``; a 0-d operand multiplies."""
    ensure_tensor(input, "inner", "input")
    ensure_tensor(other, "inner", "other")
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, dims=([input.ndim - 1], [other.ndim - 1]))


@register_op(methods=("float_power",), samples=lambda make: [
    Sample((make((3, 4), low=0.5, high=2.0), make((3, 4))), name="tensors"),
    Sample((make((3,), low=0.5, high=2.0), 2.5), name="scalar exponent")])
def float_power(input, exponent):
    """``input ** exponent`` computed in float64, whatever the operands' dtypes."""
    if not isinstance(input, Tensor):
        ensure_tensor(exponent, "float_power", "exponent")
        return pow(input, exponent.to(dtypes.float64))
    e = exponent.to(dtypes.float64) if isinstance(exponent, Tensor) else exponent
    return pow(input.to(dtypes.float64), e)


@register_op(methods=("adjoint",), samples=lambda make: [
    Sample((make((3, 4)),)), Sample((make((2, 3, 4)),), name="batched")])
def adjoint(input):
    """The conjugate transpose of the last two dims; for real tensors a transpose view."""
    ensure_tensor(input, "adjoint", "input")
    if input.ndim < 2:
        raise RuntimeError("adjoint() is only supported for matrices and batches of matrices")
    return transpose(input, -2, -1)


@register_op(methods=("positive",), samples=_samples.unary())
def positive(input):
    """``+input``: the input itself; bool tensors are refused, as in PyTorch."""
    ensure_tensor(input, "positive", "input")
    if input.dtype is dtypes.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@register_op(methods=("isposinf",), differentiable=False, samples=lambda make: [
    Sample((make((3, 4), requires_grad=False) / 0.0,), name="infinities"),
    Sample((make.int((4,), -3, 3),), name="integers")])
def isposinf(input):
    """True where input is +inf."""
    ensure_tensor(input, "isposinf", "input")
    return input == math.inf


@register_op(methods=("isneginf",), differentiable=False, samples=lambda make: [
    Sample((make((3, 4), requires_grad=False) / 0.0,), name="infinities"),
    Sample((make.int((4,), -3, 3),), name="integers")])
def isneginf(input):
    """True where input is -inf."""
    ensure_tensor(input, "isneginf", "input")
    return input == -math.inf


# sgn is sign for real tensors
NAMESPACES["ember"]["sgn"] = NAMESPACES["ember"]["sign"]
bind_method("sgn", sign)

for _name, _of in (("subtract", sub), ("multiply", mul), ("divide", div)):
    bind_method(_name, _of)


_c = comparison
for _name, _of in (("eq_", _c.eq), ("ne_", _c.ne), ("lt_", _c.lt), ("le_", _c.le),
                   ("gt_", _c.gt), ("ge_", _c.ge), ("greater_", _c.gt),
                   ("greater_equal_", _c.ge), ("less_", _c.lt), ("less_equal_", _c.le),
                   ("not_equal_", _c.ne), ("sgn_", sign), ("deg2rad_", deg2rad),
                   ("rad2deg_", rad2deg), ("addcmul_", addcmul), ("addcdiv_", addcdiv),
                   ("float_power_", float_power)):
    bind_method(_name, _inplace_method(_name, _of))


def _functional_inplace(name: str):
    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be Tensor, not "
                            f"{type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = name
    function.__doc__ = f"``input.{name}(...)``: the in-place form, as a function."
    return function


# torch.exp_(x) and friends: the Tensor methods as functions
for _name in ("abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
              "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_",
              "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_",
              "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_",
              "floor_", "frac_", "gcd_", "index_put_", "lcm_", "log10_", "log1p_", "log2_",
              "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_",
              "reciprocal_", "resize_as_", "round_", "rsqrt_", "sin_", "sinc_", "sinh_",
              "sqrt_", "square_", "tan_", "trunc_", "xlogy_", "zero_"):
    if hasattr(Tensor, _name) and _name not in NAMESPACES["ember"]:
        NAMESPACES["ember"][_name] = _functional_inplace(_name)


def _shift_dims(input, dim, what):
    ensure_tensor(input, what, "input")
    if dim is None:
        return tuple(range(input.ndim))
    return (dim,) if isinstance(dim, int) else tuple(dim)


@register_op(namespace="fft", samples=lambda make: [
    Sample((make((3, 4)),)), Sample((make((5, 2)),), {"dim": 0}, name="dim 0"),
    Sample((make((2, 3, 5)),), {"dim": (-1, 1)}, name="two dims")])
def fftshift(input, dim=None):
    """Move the zero-frequency term to the center: a roll by ``n // 2`` along ``dim`` (all
    dims by default)."""
    dims = _shift_dims(input, dim, "fft.fftshift")
    if not dims:
        return input
    return roll(input, tuple(input.shape[d] // 2 for d in dims), dims)


@register_op(namespace="fft", samples=lambda make: [
    Sample((make((3, 4)),)), Sample((make((5, 2)),), {"dim": 0}, name="dim 0"),
    Sample((make((2, 3, 5)),), {"dim": (-1, 1)}, name="two dims")])
def ifftshift(input, dim=None):
    """The inverse of ``fftshift``: a roll by ``-(n // 2)`` along ``dim``."""
    dims = _shift_dims(input, dim, "fft.ifftshift")
    if not dims:
        return input
    return roll(input, tuple(-(input.shape[d] // 2) for d in dims), dims)
