"""Reductions: sum, mean, max, min (all elements, or over dims with keepdim)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import dtypes
from ..autograd.function import Function
from ..tensor import Tensor
from .elementwise import maximum, minimum
from ._util import ensure_tensor, wrap_dim, wrap_dims
from .registry import Sample, register_op

# PyTorch returns (values, indices) named tuples from max/min over a dim.
MaxResult = namedtuple("max", ["values", "indices"])
MinResult = namedtuple("min", ["values", "indices"])


def _expand_back(grad: Tensor, shape: tuple, dims: tuple, keepdim: bool) -> Tensor:
    """Broadcast a reduced gradient back over the reduced dims."""
    if not keepdim and dims:
        grad = grad.reshape(tuple(1 if i in dims else s for i, s in enumerate(shape)))
    return grad.expand(shape)


class Sum(Function):
    node_name = "SumBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        if len(dims) != x.ndim or keepdim:
            ctx.node_name = "SumBackward1"
        return ctx.xp.sum(x, axis=dims, keepdims=keepdim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


def _reduce_samples(make):
    return [Sample((make((3, 4)),), name="all"),
            Sample((make((3, 4)), 1), name="dim 1"),
            Sample((make((2, 3, 4)), (0, 2)), name="dims (0, 2)"),
            Sample((make((2, 3, 4)), -1, True), name="keepdim"),
            Sample((make(()),), name="0-d")]


def _sum_dtype(x: Tensor, dtype):
    if dtype is not None:
        return dtypes.to_dtype(dtype)
    return dtypes.int64 if x._data.dtype.kind in "biu" else x.dtype


@register_op(methods=("sum",), samples=_reduce_samples)
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    """Sum of all elements, or over ``dim`` (int or tuple). Integers and bools sum to
    int64, as in PyTorch."""
    ensure_tensor(input, "sum")
    dims = wrap_dims(dim, input._data.ndim, "sum")
    out_dtype = _sum_dtype(input, dtype)
    return Sum.apply(input, dims, bool(keepdim), out_dtype.numpy)


class Mean(Function):
    node_name = "MeanBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        ctx.count = int(np.prod([x.shape[d] for d in dims])) if dims else 1
        if len(dims) != x.ndim or keepdim:
            ctx.node_name = "MeanBackward1"
        return ctx.xp.mean(x, axis=dims, keepdims=keepdim).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        return _expand_back(grad / ctx.count, ctx.shape, ctx.dims, ctx.keepdim), None, None


@register_op(methods=("mean",), samples=_reduce_samples)
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of all elements, or over ``dim``. Needs a floating-point input (or ``dtype``)."""
    ensure_tensor(input, "mean")
    if dtype is not None:
        input = input.to(dtypes.to_dtype(dtype))
    if input._data.dtype.kind != "f":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {input.dtype.name}")
    dims = wrap_dims(dim, input._data.ndim, "mean")
    return Mean.apply(input, dims, bool(keepdim))


class MaxAll(Function):
    """max() / min() of all elements: the gradient is shared evenly among ties."""

    node_name = "MaxBackward1"

    @staticmethod
    def forward(ctx, x, largest):
        xp = ctx.xp
        if x.size == 0:
            raise RuntimeError(
                f"{'max' if largest else 'min'}(): Expected reduction dim to be specified for "
                "input.numel() == 0. Specify the reduction dim with the 'dim' argument.")
        out = xp.max(x) if largest else xp.min(x)
        if not largest:
            ctx.node_name = "MinBackward1"
        if x.dtype.kind == "f":
            ties = x == out
            ctx.save_for_backward(ties / ties.sum(dtype=x.dtype))
        return out

    @staticmethod
    def backward(ctx, grad):
        (share,) = ctx.saved_tensors
        return grad * share, None


class MaxDim(Function):
    """max(dim) / min(dim): values and indices; the gradient goes to the chosen index."""

    node_name = "MaxBackward0"

    @staticmethod
    def forward(ctx, x, dim, keepdim, largest):
        xp = ctx.xp
        if x.shape[dim] == 0:
            raise IndexError(f"{'max' if largest else 'min'}(): Expected reduction dim {dim} to "
                             "have non-zero size.")
        if not largest:
            ctx.node_name = "MinBackward0"
        indices = xp.argmax(x, axis=dim, keepdims=True) if largest else \
            xp.argmin(x, axis=dim, keepdims=True)
        values = xp.take_along_axis(x, indices, axis=dim)
        if x.dtype.kind == "f":
            positions = xp.arange(x.shape[dim]).reshape(
                [-1 if i == dim else 1 for i in range(x.ndim)])
            ctx.save_for_backward(positions == indices)
        ctx.dim, ctx.keepdim = dim, keepdim
        if not keepdim:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
        indices = indices.astype(np.int64, copy=False)
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        (onehot,) = ctx.saved_tensors
        if not ctx.keepdim:
            grad = grad.unsqueeze(ctx.dim)
        return grad * onehot, None, None, None


def _max_samples(make):
    return [Sample((make((3, 4)),), name="all"),
            Sample((make((3, 4)), 1), name="dim"),
            Sample((make((2, 3, 4)), 0, True), name="keepdim"),
            Sample((make((3, 4)), make((3, 4))), name="binary"),
            Sample((make(()),), name="0-d")]


def _max_or_min(input, dim, keepdim, other, largest: bool):
    name = "max" if largest else "min"
    ensure_tensor(input, name)
    if isinstance(dim, Tensor) and other is None:
        dim, other = None, dim  # max(a, b): the elementwise maximum
    if other is not None:
        return maximum(input, other) if largest else minimum(input, other)
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}(): keepdim needs a dim")
        return MaxAll.apply(input, largest)
    d = wrap_dim(dim, input._data.ndim, name)
    values, indices = MaxDim.apply(input, d, bool(keepdim), largest)
    return (MaxResult if largest else MinResult)(values, indices)


@register_op(methods=("max",), samples=_max_samples)
def max(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """The largest element; with ``dim``, ``(values, indices)`` along it; with a second
    tensor, the elementwise maximum."""
    return _max_or_min(input, dim, keepdim, other, True)


@register_op(methods=("min",), samples=_max_samples)
def min(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """The smallest element; with ``dim``, ``(values, indices)``; with a second tensor,
    the elementwise minimum."""
    return _max_or_min(input, dim, keepdim, other, False)
