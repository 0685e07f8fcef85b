"""Reductions and scans: sum, mean, prod, max/min, amax/amin, aminmax, argmax/argmin,
var/std, logsumexp, cumulative ops, all/any, count_nonzero, diff, cov/corrcoef, and the
helpers the order statistics in ``sorting`` and the norms in ``norms`` share.

Ops that pick elements (max/min over a dim, cummax, and sort, topk, median in
``sorting``) return ``(values, indices)`` named tuples like PyTorch's
``torch.return_types``; their gradients flow back along the indices through ember's one
gather/scatter-add pair (``indexing.AdvancedIndex`` / ``indexing.IndexScatter``), each the
other's backward, so gradients of gradients work.
"""
from __future__ import annotations

import builtins
import functools
import math
import numbers
import warnings

import numpy as np

from .. import backend, dtypes
from ..autograd.backward_math import TENSOR_MATH
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..return_types import result_type
from ..tensor import Tensor
from ._util import dtype_not_implemented, ensure_tensor, wrap_dim, wrap_dims
from .comparison import maximum, minimum, where
from .indexing import AdvancedIndex, IndexScatter
from .registry import NAMESPACES, Sample, register_op

# PyTorch returns (values, indices) named tuples from these ops (torch.return_types.*).
MaxResult = result_type("max", ["values", "indices"])
MinResult = result_type("min", ["values", "indices"])
CummaxResult = result_type("cummax", ["values", "indices"])
CumminResult = result_type("cummin", ["values", "indices"])


# ----------------------------------------------------------------------------- helpers
def _reduced_dims(input: Tensor, dim, op: str) -> tuple:
    """Sorted non-negative dims to reduce; a 0-d tensor accepts dim 0 / -1 and reduces
    nothing."""
    dims = wrap_dims(dim, input._data.ndim, op)
    return dims if input._data.ndim else ()


def _no_dims(dim) -> bool:
    """``dim=()`` or ``[]``: most reductions read it as all dims; all/any reduce nothing."""
    return isinstance(dim, (tuple, list)) and not dim


def _reduced_shape(shape: tuple, dims: tuple) -> tuple:
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _keepdim_shape(shape: tuple, dims: tuple) -> tuple:
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _expand_back(grad, shape: tuple, dims: tuple, keepdim: bool, m):
    """Broadcast a reduced gradient back over the reduced dims (in the backward
    namespace ``m``)."""
    if len(dims) == len(shape):  # a full reduction: the 0-d gradient broadcasts as it is
        return m.expand(grad, shape)
    return m.expand(_keep(grad, shape, dims, keepdim, m), shape)


def _keep(t, shape: tuple, dims: tuple, keepdim: bool, m=TENSOR_MATH):
    """A reduced array (``m`` the array namespace) or tensor reshaped as if the reduction
    had used keepdim=True."""
    if not keepdim and dims:
        return m.reshape(t, _keepdim_shape(shape, dims))
    return t


def _count(shape: tuple, dims: tuple) -> int:
    return int(np.prod([shape[d] for d in dims])) if dims else 1


def _cast_back(grad, numpy_dtype, m):
    """A gradient in the input's dtype when ``dtype=`` made the output wider or narrower."""
    return m.astype(grad, numpy_dtype)


def _check_nonempty(x, dims: tuple, op: str, all_dims: bool) -> None:
    """PyTorch's errors for max-like reductions over nothing."""
    if all_dims and x.size == 0:
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    for d in dims:
        if x.shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


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


class GatherAlong:
    """``x`` read along ``dim`` at ``index`` (an int64 Tensor shaped like ``x`` but along
    ``dim``): the gather (``AdvancedIndex``) addressed like ``take_along_dim``."""

    @staticmethod
    def apply(x: Tensor, index: Tensor, dim: int) -> Tensor:
        xp = backend.xp_for_device(x._device)
        return AdvancedIndex.apply(x, _along_index(xp, index._data, dim))


class _Selection(Function):
    """Base of ops whose values are elements of the input picked along ``dim`` by an index
    (sort, topk, median, cummax/cummin): forward returns (values, indices); the gradient
    of the values is scattered back to the picked positions (``IndexScatter``, which
    assigns when no position is picked twice: ``unique``)."""

    array_backward = True
    _materialize_grads = False  # the indices never get a gradient: no zeros for them
    unique = True

    @staticmethod
    def _pick(ctx, x, index, dim, keepdim):
        values = ctx.xp.take_along_axis(x, index, axis=dim)
        ctx.dim, ctx.keepdim, ctx.shape = dim, keepdim, x.shape
        if x.dtype.kind in "fV":
            ctx.index = index
        indices = index if keepdim else index.squeeze(dim)
        if not keepdim:
            values = values.squeeze(dim)
        indices = indices.astype(np.int64, copy=True)
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        m = ctx.math
        if not ctx.keepdim:
            grad = m.unsqueeze(grad, ctx.dim)
        index = ctx.index
        along = _along_index(backend.xp_of(index), index, ctx.dim)
        return (m.apply(IndexScatter, grad, ctx.shape, along, not ctx.unique),) + (None,) * 8


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
    if input._data.dtype.kind not in "fV":
        raise RuntimeError(f"{op}(): expected input to have floating point or complex dtype "
                           f"but got {input.dtype.scalar_name}")


# ----------------------------------------------------------------------------- samples
def _reduce_samples(make):
    return [Sample((make((3, 4)),), name="all"),
            Sample((make((3, 4)), 1), name="dim 1"),
            Sample((make((2, 3, 4)), (0, 2)), name="dims (0, 2)"),
            Sample((make((2, 3, 4)), -1, True), name="keepdim"),
            Sample((make(()),), name="0-d")]


# ----------------------------------------------------------------------------- sum, mean
class Sum(Function):
    array_backward = True
    node_name = "SumBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.shape, ctx.dims, ctx.keepdim, ctx.in_dtype = x.shape, dims, keepdim, x.dtype
        if len(dims) != x.ndim or keepdim:
            ctx.node_name = "SumBackward1"
        return _accumulate(ctx.xp, x, dims, keepdim, dtype)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        grad = _cast_back(grad, ctx.in_dtype, m)
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim, m), None, None, None


