"""Elementwise comparison, logic and selection: eq/ne/lt/le/gt/ge, maximum/minimum,
fmax/fmin, clamp, where, masked_fill, bitwise and logical ops, bit shifts, isnan/isinf/
isfinite/isreal, isclose/allclose/equal, heaviside.

Each op is one Function class (forward on arrays via ``ctx.xp``, backward written once
against ``ctx.math``) and one registered public function that handles argument conversion
and dtype promotion. Broadcasting is NumPy's; ``sum_to_shape`` folds gradients back.

``_binary`` (promote two operands, apply a broadcasting op) serves every binary op; it
lives here because this module is the base of the three elementwise ones: unary and
arithmetic import from it, it imports from neither.
"""
from __future__ import annotations

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from ..tensor import Tensor
from . import _samples
from ._util import (
    _WEAK,
    binary_operands,
    broadcast_error,
    dtype_not_implemented,
    float_operands,
    integer_scalar,
    scalar_value,
    shape_of,
)
from .registry import Sample, bind_method, register_op


def _binary(cls, a, b, op: str):
    """Promote two operands and apply a broadcasting binary op, turning NumPy's shape
    error into PyTorch's."""
    # A float tensor with a number, or two tensors of one dtype, need no promotion.
    if type(b) in _WEAK:
        if not (isinstance(a, Tensor) and a._data.dtype.kind in "fV"):
            a, b = binary_operands(a, b, op)
    elif not (type(a) is Tensor and type(b) is Tensor and a._data.dtype is b._data.dtype):
        a, b = binary_operands(a, b, op)
    return _broadcasting(op, cls, a, b)


def _broadcasting(op: str, cls, a, b, *rest):
    """``cls.apply(a, b, *rest)``, with NumPy's error for shapes that don't broadcast
    turned into PyTorch's."""
    try:
        return cls.apply(a, b, *rest)
    except ValueError:
        sa, sb = shape_of(a), shape_of(b)
        try:
            np.broadcast_shapes(sa, sb)
        except ValueError:
            raise broadcast_error(op, sa, sb) from None
        raise


# ----------------------------------------------------------------------------- maximum, minimum
class Maximum(Function):
    """Elementwise max/min of two tensors; ties split the gradient in half, and where
    either is NaN (the result is NaN) both get the whole gradient, as in PyTorch."""

    array_backward = True
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
        m = ctx.math
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad[:2]
        # only the strict loser gets 0: where either is NaN, both get the gradient
        share = m.where(a == b, grad / 2, grad)
        return (m.sum_to_shape(m.where((a < b) if ctx.largest else (a > b), 0.0, share),
                               ctx.shapes[0]) if need_a else None,
                m.sum_to_shape(m.where((a > b) if ctx.largest else (a < b), 0.0, share),
                               ctx.shapes[1]) if need_b else None,
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
    return _broadcasting("maximum", Maximum, a, b, True)


@register_op(methods=("minimum",), samples=_samples.binary(scalars=()))
def minimum(input, other):
    """Elementwise minimum of two tensors (NaN propagates)."""
    a, b = _tensor_pair(input, other, "minimum")
    return _broadcasting("minimum", Maximum, a, b, False)


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
for _fn, _aliases, _operators in (
        (eq, (), ()), (ne, ("not_equal",), ()), (lt, ("less",), ("__lt__",)),
        (le, ("less_equal",), ("__le__",)), (gt, ("greater",), ("__gt__",)),
        (ge, ("greater_equal",), ("__ge__",))):
    # (== and != are Tensor methods of their own: comparing with None gives a bool)
    register_op(methods=(_fn.__name__,) + _aliases, also=_aliases, samples=_comparison_samples,
                operators=_operators, inplace=tuple(m + "_" for m in (_fn.__name__,) + _aliases),
                differentiable=False)(_fn)


# ----------------------------------------------------------------------------- selection
class Where(Function):
    array_backward = True
    node_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, condition, x, y):
        ctx.save_for_backward(condition)
        ctx.shapes = (np.shape(x), np.shape(y))
        return backend.where(ctx.xp, condition, x, y)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (condition,) = ctx.saved_tensors
        _, need_x, need_y = ctx.needs_input_grad
        return (None,
                m.sum_to_shape(m.where(condition, grad, 0.0), ctx.shapes[0]) if need_x else None,
                m.sum_to_shape(m.where(condition, 0.0, grad), ctx.shapes[1]) if need_y else None)


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
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = _scalar_branch(input, other, condition)
    if isinstance(input, Tensor) and not isinstance(other, Tensor):
        other = dtypes.checked_number(other, input._data.dtype)
    elif isinstance(other, Tensor) and not isinstance(input, Tensor):
        input = dtypes.checked_number(input, other._data.dtype)
    x, y = binary_operands(input, other, "where")
    try:
        return Where.apply(condition, x, y)
    except ValueError:
        raise broadcast_error("where", condition.shape, shape_of(x), shape_of(y)) from None


