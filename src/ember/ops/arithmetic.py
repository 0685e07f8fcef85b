"""Elementwise arithmetic: add, sub, mul, div (with rounding modes), floor_divide,
remainder, fmod, pow, square, xlogy, lerp, atan2, hypot, logaddexp/logaddexp2, gcd, lcm.
Operators and in-place forms are bound by the registry (``register_op(operators=...,
inplace=...)``).

Each op is one Function class (forward on arrays via ``ctx.xp``, backward with ember
ops) and one registered public function that handles argument conversion and dtype
promotion. Broadcasting is NumPy's; ``sum_to_shape`` folds gradients back.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import backend, dtypes
from ..autograd.function import NOTHING_SAVED, Function
from ..backend.cpu import number_array
from ..tensor import Tensor
from . import _samples
from ._util import (
    binary_operands,
    broadcast_error,
    dtype_not_implemented,
    ensure_tensor,
    float_operands,
    scalar_value,
    shape_of,
)
from .comparison import _binary, _tensor_operands, _tensor_pair, _two_tensors
from .registry import NAMESPACES, Sample, binary_operator, bind_method, register_op
from .unary import _LN2, reciprocal

# ----------------------------------------------------------------------------- arithmetic


def _refuse_bools(input, other, op: str) -> None:
    """Integer math PyTorch has no bool loop for (pow, floor_divide, fmod...): raised when
    both operands are bools, so that the promoted result would be bool."""
    if not (isinstance(input, Tensor) or isinstance(other, Tensor)):
        return
    for x in (input, other):
        if isinstance(x, Tensor):
            if x._data.dtype.kind != "b":
                return
        elif not isinstance(x, (bool, np.bool_)):
            return
    raise dtype_not_implemented(op, dtypes.bool, f"{op} of two bools: convert with .int() "
                                "first")


def _to_shape(m, grad, shape):
    """``m.sum_to_shape``, skipped (no call) when the shapes already match, or when
    ``shape`` is None: the operand's shape is the output's (see ``_NUMBER_SHAPES``)."""
    return grad if shape is None or grad.shape == shape else m.sum_to_shape(grad, shape)


def _number(value, grad, m):
    """A Python-number operand for a backward formula: a 0-d array on arrays (cheaper)."""
    return number_array(value, grad) if m.arrays else value


# Shared where they fit, so that a node on two tensors keeps no tuples of its own for them
# (fewer objects per node: cheaper to make and for the cyclic garbage collector to walk)
_NO_SCALARS = (None, None)
_SCALAR_SHAPES = ((), ())
# ``ctx.shapes`` of a tensor and a Python number: the tensor's gradient needs no reduction
# (its shape is the output's), and the number has none to get
_NUMBER_SHAPES = (None, ())
# ... of two operands of one shape (the output's): neither gradient needs a reduction
_NO_BROADCAST = (None, None)


def _zero_dim_floats(a, b) -> bool:
    """Whether a and b are 0-d float NumPy arrays (``x + y`` in a scalar graph). Their
    product or sum on NumPy scalars (``a[()] * b[()]``) is the same number for a fraction
    of a ufunc call's cost; integers are left to the ufunc, which wraps on overflow
    without warning."""
    return type(a) is _ndarray and type(b) is _ndarray and not a.ndim and not b.ndim and \
        a.dtype.kind == "f"


_ndarray = np.ndarray


def _shapes(a, b):
    """The operands' shapes, as ``ctx.shapes`` (None where no reduction is needed: read with
    ``_to_shape``)."""
    return _NO_BROADCAST if a == b else (a, b)


def _save_operands(ctx, a, b, only: str = "") -> None:
    """Save array operands as tensors and Python-scalar operands as plain numbers.
    ``only``: save an operand only where a needed gradient reads it: "product" (each
    operand's gradient reads the other), "quotient" (the numerator only for the divisor's
    gradient)."""
    if not ctx._recording:
        return
    ndarray = ctx.xp.ndarray
    if only and (type(b) is float or type(b) is int) and type(a) is ndarray:
        # a tensor and a Python number, the common case: the number is all backward needs
        ctx._saved = NOTHING_SAVED
        ctx.scalars = (None, b)
        ctx.shapes = _NUMBER_SHAPES
        return
    a_array, b_array = isinstance(a, ndarray), isinstance(b, ndarray)
    if only:
        need_a, need_b = ctx.needs_input_grad
        keep_b = need_a if only == "product" else True
        ctx._to_save = (a if a_array and need_b else None,  # (save_for_backward, inlined)
                        b if b_array and keep_b else None)
    else:
        ctx._to_save = (a if a_array else None, b if b_array else None)
    if a_array and b_array:
        ctx.scalars = _NO_SCALARS
        ctx.shapes = _shapes(a.shape, b.shape)
    else:
        ctx.scalars = (None if a_array else a, None if b_array else b)
        ctx.shapes = _shapes(a.shape if a_array else (), b.shape if b_array else ())


class Add(Function):
    array_backward = True
    node_name = "AddBackward0"
    number_operands = True

    @staticmethod
    def forward(ctx, a, b):
        if type(b) is float:  # (a tensor plus a Python float: the common case, first)
            if ctx._recording:
                ctx.shapes = _NUMBER_SHAPES if hasattr(a, "shape") else _SCALAR_SHAPES
            return a + number_array(b, a)
        if ctx._recording:
            ctx.shapes = _shapes(getattr(a, "shape", ()), getattr(b, "shape", ()))
        if _zero_dim_floats(a, b):
            return a[()] + b[()]
        return a + b

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        need_a, need_b = ctx.needs_input_grad
        return (_to_shape(m, grad, ctx.shapes[0]) if need_a else None,
                _to_shape(m, grad, ctx.shapes[1]) if need_b else None)


# (x + y == y + x: ``2 + x`` is ``add(x, 2)``, as in PyTorch, whose graph has x first)
@register_op(operators=("__add__", "__radd__"), inplace=("add_", "__iadd__"),
             methods=("add",), samples=_samples.binary(), fast=("binary", Add, np.add))
def add(input, other, *, alpha=1):
    """``input + alpha * other``, broadcasting, with PyTorch's type promotion (of input
    and other; alpha takes no part in it).

    >>> ember.add(ember.tensor([1, 2]), ember.tensor([10, 20]), alpha=3)
    tensor([31, 62])
    """
    if type(alpha) is not int or alpha != 1:
        other = _alpha_times(input, other, alpha, "add")
    return _binary(Add, input, other, "add")


def _alpha_times(input, other, alpha, op: str):
    """``alpha * other`` for add and sub, in the dtype that input and other promote to,
    after PyTorch's checks of alpha against that dtype."""
    if isinstance(alpha, (Tensor, np.generic)):
        alpha = alpha.item()
    if not isinstance(alpha, (bool, int, float, complex)):
        raise TypeError(f"{op}(): argument 'alpha' must be a number, not {type(alpha).__name__}")
    if not isinstance(input, Tensor):
        input = scalar_value(input, op, "input")
    if not isinstance(other, Tensor):
        other = scalar_value(other, op, "other")
    result = dtypes.result_type(input, other)
    if type(alpha) is bool and result is not dtypes.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if type(alpha) is float and not (result.is_floating_point or result.is_complex):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if type(alpha) is complex and not result.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a "
                           "complex number.")
    if result is dtypes.bool:  # a bool result: alpha is True or False
        alpha = bool(alpha)
        return mul(other, alpha) if isinstance(other, Tensor) else bool(other) and alpha
    if isinstance(other, Tensor):
        return mul(other if other.dtype is result else other.to(result), alpha)
    return other * alpha