def _accumulate(xp, x, dims, keepdim, dtype):
    """``sum`` in ``dtype``; float16 is accumulated in float32 (as PyTorch does), so long
    sums don't stall at float16's resolution."""
    if dtype == _FLOAT16:
        return x.sum(axis=dims, keepdims=keepdim, dtype=np.float32).astype(np.float16)
    if xp is np:  # without ndarray.sum's Python wrapper
        return np.add.reduce(x, axis=dims, dtype=dtype, keepdims=keepdim)
    return x.sum(axis=dims, keepdims=keepdim, dtype=dtype)


_FLOAT16 = np.dtype(np.float16)


def _sum_dtype(x: Tensor, dtype):
    if dtype is not None:
        return dtypes.to_dtype(dtype)
    return dtypes.int64 if x._data.dtype.kind in "biu" else x.dtype


def _sum_samples(make):
    return _reduce_samples(make) + [
        Sample((make((3, 4)), 0), {"dtype": dtypes.float64}, name="dtype float64"),
        Sample((make.int((3, 4), -5, 5),), name="int")]


@register_op(methods=("sum",), samples=_sum_samples, fast=("reduction", Sum))
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """``sum_i input_i`` over all elements, or over ``dim`` (int or tuple). Integers and
    bools sum to int64, as in PyTorch; ``dtype`` casts before summing."""
    ensure_tensor(input, "sum")
    dims = _reduced_dims(input, dim, "sum")
    out_dtype = _sum_dtype(input, dtype)
    return Sum.apply(input, dims, bool(keepdim), out_dtype.numpy)


class Mean(Function):
    array_backward = True
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
        m = ctx.math
        grad = _cast_back(grad, ctx.in_dtype, m)
        return (_expand_back(grad / ctx.count, ctx.shape, ctx.dims, ctx.keepdim, m),
                None, None, None)


def _mean_samples(make):
    return _reduce_samples(make) + [
        Sample((make((3, 4)), 1), {"dtype": dtypes.float64}, name="dtype float64")]


@register_op(methods=("mean",), samples=_mean_samples, fast=("reduction", Mean))
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """``sum(input) / n`` over all elements or ``dim``. Needs a floating-point input (or
    a floating ``dtype``, which the sum accumulates in)."""
    ensure_tensor(input, "mean")
    out_dtype = dtypes.to_dtype(dtype) if dtype is not None else input.dtype
    if out_dtype.numpy.kind not in "fV":
        raise RuntimeError(
            "mean(): could not infer output dtype. "
            + ("Input" if dtype is None else "Optional") + " dtype must be either a floating "
            f"point or complex dtype. Got: {out_dtype.scalar_name}")
    dims = _reduced_dims(input, dim, "mean")
    return Mean.apply(input, dims, bool(keepdim), out_dtype.numpy)


def _nan_samples(make):
    x = make((3, 4))
    x.detach()._data[0, 1] = np.nan
    x.detach()._data[2, 3] = np.nan
    return [Sample((x,), name="all"), Sample((x, 1), name="dim"),
            Sample((x, (0, 1), True), name="keepdim")]


@register_op(methods=("nansum",), samples=_nan_samples)
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """``sum`` treating NaN as zero; NaN positions get no gradient."""
    ensure_tensor(input, "nansum")
    if input._data.dtype.kind in "fV":
        input = where(input != input, 0.0, input)
        node = "NansumBackward0"
    else:
        node = None
    out = sum(input, dim, keepdim, dtype=dtype)
    if node and out.grad_fn is not None:
        out.grad_fn.node_name = node
    return out


