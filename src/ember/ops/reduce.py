"""Reductions and scans: sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std,
norms, logsumexp, cumulative ops, all/any, median, sort/topk and friends.

Ops that pick elements (sort, topk, median, cummax) return ``(values, indices)`` named
tuples like PyTorch's ``torch.return_types``; their gradients flow back along the indices
through a small gather/scatter pair (``GatherAlong`` / ``ScatterAlong``), each the
other's backward, so gradients of gradients work.
"""
from __future__ import annotations

import builtins
import functools
import math
import numbers
import warnings
from collections import namedtuple

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..tensor import Tensor
from .elementwise import abs as _abs
from .elementwise import maximum, minimum, sign, where
from ._util import ensure_tensor, wrap_dim, wrap_dims
from .registry import NAMESPACES, OPS, Sample, register_op

# PyTorch returns (values, indices) named tuples from these ops (torch.return_types.*).
MaxResult = namedtuple("max", ["values", "indices"])
MinResult = namedtuple("min", ["values", "indices"])
SortResult = namedtuple("sort", ["values", "indices"])
TopkResult = namedtuple("topk", ["values", "indices"])
MedianResult = namedtuple("median", ["values", "indices"])
NanmedianResult = namedtuple("nanmedian", ["values", "indices"])
CummaxResult = namedtuple("cummax", ["values", "indices"])
CumminResult = namedtuple("cummin", ["values", "indices"])
KthvalueResult = namedtuple("kthvalue", ["values", "indices"])

# PyTorch's scalar-type names, used in its error messages ("Got: Long").
_SCALAR_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                 "int32": "Int", "int64": "Long", "float16": "Half", "float32": "Float",
                 "float64": "Double"}


def _scalar_name(t: Tensor) -> str:
    return _SCALAR_NAMES.get(t.dtype.name, t.dtype.name)


# ----------------------------------------------------------------------------- helpers
def _reduced_dims(input: Tensor, dim, op: str) -> tuple:
    """Sorted non-negative dims to reduce; a 0-d tensor accepts dim 0 / -1 and reduces
    nothing."""
    dims = wrap_dims(dim, input._data.ndim, op)
    return dims if input._data.ndim else ()


def _keepdim_shape(shape: tuple, dims: tuple) -> tuple:
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _expand_back(grad: Tensor, shape: tuple, dims: tuple, keepdim: bool) -> Tensor:
    """Broadcast a reduced gradient back over the reduced dims."""
    return _keep(grad, shape, dims, keepdim).expand(shape)


def _keep(t: Tensor, shape: tuple, dims: tuple, keepdim: bool) -> Tensor:
    """A reduced tensor reshaped as if the reduction had used keepdim=True."""
    if not keepdim and dims:
        return t.reshape(_keepdim_shape(shape, dims))
    return t


def _count(shape: tuple, dims: tuple) -> int:
    return int(np.prod([shape[d] for d in dims])) if dims else 1


def _cast_back(grad: Tensor, numpy_dtype) -> Tensor:
    """A gradient in the input's dtype when ``dtype=`` made the output wider or narrower."""
    return grad if grad._data.dtype == numpy_dtype else grad.to(dtypes.from_numpy(numpy_dtype))


def _check_nonempty(x, dims: tuple, op: str, all_dims: bool) -> None:
    """PyTorch's errors for max-like reductions over nothing."""
    if all_dims and x.size == 0:
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    for d in dims:
        if x.shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


def _stable_argsort(xp, a, axis: int, descending: bool):
    """Indices that sort ``a`` along ``axis``, equal elements keeping their order; NaN
    counts as the largest value (last ascending, first descending), as in PyTorch."""
    if not descending:
        return xp.argsort(a, axis=axis, kind="stable")
    # Sorting the reversed array and reversing the result keeps ties in input order.
    reversed_order = xp.argsort(xp.flip(a, axis), axis=axis, kind="stable")
    return (a.shape[axis] - 1) - xp.flip(reversed_order, axis)


def _running(xp, a, axis: int, largest: bool):
    """Running maximum (or minimum) along ``axis`` by log-step doubling: ceil(log2 n)
    vectorized passes, NaN propagating, the same code on NumPy and CuPy."""
    out = a.copy()
    n = a.shape[axis]
    combine = xp.maximum if largest else xp.minimum
    shift = 1
    while shift < n:
        later = [slice(None)] * a.ndim
        earlier = [slice(None)] * a.ndim
        later[axis], earlier[axis] = slice(shift, None), slice(0, n - shift)
        out[tuple(later)] = combine(out[tuple(later)], out[tuple(earlier)])
        shift *= 2
    return out


def _along_index(xp, index, dim: int) -> tuple:
    """The advanced-index tuple that addresses ``index`` positions along ``dim``."""
    parts = []
    for axis, size in enumerate(index.shape):
        if axis == dim:
            parts.append(index)
        else:
            parts.append(xp.arange(size).reshape(
                [-1 if j == axis else 1 for j in range(index.ndim)]))
    return tuple(parts)


class GatherAlong(Function):
    """``out[..., j, ...] = x[..., index[..., j, ...], ...]`` along ``dim``; its backward
    is ``ScatterAlong``."""

    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.dim, ctx.shape = dim, x.shape
        ctx.save_for_backward(index)
        return ctx.xp.take_along_axis(x, index, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        return ScatterAlong.apply(grad, index, ctx.dim, ctx.shape), None, None


class ScatterAlong(Function):
    """A zero tensor of ``shape`` with ``src`` added at ``index`` along ``dim`` (repeated
    indices accumulate); its backward is ``GatherAlong``."""

    node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, src, index, dim, shape):
        ctx.dim = dim
        ctx.save_for_backward(index)
        out = ctx.xp.zeros(shape, src.dtype)
        backend.scatter_add(out, _along_index(ctx.xp, index, dim), src)
        return out

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        return GatherAlong.apply(grad, index, ctx.dim), None, None, None


class _Selection(Function):
    """Base of ops whose values are elements of the input picked along ``dim`` by an index
    (sort, topk, median, cummax/cummin): forward returns (values, indices); the gradient
    of the values is scattered back to the picked positions."""

    @staticmethod
    def _pick(ctx, x, index, dim, keepdim):
        values = ctx.xp.take_along_axis(x, index, axis=dim)
        ctx.dim, ctx.keepdim, ctx.shape = dim, keepdim, x.shape
        if x.dtype.kind == "f":
            ctx.save_for_backward(index)
        indices = index if keepdim else index.squeeze(dim)
        if not keepdim:
            values = values.squeeze(dim)
        indices = indices.astype(np.int64, copy=True)
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        (index,) = ctx.saved_tensors
        if not ctx.keepdim:
            grad = grad.unsqueeze(ctx.dim)
        return (ScatterAlong.apply(grad, index, ctx.dim, ctx.shape),) + (None,) * 8


def _as_1d(input: Tensor):
    """0-d inputs of dim ops behave as 1-element vectors; returns (tensor, was_0d)."""
    if input._data.ndim == 0:
        return input.reshape(1), True
    return input, False


def _squeeze_result(result, was_0d: bool, cls):
    if not was_0d:
        return cls(*result)
    return cls(*(r.reshape(()) for r in result))


def _no_bool(input: Tensor, op: str) -> None:
    """PyTorch has no order-statistics kernels for bool (argmax, median, topk...)."""
    if input._data.dtype == np.bool_:
        raise RuntimeError(f"{op}(): does not support bool input (convert with .int() or "
                           ".float() first)")


def _float_required(input: Tensor, op: str) -> None:
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"{op}(): expected input to have floating point or complex dtype "
                           f"but got {_scalar_name(input)}")


def _numpy_aliases(function):
    """Accept NumPy's ``axis=`` / ``keepdims=`` for ``dim`` / ``keepdim``, as PyTorch does."""
    name = function.__name__

    @functools.wraps(function)
    def with_aliases(*args, **kwargs):
        if kwargs:
            for alias, real in (("axis", "dim"), ("keepdims", "keepdim")):
                if alias in kwargs:
                    if real in kwargs:
                        raise TypeError(f"{name}(): got both '{real}' and its alias '{alias}'")
                    kwargs[real] = kwargs.pop(alias)
        return function(*args, **kwargs)

    return with_aliases


# ----------------------------------------------------------------------------- samples
def _reduce_samples(make):
    return [Sample((make((3, 4)),), name="all"),
            Sample((make((3, 4)), 1), name="dim 1"),
            Sample((make((2, 3, 4)), (0, 2)), name="dims (0, 2)"),
            Sample((make((2, 3, 4)), -1, True), name="keepdim"),
            Sample((make(()),), name="0-d")]


# ----------------------------------------------------------------------------- sum, mean
class Sum(Function):
    node_name = "SumBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.shape, ctx.dims, ctx.keepdim, ctx.in_dtype = x.shape, dims, keepdim, x.dtype
        if len(dims) != x.ndim or keepdim:
            ctx.node_name = "SumBackward1"
        return _accumulate(ctx.xp, x, dims, keepdim, dtype)

    @staticmethod
    def backward(ctx, grad):
        grad = _cast_back(grad, ctx.in_dtype)
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


