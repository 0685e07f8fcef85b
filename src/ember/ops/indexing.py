"""Indexing and copying: ``x[index]``, ``x[index] = value``, narrow, select, clone,
contiguous, ``to`` (dtype/device casts), fill_, copy_, and the bookkeeping that makes
in-place changes through a view update the base's graph (CopySlices)."""
from __future__ import annotations

import warnings

import numpy as np

from .. import backend, dtypes, tracing
from ..autograd import grad_mode
from ..autograd.function import Function
from ..creation import layout_strides
from ..runtime import contiguous_format, preserve_format
from ..tensor import Tensor, bump_version, check_no_overlap, check_writable, counter_of
from ._util import as_int, ensure_tensor, wrap_dim
from .registry import Sample, bind_method, register_op

_INDEX_TYPES = "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables " \
               "are valid indices"


def convert_index(index, tensor: Tensor):
    """A NumPy/CuPy index from a PyTorch-style one, and whether it is basic (a view).

    Validates everything NumPy or CuPy would report badly (CuPy wraps out-of-range
    indices silently): integers and integer arrays must lie in [-size, size) of the dim
    they index, boolean masks must match the dims they cover. Boolean masks become their
    ``nonzero()`` index arrays (NumPy's own definition), so the gradient's scatter-add
    sees integer arrays only."""
    kind = type(index)
    if kind is int or kind is slice or (kind is tuple and all(
            type(i) is int or type(i) is slice for i in index)):
        fast = _basic_fast_path(index if kind is tuple else (index,), tensor._data.shape)
        if fast is not None:
            return fast, True
    if _sequence_as_tuple(index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated; "
                      "use x[tuple(seq)] instead of x[seq]", UserWarning, stacklevel=3)
        index = tuple(index)
    items = index if isinstance(index, tuple) else (index,)
    xp = backend.xp_for_device(tensor._device)
    parsed = []
    basic = True
    ellipses = 0
    for item in items:
        if isinstance(item, range):
            item = list(item)
        if item is None or item is Ellipsis:
            ellipses += item is Ellipsis
            parsed.append(item)
        elif isinstance(item, bool):
            parsed.append(xp.asarray(item))
            basic = False
        elif isinstance(item, (int, np.integer)):
            parsed.append(int(item))
        elif isinstance(item, slice):
            start, stop, step = (_slice_part(p) for p in (item.start, item.stop, item.step))
            if step is not None and step <= 0:
                raise ValueError("step must be greater than zero")
            parsed.append(slice(start, stop, step))
        elif isinstance(item, Tensor):
            dtype = item._data.dtype
            mask = dtype == np.bool_ or dtype == np.uint8
            if not mask and item._data.ndim == 0 and dtype.kind in "iu":
                parsed.append(int(item.item()))  # any 0-d integer acts as a Python int
                continue
            if not mask and dtype != np.int64 and dtype != np.int32:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 f"tensors (got {item.dtype.name})")
            if dtype == np.uint8:
                warnings.warn("indexing with dtype uint8 is now deprecated, please use a dtype "
                              "bool instead.", UserWarning, stacklevel=3)
            array = item._data if item._device == tensor._device else \
                backend.move(item._data, item._device, tensor._device)
            parsed.append(array.astype(bool) if dtype == np.uint8 else array)
            basic = False
        elif isinstance(item, (list, np.ndarray)) or type(item).__module__.startswith("cupy"):
            array = xp.asarray(_plain(item))
            if array.dtype.kind not in "biu" and array.size:
                raise IndexError(f"{_INDEX_TYPES} (got a list of {array.dtype})")
            parsed.append(array.astype(np.int64) if array.size == 0 else array)
            basic = False
        else:
            raise IndexError(f"{_INDEX_TYPES} (got {type(item).__name__})")
    if ellipses > 1:
        parsed = _expand_ellipses(parsed, tensor._data.ndim)
    converted = _validate(parsed, tensor._data.shape)
    if not basic:
        converted = _torch_placement(converted, tensor._data.shape, xp)
    if basic and Ellipsis not in converted:
        converted.append(Ellipsis)  # keeps x[0, 1] a 0-d view, not a NumPy scalar
    return tuple(converted), basic


