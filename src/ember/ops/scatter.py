"""Gather/scatter-style indexing: gather, scatter, scatter_add, scatter_reduce, index_select,
index_add, index_copy, index_fill, index_reduce, index_put, put, masked_select,
masked_scatter, take, take_along_dim, and the integer-valued searches nonzero, argwhere, unique,
unique_consecutive, bincount, histc, searchsorted, bucketize.

Every gather-like op is a subclass of ``AdvancedIndex`` (``x[index tuple]``), ember's one
gather, whose backward is the scatter-add ``IndexScatter`` (``indexing.scatter_add``, so
repeated indices accumulate), whose backward is the gather again: double backward works
for all of them.
Every scatter-like op is ``IndexPut`` (overwrite) or ``IndexPutAccumulate`` (add)."""
from __future__ import annotations

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from ..tensor import Tensor, apply_inplace
from ._util import dtype_not_implemented, ensure_tensor, wrap_dim, xp_of
from .indexing import AdvancedIndex, IndexPut, IndexPutAccumulate, convert_index, shape_mismatch
from .registry import Sample, bind_method, register_op


# ----------------------------------------------------------------------------- helpers
def _const(make, values, dtype=None):
    """A constant (index) tensor for samples, on the device under test."""
    import ember

    return ember.tensor(values, dtype=dtype, device=make.device)


def _index_tensor(index, op: str, allowed=("int64",), arg: str = "index",
                  error: type = RuntimeError) -> Tensor:
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be a Tensor, not {type(index).__name__}")
    if index.dtype.name not in allowed:
        expected = " or ".join(allowed)
        raise error(f"{op}(): Expected dtype {expected} for {arg}, but got {index.dtype.name}")
    return index


_INT32_64 = ("int64", "int32")


def _index_array(index: Tensor, input: Tensor):
    if index._device == input._device:
        return index._data
    if index._data.ndim == 0 or index._device.type == "cpu" and input._device.type == "cpu":
        return backend.move(index._data, index._device, input._device)
    raise RuntimeError(f"Expected all tensors to be on the same device, but found index on "
                       f"{index.device} and input on {input.device}")


def _check_range(array, size: int, dim: int, op: str, negative: bool = False,
                 error: type = IndexError) -> None:
    """An error naming the dim and size when an index leaves [0, size) (or [-size, size)
    where negative indices count from the end), raised before any kernel runs. PyTorch
    raises RuntimeError for gather and scatter, IndexError for the index_* ops."""
    if not array.size:
        return
    low, high = int(array.min()), int(array.max())
    floor = -size if negative else 0
    if low < floor or high >= size:
        bad = low if low < floor else high
        raise error(f"{op}(): index {bad} is out of bounds for dimension {dim} with size "
                    f"{size} (valid indices are 0 to {size - 1})")


def _along(index, dim: int, xp) -> tuple:
    """The NumPy index tuple that reads ``x[..., index[i, j, k], ...]`` at position
    (i, j, k) of ``index`` along ``dim`` (gather's addressing)."""
    parts = []
    for d, size in enumerate(index.shape):
        if d == dim:
            parts.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = size
            parts.append(xp.arange(size).reshape(shape))
    return tuple(parts)


def _at_dim(index, dim: int) -> tuple:
    """``(:, ..., :, index)``: a 1-D index applied along ``dim``."""
    return (slice(None),) * dim + (index,)


def _gather_checks(input: Tensor, dim, index: Tensor, op: str, src: Tensor | None = None):
    """Shared argument checks of gather/scatter: returns the wrapped dim."""
    ndim = input._data.ndim
    d = wrap_dim(dim, ndim, op)
    if index._data.ndim != ndim and not (ndim <= 1 and index._data.ndim <= 1):
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as "
                           f"input tensor (index is {index._data.ndim}-D, input {ndim}-D)")
    if src is not None and src._data.ndim != index._data.ndim and not (
            src._data.ndim <= 1 and index._data.ndim <= 1):
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as "
                           f"src tensor (index is {index._data.ndim}-D, src {src._data.ndim}-D)")
    # a 0-d index or input counts as one element
    ishape, xshape = index._data.shape or (1,), input._data.shape or (1,)
    for k in range(min(len(ishape), len(xshape))):
        if k != d and ishape[k] > xshape[k]:
            raise RuntimeError(
                f"{op}(): Size does not match at dimension {k} expected index "
                f"{list(index.shape)} to be smaller than self {list(input.shape)} apart from "
                f"dimension {d}")
        if src is not None and src._data.ndim and ishape[k] > src._data.shape[k]:
            raise RuntimeError(
                f"{op}(): Size does not match at dimension {k} expected index "
                f"{list(index.shape)} to be smaller than src {list(src.shape)}")
    return d


def _flat_args(input: Tensor, index_array):
    """gather/scatter on 0-d tensors work as on one-element vectors."""
    flat_input = input.reshape(1) if input._data.ndim == 0 else input
    flat_index = index_array.reshape(-1) if index_array.ndim == 0 else index_array
    return flat_input, flat_index


class Gather(AdvancedIndex):
    node_name = "GatherBackward0"


class IndexSelect(AdvancedIndex):
    node_name = "IndexSelectBackward0"


class MaskedSelect(AdvancedIndex):
    node_name = "MaskedSelectBackward0"


class Take(AdvancedIndex):
    node_name = "TakeBackward0"


class Scatter(IndexPut):
    node_name = "ScatterBackward0"


class ScatterValue(IndexPut):
    node_name = "ScatterBackward1"


class IndexCopy(IndexPut):
    node_name = "IndexCopyBackward0"


class IndexFill(IndexPut):
    node_name = "IndexFillBackward0"


class MaskedScatter(IndexPut):
    node_name = "MaskedScatterBackward0"


class ScatterAdd(IndexPutAccumulate):
    node_name = "ScatterAddBackward0"


class IndexAdd(IndexPutAccumulate):
    node_name = "IndexAddBackward0"


# ----------------------------------------------------------------------------- gather
def _gather_samples(make):
    return [Sample((make((3, 4)), 0, _const(make, [[0, 1, 2, 0], [2, 2, 1, 0]])),
                   name="dim 0 repeats"),
            Sample((make((3, 4)), -1, _const(make, [[3, 3], [0, 1], [2, 0]])), name="dim -1"),
            Sample((make((3, 4, 2)), 1, _const(make, [[[0, 1]], [[3, 3]]])),
                   name="index smaller than input")]