class Sub(Function):
    array_backward = True
    node_name = "SubBackward0"
    number_operands = True

    @staticmethod
    def forward(ctx, a, b):
        if ctx._recording:
            ctx.shapes = _shapes(getattr(a, "shape", ()), getattr(b, "shape", ()))
            if not ctx.shapes[0] and not hasattr(a, "shape"):  # number - tensor
                ctx.node_name = "RsubBackward1"
        if type(b) is float:
            return a - number_array(b, a)
        return a - b

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        need_a, need_b = ctx.needs_input_grad
        return (_to_shape(m, grad, ctx.shapes[0]) if need_a else None,
                _to_shape(m, -grad, ctx.shapes[1]) if need_b else None)


@register_op(operators=("__sub__",), reflected=("__rsub__",),
             inplace=("subtract_", "sub_", "__isub__"), methods=("sub", "subtract"),
             also=("subtract",), samples=_samples.binary(), fast=("binary", Sub, np.subtract))
def sub(input, other, *, alpha=1):
    """``input - alpha * other``."""
    bools = [type(v) is bool or isinstance(v, Tensor) and v.dtype is dtypes.bool
             for v in (input, other)]
    if all(bools):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if any(bools):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")
    a, b = binary_operands(input, other, "sub")
    if type(alpha) is not int or alpha != 1:
        b = _alpha_times(a, b, alpha, "sub")
    return _binary(Sub, a, b, "sub")


class Mul(Function):
    array_backward = True
    node_name = "MulBackward0"
    number_operands = True

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b, "product")
        if type(b) is float:
            return a * number_array(b, a)
        if _zero_dim_floats(a, b):
            return a[()] * b[()]
        return a * b

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        if ctx.shapes is _NO_BROADCAST and m.arrays and not grad.ndim and m.xp is np:
            # every value is 0-d (a scalar graph): on NumPy scalars, as _zero_dim_floats
            grad = grad[()]
            a = a[()] if a is not None else None
            b = b[()] if b is not None else None
        grad_a = grad_b = None
        if need_a:
            if b is None:
                b = ctx.scalars[1]
                if m.arrays:
                    b = number_array(b, grad)
            grad_a = grad * b
            shape = ctx.shapes[0]
            if shape is not None and grad_a.shape != shape:  # (_to_shape, inlined)
                grad_a = m.sum_to_shape(grad_a, shape)
        if need_b:
            if a is None:
                a = ctx.scalars[0]
                if m.arrays:
                    a = number_array(a, grad)
            grad_b = grad * a
            grad_b = _to_shape(m, grad_b, ctx.shapes[1])
        return grad_a, grad_b