def _accumulate(xp, x, dims, keepdim, dtype):
    """``sum`` in ``dtype``; float16 is accumulated in float32 (as PyTorch does), so long
    sums don't stall at float16's resolution."""
    if np.dtype(dtype) == np.float16:
        return xp.sum(x, axis=dims, keepdims=keepdim, dtype=np.float32).astype(np.float16)
    return xp.sum(x, axis=dims, keepdims=keepdim, dtype=dtype)


def _sum_dtype(x: Tensor, dtype):
    if dtype is not None:
        return dtypes.to_dtype(dtype)
    return dtypes.int64 if x._data.dtype.kind in "biu" else x.dtype


def _sum_samples(make):
    return _reduce_samples(make) + [
        Sample((make((3, 4)), 0), {"dtype": dtypes.float64}, name="dtype float64"),
        Sample((make.int((3, 4), -5, 5),), name="int")]


@register_op(methods=("sum",), samples=_sum_samples)
@_numpy_aliases
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    """``sum_i input_i`` over all elements, or over ``dim`` (int or tuple). Integers and
    bools sum to int64, as in PyTorch; ``dtype`` casts before summing."""
    ensure_tensor(input, "sum")
    dims = _reduced_dims(input, dim, "sum")
    out_dtype = _sum_dtype(input, dtype)
    return Sum.apply(input, dims, bool(keepdim), out_dtype.numpy)


