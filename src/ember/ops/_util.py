"""Small helpers shared by the op families: operand promotion, gradient reduction to an
input's shape, dimension arguments."""
from __future__ import annotations

import numbers
import operator

import numpy as np

from .. import backend, dtypes
from ..tensor import Tensor

_SCALARS = (numbers.Number, np.generic)

_WEAK = (float, int)


def xp_of(t: Tensor):
    """The array module of a tensor's device (NumPy, or CuPy for CUDA tensors)."""
    return backend.xp_for_device(t._device)


def type_name(x) -> str:
    return f"Tensor({x.dtype.name})" if isinstance(x, Tensor) else type(x).__name__


def ensure_tensor(x, op: str, arg: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be a Tensor, not {type(x).__name__}")
    return x


def scalar_value(x, op: str, arg: str):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (bool, int, float)):
        return x
    raise TypeError(f"{op}(): argument '{arg}' must be a Tensor or a number, not "
                    f"{type(x).__name__}")


def binary_operands(a, b, op: str):
    """Cast two operands to PyTorch's result dtype. Python scalars stay Python scalars
    (NumPy treats them as weak too); tensors are converted with a tracked cast."""
    a_is, b_is = isinstance(a, Tensor), isinstance(b, Tensor)
    # fast paths: a float tensor with a Python number keeps its dtype
    if a_is and type(b) in _WEAK and a._data.dtype.kind in "fV":
        return a, b
    if b_is and type(a) in _WEAK and b._data.dtype.kind in "fV":
        return a, b
    if a_is and b_is:
        if a._data.dtype == b._data.dtype:
            return a, b
        result = dtypes.result_type(a, b)
        return _cast(a, result), _cast(b, result)
    if a_is:
        b = scalar_value(b, op, "other")
        result = dtypes.result_type(a, b)
        return _cast(a, result), _scalar_as(b, result)
    if b_is:
        a = scalar_value(a, op, "input")
        result = dtypes.result_type(a, b)
        return _scalar_as(a, result), _cast(b, result)
    raise TypeError(f"{op}(): expected at least one Tensor, got {type(a).__name__} and "
                    f"{type(b).__name__}")