def _scalar_branch(input, other, condition: Tensor) -> Tensor:
    """``where(cond, a, b)`` with two numbers: ``a`` as a 0-d Tensor of the dtype the pair
    takes (bool, int64, or the default float dtype), as PyTorch does."""
    from ..creation import tensor

    for value, name in ((input, "input"), (other, "other")):
        if not isinstance(value, (bool, int, float, np.generic)):
            raise TypeError(f"where(): argument '{name}' must be a Tensor or a number, not "
                            f"{type(value).__name__}")
    pair = (input, other)
    if all(isinstance(v, (bool, np.bool_)) for v in pair):
        kind = dtypes.bool
    elif any(isinstance(v, (float, np.floating)) for v in pair):
        kind = dtypes.get_default_dtype()
    else:
        kind = dtypes.int64
    return tensor(input, dtype=kind, device=condition.device)


def _tensor_where(self, condition, other):
    return where(condition, self, other)


Tensor.where = _tensor_where


# ----------------------------------------------------------------------------- logic and bits
def _integer_op(name: str, ufunc: str, logical: bool):
    class Bits(Function):
        differentiable = False

        @staticmethod
        def forward(ctx, a, b):
            if not logical and any(getattr(v, "dtype", np.dtype(int)).kind in "fV"
                                   for v in (a, b)):
                dtype = dtypes.from_numpy(next(v.dtype for v in (a, b)
                                               if getattr(v, "dtype", None) is not None
                                               and v.dtype.kind in "fV"))
                raise dtype_not_implemented(name, dtype, f"{name} takes integer or bool tensors")
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


for _name, _ufunc, _logical, _operator in (("bitwise_and", "bitwise_and", False, "and"),
                                           ("bitwise_or", "bitwise_or", False, "or"),
                                           ("bitwise_xor", "bitwise_xor", False, "xor"),
                                           ("logical_and", "logical_and", True, None),
                                           ("logical_or", "logical_or", True, None),
                                           ("logical_xor", "logical_xor", True, None)):
    _dunders = ((f"__{_operator}__",), (f"__r{_operator}__",), (f"__i{_operator}__",)) \
        if _operator else ((), (), ())
    register_op(methods=(_name,), samples=_logic_samples, differentiable=False,
                operators=_dunders[0], reflected=_dunders[1],
                inplace=(_name + "_",) + _dunders[2])(_integer_op(_name, _ufunc, _logical))


class BitwiseNot(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        return ctx.xp.invert(x)


@register_op(inplace=("bitwise_not_",), methods=("bitwise_not",), differentiable=False,
             samples=lambda make: [Sample((make.bool((3, 4)),)),
                                   Sample((make.int((3, 4), -5, 5),))])
def bitwise_not(input):
    """``~input``: bitwise NOT of integers, logical NOT of bools (no gradient)."""
    if isinstance(input, Tensor) and input._data.dtype.kind not in "iub":
        # PyTorch's kernel has no floating-point form: its dispatch error, a
        # NotImplementedError (the ~ operator checks first and raises a TypeError)
        raise NotImplementedError(
            f'"bitwise_not_{input.device.type}" not implemented for '
            f"'{input.dtype.scalar_name}' (bitwise_not takes integer or bool tensors)")
    return BitwiseNot.apply(input)


def _invert(self):
    """``~self``: ``bitwise_not``, but PyTorch's operator rejects other dtypes itself,
    with a TypeError, before the op's dispatch."""
    if self._data.dtype.kind not in "iub":
        raise TypeError(f"~ (operator.invert) is only implemented on integer and Boolean-type "
                        f"tensors (got {self.dtype.scalar_name})")
    return bitwise_not(self)


bind_method("__invert__", _invert)


class LogicalNot(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        return ctx.xp.logical_not(x)


@register_op(inplace=("logical_not_",), methods=("logical_not",), differentiable=False,
             samples=lambda make: [Sample((make((3, 4)),)), Sample((make.bool((3, 4)),))])
def logical_not(input):
    """True where ``input`` is zero (no gradient)."""
    return LogicalNot.apply(input)


# ----------------------------------------------------------------------------- clamp
def _bound(value, name: str):
    if value is None or isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, np.generic)):
        return value.item() if isinstance(value, np.generic) else value
    raise TypeError(f"clamp(): argument '{name}' must be a number or a Tensor, not "
                    f"{type(value).__name__}")