class Mean(Function):
    node_name = "MeanBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.shape, ctx.dims, ctx.keepdim, ctx.in_dtype = x.shape, dims, keepdim, x.dtype
        ctx.count = _count(x.shape, dims)
        if len(dims) != x.ndim or keepdim:
            ctx.node_name = "MeanBackward1"
        with np.errstate(invalid="ignore", divide="ignore"):  # the mean of nothing is NaN
            wide = np.dtype(np.float32) if dtype == np.float16 else dtype
            total = ctx.xp.sum(x, axis=dims, keepdims=keepdim, dtype=wide)
            return (total / wide.type(ctx.count)).astype(dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        grad = _cast_back(grad, ctx.in_dtype)
        return (_expand_back(grad / ctx.count, ctx.shape, ctx.dims, ctx.keepdim),
                None, None, None)


def _mean_samples(make):
    return _reduce_samples(make) + [
        Sample((make((3, 4)), 1), {"dtype": dtypes.float64}, name="dtype float64")]


@register_op(methods=("mean",), samples=_mean_samples)
@_numpy_aliases
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """``sum(input) / n`` over all elements or ``dim``. Needs a floating-point input (or
    a floating ``dtype``, which the sum accumulates in)."""
    ensure_tensor(input, "mean")
    out_dtype = dtypes.to_dtype(dtype) if dtype is not None else input.dtype
    if out_dtype.numpy.kind != "f":
        raise RuntimeError(
            "mean(): could not infer output dtype. "
            + ("Input" if dtype is None else "Optional") + " dtype must be either a floating "
            f"point or complex dtype. Got: {_SCALAR_NAMES.get(out_dtype.name, out_dtype.name)}")
    dims = _reduced_dims(input, dim, "mean")
    return Mean.apply(input, dims, bool(keepdim), out_dtype.numpy)


def _nan_samples(make):
    x = make((3, 4))
    x.detach()._data[0, 1] = np.nan
    x.detach()._data[2, 3] = np.nan
    return [Sample((x,), name="all"), Sample((x, 1), name="dim"),
            Sample((x, (0, 1), True), name="keepdim")]


@register_op(methods=("nansum",), samples=_nan_samples)
@_numpy_aliases
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """``sum`` treating NaN as zero; NaN positions get no gradient."""
    ensure_tensor(input, "nansum")
    if input._data.dtype.kind == "f":
        input = where(input != input, 0.0, input)
        node = "NansumBackward0"
    else:
        node = None
    out = sum(input, dim, keepdim, dtype=dtype)
    if node and out.grad_fn is not None:
        out.grad_fn.node_name = node
    return out


@register_op(methods=("nanmean",), samples=_nan_samples)
@_numpy_aliases
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN elements: ``nansum(input) / count(not NaN)``."""
    ensure_tensor(input, "nanmean")
    _float_required(input, "nanmean")
    present = (input == input).sum(dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / present


# ----------------------------------------------------------------------------- prod
class Prod(Function):
    node_name = "ProdBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.shape, ctx.dims, ctx.keepdim, ctx.in_dtype = x.shape, dims, keepdim, x.dtype
        if len(dims) != x.ndim or keepdim:
            ctx.node_name = "ProdBackward1"
        if x.dtype.kind == "f":
            ctx.save_for_backward(x)
        return ctx.xp.prod(x, axis=dims, keepdims=keepdim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        # d/dx_i prod_j x_j = prod_{j != i} x_j, written so that zeros in x are exact and
        # the second derivative is right too: with P the product of the non-zero entries
        # and Z the product of the zero entries (1 if none), non-zero x_i get P / x_i * Z;
        # a zero x_i gets P times the product of the other zeros, whose value is 1 when it
        # is the only zero, 0 otherwise, and whose slope matters only with two zeros.
        (x,) = ctx.saved_tensors
        dims = ctx.dims
        g = _expand_back(_cast_back(grad, ctx.in_dtype), ctx.shape, dims, ctx.keepdim)
        zero = x == 0
        x_safe = where(zero, 1.0, x)
        p_safe = prod_dims(x_safe, dims)
        z_prod = prod_dims(where(zero, x, 1.0), dims)
        n_zeros = zero.sum(dims, keepdim=True)
        zero_sum = where(zero, x, 0.0).sum(dims, keepdim=True)
        other_zeros = where(n_zeros == 1, 1.0, where(n_zeros == 2, zero_sum - x, 0.0))
        return g * where(zero, p_safe * other_zeros, p_safe / x_safe * z_prod), None, None, None


def prod_dims(x: Tensor, dims: tuple) -> Tensor:
    """The product over several dims, kept (used by prod's own backward)."""
    return Prod.apply(x, dims, True, x._data.dtype)


def _with_zeros(t: Tensor, positions) -> Tensor:
    """A sample tensor with exact zeros written at ``positions``."""
    for position in positions:
        t.detach()._data[position] = 0.0
    return t


def _prod_samples(make):
    with_zero = _with_zeros(make((3, 4)), [(1, 2)])
    two_zeros = _with_zeros(make((2, 4)), [(0, 1), (0, 3)])
    return [Sample((make((3, 4)),), name="all"),
            Sample((make((3, 4)), 1), name="dim 1"),
            Sample((make((2, 3, 2)), -1, True), name="keepdim"),
            Sample((with_zero, 1), name="one zero"),
            Sample((two_zeros, 1), name="two zeros"),
            Sample((make(()),), name="0-d")]


@register_op(methods=("prod",), samples=_prod_samples)
@_numpy_aliases
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """``prod_i input_i`` over all elements or one ``dim``; integers and bools give int64.
    The gradient is exact with zeros in the input."""
    ensure_tensor(input, "prod")
    if dim is None:
        dims = tuple(range(input._data.ndim))
        keepdim = False
    else:
        dims = (wrap_dim(dim, input._data.ndim, "prod"),) if input._data.ndim else ()
    return Prod.apply(input, dims, bool(keepdim), _sum_dtype(input, dtype).numpy)


# ----------------------------------------------------------------------------- max, min
class MaxAll(Function):
    """max() / min() of all elements: the gradient is shared evenly among ties."""

    node_name = "MaxBackward1"

    @staticmethod
    def forward(ctx, x, largest):
        xp = ctx.xp
        _check_nonempty(x, (), "max" if largest else "min", True)
        out = xp.max(x) if largest else xp.min(x)
        if not largest:
            ctx.node_name = "MinBackward1"
        if x.dtype.kind == "f":  # NaN is the maximum where present; its copies share
            ties = (x == out) | (xp.isnan(x) & xp.isnan(out))
            ctx.save_for_backward(ties / ties.sum(dtype=x.dtype))
        return out

    @staticmethod
    def backward(ctx, grad):
        (share,) = ctx.saved_tensors
        return grad * share, None


class MaxDim(_Selection):
    """max(dim) / min(dim): values and indices; the gradient goes to the chosen index."""

    node_name = "MaxBackward0"

    @staticmethod
    def forward(ctx, x, dim, keepdim, largest):
        xp = ctx.xp
        _check_nonempty(x, (dim,), "max" if largest else "min", False)
        if not largest:
            ctx.node_name = "MinBackward0"
        index = xp.argmax(x, axis=dim, keepdims=True) if largest else \
            xp.argmin(x, axis=dim, keepdims=True)
        return _Selection._pick(ctx, x, index, dim, keepdim)


def _max_samples(make):
    return [Sample((make((3, 4)),), name="all"),
            Sample((make((3, 4)), 1), name="dim"),
            Sample((make((2, 3, 4)), 0, True), name="keepdim"),
            Sample((make((3, 4)), make((3, 4))), name="binary"),
            Sample((make(()), 0), name="0-d dim")]


def _max_or_min(input, dim, keepdim, other, largest: bool):
    name = "max" if largest else "min"
    ensure_tensor(input, name)
    if isinstance(dim, Tensor) and other is None:
        dim, other = None, dim  # max(a, b): the elementwise maximum
    if other is not None:
        return maximum(input, other) if largest else minimum(input, other)
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}(): keepdim=True needs a dim")
        return MaxAll.apply(input, largest)
    d = wrap_dim(dim, input._data.ndim, name)
    x, was_0d = _as_1d(input)
    result = MaxDim.apply(x, d, bool(keepdim), largest)
    return _squeeze_result(result, was_0d, MaxResult if largest else MinResult)


@register_op(methods=("max",), samples=_max_samples)
@_numpy_aliases
def max(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """The largest element (ties share the gradient); with ``dim``, ``(values, indices)``
    along it; with a second tensor, the elementwise maximum."""
    return _max_or_min(input, dim, keepdim, other, True)


@register_op(methods=("min",), samples=_max_samples)
@_numpy_aliases
def min(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """The smallest element; with ``dim``, ``(values, indices)``; with a second tensor,
    the elementwise minimum."""
    return _max_or_min(input, dim, keepdim, other, False)


class Amax(Function):
    """amax / amin over dims; ties share the gradient evenly, as in PyTorch."""

    node_name = "AmaxBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim, largest):
        _check_nonempty(x, dims, "amax" if largest else "amin", False)
        if not largest:
            ctx.node_name = "AminBackward0"
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        reduce = ctx.xp.amax if largest else ctx.xp.amin
        out = reduce(x, axis=dims, keepdims=keepdim)
        if x.dtype.kind == "f":
            ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        shape, dims, keepdim = ctx.shape, ctx.dims, ctx.keepdim
        ties = x == _keep(out, shape, dims, keepdim)
        count = ties.sum(dims, keepdim=True)
        return where(ties, _keep(grad, shape, dims, keepdim), 0.0) / count, None, None, None


def _amax_samples(make):
    # ties share the gradient, which finite differences cannot see: tests/ops/test_reduce.py
    return [Sample((make((3, 4)),), name="all"),
            Sample((make((2, 3, 4)), (0, 2)), name="dims (0, 2)"),
            Sample((make((2, 3, 4)), -1, True), name="keepdim"),
            Sample((make(()),), name="0-d")]


def _amax_or_amin(input, dim, keepdim, largest):
    name = "amax" if largest else "amin"
    ensure_tensor(input, name)
    dims = _reduced_dims(input, dim if dim != () else None, name)
    if input._data.size == 0 and (dim is None or dim == () or dim == []):
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    return Amax.apply(input, dims, bool(keepdim), largest)


@register_op(methods=("amax",), samples=_amax_samples)
@_numpy_aliases
def amax(input, dim=(), keepdim=False):
    """The maximum over ``dim`` (an int or tuple; all dims by default). Unlike ``max``,
    the gradient is shared evenly among equal maxima."""
    return _amax_or_amin(input, dim, keepdim, True)


@register_op(methods=("amin",), samples=_amax_samples)
@_numpy_aliases
def amin(input, dim=(), keepdim=False):
    """The minimum over ``dim``; the gradient is shared evenly among equal minima."""
    return _amax_or_amin(input, dim, keepdim, False)


class ArgMax(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x, dim, keepdim, largest):
        xp = ctx.xp
        find = xp.argmax if largest else xp.argmin
        if dim is None:
            out = find(x.reshape(-1))
            if keepdim:
                out = out.reshape((1,) * x.ndim)
        else:
            out = find(x, axis=dim, keepdims=keepdim)
        return xp.asarray(out).astype(np.int64, copy=False)


def _arg_samples(make):
    return [Sample((make((3, 4)),), name="all"),
            Sample((make((3, 4)), 1), name="dim"),
            Sample((make((2, 3, 4)), -2, True), name="keepdim"),
            Sample((make((3, 4)), None, True), name="all keepdim"),
            Sample((make.int((3, 4), -9, 9), 0), name="int")]


def _argmax_or_argmin(input, dim, keepdim, largest):
    name = "argmax" if largest else "argmin"
    ensure_tensor(input, name)
    _no_bool(input, name)
    if dim is not None:
        if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
            raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
        d = wrap_dim(dim, input._data.ndim, name)
        if input._data.ndim == 0:
            return ArgMax.apply(input, None, False, largest)
        _check_nonempty(input._data, (d,), name, False)
        return ArgMax.apply(input, d, bool(keepdim), largest)
    if input._data.size == 0:
        raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                         "input.numel() == 0.")
    return ArgMax.apply(input, None, bool(keepdim), largest)


@register_op(methods=("argmax",), samples=_arg_samples, differentiable=False)
@_numpy_aliases
def argmax(input, dim=None, keepdim=False):
    """The index (int64) of the largest element, in the flattened input or along ``dim``;
    the first one among equals."""
    return _argmax_or_argmin(input, dim, keepdim, True)


@register_op(methods=("argmin",), samples=_arg_samples, differentiable=False)
@_numpy_aliases
def argmin(input, dim=None, keepdim=False):
    """The index (int64) of the smallest element, flattened or along ``dim``."""
    return _argmax_or_argmin(input, dim, keepdim, False)


# ----------------------------------------------------------------------------- var, std
class Variance(Function):
    """var / std / var_mean / std_mean: ``sum((x - mean)^2) / max(0, n - correction)``
    (and its square root), optionally with the mean as a second output."""

    node_name = "VarBackward0"

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim, take_sqrt, with_mean):
        xp = ctx.xp
        n = _count(x.shape, dims)
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        ctx.divisor, ctx.count = builtins.max(0, n - correction), n
        ctx.take_sqrt, ctx.with_mean = take_sqrt, with_mean
        ctx.node_name = ("Std" if take_sqrt else "Var") + ("Mean" if with_mean else "") + \
            "Backward0"
        with np.errstate(invalid="ignore", divide="ignore"):
            centre = xp.mean(x, axis=dims, keepdims=True) if n else \
                xp.full(_keepdim_shape(x.shape, dims), np.nan, x.dtype)
            diff = x - centre
            total = xp.sum(diff * diff, axis=dims, keepdims=keepdim)
            out = (total / x.dtype.type(ctx.divisor)).astype(x.dtype, copy=False)
            if take_sqrt:
                out = xp.sqrt(out)
        ctx.save_for_backward(x, out)
        if not with_mean:
            return out
        mean_out = centre if keepdim else centre.reshape(out.shape)
        return out, mean_out.copy()

    @staticmethod
    def backward(ctx, grad, grad_mean=None):
        x, out = ctx.saved_tensors
        shape, dims, keepdim = ctx.shape, ctx.dims, ctx.keepdim
        g = _keep(grad, shape, dims, keepdim)
        centred = x - x.mean(dims, keepdim=True)
        if ctx.take_sqrt:
            # d std = (x - mean) / (divisor * std); 0 where std is 0, as in PyTorch
            std = _keep(out, shape, dims, keepdim)
            std_safe = where(std == 0, 1.0, std)
            g = where(std == 0, 0.0, g / std_safe) / 2
        result = g * centred * (2.0 / ctx.divisor if ctx.divisor else math.inf)
        if ctx.with_mean and grad_mean is not None:
            result = result + _keep(grad_mean, shape, dims, keepdim) / ctx.count
        return result, None, None, None, None, None


def _variance(input, dim, unbiased, keepdim, correction, op, take_sqrt, with_mean):
    ensure_tensor(input, op)
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}(): pass either 'unbiased' or 'correction', not both")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if not isinstance(correction, numbers.Real):
        raise TypeError(f"{op}(): argument 'correction' must be a number, not "
                        f"{type(correction).__name__}")
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"{op}(): std and var only support floating point and complex "
                           f"dtypes, got {_scalar_name(input)} (convert with .float())")
    dims = _reduced_dims(input, dim, op)
    n = _count(tuple(input.shape), dims)
    if n - correction <= 0:
        warnings.warn(f"{op.split('_')[0]}(): degrees of freedom is <= 0. Correction should be "
                      "strictly less than the reduction factor (input numel divided by output "
                      "numel).", UserWarning, stacklevel=3)
    result = Variance.apply(input, dims, correction, bool(keepdim), take_sqrt, with_mean)
    return tuple(result) if with_mean else result


def _var_samples(make):
    return [Sample((make((3, 4)),), name="all"),
            Sample((make((3, 4)), 1), name="dim"),
            Sample((make((2, 3, 4)), (0, 2)), {"keepdim": True}, name="dims keepdim"),
            Sample((make((3, 4)), 0), {"correction": 0}, name="correction 0"),
            Sample((make((3, 4)), -1, False), name="unbiased False")]