def _sequence_as_tuple(index) -> bool:
    """PyTorch's legacy rule: a short list holding a sequence, slice, Tensor, None or ...
    indexes several dims, as a tuple would (``x[[[0, 1], [2, 0]]]`` is ``x[[0, 1], [2, 0]]``)."""
    if not isinstance(index, list) or len(index) >= 32:
        return False
    return any(isinstance(i, (list, tuple, range, slice, Tensor)) or i is None or i is Ellipsis
               for i in index)


def _basic_fast_path(items: tuple, shape: tuple):
    """The common ``x[i]``, ``x[a:b, j]``: ints and slices only. None when the general
    path must decide (a bad step, too many indices)."""
    if len(items) > len(shape):
        return None
    for dim, item in enumerate(items):
        if type(item) is int:
            size = shape[dim]
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for dimension {dim} with size "
                                 f"{size}")
        elif item.step is not None and not (type(item.step) is int and item.step > 0) or not (
                item.start is None or type(item.start) is int) or not (
                item.stop is None or type(item.stop) is int):
            return None
    return items + (Ellipsis,)


def _consumed(item) -> int:
    """How many dims of the indexed tensor an index item uses up."""
    if item is None or item is Ellipsis:
        return 0
    if hasattr(item, "dtype") and item.dtype == np.bool_:
        return item.ndim
    return 1


_SKIPPED = slice(None)  # the dims an ellipsis stands for


def _expand_ellipses(items: list, ndim: int) -> list:
    """PyTorch's reading of an index with several ellipses: each one skips the dims the
    other items leave (``x[..., 0, ...]`` is ``x[..., 0]``), and those that skip dims past
    the last one index nothing unless something follows them."""
    skipped = ndim - sum(_consumed(item) for item in items)
    if skipped < 0:
        return items  # too many indices: _validate says so
    out = []
    for item in items:
        out.extend([_SKIPPED] * skipped if item is Ellipsis else [item])
    while out and out[-1] is _SKIPPED:
        out.pop()
    if sum(_consumed(item) for item in out) > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}: each '...' in "
                         f"the index stands for all {skipped} dim(s) the other items leave, so "
                         "an item after the second '...' indexes past the last dim")
    return out


def _validate(items, shape) -> list:
    ndim = len(shape)
    used = sum(_consumed(item) for item in items)
    if used > ndim:
        if ndim == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python "
                             "to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    out = []
    dim = 0
    for item in items:
        if item is Ellipsis:
            dim += ndim - used
            out.append(item)
            continue
        if item is None or isinstance(item, slice):
            out.append(item)
            dim += item is not None
            continue
        if isinstance(item, int):
            if not -shape[dim] <= item < shape[dim]:
                raise IndexError(f"index {item} is out of bounds for dimension {dim} with size "
                                 f"{shape[dim]}")
            out.append(item)
            dim += 1
            continue
        if item.dtype == np.bool_:
            covered = shape[dim:dim + item.ndim]
            if item.ndim and tuple(item.shape) != tuple(covered):
                for k, (m, s) in enumerate(zip(item.shape, covered)):
                    if m != s:
                        raise IndexError(
                            f"The shape of the mask {list(item.shape)} at index {k} does not "
                            f"match the shape of the indexed tensor {list(shape)} at index "
                            f"{dim + k}")
            out.extend(item.nonzero() if item.ndim else (item,))
            dim += item.ndim
            continue
        if item.size:
            low, high = int(item.min()), int(item.max())
            size = shape[dim]
            if low < -size or high >= size:
                bad = low if low < -size else high
                raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size "
                                 f"{size}")
        out.append(item)
        dim += 1
    return out


def _is_array(item) -> bool:
    return hasattr(item, "dtype")