@register_op(methods=("gather",), samples=_gather_samples)
def gather(input, dim, index, *, sparse_grad=False):
    """``out[i][j][k] = input[index[i][j][k]][j][k]`` (for dim 0): picks along ``dim`` by
    ``index`` (int64 or int32, same number of dims as input; other dims may be smaller). Repeated
    indices accumulate in the gradient."""
    ensure_tensor(input, "gather")
    _index_tensor(index, "gather", _INT32_64)
    d = _gather_checks(input, dim, index, "gather")
    array = _index_array(index, input)
    _check_range(array, input._data.shape[d] if input._data.ndim else 1, d, "gather",
                 error=RuntimeError)
    source, flat = _flat_args(input, array)
    out = Gather.apply(source, _along(flat, d, xp_of(input)))
    # 0-d inputs and indices were read as one-element vectors; the result has index's shape
    return out if out._data.shape == index._data.shape else out.reshape(index.shape)


# ----------------------------------------------------------------------------- scatter
def _scatter_samples(make):
    index = _const(make, [[1, 0, 2, 1], [0, 2, 1, 0]])
    return [Sample((make((3, 4)), 0, index, make((2, 4))), name="src"),
            Sample((make((3, 4)), 1, _const(make, [[3, 1], [0, 2]]), make((2, 2))),
                   name="index smaller than input"),
            Sample((make((3, 4)), 1, _const(make, [[3, 0], [1, 2], [0, 3]]), 1.5),
                   name="value"),
            Sample((make((2, 3)), -1, _const(make, [[2], [0]]), make((2, 1))),
                   name="dim -1")]


def _src_part(src: Tensor, index: Tensor) -> Tensor:
    """The leading block of ``src`` that ``index`` addresses (a view when smaller)."""
    if src._data.shape == index._data.shape:
        return src
    if index._data.ndim == 0:
        return src[0]  # src is 1-D here (_gather_checks)
    if src._data.ndim == 0:
        return src.reshape(index.shape) if index._data.size == 1 else src.expand(index.shape)
    return src[tuple(slice(0, s) for s in index._data.shape)]


def _scatter_source(input: Tensor, src, value, op: str):
    if src is not None and value is not None:
        raise TypeError(f"{op}(): pass either 'src' or 'value', not both")
    if src is None:
        src = value
    if src is None:
        raise TypeError(f"{op}(): missing the 'src' tensor or 'value' number")
    if isinstance(src, Tensor):
        if src.dtype is not input.dtype:
            raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype (got "
                               f"{input.dtype.name} and {src.dtype.name})")
        return src, False
    if isinstance(src, (bool, int, float, np.generic)):
        return dtypes.checked_number(src, input._data.dtype), True
    raise TypeError(f"{op}(): 'src' must be a Tensor or a number, not {type(src).__name__}")


@register_op(methods=("scatter",), samples=_scatter_samples)
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """``out = input.clone()`` then ``out[index[i][j]][j] = src[i][j]`` (for dim 0), or the
    number ``value``. With ``reduce='add'`` / ``'multiply'`` the values combine instead (as
    ``scatter_reduce`` with sum / prod). Where an index repeats without a reduce, which
    value lands is unspecified (as in PyTorch)."""
    ensure_tensor(input, "scatter")
    _index_tensor(index, "scatter", _INT32_64)
    source, is_value = _scatter_source(input, src, value, "scatter")
    d = _gather_checks(input, dim, index, "scatter", None if is_value else source)
    array = _index_array(index, input)
    _check_range(array, input._data.shape[d] if input._data.ndim else 1, d, "scatter",
                 error=RuntimeError)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(f"scatter(): reduce argument must be either add or multiply, "
                               f"got {reduce}")
        if is_value:
            from ..creation import full

            source = full(index.shape, source, dtype=input.dtype, device=input.device)
        return scatter_reduce(input, d, index, source,
                              "sum" if reduce == "add" else "prod", include_self=True)
    target, flat = _flat_args(input, array)
    if not is_value:
        source = _src_part(source, index)
        if source._data.shape != flat.shape:
            source = source.reshape(flat.shape)
    op = ScatterValue if is_value else Scatter
    out = op.apply(target, source, _along(flat, d, xp_of(input)), False)
    return out.reshape(()) if input._data.ndim == 0 else out


def _scatter_add_samples(make):
    return [Sample((make((3, 4)), 0, _const(make, [[1, 0, 2, 1], [1, 0, 2, 2]]), make((2, 4))),
                   name="repeats"),
            Sample((make((2, 5)), 1, _const(make, [[4, 4, 0], [1, 1, 1]]), make((2, 3))),
                   name="dim 1")]


@register_op(methods=("scatter_add",), samples=_scatter_add_samples)
def scatter_add(input, dim, index, src):
    """``out = input.clone()`` then ``out[index[i][j]][j] += src[i][j]`` (for dim 0),
    every repeated index adding its value."""
    ensure_tensor(input, "scatter_add")
    _index_tensor(index, "scatter_add", _INT32_64)
    src, _ = _scatter_source(input, src, None, "scatter_add")
    if not isinstance(src, Tensor):
        raise TypeError("scatter_add(): argument 'src' must be a Tensor")
    d = _gather_checks(input, dim, index, "scatter_add", src)
    array = _index_array(index, input)
    _check_range(array, input._data.shape[d] if input._data.ndim else 1, d, "scatter_add",
                 error=RuntimeError)
    target, flat = _flat_args(input, array)
    source = _src_part(src, index)
    if source._data.shape != flat.shape:
        source = source.reshape(flat.shape)
    out = ScatterAdd.apply(target, source, _along(flat, d, xp_of(input)))
    return out.reshape(()) if input._data.ndim == 0 else out


_REDUCE_UFUNC = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum",
                 "amin": "minimum"}