@register_op(methods=("var",), samples=_var_samples)
@_numpy_aliases
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance ``sum((x - mean)^2) / (n - correction)`` over all elements or ``dim``;
    ``correction=1`` (Bessel) by default, ``unbiased=False`` means ``correction=0``."""
    return _variance(input, dim, unbiased, keepdim, correction, "var", False, False)


@register_op(methods=("std",), samples=_var_samples)
@_numpy_aliases
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation: ``sqrt(var(...))``; the gradient where it is 0 is 0."""
    return _variance(input, dim, unbiased, keepdim, correction, "std", True, False)


@register_op(samples=_var_samples)
@_numpy_aliases
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var(input, ...), mean(input, ...))`` in one pass."""
    return _variance(input, dim, unbiased, keepdim, correction, "var_mean", False, True)


@register_op(samples=_var_samples)
@_numpy_aliases
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std(input, ...), mean(input, ...))`` in one pass."""
    return _variance(input, dim, unbiased, keepdim, correction, "std_mean", True, True)


# ----------------------------------------------------------------------------- norms
class VectorNorm(Function):
    """``(sum |x|^p)^(1/p)`` over dims; p = inf / -inf are max / min of |x|, p = 0 counts
    non-zeros. Gradients are 0 where the norm (or, for p < 1, the element) is 0."""

    node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, ord, dims, keepdim):
        xp = ctx.xp
        ctx.shape, ctx.dims, ctx.keepdim, ctx.ord = x.shape, dims, keepdim, ord
        a = xp.abs(x)
        if ord == math.inf or ord == -math.inf:
            _check_nonempty(x, dims, "linalg.vector_norm", False)
            out = (xp.amax if ord > 0 else xp.amin)(a, axis=dims, keepdims=keepdim)
        elif ord == 0:
            out = xp.sum(a != 0, axis=dims, keepdims=keepdim).astype(x.dtype)
        elif ord == 1:
            out = xp.sum(a, axis=dims, keepdims=keepdim)
        elif ord == 2:
            out = xp.sqrt(xp.sum(a * a, axis=dims, keepdims=keepdim))
        else:
            with np.errstate(divide="ignore"):
                out = xp.sum(a ** ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)
        out = xp.asarray(out).astype(x.dtype, copy=False)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        shape, dims, keepdim, p = ctx.shape, ctx.dims, ctx.keepdim, ctx.ord
        if p == 0:
            return None, None, None, None
        g = _keep(grad, shape, dims, keepdim)
        if p == 1:
            return g * sign(x), None, None, None
        norm = _keep(out, shape, dims, keepdim)
        if p == math.inf or p == -math.inf:
            ties = _abs(x) == norm
            count = ties.sum(dims, keepdim=True)  # 0 only in rows holding NaN: gradient 0
            count = where(count == 0, 1, count)
            return where(ties, g * sign(x), 0.0) / count, None, None, None
        norm_safe = where(norm == 0, 1.0, norm)
        if p == 2:
            return x * where(norm == 0, 0.0, g / norm_safe), None, None, None
        x_safe = where(x == 0, 1.0, x)
        element = where(x == 0, 0.0, sign(x_safe) * _abs(x_safe) ** (p - 1))
        return element * where(norm == 0, 0.0, g / norm_safe ** (p - 1)), None, None, None


def _check_norm_input(input, op):
    ensure_tensor(input, op)
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. "
                           f"Got {_scalar_name(input)}")


@register_op("vector_norm", namespace="linalg",
             samples=lambda make: [
                 Sample((make((3, 4)),), name="2 all"),
                 Sample((make((3, 4)), 3, 1), name="p=3"),
                 Sample((make((2, 3, 4)), math.inf, (0, 2), True), name="inf keepdim"),
                 Sample((make((3, 4)), -math.inf, -1), name="-inf"),
                 Sample((make((3, 4)), 1, 0), name="p=1"),
                 Sample((make((3, 4)), 0.5), name="p=0.5"),
                 Sample((make((3, 4)), 0, 1), name="p=0")])
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector ``ord``-norm over ``dim`` (all elements by default):
    ``(sum |x|^ord)^(1/ord)``, ``max |x|`` for inf, ``min |x|`` for -inf, the count of
    non-zeros for 0. The gradient at a zero norm is 0 (not NaN), as in PyTorch."""
    _check_norm_input(x, "linalg.vector_norm")
    if isinstance(ord, str) or not isinstance(ord, numbers.Real):
        raise TypeError(f"linalg.vector_norm(): argument 'ord' must be a number, not "
                        f"{type(ord).__name__}")
    if dtype is not None:
        x = x.to(dtypes.to_dtype(dtype))
    dims = _reduced_dims(x, dim, "linalg.vector_norm")
    return VectorNorm.apply(x, float(ord), dims, bool(keepdim))


def _svdvals():
    function = NAMESPACES["linalg"].get("svdvals")
    if function is None:
        raise RuntimeError("linalg.matrix_norm: ord 'nuc', 2 and -2 need singular values "
                           "(ember.linalg.svdvals), which this build does not register")
    return function


def _matrix_dims(A, dim, op):
    if A._data.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got "
                           + (" ".join(str(d) for d in dim) if isinstance(dim, (tuple, list))
                              else str(dim)))
    d0, d1 = (wrap_dim(d, A._data.ndim, op) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{op}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


@register_op("matrix_norm", namespace="linalg",
             samples=lambda make: [
                 Sample((make((3, 4)),), name="fro"),
                 Sample((make((2, 3, 3)), 1), name="1 batched"),
                 Sample((make((3, 4)), math.inf), {"keepdim": True}, name="inf keepdim"),
                 Sample((make((3, 4)), -1, (1, 0)), name="-1 swapped dims"),
                 Sample((make((4, 3)), -math.inf), name="-inf")]
             + ([Sample((make((3, 4)), "nuc"), name="nuc"),
                 Sample((make((3, 4)), 2), name="2")]
                if "linalg.svdvals" in OPS else []))
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Matrix norms over the two dims ``dim``: 'fro' ``sqrt(sum |a_ij|^2)``, 'nuc' (sum
    of singular values), 1 / -1 (max / min column abs-sum), inf / -inf (max / min row
    abs-sum), 2 / -2 (largest / smallest singular value)."""
    op = "linalg.matrix_norm"
    _check_norm_input(A, op)
    if dtype is not None:
        A = A.to(dtypes.to_dtype(dtype))
    d0, d1 = _matrix_dims(A, dim, op)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        rest = [i for i in range(A._data.ndim) if i not in (d0, d1)]
        singular = _svdvals()(A.permute(*rest, d0, d1))
        out = singular.sum(-1) if ord == "nuc" else (
            amax(singular, -1) if ord == 2 else amin(singular, -1))
        if keepdim:
            for d in sorted((d0, d1)):
                out = out.unsqueeze(d)
        return out
    if ord in (1, -1, math.inf, -math.inf):
        # 1: abs-sum down each column (over d0), then the max over columns (d1)
        summed, picked = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = _abs(A).sum(summed, keepdim=True)
        out = (amax if ord > 0 else amin)(sums, picked, keepdim=True)
        if keepdim:
            return out
        return out.reshape(tuple(s for i, s in enumerate(out.shape) if i not in (d0, d1)))
    raise RuntimeError(f"{op}: Order {ord} not supported.")


def _norm_samples(make):
    return [Sample((make((3, 4)),), name="fro all"),
            Sample((make((3, 4)), 3), name="p=3"),
            Sample((make((2, 3, 4)), "fro", (0, 2), True), name="fro dims keepdim"),
            Sample((make((3, 4)), math.inf, 1), name="inf dim"),
            Sample((make((3, 4)), 1), {"dim": 0}, name="p=1")]


@register_op(methods=("norm",), samples=_norm_samples)
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The norm of ``input``: a number ``p`` gives the vector p-norm over ``dim`` (all
    elements by default); 'fro' the 2-norm over ``dim``; 'nuc' the nuclear norm of the
    matrices in the last two dims (or ``dim``)."""
    _check_norm_input(input, "linalg.vector_norm")
    if isinstance(p, str):
        if p == "fro":
            if dim is not None and not isinstance(dim, (tuple, list)):
                dim = (dim,)
            if dim is not None and len(dim) > 2:
                raise RuntimeError(f"norm(): 'fro' needs at most 2 dims, got {list(dim)}")
            return vector_norm(input, 2, dim, keepdim, dtype=dtype)
        if p == "nuc":
            return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim,
                               dtype=dtype)
        raise RuntimeError(f"norm(): p must be a number, 'fro' or 'nuc', got {p!r}")
    if p is None:
        p = 2
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


# ----------------------------------------------------------------------------- logsumexp
class LogSumExp(Function):
    """``m + log(sum(exp(x - m)))`` with ``m`` the max (0 where it is infinite), so large
    inputs don't overflow and rows of -inf give -inf."""

    node_name = "LogsumexpBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        xp = ctx.xp
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        if x.size:
            m = xp.amax(x, axis=dims, keepdims=True)
            m = xp.where(xp.isinf(m), x.dtype.type(0), m)
        else:
            m = xp.zeros(_keepdim_shape(x.shape, dims), x.dtype)
        with np.errstate(divide="ignore"):
            out = xp.log(xp.sum(xp.exp(x - m), axis=dims, keepdims=True)) + m
        if not keepdim:
            out = out.reshape(tuple(s for i, s in enumerate(x.shape) if i not in dims))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        shape, dims, keepdim = ctx.shape, ctx.dims, ctx.keepdim
        return _keep(grad, shape, dims, keepdim) * (x - _keep(out, shape, dims, keepdim)).exp(), \
            None, None


