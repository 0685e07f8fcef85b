"""Shape ops: reshape, view, transpose, permute, expand, squeeze, unsqueeze, flatten,
cat, stack. Views share memory with their input (and its version counter)."""
from __future__ import annotations

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import ensure_tensor, parse_shape, sum_to_shape, wrap_dim
from .registry import Sample, register_op


def _infer_shape(shape: tuple, numel: int, op: str) -> tuple:
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError(f"{op}(): only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"{op}(): invalid shape dimension {s}")
            known *= s
    if unknown:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class Reshape(Function):
    node_name = "ViewBackward0"
    is_view = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        try:
            return backend.view_reshape(x, shape)
        except ValueError:
            ctx.node_name = "UnsafeViewBackward0"
            return x.reshape(shape)  # not expressible as a view: copy

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None


class View(Function):
    node_name = "ViewBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        try:
            return backend.view_reshape(x, shape)
        except ValueError:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            ) from None

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None


def _reshape_samples(make):
    return [Sample((make((3, 4)), (4, 3))), Sample((make((2, 3, 4)), (-1, 4))),
            Sample((make((6,)), (2, 1, 3))), Sample((make(()), (1, 1)))]


@register_op(methods=("reshape",), samples=_reshape_samples)
def reshape(input, *shape):
    """The same elements in a new shape (one size may be -1); a view when possible."""
    ensure_tensor(input, "reshape")
    shape = _infer_shape(parse_shape(shape, "reshape"), input._data.size, "reshape")
    return Reshape.apply(input, shape)


@register_op(methods=("view",), samples=_reshape_samples)
def view(input, *shape):
    """Like reshape, but always a view: raises when the memory layout doesn't allow one.
    ``view(dtype)`` is not supported."""
    ensure_tensor(input, "view")
    if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
        raise TypeError("view(dtype) reinterprets bits and is not supported by ember")
    shape = _infer_shape(parse_shape(shape, "view"), input._data.size, "view")
    return View.apply(input, shape)


def _view_as(self, other):
    return view(self, other.shape)


def _reshape_as(self, other):
    return reshape(self, other.shape)


Tensor.view_as = _view_as
Tensor.reshape_as = _reshape_as


class Transpose(Function):
    node_name = "TransposeBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, dim0, dim1):
        ctx.dims = (dim0, dim1)
        return ctx.xp.swapaxes(x, dim0, dim1)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None


@register_op(methods=("transpose", "swapaxes", "swapdims"), also=("swapaxes", "swapdims"),
             samples=lambda make: [Sample((make((3, 4)), 0, 1)),
                                   Sample((make((2, 3, 4)), -1, 0))])
def transpose(input, dim0, dim1):
    """Swap two dimensions (a view)."""
    ensure_tensor(input, "transpose")
    n = input._data.ndim
    return Transpose.apply(input, wrap_dim(dim0, n, "transpose"), wrap_dim(dim1, n, "transpose"))


def _t(self):
    if self._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self._data.ndim}D")
    return transpose(self, 0, 1) if self._data.ndim == 2 else self


Tensor.t = _t


class Permute(Function):
    node_name = "PermuteBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, dims):
        ctx.inverse = tuple(np.argsort(dims))
        return ctx.xp.transpose(x, dims)

    @staticmethod
    def backward(ctx, grad):
        return grad.permute(ctx.inverse), None


@register_op(methods=("permute",),
             samples=lambda make: [Sample((make((2, 3, 4)), (2, 0, 1))),
                                   Sample((make((3, 4)), (1, 0)))])