@register_op(operators=("__mul__", "__rmul__"),
             inplace=("multiply_", "mul_", "__imul__"), methods=("mul", "multiply"),
             also=("multiply",), samples=_samples.binary(), fast=("binary", Mul, np.multiply))
def mul(input, other):
    """``input * other`` elementwise."""
    return _binary(Mul, input, other, "mul")


class Div(Function):
    array_backward = True
    node_name = "DivBackward0"
    number_operands = True

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b, "quotient")
        if type(b) is float:
            return a / number_array(b, a)
        return a / b

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        denominator = b if b is not None else _number(ctx.scalars[1], grad, m)
        grad_a = _to_shape(m, grad / denominator, ctx.shapes[0]) if need_a else None
        grad_b = None
        if need_b:
            numerator = a if a is not None else ctx.scalars[0]
            grad_b = _to_shape(m, -grad * numerator / (b * b), ctx.shapes[1])
        return grad_a, grad_b


def _div_samples(make):
    return _samples.binary(other_low=0.5, other_high=2.0)(make) + [
        Sample((make((3, 4), low=-4, high=4), make((4,), low=0.5, high=2.0)),
               {"rounding_mode": "floor"}, name="floor"),
        Sample((make((3, 4), low=-4, high=4), -1.5), {"rounding_mode": "trunc"}, name="trunc")]


@register_op(operators=("__truediv__",),
             inplace=("divide_", "true_divide_", "div_", "__itruediv__"),
             methods=("div", "divide", "true_divide"), also=("divide", "true_divide"),
             samples=_div_samples, fast=("binary", Div, np.true_divide))
def div(input, other, *, rounding_mode=None):
    """``input / other``. Integers divide to the default float dtype; rounding_mode
    'trunc' (toward zero) or 'floor' (toward -inf) rounds the quotient, keeps integer
    dtypes, and has a zero gradient."""
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                           f"'floor' but found '{rounding_mode}'")
        _refuse_bools(input, other, f"div_{rounding_mode}")
        a, b = binary_operands(input, other, "div")
        try:
            return RoundedDivide.apply(a, b, rounding_mode)
        except ValueError:
            raise broadcast_error("div", shape_of(a), shape_of(b)) from None
    a, b = float_operands(input, other, "div")
    return _binary(Div, a, b, "div")


def _divide_into(self, other):
    """``other / self`` for a number ``other``, as PyTorch computes it:
    ``self.reciprocal() * other`` (its values and its graph, MulBackward0 over
    ReciprocalBackward0)."""
    return mul(reciprocal(self), other)


bind_method("__rtruediv__", binary_operator(_divide_into))


def _check_integer_divisor(xp, a, b) -> None:
    # NumPy quietly gives 0 for integer division by zero; PyTorch raises (a float operand
    # makes the result float: no check)
    if (a if isinstance(a, xp.ndarray) else b).dtype.kind in "fV":
        return
    if getattr(b, "dtype", None) is not None and b.dtype.kind in "iub" and bool(xp.any(b == 0)):
        raise RuntimeError("ZeroDivisionError: integer division by zero")
    if isinstance(b, int) and b == 0:
        raise RuntimeError("ZeroDivisionError: integer division by zero")


class RoundedDivide(Function):
    """``div`` with rounding_mode 'trunc' or 'floor'. The quotient is piecewise constant:
    its gradient is zero (PyTorch's convention), not an error."""

    array_backward = True
    node_name = "DivBackward2"

    @staticmethod
    def forward(ctx, a, b, mode):
        xp = ctx.xp
        ctx.shapes = (np.shape(a), np.shape(b))
        floating = (a if isinstance(a, xp.ndarray) else b).dtype.kind in "fV"
        _check_integer_divisor(xp, a, b)
        if mode == "floor":
            return xp.floor_divide(a, b)
        if floating:
            return xp.trunc(a / b)
        q = xp.floor_divide(a, b)
        return q + ((q < 0) & (q * b != a))  # floor -> trunc where the quotient was inexact

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        need_a, need_b = ctx.needs_input_grad[:2]
        zeros = [m.zeros(shape, grad) if need else None
                 for shape, need in zip(ctx.shapes, (need_a, need_b))]
        return zeros[0], zeros[1], None


class FloorDivide(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, a, b):
        _check_integer_divisor(ctx.xp, a, b)
        return ctx.xp.floor_divide(a, b)


@register_op(operators=("__floordiv__",), reflected=("__rfloordiv__",),
             inplace=("floor_divide_", "__ifloordiv__"), methods=("floor_divide",),
             samples=_samples.binary(other_low=0.5, other_high=2.0),
             differentiable=False)
def floor_divide(input, other):
    """``floor(input / other)`` (Python's ``//``); not differentiable."""
    _refuse_bools(input, other, "div_floor")
    return _binary(FloorDivide, input, other, "floor_divide")