@register_op(methods=("logsumexp",), exported_in=("special",),
             samples=lambda make: [
                 Sample((make((3, 4)), 1), name="dim"),
                 Sample((make((2, 3, 4)), (0, 2), True), name="dims keepdim"),
                 Sample((make((3, 4), low=50.0, high=60.0), -1), name="large"),
                 Sample((make(()), 0), name="0-d")])
@_numpy_aliases
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input)))`` over ``dim``, computed stably; integers become the
    default float dtype."""
    ensure_tensor(input, "logsumexp")
    if input._data.dtype.kind != "f":
        input = input.to(dtypes.get_default_dtype())
    dims = _reduced_dims(input, dim, "logsumexp")
    return LogSumExp.apply(input, dims, bool(keepdim))


# ----------------------------------------------------------------------------- scans
class Cumsum(Function):
    """Running sum along ``dim`` (from the end when ``reverse``); its backward is the
    running sum in the other direction."""

    node_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx, x, dim, reverse, dtype):
        xp = ctx.xp
        ctx.dim, ctx.reverse, ctx.in_dtype = dim, reverse, x.dtype
        if reverse:
            return xp.flip(xp.cumsum(xp.flip(x, dim), axis=dim, dtype=dtype), dim).copy()
        return xp.cumsum(x, axis=dim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        grad = _cast_back(grad, ctx.in_dtype)
        return Cumsum.apply(grad, ctx.dim, not ctx.reverse, grad._data.dtype), None, None, None


def _scan_dim(input, dim, op):
    if dim is None:
        raise TypeError(f"{op}() missing 1 required positional argument: 'dim'")
    return wrap_dim(dim, input._data.ndim, op)


def _scan_samples(make):
    return [Sample((make((3, 4)), 1), name="dim 1"),
            Sample((make((2, 3, 4)), -3), name="dim -3"),
            Sample((make((5,)), 0), name="vector"),
            Sample((make(()), 0), name="0-d")]


@register_op(methods=("cumsum",),
             samples=lambda make: _scan_samples(make) + [
                 Sample((make((3, 4)), 0), {"dtype": dtypes.float64}, name="dtype"),
                 Sample((make.int((3, 4), -5, 5), 1), name="int")])
@_numpy_aliases
def cumsum(input, dim=None, *, dtype=None):
    """``out_i = sum_{j <= i} input_j`` along ``dim``; integers and bools give int64."""
    ensure_tensor(input, "cumsum")
    d = _scan_dim(input, dim, "cumsum")
    x, was_0d = _as_1d(input)
    out = Cumsum.apply(x, d, False, _sum_dtype(input, dtype).numpy)
    return out.reshape(()) if was_0d else out


class Cumprod(Function):
    node_name = "CumprodBackward0"

    @staticmethod
    def forward(ctx, x, dim, dtype):
        ctx.dim, ctx.in_dtype = dim, x.dtype
        out = ctx.xp.cumprod(x, axis=dim, dtype=dtype)
        if x.dtype.kind == "f":
            ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        g = _cast_back(grad, ctx.in_dtype)
        return _cumprod_grad(x, out, g, ctx.dim, is_grad_enabled()), None, None


def _cumprod_grad(x: Tensor, out: Tensor, g: Tensor, dim: int, twice: bool) -> Tensor:
    """The gradient of ``out = cumprod(x)``: ``grad_k = sum_{i >= k} g_i prod_{j <= i, j != k}
    x_j``, in O(n) per row and exact with zeros.

    Before the first zero ``z`` of a row it is ``rev_cumsum(g * out)_k / x_k``; at ``z`` it is
    the same sum over the running product with ``x_z`` replaced by 1; after ``z`` every term
    holds ``x_z``, so the value is 0 but the slope in ``x_z`` is the gradient with ``x_z``
    replaced by 1. ``twice`` (a graph is being built) keeps that slope, so second
    derivatives are exact with zeros as well.
    """
    zero = x == 0
    zeros_so_far = cumsum(zero, dim)
    before = zeros_so_far == 0
    first = zero & (zeros_so_far == 1)
    dtype = g._data.dtype
    part_before = Cumsum.apply(g * out, dim, True, dtype) / where(before, x, 1.0)
    x_first_as_one = where(first, 1.0, x)
    out_first_as_one = Cumprod.apply(x_first_as_one, dim, x._data.dtype)
    part_first = Cumsum.apply(g * out_first_as_one, dim, True, dtype)
    after = 0.0
    if twice:
        with no_grad():  # only its value matters: it is multiplied by x_z, which is 0
            rest = _cumprod_grad(x_first_as_one, out_first_as_one, g, dim, False)
        after = where(first, x, 0.0).sum(dim, keepdim=True) * rest
    return where(before, part_before, where(first, part_first, after))


@register_op(methods=("cumprod",),
             samples=lambda make: _scan_samples(make) + [
                 Sample((make.int((3, 4), -3, 3), 1), name="int"),
                 Sample((_with_zeros(make((3, 5)), [(0, 1), (1, 0), (1, 3), (2, 4)]), 1),
                        name="zeros")])
@_numpy_aliases
def cumprod(input, dim=None, *, dtype=None):
    """``out_i = prod_{j <= i} input_j`` along ``dim``; integers and bools give int64. The
    gradient (and its gradient) is exact with zeros in the input."""
    ensure_tensor(input, "cumprod")
    d = _scan_dim(input, dim, "cumprod")
    x, was_0d = _as_1d(input)
    out = Cumprod.apply(x, d, _sum_dtype(input, dtype).numpy)
    return out.reshape(()) if was_0d else out


class Cummax(_Selection):
    node_name = "CummaxBackward0"

    @staticmethod
    def forward(ctx, x, dim, largest):
        xp = ctx.xp
        if not largest:
            ctx.node_name = "CumminBackward0"
        running = _running(xp, x, dim, largest)
        # The index is the last position (up to i) where x reached the running extreme; a
        # NaN stays the extreme, so its position sticks until the next NaN.
        reached = x == running
        if x.dtype.kind == "f":
            reached |= xp.isnan(x)
        positions = xp.arange(x.shape[dim]).reshape(
            [-1 if i == dim else 1 for i in range(x.ndim)])
        index = _running(xp, xp.where(reached, positions, 0), dim, True)
        return _Selection._pick(ctx, x, index, dim, True)


def _cummax_or_cummin(input, dim, largest):
    name = "cummax" if largest else "cummin"
    ensure_tensor(input, name)
    d = _scan_dim(input, dim, name)
    x, was_0d = _as_1d(input)
    if x._data.size == 0:  # nothing to scan: empty values and indices
        xp = backend.xp_for_device(x._device)
        return (CummaxResult if largest else CumminResult)(
            x.clone(), Tensor._make(xp.zeros(x._data.shape, np.int64), x._device))
    result = Cummax.apply(x, d, largest)
    return _squeeze_result(result, was_0d, CummaxResult if largest else CumminResult)


@register_op(methods=("cummax",), samples=_scan_samples)
@_numpy_aliases
def cummax(input, dim):
    """``(values, indices)``: the running maximum along ``dim`` and where it was reached
    (the latest position among equals; NaN propagates). Cost: O(n log n) per slice
    (a log-step scan)."""
    return _cummax_or_cummin(input, dim, True)


@register_op(methods=("cummin",), samples=_scan_samples)
@_numpy_aliases
def cummin(input, dim):
    """``(values, indices)``: the running minimum along ``dim`` and where it was reached."""
    return _cummax_or_cummin(input, dim, False)


# ----------------------------------------------------------------------------- logic
class AllAny(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x, dims, keepdim, every):
        xp = ctx.xp
        out = (xp.all if every else xp.any)(x, axis=dims, keepdims=keepdim)
        out = xp.asarray(out)
        return out.astype(np.uint8) if x.dtype == np.uint8 else out


def _logic_samples(make):
    return [Sample((make.bool((3, 4)),), name="all"),
            Sample((make.bool((3, 4)), 1), name="dim"),
            Sample((make.int((2, 3, 4), 0, 2), (0, 2), True), name="int dims keepdim"),
            Sample((make((3, 4)), 0), name="float")]


@register_op(methods=("all",), samples=_logic_samples, differentiable=False)
@_numpy_aliases
def all(input, dim=None, keepdim=False):  # noqa: A001
    """True where every element (over ``dim``) is non-zero; bool result (uint8 for a
    uint8 input, as in PyTorch)."""
    ensure_tensor(input, "all")
    return AllAny.apply(input, _reduced_dims(input, dim, "all"), bool(keepdim), True)


@register_op(methods=("any",), samples=_logic_samples, differentiable=False)
@_numpy_aliases
def any(input, dim=None, keepdim=False):  # noqa: A001
    """True where some element (over ``dim``) is non-zero; bool result."""
    ensure_tensor(input, "any")
    return AllAny.apply(input, _reduced_dims(input, dim, "any"), bool(keepdim), False)


class CountNonzero(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x, dims):
        return ctx.xp.asarray(ctx.xp.sum(x != 0, axis=dims)).astype(np.int64)


@register_op(methods=("count_nonzero",), differentiable=False,
             samples=lambda make: [Sample((make.int((3, 4), -1, 2),), name="all"),
                                   Sample((make.int((2, 3, 4), -1, 2), (0, 2)), name="dims"),
                                   Sample((make((3, 4)), 1), name="float")])
@_numpy_aliases
def count_nonzero(input, dim=None):
    """The number of non-zero elements (int64), over all elements or ``dim``."""
    ensure_tensor(input, "count_nonzero")
    return CountNonzero.apply(input, _reduced_dims(input, dim, "count_nonzero"))


# ----------------------------------------------------------------------------- median
class Median(_Selection):
    node_name = "MedianBackward1"

    @staticmethod
    def forward(ctx, x, dim, keepdim, ignore_nan):
        xp = ctx.xp
        n = x.shape[dim]
        if ignore_nan:
            ctx.node_name = "NanmedianBackward1"
        order = _stable_argsort(xp, x, dim, False)  # NaN last
        if x.dtype.kind == "f":
            valid = xp.sum(~xp.isnan(x), axis=dim, keepdims=True)
            if ignore_nan:  # the lower median of the non-NaN values (NaN if none)
                k = xp.maximum((valid - 1) // 2, 0)
            else:  # any NaN makes the median NaN: the first NaN in sorted order
                k = xp.where(valid < n, valid, (n - 1) // 2)
        else:
            k = xp.full(_keepdim_shape(x.shape, (dim,)), (n - 1) // 2, np.int64)
        index = xp.take_along_axis(order, k.astype(np.int64), axis=dim)
        return _Selection._pick(ctx, x, index, dim, keepdim)


def _median(input, dim, keepdim, ignore_nan):
    name = "nanmedian" if ignore_nan else "median"
    ensure_tensor(input, name)
    _no_bool(input, name)
    result_type = NanmedianResult if ignore_nan else MedianResult
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}(): keepdim=True needs a dim")
        if input._data.size == 0:
            _float_required(input, name)
            return Tensor._make(backend.xp_for_device(input._device).full((), np.nan,
                                                                         input._data.dtype),
                                input._device)
        values, _ = Median.apply(input.reshape(-1), 0, False, ignore_nan)
        if values.grad_fn is not None:
            values.grad_fn.node_name = "NanmedianBackward0" if ignore_nan else \
                "MedianBackward0"
        return values
    d = wrap_dim(dim, input._data.ndim, name)
    x, was_0d = _as_1d(input)
    _check_nonempty(x._data, (d,), name, False)
    return _squeeze_result(Median.apply(x, d, bool(keepdim), ignore_nan), was_0d, result_type)


def _median_samples(make):
    return [Sample((make((3, 5)),), name="all odd"),
            Sample((make((3, 4)),), name="all even"),
            Sample((make((3, 4)), 1), name="dim"),
            Sample((make((2, 3, 4)), 0, True), name="keepdim"),
            Sample((make(()), 0), name="0-d")]


@register_op(methods=("median",), samples=_median_samples)
@_numpy_aliases
def median(input, dim=None, keepdim=False):
    """The lower median (the element at (n - 1) // 2 in sorted order) of all elements;
    with ``dim``, ``(values, indices)`` along it. NaN anywhere gives NaN. Cost: one sort."""
    return _median(input, dim, keepdim, False)


def _nanmedian_samples(make):
    samples = _median_samples(make)
    x = make((3, 4))
    x.detach()._data[0, 1] = np.nan
    x.detach()._data[2, 0] = np.nan
    return samples + [Sample((x, 1), name="nan dim")]


@register_op(methods=("nanmedian",), samples=_nanmedian_samples)
@_numpy_aliases
def nanmedian(input, dim=None, keepdim=False):
    """``median`` ignoring NaN (NaN only where a slice is all NaN)."""
    return _median(input, dim, keepdim, True)


class Kthvalue(_Selection):
    node_name = "KthvalueBackward0"

    @staticmethod
    def forward(ctx, x, k, dim, keepdim):
        order = _stable_argsort(ctx.xp, x, dim, False)
        index = ctx.xp.take(order, ctx.xp.arange(k - 1, k), axis=dim)
        return _Selection._pick(ctx, x, index, dim, keepdim)


@register_op(methods=("kthvalue",),
             samples=lambda make: [Sample((make((3, 5)), 2), name="k=2"),
                                   Sample((make((4, 3)), 4, 0, True), name="dim 0 keepdim"),
                                   Sample((make((2, 3, 4)), 1, -2), name="k=1"),
                                   Sample((make(()), 1), name="0-d")])
@_numpy_aliases
def kthvalue(input, k, dim=-1, keepdim=False):
    """``(values, indices)`` of the ``k``-th smallest element (k from 1) along ``dim``.
    Cost: one sort along ``dim``."""
    ensure_tensor(input, "kthvalue")
    _no_bool(input, "kthvalue")
    d = wrap_dim(dim, input._data.ndim, "kthvalue")
    x, was_0d = _as_1d(input)
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TypeError(f"kthvalue(): argument 'k' must be int, not {type(k).__name__}")
    if not 1 <= k <= x._data.shape[d]:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d} "
                           f"(k={k}, size {x._data.shape[d]})")
    return _squeeze_result(Kthvalue.apply(x, int(k), d, bool(keepdim)), was_0d,
                           KthvalueResult)


# ----------------------------------------------------------------------------- sorting
class Sort(_Selection):
    node_name = "SortBackward0"

    @staticmethod
    def forward(ctx, x, dim, descending):
        index = _stable_argsort(ctx.xp, x, dim, descending)
        return _Selection._pick(ctx, x, index, dim, True)


def _sort_samples(make):
    return [Sample((make((3, 4)),), name="last dim"),
            Sample((make((3, 4)), 0, True), name="dim 0 descending"),
            Sample((make((2, 3, 4)),), {"dim": -2, "stable": True}, name="stable"),
            Sample((make(()),), name="0-d")]


@register_op(methods=("sort",), samples=_sort_samples)
@_numpy_aliases
def sort(input, dim=-1, descending=False, *, stable=False):
    """``(values, indices)`` with ``input`` sorted along ``dim``; NaN sorts as the largest
    value. The sort is always stable (equal elements keep their order). Cost:
    O(n log n) per slice; the gradient scatters back along the indices."""
    ensure_tensor(input, "sort")
    if isinstance(dim, bool):
        raise TypeError("sort(): argument 'dim' must be int, not bool")
    d = wrap_dim(dim, input._data.ndim, "sort")
    x, was_0d = _as_1d(input)
    return _squeeze_result(Sort.apply(x, d, bool(descending)), was_0d, SortResult)


class ArgSort(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x, dim, descending):
        return _stable_argsort(ctx.xp, x, dim, descending).astype(np.int64, copy=False)


@register_op(methods=("argsort",), differentiable=False,
             samples=lambda make: [Sample((make((3, 4)),), name="last dim"),
                                   Sample((make((3, 4)), 0, True), name="descending"),
                                   Sample((make.int((10,), 0, 4),), {"stable": True},
                                          name="stable ties")])
@_numpy_aliases
def argsort(input, dim=-1, descending=False, *, stable=False):
    """The indices (int64) that sort ``input`` along ``dim`` (``sort(...).indices``)."""
    ensure_tensor(input, "argsort")
    d = wrap_dim(dim, input._data.ndim, "argsort")
    x, was_0d = _as_1d(input)
    out = ArgSort.apply(x, d, bool(descending))
    return out.reshape(()) if was_0d else out


@register_op(methods=("msort",), samples=lambda make: [Sample((make((4, 3)),)),
                                                       Sample((make((5,)),))])
def msort(input):
    """``sort(input, dim=0).values``."""
    ensure_tensor(input, "msort")
    return sort(input, 0).values


class Topk(_Selection):
    node_name = "TopkBackward0"

    @staticmethod
    def forward(ctx, x, k, dim, largest):
        order = _stable_argsort(ctx.xp, x, dim, largest)
        index = ctx.xp.take(order, ctx.xp.arange(k), axis=dim)
        return _Selection._pick(ctx, x, index, dim, True)


@register_op(methods=("topk",),
             samples=lambda make: [Sample((make((3, 5)), 2), name="k=2"),
                                   Sample((make((3, 5)), 3, 0), name="dim 0"),
                                   Sample((make((2, 3, 4)), 2, -1, False), name="smallest"),
                                   Sample((make((4,)), 4), {"sorted": True}, name="k=n"),
                                   Sample((make((3, 4)), 0, 1), name="k=0")])
@_numpy_aliases
def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    """``(values, indices)`` of the ``k`` largest (or smallest) elements along ``dim``,
    in sorted order (NaN counts as the largest). Cost: one sort along ``dim``."""
    ensure_tensor(input, "topk")
    _no_bool(input, "topk")
    d = wrap_dim(dim, input._data.ndim, "topk")
    x, was_0d = _as_1d(input)
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TypeError(f"topk(): argument 'k' must be int, not {type(k).__name__}")
    if not 0 <= k <= x._data.shape[d]:
        raise RuntimeError(f"topk(): selected index k out of range (k={k}, but dim {dim} has "
                           f"size {x._data.shape[d]})")
    return _squeeze_result(Topk.apply(x, int(k), d, bool(largest)), was_0d, TopkResult)


# ----------------------------------------------------------------------------- utilities
AminmaxResult = namedtuple("aminmax", ["min", "max"])
ModeResult = namedtuple("mode", ["values", "indices"])


def _aminmax_samples(make):
    return [Sample((make((3, 4)),), name="all"),
            Sample((make((3, 4)),), {"dim": -1}, name="dim -1"),
            Sample((make((2, 3, 2)),), {"dim": 1, "keepdim": True}, name="keepdim"),
            Sample((make((3, 4)),), {"keepdim": True}, name="all keepdim"),
            Sample((make(()),), {"dim": 0}, name="0-d")]


@register_op(methods=("aminmax",), samples=_aminmax_samples)
def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` over ``dim`` (all elements by default) as a named tuple; the gradient
    of each is shared evenly among equal extrema (as ``amin``/``amax``)."""
    ensure_tensor(input, "aminmax")
    if dim is None:
        if input._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        dims = tuple(range(input._data.ndim))
    else:
        if isinstance(dim, (tuple, list)):
            raise TypeError("aminmax(): argument 'dim' must be int, not "
                            f"{type(dim).__name__}")
        dims = (dim,)
    lo = amin(input, dims, keepdim)
    hi = amax(input, dims, keepdim)
    return AminmaxResult(lo, hi)


def _dist_samples(make):
    return [Sample((make((3, 4)), make((3, 4))), name="p=2"),
            Sample((make((2, 3)), make((3,))), {"p": 1}, name="p=1 broadcast"),
            Sample((make((4,)), make((4,)), math.inf), name="p=inf"),
            Sample((make((2, 2)), make((2, 2)), 3.0), name="p=3")]


@register_op(methods=("dist",), samples=_dist_samples)
def dist(input, other, p=2):
    """The p-norm of ``input - other`` (broadcast): ``(sum |x - y|^p)^(1/p)``, a 0-d
    tensor; p may be inf, -inf or 0 (the count of differing elements)."""
    for arg, value in (("input", input), ("other", other)):
        if not isinstance(value, Tensor):
            raise TypeError(f"dist(): argument '{arg}' must be Tensor, not "
                            f"{type(value).__name__}")
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"dist(): argument 'p' must be a number, not {type(p).__name__}")
    if input._data.dtype.kind != "f" or other._data.dtype.kind != "f":
        raise RuntimeError(f"dist(): is not defined for {input.dtype.name} and "
                           f"{other.dtype.name} (it needs floating-point tensors)")
    return vector_norm(input - other, p)