@register_op(methods=("nanmean",), samples=_nan_samples)
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN elements: ``nansum(input) / count(not NaN)``."""
    ensure_tensor(input, "nanmean")
    _float_required(input, "nanmean")
    present = (input == input).sum(dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / present


# ----------------------------------------------------------------------------- prod
class Prod(Function):
    array_backward = True
    node_name = "ProdBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.shape, ctx.dims, ctx.keepdim, ctx.in_dtype = x.shape, dims, keepdim, x.dtype
        if len(dims) != x.ndim or keepdim:
            ctx.node_name = "ProdBackward1"
        if x.dtype.kind in "fV":
            ctx.save_for_backward(x)
        return ctx.xp.prod(x, axis=dims, keepdims=keepdim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (x,) = ctx.saved_tensors
        dims, dtype = ctx.dims, ctx.in_dtype
        g = _expand_back(_cast_back(grad, dtype, m), ctx.shape, dims, ctx.keepdim, m)
        # host arrays (NumPy's, or ember.compile's recording of them, which then keeps this
        # backward's own call: the check reads values) divide; CuPy would sync to check
        host = m.arrays and m.xp.ndarray is np.ndarray
        others = _others_by_division(x, dims) if host else None
        if others is None:
            others = _product_of_others(m, x, dims, dtype)
        return g * others, None, None, None


def _others_by_division(x, dims: tuple):
    """``prod_{j != i} x_j`` on NumPy arrays as ``P / x_i`` (P: the product of the non-zero
    entries), several times faster than NumPy's cumulative products; None where some P is
    not a normal number (0 or subnormal by underflow, inf, nan), and so inexact."""
    with np.errstate(all="ignore"):
        zero = x == 0
        safe = np.where(zero, x.dtype.type(1), x)
        p = np.multiply.reduce(safe, axis=dims, keepdims=True)
        size = np.abs(p)
        if not ((size >= np.finfo(x.dtype).tiny) & (size < np.inf)).all():
            return None
        if not zero.any():
            return p / safe
        n_zeros = zero.sum(axis=dims, keepdims=True)
        # a zero entry: P if it is the only zero, else 0; the others: 0 where a zero is
        return np.where(zero, np.where(n_zeros == 1, p, 0), np.where(n_zeros == 0, p / safe, 0)
                        ).astype(x.dtype, copy=False)


def _product_of_others(m, x, dims: tuple, dtype):
    """``prod_{j != i} x_j`` over ``dims`` for every ``i``: the exclusive cumulative products
    from both sides, multiplied. No division, so zeros are exact, and no product of all the
    entries, which can overflow or underflow where the product of the others does not; its
    gradient (through Cumprod's, exact with zeros) gives exact second derivatives too."""
    if not dims:
        return m.ones_like(x)
    if len(dims) == 1:
        return _others_along(m, x, dims[0], dtype)
    # several dims: moved to the end and flattened into one
    shape = x.shape
    kept = [d for d in range(len(shape)) if d not in dims]
    moved = m.permute(x, kept + list(dims))
    rows = m.reshape(moved, tuple(shape[d] for d in kept) + (_count(shape, dims),))
    others = m.reshape(_others_along(m, rows, len(kept), dtype), moved.shape)
    return m.permute(others, [(kept + list(dims)).index(d) for d in range(len(shape))])


def _others_along(m, x, axis: int, dtype):
    n = x.shape[axis]
    if n <= 1:
        return m.ones_like(x)
    one = m.ones_like(m.narrow(x, axis, 0, 1))
    left = m.apply(Cumprod, m.narrow(x, axis, 0, n - 1), axis, dtype)
    right = m.apply(Cumprod, m.flip(m.narrow(x, axis, 1, n - 1), (axis,)), axis, dtype)
    return m.cat([one, left], axis) * m.flip(m.cat([one, right], axis), (axis,))


def prod_dims(x: Tensor, dims: tuple) -> Tensor:
    """The product over several dims, kept."""
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
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """``prod_i input_i`` over all elements or one ``dim``; integers and bools give int64.
    The gradient is exact with zeros in the input."""
    ensure_tensor(input, "prod")
    if dim is None:
        dims = tuple(range(input._data.ndim))
        keepdim = False
    else:
        d = wrap_dim(dim, input._data.ndim, "prod")  # (a 0-d input takes -1 and 0)
        dims = (d,) if input._data.ndim else ()
    return Prod.apply(input, dims, bool(keepdim), _sum_dtype(input, dtype).numpy)


# ----------------------------------------------------------------------------- max, min
class MaxAll(Function):
    """max() / min() of all elements: the gradient is shared evenly among ties."""

    array_backward = True
    node_name = "MaxBackward1"

    @staticmethod
    def forward(ctx, x, largest):
        xp = ctx.xp
        _check_nonempty(x, (), "max" if largest else "min", True)
        out = xp.max(x) if largest else xp.min(x)
        if not largest:
            ctx.node_name = "MinBackward1"
        if x.dtype.kind in "fV":  # NaN is the maximum where present; its copies share
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
def max(input, dim=None, keepdim=False, *, other=None):
    """The largest element (ties share the gradient); with ``dim``, ``(values, indices)``
    along it; with a second tensor, the elementwise maximum."""
    return _max_or_min(input, dim, keepdim, other, True)


@register_op(methods=("min",), samples=_max_samples)
def min(input, dim=None, keepdim=False, *, other=None):
    """The smallest element; with ``dim``, ``(values, indices)``; with a second tensor,
    the elementwise minimum."""
    return _max_or_min(input, dim, keepdim, other, False)


class Amax(Function):
    """amax / amin over dims; ties share the gradient evenly, as in PyTorch."""

    array_backward = True
    node_name = "AmaxBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim, largest):
        _check_nonempty(x, dims, "amax" if largest else "amin", False)
        if not largest:
            ctx.node_name = "AminBackward0"
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        reduce = ctx.xp.amax if largest else ctx.xp.amin
        out = reduce(x, axis=dims, keepdims=keepdim)
        if x.dtype.kind in "fV":
            ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, out = ctx.saved_tensors
        shape, dims, keepdim = ctx.shape, ctx.dims, ctx.keepdim
        ties = m.cast(x == _keep(out, shape, dims, keepdim, m), grad)
        # times the mask, not a where: a NaN gradient reaches every element (PyTorch's)
        count = m.sum(ties, dims, True)
        return _keep(grad, shape, dims, keepdim, m) / count * ties, None, None, None


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
def amax(input, dim=(), keepdim=False):
    """The maximum over ``dim`` (an int or tuple; all dims by default). Unlike ``max``,
    the gradient is shared evenly among equal maxima."""
    return _amax_or_amin(input, dim, keepdim, True)


@register_op(methods=("amin",), samples=_amax_samples)
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
def argmax(input, dim=None, keepdim=False):
    """The index (int64) of the largest element, in the flattened input or along ``dim``;
    the first one among equals."""
    return _argmax_or_argmin(input, dim, keepdim, True)


@register_op(methods=("argmin",), samples=_arg_samples, differentiable=False)
def argmin(input, dim=None, keepdim=False):
    """The index (int64) of the smallest element, flattened or along ``dim``."""
    return _argmax_or_argmin(input, dim, keepdim, False)


# ----------------------------------------------------------------------------- var, std
class Variance(Function):
    """var / std / var_mean / std_mean: ``sum((x - mean)^2) / max(0, n - correction)``
    (and its square root), optionally with the mean as a second output."""

    array_backward = True
    _materialize_grads = False  # var_mean: either output may go unused
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
        # half types work in float32 (PyTorch's accumulator), rounded once at the end
        work = x if x.dtype in (np.float32, np.float64) else x.astype(np.float32)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if n:
                centre = xp.mean(work, axis=dims, keepdims=True)
                diff = work - centre
                diff = xp.multiply(diff, diff, out=diff) if diff.ndim else diff * diff
                total = xp.sum(diff, axis=dims, keepdims=True)
            else:
                centre = xp.full(_keepdim_shape(x.shape, dims), np.nan, work.dtype)
                total = xp.zeros(centre.shape, work.dtype)
            out = (total / work.dtype.type(ctx.divisor)).astype(work.dtype, copy=False)
            if take_sqrt:
                out = xp.sqrt(out)
            # a sum (of values or of squares) past the dtype's limit: redo those slices on
            # scaled values (NumPy: only when one is not finite; CuPy: always, a check
            # would sync)
            if n and (xp is not np or not (_all_finite(centre) and _all_finite(total))):
                out, centre = _variance_scaled(xp, work, dims, ctx.divisor, take_sqrt,
                                               centre, total, out)
            out = out.astype(x.dtype, copy=False)
            if not keepdim:
                out = out.reshape(_reduced_shape(x.shape, dims))
        ctx.save_for_backward(x, out)
        if not with_mean:
            return out
        mean_out = centre if keepdim else centre.reshape(out.shape)
        return out, mean_out.astype(x.dtype, copy=True)

    @staticmethod
    def backward(ctx, grad, grad_mean=None):
        m = ctx.math
        x, out = ctx.saved_tensors
        shape, dims, keepdim = ctx.shape, ctx.dims, ctx.keepdim
        result = None
        if grad is not None:
            g = _keep(grad, shape, dims, keepdim, m)
            centred = x - m.mean(x, dims, True)
            if ctx.take_sqrt:
                # d std = (x - mean) / (divisor * std); 0 where std is 0, as in PyTorch
                # (whose 2 * std may overflow to inf near the limit: a 0 gradient there)
                std = _keep(out, shape, dims, keepdim, m)
                std_safe = m.where(std == 0, 1.0, std)
                with np.errstate(over="ignore"):
                    g = m.where(std == 0, 0.0, g / (2 * std_safe))
            result = g * centred * (2.0 / ctx.divisor if ctx.divisor else math.inf)
        if ctx.with_mean and grad_mean is not None:
            spread = _expand_back(grad_mean / ctx.count, shape, dims, keepdim, m)
            result = spread if result is None else result + spread
        return result, None, None, None, None, None


def _all_finite(array) -> bool:
    return math.isfinite(array.item()) if array.size == 1 else bool(np.isfinite(array).all())


def _variance_scaled(xp, x, dims, divisor, take_sqrt, centre, total, out):
    """var (or std) and mean, keepdims, where ``centre`` or ``total`` overflowed. Each
    slice is scaled by a power of two (exact) so that its largest magnitude is below 1,
    centred on the plain mean or, where that overflowed, on its first value plus the mean
    offset from it (so equal values give 0), and scaled back: a result overflows only
    when the true variance does, as with PyTorch's float64 accumulation. The other slices
    keep the plain pass's bits."""
    largest = xp.max(xp.abs(x), axis=dims, keepdims=True)
    exponent = xp.frexp(largest)[1]
    exponent = xp.where(xp.isfinite(largest) & (exponent > 0), exponent, 0)
    scaled = xp.ldexp(x, -exponent)
    first = scaled[tuple(slice(0, 1) if d in dims else slice(None) for d in range(x.ndim))]
    plain = xp.isfinite(centre)
    shifted = xp.where(plain, xp.ldexp(centre, -exponent),
                       first + xp.mean(scaled - first, axis=dims, keepdims=True))
    diff = scaled - shifted
    spread = xp.sum(diff * diff, axis=dims, keepdims=True) / x.dtype.type(divisor)
    if take_sqrt:
        fixed = xp.ldexp(xp.sqrt(spread), exponent)
    else:
        fixed = xp.ldexp(spread, 2 * exponent)
    overflowed = ~(xp.isfinite(centre) & xp.isfinite(total))
    out = xp.where(overflowed, fixed, out)
    centre = xp.where(plain, centre, xp.ldexp(shifted, exponent))
    return out, centre


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
    if input._data.dtype.kind not in "fV":
        raise RuntimeError(f"{op}(): std and var only support floating point and complex "
                           f"dtypes, got {input.dtype.scalar_name} (convert with .float())")
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
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance ``sum((x - mean)^2) / (n - correction)`` over all elements or ``dim``;
    ``correction=1`` (Bessel) by default, ``unbiased=False`` means ``correction=0``."""
    return _variance(input, dim, unbiased, keepdim, correction, "var", False, False)


@register_op(methods=("std",), samples=_var_samples)
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation: ``sqrt(var(...))``; the gradient where it is 0 is 0."""
    return _variance(input, dim, unbiased, keepdim, correction, "std", True, False)


@register_op(samples=_var_samples)
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var(input, ...), mean(input, ...))`` in one pass."""
    return _variance(input, dim, unbiased, keepdim, correction, "var_mean", False, True)


@register_op(samples=_var_samples)
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std(input, ...), mean(input, ...))`` in one pass."""
    return _variance(input, dim, unbiased, keepdim, correction, "std_mean", True, True)