def _identity(reduce: str, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if dtype.kind in "fV" else (True if dtype.kind == "b" else np.iinfo(dtype).max)
    small = -np.inf if dtype.kind in "fV" else (False if dtype.kind == "b" else
                                               np.iinfo(dtype).min)
    return small if reduce == "amax" else big


class ScatterReduce(Function):
    """``scatter_reduce``: each position of the output combines its own value (with
    include_self) and every src value scattered onto it by sum, prod, mean, amax or amin."""

    array_backward = True
    node_name = "ScatterReduceBackward0"

    @staticmethod
    def forward(ctx, x, src, index, reduce, include_self):
        xp = ctx.xp
        ctx.index, ctx.reduce, ctx.include_self = index, reduce, include_self
        hit = xp.zeros(x.shape, bool)
        hit[index] = True
        out = x.copy()
        if not include_self:
            out[hit] = _identity(reduce, x.dtype)
        backend.scatter_reduce(out, index, src, _REDUCE_UFUNC[reduce])
        own = hit if not include_self else xp.zeros(x.shape, bool)  # self left out here
        if reduce == "mean":
            count = xp.zeros(x.shape, x.dtype if x.dtype.kind in "fV" else np.int64)
            backend.scatter_add(count, index, 1)
            count = xp.where(own, count, count + 1)
            count = xp.maximum(count, 1)
            out = out // count if x.dtype.kind in "iub" else out / count
            out = out.astype(x.dtype, copy=False)
            ctx.save_for_backward(count, own)
        elif reduce == "prod" and x.dtype.kind in "fV":
            x_zero, src_zero = x == 0, src == 0
            zeros = (x_zero & ~own).astype(np.int64)  # zero factors of each group
            backend.scatter_add(zeros, index, src_zero.astype(np.int64))
            ctx.save_for_backward(x, src, own, x_zero, src_zero, zeros)
        elif reduce in ("amax", "amin") and x.dtype.kind in "fV":
            x_is = (x == out) & ~own
            src_is = src == out[index]
            share = x_is.astype(x.dtype)
            backend.scatter_add(share, index, src_is.astype(x.dtype))
            share = xp.maximum(share, 1)
            ctx.save_for_backward(x_is, src_is, share)
        elif reduce == "sum":
            ctx.save_for_backward(own)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        need_x, need_src = ctx.needs_input_grad[:2]
        index, reduce = ctx.index, ctx.reduce
        grad_x = grad_src = None
        if reduce in ("sum", "mean"):
            if reduce == "sum":
                (own,) = ctx.saved_tensors
                shared = grad
            else:
                count, own = ctx.saved_tensors
                shared = grad / count
            grad_x = m.where(own, 0.0, shared) if need_x else None
            grad_src = m.apply(Gather, shared, index) if need_src else None
        elif reduce == "prod":
            x, src, own, x_zero, src_zero, zeros = ctx.saved_tensors
            # Exclusive products (the product of the other factors of a group) without
            # dividing by zero: with zeros set to 1, the masked product divided by the
            # factor, where no *other* factor of the group is zero; else 0.
            masked_x = m.where(x_zero, 1.0, x)
            masked_src = m.where(src_zero, 1.0, src)
            masked = m.apply(ScatterReduce, masked_x, masked_src, index, "prod",
                             ctx.include_self)
            if need_x:
                alone = zeros == m.cast(x_zero & ~own, zeros)
                grad_x = m.where(own, 0.0, m.where(alone, grad * masked / masked_x, 0.0))
            if need_src:
                alone = m.apply(Gather, zeros, index) == m.cast(src_zero, zeros)
                picked = m.apply(Gather, grad * masked, index)
                grad_src = m.where(alone, picked / masked_src, 0.0)
        else:
            x_is, src_is, share = ctx.saved_tensors
            shared = grad / share
            grad_x = m.where(x_is, shared, 0.0) if need_x else None
            grad_src = m.where(src_is, m.apply(Gather, shared, index), 0.0) if need_src else None
        return grad_x, grad_src, None, None, None


def _scatter_reduce_samples(make):
    index = _const(make, [[1, 0, 2, 1], [1, 0, 0, 2]])
    x, src = make((3, 4), low=0.5, high=2), make((2, 4), low=0.5, high=2)
    return [Sample((x, 0, index, src, "sum"), name="sum"),
            Sample((x, 0, index, src, "prod"), name="prod"),
            Sample((x, 0, index, src, "mean", ), {"include_self": False}, name="mean no self"),
            Sample((x, 0, index, src, "amax"), name="amax"),
            Sample((make((2, 5)), 1, _const(make, [[4, 4, 0], [1, 1, 1]]), make((2, 3)),
                    "amin"), {"include_self": False}, name="amin no self")]


@register_op(methods=("scatter_reduce",), samples=_scatter_reduce_samples)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``out = input.clone()`` then, at every position that ``index`` (along ``dim``) sends
    src values to, the reduction ('sum', 'prod', 'mean', 'amax', 'amin') of those values,
    and of the position's own value when ``include_self``. Gradients: sum/mean spread
    evenly, prod by exclusive products (zero-safe), amax/amin split evenly among ties.
    Cost: O(input + index) with unbuffered scatter (``ufunc.at``; CUDA atomics)."""
    ensure_tensor(input, "scatter_reduce")
    _index_tensor(index, "scatter_reduce", _INT32_64)
    if reduce not in _REDUCE_UFUNC:
        raise RuntimeError(f"scatter_reduce(): reduce argument must be either sum, prod, mean, "
                           f"amax or amin, got {reduce}")
    src, _ = _scatter_source(input, src, None, "scatter_reduce")
    if not isinstance(src, Tensor):
        raise TypeError("scatter_reduce(): argument 'src' must be a Tensor")
    d = _gather_checks(input, dim, index, "scatter_reduce", src)
    array = _index_array(index, input)
    _check_range(array, input._data.shape[d] if input._data.ndim else 1, d, "scatter_reduce",
                 error=RuntimeError)
    target, flat = _flat_args(input, array)
    source = _src_part(src, index)
    if source._data.shape != flat.shape:
        source = source.reshape(flat.shape)
    out = ScatterReduce.apply(target, source, _along(flat, d, xp_of(input)), reduce,
                              bool(include_self))
    return out.reshape(()) if input._data.ndim == 0 else out


class IndexReduce(ScatterReduce):
    node_name = "IndexReduceBackward0"


# ----------------------------------------------------------------------------- index_*
def _vector_index(index, input: Tensor, d: int, op: str, allowed=_INT32_64,
                  error: type = RuntimeError, negative: bool = False):
    _index_tensor(index, op, allowed, error=error)
    if index._data.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector (got {index._data.ndim}-D)")
    array = _index_array(index, input).reshape(-1)
    size = input._data.shape[d] if input._data.ndim else 1
    _check_range(array, size, d, op, negative)
    if negative and array.size and int(array.min()) < 0:  # counted from the end
        array = array % size
    return array


def _index_select_samples(make):
    return [Sample((make((4, 3)), 0, _const(make, [3, 0, 3])), name="repeats"),
            Sample((make((2, 3, 4)), -1, _const(make, [1, 2])), name="dim -1"),
            Sample((make((3, 4)), 1, _const(make, 2)), name="0-d index")]


@register_op(methods=("index_select",), samples=_index_select_samples)
def index_select(input, dim, index):
    """The entries of ``input`` along ``dim`` at the positions in the 1-D ``index``
    (repeats allowed; their gradients add)."""
    ensure_tensor(input, "index_select")
    d = wrap_dim(dim, input._data.ndim, "index_select")
    array = _vector_index(index, input, d, "index_select")
    if input._data.ndim == 0:
        out = IndexSelect.apply(input.reshape(1), (array,))
        return out.reshape(()) if array.shape[0] == 1 else out  # PyTorch keeps 0-d
    return IndexSelect.apply(input, _at_dim(array, d))


def _index_source(input: Tensor, d: int, array, source: Tensor, op: str) -> Tensor:
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}(): argument 'source' must be a Tensor, not "
                        f"{type(source).__name__}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{op}(): self ({input.dtype.name}) and source "
                           f"({source.dtype.name}) must have the same scalar type")
    expected = list(input.shape)
    if expected:
        expected[d] = array.shape[0]
    if list(source.shape) != expected and not (source._data.ndim == 0 and array.shape[0] == 1
                                               and input._data.ndim <= 1):
        raise RuntimeError(f"{op}(): source of shape {list(source.shape)} doesn't match the "
                           f"expected shape {expected} (input's shape with dim {d} the "
                           f"length of index)")
    return source.reshape(expected) if source._data.ndim == 0 else source


def _index_add_samples(make):
    return [Sample((make((4, 3)), 0, _const(make, [3, 0, 3]), make((3, 3))), name="repeats"),
            Sample((make((2, 4)), 1, _const(make, [1, 2]), make((2, 2))), {"alpha": 2.5},
                   name="alpha")]


@register_op(methods=("index_add",), samples=_index_add_samples)
def index_add(input, dim, index, source, *, alpha=1):
    """``out = input.clone()`` then ``out[..., index[i], ...] += alpha * source[..., i, ...]``
    along ``dim``; repeated indices add up."""
    ensure_tensor(input, "index_add")
    d = wrap_dim(dim, input._data.ndim, "index_add")
    array = _vector_index(index, input, d, "index_add")
    source = _index_source(input, d, array, source, "index_add")
    if alpha != 1:
        source = source * alpha
    if input._data.ndim == 0:
        return IndexAdd.apply(input.reshape(1), source.reshape(-1), (array,)).reshape(())
    return IndexAdd.apply(input, source, _at_dim(array, d))


def _index_copy_samples(make):
    return [Sample((make((4, 3)), 0, _const(make, [3, 0]), make((2, 3))), name="dim 0"),
            Sample((make((2, 4)), -1, _const(make, [1, 2, 0]), make((2, 3))), name="dim -1")]


@register_op(methods=("index_copy",), samples=_index_copy_samples)
def index_copy(input, dim, index, source):
    """``out = input.clone()`` then ``out[..., index[i], ...] = source[..., i, ...]`` along
    ``dim`` (with repeated indices, which one lands is unspecified)."""
    ensure_tensor(input, "index_copy")
    d = wrap_dim(dim, input._data.ndim, "index_copy")
    array = _vector_index(index, input, d, "index_copy", ("int64",))
    source = _index_source(input, d, array, source, "index_copy")
    if input._data.ndim == 0:
        return IndexCopy.apply(input.reshape(1), source.reshape(-1), (array,), False).reshape(())
    return IndexCopy.apply(input, source, _at_dim(array, d), False)


def _index_fill_samples(make):
    return [Sample((make((4, 3)), 0, _const(make, [3, 0, 3]), -1.5), name="number, repeats"),
            Sample((make((2, 4)), 1, _const(make, [1, 2]), make(())), name="0-d tensor value")]


@register_op(methods=("index_fill",), samples=_index_fill_samples)
def index_fill(input, dim, index, value):
    """``out = input.clone()`` with the entries at ``index`` along ``dim`` set to ``value``
    (a number or a 0-d tensor, which then gets the sum of their gradients)."""
    ensure_tensor(input, "index_fill")
    d = wrap_dim(dim, input._data.ndim, "index_fill")
    array = _vector_index(index, input, d, "index_fill", ("int64",), IndexError, True)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"index_fill(): only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value._data.ndim} dimension(s).")
        if input._data.dtype.kind in "iu":  # PyTorch reads the value as a number here
            dtypes.checked_number(value.item(), input._data.dtype)
        if value.dtype is not input.dtype or value._device != input._device:
            value = value.to(input.dtype, input.device)
    elif isinstance(value, (bool, int, float, np.generic)):
        value = dtypes.checked_number(value, input._data.dtype)
    else:
        raise TypeError(f"index_fill(): 'value' must be a number or a 0-d Tensor, not "
                        f"{type(value).__name__}")
    if input._data.ndim == 0:
        return IndexFill.apply(input.reshape(1), value, (array,), False).reshape(())
    return IndexFill.apply(input, value, _at_dim(array, d), False)


def _index_reduce_samples(make):
    x, src = make((4, 3), low=0.5, high=2), make((3, 3), low=0.5, high=2)
    index = _const(make, [3, 0, 3])
    return [Sample((x, 0, index, src, "prod"), name="prod repeats"),
            Sample((x, 0, index, src, "mean"), {"include_self": False}, name="mean no self"),
            Sample((make((2, 4)), 1, _const(make, [1, 1, 2]), make((2, 3)), "amax"),
                   name="amax dim 1"),
            Sample((x, -2, index, src, "amin"), name="amin")]


@register_op(methods=("index_reduce",), samples=_index_reduce_samples)
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``index_add`` with another reduction: the entries of ``input`` at ``index`` along
    ``dim`` combine with the matching slices of ``source`` by 'prod', 'mean', 'amax' or
    'amin' (and with their own value when ``include_self``). Gradients as
    ``scatter_reduce``."""
    ensure_tensor(input, "index_reduce")
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = wrap_dim(dim, input._data.ndim, "index_reduce")
    array = _vector_index(index, input, d, "index_reduce")
    source = _index_source(input, d, array, source, "index_reduce")
    if input._data.ndim == 0:
        return IndexReduce.apply(input.reshape(1), source.reshape(-1), (array,), reduce,
                                 bool(include_self)).reshape(())
    return IndexReduce.apply(input, source, _at_dim(array, d), reduce, bool(include_self))


def _put_samples(make):
    return [Sample((make((3, 4)), _const(make, [[0, -1], [5, 7]]), make((2, 2))),
                   name="negative"),
            Sample((make((2, 3)), _const(make, [4, 4, 0]), make((3,))), {"accumulate": True},
                   name="accumulate repeats")]


@register_op(methods=("put",), samples=_put_samples)
def put(input, index, source, accumulate=False):
    """``input`` read as a 1-D row-major vector with the positions ``index`` (int64;
    negatives count from the end) set to (or, with ``accumulate``, increased by) the
    elements of ``source``; the shape is kept."""
    ensure_tensor(input, "put")
    if not isinstance(index, Tensor) or index.dtype is not dtypes.int64:
        got = index.dtype.name if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"put(): Expected a long tensor for index, but got {got}")
    ensure_tensor(source, "put", "source")
    if source._data.size != index._data.size:
        raise RuntimeError(f"put(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source._data.size}, "
                           f"index.numel() = {index._data.size}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put(): self ({input.dtype.name}) and source ({source.dtype.name}) "
                           f"must have the same scalar type")
    array = _index_array(index, input).reshape(-1)
    size = input._data.size
    if array.size and (int(array.min()) < -size or int(array.max()) >= size):
        bad = int(array.min()) if int(array.min()) < -size else int(array.max())
        raise IndexError(f"put(): tried to access index {bad} on a tensor of {size} elements"
                         f" (out of range)")
    flat, values = input.reshape(-1), source.reshape(-1)
    if accumulate:
        out = IndexPutAccumulate.apply(flat, values, (array,))
    else:
        out = IndexPut.apply(flat, values, (array,), False)
    return out.reshape(input.shape)