def _torch_placement(items: list, shape, xp) -> list:
    """PyTorch applies integer indices first (as selects), then the index arrays; NumPy
    counts integers as index arrays. The two place the indexed dims differently only when
    integers keep NumPy's index arrays apart while the arrays alone are adjacent (e.g.
    ``x[1, :, [0, 2]]``). Then index with full coordinate arrays that reproduce PyTorch's
    layout (rare, and costs one int array of the result's size per dim)."""
    def adjacent(positions):
        return not positions or positions[-1] - positions[0] == len(positions) - 1

    numpy_positions = [i for i, it in enumerate(items) if isinstance(it, int) or _is_array(it)]
    torch_positions = [i for i, it in enumerate(items) if _is_array(it)]
    kept = [it for it in items if not isinstance(it, int)]
    torch_adjacent = adjacent([i for i, it in enumerate(kept) if _is_array(it)])
    if adjacent(numpy_positions) or not torch_adjacent or len(torch_positions) == len(
            numpy_positions):
        return items
    first = [it if isinstance(it, int) or not _is_array(it) else slice(None) for it in items]
    then = [slice(None) if it is None or isinstance(it, slice) else it for it in kept]
    coordinates = []
    for d, size in enumerate(shape):
        axis = [1] * len(shape)
        axis[d] = size
        grid = xp.broadcast_to(xp.arange(size).reshape(axis), shape)
        coordinates.append(grid[tuple(first)][tuple(then)])
    return coordinates


def _slice_part(part):
    if part is None or isinstance(part, int):
        return part
    if isinstance(part, (np.integer, Tensor)):
        return int(part)
    raise TypeError(f"slice indices must be integers or None, got {type(part).__name__}")


def _plain(item):
    if isinstance(item, list):
        return [_plain(i) for i in item]
    if isinstance(item, Tensor):
        return item.tolist()
    return item


class BasicIndex(Function):
    """Ints, slices, None and ...: the result is a view."""

    array_backward = True
    node_name = "SliceBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, index):
        ctx.input_shape, ctx.index = x.shape, index
        if any(isinstance(i, int) for i in index):
            ctx.node_name = "SelectBackward0"
        return x[index]

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(IndexScatter, grad, ctx.input_shape, ctx.index, False), None


class ItemView(BasicIndex):
    """``x[index]`` with a basic index, its node named as PyTorch's indexing names it: after
    the last step that changes something (``x[0, None]`` is UnsqueezeBackward0, ``x[:]``
    AliasBackward0; narrow and select keep BasicIndex's names)."""

    @staticmethod
    def forward(ctx, x, index):
        out = BasicIndex.forward(ctx, x, index)
        ctx.node_name = _item_view_name(index, x.shape)
        return out


def _item_view_name(index, shape) -> str:
    name = "AliasBackward0"
    dim = 0
    skipped = len(shape) - sum(1 for i in index if i is not None and i is not Ellipsis)
    for item in index:
        if item is None:
            name = "UnsqueezeBackward0"
        elif item is Ellipsis:
            dim += skipped  # (the first ellipsis skips the dims; any later one none)
            skipped = 0
        else:
            if isinstance(item, int):
                name = "SelectBackward0"
            elif item.indices(shape[dim]) != (0, shape[dim], 1):
                name = "SliceBackward0"
            dim += 1
    return name


class AdvancedIndex(Function):
    """The gather: ``x[index]`` for an index tuple with integer arrays, or, for a bare
    integer array, ``take``: positions in the flattened ``x`` (a copy either way). Every
    op that picks elements by index (gather, index_select, take, masked_select, max over a
    dim, sort, max pooling, interpolation taps) is this op, or a subclass that only renames
    it. ``unique`` promises that no position repeats in the index, so the backward may
    assign instead of accumulate."""

    array_backward = True
    node_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, x, index, unique=False):
        ctx.input_shape, ctx.index, ctx.unique = x.shape, index, unique
        if type(index) is not tuple:
            return ctx.xp.take(x, index)
        axis = _single_axis(index)
        return x[index] if axis is None else ctx.xp.take(x, index[-1], axis=axis)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(IndexScatter, grad, ctx.input_shape, ctx.index,
                              not ctx.unique), None, None


class IndexScatter(Function):
    """The scatter-add, the gather's backward (and the gather is its backward): a zero
    tensor of ``shape`` with ``grad`` added at the index (``accumulate``: repeated
    positions sum) or assigned (a basic index, or an index without repeats)."""

    array_backward = True
    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, grad, shape, index, accumulate):
        ctx.index = index
        out = ctx.xp.zeros(shape, grad.dtype)
        if accumulate:
            scatter_add(out, index, grad)
        elif type(index) is tuple:
            out[index] = grad
        else:
            out.reshape(-1)[index] = grad
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        index = ctx.index
        if type(index) is tuple and _is_basic(index):
            return m.apply(BasicIndex, grad, index), None, None, None
        # the gather's adjoint adds: right even where an assigning scatter saw repeats
        return m.apply(AdvancedIndex, grad, index), None, None, None