class Remainder(Function):
    array_backward = True
    node_name = "RemainderBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if isinstance(a, ctx.xp.ndarray) else None,
                              b if isinstance(b, ctx.xp.ndarray) else None)
        ctx.scalars = (a, b)
        ctx.shapes = (np.shape(a), np.shape(b))
        _check_integer_divisor(ctx.xp, a, b)
        return ctx.xp.remainder(a, b)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        grad_b = None
        if need_b:
            numerator = a if a is not None else ctx.scalars[0]
            grad_b = m.sum_to_shape(-grad * m.floor_divide(numerator, b), ctx.shapes[1])
        return (m.sum_to_shape(grad, ctx.shapes[0]) if need_a else None), grad_b


@register_op(operators=("__mod__",), reflected=("__rmod__",), inplace=("remainder_", "__imod__"),
             methods=("remainder",), samples=_samples.binary(low=0.3, high=3.0, other_low=0.7,
                                                             other_high=1.3, scalars=(1.7,)),
             gradgrad=True)
def remainder(input, other):
    """Python's ``%``: the result has the sign of ``other``."""
    _refuse_bools(input, other, "remainder")
    return _binary(Remainder, input, other, "remainder")


def _integer_kind(value) -> bool:
    kind = getattr(value, "dtype", None)
    return type(value) is int if kind is None else kind.kind in "iu"


def _integer_pow(xp, a, b):
    """Integer ``a ** b`` where ``b`` may hold negative exponents (NumPy refuses them):
    as in PyTorch, 1 for base 1, +-1 for base -1 (by the exponent's parity), else 0."""
    b_arr = xp.asarray(b)
    if not (b_arr < 0).any():
        return a ** b
    dtype = (a if hasattr(a, "dtype") else b_arr).dtype
    negative = b_arr < 0
    out = xp.asarray(a ** xp.where(negative, 0, b_arr).astype(b_arr.dtype, copy=False))
    a_arr = xp.asarray(a)
    small = xp.where(a_arr == 1, 1, xp.where(a_arr == -1, xp.where(b_arr % 2 == 0, 1, -1), 0))
    return xp.where(negative, small, out).astype(dtype, copy=False)


class Pow(Function):
    array_backward = True
    node_name = "PowBackward0"

    @staticmethod
    def forward(ctx, a, b):
        if type(b) is float:
            out = a ** number_array(b, a)
        elif type(b) is int and b >= 0 or not (_integer_kind(a) and _integer_kind(b)):
            out = a ** b
        else:  # integers to integer powers, some of them negative
            out = _integer_pow(ctx.xp, a, b)
        if not ctx._recording:
            return out
        ndarray = ctx.xp.ndarray
        if (type(b) is int or type(b) is float) and type(a) is ndarray:
            # a tensor to a Python power, the common case: the base is all backward needs
            ctx._to_save = (a, None, None)
            ctx.scalars = (None, b)
            ctx.shapes = _NUMBER_SHAPES
            return out
        a_arr, b_arr = isinstance(a, ndarray), isinstance(b, ndarray)
        if b_arr:  # (tensor ** number keeps the class's name, PowBackward0)
            ctx.node_name = "PowBackward1" if a_arr else "PowBackward2"
        # the output is needed only for the exponent's gradient
        ctx.save_for_backward(a if a_arr else None, b if b_arr else None,
                              out if b_arr else None)
        ctx.scalars = (None if a_arr else a, None if b_arr else b)
        ctx.shapes = (a.shape if a_arr else (), b.shape if b_arr else ())
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        a, b, out = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if need_a:
            if b is None:
                exponent = ctx.scalars[1]
                if exponent == 0:
                    grad_a = grad * 0
                elif exponent == 2:  # the same values (doubling is exact), two ops fewer
                    grad_a = grad * (a + a)
                else:
                    grad_a = grad * exponent * a ** (exponent - 1)
            else:
                # where b == 0 the derivative is 0 even at a == 0 (PyTorch's convention)
                grad_a = m.where(b == 0, 0.0, grad * b * a ** (b - 1))
            grad_a = _to_shape(m, grad_a, ctx.shapes[0])
        if need_b:
            base = a if a is not None else ctx.scalars[0]
            if a is None and base == 0:  # 0 ** b: flat for b >= 0 (PyTorch's convention)
                grad_b = grad * m.where(b >= 0, 0.0, float("-inf"))  # out * log(0) for b < 0
            elif a is None:
                grad_b = grad * out * (float(np.log(base)) if base > 0 else float("nan"))
            else:
                grad_b = m.where((a == 0) & (b >= 0), 0.0, grad * out * m.log(a))
            grad_b = m.sum_to_shape(grad_b, ctx.shapes[1])
        return grad_a, grad_b


def _pow_samples(make):
    return [
        Sample((make((3, 4), low=0.5, high=2.0), make((3, 4), low=-2.0, high=2.0)), name="t^t"),
        Sample((make((2, 3), low=0.5, high=2.0), make((3,), low=-1.0, high=2.0)),
               name="broadcast"),
        Sample((make((3, 4)), 2), name="square"),
        Sample((make((3, 4)), 3), name="cube"),
        Sample((make((3,), low=0.5, high=2.0), -1.5), name="negative power"),
        Sample((make((3,), low=0.5, high=2.0), 0.5), name="sqrt"),
        Sample((2.0, make((3, 4))), name="scalar base"),
        Sample((0.0, make((3, 4), low=0.5, high=2.0)), name="zero base"),
        Sample((make((3,), low=0.5, high=2.0), 0), name="power 0"),
    ]