# ----------------------------------------------------------------------------- index_put
def _index_put_samples(make):
    return [Sample((make((4, 3)), (_const(make, [0, 2]), _const(make, [1, 1])), make((2,))),
                   name="pairs"),
            Sample((make((4, 3)), (_const(make, [3, 0, 3]),), make((3, 3))), {"accumulate": True},
                   name="accumulate repeats"),
            Sample((make((2, 3)), (_const(make, [[True, False, True], [False, True, False]]),),
                    make(())), name="bool mask, broadcast value")]


def _index_put_values(input: Tensor, indices, values, op: str):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}(): argument 'indices' must be a tuple of Tensors, not "
                        f"{type(indices).__name__}")
    if not isinstance(values, Tensor):
        raise TypeError(f"{op}(): argument 'values' must be a Tensor, not "
                        f"{type(values).__name__}")
    if values.dtype is not input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{input.dtype.name} for the destination and {values.dtype.name} "
                           f"for the source.")
    for i, index in enumerate(indices):
        if index is not None and not isinstance(index, Tensor):
            raise TypeError(f"{op}(): indices[{i}] must be a Tensor, not "
                            f"{type(index).__name__}")
        # x[t] reads a 0-d int8/int16 t as a number; index_put takes no such index
        if index is not None and index.dtype.name not in ("int64", "int32", "uint8", "bool"):
            raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors "
                             f"(got {index.dtype.name})")
    index = tuple(slice(None) if i is None else i for i in indices)
    return convert_index(index, input)