def _single_axis(index: tuple):
    """The axis of an index ``(:, ..., :, positions)`` with 1-D integer positions (one
    axis read at given positions, which ``take`` does faster than indexing); else None."""
    last = index[-1] if index else None
    if _is_array(last) and last.ndim == 1 and last.dtype.kind in "iu" and all(
            type(i) is slice and i == slice(None) for i in index[:-1]):
        return len(index) - 1
    return None


def _is_basic(index: tuple) -> bool:
    """Only ints, slices, None and ...: the index makes a view."""
    return not any(_is_array(item) for item in index)


def scatter_add(out, index, values) -> None:
    """``out[index] += values`` (or, for a bare array, at positions of the flattened
    ``out``) with repeated positions summing, by the fastest route for the index's form:
    unbuffered adds (``backend.scatter_add``) are fast on one flat index and slow on
    several arrays or on slices, so several arrays become one flat index and one array
    along an axis is added in groups without repeats. ``out`` is C-contiguous."""
    if type(index) is not tuple:
        backend.scatter_add(out.reshape(-1), index, values)
        return
    arrays = [item for item in index if _is_array(item)]
    if len(index) == len(arrays) == out.ndim > 1 and all(a.dtype.kind in "iu" for a in arrays):
        flat = None
        for a, size in zip(arrays, out.shape):
            a = a.astype(np.int64, copy=False) % size  # negative positions count from the end
            flat = a if flat is None else flat * size + a
        backend.scatter_add(out.reshape(-1), flat, values)
        return
    last = index[-1] if index else None
    if len(index) > 1 and type(last) is np.ndarray and _single_axis(index) is not None:
        groups = _repeat_groups(last)
        if groups is not None:
            lead = index[:-1]
            for targets, sources in groups:
                out[lead + (targets,)] += values[lead + (sources,)]
            return
    backend.scatter_add(out, index, values)


def _repeat_groups(index: np.ndarray, limit: int = 16):
    """Split positions j of a host index array into groups in which index[j] doesn't
    repeat: the k-th group holds each value's k-th occurrence. Returns (targets, sources)
    per group; a fancy-indexed ``+=`` is exact within a group. There are as many groups as
    the largest repeat count (a handful for pooling and interpolation taps); None when
    that exceeds ``limit``."""
    order = np.argsort(index, kind="stable")
    ordered = index[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if ordered.size \
        else np.zeros(0, dtype=np.int64)
    lengths = np.diff(np.r_[starts, ordered.size])
    rank = np.arange(ordered.size) - np.repeat(starts, lengths)
    repeats = int(lengths.max()) if lengths.size else 0
    if repeats > limit:
        return None
    groups = []
    for k in range(repeats):
        sources = order[rank == k]
        groups.append((index[sources], sources))
    return groups


def _getitem_samples(make):
    return [Sample((make((4, 5)), 1), name="int"),
            Sample((make((4, 5)), (slice(1, None, 2), slice(None, 3))), name="slices with step"),
            Sample((make((3, 4)), (None, Ellipsis, 0)), name="None and ..."),
            Sample((make((4, 5)), (1, -1)), name="element"),
            Sample((make((5, 3)), [0, 2, 2]), name="int list with repeats"),
            Sample((make((4, 3)), (slice(None), [2, 0])), name="mixed"),
            Sample((make((3, 4)), make.bool((3, 4))), name="bool mask"),
            Sample((make((2, 3, 4)), (1, slice(None), _index_tensor(make, [-1, 0, -1]))),
                   name="int and tensor apart (PyTorch placement)"),
            Sample((make((2, 3, 4)), (_index_tensor(make, [[1], [0]]), None,
                                      _index_tensor(make, [True, False, True]))),
                   name="broadcast arrays, None, row mask")]


def _index_tensor(make, values):
    from ..creation import tensor

    return tensor(values, device=make.device)


@register_op("_getitem", internal=True, operators=("__getitem__",))
def _getitem(input, index):
    ensure_tensor(input, "__getitem__")
    converted, basic = convert_index(index, input)
    if basic:
        return ItemView.apply(input, converted)
    try:
        return AdvancedIndex.apply(input, converted)
    except IndexError as error:
        raise IndexError(str(error).replace("axis", "dimension")) from None


@register_op("getitem", samples=_getitem_samples, torch=lambda torch, x, i: x[i])
def getitem(input, index):
    """``input[index]``: ints, slices (with steps), None, ..., integer tensors or lists,
    boolean masks. Basic indexing returns a view."""
    return _getitem(input, index)


class IndexPut(Function):
    """``out = x.clone(); out[index] = value`` (the out-of-place form of setitem)."""

    array_backward = True
    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, x, value, index, basic):
        ctx.index, ctx.basic = index, basic
        ctx.value_shape = np.shape(value)
        if basic and type(ctx).node_name == "IndexPutBackward0":
            ctx.node_name = "CopySlices"  # PyTorch: a copy into a view of the base
        out = x.copy()
        out[index] = value
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        need_x, need_value = ctx.needs_input_grad[:2]
        grad_x = m.apply(IndexPut, grad, 0, ctx.index, ctx.basic) if need_x else None
        grad_value = None
        if need_value:
            picked = m.apply(BasicIndex if ctx.basic else AdvancedIndex, grad, ctx.index)
            grad_value = _to_value_shape(m, picked, ctx.value_shape)
        return grad_x, grad_value, None, None