def float_operands(a, b, op: str):
    """Operands of an op whose integer results are floats (true division, atan2): cast to
    PyTorch's result dtype, or to the default float dtype where that is bool or integer.
    Each operand goes to the float dtype directly: through the promoted integer dtype first,
    an int8 0-d -7 meeting a uint8 tensor would wrap to 249."""
    a_is, b_is = isinstance(a, Tensor), isinstance(b, Tensor)
    if a_is and a._data.dtype.kind in "fV" or b_is and b._data.dtype.kind in "fV":
        return binary_operands(a, b, op)  # a float result: promotion as usual
    if not (a_is or b_is):
        raise TypeError(f"{op}(): expected at least one Tensor, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    if not a_is:
        a = scalar_value(a, op, "input")
    if not b_is:
        b = scalar_value(b, op, "other")
    result = dtypes.result_type(a, b)
    if result._category != 2:
        result = dtypes.get_default_dtype()
    return (_cast(a, result) if a_is else _scalar_as(a, result),
            _cast(b, result) if b_is else _scalar_as(b, result))


def _cast(t: Tensor, d) -> Tensor:
    return t if t._data.dtype == d.numpy else t.to(d)


def _scalar_as(value, d):
    # A float scalar meeting an int result (can't happen) or a bool meeting numbers: keep
    # it as a Python number of the result's kind so NumPy's weak rules give d.
    if d._category == 2:
        return float(value)
    if d._category == 1:
        return dtypes.wrap_int(int(value), d.numpy)
    return value


def float_operand(x: Tensor, op: str) -> Tensor:
    """Unary math on integers gives the default float dtype, as in PyTorch."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(x).__name__}")
    if x._data.dtype.kind not in "fV":
        return x.to(dtypes.get_default_dtype())
    return x


def integer_scalar(value, dtype) -> int:
    """A Python number as PyTorch casts a Scalar argument to an integer dtype (fill values,
    alpha and beta, thresholds): truncated toward zero; a float must lie in the dtype's
    range, an int may wrap as in C (-1 is 255 in uint8)."""
    if isinstance(value, np.floating):
        value = float(value)
    return int(dtypes.checked_number(value, np.dtype(dtype)))


def dtype_not_implemented(op: str, dtype, hint: str) -> NotImplementedError:
    """PyTorch's refusal of a dtype its kernel has no loop for (a NotImplementedError:
    ``"abs" not implemented for 'Bool'``), with ``hint``: what to do instead."""
    return NotImplementedError(f"\"{op}\" not implemented for '{dtype.scalar_name}' ({hint})")


def refuse_bool(x: Tensor, op: str) -> None:
    """Arithmetic PyTorch has no bool loop for (abs, floor, matmul...)."""
    if x._data.dtype.kind == "b":
        raise dtype_not_implemented(op, x.dtype, f"{op} takes numbers, not bools: convert "
                                    "with .int() or .float() first")


def refuse_low_precision(x: Tensor, op: str) -> None:
    """Kernels PyTorch has in float32 and float64 only (special functions, quantiles...)."""
    if x._data.dtype.itemsize == 2 and x._data.dtype.kind in "fV":
        raise dtype_not_implemented(op, x.dtype, f"{op} computes in float32 or float64: "
                                    "convert with .float() first")


def shape_of(x) -> tuple:
    return x.shape if isinstance(x, (np.ndarray, Tensor)) else np.shape(x)


def sum_to_shape(grad: Tensor, shape: tuple) -> Tensor:
    """Undo broadcasting: sum ``grad`` over the dimensions that broadcasting added or
    stretched, so it matches ``shape``."""
    gshape = grad._data.shape
    if gshape == shape or gshape == tuple(shape):
        return grad
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)
    out = grad.sum(dim=dims, keepdim=True) if dims else grad
    if lead or out._data.shape != tuple(shape):
        out = out.reshape(tuple(shape))
    return out


def _int_like(value):
    """``value`` as an int where PyTorch takes it as one (NumPy ints, integer tensors of one
    element, anything with ``__index__`` but bools), else None."""
    if isinstance(value, Tensor):
        data = value._data
        return int(value.item()) if data.dtype.kind in "iu" and data.size == 1 else None
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def as_int(value, op: str, arg: str) -> int:
    """An int argument. Floats and bools raise TypeError, as in PyTorch, rather than being
    truncated."""
    if type(value) is int:
        return value
    found = _int_like(value)
    if found is None:
        raise TypeError(f"{op}(): argument '{arg}' must be int, not {type_name(value)}")
    return found


def int_list(values, op: str, arg: str) -> tuple:
    """An int[] argument (a tuple or list, or one int) as a tuple of ints; as_int's rules
    for each element, except that bools after the first pass as ints (PyTorch checks only
    the first element's type)."""
    if not isinstance(values, (tuple, list)):
        if type(values) is int:
            return (values,)
        if _int_like(values) is None:
            raise TypeError(f"{op}(): argument '{arg}' must be tuple of ints, not "
                            f"{type_name(values)}")
        values = (values,)
    for v in values:
        if type(v) is not int:
            break
    else:
        return tuple(values)
    out = []
    for i, v in enumerate(values):
        found = v if type(v) is int else int(v) if i and isinstance(v, bool) else _int_like(v)
        if found is None:
            raise TypeError(f"{op}(): argument '{arg}' must be tuple of ints, but found "
                            f"element of type {type_name(v)} at pos {i}")
        out.append(found)
    return tuple(out)


def wrap_dim(dim, ndim: int, op: str) -> int:
    """A dim in [0, ndim); a 0-d tensor takes dims 0 and -1, as in PyTorch."""
    if type(dim) is not int:
        found = _int_like(dim)
        if found is None:
            raise TypeError(f"{op}(): dim must be an int, not {type_name(dim)}")
        dim = found
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}(): Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim % n


def unique_dims(dims, ndim: int, op: str) -> tuple:
    """Wrapped dims in the given order; a dim named twice raises as in PyTorch."""
    out = tuple(wrap_dim(d, ndim, op) for d in int_list(dims, op, "dim"))
    if len(set(out)) != len(out):
        twice = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"{op}(): dim {twice} appears multiple times in the list of dims")
    return out


def wrap_dims(dim, ndim: int, op: str) -> tuple:
    """A sorted tuple of non-negative dims; None (or ()) means all."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (list, tuple)):
        dims = unique_dims(dim, ndim, op)
        return tuple(sorted(dims)) if dims else tuple(range(ndim))
    return (wrap_dim(dim, ndim, op),)


def parse_shape(shape, op: str, arg: str = "size") -> tuple:
    """Accept f(2, 3) and f((2, 3)) and f([2, 3]) and f(ember.Size); elements as int_list
    takes them."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return int_list(shape, op, arg)


def broadcast_error(op: str, *shapes) -> RuntimeError:
    """PyTorch's message for shapes that don't broadcast, naming the op."""
    shapes = [tuple(s) for s in shapes]
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + s for s in shapes]
    for i in range(ndim):
        sizes = {p[i] for p in padded if p[i] != 1}
        if len(sizes) > 1:
            a, b = [p[i] for p in padded if p[i] != 1][:2]
            return RuntimeError(
                f"{op}(): The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                f"non-singleton dimension {i} (shapes {[list(s) for s in shapes]})")
    return RuntimeError(f"{op}(): shapes {[list(s) for s in shapes]} don't broadcast")