@register_op(methods=("index_put",), samples=_index_put_samples)
def index_put(input, indices, values, accumulate=False):
    """``out = input.clone(); out[indices] = values`` (broadcast); with ``accumulate``,
    ``out[indices] += values`` where every repeated index adds (a scatter-add)."""
    ensure_tensor(input, "index_put")
    converted, basic = _index_put_values(input, indices, values, "index_put")
    try:
        if accumulate:
            return IndexPutAccumulate.apply(input, values, converted)
        return IndexPut.apply(input, values, converted, basic)
    except ValueError:
        error = shape_mismatch(values._data.shape, input._data[converted].shape, False)
        if error is None:
            raise
        raise error from None


# ----------------------------------------------------------------------------- masks
def _broadcast_mask(input: Tensor, mask, op: str):
    if not isinstance(mask, Tensor):
        raise TypeError(f"{op}(): argument 'mask' must be a Tensor, not {type(mask).__name__}")
    if mask.dtype is not dtypes.bool:
        raise RuntimeError(f"{op}: expected BoolTensor for mask (got {mask.dtype.name})")
    try:
        shape = tuple(np.broadcast_shapes(input._data.shape, mask._data.shape))
    except ValueError:
        raise RuntimeError(f"{op}(): the mask of shape {list(mask.shape)} can't be broadcast "
                           f"with the input of shape {list(input.shape)}") from None
    array = _index_array(mask, input)
    return shape, xp_of(input).broadcast_to(array, shape)


def _masked_select_samples(make):
    return [Sample((make((3, 4)), make.bool((3, 4))), name="same shape"),
            Sample((make((3, 1)), make.bool((2, 3, 4))), name="broadcast input"),
            Sample((make((2, 3)), make.bool((3,))), name="broadcast mask")]


@register_op(methods=("masked_select",), samples=_masked_select_samples)
def masked_select(input, mask):
    """The elements of ``input`` where the bool ``mask`` is True (both broadcast), as a
    1-D tensor in row-major order."""
    ensure_tensor(input, "masked_select")
    shape, array = _broadcast_mask(input, mask, "masked_select")
    if input._data.shape != shape:
        input = input.expand(shape)
    if not shape:
        return MaskedSelect.apply(input.reshape(1), (array.reshape(1).nonzero()[0],))
    return MaskedSelect.apply(input, array.nonzero())


def _masked_scatter_samples(make):
    return [Sample((make((3, 4)), make.bool((3, 4)), make((3, 4))), name="same shape"),
            Sample((make((2, 3)), make.bool((3,)), make((7,))), name="broadcast, longer source")]


def _masked_scatter(input: Tensor, mask, source, op: str, shape=None):
    ensure_tensor(input, op)
    full_shape, array = _broadcast_mask(input, mask, op)
    if shape is not None and full_shape != shape:
        raise RuntimeError(f"{op}(): the mask of shape {list(mask.shape)} can't be broadcast "
                           f"to the tensor's shape {list(shape)}")
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}(): argument 'source' must be a Tensor, not "
                        f"{type(source).__name__}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{op}: expected self and source to have same dtypes but got "
                           f"{input.dtype.name} and {source.dtype.name}")
    if input._data.shape != full_shape:
        input = input.expand(full_shape)
    if not full_shape:
        return _masked_scatter(input.reshape(1), mask.reshape(1), source, op).reshape(())
    index = array.nonzero()
    count = int(index[0].shape[0])
    if source._data.size < count:
        raise RuntimeError(f"{op}: expected source to have at least as many elements as the "
                           f"ones in mask ({count}), but got {source._data.size}")
    values = source.reshape(-1)
    if values._data.shape[0] != count:
        values = values.narrow(0, 0, count)
    return MaskedScatter.apply(input, values, index, False)