def _to_value_shape(m, picked, value_shape: tuple):
    """The gradient of a value broadcast into an indexed region: summed over the broadcast
    dims; a value with extra leading 1s (which assignment allows) gets them back."""
    extra = len(value_shape) - picked.ndim
    if extra > 0:
        return m.reshape(m.sum_to_shape(picked, value_shape[extra:]), value_shape)
    return m.sum_to_shape(picked, value_shape)


class IndexPutAccumulate(Function):
    """``out = x.clone(); out[index] += value`` with every repeated index adding (a
    scatter-add); its value gradient is the gather ``grad[index]``."""

    array_backward = True
    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, x, value, index):
        ctx.index = index
        ctx.value_shape = np.shape(value)
        out = x.copy()
        backend.scatter_add(out, index, value)
        return out

    @staticmethod
    def backward(ctx, grad):
        need_value = ctx.needs_input_grad[1]
        grad_value = None
        if need_value:
            m = ctx.math
            grad_value = _to_value_shape(m, m.apply(AdvancedIndex, grad, ctx.index),
                                         ctx.value_shape)
        return grad, grad_value, None


def _value_for(input: Tensor, value, op: str):
    if isinstance(value, Tensor):
        if value._device != input._device and not (value._data.ndim == 0):
            raise RuntimeError(f"{op}: value is on {value.device} but the tensor is on "
                               f"{input.device}")
        return value.to(input.dtype, input.device) if (
            value.dtype is not input.dtype or value._device != input._device) else value
    if isinstance(value, (bool, int, float, np.generic)):
        dtype = input._data.dtype
        return dtypes.checked_number(value, dtype) if dtype.kind in "iu" else value
    from ..creation import tensor

    return tensor(value, dtype=input.dtype, device=input.device)


def shape_mismatch(value_shape, region_shape, basic: bool, given=None):
    """PyTorch's error for a value that doesn't broadcast to the indexed region (called
    after NumPy's assignment failed), or None when the shapes do broadcast. ``given`` is
    the value as passed: PyTorch takes no lists, so a list that doesn't fit is a TypeError."""
    shape, target = list(value_shape), list(region_shape)
    while len(shape) > len(target) and shape[0] == 1:
        shape = shape[1:]  # assignment drops leading 1s
    if len(shape) <= len(target) and all(
            s in (1, t) for s, t in zip(shape[::-1], target[::-1])):
        return None
    if isinstance(given, (list, tuple)):
        return TypeError(f"can't assign a {type(given).__name__} of shape {list(value_shape)} "
                         f"to an indexed region of shape {target}")
    if not basic:
        return RuntimeError(f"shape mismatch: value tensor of shape {list(value_shape)} cannot "
                            f"be broadcast to indexing result of shape {target}")
    if len(shape) > len(target):
        return RuntimeError(f"expand({list(value_shape)}, size={target}): the number of sizes "
                            f"provided ({len(target)}) must be greater or equal to the number "
                            f"of dimensions in the tensor ({len(shape)})")
    dim = next(len(target) - k for k in range(1, len(shape) + 1)
               if shape[-k] not in (1, target[-k]))
    return RuntimeError(f"The expanded size of the tensor ({target[dim]}) must match the "
                        f"existing size ({shape[dim - len(target)]}) at non-singleton dimension "
                        f"{dim}.  Target sizes: {target}.  Tensor sizes: {shape}")