# ----------------------------------------------------------------------------- logsumexp
class LogSumExp(Function):
    """``m + log(sum(exp(x - m)))`` with ``m`` the max (0 where it is infinite), so large
    inputs don't overflow and rows of -inf give -inf."""

    array_backward = True
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
        m = ctx.math
        x, out = ctx.saved_tensors
        shape, dims, keepdim = ctx.shape, ctx.dims, ctx.keepdim
        return _keep(grad, shape, dims, keepdim, m) * m.exp(
            x - _keep(out, shape, dims, keepdim, m)), None, None


@register_op(methods=("logsumexp",), exported_in=("special",),
             samples=lambda make: [
                 Sample((make((3, 4)), 1), name="dim"),
                 Sample((make((2, 3, 4)), (0, 2), True), name="dims keepdim"),
                 Sample((make((3, 4), low=50.0, high=60.0), -1), name="large"),
                 Sample((make(()), 0), name="0-d")])
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input)))`` over ``dim``, computed stably; integers become the
    default float dtype."""
    ensure_tensor(input, "logsumexp")
    if _no_dims(dim) and input._data.ndim and not keepdim:
        # PyTorch reduces all dims but keeps them, then fails writing the 0-d output
        raise RuntimeError(f"logsumexp(): dim=() reduces all dims; its output with shape [] "
                           f"doesn't match the broadcast shape {[1] * input._data.ndim} "
                           "(pass keepdim=True or the dims to reduce)")
    if input._data.dtype.kind not in "fV":
        input = input.to(dtypes.get_default_dtype())
    dims = _reduced_dims(input, dim, "logsumexp")
    return LogSumExp.apply(input, dims, bool(keepdim))


# ----------------------------------------------------------------------------- scans
class Cumsum(Function):
    """Running sum along ``dim`` (from the end when ``reverse``); its backward is the
    running sum in the other direction."""

    array_backward = True
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
        m = ctx.math
        grad = _cast_back(grad, ctx.in_dtype, m)
        return m.apply(Cumsum, grad, ctx.dim, not ctx.reverse, ctx.in_dtype), None, None, None


def _scan_dim(input, dim, op):
    if dim is None:
        raise TypeError(f"{op}() missing 1 required positional argument: 'dim'")
    return wrap_dim(dim, input._data.ndim, op)


def _scan_samples(make):
    return [Sample((make((3, 4)), 1), name="dim 1"),
            Sample((make((2, 3, 4)), -3), name="dim -3"),
            Sample((make((5,)), 0), name="vector"),
            Sample((make(()), 0), name="0-d")]


@register_op(inplace=("cumsum_",), methods=("cumsum",),
             samples=lambda make: _scan_samples(make) + [
                 Sample((make((3, 4)), 0), {"dtype": dtypes.float64}, name="dtype"),
                 Sample((make.int((3, 4), -5, 5), 1), name="int")])
def cumsum(input, dim=None, *, dtype=None):
    """``out_i = sum_{j <= i} input_j`` along ``dim``; integers and bools give int64."""
    ensure_tensor(input, "cumsum")
    d = _scan_dim(input, dim, "cumsum")
    x, was_0d = _as_1d(input)
    out = Cumsum.apply(x, d, False, _sum_dtype(input, dtype).numpy)
    return out.reshape(()) if was_0d else out


class LogCumSumExp(Function):
    """``log(cumsum(exp(x)))`` along ``dim`` (from the end when ``reverse``), without
    overflow: a running ``logaddexp``."""

    array_backward = True
    node_name = "LogcumsumexpBackward0"

    @staticmethod
    def forward(ctx, x, dim, reverse):
        xp = ctx.xp
        ctx.dim, ctx.reverse = dim, reverse
        data = xp.flip(x, dim) if reverse else x
        accumulate = getattr(xp.logaddexp, "accumulate", None)
        if accumulate is not None:
            out = accumulate(data, axis=dim, dtype=x.dtype)
        else:  # no ufunc.accumulate (CuPy): the same running logaddexp, one step at a time
            moved = xp.moveaxis(data, dim, 0)
            out = xp.empty_like(moved)
            if moved.shape[0]:
                out[0] = moved[0]
                for i in range(1, moved.shape[0]):
                    out[i] = xp.logaddexp(out[i - 1], moved[i])
            out = xp.moveaxis(out, 0, dim)
        out = xp.flip(out, dim).copy() if reverse else out
        ctx.save_for_backward(x, out)
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        # d out_j / d x_i = exp(x_i - out_j) for j on or after i: the sum over j is a
        # reverse scan of log-weights, split by the gradient's sign so every log is real.
        m = ctx.math
        x, out = ctx.saved_tensors
        total = None
        for sign in (1.0, -1.0):
            part = grad * sign
            positive = part > 0
            # -inf stays -inf (never -inf - -inf): those weights are exactly zero
            logs = m.where(positive, m.log(m.where(positive, part, 1.0)) - out, float("-inf"))
            scan = m.apply(LogCumSumExp, logs, ctx.dim, not ctx.reverse)
            live = (scan > float("-inf")) & (x > float("-inf"))
            term = m.where(live, m.exp(m.where(live, scan + x, 0.0)), 0.0) * sign
            total = term if total is None else total + term
        return total, None, None


@register_op(methods=("logcumsumexp",), samples=lambda make: _scan_samples(make) + [
    Sample((make((2, 5), low=-40.0, high=40.0), 1), name="wide range")])
def logcumsumexp(input, dim):
    """``out_i = log(sum_{j <= i} exp(input_j))`` along ``dim``, computed without overflow.

    >>> ember.logcumsumexp(ember.tensor([0.0, 0.0, 1000.0]), 0)
    tensor([0.0000e+00, 6.9315e-01, 1.0000e+03])
    """
    ensure_tensor(input, "logcumsumexp")
    if input._data.dtype.kind not in "fV":
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    d = _scan_dim(input, dim, "logcumsumexp")
    x, was_0d = _as_1d(input)
    out = LogCumSumExp.apply(x, d, False)
    return out.reshape(()) if was_0d else out


class Cumprod(Function):
    array_backward = True
    node_name = "CumprodBackward0"

    @staticmethod
    def forward(ctx, x, dim, dtype):
        ctx.dim, ctx.in_dtype = dim, x.dtype
        out = ctx.xp.cumprod(x, axis=dim, dtype=dtype)
        if x.dtype.kind in "fV":
            ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, out = ctx.saved_tensors
        g = _cast_back(grad, ctx.in_dtype, m)
        twice = not m.arrays and is_grad_enabled()
        return _cumprod_grad(m, x, out, g, ctx.dim, ctx.in_dtype, twice), None, None


def _cumprod_grad(m, x, out, g, dim: int, dtype, twice: bool):
    """The gradient of ``out = cumprod(x)``: ``grad_k = sum_{i >= k} g_i prod_{j <= i, j != k}
    x_j``, in O(n) per row and exact with zeros.

    Before the first zero ``z`` of a row it is ``rev_cumsum(g * out)_k / x_k``; at ``z`` it is
    the same sum over the running product with ``x_z`` replaced by 1; after ``z`` every term
    holds ``x_z``, so the value is 0 but the slope in ``x_z`` is the gradient with ``x_z``
    replaced by 1. ``twice`` (a graph is being built) keeps that slope, so second
    derivatives are exact with zeros as well.
    """
    zero = x == 0
    zeros_so_far = m.apply(Cumsum, zero, dim, False, np.int64)
    before = zeros_so_far == 0
    first = zero & (zeros_so_far == 1)
    part_before = m.apply(Cumsum, g * out, dim, True, dtype) / m.where(before, x, 1.0)
    x_first_as_one = m.where(first, 1.0, x)
    out_first_as_one = m.apply(Cumprod, x_first_as_one, dim, dtype)
    part_first = m.apply(Cumsum, g * out_first_as_one, dim, True, dtype)
    after = 0.0
    if twice:
        with no_grad():  # only its value matters: it is multiplied by x_z, which is 0
            rest = _cumprod_grad(m, x_first_as_one, out_first_as_one, g, dim, dtype, False)
        after = m.sum(m.where(first, x, 0.0), dim, True) * rest
    return m.where(before, part_before, m.where(first, part_first, after))


@register_op(inplace=("cumprod_",), methods=("cumprod",),
             samples=lambda make: _scan_samples(make) + [
                 Sample((make.int((3, 4), -3, 3), 1), name="int"),
                 Sample((_with_zeros(make((3, 5)), [(0, 1), (1, 0), (1, 3), (2, 4)]), 1),
                        name="zeros")])
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
    unique = False  # the running extreme picks one position many times

    @staticmethod
    def forward(ctx, x, dim, largest):
        xp = ctx.xp
        if not largest:
            ctx.node_name = "CumminBackward0"
        running = _running(xp, x, dim, largest)
        # The index is the last position (up to i) where x reached the running extreme; a
        # NaN stays the extreme, so its position sticks until the next NaN.
        reached = x == running
        if x.dtype.kind in "fV":
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
def cummax(input, dim):
    """``(values, indices)``: the running maximum along ``dim`` and where it was reached
    (the latest position among equals; NaN propagates). Cost: O(n log n) per slice
    (a log-step scan)."""
    return _cummax_or_cummin(input, dim, True)


@register_op(methods=("cummin",), samples=_scan_samples)
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


def _logic_dims(input, dim, op):
    # PyTorch: all/any over dim=() test each element, no reduction
    return () if _no_dims(dim) else _reduced_dims(input, dim, op)


@register_op(methods=("all",), samples=_logic_samples, differentiable=False)
def all(input, dim=None, keepdim=False):
    """True where every element (over ``dim``) is non-zero; bool result (uint8 for a
    uint8 input, as in PyTorch)."""
    ensure_tensor(input, "all")
    return AllAny.apply(input, _logic_dims(input, dim, "all"), bool(keepdim), True)


@register_op(methods=("any",), samples=_logic_samples, differentiable=False)
def any(input, dim=None, keepdim=False):
    """True where some element (over ``dim``) is non-zero; bool result."""
    ensure_tensor(input, "any")
    return AllAny.apply(input, _logic_dims(input, dim, "any"), bool(keepdim), False)


class CountNonzero(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x, dims):
        return ctx.xp.asarray(ctx.xp.sum(x != 0, axis=dims)).astype(np.int64)


@register_op(methods=("count_nonzero",), differentiable=False,
             samples=lambda make: [Sample((make.int((3, 4), -1, 2),), name="all"),
                                   Sample((make.int((2, 3, 4), -1, 2), (0, 2)), name="dims"),
                                   Sample((make((3, 4)), 1), name="float")])
def count_nonzero(input, dim=None):
    """The number of non-zero elements (int64), over all elements or ``dim``."""
    ensure_tensor(input, "count_nonzero")
    return CountNonzero.apply(input, _reduced_dims(input, dim, "count_nonzero"))


# ----------------------------------------------------------------------------- utilities
AminmaxResult = result_type("aminmax", ["min", "max"])


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
    if input._data.dtype.kind == "b":
        raise RuntimeError("cov(): bool dtype is not supported for input (convert with "
                           ".float() first)")
    x = input if input._data.ndim == 2 else input.reshape(1, -1)
    if x._data.dtype.kind not in "fV":
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


# ----------------------------------------------------------------------------- renorm
def _renorm_samples(make):
    return [Sample((make((3, 4)), 2, 0, 1.0), name="rows, p=2"),
            Sample((make((2, 3, 2)), 1, 1, 0.8), name="middle dim, p=1"),
            Sample((make((3, 2)), 2, -1, 100.0), name="nothing clipped")]


@register_op(methods=("renorm",), inplace=("renorm_",), samples=_renorm_samples)
def renorm(input, p, dim, maxnorm):
    """Rescale each slice ``input.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm`` to
    norm ``maxnorm`` (times ``maxnorm / (norm + 1e-7)``); other slices stay as they are.

    >>> ember.renorm(ember.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    ensure_tensor(input, "renorm")
    if input._data.dtype.kind not in "fV":
        raise RuntimeError(f"renorm(): expected a floating-point input, got "
                           f"{input.dtype.name}")
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           "dimensions")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    d = wrap_dim(dim, input.ndim, "renorm")
    others = tuple(i for i in range(input.ndim) if i != d)
    norm = NAMESPACES["linalg"]["vector_norm"](input, p, dim=others, keepdim=True)
    factor = where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor.to(input.dtype)