@register_op(methods=("masked_scatter",), samples=_masked_scatter_samples)
def masked_scatter(input, mask, source):
    """``out = input.clone()`` with the positions where ``mask`` is True (broadcast) filled,
    in row-major order, by the first elements of ``source``."""
    return _masked_scatter(input, mask, source, "masked_scatter")


# ----------------------------------------------------------------------------- take
def _take_samples(make):
    return [Sample((make((3, 4)), _const(make, [[0, 11], [-1, 0]])), name="negative, repeats"),
            Sample((make(()), _const(make, [0, 0])), name="0-d input")]


@register_op(methods=("take",), samples=_take_samples)
def take(input, index):
    """``input`` read as a 1-D row-major vector at ``index`` (int64; negatives count from
    the end); the result has ``index``'s shape."""
    ensure_tensor(input, "take")
    if not isinstance(index, Tensor) or index.dtype is not dtypes.int64:
        got = index.dtype.name if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {got}")
    array = _index_array(index, input)
    size = input._data.size
    if array.size and (int(array.min()) < -size or int(array.max()) >= size):
        bad = int(array.min()) if int(array.min()) < -size else int(array.max())
        raise IndexError(f"take(): tried to access index {bad} on a tensor of {size} elements"
                         f" (out of range)")
    return Take.apply(input.reshape(-1), (array,))


def _take_along_dim_samples(make):
    return [Sample((make((3, 4)), _const(make, [[0, 3], [1, 1], [2, 0]]), 1), name="dim 1"),
            Sample((make((3, 4)), _const(make, [[2, 0, 1, 2]]), 0), name="broadcast index"),
            Sample((make((3, 4)), _const(make, [5, 0, 5])), name="flattened")]


@register_op(methods=("take_along_dim",), samples=_take_along_dim_samples)
def take_along_dim(input, indices, dim=None):
    """``gather`` along ``dim`` after broadcasting ``input`` and ``indices`` in the other
    dims; without a dim, on the flattened input with flattened indices."""
    ensure_tensor(input, "take_along_dim")
    _index_tensor(indices, "take_along_dim", arg="indices")
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if input._data.ndim != indices._data.ndim:
        raise RuntimeError(f"take_along_dim(): input and indices should have the same number "
                           f"of dimensions, but got {input._data.ndim} dimensions for input, and "
                           f"{indices._data.ndim} dimensions for indices")
    d = wrap_dim(dim, input._data.ndim, "take_along_dim")
    xs, ts = list(input.shape), list(indices.shape)
    xs[d] = ts[d] = 1
    try:
        common = list(np.broadcast_shapes(tuple(xs), tuple(ts)))
    except ValueError:
        raise RuntimeError(f"take_along_dim(): input {list(input.shape)} and indices "
                           f"{list(indices.shape)} don't broadcast apart from dim {d}") from None
    input_shape, index_shape = common.copy(), common.copy()
    input_shape[d], index_shape[d] = input._data.shape[d], indices._data.shape[d]
    if list(input.shape) != input_shape:
        input = input.expand(input_shape)
    if list(indices.shape) != index_shape:
        indices = indices.expand(index_shape)
    return gather(input, d, indices)


# ----------------------------------------------------------------------------- integer results
class Nonzero(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x, as_tuple):
        xp = ctx.xp
        flat = x.reshape(1) if x.ndim == 0 else x
        found = xp.nonzero(flat)
        if as_tuple:
            return tuple(a.astype(np.int64, copy=False) for a in found)
        if x.ndim == 0:
            return xp.zeros((found[0].shape[0], 0), np.int64)
        return xp.stack(found, axis=1).astype(np.int64, copy=False)


def _nonzero_samples(make):
    x = make((3, 4))
    return [Sample((_const(make, [[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]]),), name="float"),
            Sample((make.bool((2, 3, 2)),), name="bool 3-D"),
            Sample((_const(make, [[0, 3], [4, 0]]),), {"as_tuple": True}, name="as_tuple"),
            Sample((x,), name="dense")]


@register_op(methods=("nonzero",), samples=_nonzero_samples, differentiable=False)
def nonzero(input, *, as_tuple=False):
    """The indices of the non-zero elements: an (n, ndim) int64 tensor in row-major order,
    or with ``as_tuple`` one 1-D tensor per dim."""
    ensure_tensor(input, "nonzero")
    result = Nonzero.apply(input, bool(as_tuple))
    return result if not as_tuple or isinstance(result, tuple) else (result,)


@register_op(methods=("argwhere",), differentiable=False,
             samples=lambda make: [s for s in _nonzero_samples(make) if not s.kwargs])
def argwhere(input):
    """``nonzero(input)``: the (n, ndim) indices of the non-zero elements."""
    ensure_tensor(input, "argwhere")
    return Nonzero.apply(input, False)


class Unique(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x, return_inverse, return_counts, dim):
        xp = ctx.xp
        if dim is None:
            # every NaN is distinct, as in PyTorch
            kinds = {"equal_nan": False} if x.dtype.kind in "fc" else {}
            values, inverse, counts = xp.unique(x.reshape(-1), return_inverse=True,
                                                return_counts=True, **kinds)
            inverse = inverse.reshape(x.shape)
        else:
            values, inverse, counts = xp.unique(x, return_inverse=True, return_counts=True,
                                                axis=dim)
            inverse = inverse.reshape(-1)
        out = [values]
        if return_inverse:
            out.append(inverse.astype(np.int64, copy=False))
        if return_counts:
            out.append(counts.astype(np.int64, copy=False))
        return tuple(out) if len(out) > 1 else out[0]


def _unique_samples(make):
    x = _const(make, [[2.0, -1.0, 2.0], [0.5, -1.0, 2.0]])
    rows = _const(make, [[1, 2], [0, 5], [1, 2], [0, 5]])
    return [Sample((x,), name="plain"),
            Sample((x,), {"return_inverse": True, "return_counts": True}, name="inverse, counts"),
            Sample((rows,), {"dim": 0, "return_inverse": True}, name="dim 0"),
            Sample((rows,), {"dim": 1, "return_counts": True}, name="dim 1")]