@register_op("_index_put", internal=True)
def _index_put(input, index, value):
    converted, basic = convert_index(index, input)
    given, value = value, _value_for(input, value, "index_put")
    try:
        return IndexPut.apply(input, value, converted, basic)
    except ValueError:
        error = shape_mismatch(np.shape(value), input._data[converted].shape, basic, given)
        if error is None:
            raise
        raise error from None


def _setitem(self, index, value):
    """``self[index] = value``; records the graph only when a gradient could flow."""
    tracked = grad_mode._state.enabled and (
        self._requires_grad or (isinstance(value, Tensor) and value._requires_grad))
    if tracked:
        from ..tensor import apply_inplace

        if isinstance(value, Tensor):
            _check_target(self, convert_index(index, self), value)
        apply_inplace(self, _index_put, index, value)
        return
    check_writable(self)
    converted, basic = convert_index(index, self)
    _check_target(self, (converted, basic), value)
    given, value = value, _value_for(self, value, "__setitem__")
    if tracing.state.tracer is not None:
        tracing.unsupported("an assignment into a tensor (x[i] = v)")
    data = value._data if isinstance(value, Tensor) else value
    try:
        self._data[converted] = data
    except ValueError:
        error = shape_mismatch(np.shape(data), self._data[converted].shape, basic, given)
        if error is None:
            raise
        raise error from None
    bump_version(self)


def _check_target(self, converted, value) -> None:
    """``x[1:] = x[:-1]`` is ``x[1:].copy_(x[:-1])``, which PyTorch refuses (the two views
    overlap in part)."""
    index, basic = converted
    if basic and isinstance(value, Tensor):
        check_no_overlap(self._data[index], (value,))


bind_method("__setitem__", _setitem)


@register_op(methods=("narrow",),
             samples=lambda make: [Sample((make((4, 5)), 1, 1, 3)),
                                   Sample((make((4, 5)), 0, 2, 2))])
def narrow(input, dim, start, length):
    """``length`` elements of ``dim`` from ``start`` (a view)."""
    ensure_tensor(input, "narrow")
    # PyTorch's checks, in its order: argument types first
    dim, length = as_int(dim, "narrow", "dim"), as_int(length, "narrow", "length")
    if isinstance(start, Tensor) and (start._data.ndim or start._data.dtype.kind not in "iu"):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    start = as_int(start, "narrow", "start")
    if input._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = wrap_dim(dim, input._data.ndim, "narrow")
    size = input._data.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    index = (slice(None),) * d + (slice(start, start + length),)
    return BasicIndex.apply(input, index + (Ellipsis,))