@register_op(operators=("__pow__",), reflected=("__rpow__",), inplace=("pow_", "__ipow__"),
             methods=("pow",), samples=_pow_samples, fast=("binary", Pow, operator.pow))
def pow(input, exponent):
    """``input ** exponent``; either may be a Python number."""
    if isinstance(input, Tensor) and input.dtype is dtypes.bool and type(exponent) is bool:
        # a weak bool exponent keeps the bool dtype: x ** True is x, x ** False is True
        data = input._data.copy() if exponent else backend.xp_of(input._data).ones_like(
            input._data)
        return Tensor._make(data, input._device, False)
    _refuse_bools(input, exponent, "pow")
    if (isinstance(input, Tensor) and type(exponent) is int and exponent < 0
            and input._data.dtype.kind in "iub"):
        # (checked before promotion: a uint8 tensor would take -1 as 255)
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if isinstance(input, Tensor):
        dtypes.checked_number(exponent, input._data.dtype)
    a, b = binary_operands(input, exponent, "pow")
    if isinstance(a, Tensor) and isinstance(b, int) and a._data.dtype.kind in "iu" and b < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return _binary(Pow, a, b, "pow")


@register_op(inplace=("square_",), methods=("square",), samples=_samples.unary())
def square(input):
    """``input * input`` (as ``input ** 2``; bool gives int64, as in PyTorch)."""
    if isinstance(input, Tensor) and input.dtype is dtypes.bool:
        input = input.to(dtypes.int64)
    return pow(input, 2)