@register_op(methods=("unique",), samples=_unique_samples, differentiable=False)
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements (or, with ``dim``, distinct slices along dim), in ascending
    order; ``return_inverse`` adds where each input element went, ``return_counts`` how
    often each occurs. Results are always sorted (sorted=False allows any order).
    Cost: one sort, O(n log n)."""
    ensure_tensor(input, "unique")
    if dim is not None:
        if input._data.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        dim = wrap_dim(dim, input._data.ndim, "unique")
    return Unique.apply(input, bool(return_inverse), bool(return_counts), dim)


class UniqueConsecutive(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x, return_inverse, return_counts, dim):
        xp = ctx.xp
        if dim is None:
            rows = x.reshape(-1, 1)
        else:
            rows = (xp.moveaxis(x, dim, 0).reshape(x.shape[dim], -1) if x.size
                    else xp.zeros((x.shape[dim], 0), x.dtype))
        n = rows.shape[0]
        starts = xp.ones(n, bool)
        if n > 1:
            starts[1:] = xp.any(rows[1:] != rows[:-1], axis=1)
        first = xp.nonzero(starts)[0]
        if dim is None:
            values = x.reshape(-1)[first]
        else:
            values = xp.take(x, first, axis=dim)
        out = [values]
        if return_inverse:
            inverse = xp.cumsum(starts).astype(np.int64) - 1
            out.append(inverse.reshape(x.shape) if dim is None else inverse)
        if return_counts:
            out.append(xp.diff(xp.concatenate([first, xp.asarray([n])])).astype(np.int64))
        return tuple(out) if len(out) > 1 else out[0]


def _unique_consecutive_samples(make):
    x = _const(make, [[2.0, 2.0, -1.0], [-1.0, 3.0, 3.0]])
    rows = _const(make, [[1, 2], [1, 2], [0, 5], [1, 2]])
    return [Sample((x,), name="plain"),
            Sample((x,), {"return_inverse": True, "return_counts": True}, name="inverse, counts"),
            Sample((rows,), {"dim": 0, "return_inverse": True, "return_counts": True},
                   name="dim 0")]


@register_op(methods=("unique_consecutive",), samples=_unique_consecutive_samples,
             differentiable=False)
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse each run of equal consecutive elements (or slices along ``dim``) to one;
    optionally where each input element went and each run's length."""
    ensure_tensor(input, "unique_consecutive")
    if dim is not None:
        if input._data.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        dim = wrap_dim(dim, input._data.ndim, "unique_consecutive")
        if input._data.size == 0 and input._data.shape[dim] != 0:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
    return UniqueConsecutive.apply(input, bool(return_inverse), bool(return_counts), dim)


class Bincount(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x, weights, minlength, out_dtype):
        xp = ctx.xp
        counts = xp.bincount(x, weights=weights, minlength=minlength)
        return counts.astype(out_dtype, copy=False)


def _bincount_samples(make):
    x = _const(make, [2, 0, 2, 5, 1, 2])
    return [Sample((x,), name="counts"),
            Sample((x, make((6,), requires_grad=False)), name="weights"),
            Sample((x,), {"minlength": 9}, name="minlength"),
            Sample((_const(make, [], dtype=dtypes.int64),), {"minlength": 2}, name="empty")]