class Clamp(Function):
    array_backward = True
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
        m = ctx.math
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
            grad_x = m.sum_to_shape(m.where(inside, grad, 0.0), ctx.shapes[0])
        if need_low:
            below = x < low
            if high is not None:
                below = below & (low < high)  # with min > max, max wins everywhere
            grad_low = m.sum_to_shape(m.where(below, grad, 0.0), ctx.shapes[1])
        if need_high:
            above = x > high
            if low is not None:
                above = above | (high < low)
            grad_high = m.sum_to_shape(m.where(above, grad, 0.0), ctx.shapes[2])
        return grad_x, grad_low, grad_high


def _clamp_samples(make):
    x = make((3, 4))
    return [Sample((x,), {"min": -0.5, "max": 0.7}, name="numbers"),
            Sample((make((3, 4)),), {"min": -0.5}, name="min only"),
            Sample((make((3, 4)), None, 0.3), name="max only"),
            Sample((make((2, 3)), make((3,), low=-1.0, high=0.0),
                    make((2, 1), low=0.0, high=1.0)), name="tensor bounds, broadcast"),
            Sample((make((4,)), make((4,), low=-1.0, high=0.0)), name="tensor min only")]


@register_op(inplace=("clamp_", "clip_"), methods=("clamp", "clip"), also=("clip",),
             samples=_clamp_samples)
def clamp(input, min=None, max=None):
    """``minimum(maximum(input, min), max)``, elementwise; min/max are numbers or tensors
    (broadcast). Where min > max the result is max. The gradient reaches input where
    ``min <= input <= max`` (bounds included), and min / max where they were chosen."""
    return _clamp(input, min, max, "Clamp")


class ClampMin(Clamp):
    node_name = "ClampMinBackward0"


class ClampMax(Clamp):
    node_name = "ClampMaxBackward0"


def _clamp(input, min, max, op: str):
    """clamp, clamp_min or clamp_max (``op``); their nodes carry PyTorch's overload names:
    ...Backward0 for number bounds and Backward1 for Tensors (clamp the other way round)."""
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
            value = float(value) if result.is_floating_point else \
                int(dtypes.checked_number(value, result.numpy))
        bounds.append(value)
    try:
        node = {"Clamp": Clamp, "ClampMin": ClampMin, "ClampMax": ClampMax}[op]
        out = node.apply(x, *bounds)
        if isinstance(low if low is not None else high, Tensor) and out.grad_fn is not None:
            out.grad_fn.node_name = op + ("Backward0" if op == "Clamp" else "Backward1")
        return out
    except ValueError:
        raise broadcast_error("clamp", input.shape, *(shape_of(b) for b in bounds
                                                      if b is not None)) from None


@register_op(inplace=("clamp_min_",), methods=("clamp_min",),
             samples=lambda make: [Sample((make((3, 4)), -0.3), name="number"),
                                   Sample((make((2, 3)), make((3,))), name="tensor")])
def clamp_min(input, min):
    """``maximum(input, min)`` (clamp with only a lower bound)."""
    return _clamp(input, min, None, "ClampMin")


@register_op(inplace=("clamp_max_",), methods=("clamp_max",),
             samples=lambda make: [Sample((make((3, 4)), 0.3), name="number"),
                                   Sample((make((2, 3)), make((3,))), name="tensor")])
def clamp_max(input, max):
    """``minimum(input, max)`` (clamp with only an upper bound)."""
    return _clamp(input, None, max, "ClampMax")


# ----------------------------------------------------------------------------- float checks
def _float_check(name: str, ufunc: str, integer_answer: bool, doc: str):
    class Check(Function):
        differentiable = False

        @staticmethod
        def forward(ctx, x):
            if x.dtype.kind not in "fcV":  # V: bfloat16, whose ufuncs ml_dtypes provides
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