# ----------------------------------------------------------------------------- trapezoid rule
def _pairs(y, d: int):
    n = y.shape[d]
    first = _narrow(y, d, 0, n - 1)
    second = _narrow(y, d, 1, n - 1)
    return first, second


def _narrow(t, d, start, length):
    return t[(slice(None),) * d + (slice(start, start + length),)]


def _refuse_bool_samples(y, x, op: str) -> None:
    """PyTorch's trapezoid rules refuse bool samples (RuntimeError)."""
    if y._data.dtype.kind == "b" or isinstance(x, Tensor) and x._data.dtype.kind == "b":
        which = "`y`" if x is None else "`x` or `y`"
        raise RuntimeError(f"{op}: received a bool input for {which}, but bool is not "
                           "supported (convert with .float() first)")


def _trapezoid_terms(y, x, dx, dim, op: str):
    ensure_tensor(y, op, "y")
    _refuse_bool_samples(y, x, op)
    if y.ndim == 0:
        raise IndexError(f"{op}(): Dimension out of range (expected to be in range of [-1, 0], "
                         f"but got {dim})")
    d = wrap_dim(dim, y.ndim, op)
    if y._data.dtype.kind not in "fV":
        y = y.to(dtypes.get_default_dtype())
    if y.shape[d] == 0:
        return None, d, y
    first, second = _pairs(y, d)
    mean = (first + second) / 2
    if x is None:
        return mean * (1.0 if dx is None else dx), d, y
    if dx is not None:
        raise TypeError(f"{op}(): pass either x or dx, not both")
    ensure_tensor(x, op, "x")
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{op}: There must be one `x` value for each sample point")
        spacing = x[1:] - x[:-1]
        spacing = spacing.reshape((-1,) + (1,) * (y.ndim - d - 1))
    else:
        spacing = diff(x, dim=dim)
    return mean * spacing, d, y


