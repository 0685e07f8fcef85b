"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian,
mode, quantile and nanquantile. Each returns PyTorch's ``(values, indices)`` named tuple
where PyTorch does; gradients flow back through ``_Selection`` (see ``reductions``).
"""
from __future__ import annotations

import functools
import numbers

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..return_types import result_type
from ..tensor import Tensor
from ._util import ensure_tensor, refuse_bool, wrap_dim
from .reductions import (
    GatherAlong,
    _as_1d,
    _check_nonempty,
    _float_required,
    _keepdim_shape,
    _no_bool,
    _running,
    _Selection,
    _squeeze_result,
)
from .registry import NAMESPACES, Sample, register_op

# PyTorch returns (values, indices) named tuples from these ops (torch.return_types.*).
SortResult = result_type("sort", ["values", "indices"])
TopkResult = result_type("topk", ["values", "indices"])
MedianResult = result_type("median", ["values", "indices"])
NanmedianResult = result_type("nanmedian", ["values", "indices"])
KthvalueResult = result_type("kthvalue", ["values", "indices"])
ModeResult = result_type("mode", ["values", "indices"])


def _stable_argsort(xp, a, axis: int, descending: bool):
    """Indices that sort ``a`` along ``axis``, equal elements keeping their order; NaN
    counts as the largest value (last ascending, first descending), as in PyTorch."""
    if not descending:
        return xp.argsort(a, axis=axis, kind="stable")
    # Sorting the reversed array and reversing the result keeps ties in input order.
    reversed_order = xp.argsort(xp.flip(a, axis), axis=axis, kind="stable")
    return (a.shape[axis] - 1) - xp.flip(reversed_order, axis)


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
        if x.dtype.kind in "fV":
            valid = xp.sum(~xp.isnan(x), axis=dim, keepdims=True)
            if ignore_nan:  # the lower median of the non-NaN values (NaN if none)
                k = xp.maximum((valid - 1) // 2, 0)
            else:  # any NaN makes the median NaN: the first NaN in sorted order
                k = xp.where(valid < n, valid, (n - 1) // 2)
        else:
            k = xp.full(_keepdim_shape(x.shape, (dim,)), (n - 1) // 2, np.int64)
        index = xp.take_along_axis(order, k.astype(np.int64), axis=dim)
        return _Selection._pick(ctx, x, index, dim, keepdim)


class MedianAll(Function):
    """median() / nanmedian() of all elements: the gradient is shared evenly among the
    elements equal to the median (the NaNs, where it is NaN), as in PyTorch."""

    array_backward = True
    node_name = "MedianBackward0"

    @staticmethod
    def forward(ctx, x, ignore_nan):
        xp = ctx.xp
        if ignore_nan:
            ctx.node_name = "NanmedianBackward0"
        n = x.size
        k = (n - 1) // 2
        if x.dtype.kind in "fV":
            valid = int(xp.count_nonzero(~xp.isnan(x)))
            if ignore_nan:  # the lower median of the non-NaN values (NaN if none)
                k = max((valid - 1) // 2, 0)
            elif valid < n:  # any NaN makes the median NaN (NaN sorts last)
                k = valid
        out = xp.sort(x.reshape(-1))[k]
        if x.dtype.kind in "fV":
            ties = (x == out) | (xp.isnan(x) & xp.isnan(out))
            ctx.save_for_backward(ties / ties.sum(dtype=x.dtype))
        return xp.asarray(out)

    @staticmethod
    def backward(ctx, grad):
        (share,) = ctx.saved_tensors
        return grad * share, None


def _median(input, dim, keepdim, ignore_nan):
    name = "nanmedian" if ignore_nan else "median"
    ensure_tensor(input, name)
    refuse_bool(input, name)
    result_type = NanmedianResult if ignore_nan else MedianResult
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}(): keepdim=True needs a dim")
        if input._data.size == 0:
            _float_required(input, name)
            return Tensor._make(backend.xp_for_device(input._device).full((), np.nan,
                                                                         input._data.dtype),
                                input._device)
        return MedianAll.apply(input, ignore_nan)
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
def kthvalue(input, k, dim=-1, keepdim=False):
    """``(values, indices)`` of the ``k``-th smallest element (k from 1) along ``dim``.
    Cost: one sort along ``dim``."""
    ensure_tensor(input, "kthvalue")
    refuse_bool(input, "kthvalue")
    d = wrap_dim(dim, input._data.ndim, "kthvalue")
    x, was_0d = _as_1d(input)
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TypeError(f"kthvalue(): argument 'k' must be int, not {type(k).__name__}")
    if x._data.shape[d] == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
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
def topk(input, k, dim=-1, largest=True, sorted=True):
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
    # a 0-d input gives its element for k = 0 too, as in PyTorch
    k = 1 if was_0d else int(k)
    return _squeeze_result(Topk.apply(x, k, d, bool(largest)), was_0d, TopkResult)


# ----------------------------------------------------------------------------- quantiles
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    name = "nanquantile" if ignore_nan else "quantile"
    ensure_tensor(input, name)
    if input._data.dtype.kind not in "fV" or input._data.dtype.itemsize == 2:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype "
                           f"(got {input.dtype.name}; convert with .float())")
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


# ----------------------------------------------------------------------------- mode
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
    d = wrap_dim(dim, input._data.ndim, "mode")
    x, was_0d = _as_1d(input)
    _check_nonempty(x._data, (d,), "mode", False)
    return _squeeze_result(Mode.apply(x, d, bool(keepdim)), was_0d, ModeResult)