# ----------------------------------------------------------------------------- fmax, fmin
def _tensor_operands(input, other, op: str, float_only: bool = False, to_float: bool = False):
    """Two tensors (PyTorch's signature), promoted; integers become the default float with
    to_float and raise with float_only."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        _tensor_pair(input, other, op)  # raises
    if to_float:
        return float_operands(input, other, op)
    a, b = binary_operands(input, other, op)
    if float_only and a._data.dtype.kind not in "fV":
        raise dtype_not_implemented(op, a.dtype, f"{op} needs floating-point tensors: convert "
                                    "with .float() first")
    return a, b


class Fmax(Function):
    """fmax/fmin: like maximum/minimum but NaN loses to a number. The winner gets the
    whole gradient; on ties input wins (PyTorch's convention)."""

    array_backward = True
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
        m = ctx.math
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad[:2]
        a_wins = ((a >= b) if ctx.largest else (a <= b)) | m.isnan(b)
        return (m.sum_to_shape(m.where(a_wins, grad, 0.0), ctx.shapes[0]) if need_a else None,
                m.sum_to_shape(m.where(a_wins, 0.0, grad), ctx.shapes[1]) if need_b else None,
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
    return _broadcasting("fmax", Fmax, a, b, True)


@register_op(methods=("fmin",), samples=_fmax_samples)
def fmin(input, other):
    """Elementwise minimum where a NaN loses to a number (NaN only if both are NaN)."""
    a, b = _tensor_operands(input, other, "fmin")
    return _broadcasting("fmin", Fmax, a, b, False)


# ----------------------------------------------------------------------------- bit shifts
def _shift_samples(make):
    return [Sample((make.int((3, 4), -20, 20), make.int((4,), 0, 5)), name="tensors"),
            Sample((make.int((5,), -20, 20), 2), name="scalar shift")]


for _name, _ufunc, _operator in (("bitwise_left_shift", "left_shift", "lshift"),
                                 ("bitwise_right_shift", "right_shift", "rshift")):
    _function = _integer_op(_name, _ufunc, False)
    _function.__doc__ = (f"``input {'<<' if 'left' in _name else '>>'} other``: integers "
                         f"{'times' if 'left' in _name else 'floor-divided by'} 2**other "
                         "(no gradient).")
    register_op(methods=(_name,), samples=_shift_samples, differentiable=False,
                operators=(f"__{_operator}__",), reflected=(f"__r{_operator}__",),
                inplace=(_name + "_", f"__i{_operator}__"))(_function)


# ----------------------------------------------------------------------------- masked_fill
class MaskedFill(Function):
    array_backward = True
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
        m = ctx.math
        (mask,) = ctx.saved_tensors
        need_x, _, need_value = ctx.needs_input_grad
        grad_x = grad_value = None
        if need_x:
            grad_x = m.sum_to_shape(m.where(mask, 0.0, grad), ctx.shapes[0])
        if need_value:
            grad_value = m.reshape(m.sum(m.where(mask, grad, 0.0)), ctx.shapes[1])
        return grad_x, None, grad_value


def _masked_fill_samples(make):
    return [Sample((make((3, 4)), make.bool((3, 4)), -1.5), name="number"),
            Sample((make((3, 4)), make.bool((4,)), make(())), name="0-d tensor value"),
            Sample((make((1, 4)), make.bool((3, 1)), 2.0), name="mask broadcasts input")]


@register_op(inplace=("masked_fill_",), methods=("masked_fill",), samples=_masked_fill_samples)
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
            value = integer_scalar(value, input._data.dtype)
    else:
        raise TypeError(f"masked_fill(): argument 'value' must be a number or a 0-d Tensor, "
                        f"not {type(value).__name__}")
    try:
        return MaskedFill.apply(input, mask, value)
    except ValueError:
        raise broadcast_error("masked_fill", input.shape, mask.shape) from None


# ----------------------------------------------------------------------------- closeness


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
        if a.dtype.kind in "fV" and equal_nan:
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
        raise RuntimeError(f"isclose(): {input.dtype.scalar_name}"
                           f" did not match "
                           f"{other.dtype.scalar_name} (input "
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


# ----------------------------------------------------------------------------- step
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


@register_op(inplace=("heaviside_",), methods=("heaviside",), samples=_heaviside_samples,
             differentiable=False)
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


# ----------------------------------------------------------------------------- isreal
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


class Isin(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, elements, test, invert):
        return ctx.xp.isin(elements, test, invert=invert)


@register_op(methods=("isin",), differentiable=False, samples=lambda make: [
    Sample((make.int((3, 4), 0, 6), make.int((4,), 0, 6)), name="ints"),
    Sample((make.int((5,), 0, 4), make.int((2, 2), 0, 4)), {"invert": True}, name="invert"),
    Sample((make.int((5,), 0, 4), 2), name="number")])
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` is one of ``test_elements`` (either may be a
    number); a bool tensor shaped like ``elements``.

    >>> ember.isin(ember.tensor([1, 2, 3]), ember.tensor([2, 5]))
    tensor([False,  True, False])
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): expected at least one of elements and test_elements to be a "
                        "Tensor")
    if isinstance(elements, Tensor) and isinstance(test_elements, Tensor):
        if elements.device != test_elements.device:
            raise RuntimeError(f"isin(): expected elements and test_elements on the same "
                               f"device, got {elements.device} and {test_elements.device}")
        a, b = binary_operands(elements, test_elements, "isin")
        return Isin.apply(a, b, bool(invert))
    if isinstance(elements, Tensor):
        value = scalar_value(test_elements, "isin", "test_elements")
        return Isin.apply(elements, value, bool(invert))
    value = scalar_value(elements, "isin", "elements")
    xp = backend.xp_for_device(test_elements._device)
    found = bool(xp.isin(xp.asarray(value), test_elements._data).item()) != bool(invert)
    return Tensor._make(xp.asarray(found), test_elements._device)