def _diff_samples(make):
    return [Sample((make((3, 4)),), name="last dim"),
            Sample((make((4, 3)),), {"n": 2, "dim": 0}, name="n=2 dim 0"),
            Sample((make((2, 3)),), {"prepend": make((2, 1)), "append": make((2, 2))},
                   name="prepend and append"),
            Sample((make((3,)), 4), name="n > size"),
            Sample((make.bool((5,)),), name="bool")]


@register_op(methods=("diff",), samples=_diff_samples)
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along ``dim``: ``out[i] = x[i + 1] - x[i]`` applied
    ``n`` times, after concatenating ``prepend`` and ``append`` (same number of dims) to
    ``input``; bool tensors use ``!=`` (logical xor). Each pass shortens ``dim`` by 1."""
    ensure_tensor(input, "diff")
    if input._data.ndim == 0:
        raise RuntimeError("diff(): expects input to be at least one-dimensional")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"diff(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"diff(): order must be non-negative but got {n}")
    d = wrap_dim(dim, input._data.ndim, "diff")
    parts = []
    for arg, value in (("prepend", prepend), ("input", input), ("append", append)):
        if value is None:
            continue
        if not isinstance(value, Tensor):
            raise TypeError(f"diff(): argument '{arg}' must be Tensor, not "
                            f"{type(value).__name__}")
        if value._data.ndim != input._data.ndim:
            raise RuntimeError(f"diff(): expects {arg} to have the same number of dimensions "
                               f"as input ({input._data.ndim}), but got {value._data.ndim}")
        for k, (size, own) in enumerate(zip(input._data.shape, value._data.shape)):
            if k != d and size != own:
                raise RuntimeError(f"diff(): expects the shape of {arg} to match that of input "
                                   f"except along dim {d}; input.size({k}) = {size}, but "
                                   f"{arg}.size({k}) = {own}")
        parts.append(value)
    x = parts[0] if len(parts) == 1 else NAMESPACES["ember"]["cat"](parts, dim=d)
    logical = x._data.dtype == np.bool_
    for _ in range(int(n)):
        length = x._data.shape[d]
        if length == 0:
            break
        later, earlier = x.narrow(d, 1, length - 1), x.narrow(d, 0, length - 1)
        x = later.logical_xor(earlier) if logical else later - earlier
    return x


# ----------------------------------------------------------------------------- quantiles
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    name = "nanquantile" if ignore_nan else "quantile"
    ensure_tensor(input, name)
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype "
                           f"(got {input.dtype.name})")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    xp = backend.xp_for_device(input._device)
    if isinstance(q, Tensor):
        if q._data.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor (got "
                               f"{q._data.ndim} dimensions)")
        if q.device != input.device:
            raise RuntimeError(f"{name}() q tensor must be on the same device as the input "
                               f"tensor (q is on {q.device}, input on {input.device})")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor "
                               f"(q is {q.dtype.name}, input is {input.dtype.name})")
        scalar_q = q._data.ndim == 0
        qs = q._data.reshape(-1)
        if bool(((qs < 0) | (qs > 1)).any()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    elif isinstance(q, numbers.Real) and not isinstance(q, bool):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        scalar_q = True
        qs = xp.asarray([q], dtype=input._data.dtype)
    else:
        raise TypeError(f"{name}(): argument 'q' must be a float or a Tensor, not "
                        f"{type(q).__name__}")
    if input._data.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if dim is None:
        x, d = input.reshape(-1), 0
    else:
        d = wrap_dim(dim, input._data.ndim, name)
        x = input.reshape(1) if input._data.ndim == 0 else input
    n = x._data.shape[d]
    ordered = sort(x, dim=d).values.movedim(d, -1)  # NaN last
    raw = ordered._data
    last = n - 1
    if ignore_nan:
        valid = (~xp.isnan(raw)).sum(axis=-1, keepdims=True).astype(raw.dtype)
        ranks = qs * (valid - 1)
        ranks = xp.where(ranks < 0, last, ranks)
    else:
        has_nan = xp.isnan(raw[..., -1:])
        ranks = xp.where(has_nan, last, qs * last)
    ranks = xp.broadcast_to(ranks, raw.shape[:-1] + (qs.shape[0],))
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.round(ranks)
    below = xp.floor(ranks).astype(np.int64)
    result = GatherAlong.apply(ordered, Tensor._make(below, input._device), raw.ndim - 1)
    if interpolation in ("linear", "midpoint"):
        above = xp.ceil(ranks).astype(np.int64)
        upper = GatherAlong.apply(ordered, Tensor._make(above, input._device), raw.ndim - 1)
        weights = xp.full(ranks.shape, 0.5, raw.dtype) if interpolation == "midpoint" \
            else (ranks - below).astype(raw.dtype)
        result = NAMESPACES["ember"]["lerp"](result, upper, Tensor._make(weights,
                                                                         input._device))
    result = result.movedim(-1, 0)  # (Q, ...)
    if keepdim:
        if dim is None:
            result = result.reshape((qs.shape[0],) + (1,) * input._data.ndim)
        elif input._data.ndim:
            result = result.unsqueeze(d + 1)
    if scalar_q:
        result = result.reshape(result.shape[1:])
    return result


def _quantile_samples(make, nan=False):
    x = make((3, 5))
    q = make((3,), low=0.05, high=0.95, requires_grad=False)
    extra = []
    if nan:
        x._data[0, 1] = np.nan
        # a slice of NaNs only gives NaN; which NaN gets the gradient is arbitrary
        # (PyTorch's unstable sort), so that sample has no gradient to compare
        empty_row = make((2, 4), requires_grad=False)
        empty_row._data[1, :] = np.nan
        empty_row._data[0, 2] = np.nan
        extra = [Sample((empty_row, q, 1), name="a row of NaNs")]
    return extra + [
        Sample((x, 0.3), {"dim": 1}, name="scalar q"),
        Sample((make((2, 4)), q), name="tensor q, all"),
        Sample((x, q, 0, True), name="dim 0 keepdim"),
        Sample((make((6,)), 0.4), {"dim": -1, "interpolation": "lower"}, name="lower"),
        Sample((make((2, 4)), q), {"dim": 1, "interpolation": "higher"},
               name="higher"),
        Sample((make((2, 5)), 0.5), {"dim": 1, "interpolation": "midpoint"},
               name="midpoint"),
        Sample((make((2, 3)), q), {"dim": 0, "interpolation": "nearest",
                                   "keepdim": True}, name="nearest")]


@register_op(methods=("quantile",), samples=_quantile_samples)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles of ``input`` along ``dim`` (of all elements when None): with the
    sorted values v[0..n-1] and rank r = q (n - 1), 'linear' gives
    ``v[floor r] + (r - floor r)(v[ceil r] - v[floor r])``; 'lower', 'higher', 'nearest'
    pick v[floor r], v[ceil r], v[round r]; 'midpoint' averages v[floor r] and v[ceil r].
    A 1-D ``q`` adds a leading dim of its length. Any NaN in a slice gives NaN. The
    gradient flows to the picked elements. Cost: one sort, O(n log n) per slice."""
    return _quantile(input, q, dim, keepdim, interpolation, False)