@register_op(samples=lambda make: [
    Sample((make((3, 5)),), name="dx=1"),
    Sample((make((3, 5)),), {"dx": 0.5, "dim": 0}, name="dx, dim 0"),
    Sample((make((2, 4)), make((4,))), name="1-D x"),
    Sample((make((2, 4)), make((2, 4))), {"dim": 1}, name="x like y")])
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of ``y`` along ``dim`` by the trapezoid rule, at sample points ``x``
    (1-D, or shaped like ``y``) or evenly ``dx`` apart (1 by default).

    >>> ember.trapezoid(ember.tensor([1.0, 2.0, 3.0]))
    tensor(4.)
    """
    if x is None and isinstance(y, Tensor) and y.ndim:
        # evenly spaced: PyTorch's (sum(y) - (y[0] + y[-1]) / 2) * dx (so inf - inf is NaN)
        _refuse_bool_samples(y, x, "trapezoid")
        d = wrap_dim(dim, y.ndim, "trapezoid")
        if y._data.dtype.kind not in "fV":
            y = y.to(dtypes.get_default_dtype())
        if y.shape[d] == 0:
            return sum(y, d) * 0
        n = y.shape[d]
        ends = (_narrow(y, d, 0, 1) + _narrow(y, d, n - 1, 1)).squeeze(d) * 0.5
        return (sum(y, d) - ends) * (1.0 if dx is None else dx)
    terms, d, y = _trapezoid_terms(y, x, dx, dim, "trapezoid")
    if terms is None:
        return sum(y, d) * 0
    return sum(terms, d)


def trapz(y, x=None, *, dx=None, dim=-1):
    """``trapezoid`` under NumPy's old name (``trapz(y, x, dim=...)`` or ``trapz(y, dx=...)``).
    """
    return trapezoid(y, x, dx=dx, dim=dim)


NAMESPACES["ember"]["trapz"] = trapz


@register_op(samples=lambda make: [
    Sample((make((3, 5)),), name="dx=1"),
    Sample((make((2, 4)), make((4,))), name="1-D x"),
    Sample((make((4, 2)),), {"dx": 2.0, "dim": 0}, name="dx, dim 0")])
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Running trapezoid-rule integrals of ``y`` along ``dim``: one fewer element than
    ``y`` there (see ``trapezoid``).

    >>> ember.cumulative_trapezoid(ember.tensor([1.0, 2.0, 3.0]))
    tensor([1.5000, 4.0000])
    """
    terms, d, y = _trapezoid_terms(y, x, dx, dim, "cumulative_trapezoid")
    if terms is None:
        return y
    return cumsum(terms, d)