# ----------------------------------------------------------------------------- xlogy
class Xlogy(Function):
    array_backward = True
    node_name = "XlogyBackward0"

    @staticmethod
    def forward(ctx, a, b):
        xp = ctx.xp
        _save_operands(ctx, a, b)
        # 0 * log(y) is 0 (even for y = 0), but NaN stays NaN
        zero = (a == 0) & ~xp.isnan(b)
        out = xp.where(zero, 0, a * xp.log(xp.where(zero, 1, b)))
        dtype = (a if isinstance(a, xp.ndarray) else b).dtype  # operands are promoted
        return out.astype(dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        a, b = ctx.saved_tensors
        x = a if a is not None else ctx.scalars[0]
        y = b if b is not None else ctx.scalars[1]
        need_a, need_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if need_a:
            # d/dx = log(y); 0 where x == 0 and y <= 0 (PyTorch's convention)
            grad_a = m.xlogy(grad, y)
            if not isinstance(y, (int, float)):
                grad_a = m.where((x == 0) & (y <= 0), 0.0, grad_a)
            elif y <= 0:
                grad_a = m.where(x == 0, 0.0, grad_a)
            grad_a = _to_shape(m, grad_a, ctx.shapes[0])
        if need_b:
            grad_b = _to_shape(m, grad * x / y, ctx.shapes[1])
        return grad_a, grad_b


def _xlogy_samples(make):
    x = make((3, 4))
    x._data[0, :2] = 0.0
    y = make((3, 4), low=0.2, high=2.0)
    return [Sample((x, y), name="zeros in x"),
            Sample((make((2, 3)), make((3,), low=0.2, high=2.0)), name="broadcast"),
            Sample((make((4,)), 1.5), name="scalar y"),
            Sample((2.0, make((4,), low=0.2, high=2.0)), name="scalar x")]


@register_op(inplace=("xlogy_",), methods=("xlogy",), exported_in=("special",),
             samples=_xlogy_samples)
def xlogy(input, other):
    """``input * log(other)``, and 0 where input is 0 (unless other is NaN): the entropy
    term ``p log p`` without NaN at p = 0."""
    a, b = float_operands(input, other, "xlogy")
    return _binary(Xlogy, a, b, "xlogy")


# ----------------------------------------------------------------------------- lerp
class Lerp(Function):
    array_backward = True
    node_name = "LerpBackward0"

    @staticmethod
    def forward(ctx, start, end, weight):
        xp = ctx.xp
        weight_array = isinstance(weight, xp.ndarray)
        ctx.save_for_backward(start, end, weight if weight_array else None)
        ctx.weight = None if weight_array else weight
        ctx.shapes = (start.shape, end.shape, np.shape(weight))
        if not weight_array:
            ctx.node_name = "LerpBackward0"
        else:
            ctx.node_name = "LerpBackward1"
        difference = end - start
        # from the nearer end: exact at weight 0 and 1
        if not weight_array:
            out = (start + weight * difference if -0.5 < weight < 0.5
                   else end - difference * (1 - weight))
        else:
            out = xp.where(xp.abs(weight) < 0.5, start + weight * difference,
                           end - difference * (1 - weight))
        return out.astype(start.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        start, end, weight_t = ctx.saved_tensors
        weight = weight_t if weight_t is not None else ctx.weight
        need_start, need_end, need_weight = ctx.needs_input_grad
        return (m.sum_to_shape(grad * (1 - weight), ctx.shapes[0]) if need_start else None,
                m.sum_to_shape(grad * weight, ctx.shapes[1]) if need_end else None,
                m.sum_to_shape(grad * (end - start), ctx.shapes[2]) if need_weight else None)


def _lerp_samples(make):
    return [Sample((make((3, 4)), make((3, 4)), 0.3), name="scalar weight"),
            Sample((make((3, 4)), make((4,)), 0.8), name="scalar weight, broadcast"),
            Sample((make((2, 3)), make((2, 3)), make((2, 3), low=-0.5, high=1.5)),
                   name="tensor weight"),
            Sample((make((3, 1)), make((1, 4)), make((3, 4), low=0.0, high=1.0)),
                   name="tensor weight, broadcast")]


@register_op(inplace=("lerp_",), methods=("lerp",), samples=_lerp_samples)
def lerp(input, end, weight):
    """``input + weight * (end - input)``: linear interpolation; weight is a number or a
    tensor (broadcast). input, end (and a tensor weight) must share one float dtype."""
    if not isinstance(input, Tensor) or not isinstance(end, Tensor):
        raise TypeError(f"lerp(): arguments 'input' and 'end' must be Tensors, got "
                        f"{type(input).__name__} and {type(end).__name__}")
    if input._data.dtype.kind not in "fV":
        raise dtype_not_implemented("lerp", input.dtype, "lerp needs floating-point tensors: "
                                    "convert with .float() first")
    for name, other in (("end", end), ("weight", weight)):
        if isinstance(other, Tensor) and other.dtype is not input.dtype:
            raise RuntimeError(f"lerp(): expected dtype {input.dtype.name} for `{name}` but "
                               f"got dtype {other.dtype.name}")
    if not isinstance(weight, Tensor):
        if not isinstance(weight, (int, float, np.generic)) or isinstance(weight, bool):
            raise TypeError(f"lerp(): argument 'weight' must be a number or a Tensor, not "
                            f"{type(weight).__name__}")
        weight = float(weight)
    try:
        return Lerp.apply(input, end, weight)
    except ValueError:
        raise broadcast_error("lerp", input.shape, end.shape, shape_of(weight)) from None


# ----------------------------------------------------------------------------- more binary
class Fmod(Function):
    array_backward = True
    node_name = "FmodBackward1"

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b)
        if not isinstance(b, ctx.xp.ndarray):
            ctx.node_name = "FmodBackward0"
        _check_integer_divisor(ctx.xp, a, b)
        return ctx.xp.fmod(a, b)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        grad_b = None
        if need_b:
            numerator = a if a is not None else ctx.scalars[0]
            grad_b = _to_shape(m, -grad * m.div(numerator, b, rounding_mode="trunc"),
                               ctx.shapes[1])
        return (_to_shape(m, grad, ctx.shapes[0]) if need_a else None), grad_b


@register_op(inplace=("fmod_",), methods=("fmod",),
             samples=_samples.binary(low=0.3, high=3.0, other_low=0.7,
                                                        other_high=1.3, scalars=(1.7, -0.8)))
def fmod(input, other):
    """C's ``fmod``: ``input - trunc(input / other) * other``; the result has the sign of
    input (``remainder`` takes the sign of other)."""
    _refuse_bools(input, other, "fmod")
    return _binary(Fmod, input, other, "fmod")


class Atan2(Function):
    array_backward = True
    node_name = "Atan2Backward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        ctx.shapes = (a.shape, b.shape)
        return ctx.xp.arctan2(a, b)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        # 0 where r^2 is 0 (the origin, or underflow), as in PyTorch: grad / inf
        squared = a * a + b * b
        scaled = grad / m.where(squared == 0, float("inf"), squared)
        return (m.sum_to_shape(scaled * b, ctx.shapes[0]) if need_a else None,
                m.sum_to_shape(-scaled * a, ctx.shapes[1]) if need_b else None)


@register_op(inplace=("atan2_", "arctan2_"), methods=("atan2", "arctan2"), also=("arctan2",),
             samples=_samples.binary(low=0.3, high=2.0, scalars=()))
def atan2(input, other):
    """The angle of the point (other, input): ``atan(input / other)`` in the right
    quadrant, in [-pi, pi]. d/dinput = other / r^2, d/dother = -input / r^2."""
    a, b = _tensor_operands(input, other, "atan2", to_float=True)
    return _binary(Atan2, a, b, "atan2")


class Copysign(Function):
    """``|a|`` with the sign of ``b`` (a number or a Tensor); only ``a`` gets a gradient."""

    array_backward = True
    node_name = "CopysignBackward0"

    @staticmethod
    def forward(ctx, a, b):
        out = ctx.xp.copysign(a, b).astype(a.dtype, copy=False)
        if not hasattr(b, "shape"):
            ctx.node_name = "CopysignBackward1"
        ctx.save_for_backward(a, out)
        ctx.shapes = (a.shape, np.shape(b))
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        a, out = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        # d/da is sign(a) * sign(b): out / a, and 0 at a == 0 (PyTorch's convention)
        ratio = m.where(a == 0, 0.0, out / m.where(a == 0, 1.0, a))
        return (m.sum_to_shape(grad * ratio, ctx.shapes[0]) if need_a else None,
                m.sum_to_shape(grad * 0.0, ctx.shapes[1]) if need_b else None)


@register_op(methods=("copysign",), inplace=("copysign_",), samples=lambda make: [
    Sample((make((3, 4)), make((3, 4))), name="tensors"),
    Sample((make((2, 3)), make((3,))), name="broadcast"),
    Sample((make((3,)), -1.0), name="number")])
def copysign(input, other):
    """The magnitude of ``input`` with the sign of ``other`` (elementwise, broadcast; -0.0
    counts as negative). Integers give the default float dtype.

    >>> ember.copysign(ember.tensor([1.5, -2.0]), -1.0)
    tensor([-1.5000, -2.0000])
    """
    if isinstance(other, (int, float)):  # (a bool too: True is +1, False +0)
        ensure_tensor(input, "copysign")
        a = input if input._data.dtype.kind in "fV" else input.to(dtypes.get_default_dtype())
        return Copysign.apply(a, float(other))
    a, b = _tensor_operands(input, other, "copysign", to_float=True)
    return _binary(Copysign, a, b, "copysign")


class Hypot(Function):
    array_backward = True
    node_name = "HypotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        out = ctx.xp.hypot(a, b)
        ctx.save_for_backward(a, b, out)
        ctx.shapes = (a.shape, b.shape)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        a, b, out = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        # grad * a first: 1 / out overflows at a subnormal out, and inf * 0 is nan
        return (m.sum_to_shape(grad * a / out, ctx.shapes[0]) if need_a else None,
                m.sum_to_shape(grad * b / out, ctx.shapes[1]) if need_b else None)


@register_op(inplace=("hypot_",), methods=("hypot",),
             samples=_samples.binary(low=0.3, high=2.0, scalars=()))
def hypot(input, other):
    """``sqrt(input^2 + other^2)`` without overflow or underflow in the squares."""
    a, b = _tensor_operands(input, other, "hypot", float_only=True)
    return _binary(Hypot, a, b, "hypot")


class LogAddExp(Function):
    array_backward = True
    node_name = "LogaddexpBackward0"

    @staticmethod
    def forward(ctx, a, b, base2):
        ctx.save_for_backward(a, b)
        ctx.shapes = (a.shape, b.shape)
        ctx.base2 = base2
        if base2:
            ctx.node_name = "Logaddexp2Backward0"
            return ctx.xp.logaddexp2(a, b)
        return ctx.xp.logaddexp(a, b)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad[:2]
        # d/da m.log(e^a + e^b) = m.sigmoid(a - b) (base 2: m.sigmoid((a - b) ln 2)): no overflow
        difference = a - b if not ctx.base2 else (a - b) * _LN2
        return (m.sum_to_shape(grad * m.sigmoid(difference), ctx.shapes[0]) if need_a else None,
                m.sum_to_shape(grad * m.sigmoid(-difference), ctx.shapes[1]) if need_b else None,
                None)


@register_op(methods=("logaddexp",), samples=_samples.binary(scalars=()))
def logaddexp(input, other):
    """``log(exp(input) + exp(other))`` without overflow."""
    a, b = _tensor_operands(input, other, "logaddexp", float_only=True)
    try:
        return LogAddExp.apply(a, b, False)
    except ValueError:
        raise broadcast_error("logaddexp", a.shape, b.shape) from None


@register_op(methods=("logaddexp2",), samples=_samples.binary(scalars=()))
def logaddexp2(input, other):
    """``log2(2^input + 2^other)`` without overflow."""
    a, b = _tensor_operands(input, other, "logaddexp2", float_only=True)
    try:
        return LogAddExp.apply(a, b, True)
    except ValueError:
        raise broadcast_error("logaddexp2", a.shape, b.shape) from None


# ----------------------------------------------------------------------------- gcd, lcm
def _gcd_like(name: str, ufunc: str, doc: str):
    class Kernel(Function):
        differentiable = False

        @staticmethod
        def forward(ctx, a, b):
            return getattr(ctx.xp, ufunc)(a, b)

    Kernel.__name__ = Kernel.__qualname__ = name.capitalize()

    def function(input, other):
        _two_tensors(input, other, name)
        for value in (input, other):
            if value._data.dtype.kind not in "iu":
                raise dtype_not_implemented(name, value.dtype, f"{name} takes integer tensors")
        return _binary(Kernel, input, other, name)

    function.__name__ = name
    function.__doc__ = doc
    return function


def _gcd_samples(make):
    ember_int32 = dtypes.int32
    return [Sample((make.int((3, 4), -12, 13), make.int((3, 4), -12, 13)), name="same shape"),
            Sample((make.int((2, 3), 0, 20), make.int((3,), 1, 20)), name="broadcast"),
            Sample((make.int((4,), -9, 9), make.int((), 6, 7, dtype=ember_int32)),
                   name="0-d int32 other")]


gcd = register_op(methods=("gcd",), inplace=("gcd_",), samples=_gcd_samples,
                  differentiable=False)(_gcd_like(
    "gcd", "gcd", "Elementwise greatest common divisor of integers (non-negative; "
    "gcd(0, 0) = 0)."))
lcm = register_op(methods=("lcm",), inplace=("lcm_",), samples=_gcd_samples,
                  differentiable=False)(_gcd_like(
    "lcm", "lcm", "Elementwise least common multiple of integers (non-negative; 0 when "
    "either is 0)."))



# ----------------------------------------------------------------------------- ldexp, rsub, fill
@register_op(methods=("ldexp",), inplace=("ldexp_",), samples=lambda make: [
    Sample((make((3, 4)), make.int((3, 4), 0, 4)), name="int exponents"),
    Sample((make((2, 3)), make((3,), low=-2.0, high=2.0)), name="float exponents")])
def ldexp(input, other):
    """``input * 2 ** other``: integers give the default float dtype.

    >>> ember.ldexp(ember.tensor([1.5, -1.0]), ember.tensor([2, 3]))
    tensor([ 6., -8.])
    """
    for name, value in (("input", input), ("other", other)):
        ensure_tensor(value, "ldexp", name)
    if other._data.dtype.kind == "b":
        if input._data.dtype.kind in "fV":  # PyTorch's float kernel lacks bool exponents
            raise dtype_not_implemented("ldexp_cpu_exp", other.dtype, "ldexp takes integer or "
                                        "floating-point exponents: convert with .int() first")
        other = other.to(dtypes.int64)
    if other._data.dtype.kind in "fV":  # float exponents: the usual promotion
        return mul(input, pow(2.0, other))
    base = input if input._data.dtype.kind in "fV" else \
        input.to(dtypes.get_default_dtype())
    other = other.to(base.dtype)  # integer exponents: the power in base's dtype
    return mul(base, pow(2.0, other))


@register_op(methods=("rsub",), samples=lambda make: [
    Sample((make((3, 4)), make((3, 4))), name="tensors"),
    Sample((make((2, 3)), make((3,))), {"alpha": 2.5}, name="broadcast alpha"),
    Sample((make((3,)), 2.0), {"alpha": 3}, name="number")])
def rsub(input, other, *, alpha=1):
    """``other - alpha * input``: subtraction with the operands swapped.

    >>> ember.rsub(ember.tensor([1.0, 2.0]), 10.0, alpha=2)
    tensor([8., 6.])
    """
    ensure_tensor(input, "rsub")
    return sub(other, input, alpha=alpha)


class Fill(Function):
    """Every element set to a value; the input gets a zero gradient, a 0-d tensor value the
    sum of the upstream gradient."""

    array_backward = True
    node_name = "FillBackward0"

    @staticmethod
    def forward(ctx, x, value):
        if hasattr(value, "shape"):
            ctx.node_name = "FillBackward1"
        return ctx.xp.full_like(x, value)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        need_x, need_value = ctx.needs_input_grad
        return (m.zeros_like(grad) if need_x else None,
                m.sum(grad) if need_value else None)


@register_op(samples=lambda make: [
    Sample((make((3, 4)), 2.5), name="number"),
    Sample((make((2, 3)), make(())), name="0-d tensor value")])
def fill(input, value):
    """A new tensor shaped like ``input`` with every element ``value`` (a number or a 0-d
    tensor, whose gradient is the sum of the upstream gradient).

    >>> ember.fill(ember.zeros(3), 2.0)
    tensor([2., 2., 2.])
    """
    ensure_tensor(input, "fill")
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor "
                               f"with {value.dim()} dimensions.")
        if value.device != input.device and value.device.type != "cpu":
            raise RuntimeError(f"fill(): value is on {value.device}, input on {input.device}")
        return Fill.apply(input, value.to(input.dtype, device=input.device))
    return Fill.apply(input, scalar_value(value, "fill", "value"))


class Nextafter(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, a, b):
        return ctx.xp.nextafter(a, b)


@register_op(methods=("nextafter",), inplace=("nextafter_",), differentiable=False,
             samples=lambda make: [
    Sample((make((3, 4)), make((3, 4))), name="tensors"),
    Sample((make((2, 3)), make((3,))), name="broadcast")])
def nextafter(input, other):
    """The next floating-point value after ``input`` towards ``other``, elementwise.

    >>> ember.nextafter(ember.tensor([1.0]), ember.tensor([2.0])) - 1
    tensor([1.1921e-07])
    """
    a, b = _tensor_pair(input, other, "nextafter")
    for value in (a, b):
        if value._data.dtype.kind not in "fV":
            raise NotImplementedError(f'"nextafter" not implemented for '
                                      f"'{value.dtype.scalar_name}'")
    return _binary(Nextafter, a, b, "nextafter")


def ldexp_(input, other):
    """``input.ldexp_(other)``: ``input *= 2 ** other`` in place."""
    ensure_tensor(input, "ldexp_")
    return input.ldexp_(other)


NAMESPACES["ember"]["ldexp_"] = ldexp_
