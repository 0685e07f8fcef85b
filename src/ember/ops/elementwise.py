"""Elementwise ops: arithmetic, unary math, activations, comparisons, where.

Each op is one Function class (forward on arrays via ``ctx.xp``, backward with ember
ops) and one registered public function that handles argument conversion and dtype
promotion. Broadcasting is NumPy's; ``sum_to_shape`` folds gradients back.
"""
from __future__ import annotations

import math

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from ..tensor import Tensor, _F, _inplace
from . import _samples
from ._util import _WEAK, binary_operands, broadcast_error, float_operand, shape_of, sum_to_shape
from .registry import Sample, bind_method, register_op


def _binary(cls, a, b, op: str):
    """Promote two operands and apply a broadcasting binary op, turning NumPy's shape
    error into PyTorch's."""
    if not (type(b) in _WEAK and isinstance(a, Tensor) and a._data.dtype.kind == "f"):
        a, b = binary_operands(a, b, op)  # (a float tensor with a number needs nothing)
    try:
        return cls.apply(a, b)
    except ValueError:
        sa, sb = shape_of(a), shape_of(b)
        try:
            np.broadcast_shapes(sa, sb)
        except ValueError:
            raise broadcast_error(op, sa, sb) from None
        raise


# ----------------------------------------------------------------------------- arithmetic
def _save_operands(ctx, a, b) -> None:
    """Save array operands as tensors and Python-scalar operands as plain numbers."""
    if not ctx._recording:
        return
    ndarray = ctx.xp.ndarray
    a_array, b_array = isinstance(a, ndarray), isinstance(b, ndarray)
    ctx.save_for_backward(a if a_array else None, b if b_array else None)
    ctx.scalars = (None if a_array else a, None if b_array else b)
    ctx.shapes = (a.shape if a_array else (), b.shape if b_array else ())


class Add(Function):
    node_name = "AddBackward0"

    @staticmethod
    def forward(ctx, a, b):
        if ctx._recording:
            ctx.shapes = (getattr(a, "shape", ()), getattr(b, "shape", ()))
        return a + b

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad
        return (sum_to_shape(grad, ctx.shapes[0]) if need_a else None,
                sum_to_shape(grad, ctx.shapes[1]) if need_b else None)


@register_op(methods=("add",), samples=_samples.binary())
def add(input, other, *, alpha=1):
    """``input + alpha * other``, broadcasting, with PyTorch's type promotion."""
    if alpha != 1:
        other = mul(other, alpha)
    return _binary(Add, input, other, "add")


class Sub(Function):
    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, b):
        if ctx._recording:
            ctx.shapes = (getattr(a, "shape", ()), getattr(b, "shape", ()))
        return a - b

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad
        return (sum_to_shape(grad, ctx.shapes[0]) if need_a else None,
                sum_to_shape(-grad, ctx.shapes[1]) if need_b else None)


@register_op(methods=("sub",), also=("subtract",), samples=_samples.binary())
def sub(input, other, *, alpha=1):
    """``input - alpha * other``."""
    a, b = binary_operands(input, other, "sub")
    if a is not None and isinstance(a, Tensor) and a.dtype is dtypes.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if alpha != 1:
        b = mul(b, alpha)
    return _binary(Sub, a, b, "sub")


class Mul(Function):
    node_name = "MulBackward0"

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        other_a = b if b is not None else ctx.scalars[1]
        other_b = a if a is not None else ctx.scalars[0]
        return (sum_to_shape(grad * other_a, ctx.shapes[0]) if need_a else None,
                sum_to_shape(grad * other_b, ctx.shapes[1]) if need_b else None)


@register_op(methods=("mul",), also=("multiply",), samples=_samples.binary())
def mul(input, other):
    """``input * other`` elementwise."""
    return _binary(Mul, input, other, "mul")


class Div(Function):
    node_name = "DivBackward0"

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b)
        return a / b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        denominator = b if b is not None else ctx.scalars[1]
        grad_a = sum_to_shape(grad / denominator, ctx.shapes[0]) if need_a else None
        grad_b = None
        if need_b:
            numerator = a if a is not None else ctx.scalars[0]
            grad_b = sum_to_shape(-grad * numerator / (b * b), ctx.shapes[1])
        return grad_a, grad_b


def _div_samples(make):
    return _samples.binary(other_low=0.5, other_high=2.0)(make) + [
        Sample((make((3, 4), low=-4, high=4), make((4,), low=0.5, high=2.0)),
               {"rounding_mode": "floor"}, name="floor"),
        Sample((make((3, 4), low=-4, high=4), -1.5), {"rounding_mode": "trunc"}, name="trunc")]


@register_op(methods=("div", "true_divide"), also=("divide", "true_divide"),
             samples=_div_samples)
def div(input, other, *, rounding_mode=None):
    """``input / other``. Integers divide to the default float dtype; rounding_mode
    'trunc' (toward zero) or 'floor' (toward -inf) rounds the quotient, keeps integer
    dtypes, and has a zero gradient."""
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or "
                             f"'floor' but found '{rounding_mode}'")
        a, b = binary_operands(input, other, "div")
        try:
            return RoundedDivide.apply(a, b, rounding_mode)
        except ValueError:
            raise broadcast_error("div", shape_of(a), shape_of(b)) from None
    a, b = binary_operands(input, other, "div")
    if (a._data if isinstance(a, Tensor) else b._data).dtype.kind != "f":
        default = dtypes.get_default_dtype()
        a = a.to(default) if isinstance(a, Tensor) else float(a)
        b = b.to(default) if isinstance(b, Tensor) else float(b)
    return _binary(Div, a, b, "div")


def _check_integer_divisor(xp, b) -> None:
    # NumPy quietly gives 0 for integer division by zero; PyTorch raises
    if getattr(b, "dtype", None) is not None and b.dtype.kind in "iub" and bool(xp.any(b == 0)):
        raise RuntimeError("ZeroDivisionError: integer division by zero")
    if isinstance(b, int) and b == 0:
        raise RuntimeError("ZeroDivisionError: integer division by zero")


class RoundedDivide(Function):
    """``div`` with rounding_mode 'trunc' or 'floor'. The quotient is piecewise constant:
    its gradient is zero (PyTorch's convention), not an error."""

    node_name = "DivBackward2"

    @staticmethod
    def forward(ctx, a, b, mode):
        xp = ctx.xp
        ctx.shapes = (np.shape(a), np.shape(b))
        floating = (a if isinstance(a, xp.ndarray) else b).dtype.kind == "f"
        if not floating:
            _check_integer_divisor(xp, b)
        if mode == "floor":
            return xp.floor_divide(a, b)
        if floating:
            return xp.trunc(a / b)
        q = xp.floor_divide(a, b)
        return q + ((q < 0) & (q * b != a))  # floor -> trunc where the quotient was inexact

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad[:2]
        zeros = [Tensor._make(ctx.xp.zeros(shape, grad._data.dtype), grad._device, False)
                 if need else None for shape, need in zip(ctx.shapes, (need_a, need_b))]
        return zeros[0], zeros[1], None


class FloorDivide(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, a, b):
        if not (a if isinstance(a, ctx.xp.ndarray) else b).dtype.kind == "f":
            _check_integer_divisor(ctx.xp, b)
        return ctx.xp.floor_divide(a, b)


@register_op(methods=("floor_divide",), samples=_samples.binary(other_low=0.5, other_high=2.0),
             differentiable=False)
def floor_divide(input, other):
    """``floor(input / other)`` (Python's ``//``); not differentiable."""
    return _binary(FloorDivide, input, other, "floor_divide")




class Remainder(Function):
    node_name = "RemainderBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if isinstance(a, ctx.xp.ndarray) else None,
                              b if isinstance(b, ctx.xp.ndarray) else None)
        ctx.scalars = (a, b)
        ctx.shapes = (np.shape(a), np.shape(b))
        return ctx.xp.remainder(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        grad_b = None
        if need_b:
            numerator = a if a is not None else ctx.scalars[0]
            grad_b = sum_to_shape(-grad * floor_divide(numerator, b), ctx.shapes[1])
        return (sum_to_shape(grad, ctx.shapes[0]) if need_a else None), grad_b


@register_op(methods=("remainder",), samples=_samples.binary(low=0.3, high=3.0, other_low=0.7,
                                                             other_high=1.3, scalars=(1.7,)),
             gradgrad=True)
def remainder(input, other):
    """Python's ``%``: the result has the sign of ``other``."""
    return _binary(Remainder, input, other, "remainder")


class Pow(Function):
    node_name = "PowBackward0"

    @staticmethod
    def forward(ctx, a, b):
        xp = ctx.xp
        a_arr, b_arr = isinstance(a, xp.ndarray), isinstance(b, xp.ndarray)
        if a_arr and not b_arr:
            ctx.node_name = "PowBackward0"
        elif a_arr:
            ctx.node_name = "PowBackward1"
        else:
            ctx.node_name = "PowBackward2"
        out = a ** b
        ctx.save_for_backward(a if a_arr else None, b if b_arr else None, out)
        ctx.scalars = (None if a_arr else a, None if b_arr else b)
        ctx.shapes = (np.shape(a), np.shape(b))
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if need_a:
            if b is None:
                exponent = ctx.scalars[1]
                if exponent == 0:
                    grad_a = grad * 0
                else:
                    grad_a = grad * exponent * a ** (exponent - 1)
            else:
                # where b == 0 the derivative is 0 even at a == 0 (PyTorch's convention)
                grad_a = where(b == 0, 0.0, grad * b * a ** (b - 1))
            grad_a = sum_to_shape(grad_a, ctx.shapes[0])
        if need_b:
            base = a if a is not None else ctx.scalars[0]
            if a is None:
                grad_b = grad * out * (float(np.log(base)) if base > 0 else float("nan"))
            else:
                grad_b = where((a == 0) & (b >= 0), 0.0, grad * out * log(a))
            grad_b = sum_to_shape(grad_b, ctx.shapes[1])
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
    ]