def permute(input, *dims):
    """Reorder the dimensions (a view)."""
    ensure_tensor(input, "permute")
    dims = parse_shape(dims, "permute")
    n = input._data.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {n} is not equal to len(dims) = {len(dims)}"
                           .replace("(sparse_coo)", ""))
    dims = tuple(wrap_dim(d, n, "permute") for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError(f"permute(): duplicate dims are not allowed: {list(dims)}")
    return Permute.apply(input, dims)


class Expand(Function):
    node_name = "ExpandBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        return ctx.xp.broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, grad):
        return sum_to_shape(grad, ctx.input_shape), None


@register_op(methods=("expand",),
             samples=lambda make: [Sample((make((3, 1)), (3, 4))),
                                   Sample((make((4,)), (2, 3, 4))),
                                   Sample((make((3, 1)), (2, -1, 4)))])
def expand(input, *sizes):
    """Repeat size-1 dimensions without copying (a read-only view); -1 keeps a size."""
    ensure_tensor(input, "expand")
    sizes = parse_shape(sizes, "expand")
    shape = input._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand(): the number of sizes provided ({len(sizes)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    target = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"expand(): -1 is not allowed in a leading, non-existing "
                                   f"dimension {i}")
            target.append(s)
        else:
            current = shape[i - lead]
            if s == -1:
                s = current
            if current != s and current != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) must match the existing size "
                    f"({current}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                    f"Tensor sizes: {list(shape)}")
            target.append(s)
    return Expand.apply(input, tuple(target))


def _expand_as(self, other):
    return expand(self, other.shape)


Tensor.expand_as = _expand_as


@register_op(samples=lambda make: [Sample((make((3, 1)), (2, 3, 4)))])
def broadcast_to(input, size):
    """``input.expand(size)``."""
    return expand(input, tuple(size))


class Squeeze(Function):
    node_name = "SqueezeBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, dims):
        ctx.input_shape = x.shape
        if dims is not None:
            ctx.node_name = "SqueezeBackward1"
        squeeze = tuple(i for i in (range(x.ndim) if dims is None else dims) if x.shape[i] == 1)
        return ctx.xp.squeeze(x, axis=squeeze)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None


@register_op(methods=("squeeze",),
             samples=lambda make: [Sample((make((3, 1, 4, 1)),)), Sample((make((3, 1, 4)), 1)),
                                   Sample((make((3, 1, 4)), 0)),
                                   Sample((make((1, 3, 1)), (0, 2)))])
def squeeze(input, dim=None):
    """Drop dimensions of size 1 (all of them, or those in ``dim`` that are 1)."""
    ensure_tensor(input, "squeeze")
    n = input._data.ndim
    if dim is not None:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        dim = tuple(wrap_dim(d, n, "squeeze") for d in dims)
    return Squeeze.apply(input, dim)


class Unsqueeze(Function):
    node_name = "UnsqueezeBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return ctx.xp.expand_dims(x, dim)

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None


@register_op(methods=("unsqueeze",),
             samples=lambda make: [Sample((make((3, 4)), 0)), Sample((make((3, 4)), -1)),
                                   Sample((make(()), 0))])
def unsqueeze(input, dim):
    """Insert a dimension of size 1 at ``dim`` (a view)."""
    ensure_tensor(input, "unsqueeze")
    return Unsqueeze.apply(input, wrap_dim(dim, input._data.ndim + 1, "unsqueeze"))


@register_op(methods=("flatten",),
             samples=lambda make: [Sample((make((2, 3, 4)),)), Sample((make((2, 3, 4)), 1)),
                                   Sample((make((2, 3, 4, 5)), 1, 2)), Sample((make(()),))])
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dimensions ``start_dim..end_dim`` into one."""
    ensure_tensor(input, "flatten")
    shape = input._data.shape
    if not shape:
        return reshape(input, (1,))
    start = wrap_dim(start_dim, len(shape), "flatten")
    end = wrap_dim(end_dim, len(shape), "flatten")
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    merged = 1
    for s in shape[start:end + 1]:
        merged *= s
    return reshape(input, shape[:start] + (merged,) + shape[end + 1:])


def _common_dtype(tensors, op):
    result = tensors[0].dtype
    for t in tensors[1:]:
        result = dtypes.promote_types(result, t.dtype)
    return [t if t.dtype is result else t.to(result) for t in tensors]


class Cat(Function):
    node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, dim, *arrays):
        ctx.dim = dim
        ctx.sizes = [a.shape[dim] if a.ndim else 0 for a in arrays]
        return ctx.xp.concatenate(arrays, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        grads = [None]
        start = 0
        for size, need in zip(ctx.sizes, ctx.needs_input_grad[1:]):
            grads.append(grad.narrow(ctx.dim, start, size) if need else None)
            start += size
        return tuple(grads)


def _cat_samples(make):
    return [Sample(([make((2, 3)), make((4, 3))],), name="dim 0"),
            Sample(([make((2, 3)), make((2, 1)), make((2, 2))], 1), name="dim 1"),
            Sample(([make((2, 3, 2)), make((2, 3, 2))], -1), name="dim -1")]


def _sequence(tensors, op):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' must be a tuple or list of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{op}(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        ensure_tensor(t, op, f"tensors[{i}]")
    return list(tensors)


@register_op(also=("concat", "concatenate"), samples=_cat_samples)
def cat(tensors, dim=0):
    """Join tensors along an existing dimension (dtypes promote)."""
    tensors = _sequence(tensors, "cat")
    tensors = [t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)] \
        or tensors[:1]  # PyTorch skips legacy empty (0,) tensors
    ref = tensors[0]
    d = wrap_dim(dim, ref._data.ndim, "cat")
    for i, t in enumerate(tensors):
        if t._data.ndim != ref._data.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got "
                               f"{ref._data.ndim} and {t._data.ndim}")
        for axis, (a, b) in enumerate(zip(ref._data.shape, t._data.shape)):
            if axis != d and a != b:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {a} "
                    f"but got size {b} for tensor number {i} in the list.")
    return Cat.apply(d, *_common_dtype(tensors, "cat"))


class Stack(Function):
    node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, dim, *arrays):
        ctx.dim = dim
        return ctx.xp.stack(arrays, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return (None,) + tuple(grad.select(ctx.dim, i) if need else None
                               for i, need in enumerate(ctx.needs_input_grad[1:]))


def _stack_samples(make):
    return [Sample(([make((2, 3)), make((2, 3))],), name="dim 0"),
            Sample(([make((2, 3)), make((2, 3)), make((2, 3))], -1), name="dim -1"),
            Sample(([make(()), make(())],), name="0-d")]


@register_op(samples=_stack_samples)
def stack(tensors, dim=0):
    """Join same-shape tensors along a new dimension."""
    tensors = _sequence(tensors, "stack")
    ref = tensors[0]
    for i, t in enumerate(tensors):
        if t._data.shape != ref._data.shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(ref.shape)} at entry 0 and {list(t.shape)} at entry {i}")
    d = wrap_dim(dim, ref._data.ndim + 1, "stack")
    return Stack.apply(d, *_common_dtype(tensors, "stack"))