def _select_index(input: Tensor, dim, index, op: str) -> tuple:
    """The basic index of ``input.select(dim, index)``, checked as PyTorch does."""
    dim, index = as_int(dim, op, "dim"), as_int(index, op, "index")
    if input._data.ndim == 0:
        raise IndexError(f"{op}() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input._data.ndim, op)
    size = input._data.shape[d]
    if not -size <= index < size:
        raise IndexError(f"{op}(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    return (slice(None),) * d + (index, Ellipsis)


@register_op(methods=("select",),
             samples=lambda make: [Sample((make((4, 5)), 1, 2)), Sample((make((4, 5)), 0, -1))])
def select(input, dim, index):
    """The slice at ``index`` of ``dim``, that dimension removed (a view)."""
    ensure_tensor(input, "select")
    return BasicIndex.apply(input, _select_index(input, dim, index, "select"))


class SelectScatter(IndexPut):
    node_name = "SelectScatterBackward0"


class SliceScatter(IndexPut):
    node_name = "SliceScatterBackward0"


def _embed(input: Tensor, src, index: tuple, op: str, node):
    ensure_tensor(input, op)
    ensure_tensor(src, op, "src")
    expected = input._data[index].shape
    if tuple(src._data.shape) != tuple(expected):
        raise RuntimeError(f"{op}(): expected src to have a size equal to the slice of self. "
                           f"src size = {list(src.shape)}, slice size = {list(expected)}")
    if src.dtype is not input.dtype or src._device != input._device:
        src = src.to(input.dtype, input.device)
    return node.apply(input, src, index, True)


@register_op(samples=lambda make: [Sample((make((3, 4)), make((4,)), 0, 1)),
                                   Sample((make((3, 4)), make((3,)), -1, -1))])
def select_scatter(input, src, dim, index):
    """A copy of ``input`` with the slice ``input.select(dim, index)`` replaced by ``src``
    (the functional form of ``x.select(dim, index).copy_(src)``)."""
    ensure_tensor(input, "select_scatter")
    return _embed(input, src, _select_index(input, dim, index, "select_scatter"),
                  "select_scatter", SelectScatter)


@register_op(samples=lambda make: [Sample((make((4, 3)), make((2, 3))), {"start": 1, "end": 3}),
                                   Sample((make((3, 5)), make((3, 2)), 1, None, None, 3))])
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with the slice ``start:end:step`` of ``dim`` replaced by ``src``
    (the functional form of ``x[..., start:end:step].copy_(src)``)."""
    ensure_tensor(input, "slice_scatter")
    d = wrap_dim(dim, input._data.ndim, "slice_scatter")
    if step is None:
        step = 1
    if step <= 0:
        raise RuntimeError("slice_scatter(): slice step must be positive")
    index = (slice(None),) * d + (slice(start, end, step), Ellipsis)
    return _embed(input, src, index, "slice_scatter", SliceScatter)


# ----------------------------------------------------------------------------- copies
class Clone(Function):
    """A copy, row-major or with the given dense strides (in elements)."""

    array_backward = True
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x, strides=None):
        if strides is None:
            return x.copy()
        out = backend.empty_with_strides(ctx.xp, x.shape, x.dtype, strides)
        out[...] = x
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad, None


@register_op(methods=("clone",), samples=lambda make: [
    Sample((make((3, 4)),)), Sample((make((4, 3)).t(),), name="transposed")])
def clone(input, *, memory_format=None):
    """A copy with its own memory, still in the graph.

    Laid out as ``input`` is by default (PyTorch's ``preserve_format``: the same strides
    where the elements fill one block, else dense in the same order of dims), row-major
    with ``memory_format=ember.contiguous_format``, channels innermost with
    ``channels_last``.

    >>> ember.ones(2, 3).t().clone().stride()
    (1, 3)
    """
    ensure_tensor(input, "clone")
    if memory_format is None and input._data.flags.c_contiguous:
        return Clone.apply(input)
    return Clone.apply(input, layout_strides(input._data, memory_format, "clone"))


def _contiguous(self, memory_format=None):
    if memory_format is None or memory_format is contiguous_format:
        return self if self._data.flags.c_contiguous else Clone.apply(self)
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    strides = layout_strides(self._data, memory_format, "contiguous")
    return self if self.is_contiguous(memory_format=memory_format) else \
        Clone.apply(self, strides)


Tensor.contiguous = _contiguous


class ToCopy(Function):
    array_backward = True
    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dtype, device, source_device):
        ctx.source, ctx.target = (x.dtype, source_device), device
        if device != source_device:
            ctx.out_device = device
            x = backend.move(x, source_device, device)
        return x.astype(dtype.numpy, copy=True) if x.dtype != dtype.numpy or \
            device == source_device else x

    @staticmethod
    def backward(ctx, grad):
        source_dtype, source_device = ctx.source
        back = ctx.math.apply(ToCopy, grad, dtypes.from_numpy(source_dtype), source_device,
                              ctx.target)
        return back, None, None, None


@register_op("_to_copy", internal=True)
def _to_copy(input, dtype, device):
    return ToCopy.apply(input, dtype, device, input._device)


class Fill(Function):
    array_backward = True
    node_name = "FillBackward0"

    @staticmethod
    def forward(ctx, x, value):
        return ctx.xp.full_like(x, value)

    @staticmethod
    def backward(ctx, grad):
        # the old values are overwritten: their gradient is zero, not absent
        return grad * 0 if ctx.needs_input_grad[0] else None, \
            ctx.math.sum(grad) if ctx.needs_input_grad[1] else None


@register_op("_fill", internal=True)
def _fill(input, value):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value._data.ndim} dimensions.")
        value = value.to(input.dtype)
    else:
        value = dtypes.checked_number(value, input._data.dtype)
    return Fill.apply(input, value)


class CopyInto(Function):
    array_backward = True
    node_name = "CopyBackwards"

    @staticmethod
    def forward(ctx, x, src):
        ctx.src_shape = src.shape
        return ctx.xp.broadcast_to(src, x.shape).astype(x.dtype, copy=True)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0 if ctx.needs_input_grad[0] else None, \
            ctx.math.sum_to_shape(grad, ctx.src_shape) if ctx.needs_input_grad[1] else None


@register_op("_copy_into", internal=True)
def _copy_into(input, src):
    if not isinstance(src, Tensor):
        from ..creation import tensor

        src = tensor(src, dtype=input.dtype, device=input.device)
    if src._device != input._device or src.dtype is not input.dtype:
        src = src.to(input.dtype, input.device)
    try:
        np.broadcast_shapes(src._data.shape, input._data.shape)
    except ValueError:
        raise RuntimeError(f"copy_(): the source of shape {list(src.shape)} can't be broadcast "
                           f"to the destination's shape {list(input.shape)}") from None
    return CopyInto.apply(input, src)


# ----------------------------------------------------------------------------- views
class CopySlices(Function):
    """The base's new node after an in-place change through one of its views: the
    gradient inside the view's region flows to the new values, the rest to the old base."""

    array_backward = True
    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, base, values, mask):
        ctx.save_for_backward(mask)
        return base  # the memory already holds the new values (written through the view)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        grad_values = _replay(grad, ctx.chain, ctx.math) if ctx.needs_input_grad[1] else None
        return grad * mask, grad_values, None


def _replay(tensor, chain, m=None):
    """Apply a view's recorded chain of view ops to ``tensor`` (in the backward namespace
    ``m`` when given)."""
    for op, args, output_index in chain:
        tensor = m.apply(op, tensor, *args) if m is not None else op.apply(tensor, *args)
        if output_index is not None:
            tensor = tensor[output_index]
    return tensor


@register_op("_refresh_views", internal=True)
def _refresh_views(base: Tensor, written: Tensor) -> None:
    """After an in-place change of ``base`` or of one of its views (``written``), the other
    views made before it read the new values; their graph must lead through the change
    too, as PyTorch regenerates such a view's grad_fn: each is replayed from the base."""
    for view in list(base._views):
        if view is written:
            continue
        regenerated = _replay(base, view._view_chain)
        view.grad_fn, view._output_nr = regenerated.grad_fn, regenerated._output_nr
        view._requires_grad = regenerated._requires_grad


@register_op("_rebase_view", internal=True)
def _rebase_view(view: Tensor, result: Tensor) -> None:
    base = view._base
    chain = view._view_chain
    with grad_mode.no_grad():
        mask = Tensor._make(backend.xp_for_device(base._device).ones(base._data.shape,
                                                                     base._data.dtype),
                            base._device)
        # (a view of an expanded or overlapping view keeps NumPy's read-only flag)
        backend.writable(_replay(mask, chain)._data)[...] = 0
    snapshot = Tensor._make(base._data, base._device, base._requires_grad)
    snapshot.grad_fn, snapshot._output_nr = base.grad_fn, base._output_nr
    snapshot._version_counter = counter_of(base)
    new_base = CopySlices.apply(snapshot, result, mask)
    new_base.grad_fn.chain = chain
    base.grad_fn, base._output_nr, base._requires_grad = new_base.grad_fn, 0, True
    regenerated = _replay(base, chain)
    view.grad_fn, view._output_nr = regenerated.grad_fn, regenerated._output_nr
    view._requires_grad = True