@register_op(methods=("pow",), samples=_pow_samples)
def pow(input, exponent):  # noqa: A001 - PyTorch's name
    """``input ** exponent``; either may be a Python number."""
    a, b = binary_operands(input, exponent, "pow")
    if isinstance(a, Tensor) and isinstance(b, int) and a._data.dtype.kind in "iu" and b < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return _binary(Pow, a, b, "pow")


# ----------------------------------------------------------------------------- unary math
class Neg(Function):
    node_name = "NegBackward0"

    @staticmethod
    def forward(ctx, x):
        if x.dtype == np.bool_:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        return -x

    @staticmethod
    def backward(ctx, grad):
        return -grad


@register_op(methods=("neg", "negative"), also=("negative",), samples=_samples.unary())
def neg(input):
    """``-input``."""
    return Neg.apply(input)


class Abs(Function):
    node_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.abs(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * sign(x)


@register_op(methods=("abs", "absolute"), also=("absolute",), samples=_samples.unary())
def abs(input):  # noqa: A001
    """``|input|``; the gradient at 0 is 0."""
    return Abs.apply(input)


class Sign(Function):
    node_name = "SignBackward0"

    @staticmethod
    def forward(ctx, x):
        return ctx.xp.sign(x) if x.dtype != np.bool_ else x.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


@register_op(methods=("sign",), samples=_samples.unary(), gradgrad=False)
def sign(input):
    """-1, 0 or 1 by the sign of each element; the gradient is zero."""
    return Sign.apply(input)


class Exp(Function):
    node_name = "ExpBackward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.exp(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out


@register_op(methods=("exp",), samples=_samples.unary())
def exp(input):
    """``e ** input``."""
    return Exp.apply(float_operand(input, "exp"))


class Log(Function):
    node_name = "LogBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.log(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / x


@register_op(methods=("log",), samples=_samples.unary(low=0.1, high=3.0))
def log(input):
    """Natural logarithm (NaN below 0, -inf at 0, as in PyTorch)."""
    return Log.apply(float_operand(input, "log"))


class Sqrt(Function):
    node_name = "SqrtBackward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.sqrt(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad / (2 * out)


@register_op(methods=("sqrt",), samples=_samples.unary(low=0.1, high=3.0))
def sqrt(input):
    """Square root."""
    return Sqrt.apply(float_operand(input, "sqrt"))


class Sin(Function):
    node_name = "SinBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.sin(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * cos(x)


@register_op(methods=("sin",), samples=_samples.unary())
def sin(input):
    """Sine (radians)."""
    return Sin.apply(float_operand(input, "sin"))


class Cos(Function):
    node_name = "CosBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.cos(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad * sin(x)


@register_op(methods=("cos",), samples=_samples.unary())
def cos(input):
    """Cosine (radians)."""
    return Cos.apply(float_operand(input, "cos"))


class Tanh(Function):
    node_name = "TanhBackward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.tanh(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return TanhGrad.apply(grad, out)


class TanhGrad(Function):
    """tanh's backward, ``grad * (1 - out^2)``, as one op (one dispatch instead of three);
    differentiable itself, so double backward still works."""

    node_name = "TanhBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(grad, out)
        return grad * (1 - out * out)

    @staticmethod
    def backward(ctx, gg):
        grad, out = ctx.saved_tensors
        need_grad, need_out = ctx.needs_input_grad
        return (TanhGrad.apply(gg, out) if need_grad else None,
                -2 * gg * grad * out if need_out else None)


@register_op(methods=("tanh",), namespace="ember", samples=_samples.unary())
def tanh(input):
    """Hyperbolic tangent."""
    return Tanh.apply(float_operand(input, "tanh"))


class Sigmoid(Function):
    node_name = "SigmoidBackward0"

    @staticmethod
    def forward(ctx, x):
        xp = ctx.xp
        # exp of -|x| never overflows: stable at |x| = 400 and beyond
        e = xp.exp(-xp.abs(x))
        out = xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return SigmoidGrad.apply(grad, out)


class SigmoidGrad(Function):
    """sigmoid's backward, ``grad * out * (1 - out)``, as one differentiable op."""

    node_name = "SigmoidBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(grad, out)
        return grad * out * (1 - out)

    @staticmethod
    def backward(ctx, gg):
        grad, out = ctx.saved_tensors
        need_grad, need_out = ctx.needs_input_grad
        return (SigmoidGrad.apply(gg, out) if need_grad else None,
                gg * grad * (1 - 2 * out) if need_out else None)


@register_op(methods=("sigmoid",), samples=_samples.unary(low=-4.0, high=4.0))
def sigmoid(input):
    """``1 / (1 + exp(-input))``, computed without overflow."""
    return Sigmoid.apply(float_operand(input, "sigmoid"))


class Relu(Function):
    node_name = "ReluBackward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.maximum(x, 0).astype(x.dtype, copy=False)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return ReluGrad.apply(grad, out)


class ReluGrad(Function):
    """relu's backward, ``grad`` where ``out > 0`` else 0, as one op; its derivative
    w.r.t. ``out`` is zero almost everywhere."""

    node_name = "ThresholdBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        mask = out > 0
        ctx.save_for_backward(mask)
        return grad * mask

    @staticmethod
    def backward(ctx, gg):
        (mask,) = ctx.saved_tensors
        return (gg * mask if ctx.needs_input_grad[0] else None), None


@register_op(methods=("relu",), samples=_samples.unary())
def relu(input):
    """``max(input, 0)``; the gradient at 0 is 0."""
    if input.dtype is dtypes.bool:
        raise RuntimeError("relu(): bool tensors are not supported")
    return Relu.apply(input)


class Maximum(Function):
    """Elementwise max/min of two tensors; ties split the gradient in half."""

    node_name = "MaximumBackward0"

    @staticmethod
    def forward(ctx, a, b, largest):
        ctx.save_for_backward(a, b)
        ctx.shapes = (np.shape(a), np.shape(b))
        if not largest:
            ctx.node_name = "MinimumBackward0"
        ctx.largest = largest
        return ctx.xp.maximum(a, b) if largest else ctx.xp.minimum(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad[:2]
        a_wins = (a > b) if ctx.largest else (a < b)
        share = where(a == b, grad / 2, grad)
        return (sum_to_shape(where(a_wins | (a == b), share, 0.0), ctx.shapes[0])
                if need_a else None,
                sum_to_shape(where(a_wins, 0.0, share), ctx.shapes[1]) if need_b else None,
                None)


def _tensor_pair(input, other, op):
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"{op}(): expected two Tensors, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    return binary_operands(input, other, op)


@register_op(methods=("maximum",), samples=_samples.binary(scalars=()))
def maximum(input, other):
    """Elementwise maximum of two tensors (NaN propagates)."""
    a, b = _tensor_pair(input, other, "maximum")
    return Maximum.apply(a, b, True)


@register_op(methods=("minimum",), samples=_samples.binary(scalars=()))
def minimum(input, other):
    """Elementwise minimum of two tensors (NaN propagates)."""
    a, b = _tensor_pair(input, other, "minimum")
    return Maximum.apply(a, b, False)


# ----------------------------------------------------------------------------- comparisons
def _comparison(name: str, ufunc: str, symbol: str):
    class Compare(Function):
        differentiable = False

        @staticmethod
        def forward(ctx, a, b):
            return getattr(ctx.xp, ufunc)(a, b)

    Compare.__name__ = Compare.__qualname__ = name.capitalize()
    Compare.op_name = name

    def compare(input, other):
        return _binary(Compare, input, other, name)

    compare.__name__ = name
    compare.__doc__ = f"``input {symbol} other`` elementwise, as a bool tensor (no gradient)."
    return Compare, compare


def _comparison_samples(make):
    x = make((3, 4))
    return [Sample((x, make((3, 4))), name="tensors"), Sample((x, x.detach().clone()),
                                                              name="equal"),
            Sample((make((2, 3)), 0.5), name="scalar")]


Eq, eq = _comparison("eq", "equal", "==")
Ne, ne = _comparison("ne", "not_equal", "!=")
Lt, lt = _comparison("lt", "less", "<")
Le, le = _comparison("le", "less_equal", "<=")
Gt, gt = _comparison("gt", "greater", ">")
Ge, ge = _comparison("ge", "greater_equal", ">=")
for _fn, _aliases in ((eq, ()), (ne, ("not_equal",)), (lt, ("less",)), (le, ("less_equal",)),
                      (gt, ("greater",)), (ge, ("greater_equal",))):
    register_op(methods=(_fn.__name__,) + _aliases, also=_aliases, samples=_comparison_samples,
                differentiable=False)(_fn)


# ----------------------------------------------------------------------------- selection
class Where(Function):
    node_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, condition, x, y):
        ctx.save_for_backward(condition)
        ctx.shapes = (np.shape(x), np.shape(y))
        return ctx.xp.where(condition, x, y)

    @staticmethod
    def backward(ctx, grad):
        (condition,) = ctx.saved_tensors
        _, need_x, need_y = ctx.needs_input_grad
        zero = 0.0
        return (None,
                sum_to_shape(where(condition, grad, zero), ctx.shapes[0]) if need_x else None,
                sum_to_shape(where(condition, zero, grad), ctx.shapes[1]) if need_y else None)


def _where_samples(make):
    condition = make.bool((3, 4))
    return [Sample((condition, make((3, 4)), make((3, 4))), name="same shape"),
            Sample((make.bool((3, 1)), make((1, 4)), make((3, 4))), name="broadcast"),
            Sample((condition, make((3, 4)), 0.0), name="scalar other")]


@register_op(samples=_where_samples)
def where(condition, input=None, other=None):
    """``input`` where ``condition`` holds, else ``other`` (broadcast). With only a
    condition, the indices of its non-zero elements (as ``nonzero(as_tuple=True)``)."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if not isinstance(condition, Tensor):
        raise TypeError("where(): argument 'condition' must be a Tensor")
    if condition.dtype is not dtypes.bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype.name}")
    x, y = binary_operands(input, other, "where")
    try:
        return Where.apply(condition, x, y)
    except ValueError:
        raise broadcast_error("where", condition.shape, shape_of(x), shape_of(y)) from None


def _tensor_where(self, condition, other):
    return where(condition, self, other)


Tensor.where = _tensor_where


# ----------------------------------------------------------------------------- logic and bits
def _integer_op(name: str, ufunc: str, logical: bool):
    class Bits(Function):
        differentiable = False

        @staticmethod
        def forward(ctx, a, b):
            if not logical and any(getattr(v, "dtype", np.dtype(int)).kind == "f"
                                   for v in (a, b)):
                raise RuntimeError(f'"{name}" is not defined for floating-point tensors '
                                   f"({name} needs integer or bool tensors)")
            if logical:
                return getattr(ctx.xp, ufunc)(ctx.xp.asarray(a) != 0, ctx.xp.asarray(b) != 0)
            return getattr(ctx.xp, ufunc)(a, b)

    Bits.__name__ = Bits.__qualname__ = "".join(p.capitalize() for p in name.split("_"))
    Bits.op_name = name

    def function(input, other):
        a, b = binary_operands(input, other, name) if not logical else (input, other)
        return _binary(Bits, a, b, name)

    function.__name__ = name
    function.__doc__ = (f"Elementwise {'logical' if logical else 'bitwise'} "
                        f"{name.split('_')[1]} (no gradient).")
    return function


def _logic_samples(make):
    return [Sample((make.bool((3, 4)), make.bool((3, 4))), name="bool"),
            Sample((make.int((3, 4), -5, 5), make.int((4,), -5, 5)), name="int")]


for _name, _ufunc, _logical in (("bitwise_and", "bitwise_and", False),
                                ("bitwise_or", "bitwise_or", False),
                                ("bitwise_xor", "bitwise_xor", False),
                                ("logical_and", "logical_and", True),
                                ("logical_or", "logical_or", True),
                                ("logical_xor", "logical_xor", True)):
    register_op(methods=(_name,), samples=_logic_samples, differentiable=False)(
        _integer_op(_name, _ufunc, _logical))


class BitwiseNot(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind == "f":
            raise RuntimeError("bitwise_not is only supported for integer and boolean tensors")
        return ctx.xp.invert(x)


@register_op(methods=("bitwise_not",), differentiable=False,
             samples=lambda make: [Sample((make.bool((3, 4)),)),
                                   Sample((make.int((3, 4), -5, 5),))])
def bitwise_not(input):
    """``~input``: bitwise NOT of integers, logical NOT of bools (no gradient)."""
    return BitwiseNot.apply(input)


class LogicalNot(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        return ctx.xp.logical_not(x)


@register_op(methods=("logical_not",), differentiable=False,
             samples=lambda make: [Sample((make((3, 4)),)), Sample((make.bool((3, 4)),))])
def logical_not(input):
    """True where ``input`` is zero (no gradient)."""
    return LogicalNot.apply(input)


# ----------------------------------------------------------------------------- special kernels
# NumPy has no erf. These are array code over ``xp`` (NumPy or CuPy alike), computed in
# float64 and cast back. W. J. Cody's rational Chebyshev approximations (Math. Comp. 23,
# 1969) give erf/erfc to about 1e-16 relative; erfinv starts from M. Giles' polynomial
# ("Approximating the erfinv function", 2010) and is polished by Newton steps on erf/erfc.
_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
          3.20937758913846947e03, 1.85777706184603153e-1)
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERF_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
          2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
          2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_ERF_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
          1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
          3.43936767414372164e03, 1.23033935480374942e03)
_ERF_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
          1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_ERF_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
          6.05183413124413191e-2, 2.33520497626869185e-3)
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_INV_SQRT_PI = 0.56418958354775628695
_TWO_OVER_SQRT_PI = 1.1283791670955125739
_SQRT_PI_OVER_TWO = 0.88622692545275801365
_LN2 = 0.69314718055994530942
_LN10 = 2.30258509299404568402
_SQRT2 = 1.41421356237309504880
_SQRT_2PI = 2.50662827463100050242
_INV_SQRT_2PI = 0.39894228040143267794


def _erf_small(xp, x):
    """erf(x) = x R(x^2), valid for |x| <= 0.5."""
    z = xp.minimum(xp.abs(x), 0.5) ** 2
    num, den = _ERF_A[4] * z, z
    for a, b in zip(_ERF_A[:3], _ERF_B[:3]):
        num, den = (num + a) * z, (den + b) * z
    return x * (num + _ERF_A[3]) / (den + _ERF_B[3])


def _erfc_ratio(xp, y):
    """R(y) = erfc(y) exp(y^2) for y >= 0.5 (any larger y, inf included)."""
    m = xp.clip(y, 0.5, 4.0)  # 0.5 < y <= 4: a rational function of y
    num, den = _ERF_C[8] * m, m
    for c, d in zip(_ERF_C[:7], _ERF_D[:7]):
        num, den = (num + c) * m, (den + d) * m
    middle = (num + _ERF_C[7]) / (den + _ERF_D[7])
    big = xp.maximum(y, 4.0)  # y > 4: (1/sqrt(pi) - R(1/y^2) / y^2) / y
    t = 1.0 / (big * big)
    num, den = _ERF_P[5] * t, t
    for p, q in zip(_ERF_P[:4], _ERF_Q[:4]):
        num, den = (num + p) * t, (den + q) * t
    large = (_INV_SQRT_PI - t * (num + _ERF_P[4]) / (den + _ERF_Q[4])) / big
    return xp.where(y <= 4.0, middle, large)


def _erf_parts(xp, x):
    """For float64 ``x``: |x| (capped at 30), erf(x) for |x| <= 0.5, erfc(|x|) for
    |x| > 0.5 (each valid only on its own range)."""
    y = xp.minimum(xp.abs(x), 30.0)  # erfc(30) underflows to 0 anyway; keeps inf out
    # exp(-y^2) as exp(-s^2) exp(-(y-s)(y+s)), s = y rounded down to 1/16: keeps the
    # relative accuracy of the tiny factor
    s = xp.trunc(y * 16.0) / 16.0
    tail = xp.exp(-s * s) * xp.exp(-(y - s) * (y + s)) * _erfc_ratio(xp, y)
    return y, _erf_small(xp, x), tail


def erf_array(xp, x):
    """erf of a float64 array (NaN stays NaN, erf(+-inf) = +-1)."""
    y, small, tail = _erf_parts(xp, x)
    return xp.where(y <= 0.5, small, xp.where(x < 0, tail - 1.0, 1.0 - tail))


def erfc_array(xp, x):
    """erfc = 1 - erf of a float64 array, with full relative accuracy in the tail."""
    y, small, tail = _erf_parts(xp, x)
    out = xp.where(y <= 0.5, 1.0 - small, xp.where(x < 0, 2.0 - tail, tail))
    return xp.where(xp.isnan(x), x, out)


def _erfinv_magnitude(xp, a, complement):
    """The x >= 0 with erf(x) = a, for a in [0, 1) given with ``complement = 1 - a``
    (exact, so the far tail keeps its digits)."""
    w = -xp.log(complement * (1.0 + a))
    wc = w - 2.5
    central = _GILES_CENTRAL[0]
    for c in _GILES_CENTRAL[1:]:
        central = central * wc + c
    wt = xp.sqrt(w) - 3.0
    tail_start = _GILES_TAIL[0]
    for c in _GILES_TAIL[1:]:
        tail_start = tail_start * wt + c
    # beyond float64's erfinv range (ndtri of tiny p): erfc(x) ~ exp(-x^2) / (x sqrt(pi))
    far = xp.sqrt(xp.maximum(w - 0.5 * xp.log(xp.maximum(w, 1.0)) - 0.5724, 1.0))
    x = xp.where(w < 5.0, central * a, xp.where(w < 36.0, tail_start * a, far))
    # Newton on erf(x) = a near 0; in the tail on log erfc(x) = log(1 - a), where erfc
    # keeps its relative accuracy and the log scales the steps well
    tail = a > 0.5
    log_target = xp.log(xp.where(tail, complement, 1.0))
    for _ in range(5):
        xt = xp.where(tail, x, 1.0)
        # erfc = exp(-x^2) R(x), d/dx log erfc(x) = -2/sqrt(pi) / R(x): no underflow
        # (R's rational form holds from 0.5 on; below, erfc itself is far from underflow)
        ratio = xp.where(xt >= 0.5, _erfc_ratio(xp, xt), erfc_array(xp, xt) * xp.exp(xt * xt))
        tail_step = (xp.log(ratio) - xt * xt - log_target) * (ratio / -_TWO_OVER_SQRT_PI)
        central_step = (erf_array(xp, x) - a) / (_TWO_OVER_SQRT_PI * xp.exp(-x * x))
        x = x - xp.where(tail, tail_step, central_step)
    return x


def erfinv_array(xp, y):
    """The inverse of erf on a float64 array: +-inf at +-1, NaN outside [-1, 1]."""
    a = xp.abs(y)
    inside = a < 1.0
    a = xp.where(inside, a, 0.0)
    x = _erfinv_magnitude(xp, a, 1.0 - a)
    out = xp.where(inside, x, xp.where(xp.abs(y) == 1.0, np.inf, np.nan))
    return xp.copysign(out, y)


def ndtri_array(xp, p):
    """The standard normal quantile: ``ndtr(x) = p``; -inf at 0, inf at 1, NaN outside."""
    inside = (p > 0.0) & (p < 1.0)
    upper = p > 0.5
    # |2p - 1| = 1 - c with c = 2 min(p, 1 - p), exact in both halves
    c = xp.where(inside, xp.where(upper, 2.0 * (1.0 - p), 2.0 * p), 1.0)
    x = _erfinv_magnitude(xp, 1.0 - c, c) * _SQRT2
    out = xp.where(upper, x, -x)
    edge = xp.where(p == 0.0, -np.inf, xp.where(p == 1.0, np.inf, np.nan))
    return xp.where(inside, out, edge)


def ndtr_array(xp, x):
    """The standard normal CDF ``0.5 erfc(-x / sqrt(2))``."""
    return 0.5 * erfc_array(xp, -x / _SQRT2)


def log_ndtr_array(xp, x):
    """log of the standard normal CDF, finite far into the left tail."""
    right = xp.log1p(-0.5 * erfc_array(xp, xp.maximum(x, -1.0) / _SQRT2))
    z = -xp.minimum(x, -1.0) / _SQRT2  # >= 0.707: erfc(z) = exp(-z^2) R(z)
    left = -_LN2 - z * z + xp.log(_erfc_ratio(xp, z))
    return xp.where(x >= -1.0, right, left)


def _in_float64(xp, kernel, x):
    """Run a float64 kernel on ``x`` and give the result in x's dtype."""
    with np.errstate(all="ignore"):
        return kernel(xp, x.astype(np.float64, copy=False)).astype(x.dtype, copy=False)


# ----------------------------------------------------------------------------- more unary math
def _zeros_like(grad: Tensor) -> Tensor:
    """A constant zero gradient (rounding steps have derivative zero almost everywhere)."""
    return Tensor._make(backend.xp_of(grad._data).zeros_like(grad._data), grad._device, False)


def _float_unary(cls, input, op: str):
    """Integer and bool inputs of float math become the default float dtype (PyTorch)."""
    return cls.apply(float_operand(input, op))


class Reciprocal(Function):
    node_name = "ReciprocalBackward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.reciprocal(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return -grad * out * out


@register_op(methods=("reciprocal",), samples=_samples.unary(low=0.5, high=2.0))
def reciprocal(input):
    """``1 / input`` (integers give the default float dtype)."""
    return _float_unary(Reciprocal, input, "reciprocal")


class Rsqrt(Function):
    node_name = "RsqrtBackward0"

    @staticmethod
    def forward(ctx, x):
        out = (1 / ctx.xp.sqrt(x)).astype(x.dtype, copy=False)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out * out * out * -0.5


@register_op(methods=("rsqrt",), samples=_samples.unary(low=0.5, high=3.0))
def rsqrt(input):
    """``1 / sqrt(input)``."""
    return _float_unary(Rsqrt, input, "rsqrt")


@register_op(methods=("square",), samples=_samples.unary())
def square(input):
    """``input * input`` (as ``input ** 2``; bool gives int64, as in PyTorch)."""
    if isinstance(input, Tensor) and input.dtype is dtypes.bool:
        input = input.to(dtypes.int64)
    return pow(input, 2)


class Exp2(Function):
    node_name = "Exp2Backward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.exp2(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out * _LN2


@register_op(methods=("exp2",), exported_in=("special",), samples=_samples.unary())
def exp2(input):
    """``2 ** input``."""
    return _float_unary(Exp2, input, "exp2")


class Expm1(Function):
    node_name = "Expm1Backward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.expm1(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (out + 1)


@register_op(methods=("expm1",), exported_in=("special",), samples=_samples.unary())
def expm1(input):
    """``exp(input) - 1``, accurate for small inputs (no cancellation)."""
    return _float_unary(Expm1, input, "expm1")


def _log_family(name: str, ufunc: str, scale: float, shift: float):
    """log2 / log10 / log1p: d/dx = 1 / ((x + shift) * scale)."""

    class LogOp(Function):
        node_name = name.capitalize() + "Backward0"

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return getattr(ctx.xp, ufunc)(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            denominator = x if shift == 0 else x + shift
            return grad / (denominator * scale if scale != 1 else denominator)

    LogOp.__name__ = LogOp.__qualname__ = name.capitalize()
    return LogOp


Log2 = _log_family("log2", "log2", _LN2, 0.0)
Log10 = _log_family("log10", "log10", _LN10, 0.0)
Log1p = _log_family("log1p", "log1p", 1.0, 1.0)


@register_op(methods=("log2",), samples=_samples.unary(low=0.1, high=3.0))
def log2(input):
    """Base-2 logarithm."""
    return _float_unary(Log2, input, "log2")


@register_op(methods=("log10",), samples=_samples.unary(low=0.1, high=3.0))
def log10(input):
    """Base-10 logarithm."""
    return _float_unary(Log10, input, "log10")


@register_op(methods=("log1p",), exported_in=("special",),
             samples=_samples.unary(low=-0.5, high=3.0))
def log1p(input):
    """``log(1 + input)``, accurate for small inputs (no cancellation)."""
    return _float_unary(Log1p, input, "log1p")


class Tan(Function):
    node_name = "TanBackward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.tan(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (out * out + 1)


@register_op(methods=("tan",), samples=_samples.unary(low=-1.2, high=1.2))
def tan(input):
    """Tangent (radians); d/dx = 1 + tan(x)^2."""
    return _float_unary(Tan, input, "tan")


def _input_unary(name: str, ufunc: str, derivative):
    """A unary op that saves its input; backward is ``grad * derivative(x)``."""

    class UnaryOp(Function):
        node_name = name.capitalize() + "Backward0"

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return getattr(ctx.xp, ufunc)(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return derivative(grad, x)

    UnaryOp.__name__ = UnaryOp.__qualname__ = name.capitalize()
    return UnaryOp


Asin = _input_unary("asin", "arcsin", lambda g, x: g * rsqrt(1 - x * x))
Acos = _input_unary("acos", "arccos", lambda g, x: -g * rsqrt(1 - x * x))
Atan = _input_unary("atan", "arctan", lambda g, x: g / (x * x + 1))
Sinh = _input_unary("sinh", "sinh", lambda g, x: g * cosh(x))
Cosh = _input_unary("cosh", "cosh", lambda g, x: g * sinh(x))
Asinh = _input_unary("asinh", "arcsinh", lambda g, x: g * rsqrt(x * x + 1))
Acosh = _input_unary("acosh", "arccosh", lambda g, x: g * rsqrt(x * x - 1))
Atanh = _input_unary("atanh", "arctanh", lambda g, x: g / (1 - x * x))


@register_op(methods=("asin", "arcsin"), also=("arcsin",),
             samples=_samples.unary(low=-0.9, high=0.9))
def asin(input):
    """Inverse sine; d/dx = 1 / sqrt(1 - x^2). NaN outside [-1, 1]."""
    return _float_unary(Asin, input, "asin")


@register_op(methods=("acos", "arccos"), also=("arccos",),
             samples=_samples.unary(low=-0.9, high=0.9))
def acos(input):
    """Inverse cosine; d/dx = -1 / sqrt(1 - x^2). NaN outside [-1, 1]."""
    return _float_unary(Acos, input, "acos")


@register_op(methods=("atan", "arctan"), also=("arctan",), samples=_samples.unary())
def atan(input):
    """Inverse tangent; d/dx = 1 / (1 + x^2)."""
    return _float_unary(Atan, input, "atan")


@register_op(methods=("sinh",), samples=_samples.unary())
def sinh(input):
    """Hyperbolic sine; d/dx = cosh(x)."""
    return _float_unary(Sinh, input, "sinh")


@register_op(methods=("cosh",), samples=_samples.unary())
def cosh(input):
    """Hyperbolic cosine; d/dx = sinh(x)."""
    return _float_unary(Cosh, input, "cosh")


@register_op(methods=("asinh", "arcsinh"), also=("arcsinh",), samples=_samples.unary())
def asinh(input):
    """Inverse hyperbolic sine; d/dx = 1 / sqrt(x^2 + 1)."""
    return _float_unary(Asinh, input, "asinh")


@register_op(methods=("acosh", "arccosh"), also=("arccosh",),
             samples=_samples.unary(low=1.2, high=3.0))
def acosh(input):
    """Inverse hyperbolic cosine; d/dx = 1 / sqrt(x^2 - 1). NaN below 1."""
    return _float_unary(Acosh, input, "acosh")


@register_op(methods=("atanh", "arctanh"), also=("arctanh",),
             samples=_samples.unary(low=-0.9, high=0.9))
def atanh(input):
    """Inverse hyperbolic tangent; d/dx = 1 / (1 - x^2). +-inf at +-1."""
    return _float_unary(Atanh, input, "atanh")


class Erf(Function):
    node_name = "ErfBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _in_float64(ctx.xp, erf_array, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * _TWO_OVER_SQRT_PI * exp(-x * x)


class Erfc(Function):
    node_name = "ErfcBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _in_float64(ctx.xp, erfc_array, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * -_TWO_OVER_SQRT_PI * exp(-x * x)


class Erfinv(Function):
    node_name = "ErfinvBackward0"

    @staticmethod
    def forward(ctx, x):
        out = _in_float64(ctx.xp, erfinv_array, x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * _SQRT_PI_OVER_TWO * exp(out * out)


@register_op(methods=("erf",), exported_in=("special",), samples=_samples.unary(low=-3, high=3))
def erf(input):
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``."""
    return _float_unary(Erf, input, "erf")


@register_op(methods=("erfc",), exported_in=("special",), samples=_samples.unary(low=-3, high=3))
def erfc(input):
    """``1 - erf(input)``, with full relative accuracy for large inputs."""
    return _float_unary(Erfc, input, "erfc")


@register_op(methods=("erfinv",), exported_in=("special",),
             samples=_samples.unary(low=-0.95, high=0.95))
def erfinv(input):
    """The inverse error function: ``erf(erfinv(y)) = y`` on (-1, 1); +-inf at +-1."""
    return _float_unary(Erfinv, input, "erfinv")


def _rounding(name: str, ufunc: str):
    """floor / ceil / trunc: zero gradient (PyTorch's convention); integers pass through."""

    class RoundOp(Function):
        node_name = name.capitalize() + "Backward0"

        @staticmethod
        def forward(ctx, x):
            return getattr(ctx.xp, ufunc)(x)

        @staticmethod
        def backward(ctx, grad):
            return _zeros_like(grad)

    RoundOp.__name__ = RoundOp.__qualname__ = name.capitalize()

    def function(input):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be a Tensor, not "
                            f"{type(input).__name__}")
        if input._data.dtype.kind != "f":
            if input.dtype is dtypes.bool:
                raise RuntimeError(f'"{name}" is not defined for bool tensors')
            return input.clone()
        return RoundOp.apply(input)

    function.__name__ = name
    return RoundOp, function


Floor, floor = _rounding("floor", "floor")
Ceil, ceil = _rounding("ceil", "ceil")
Trunc, trunc = _rounding("trunc", "trunc")
floor.__doc__ = "The largest integer <= input, elementwise; the gradient is zero."
ceil.__doc__ = "The smallest integer >= input, elementwise; the gradient is zero."
trunc.__doc__ = "Rounds toward zero, elementwise; the gradient is zero."
register_op(methods=("floor",), samples=_samples.unary(low=-3, high=3))(floor)
register_op(methods=("ceil",), samples=_samples.unary(low=-3, high=3))(ceil)
register_op(methods=("trunc", "fix"), also=("fix",), samples=_samples.unary(low=-3, high=3))(trunc)


class Round(Function):
    node_name = "RoundBackward0"

    @staticmethod
    def forward(ctx, x, decimals):
        if decimals == 0:
            return ctx.xp.rint(x)
        return ctx.xp.round(x, decimals)

    @staticmethod
    def backward(ctx, grad):
        return _zeros_like(grad), None


def _round_samples(make):
    return [Sample((make((3, 4), low=-3, high=3),), name="half to even"),
            Sample((make((5,), low=-3, high=3),), {"decimals": 2}, name="decimals=2"),
            Sample((make((5,), low=-300, high=300),), {"decimals": -1}, name="decimals=-1")]


@register_op(methods=("round",), exported_in=("special",), samples=_round_samples)
def round(input, *, decimals=0):  # noqa: A001 - PyTorch's name
    """Rounds half to even (as PyTorch), to ``decimals`` decimal places (negative: tens,
    hundreds...); the gradient is zero. Integers pass through when decimals is 0."""
    if not isinstance(input, Tensor):
        raise TypeError(f"round(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if not isinstance(decimals, (int, np.integer)) or isinstance(decimals, bool):
        raise TypeError(f"round(): argument 'decimals' must be int, not {type(decimals).__name__}")
    if input._data.dtype.kind != "f":
        if decimals != 0:
            raise RuntimeError(f'round(): decimals={decimals} is only supported for '
                               f'floating-point tensors, got {input.dtype.name}')
        return input.clone()
    return Round.apply(input, int(decimals))


class Frac(Function):
    node_name = "FracBackward0"

    @staticmethod
    def forward(ctx, x):
        return x - ctx.xp.trunc(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


@register_op(methods=("frac",), samples=_samples.unary(low=-3, high=3))
def frac(input):
    """``input - trunc(input)``: the fractional part, with the sign of input."""
    if not isinstance(input, Tensor):
        raise TypeError(f"frac(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f'"frac" is not defined for {input.dtype.name} tensors '
                                  "(frac needs a floating-point tensor)")
    return Frac.apply(input)


class Ndtr(Function):
    node_name = "SpecialNdtrBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _in_float64(ctx.xp, ndtr_array, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * _INV_SQRT_2PI * exp(x * x * -0.5)


class Ndtri(Function):
    node_name = "SpecialNdtriBackward0"

    @staticmethod
    def forward(ctx, x):
        out = _in_float64(ctx.xp, ndtri_array, x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * _SQRT_2PI * exp(out * out * 0.5)


class LogNdtr(Function):
    node_name = "SpecialLogNdtrBackward0"

    @staticmethod
    def forward(ctx, x):
        out = _in_float64(ctx.xp, log_ndtr_array, x)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        # density / cdf = exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi): finite far to the left
        return grad * _INV_SQRT_2PI * exp(x * x * -0.5 - out)


@register_op("ndtr", namespace="special", samples=_samples.unary(low=-4, high=4))
def ndtr(input):
    """The standard normal CDF ``Phi(x) = (1 + erf(x / sqrt(2))) / 2``, accurate in
    both tails."""
    return _float_unary(Ndtr, input, "special.ndtr")


@register_op("ndtri", namespace="special", samples=_samples.unary(low=0.02, high=0.98))
def ndtri(input):
    """The standard normal quantile, the inverse of ndtr: -inf at 0, inf at 1, NaN
    outside [0, 1]; accurate down to p = 1e-300."""
    return _float_unary(Ndtri, input, "special.ndtri")


@register_op("log_ndtr", namespace="special", samples=_samples.unary(low=-6, high=4))
def log_ndtr(input):
    """``log(ndtr(input))``, finite far into the left tail (about -x^2/2 there)."""
    return _float_unary(LogNdtr, input, "special.log_ndtr")


class Sinc(Function):
    node_name = "SincBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.sinc(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        # d/dx sin(pi x)/(pi x) = (pi x cos(pi x) - sin(pi x)) / (pi x^2); 0 at x = 0
        safe = where(x == 0, 1.0, x)
        angle = safe * math.pi
        slope = (angle * cos(angle) - sin(angle)) / (angle * safe)
        return where(x == 0, 0.0, grad * slope)


@register_op(methods=("sinc",), exported_in=("special",), samples=_samples.unary(low=-3, high=3))
def sinc(input):
    """The normalized sinc ``sin(pi x) / (pi x)``, 1 at x = 0."""
    return _float_unary(Sinc, input, "sinc")


class Xlogy(Function):
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
        a, b = ctx.saved_tensors
        x = a if a is not None else ctx.scalars[0]
        y = b if b is not None else ctx.scalars[1]
        need_a, need_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if need_a:
            # d/dx = log(y); 0 where x == 0 and y <= 0 (PyTorch's convention)
            grad_a = xlogy(grad, y)
            if isinstance(y, Tensor):
                grad_a = where((x == 0) & (y <= 0), 0.0, grad_a)
            elif y <= 0:
                grad_a = where(x == 0, 0.0, grad_a)
            grad_a = sum_to_shape(grad_a, ctx.shapes[0])
        if need_b:
            grad_b = sum_to_shape(grad * x / y, ctx.shapes[1])
        return grad_a, grad_b


def _xlogy_samples(make):
    x = make((3, 4))
    x._data[0, :2] = 0.0
    y = make((3, 4), low=0.2, high=2.0)
    return [Sample((x, y), name="zeros in x"),
            Sample((make((2, 3)), make((3,), low=0.2, high=2.0)), name="broadcast"),
            Sample((make((4,)), 1.5), name="scalar y"),
            Sample((2.0, make((4,), low=0.2, high=2.0)), name="scalar x")]


@register_op(methods=("xlogy",), exported_in=("special",), samples=_xlogy_samples)
def xlogy(input, other):
    """``input * log(other)``, and 0 where input is 0 (unless other is NaN): the entropy
    term ``p log p`` without NaN at p = 0."""
    a, b = binary_operands(input, other, "xlogy")
    tensor = a if isinstance(a, Tensor) else b
    if tensor._data.dtype.kind != "f":
        default = dtypes.get_default_dtype()
        a = a.to(default) if isinstance(a, Tensor) else float(a)
        b = b.to(default) if isinstance(b, Tensor) else float(b)
    return _binary(Xlogy, a, b, "xlogy")


# ----------------------------------------------------------------------------- clamp, lerp
def _bound(value, name: str):
    if value is None or isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, np.generic)):
        return value.item() if isinstance(value, np.generic) else value
    raise TypeError(f"clamp(): argument '{name}' must be a number or a Tensor, not "
                    f"{type(value).__name__}")


class Clamp(Function):
    node_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, x, low, high):
        xp = ctx.xp
        ctx.save_for_backward(x, low if isinstance(low, xp.ndarray) else None,
                              high if isinstance(high, xp.ndarray) else None)
        ctx.bounds = (low, high)
        ctx.shapes = (x.shape, np.shape(low), np.shape(high))
        out = x
        if low is not None:
            out = xp.maximum(out, low)
        if high is not None:
            out = xp.minimum(out, high)
        return out if out is not x else x.copy()

    @staticmethod
    def backward(ctx, grad):
        x, low_t, high_t = ctx.saved_tensors
        low = low_t if low_t is not None else ctx.bounds[0]
        high = high_t if high_t is not None else ctx.bounds[1]
        need_x, need_low, need_high = ctx.needs_input_grad
        grad_x = grad_low = grad_high = None
        if need_x:
            # inclusive at the bounds: x == min or x == max still passes the gradient
            if low is not None and high is not None:
                inside = (x >= low) & (x <= high)
            else:
                inside = (x >= low) if low is not None else (x <= high)
            grad_x = sum_to_shape(where(inside, grad, 0.0), ctx.shapes[0])
        if need_low:
            below = x < low
            if high is not None:
                below = below & (low < high)  # with min > max, max wins everywhere
            grad_low = sum_to_shape(where(below, grad, 0.0), ctx.shapes[1])
        if need_high:
            above = x > high
            if low is not None:
                above = above | (high < low)
            grad_high = sum_to_shape(where(above, grad, 0.0), ctx.shapes[2])
        return grad_x, grad_low, grad_high


def _clamp_samples(make):
    x = make((3, 4))
    return [Sample((x,), {"min": -0.5, "max": 0.7}, name="numbers"),
            Sample((make((3, 4)),), {"min": -0.5}, name="min only"),
            Sample((make((3, 4)), None, 0.3), name="max only"),
            Sample((make((2, 3)), make((3,), low=-1.0, high=0.0),
                    make((2, 1), low=0.0, high=1.0)), name="tensor bounds, broadcast"),
            Sample((make((4,)), make((4,), low=-1.0, high=0.0)), name="tensor min only")]


@register_op(methods=("clamp", "clip"), also=("clip",), samples=_clamp_samples)
def clamp(input, min=None, max=None):  # noqa: A002 - PyTorch's names
    """``minimum(maximum(input, min), max)``, elementwise; min/max are numbers or tensors
    (broadcast). Where min > max the result is max. The gradient reaches input where
    ``min <= input <= max`` (bounds included), and min / max where they were chosen."""
    if not isinstance(input, Tensor):
        raise TypeError(f"clamp(): argument 'input' must be a Tensor, not {type(input).__name__}")
    low, high = _bound(min, "min"), _bound(max, "max")
    if low is None and high is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    mixed = isinstance(low, Tensor) != isinstance(high, Tensor)
    if low is not None and high is not None and mixed:
        raise TypeError(f"clamp(): min and max must both be numbers or both be Tensors, got "
                        f"{type(low).__name__} and {type(high).__name__}")
    result = dtypes.result_type(input, low, high)
    x = input if input.dtype is result else input.to(result)
    bounds = []
    for value in (low, high):
        if isinstance(value, Tensor):
            value = value if value.dtype is result else value.to(result)
        elif value is not None:
            value = float(value) if result.is_floating_point else int(value)
        bounds.append(value)
    try:
        return Clamp.apply(x, *bounds)
    except ValueError:
        raise broadcast_error("clamp", input.shape, *(shape_of(b) for b in bounds
                                                      if b is not None)) from None


@register_op(methods=("clamp_min",),
             samples=lambda make: [Sample((make((3, 4)), -0.3), name="number"),
                                   Sample((make((2, 3)), make((3,))), name="tensor")])
def clamp_min(input, min):  # noqa: A002
    """``maximum(input, min)`` (clamp with only a lower bound)."""
    return clamp(input, min=min)


@register_op(methods=("clamp_max",),
             samples=lambda make: [Sample((make((3, 4)), 0.3), name="number"),
                                   Sample((make((2, 3)), make((3,))), name="tensor")])
def clamp_max(input, max):  # noqa: A002
    """``minimum(input, max)`` (clamp with only an upper bound)."""
    return clamp(input, max=max)


class Lerp(Function):
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
        start, end, weight_t = ctx.saved_tensors
        weight = weight_t if weight_t is not None else ctx.weight
        need_start, need_end, need_weight = ctx.needs_input_grad
        return (sum_to_shape(grad * (1 - weight), ctx.shapes[0]) if need_start else None,
                sum_to_shape(grad * weight, ctx.shapes[1]) if need_end else None,
                sum_to_shape(grad * (end - start), ctx.shapes[2]) if need_weight else None)


def _lerp_samples(make):
    return [Sample((make((3, 4)), make((3, 4)), 0.3), name="scalar weight"),
            Sample((make((3, 4)), make((4,)), 0.8), name="scalar weight, broadcast"),
            Sample((make((2, 3)), make((2, 3)), make((2, 3), low=-0.5, high=1.5)),
                   name="tensor weight"),
            Sample((make((3, 1)), make((1, 4)), make((3, 4), low=0.0, high=1.0)),
                   name="tensor weight, broadcast")]


@register_op(methods=("lerp",), samples=_lerp_samples)
def lerp(input, end, weight):
    """``input + weight * (end - input)``: linear interpolation; weight is a number or a
    tensor (broadcast). input, end (and a tensor weight) must share one float dtype."""
    if not isinstance(input, Tensor) or not isinstance(end, Tensor):
        raise TypeError(f"lerp(): arguments 'input' and 'end' must be Tensors, got "
                        f"{type(input).__name__} and {type(end).__name__}")
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f'"lerp" is not defined for {input.dtype.name} tensors '
                                  "(lerp needs floating-point tensors)")
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


# ----------------------------------------------------------------------------- float checks
def _float_check(name: str, ufunc: str, integer_answer: bool, doc: str):
    class Check(Function):
        differentiable = False

        @staticmethod
        def forward(ctx, x):
            if x.dtype.kind not in "fc":
                return ctx.xp.full(x.shape, integer_answer, dtype=bool)
            return getattr(ctx.xp, ufunc)(x)

    Check.__name__ = Check.__qualname__ = name.capitalize()

    def function(input):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be a Tensor, not "
                            f"{type(input).__name__}")
        return Check.apply(input)

    function.__name__ = name
    function.__doc__ = doc
    return Check, function


def _check_samples(make):
    x = make((3, 4))
    x._data[0, :3] = [np.nan, np.inf, -np.inf]
    return [Sample((x,), name="nan and infs"), Sample((make.int((3,), -3, 3),), name="int")]


for _name, _ufunc, _answer, _doc in (
        ("isnan", "isnan", False, "True where input is NaN (no gradient)."),
        ("isinf", "isinf", False, "True where input is +inf or -inf (no gradient)."),
        ("isfinite", "isfinite", True, "True where input is neither NaN nor infinite.")):
    globals()[_name] = register_op(methods=(_name,), samples=_check_samples,
                                   differentiable=False)(
        _float_check(_name, _ufunc, _answer, _doc)[1])


class NanToNum(Function):
    node_name = "NanToNumBackward0"

    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        ctx.save_for_backward(x)
        return ctx.xp.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return where(isfinite(x), grad, 0.0), None, None, None


def _nan_to_num_samples(make):
    x = make((3, 4))
    x._data[0, :3] = [np.nan, np.inf, -np.inf]
    y = make((2, 3))
    y._data[1, :3] = [-np.inf, np.nan, np.inf]
    return [Sample((x,), name="defaults"),
            Sample((y,), {"nan": 1.5, "posinf": 10.0, "neginf": -10.0}, name="values")]


@register_op(methods=("nan_to_num",), samples=_nan_to_num_samples)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN becomes ``nan``, +inf ``posinf`` and -inf ``neginf`` (by default the largest
    and lowest finite values of the dtype). The gradient is zero at replaced elements."""
    if not isinstance(input, Tensor):
        raise TypeError(f"nan_to_num(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if value is not None and (not isinstance(value, (int, float, np.generic))
                                  or isinstance(value, bool)):
            raise TypeError(f"nan_to_num(): argument '{name}' must be a number, not "
                            f"{type(value).__name__}")
    if input._data.dtype.kind not in "fc":
        return input.clone()
    return NanToNum.apply(input, 0.0 if nan is None else float(nan),
                          None if posinf is None else float(posinf),
                          None if neginf is None else float(neginf))


# ----------------------------------------------------------------------------- more binary
def _tensor_operands(input, other, op: str, float_only: bool = False, to_float: bool = False):
    """Two tensors (PyTorch's signature), promoted; integers become the default float with
    to_float and raise with float_only."""
    a, b = _tensor_pair(input, other, op)
    if a._data.dtype.kind != "f":
        if float_only:
            raise NotImplementedError(f'"{op}" is not defined for {a.dtype.name} tensors '
                                      f"({op} needs floating-point tensors)")
        if to_float:
            default = dtypes.get_default_dtype()
            a, b = a.to(default), b.to(default)
    return a, b


class Fmod(Function):
    node_name = "FmodBackward1"

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b)
        if not isinstance(b, ctx.xp.ndarray):
            ctx.node_name = "FmodBackward0"
        return ctx.xp.fmod(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        grad_b = None
        if need_b:
            numerator = a if a is not None else ctx.scalars[0]
            grad_b = sum_to_shape(-grad * div(numerator, b, rounding_mode="trunc"),
                                  ctx.shapes[1])
        return (sum_to_shape(grad, ctx.shapes[0]) if need_a else None), grad_b


@register_op(methods=("fmod",), samples=_samples.binary(low=0.3, high=3.0, other_low=0.7,
                                                        other_high=1.3, scalars=(1.7, -0.8)))
def fmod(input, other):
    """C's ``fmod``: ``input - trunc(input / other) * other``; the result has the sign of
    input (``remainder`` takes the sign of other)."""
    return _binary(Fmod, input, other, "fmod")


class Fmax(Function):
    """fmax/fmin: like maximum/minimum but NaN loses to a number. The winner gets the
    whole gradient; on ties input wins (PyTorch's convention)."""

    node_name = "FmaxBackward0"

    @staticmethod
    def forward(ctx, a, b, largest):
        ctx.save_for_backward(a, b)
        ctx.shapes = (a.shape, b.shape)
        ctx.largest = largest
        if not largest:
            ctx.node_name = "FminBackward0"
        return ctx.xp.fmax(a, b) if largest else ctx.xp.fmin(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad[:2]
        a_wins = ((a >= b) if ctx.largest else (a <= b)) | isnan(b)
        return (sum_to_shape(where(a_wins, grad, 0.0), ctx.shapes[0]) if need_a else None,
                sum_to_shape(where(a_wins, 0.0, grad), ctx.shapes[1]) if need_b else None,
                None)


def _fmax_samples(make):
    a, b = make((3, 4)), make((3, 4))
    a._data[0, 0], b._data[1, 1] = np.nan, np.nan
    return [Sample((a, b), name="nans"),
            Sample((make((2, 3, 4)), make((4,))), name="broadcast")]


@register_op(methods=("fmax",), samples=_fmax_samples)
def fmax(input, other):
    """Elementwise maximum where a NaN loses to a number (NaN only if both are NaN)."""
    a, b = _tensor_operands(input, other, "fmax")
    return Fmax.apply(a, b, True)


@register_op(methods=("fmin",), samples=_fmax_samples)
def fmin(input, other):
    """Elementwise minimum where a NaN loses to a number (NaN only if both are NaN)."""
    a, b = _tensor_operands(input, other, "fmin")
    return Fmax.apply(a, b, False)


class Atan2(Function):
    node_name = "Atan2Backward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        ctx.shapes = (a.shape, b.shape)
        return ctx.xp.arctan2(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        scaled = grad / (a * a + b * b)
        return (sum_to_shape(scaled * b, ctx.shapes[0]) if need_a else None,
                sum_to_shape(-scaled * a, ctx.shapes[1]) if need_b else None)


@register_op(methods=("atan2", "arctan2"), also=("arctan2",),
             samples=_samples.binary(low=0.3, high=2.0, scalars=()))
def atan2(input, other):
    """The angle of the point (other, input): ``atan(input / other)`` in the right
    quadrant, in [-pi, pi]. d/dinput = other / r^2, d/dother = -input / r^2."""
    a, b = _tensor_operands(input, other, "atan2", to_float=True)
    return _binary(Atan2, a, b, "atan2")


class Hypot(Function):
    node_name = "HypotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        out = ctx.xp.hypot(a, b)
        ctx.save_for_backward(a, b, out)
        ctx.shapes = (a.shape, b.shape)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        scaled = grad / out
        return (sum_to_shape(scaled * a, ctx.shapes[0]) if need_a else None,
                sum_to_shape(scaled * b, ctx.shapes[1]) if need_b else None)


@register_op(methods=("hypot",), samples=_samples.binary(low=0.3, high=2.0, scalars=()))
def hypot(input, other):
    """``sqrt(input^2 + other^2)`` without overflow or underflow in the squares."""
    a, b = _tensor_operands(input, other, "hypot", float_only=True)
    return _binary(Hypot, a, b, "hypot")


class LogAddExp(Function):
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
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad[:2]
        # d/da log(e^a + e^b) = sigmoid(a - b) (base 2: sigmoid((a - b) ln 2)): no overflow
        difference = a - b if not ctx.base2 else (a - b) * _LN2
        return (sum_to_shape(grad * sigmoid(difference), ctx.shapes[0]) if need_a else None,
                sum_to_shape(grad * sigmoid(-difference), ctx.shapes[1]) if need_b else None,
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


def _shift_samples(make):
    return [Sample((make.int((3, 4), -20, 20), make.int((4,), 0, 5)), name="tensors"),
            Sample((make.int((5,), -20, 20), 2), name="scalar shift")]


for _name, _ufunc in (("bitwise_left_shift", "left_shift"),
                      ("bitwise_right_shift", "right_shift")):
    _function = _integer_op(_name, _ufunc, False)
    _function.__doc__ = (f"``input {'<<' if 'left' in _name else '>>'} other``: integers "
                         f"{'times' if 'left' in _name else 'floor-divided by'} 2**other "
                         "(no gradient).")
    register_op(methods=(_name,), samples=_shift_samples, differentiable=False)(_function)


# ----------------------------------------------------------------------------- masked_fill
class MaskedFill(Function):
    node_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx, x, mask, value):
        xp = ctx.xp
        ctx.save_for_backward(mask)
        ctx.shapes = (x.shape, np.shape(value))
        if isinstance(value, xp.ndarray):
            ctx.node_name = "MaskedFillBackward1"
            value = value.astype(x.dtype)
        out = xp.where(mask, value, x)
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        need_x, _, need_value = ctx.needs_input_grad
        grad_x = grad_value = None
        if need_x:
            grad_x = sum_to_shape(where(mask, 0.0, grad), ctx.shapes[0])
        if need_value:
            grad_value = where(mask, grad, 0.0).sum().reshape(ctx.shapes[1])
        return grad_x, None, grad_value


def _masked_fill_samples(make):
    return [Sample((make((3, 4)), make.bool((3, 4)), -1.5), name="number"),
            Sample((make((3, 4)), make.bool((4,)), make(())), name="0-d tensor value"),
            Sample((make((1, 4)), make.bool((3, 1)), 2.0), name="mask broadcasts input")]


@register_op(methods=("masked_fill",), samples=_masked_fill_samples)
def masked_fill(input, mask, value):
    """``value`` where the bool ``mask`` (broadcast) is True, else input. value is a number
    or a 0-d tensor (which then gets the gradient of every filled element)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"masked_fill(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    if not isinstance(mask, Tensor):
        raise TypeError(f"masked_fill(): argument 'mask' must be a Tensor, not "
                        f"{type(mask).__name__}")
    if mask.dtype is not dtypes.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype.name}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        if value.dtype is not input.dtype and value.requires_grad:
            value = value.to(input.dtype)
    elif isinstance(value, (bool, int, float, np.generic)):
        value = value.item() if isinstance(value, np.generic) else value
        if input._data.dtype.kind == "b":
            value = bool(value)
        elif input._data.dtype.kind in "iu":
            if isinstance(value, float) and not value.is_integer():
                value = int(value)
    else:
        raise TypeError(f"masked_fill(): argument 'value' must be a number or a 0-d Tensor, "
                        f"not {type(value).__name__}")
    try:
        return MaskedFill.apply(input, mask, value)
    except ValueError:
        raise broadcast_error("masked_fill", input.shape, mask.shape) from None


# ----------------------------------------------------------------------------- closeness
_DTYPE_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                "int32": "Int", "int64": "Long", "float16": "Half", "float32": "Float",
                "float64": "Double"}


def _two_tensors(input, other, op: str) -> None:
    for arg, value, position in (("input", input, 1), ("other", other, 2)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{op}(): argument '{arg}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    if input.device != other.device:
        raise RuntimeError(f"{op}(): Expected all tensors to be on the same device, but found "
                           f"at least two devices, {input.device} and {other.device}!")


class IsClose(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, a, b, rtol, atol, equal_nan):
        xp = ctx.xp
        close = a == b
        if a.dtype.kind == "f" and equal_nan:
            close = close | (xp.isnan(a) & xp.isnan(b))
        if a.dtype.kind == "b":
            a, b = a.astype(dtypes.get_default_dtype().numpy), b.astype(
                dtypes.get_default_dtype().numpy)
        elif a.dtype.kind in "iu":
            # integers: the error in the default float dtype (no wrap-around)
            a, b = a.astype(np.float64), b.astype(np.float64)
        with np.errstate(invalid="ignore"):
            allowed = atol + xp.abs(rtol * b)
            actual = xp.abs(a - b)
            return close | (xp.isfinite(actual) & (actual <= allowed))


def _check_tolerances(op: str, rtol, atol) -> None:
    for name, value in (("rtol", rtol), ("atol", atol)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
            raise TypeError(f"{op}(): argument '{name}' must be a float, not "
                            f"{type(value).__name__}")
        if value < 0:
            raise RuntimeError(f"{op}(): {name} must be greater than or equal to zero, but got "
                               f"{value}")


def _isclose_samples(make):
    x = make((3, 4))
    y = x.detach().clone()
    y._data[0] += 1e-9
    y._data[1] += 1e-3
    xn = make((2, 3))
    xn._data[0, 0] = np.nan
    xn._data[1, 1] = np.inf
    yn = xn.detach().clone()
    yn._data[0, 1] += 1e-6
    return [Sample((x, y), name="near and far"),
            Sample((x, y), {"rtol": 0.0, "atol": 1e-2}, name="atol only"),
            Sample((make((3, 1)), make((4,))), {"atol": 1.0}, name="broadcast"),
            Sample((xn, yn), name="nan and inf"),
            Sample((xn, yn), {"equal_nan": True, "rtol": 1e-5}, name="equal_nan"),
            Sample((make.int((4,), -3, 3), make.int((4,), -3, 3)), {"atol": 1}, name="int")]


@register_op(methods=("isclose",), samples=_isclose_samples, differentiable=False)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise closeness, a bool tensor: ``|input - other| <= atol + rtol * |other|``
    or ``input == other`` (infinities are close only to themselves; NaNs only to NaNs and
    only with ``equal_nan``). Broadcasts; both tensors must have the same dtype."""
    _two_tensors(input, other, "isclose")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"isclose(): {_DTYPE_NAMES.get(input.dtype.name, input.dtype.name)}"
                           f" did not match "
                           f"{_DTYPE_NAMES.get(other.dtype.name, other.dtype.name)} (input "
                           "and other must have the same dtype)")
    _check_tolerances("isclose", rtol, atol)
    try:
        return IsClose.apply(input, other, float(rtol), float(atol), bool(equal_nan))
    except ValueError:
        raise broadcast_error("isclose", input.shape, other.shape) from None


@register_op(methods=("allclose",), samples=_isclose_samples, differentiable=False)
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of ``input`` is close to ``other`` (see ``isclose``): a
    Python bool."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def _equal_samples(make):
    x = make((3, 4))
    nan = make((3,))
    nan._data[1] = np.nan
    return [Sample((x, x.detach().clone()), name="same values"),
            Sample((x, make((3, 4))), name="different values"),
            Sample((make((3,)), make((1, 3))), name="different shapes"),
            Sample((make.int((4,), -3, 3), make.int((4,), -3, 3)), name="int"),
            Sample((nan, nan.detach().clone()), name="nan is not equal")]


@register_op(methods=("equal",), samples=_equal_samples, differentiable=False)
def equal(input, other):
    """True when ``input`` and ``other`` have the same shape and the same values (after
    type promotion; NaN is never equal): a Python bool."""
    _two_tensors(input, other, "equal")
    if tuple(input.shape) != tuple(other.shape):
        return False
    a, b = input._data, other._data
    return bool((a == b).all())


# ----------------------------------------------------------------------------- step, gcd, lcm
class Heaviside(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x, values):
        xp = ctx.xp
        return xp.where(x == 0, values, (x > 0).astype(x.dtype)).astype(x.dtype)


def _heaviside_samples(make):
    x = make((3, 4))
    x._data[0, :2] = 0.0
    return [Sample((x, make((3, 4))), name="same shape"),
            Sample((x, make((4,))), name="broadcast values"),
            Sample((make.int((5,), -2, 3), make.int((), 4, 6)), name="int")]


@register_op(methods=("heaviside",), samples=_heaviside_samples, differentiable=False)
def heaviside(input, values):
    """Heaviside step function: 0 where ``input < 0``, ``values`` where ``input == 0``, 1
    where ``input > 0`` (no gradient, as in PyTorch). Both must have the same dtype."""
    _two_tensors(input, values, "heaviside")
    if input.dtype is not values.dtype:
        raise RuntimeError(f"heaviside needs input and values of one dtype (input is "
                           f"{input.dtype.name}, values is {values.dtype.name})")
    try:
        return Heaviside.apply(input, values)
    except ValueError:
        raise broadcast_error("heaviside", input.shape, values.shape) from None


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
                raise RuntimeError(f'"{name}" is not defined for {value.dtype.name} (it needs '
                                   "integer tensors)")
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


gcd = register_op(methods=("gcd",), samples=_gcd_samples, differentiable=False)(_gcd_like(
    "gcd", "gcd", "Elementwise greatest common divisor of integers (non-negative; "
    "gcd(0, 0) = 0)."))
lcm = register_op(methods=("lcm",), samples=_gcd_samples, differentiable=False)(_gcd_like(
    "lcm", "lcm", "Elementwise least common multiple of integers (non-negative; 0 when "
    "either is 0)."))


class IsReal(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind == "c":
            return x.imag == 0
        return ctx.xp.ones(x.shape, dtype=bool)


@register_op(methods=("isreal",), differentiable=False,
             samples=lambda make: [Sample((make((3, 4)),)), Sample((make.int((3,), -3, 3),)),
                                   Sample((make(()),))])
def isreal(input):
    """True where the element has no imaginary part (every element of a real tensor)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"isreal(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    return IsReal.apply(input)


# ----------------------------------------------------------------------------- in-place forms
def _inplace_method(name: str, function):
    def method(self, *args, **kwargs):
        return _inplace(self, function, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"In-place form of ``{function.__name__}``: writes the result into self."
    return method


for _name in ("abs", "sign", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
              "rsqrt", "reciprocal", "square", "sin", "cos", "tan", "asin", "acos", "atan",
              "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv",
              "sigmoid", "relu", "floor", "ceil", "round", "trunc", "frac", "fmod",
              "remainder", "atan2", "hypot", "lerp", "masked_fill", "nan_to_num",
              "bitwise_left_shift", "bitwise_right_shift", "bitwise_and", "bitwise_or",
              "bitwise_xor", "bitwise_not", "logical_not", "logical_and", "logical_or",
              "logical_xor", "floor_divide", "clamp_min", "clamp_max", "sinc", "xlogy",
              "heaviside", "gcd", "lcm"):
    bind_method(_name + "_", _inplace_method(_name + "_", _F[_name]))
for _alias, _name in (("absolute_", "abs"), ("arcsin_", "asin"), ("arccos_", "acos"),
                      ("arctan_", "atan"), ("arcsinh_", "asinh"), ("arccosh_", "acosh"),
                      ("arctanh_", "atanh"), ("arctan2_", "atan2"), ("fix_", "trunc"),
                      ("negative_", "neg"), ("multiply_", "mul"), ("subtract_", "sub"),
                      ("divide_", "div"), ("true_divide_", "div")):
    bind_method(_alias, _inplace_method(_alias, _F[_name]))


def _ilshift(self, other):
    return _inplace(self, _F["bitwise_left_shift"], other)


def _irshift(self, other):
    return _inplace(self, _F["bitwise_right_shift"], other)


def _rlshift(self, other):
    return _F["bitwise_left_shift"](other, self)


def _rrshift(self, other):
    return _F["bitwise_right_shift"](other, self)


bind_method("__ilshift__", _ilshift)
bind_method("__irshift__", _irshift)
bind_method("__rlshift__", _rlshift)
bind_method("__rrshift__", _rrshift)
