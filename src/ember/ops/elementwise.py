"""Elementwise ops: arithmetic, unary math, activations, comparisons, where.

Each op is one Function class (forward on arrays via ``ctx.xp``, backward with ember
ops) and one registered public function that handles argument conversion and dtype
promotion. Broadcasting is NumPy's; ``sum_to_shape`` folds gradients back.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd.function import Function
from ..tensor import Tensor
from . import _samples
from ._util import binary_operands, broadcast_error, float_operand, shape_of, sum_to_shape
from .registry import Sample, register_op


def _binary(cls, a, b, op: str):
    """Apply a broadcasting binary op, turning NumPy's shape error into PyTorch's."""
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
    a_array, b_array = isinstance(a, ctx.xp.ndarray), isinstance(b, ctx.xp.ndarray)
    ctx.save_for_backward(a if a_array else None, b if b_array else None)
    ctx.scalars = (None if a_array else a, None if b_array else b)
    ctx.shapes = (np.shape(a), np.shape(b))


class Add(Function):
    node_name = "AddBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = (np.shape(a), np.shape(b))
        return a + b

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad
        return (sum_to_shape(grad, ctx.shapes[0]) if need_a else None,
                sum_to_shape(grad, ctx.shapes[1]) if need_b else None)


@register_op(methods=("add",), samples=_samples.binary())
def add(input, other, *, alpha=1):
    """``input + alpha * other``, broadcasting, with PyTorch's type promotion."""
    a, b = binary_operands(input, other, "add")
    if alpha != 1:
        b = mul(b, alpha)
    return _binary(Add, a, b, "add")


class Sub(Function):
    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = (np.shape(a), np.shape(b))
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
    a, b = binary_operands(input, other, "mul")
    return _binary(Mul, a, b, "mul")


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


@register_op(methods=("div", "true_divide"), also=("divide", "true_divide"),
             samples=_samples.binary(other_low=0.5, other_high=2.0))
def div(input, other, *, rounding_mode=None):
    """``input / other``. Integers divide to the default float dtype; rounding_mode
    'trunc' or 'floor' rounds the quotient (no gradient then)."""
    if rounding_mode is not None:
        if rounding_mode == "floor":
            return _F_floor_divide(input, other)
        if rounding_mode == "trunc":
            a, b = binary_operands(input, other, "div")
            return _binary(TruncDivide, a, b, "div")
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")
    a, b = binary_operands(input, other, "div")
    if (a._data if isinstance(a, Tensor) else b._data).dtype.kind != "f":
        default = dtypes.get_default_dtype()
        a = a.to(default) if isinstance(a, Tensor) else float(a)
        b = b.to(default) if isinstance(b, Tensor) else float(b)
    return _binary(Div, a, b, "div")


class TruncDivide(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, a, b):
        q = ctx.xp.trunc(a / b) if np.result_type(a, b).kind == "f" else _int_trunc_div(ctx, a, b)
        return q.astype(np.result_type(a, b), copy=False) if hasattr(q, "astype") else q


def _int_trunc_div(ctx, a, b):
    xp = ctx.xp
    q = xp.floor_divide(a, b)
    return q + ((q < 0) & (q * b != a))


class FloorDivide(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, a, b):
        return ctx.xp.floor_divide(a, b)


@register_op(methods=("floor_divide",), samples=_samples.binary(other_low=0.5, other_high=2.0),
             differentiable=False)
def floor_divide(input, other):
    """``floor(input / other)`` (Python's ``//``); not differentiable."""
    a, b = binary_operands(input, other, "floor_divide")
    return _binary(FloorDivide, a, b, "floor_divide")


_F_floor_divide = floor_divide


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
    a, b = binary_operands(input, other, "remainder")
    return _binary(Remainder, a, b, "remainder")


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
        return grad * (1 - out * out)


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
        return grad * out * (1 - out)


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
        return grad * (out > 0)


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
        a, b = binary_operands(input, other, name)
        return _binary(Compare, a, b, name)

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
                raise RuntimeError(f'"{name}_cpu" not implemented for floating-point tensors '
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