# ----------------------------------------------------------------------------- gradient
def _gradient_samples(make):
    return [Sample((make((6,)),), name="1-D"),
            Sample((make((4, 5)),), {"spacing": 2.0}, name="2-D, spacing"),
            Sample((make((4, 5)),), {"dim": 1, "edge_order": 2}, name="edge order 2"),
            Sample((make((5,)),), {"spacing": (_coordinates(make),)}, name="coordinates"),
            Sample((make((5, 3)),), {"spacing": (_coordinates(make),), "dim": 0,
                                     "edge_order": 2}, name="coordinates, order 2")]


def _coordinates(make):
    x = make((5,), requires_grad=False)
    x._data[...] = [0.0, 0.5, 1.5, 1.75, 3.0]
    return x


def _spacings(spacing, dims, input):
    if isinstance(spacing, (int, float)):
        return [float(spacing)] * len(dims)
    if isinstance(spacing, Tensor) and spacing.ndim == 0:
        return [spacing.item()] * len(dims)
    spacing = list(spacing)
    if len(spacing) == 1 and len(dims) > 1 and not isinstance(spacing[0], Tensor):
        spacing = spacing * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                           f"it's spacing and dim arguments to have the same length, but got "
                           f"a spacing argument of length {len(spacing)} and a dim argument "
                           f"of length {len(dims)}.")
    out = []
    for s in spacing:
        if isinstance(s, Tensor):
            out.append(s.item() if s.ndim == 0 else s.to(input.dtype))
        elif isinstance(s, numbers.Real) and not isinstance(s, bool):
            out.append(float(s))
        else:
            raise TypeError(f"gradient(): spacing must be numbers or 1-D tensors of "
                            f"coordinates, got {type(s).__name__}")
    return out


def _gradient_along(f, d: int, h, edge_order: int):
    n = f.shape[d]
    if not isinstance(h, Tensor):  # evenly spaced
        h1 = h2 = h
    else:
        if h.ndim != 1 or h.shape[0] != n:
            raise RuntimeError(f"torch.gradient expected each tensor to be on the same device "
                               f"and have as many elements as input.size({d}) = {n}")
        step = h[1:] - h[:-1]
        shape = (-1,) + (1,) * (f.ndim - d - 1)
        h1 = step[:-1].reshape(shape)
        h2 = step[1:].reshape(shape)
    take = functools.partial(_narrow, f, d)
    a = -h2 / (h1 * (h1 + h2))
    b = (h2 - h1) / (h1 * h2)
    c = h1 / (h2 * (h1 + h2))
    interior = a * take(0, n - 2) + b * take(1, n - 2) + c * take(2, n - 2)
    if isinstance(h, Tensor):
        step = (h[1:] - h[:-1]).reshape((-1,) + (1,) * (f.ndim - d - 1))
        first, second = _narrow(step, 0, 0, 1), _narrow(step, 0, 1, 1)
        before_last, last = _narrow(step, 0, n - 3, 1), _narrow(step, 0, n - 2, 1)
    else:
        first = second = before_last = last = h
    if edge_order == 1:
        start = (take(1, 1) - take(0, 1)) / first
        end = (take(n - 1, 1) - take(n - 2, 1)) / last
    else:
        d1, d2 = first, second
        start = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * take(0, 1)
                 + (d1 + d2) / (d1 * d2) * take(1, 1) - d1 / (d2 * (d1 + d2)) * take(2, 1))
        d1, d2 = before_last, last
        end = (d2 / (d1 * (d1 + d2)) * take(n - 3, 1) - (d2 + d1) / (d1 * d2) * take(n - 2, 1)
               + (2 * d2 + d1) / (d2 * (d1 + d2)) * take(n - 1, 1))
    return NAMESPACES["ember"]["cat"]([start, interior, end], d)