@register_op(methods=("nanquantile",), samples=functools.partial(_quantile_samples, nan=True))
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` ignoring NaNs: the ranks run over the non-NaN values of each slice
    (NaN when a slice has none)."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


class Mode(_Selection):
    node_name = "ModeBackward0"

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        xp = ctx.xp
        n = x.shape[dim]
        order = _stable_argsort(xp, x, dim, False)
        s = xp.take_along_axis(x, order, axis=dim)
        shape = [1] * x.ndim
        shape[dim] = n
        pos = xp.arange(n).reshape(shape)
        first = [slice(None)] * x.ndim
        rest = [slice(None)] * x.ndim
        first[dim], rest[dim] = slice(0, n - 1), slice(1, n)
        change = s[tuple(rest)] != s[tuple(first)]  # a new value starts at i + 1
        edge_shape = list(x.shape)
        edge_shape[dim] = 1
        edge = xp.ones(edge_shape, dtype=bool)
        starts = xp.concatenate([edge, change], axis=dim)
        ends = xp.concatenate([change, edge], axis=dim)
        start = _running(xp, xp.where(starts, pos, 0), dim, True)
        flipped = xp.flip(xp.where(ends, n - 1 - pos, 0), axis=dim)
        end = n - 1 - xp.flip(_running(xp, flipped, dim, True), axis=dim)
        count = end - start + 1
        best = xp.expand_dims(xp.argmax(count, axis=dim), dim)  # first: the smallest value
        last = xp.take_along_axis(end, best, axis=dim)  # its last occurrence
        index = xp.take_along_axis(order, last, axis=dim)
        return _Selection._pick(ctx, x, index, dim, keepdim)


def _mode_samples(make):
    def values(shape, choices):
        data = make.numpy(shape)
        data[...] = np.asarray(choices)[make.rng.integers(0, len(choices), size=shape)]
        # repeated values: finite differences would break the ties, so no gradcheck here
        t = make(shape, requires_grad=False)
        t._data[...] = backend.xp_for_device(t._device).asarray(data, dtype=t._data.dtype)
        return t
    return [Sample((values((3, 6), [0.5, -1.25, 2.0]),), name="last dim"),
            Sample((values((5, 2), [1.5, -0.75]), 0, True), name="dim 0 keepdim"),
            Sample((make((4,)),), name="all distinct"),
            Sample((make(()),), name="0-d")]


@register_op(methods=("mode",), samples=_mode_samples)
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest among equally frequent ones)
    and the index of its last occurrence, as a named tuple ``(values, indices)``; the
    gradient flows to that element. Cost: one sort per slice."""
    ensure_tensor(input, "mode")
    _no_bool(input, "mode")
    d = wrap_dim(dim, input._data.ndim, "mode")
    x, was_0d = _as_1d(input)
    _check_nonempty(x._data, (d,), "mode", False)
    return _squeeze_result(Mode.apply(x, d, bool(keepdim)), was_0d, ModeResult)


# ----------------------------------------------------------------------------- covariance
def _cov_samples(make):
    return [Sample((make((3, 5)),), name="variables x observations"),
            Sample((make((6,)),), {"correction": 0}, name="1-D, correction 0"),
            Sample((make((2, 4)),), {"fweights": make.int((4,), 1, 4)}, name="fweights"),
            Sample((make((2, 4)),), {"aweights": make((4,), low=0.5, high=2.0),
                                     "fweights": make.int((4,), 1, 3)},
                   name="aweights and fweights"),
            Sample((make((1, 5)),), {"aweights": make((5,), low=0.5, high=2.0),
                                     "correction": 0}, name="one variable")]


@register_op(methods=("cov",), samples=_cov_samples)
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the rows (variables) of ``input`` over its columns (observations):
    with weights w = fweights * aweights and mean m = sum(w x) / sum(w),
    ``C = (x - m) diag(w) (x - m)^T / (sum w - correction * sum(w aweights) / sum w)``
    (``N - correction`` without weights). A 1-D input is one variable (a 0-d result)."""
    ensure_tensor(input, "cov")
    if input._data.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got "
                           f"an input with {input._data.ndim} dimensions")
    x = input if input._data.ndim == 2 else input.reshape(1, -1)
    if x._data.dtype.kind != "f":
        x = x.to(dtypes.get_default_dtype())
    observations = x._data.shape[1]
    if isinstance(correction, bool) or not isinstance(correction, numbers.Real):
        raise TypeError(f"cov(): argument 'correction' must be a number, not "
                        f"{type(correction).__name__}")
    for arg, w, integral in (("fweights", fweights, True), ("aweights", aweights, False)):
        if w is None:
            continue
        if not isinstance(w, Tensor):
            raise TypeError(f"cov(): argument '{arg}' must be Tensor, not {type(w).__name__}")
        if w._data.ndim > 1:
            raise RuntimeError(f"cov(): expected {arg} to have one or fewer dimensions but "
                               f"got {arg} with {w._data.ndim} dimensions")
        if (w._data.dtype.kind in "iu") != integral or w._data.dtype.kind == "b":
            kind = "integral" if integral else "floating point"
            raise RuntimeError(f"cov(): expected {arg} to have {kind} dtype but got {arg} "
                               f"with {w.dtype.name} dtype")
        if w._data.size != observations:
            raise RuntimeError(f"cov(): expected {arg} to have the same numel as there are "
                               f"observations in the input but got {w._data.size} != "
                               f"{observations}")
        if bool((w._data < 0).any()):
            raise RuntimeError(f"cov(): {arg} cannot be negative")
    w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        mean_ = x.mean(dim=1, keepdim=True)
        factor = observations - correction
    else:
        w = w.reshape(-1)
        w_sum = w.sum()
        mean_ = (x * w).sum(dim=1, keepdim=True) / w_sum
        if correction == 0 or aweights is None:
            factor = w_sum - correction
        else:
            factor = w_sum - correction * (w * aweights).sum() / w_sum
    if isinstance(factor, Tensor):
        if bool((factor._data <= 0).all()):
            warnings.warn("cov(): degrees of freedom is <= 0", UserWarning, stacklevel=2)
            factor = factor * 0
    elif factor <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0", UserWarning, stacklevel=2)
        factor = 0.0
    centered = x - mean_
    weighted = centered if w is None else centered * w
    result = centered.matmul(weighted.transpose(0, 1))
    if isinstance(factor, Tensor):
        result = result / factor
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            result = result / float(factor)
    return result.squeeze()


@register_op(methods=("corrcoef",), samples=lambda make: [
    Sample((make((3, 5)),), name="three variables"),
    Sample((make((2, 4)),), name="two variables"),
    Sample((make((5,)),), name="1-D")])
def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input``:
    ``R_ij = C_ij / sqrt(C_ii C_jj)`` with C = ``cov(input)``, clipped to [-1, 1]."""
    ensure_tensor(input, "corrcoef")
    if input._data.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but "
                           f"got an input with {input._data.ndim} dimensions")
    c = cov(input)
    if c._data.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.reshape(-1, 1)
    c = c / std.reshape(1, -1)
    return c.clamp(-1, 1)