@register_op(methods=("bincount",), samples=_bincount_samples, differentiable=False)
def bincount(input, weights=None, minlength=0):
    """How often each value 0..max occurs in the 1-D non-negative integer ``input`` (at
    least ``minlength`` bins); with ``weights``, the sum of the weights per value."""
    ensure_tensor(input, "bincount")
    data = input._data
    if data.ndim != 1 or data.dtype.kind not in "iu" or (data.size and int(data.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("bincount(): minlength should be >= 0")
    out_dtype = np.int64
    w = None
    if weights is not None:
        ensure_tensor(weights, "bincount", "weights")
        if weights._data.shape != data.shape:
            raise RuntimeError("bincount(): weights should be 1-d and have the same length as "
                               "input")
        out_dtype = np.float32 if weights._data.dtype == np.float32 else np.float64
        w = weights.detach()
    return Bincount.apply(input, w, int(minlength), out_dtype)


class Histc(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x, bins, low, high):
        xp = ctx.xp
        flat = x.reshape(-1)
        if low == high and flat.size:
            low, high = float(flat.min()), float(flat.max())
        if low == high:
            low, high = low - 1, high + 1
        if not (np.isfinite(low) and np.isfinite(high)):
            raise RuntimeError(f"torch.histc: range of [{low:g}, {high:g}] is not finite")
        inside = (flat >= low) & (flat <= high)
        values = flat[inside]
        position = ((values - low) / (high - low) * bins).astype(np.int64)
        position = xp.minimum(position, bins - 1)  # the top edge belongs to the last bin
        return xp.bincount(position, minlength=bins)[:bins].astype(x.dtype)


def _histc_samples(make):
    return [Sample((make((4, 5), requires_grad=False),), {"bins": 4}, name="data range"),
            Sample((make((12,), requires_grad=False), 6, -1.0, 1.0), name="range, outliers")]


@register_op(methods=("histc",), samples=_histc_samples, differentiable=False)
def histc(input, bins=100, min=0, max=0):
    """A histogram of ``bins`` equal-width bins over [min, max] (the data's range when both
    are 0); elements outside are ignored. Same dtype as the (floating) input."""
    ensure_tensor(input, "histc")
    if input._data.dtype.kind not in "fV":
        raise RuntimeError(f"histc(): expected a floating-point input, but got "
                           f"{input.dtype.name}")
    if bins <= 0:
        raise RuntimeError(f"histc(): bins must be > 0, but got {bins}")
    if min > max:
        raise RuntimeError(f"histc(): max must be larger than min (got min={min}, max={max})")
    return Histc.apply(input, int(bins), float(min), float(max))


class SearchSorted(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, sequence, values, side, out_dtype):
        xp = ctx.xp
        if sequence.ndim == 1:
            return xp.searchsorted(sequence, values, side=side).astype(out_dtype)
        # Rows at once: rank every number among all of them (equal numbers, equal rank),
        # then key = row * (ranks + 1) + rank keeps rows apart and each row sorted, so one
        # 1-D search over the flattened keys answers every row.
        n = sequence.shape[-1]
        rows = int(np.prod(sequence.shape[:-1]))
        both = xp.concatenate([sequence.reshape(-1), values.reshape(-1)])
        _, rank = xp.unique(both, return_inverse=True)
        rank = rank.reshape(-1).astype(np.int64)
        stride = int(rank.max()) + 2 if rank.size else 1
        seq_key = rank[:sequence.size].reshape(rows, n)
        val_key = rank[sequence.size:].reshape(rows, -1)
        offsets = (xp.arange(rows, dtype=np.int64) * stride)[:, None]
        found = xp.searchsorted((seq_key + offsets).reshape(-1), (val_key + offsets).reshape(-1),
                                side=side)
        found = found.reshape(rows, -1) - xp.arange(rows, dtype=np.int64)[:, None] * n
        return found.reshape(values.shape).astype(out_dtype)


def _search_values(values, like: Tensor, op: str) -> Tensor:
    if isinstance(values, Tensor):
        return values
    if isinstance(values, (bool, int, float, np.generic)):
        from ..creation import tensor

        return tensor(values, device=like.device)
    raise TypeError(f"{op}(): argument 'input' must be a Tensor or a number, not "
                    f"{type(values).__name__}")


def _searchsorted_samples(make):
    seq = _const(make, [-1.0, 0.0, 0.0, 1.5, 3.0])
    rows = _const(make, [[0.0, 1.0, 2.0], [-2.0, -1.0, 5.0]])
    values = _const(make, [[0.0, 2.0, -3.0], [3.0, 1.5, 9.0]])
    return [Sample((seq, values), name="1-D"),
            Sample((seq, values), {"right": True}, name="right"),
            Sample((rows, _const(make, [[1.0, 2.5], [-1.0, 0.0]])), {"side": "right"},
                   name="rows, side right"),
            Sample((rows, _const(make, [[1.0, -5.0], [5.0, 0.0]])), {"out_int32": True},
                   name="rows, int32"),
            Sample((seq, 0.0), name="scalar value")]


@register_op(samples=_searchsorted_samples, differentiable=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """For each value, the index where it would be inserted into the innermost (sorted)
    dim of ``sorted_sequence`` to keep it sorted: before equal elements, or after them
    with ``right=True`` / ``side='right'``. ``sorter`` sorts an unsorted sequence.
    Cost: O(m log n) for one sequence; for a batch of sequences one sort of all the numbers,
    O((N + M) log(N + M))."""
    ensure_tensor(sorted_sequence, "searchsorted", "sorted_sequence")
    values = _search_values(input, sorted_sequence, "searchsorted")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    sequence = sorted_sequence
    if sorter is not None:
        if not isinstance(sorter, Tensor) or sorter.shape != sequence.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same "
                               "size")
        sequence = Tensor._make(xp_of(sequence).take_along_axis(
            sequence._data, _index_array(sorter, sequence), axis=-1), sequence._device)
    if sequence._data.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if sequence._data.ndim > 1 and sequence._data.shape[:-1] != values._data.shape[:-1]:
        raise RuntimeError(
            f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            f"dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(sequence.shape)} and input value tensor "
            f"{list(values.shape)}")
    return _search(sequence, values, right, out_int32)


def _bucketize_samples(make):
    boundaries = _const(make, [-1.0, 0.0, 0.0, 2.0])
    values = _const(make, [[0.0, 2.0, -3.0], [3.0, 1.5, -1.0]])
    return [Sample((values, boundaries), name="left"),
            Sample((values, boundaries), {"right": True, "out_int32": True}, name="right"),
            Sample((1.0, boundaries), name="scalar")]


@register_op(methods=("bucketize",), samples=_bucketize_samples, differentiable=False)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value: i with ``boundaries[i-1] < v <= boundaries[i]`` (or
    ``boundaries[i-1] <= v < boundaries[i]`` with ``right=True``); 1-D sorted boundaries."""
    ensure_tensor(boundaries, "bucketize", "boundaries")
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._data.ndim})")
    values = _search_values(input, boundaries, "bucketize")
    return _search(boundaries, values, right, out_int32)


def _search(sequence, values, right, out_int32):
    if sequence._data.dtype.kind == "b" and values._data.dtype.kind == "b":
        # (PyTorch compares in the promoted dtype and has no bool kernel)
        raise dtype_not_implemented("searchsorted_out_cpu", sequence.dtype, "search numbers: "
                                    "convert with .int() first")
    return SearchSorted.apply(sequence.detach(), values.detach(), "right" if right else "left",
                              np.int32 if out_int32 else np.int64)


# ----------------------------------------------------------------------------- in place
def _scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    """In-place ``scatter``."""
    return apply_inplace(self, scatter, dim, index, src, value, reduce=reduce)


def _scatter_add_(self, dim, index, src):
    """In-place ``scatter_add``."""
    return apply_inplace(self, scatter_add, dim, index, src)


def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """In-place ``scatter_reduce``."""
    return apply_inplace(self, scatter_reduce, dim, index, src, reduce, include_self=include_self)


def _index_add_(self, dim, index, source, *, alpha=1):
    """In-place ``index_add``."""
    return apply_inplace(self, index_add, dim, index, source, alpha=alpha)


def _index_copy_(self, dim, index, source):
    """In-place ``index_copy``."""
    return apply_inplace(self, index_copy, dim, index, source)


def _index_fill_(self, dim, index, value):
    """In-place ``index_fill``."""
    return apply_inplace(self, index_fill, dim, index, value)


def _index_put_(self, indices, values, accumulate=False):
    """In-place ``index_put``."""
    return apply_inplace(self, index_put, indices, values, accumulate)


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """In-place ``index_reduce``."""
    return apply_inplace(self, index_reduce, dim, index, source, reduce, include_self=include_self)


def _put_(self, index, source, accumulate=False):
    """In-place ``put``."""
    return apply_inplace(self, put, index, source, accumulate)


def _masked_scatter_(self, mask, source):
    """In-place ``masked_scatter``: the mask must broadcast to self's shape."""
    return apply_inplace(self, lambda t, m, s: _masked_scatter(t, m, s, "masked_scatter_",
                                                          tuple(self._data.shape)), mask, source)


for _name, _function in (("scatter_", _scatter_), ("scatter_add_", _scatter_add_),
                         ("scatter_reduce_", _scatter_reduce_), ("index_add_", _index_add_),
                         ("index_copy_", _index_copy_), ("index_fill_", _index_fill_),
                         ("index_put_", _index_put_), ("masked_scatter_", _masked_scatter_),
                         ("index_reduce_", _index_reduce_), ("put_", _put_)):
    bind_method(_name, _function)