@register_op(samples=_gradient_samples)
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of ``input`` along each of ``dim`` (all dims by default) by central
    differences inside and one-sided differences of order ``edge_order`` (1 or 2) at the
    ends; ``spacing`` is a number, one per dim, or the sample coordinates. A tuple, one
    tensor per dim.

    >>> ember.gradient(ember.tensor([1.0, 4.0, 9.0, 16.0]))
    (tensor([3., 4., 6., 7.]),)
    """
    ensure_tensor(input, "gradient")
    if input._data.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if input._data.dtype == np.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, "
                           f"but got {edge_order}")
    dims = (list(range(input.ndim)) if dim is None else
            [dim] if isinstance(dim, int) else list(dim))
    dims = [wrap_dim(d, input.ndim, "gradient") for d in dims]
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    f = input if input._data.dtype.kind in "fV" else input.to(dtypes.get_default_dtype())
    steps = _spacings(spacing, dims, f)
    return tuple(_gradient_along(f, d, h, edge_order) for d, h in zip(dims, steps))


# ----------------------------------------------------------------------------- histograms
HistogramResult = result_type("histogram", ["hist", "bin_edges"])
HistogramddResult = result_type("histogramdd", ["hist", "bin_edges"])


def _histogram_input(input, weight, op: str, bins, range):
    """The weights' array. PyTorch counts floating-point inputs only, and 16-bit ones only
    where it needs not find their range (bins given as tensors of the input's dtype, or a
    range)."""
    ensure_tensor(input, op)
    given = [b for b in (bins if isinstance(bins, (list, tuple)) else [bins])
             if isinstance(b, Tensor)]
    bounded = bool(given) or range is not None
    if input._data.dtype.kind not in "fV" or input._data.dtype.itemsize == 2 and not bounded:
        kernel = "histogram_cpu" if bounded and op == "histogram" else "histogramdd"
        raise dtype_not_implemented(kernel, input.dtype, f"{op} takes floating-point "
                                    "inputs, 16-bit ones with a range or tensor bins: convert "
                                    "with .float() first")
    for k, b in enumerate(given):
        if b.dtype is not input.dtype:
            raise RuntimeError(f"{op}: input tensor and bins tensors should have the same "
                               f"dtype, but got input with dtype {input.dtype.name} and bins "
                               f"for dimension {k} with dtype {b.dtype.name}")
    if weight is not None:
        ensure_tensor(weight, op, "weight")
        if tuple(weight.shape) != tuple(input.shape[:weight.ndim]) or \
                weight.numel() * (input.shape[-1] if op == "histogramdd" else 1) != \
                input.numel():
            raise RuntimeError(f"{op}: if weight tensor is provided it should have the same "
                               "shape as the input tensor excluding its innermost dimension"
                               if op == "histogramdd" else
                               f"{op}: if weight tensor is provided, input tensor and weight "
                               "tensor should have the same shape")
        return weight._data.reshape(-1)
    return None


@register_op(methods=("histogram",), differentiable=False, samples=lambda make: [
    Sample((make((20,)),), {"bins": 5}, name="5 bins"),
    Sample((make((4, 5)),), {"bins": 4, "range": (-1.0, 1.0), "density": True},
           name="range, density"),
    Sample((make((10,)),), {"bins": 3, "weight": make((10,), low=0.0, high=1.0,
                                                       requires_grad=False)},
           name="weights")])
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """Counts of ``input`` (flattened) in ``bins`` equal bins over ``range`` (the data's
    range by default), or in the bins a 1-D tensor of edges gives; with ``weight`` each
    element adds its weight, with ``density`` the result integrates to 1. Returns
    ``(hist, bin_edges)``.

    >>> ember.histogram(ember.tensor([1.0, 2.0, 1.0]), bins=2, range=(0.0, 2.0))
    ember.return_types.histogram(
    hist=tensor([0., 3.]),
    bin_edges=tensor([0., 1., 2.]))
    """
    weights = _histogram_input(input, weight, "histogram", bins, range)
    xp = backend.xp_of(input._data)
    data = input._data.reshape(-1)
    dtype = input._data.dtype
    if isinstance(bins, Tensor):
        if bins.ndim != 1:
            raise RuntimeError(f"histogram: bins tensor should have one dimension, but got "
                               f"{bins.ndim} dimensions")
        edges = bins._data.astype(dtype)
    else:
        if not isinstance(bins, numbers.Integral) or bins <= 0:
            raise RuntimeError(f"histogram(): bins must be > 0, but got {bins}")
        low, high = _histogram_range(xp, data, range, "histogram")
        edges = xp.linspace(low, high, int(bins) + 1).astype(dtype)
    hist, _ = xp.histogram(data, bins=edges, weights=weights, density=density)
    device = input._device
    return HistogramResult(Tensor._make(hist.astype(dtype), device),
                           Tensor._make(edges, device))


def _histogram_range(xp, data, range, op: str):
    if range is not None:
        low, high = (float(v) for v in range)
        if low > high:
            raise RuntimeError(f"{op}(): max must be larger than min")
    elif data.size:
        low, high = float(data.min()), float(data.max())
    else:
        low, high = 0.0, 0.0
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"{op}(): range of [{low}, {high}] is not finite")
    if low == high:  # a single value: PyTorch widens the range to a unit around it
        low, high = low - 0.5, high + 0.5
    return low, high


@register_op(differentiable=False, samples=lambda make: [
    Sample((make((20, 2)),), {"bins": [3, 4]}, name="2-D, bins per dim"),
    Sample((make((10, 3)),), {"bins": 2, "range": [-2.0, 2.0, -2.0, 2.0, -2.0, 2.0],
                              "density": True}, name="range, density")])
def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """A histogram of the points in the rows of ``input`` (N, D): ``bins`` per dim (an
    int, one int per dim, or D 1-D tensors of edges), ``range`` as ``[low0, high0, low1,
    ...]``. Returns ``(hist, bin_edges)`` with one edges tensor per dim.

    >>> h = ember.histogramdd(ember.tensor([[0.0, 0.0], [1.0, 1.0]]), bins=2)
    >>> h.hist
    tensor([[1., 0.],
            [0., 1.]])
    """
    weights = _histogram_input(input, weight, "histogramdd", bins, range)
    if input.ndim < 2:
        raise RuntimeError("histogramdd: input tensor should have at least 2 dimensions")
    xp = backend.xp_of(input._data)
    dims = input.shape[-1]
    points = input._data.reshape(-1, dims)
    dtype = input._data.dtype
    if isinstance(bins, numbers.Integral):
        bins = [int(bins)] * dims
    bins = list(bins)
    if len(bins) != dims:
        raise RuntimeError(f"histogramdd: The size of bins must be equal to the innermost "
                           f"dimension of the input ({dims})")
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(f"histogramdd: range should have {2 * dims} elements")
    edges = []
    for k, b in enumerate(bins):
        if isinstance(b, Tensor):
            edges.append(b._data.astype(dtype))
            continue
        if b <= 0:
            raise RuntimeError(f"histogramdd(): bins must be > 0, but got {b} for dimension "
                               f"{k}")
        span = None if range is None else range[2 * k:2 * k + 2]
        low, high = _histogram_range(xp, points[:, k], span, "histogramdd")
        edges.append(xp.linspace(low, high, int(b) + 1).astype(dtype))
    hist, _ = xp.histogramdd(points, bins=edges, weights=weights, density=density)
    device = input._device
    return HistogramddResult(Tensor._make(hist.astype(dtype), device),
                             tuple(Tensor._make(e, device) for e in edges))
