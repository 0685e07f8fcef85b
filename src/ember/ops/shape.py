"""Shape ops: reshape, view, transpose, permute, expand, squeeze, unsqueeze, flatten,
cat, stack. Views share memory with their input (and its version counter)."""
from __future__ import annotations

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from ..tensor import Tensor, apply_inplace, bump_version, counter_of
from ._util import as_int, ensure_tensor, int_list, parse_shape, unique_dims, wrap_dim
from .indexing import AdvancedIndex, clone, select_scatter, slice_scatter
from .registry import NAMESPACES, Sample, register_op


def _sizes_or_keyword(positional: tuple, keyword, op: str, name: str) -> tuple:
    """``f(x, 2, 3)``, ``f(x, (2, 3))`` or ``f(x, name=(2, 3))``, as PyTorch accepts."""
    if keyword is None:
        return positional
    if positional:
        raise TypeError(f"{op}() got multiple values for argument '{name}'")
    return tuple(keyword) if isinstance(keyword, (tuple, list)) else (keyword,)


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
    array_backward = True
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
        return ctx.math.reshape(grad, ctx.input_shape), None


class UnsafeView(Reshape):
    """A reshape of a fresh result that nothing else sees (PyTorch's ``_unsafe_view``), so
    the output is not tracked as a view."""

    node_name = "UnsafeViewBackward0"
    is_view = False


class View(Function):
    array_backward = True
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
        return ctx.math.reshape(grad, ctx.input_shape), None


def _reshape_samples(make):
    return [Sample((make((3, 4)), (4, 3))), Sample((make((2, 3, 4)), (-1, 4))),
            Sample((make((6,)), (2, 1, 3))), Sample((make(()), (1, 1)))]


@register_op(methods=("reshape",), samples=_reshape_samples)
def reshape(input, *sizes, shape=None):
    """The same elements in a new shape (one size may be -1); a view when possible."""
    ensure_tensor(input, "reshape")
    sizes = _sizes_or_keyword(sizes, shape, "reshape", "shape")
    shape = _infer_shape(parse_shape(sizes, "reshape", "shape"), input._data.size, "reshape")
    if not input._data.flags.c_contiguous and not _viewable(input._data, shape):
        # as PyTorch: a contiguous clone, viewed (two nodes, Clone and UnsafeView)
        return UnsafeView.apply(input.contiguous(), shape)
    return Reshape.apply(input, shape)


def _viewable(array, shape) -> bool:
    try:
        backend.view_reshape(array, shape)
    except ValueError:
        return False
    return True


@register_op(methods=("view",), samples=_reshape_samples)
def view(input, *shape, size=None):
    """Like reshape, but always a view: raises when the memory layout doesn't allow one.
    ``view(dtype)`` reinterprets the bits as another dtype (see view_dtype)."""
    ensure_tensor(input, "view")
    shape = _sizes_or_keyword(shape, size, "view", "size")
    if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
        return view_dtype(input, shape[0])
    shape = _infer_shape(parse_shape(shape, "view"), input._data.size, "view")
    return View.apply(input, shape)


_TORCH_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
               "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
               "uint8": "Byte", "bool": "Bool"}


def view_dtype(input, dtype):
    """``input.view(dtype)``: the same memory read as ``dtype``. Element sizes may differ
    when the last dim is contiguous: it grows (to a smaller element) or shrinks (to a
    larger one, and must divide). The result has no gradient, as in PyTorch.

    >>> ember.tensor([1.0]).view(ember.int32)
    tensor([1065353216], dtype=ember.int32)
    """
    source, target = input.dtype, dtype
    data = input._data
    old, new = data.dtype.itemsize, np.dtype(target.numpy).itemsize
    if old != new:
        names = (_TORCH_TYPE.get(source.name, source.name),
                 _TORCH_TYPE.get(target.name, target.name))
        what = f"to view {names[0]} as {names[1]} (different element sizes)"
        if data.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        stride = data.strides[-1] // old if data.shape[-1] > 1 else 1
        if stride != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {stride}")
        if new > old and data.shape[-1] % (new // old):
            raise RuntimeError(f"self.size(-1) must be divisible by {new // old} {what}, but "
                               f"got {data.shape[-1]}")
    reinterpreted = data.view(target.numpy) if data.ndim else data.reshape(1).view(
        target.numpy).reshape(())
    out = Tensor._make(reinterpreted, input._device, False)
    out._version_counter = counter_of(input)  # the same memory
    return out


@register_op(methods=("view_as",),
             samples=lambda make: [Sample((make((3, 4)), make((2, 6), requires_grad=False)))])
def view_as(input, other):
    """``input.view(other.shape)`` (a view)."""
    ensure_tensor(other, "view_as", "other")
    return view(input, other.shape)


@register_op(methods=("reshape_as",),
             samples=lambda make: [Sample((make((3, 4)).t(), make((12,), requires_grad=False)))])
def reshape_as(input, other):
    """``input.reshape(other.shape)`` (a view when possible)."""
    ensure_tensor(other, "reshape_as", "other")
    return reshape(input, other.shape)


class Transpose(Function):
    array_backward = True
    node_name = "TransposeBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, dim0, dim1):
        ctx.dims = (dim0, dim1)
        return ctx.xp.swapaxes(x, dim0, dim1) if x.ndim else x[...]  # 0-d: dims 0 and -1

    @staticmethod
    def backward(ctx, grad):
        return (ctx.math.transpose(grad, *ctx.dims) if grad.ndim else grad), None, None


@register_op(methods=("transpose", "swapaxes", "swapdims"), also=("swapaxes", "swapdims"),
             samples=lambda make: [Sample((make((3, 4)), 0, 1)),
                                   Sample((make((2, 3, 4)), -1, 0))])
def transpose(input, dim0, dim1):
    """Swap two dimensions (a view)."""
    ensure_tensor(input, "transpose")
    n = input._data.ndim
    return Transpose.apply(input, wrap_dim(dim0, n, "transpose"), wrap_dim(dim1, n, "transpose"))


@register_op(methods=("t",), samples=lambda make: [Sample((make((3, 4)),), name="2-D"),
                                                   Sample((make((3,)),), name="1-D"),
                                                   Sample((make(()),), name="0-D")])
def t(input):
    """Transpose of a matrix (dims 0 and 1 swapped, a view); 0-D and 1-D tensors come back
    as they are."""
    ensure_tensor(input, "t")
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input._data.ndim}D")
    return MatrixTranspose.apply(input, 0, 1) if input._data.ndim == 2 else input


class MatrixTranspose(Transpose):
    """``t()``: a transpose under PyTorch's own name for it."""

    node_name = "TBackward0"


_t = t


@register_op(differentiable=False, samples=lambda make: [Sample((make((2, 3)),))])
def detach(input):
    """A tensor sharing ``input``'s data, cut from the autograd graph (no gradient flows
    through it); the function form of ``Tensor.detach``."""
    ensure_tensor(input, "detach")
    return input.detach()


class Permute(Function):
    array_backward = True
    node_name = "PermuteBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, dims):
        ctx.inverse = tuple(np.argsort(dims))
        return ctx.xp.transpose(x, dims)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.permute(grad, ctx.inverse), None


@register_op(methods=("permute",),
             samples=lambda make: [Sample((make((2, 3, 4)), (2, 0, 1))),
                                   Sample((make((3, 4)), (1, 0)))])
def permute(input, *order, dims=None):
    """Reorder the dimensions: output dim i is input dim ``dims[i]`` (a view)."""
    ensure_tensor(input, "permute")
    dims = parse_shape(_sizes_or_keyword(order, dims, "permute", "dims"), "permute", "dims")
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
    array_backward = True
    node_name = "ExpandBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        if int(np.prod(shape)) == x.size and x.size:
            try:  # only size-1 dims added: a writable view, as in PyTorch
                return backend.view_reshape(x, shape)
            except ValueError:
                pass
        return ctx.xp.broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.sum_to_shape(grad, ctx.input_shape), None


@register_op(methods=("expand",),
             samples=lambda make: [Sample((make((3, 1)), (3, 4))),
                                   Sample((make((4,)), (2, 3, 4))),
                                   Sample((make((3, 1)), (2, -1, 4)))])
def expand(input, *sizes, size=None):
    """Repeat size-1 dimensions without copying (a read-only view); -1 keeps a size."""
    ensure_tensor(input, "expand")
    sizes = parse_shape(_sizes_or_keyword(sizes, size, "expand", "size"), "expand")
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


@register_op(methods=("expand_as",),
             samples=lambda make: [Sample((make((3, 1)), make((2, 3, 4), requires_grad=False)))])
def expand_as(input, other):
    """``input.expand(other.shape)`` (a read-only view)."""
    ensure_tensor(other, "expand_as", "other")
    return expand(input, other.shape)


@register_op(methods=("broadcast_to",),
             samples=lambda make: [Sample((make((3, 1)), (2, 3, 4))), Sample((make(()), (3,)))])
def broadcast_to(input, *sizes, size=None):
    """``input.expand(size)``: a read-only view of ``input`` broadcast to ``size`` (one
    tuple, or the sizes one by one as the Tensor method takes them)."""
    if not sizes and size is None:
        raise TypeError('broadcast_to() missing 1 required positional arguments: "size"')
    return expand(input, *sizes, size=size)


class Squeeze(Function):
    array_backward = True
    node_name = "SqueezeBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, dims, name="SqueezeBackward0"):
        ctx.input_shape = x.shape
        ctx.node_name = name  # PyTorch's overloads: all dims, one dim, a tuple of dims
        squeeze = tuple(i for i in (range(x.ndim) if dims is None else dims) if x.shape[i] == 1)
        return ctx.xp.squeeze(x, axis=squeeze)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.reshape(grad, ctx.input_shape), None, None


@register_op(methods=("squeeze",),
             samples=lambda make: [Sample((make((3, 1, 4, 1)),)), Sample((make((3, 1, 4)), 1)),
                                   Sample((make((3, 1, 4)), 0)),
                                   Sample((make((1, 3, 1)), (0, 2)))])
def squeeze(input, dim=None):
    """Drop dimensions of size 1 (all of them, or those in ``dim`` that are 1)."""
    ensure_tensor(input, "squeeze")
    n = input._data.ndim
    name = "SqueezeBackward0"
    if dim is not None:
        name = "SqueezeBackward2" if isinstance(dim, (tuple, list)) else "SqueezeBackward1"
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        dim = unique_dims(dims, n, "squeeze")
        if not n:
            dim = ()  # a 0-d tensor takes dims 0 and -1 and has nothing to drop
    return Squeeze.apply(input, dim, name)


class Unsqueeze(Function):
    array_backward = True
    node_name = "UnsqueezeBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return ctx.xp.expand_dims(x, dim)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.squeeze(grad, ctx.dim), None


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
    start = wrap_dim(start_dim, len(shape), "flatten")
    end = wrap_dim(end_dim, len(shape), "flatten")
    if not shape:
        return reshape(input, (1,))
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
    array_backward = True
    node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, dim, *arrays):
        # a legacy empty (0,) array beside arrays of more dims joins nothing (size None)
        ndim = max(a.ndim for a in arrays)
        ctx.dim = dim
        ctx.sizes = [None if _legacy_empty(a) and a.ndim != ndim else a.shape[dim]
                     for a in arrays]
        joined = [a for a, size in zip(arrays, ctx.sizes) if size is not None]
        return ctx.xp.concatenate(joined, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        grads = [None]
        start = 0
        for size, need in zip(ctx.sizes, ctx.needs_input_grad[1:]):
            if size is None:  # its gradient is empty like itself
                grads.append(m.reshape(m.narrow(grad, ctx.dim, 0, 0), (0,)) if need else None)
                continue
            grads.append(m.narrow(grad, ctx.dim, start, size) if need else None)
            start += size
        return tuple(grads)


def _legacy_empty(a) -> bool:
    """PyTorch's cat skips (0,) tensors in its shape checks (they predate 0-size dims of
    any rank) but keeps them in dtype promotion and in the graph."""
    return a.ndim == 1 and a.shape[0] == 0


def _cat_samples(make):
    return [Sample(([make((2, 3)), make((4, 3))],), name="dim 0"),
            Sample(([make((2, 3)), make((2, 1)), make((2, 2))], 1), name="dim 1"),
            Sample(([make((2, 3, 2)), make((2, 3, 2))], -1), name="dim -1")]


def _sequence(tensors, op):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' must be a tuple or list of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        if op == "cat":  # (PyTorch's own types: cat's check is in Python, the rest in C++)
            raise ValueError("cat(): expected a non-empty list of Tensors")
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        ensure_tensor(t, op, f"tensors[{i}]")
    return list(tensors)


@register_op(also=("concat", "concatenate"), samples=_cat_samples)
def cat(tensors, dim=0):
    """Join tensors along an existing dimension (dtypes promote)."""
    tensors = _sequence(tensors, "cat")
    checked = [(i, t) for i, t in enumerate(tensors) if not _legacy_empty(t._data)] or \
        [(0, tensors[0])]
    ref = checked[0][1]
    for i, t in checked:
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    d = wrap_dim(dim, ref._data.ndim, "cat")
    for i, t in checked:
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
    array_backward = True
    node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, dim, *arrays):
        ctx.dim = dim
        return ctx.xp.stack(arrays, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        return (None,) + tuple(m.select(grad, ctx.dim, i) if need else None
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


# ----------------------------------------------------------------------------- more views
def _unflatten_samples(make):
    return [Sample((make((2, 6)), 1, (2, 3))), Sample((make((12,)), 0, (2, -1, 3))),
            Sample((make((3, 4)), -1, (4, 1)))]


@register_op(methods=("unflatten",), samples=_unflatten_samples)
def unflatten(input, dim, sizes):
    """Split dimension ``dim`` into ``sizes`` (one may be -1); a view."""
    ensure_tensor(input, "unflatten")
    shape = input._data.shape
    d = wrap_dim(dim, len(shape), "unflatten")
    sizes = parse_shape((sizes,), "unflatten", "sizes")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = shape[d] if shape else 1
    try:
        sizes = _infer_shape(sizes, size, "unflatten")
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({size}) in the input tensor") from None
    return view(input, shape[:d] + sizes + shape[d + 1:])


def _dims_list(dims, ndim: int, op: str, what: str) -> tuple:
    dims = int_list(dims, op, what)
    out = tuple(wrap_dim(d, ndim, op) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{op}: repeated dim in `{what}` ({list(dims)})")
    return out


@register_op(methods=("movedim", "moveaxis"), also=("moveaxis",),
             samples=lambda make: [Sample((make((2, 3, 4)), 0, -1)),
                                   Sample((make((2, 3, 4)), (0, 1), (2, 0)))])
def movedim(input, source, destination):
    """Move the dims ``source`` to positions ``destination``, the others keeping their
    order (a view, via permute)."""
    ensure_tensor(input, "movedim")
    n = input._data.ndim
    src = _dims_list(source, n, "movedim", "source")
    dst = _dims_list(destination, n, "movedim", "destination")
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    order = [d for d in range(n) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, tuple(order)) if n else input.view(())


@register_op(samples=lambda make: [Sample((make((3, 1)), make((2, 1, 4)))),
                                   Sample((make(()), make((2,)), make((3, 1))))])
def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape: expanded views sharing memory
    (and the version counter) with their inputs, read-only where a dim repeats; a tensor
    that already has that shape comes back as itself, as in PyTorch.

    >>> a, b = ember.broadcast_tensors(ember.zeros(3, 1), ember.ones(4))
    >>> a.shape, b.shape
    (ember.Size([3, 4]), ember.Size([3, 4]))
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        ensure_tensor(t, "broadcast_tensors", f"tensors[{i}]")
    try:
        shape = tuple(np.broadcast_shapes(*(t._data.shape for t in tensors)))
    except ValueError:
        raise RuntimeError(f"broadcast_tensors(): shapes {[list(t.shape) for t in tensors]} "
                           f"don't broadcast") from None
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in tensors)


def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` broadcast to (no tensors involved).

    >>> ember.broadcast_shapes((2, 1), (3,))
    ember.Size([2, 3])
    """
    from ..tensor import Size

    try:
        return Size(np.broadcast_shapes(*(tuple(s) if isinstance(s, (list, tuple)) else (s,)
                                          for s in shapes)))
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape "
                           f"({[list(s) if isinstance(s, (list, tuple)) else s for s in shapes]})"
                           ) from None


NAMESPACES["ember"]["broadcast_shapes"] = broadcast_shapes


# ----------------------------------------------------------------------------- repeats
class Repeat(Function):
    array_backward = True
    node_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx, x, repeats):
        ctx.input_shape, ctx.repeats = x.shape, repeats
        return ctx.xp.tile(x, repeats)

    @staticmethod
    def backward(ctx, grad):
        repeats, shape = ctx.repeats, ctx.input_shape
        padded = (1,) * (len(repeats) - len(shape)) + tuple(shape)
        split = []
        for r, s in zip(repeats, padded):
            split += [r, s]
        m = ctx.math
        summed = m.sum(m.reshape(grad, tuple(split)), tuple(range(0, len(split), 2)))
        return m.reshape(summed, shape), None


def _repeat_samples(make):
    return [Sample((make((2, 3)), 2, 1)), Sample((make((3,)), (2, 1, 2))),
            Sample((make(()), 3))]


def _repeat_method(input, *sizes):
    ensure_tensor(input, "repeat")
    sizes = parse_shape(sizes, "repeat", "repeats")
    if len(sizes) < input._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(sizes)}")
    return Repeat.apply(input, sizes)


@register_op("repeat", methods=("repeat",), samples=_repeat_samples,
             torch=lambda torch, x, *sizes: x.repeat(*sizes))
def repeat(input, *sizes, repeats=None):
    """Tile the tensor: ``sizes[i]`` copies along dim i (more sizes than dims add leading
    dims). Gradient: the sum over the copies."""
    return _repeat_method(input, *_sizes_or_keyword(sizes, repeats, "repeat", "repeats"))


@register_op(methods=("tile",), samples=lambda make: [Sample((make((2, 3)), (2,))),
                                                      Sample((make((3,)), (2, 2)))])
def tile(input, dims):
    """``repeat`` with ``dims`` padded by leading 1s when shorter than input's dims."""
    ensure_tensor(input, "tile")
    dims = parse_shape((dims,), "tile", "dims")
    dims = (1,) * (input._data.ndim - len(dims)) + dims
    return _repeat_method(input, *dims)


def _repeat_interleave_samples(make):
    return [Sample((make((2, 3)), 2), name="int, flattened"),
            Sample((make((2, 3)), _const_tensor(make, [1, 0, 3]), 1), name="tensor, dim 1"),
            Sample((make((3, 2)), 2), {"dim": -2}, name="int, dim -2")]


def _const_tensor(make, values):
    from ..creation import tensor

    return tensor(values, device=make.device)


@register_op(methods=("repeat_interleave",), samples=_repeat_interleave_samples)
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (along ``dim``; of the flattened input without one) ``repeats``
    times: an int, or a tensor of per-element counts. ``repeat_interleave(counts)`` alone
    gives ``arange(len(counts))`` repeated by counts."""
    from ..creation import arange
    from .scatter import index_select

    ensure_tensor(input, "repeat_interleave")
    if repeats is None:
        counts = input
        if counts._data.ndim > 1 or counts._data.dtype.kind not in "iu":
            raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim integer tensor")
        return repeat_interleave(arange(counts._data.size, device=counts.device),
                                 counts.reshape(-1), 0, output_size=output_size)
    if dim is None:
        input, d = input.reshape(-1), 0
    else:
        d = wrap_dim(dim, input._data.ndim, "repeat_interleave")
    size = input._data.shape[d] if input._data.ndim else 1
    xp = backend.xp_for_device(input._device)
    if isinstance(repeats, Tensor):
        if repeats._data.ndim > 1 or repeats._data.dtype.kind not in "iu":
            raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim integer tensor")
        counts = repeats._data.reshape(-1)
        if counts.size not in (1, size):
            raise RuntimeError(f"repeat_interleave: repeats must have the same size as input "
                               f"along dim {d} (got {counts.size}, expected {size})")
        counts = backend.move(counts, repeats._device, input._device)
    else:
        counts = xp.asarray([as_int(repeats, "repeat_interleave", "repeats")])
    if counts.size and int(counts.min()) < 0:
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    if counts.size == size:
        # element i fills the positions [ends[i-1], ends[i]) (CuPy's repeat takes no array)
        ends = xp.cumsum(counts)
        total = int(ends[-1]) if size else 0
        index = xp.searchsorted(ends, xp.arange(total), side="right")
    else:
        index = xp.repeat(xp.arange(size), int(counts[0]))
    if output_size is not None and index.shape[0] != as_int(
            output_size, "repeat_interleave", "output_size"):
        raise RuntimeError(f"repeat_interleave: output_size {output_size} doesn't match the "
                           f"total number of repeats {index.shape[0]}")
    if input._data.ndim == 0:
        input = input.reshape(1)
    return index_select(input, d, Tensor._make(index.astype(np.int64), input._device))


# ----------------------------------------------------------------------------- reorderings
class Flip(Function):
    array_backward = True
    node_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return ctx.xp.flip(x, dims).copy()  # PyTorch's flip copies

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(Flip, grad, ctx.dims), None


@register_op(methods=("flip",), samples=lambda make: [Sample((make((3, 4)), (0,))),
                                                      Sample((make((2, 3, 4)), (-1, 0))),
                                                      Sample((make(()), ()))])
def flip(input, *order, dims=None):
    """Reverse the order of elements along ``dims`` (a copy, as in PyTorch)."""
    ensure_tensor(input, "flip")
    order = _sizes_or_keyword(order, dims, "flip", "dims")
    dims = parse_shape(order, "flip", "dims") if order else ()
    dims = unique_dims(dims, input._data.ndim, "flip")
    return Flip.apply(input, dims if input._data.ndim else ())


@register_op(methods=("fliplr",), samples=lambda make: [Sample((make((3, 4)),))])
def fliplr(input):
    """Reverse dim 1 (left/right); the input needs at least 2 dims."""
    ensure_tensor(input, "fliplr")
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return Flip.apply(input, (1,))


@register_op(methods=("flipud",), samples=lambda make: [Sample((make((3, 4)),)),
                                                        Sample((make((4,)),))])
def flipud(input):
    """Reverse dim 0 (up/down); the input needs at least 1 dim."""
    ensure_tensor(input, "flipud")
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return Flip.apply(input, (0,))


class Roll(Function):
    array_backward = True
    node_name = "RollBackward0"

    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        return ctx.xp.roll(x, shifts, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        back = tuple(-s for s in ctx.shifts) if ctx.dims is not None else -ctx.shifts
        return ctx.math.apply(Roll, grad, back, ctx.dims), None, None


@register_op(methods=("roll",), samples=lambda make: [Sample((make((3, 4)), 1)),
                                                      Sample((make((3, 4)), (1, -2), (0, 1))),
                                                      Sample((make((2, 3)), 5, -1))])
def roll(input, shifts, dims=None):
    """Shift elements cyclically by ``shifts`` along ``dims`` (ints or tuples of equal
    length); without dims, over the flattened tensor, shape kept."""
    ensure_tensor(input, "roll")
    shifts = int_list(shifts, "roll", "shifts")
    if not shifts:
        raise RuntimeError("roll(): `shifts` required")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"roll(): shifts and dimensions must align. shifts: "
                               f"{len(shifts)}, dims:0")
        return Roll.apply(input, shifts[0], None)
    dims = int_list(dims, "roll", "dims")
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll(): shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if input._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    dims = tuple(wrap_dim(d, input._data.ndim, "roll") for d in dims)
    return Roll.apply(input, shifts, dims)


@register_op(methods=("rot90",), samples=lambda make: [Sample((make((3, 4)),)),
                                                       Sample((make((2, 3, 4)), 2, (2, 0))),
                                                       Sample((make((3, 4)), -1))])
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first dim
    towards the second."""
    ensure_tensor(input, "rot90")
    k = as_int(k, "rot90", "k")
    dims = int_list(dims, "rot90", "dims")
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    n = input._data.ndim
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    a, b = (wrap_dim(d, n, "rot90") for d in dims)
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {a} and "
                           f"dim1 = {b}")
    return Rot90.apply(input, k % 4, (a, b))


class Rot90(Function):
    array_backward = True
    node_name = "Rot90Backward0"

    @staticmethod
    def forward(ctx, x, k, dims):
        ctx.k, ctx.dims = k, dims
        return ctx.xp.ascontiguousarray(ctx.xp.rot90(x, k, axes=dims))  # a copy, as PyTorch

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(Rot90, grad, (4 - ctx.k) % 4, ctx.dims), None, None


# ----------------------------------------------------------------------------- atleast, stacks
def _atleast(tensors, op, make_view):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_atleast(tuple(tensors[0]), op, make_view)) if tensors[0] else ()
    for i, t in enumerate(tensors):
        ensure_tensor(t, op, f"tensors[{i}]")
    out = tuple(make_view(t) for t in tensors)
    return out[0] if len(out) == 1 else out


def _atleast_samples(make):
    return [Sample((make(()),), name="0-d"), Sample((make((3,)),), name="1-D"),
            Sample((make((2, 3)), make((2,))), name="two")]


def _at1(t):
    return reshape(t, (1,)) if t._data.ndim == 0 else view(t, t._data.shape)


def _at2(t):
    n = t._data.ndim
    return reshape(t, (1, 1)) if n == 0 else unsqueeze(t, 0) if n == 1 else view(t, t.shape)


def _at3(t):
    n = t._data.ndim
    if n == 0:
        return reshape(t, (1, 1, 1))
    if n == 1:
        return reshape(t, (1, t._data.shape[0], 1))
    if n == 2:
        return unsqueeze(t, -1)
    return view(t, t._data.shape)


@register_op(samples=_atleast_samples)
def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (0-d becomes shape (1,)); views."""
    return _atleast(tensors, "atleast_1d", _at1)


@register_op(samples=_atleast_samples)
def atleast_2d(*tensors):
    """Each tensor with at least 2 dims (leading 1s added); views."""
    return _atleast(tensors, "atleast_2d", _at2)


@register_op(samples=_atleast_samples)
def atleast_3d(*tensors):
    """Each tensor with at least 3 dims: () -> (1, 1, 1), (n,) -> (1, n, 1),
    (m, n) -> (m, n, 1); views."""
    return _atleast(tensors, "atleast_3d", _at3)


def _stack_like_samples(make):
    return [Sample(([make((3,)), make((2,))],), name="1-D"),
            Sample(([make((2, 3)), make((2, 1))],), name="2-D")]


@register_op(samples=_stack_like_samples)
def hstack(tensors):
    """``cat`` along dim 1 (dim 0 for 1-D tensors), after ``atleast_1d``."""
    tensors = [_at1(t) for t in _sequence(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0]._data.ndim == 1 else 1)


def _vstack_samples(make):
    return [Sample(([make((3,)), make((3,))],), name="1-D"),
            Sample(([make((2, 3)), make((1, 3))],), name="2-D")]


@register_op(also=("row_stack",), samples=_vstack_samples)
def vstack(tensors):
    """``cat`` along dim 0, after ``atleast_2d`` (1-D tensors become rows)."""
    return cat([_at2(t) for t in _sequence(tensors, "vstack")], 0)


@register_op(samples=lambda make: [Sample(([make((3,)), make((3,))],)),
                                   Sample(([make((2, 3)), make((2, 3, 2))],))])
def dstack(tensors):
    """``cat`` along dim 2, after ``atleast_3d``."""
    return cat([_at3(t) for t in _sequence(tensors, "dstack")], 2)


@register_op(samples=lambda make: [Sample(([make((3,)), make((3, 2))],)),
                                   Sample(([make(()), make((1, 2))],))])
def column_stack(tensors):
    """Tensors as columns side by side: 0-d and 1-D tensors become (n, 1) columns, then
    ``cat`` along dim 1."""
    columns = []
    for t in _sequence(tensors, "column_stack"):
        columns.append(reshape(t, (t._data.size, 1)) if t._data.ndim <= 1 else t)
    return cat(columns, 1)


# ----------------------------------------------------------------------------- splits
class Split(Function):
    """Pieces ``[start, stop)`` of one dim, all views of the input."""

    array_backward = True
    _materialize_grads = False  # backward fills in only the pieces it must
    node_name = "SplitWithSizesBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, bounds, dim):
        ctx.bounds, ctx.dim, ctx.size = bounds, dim, x.shape[dim]
        lead = (slice(None),) * dim
        return tuple(x[lead + (slice(a, b), Ellipsis)] for a, b in bounds)

    @staticmethod
    def backward(ctx, *grads):
        bounds, dim = ctx.bounds, ctx.dim
        partition = bounds[0][0] == 0 and bounds[-1][1] == ctx.size and all(
            b == c for (_, b), (c, _) in zip(bounds, bounds[1:]))
        m = ctx.math
        if partition:
            return m.cat(_zeros_for_missing(ctx, grads), dim), None, None
        total = None
        for (a, b), g in zip(bounds, grads):
            if g is None:
                continue
            placed = m.apply(ConstantPad, g, _dim_pairs(g.ndim, dim, a, ctx.size - b), 0)
            total = placed if total is None else total + placed
        return total, None, None


class Unbind(Function):
    array_backward = True
    _materialize_grads = False
    node_name = "UnbindBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        lead = (slice(None),) * dim
        return tuple(x[lead + (i, Ellipsis)] for i in range(x.shape[dim]))

    @staticmethod
    def backward(ctx, *grads):
        return ctx.math.stack(_zeros_for_missing(ctx, grads), ctx.dim), None


def _zeros_for_missing(ctx, grads) -> list:
    """The outputs' gradients, zeros where an output got none."""
    like = next(g for g in grads if g is not None)
    return [g if g is not None else ctx.math.zeros(ctx._output_meta[i][0], like)
            for i, g in enumerate(grads)]


def _split(input: Tensor, bounds, d: int, name: str):
    if not bounds:
        return ()
    if input._data.ndim == 0:
        raise RuntimeError(f"{name}(): expected a tensor with at least one dimension")
    out = Split.apply(input, tuple(bounds), d)
    if out and out[0].grad_fn is not None:  # PyTorch's names for the same node
        out[0].grad_fn.node_name = {"split": "SplitBackward0",
                                    "tensor_split": "SliceBackward0"}.get(
                                        name, "SplitWithSizesBackward0")
    return out


def _bounds_from_sizes(sizes):
    bounds, start = [], 0
    for s in sizes:
        bounds.append((start, start + s))
        start += s
    return bounds


def _split_samples(make):
    return [Sample((make((5, 2)), 2), name="int, remainder"),
            Sample((make((2, 6)), [1, 3, 2], 1), name="sizes"),
            Sample((make((3, 4)), 4, -1), name="one piece")]


@register_op(methods=("split",), samples=_split_samples)
def split(tensor, split_size_or_sections, dim=0):
    """Views of consecutive pieces along ``dim``: of ``split_size`` each (the last may be
    shorter), or of the given list of sizes (which must add up to the dim's size)."""
    ensure_tensor(tensor, "split", "tensor")
    d = wrap_dim(dim, tensor._data.ndim, "split")
    n = tensor._data.shape[d] if tensor._data.ndim else 0
    if not isinstance(split_size_or_sections, (tuple, list)):
        size = as_int(split_size_or_sections, "split", "split_size")
        if size < 0 or (size == 0 and n):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}" if size == 0 else
                               f"split expects split_size be non-negative, but got "
                               f"split_size={size}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if n else [0]
        return _split(tensor, _bounds_from_sizes(sizes), d, "split")
    sizes = list(int_list(split_size_or_sections, "split_with_sizes", "split_sizes"))
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={sizes}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    return _split(tensor, _bounds_from_sizes(sizes), d, "split_with_sizes")


@register_op(methods=("chunk",), samples=lambda make: [Sample((make((5, 2)), 3)),
                                                       Sample((make((2, 6)), 4, 1)),
                                                       Sample((make((2, 3)), 5, -1))])
def chunk(input, chunks, dim=0):
    """Split into ``chunks`` views of ``ceil(size / chunks)`` along ``dim`` (fewer when the
    size doesn't allow that many)."""
    ensure_tensor(input, "chunk")
    chunks = as_int(chunks, "chunk", "chunks")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input._data.ndim, "chunk")
    n = input._data.shape[d] if input._data.ndim else 0
    size = -(-n // chunks)
    return split(input, size, d) if n else split(input, [0] * chunks, d)


def _unsafe(pieces):
    if pieces and pieces[0].grad_fn is not None:
        pieces[0].grad_fn.node_name = "UnsafeSplitBackward0"
    return pieces


@register_op(methods=("unsafe_split",), samples=lambda make: [
    Sample((make((5, 2)), 2), name="int, remainder"), Sample((make((2, 6)), 3, 1))])
def unsafe_split(tensor, split_size, dim=0):
    """``split`` into pieces of ``split_size`` whose views are not tracked against in-place
    changes of each other (PyTorch's RNN cells split their gates this way).

    >>> [p.shape for p in ember.unsafe_split(ember.zeros(5, 2), 2)]
    [ember.Size([2, 2]), ember.Size([2, 2]), ember.Size([1, 2])]
    """
    if not isinstance(split_size, (int, np.integer)):
        raise TypeError(f"unsafe_split(): argument 'split_size' must be int, not "
                        f"{type(split_size).__name__}")
    return _unsafe(split(tensor, split_size, dim))


@register_op(methods=("unsafe_chunk",), samples=lambda make: [Sample((make((5, 2)), 3)),
                                                              Sample((make((2, 6)), 4, 1))])
def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` as unsafe_split does it.

    >>> len(ember.unsafe_chunk(ember.zeros(2, 6), 3, 1))
    3
    """
    return _unsafe(chunk(input, chunks, dim))


def _tensor_split_samples(make):
    return [Sample((make((7, 2)), 3), name="sections"),
            Sample((make((2, 6)), [1, 4], 1), name="indices"),
            Sample((make((5,)), [3, 1, 9]), name="unsorted, past the end"),
            Sample((make((5,)), _const_tensor(make, 2)), name="0-d tensor sections")]


@register_op(methods=("tensor_split",), samples=_tensor_split_samples)
def tensor_split(input, indices_or_sections, dim=0):
    """Views along ``dim``: ``sections`` nearly equal pieces (the first ``size % sections``
    one longer), or the pieces between the given indices (clamped to the size; a later
    index smaller than an earlier one gives an empty piece)."""
    ensure_tensor(input, "tensor_split")
    d = wrap_dim(dim, input._data.ndim, "tensor_split")
    if input._data.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    n = input._data.shape[d]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec._data.dtype.kind not in "iu" or spec._data.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have "
                               "integer dtype and be 0-D or 1-D")
        spec = int(spec.item()) if spec._data.ndim == 0 else [int(v) for v in spec.tolist()]
    if not isinstance(spec, (tuple, list)):
        sections = as_int(spec, "tensor_split", "sections")
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        small, extra = divmod(n, sections)
        sizes = [small + 1] * extra + [small] * (sections - extra)
        return _split(input, _bounds_from_sizes(sizes), d, "tensor_split")
    indices = int_list(spec, "tensor_split", "indices")
    points = [min(max(i if i >= 0 else i + n, 0), n) for i in indices]
    starts = [0] + points
    stops = points + [n]
    bounds = [(a, max(a, b)) for a, b in zip(starts, stops)]
    return _split(input, bounds, d, "tensor_split")


def _directional_split(input, spec, dim: int, op: str):
    if isinstance(spec, (int, np.integer)):
        n = input._data.shape[dim]
        if spec == 0 or n % spec:
            raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {n} is not divisible by the split_size "
                               f"{spec}!")
    return tensor_split(input, spec, dim)


@register_op(methods=("hsplit",), samples=lambda make: [Sample((make((2, 6)), 3)),
                                                        Sample((make((6,)), [2, 3]))])
def hsplit(input, indices_or_sections):
    """``tensor_split`` along dim 1 (dim 0 for 1-D); an int must divide the size."""
    ensure_tensor(input, "hsplit")
    if input._data.ndim < 1:
        raise RuntimeError("torch.hsplit requires a tensor with at least 1 dimension, but got a "
                           "tensor with 0 dimensions!")
    return _directional_split(input, indices_or_sections, 1 if input._data.ndim > 1 else 0,
                              "hsplit")


@register_op(methods=("vsplit",), samples=lambda make: [Sample((make((4, 3)), 2))])
def vsplit(input, indices_or_sections):
    """``tensor_split`` along dim 0 of a tensor with at least 2 dims."""
    ensure_tensor(input, "vsplit")
    if input._data.ndim < 2:
        raise RuntimeError(f"torch.vsplit requires a tensor with at least 2 dimension, but got "
                           f"a tensor with {input._data.ndim} dimensions!")
    return _directional_split(input, indices_or_sections, 0, "vsplit")


@register_op(methods=("dsplit",), samples=lambda make: [Sample((make((2, 2, 4)), [1]))])
def dsplit(input, indices_or_sections):
    """``tensor_split`` along dim 2 of a tensor with at least 3 dims."""
    ensure_tensor(input, "dsplit")
    if input._data.ndim < 3:
        raise RuntimeError(f"torch.dsplit requires a tensor with at least 3 dimension, but got "
                           f"a tensor with {input._data.ndim} dimensions!")
    return _directional_split(input, indices_or_sections, 2, "dsplit")


@register_op(methods=("unbind",), samples=lambda make: [Sample((make((3, 4)),)),
                                                        Sample((make((2, 3, 2)), -1))])
def unbind(input, dim=0):
    """The slices along ``dim`` as a tuple of views, that dim removed."""
    ensure_tensor(input, "unbind")
    if input._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, input._data.ndim, "unbind")
    if input._data.shape[d] == 0:
        return ()
    return Unbind.apply(input, d)


@register_op(samples=lambda make: [Sample((make((3,)), make((2,))), {"indexing": "ij"}),
                                   Sample((make((3,)), make((2,)), make(())), {"indexing": "xy"})])
def meshgrid(*tensors, indexing=None):
    """Coordinate grids: output i holds tensor i's values varying along dim i of the
    shape (n0, n1, ...) ('ij'); 'xy' swaps the first two dims (Cartesian). Views."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        ensure_tensor(t, "meshgrid", f"tensors[{i}]")
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
        if t.dtype is not tensors[0].dtype or t._device != tensors[0]._device:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have "
                               "the same dtype and device.")
    if indexing is None:
        import warnings

        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    if not tensors:
        return ()
    order = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        order[0], order[1] = 1, 0
    grid = [tensors[i] for i in order]
    shape = tuple(t._data.size for t in grid)
    out = []
    for k, t in enumerate(grid):
        ones = [1] * len(grid)
        ones[k] = t._data.size
        out.append(expand(reshape(t, tuple(ones)), shape))
    return tuple(out[order.index(i)] for i in range(len(tensors)))


# ----------------------------------------------------------------------------- padding
class ConstantPad(Function):
    """Pad with a constant (negative amounts crop). Its backward is the opposite pad."""

    array_backward = True
    node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, x, pairs, value):
        ctx.pairs = pairs
        xp = ctx.xp
        crop = tuple(slice(max(-a, 0), x.shape[d] - max(-b, 0)) for d, (a, b) in
                     enumerate(pairs))
        x = x[crop]
        widths = [(max(a, 0), max(b, 0)) for a, b in pairs]
        if not any(a or b for a, b in widths):
            return x.copy()
        return xp.pad(x, widths, mode="constant", constant_values=value)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(ConstantPad, grad, tuple((-a, -b) for a, b in ctx.pairs), 0), \
            None, None


def _dim_pairs(ndim: int, dim: int, before: int, after: int) -> tuple:
    """ConstantPad's pairs that pad one dim."""
    pairs = [(0, 0)] * ndim
    pairs[dim] = (before, after)
    return tuple(pairs)


def _pad_index(n: int, before: int, after: int, mode: str, xp):
    """For each output position along one padded dim, the input position it copies."""
    out = xp.arange(n + before + after)
    if mode == "circular":
        start = max(-before, 0)
        kept = n - start - max(-after, 0)
        return (out - max(before, 0)) % kept + start
    position = out - before
    if mode == "replicate":
        return xp.clip(position, 0, n - 1)
    position = xp.abs(position)  # reflect: mirror at both edges, edge not repeated
    return xp.where(position > n - 1, 2 * (n - 1) - position, position)


def _pad_circular(input, pads):
    """PyTorch's circular padding, step for step, so the graph has its nodes (CopySlices
    and SliceBackward0): the input (cropped by negative pads) copied into the middle of a
    new tensor, then each dim's left and right bands copied from the far side of it.
    ``pads`` holds (left, right) for the last dim first."""
    from .indexing import BasicIndex, IndexPut

    def region(dim, start, end):
        return (slice(None),) * dim + (slice(start, end),)

    def narrowed(t, dim, start, end):  # (a SliceBackward0 even where it keeps the dim whole)
        return BasicIndex.apply(t, region(dim, start, end) + (Ellipsis,))

    in_shape = tuple(input.shape)
    out_shape = list(in_shape)
    dims = [input.ndim - 1 - i for i in range(len(pads))]
    for dim, (left, right) in zip(dims, pads):
        out_shape[dim] += left + right
    into, source = [slice(None)] * input.ndim, input
    for dim, (left, right) in zip(dims, pads):
        into[dim] = slice(max(left, 0), out_shape[dim] - max(right, 0))
        source = narrowed(source, dim, max(-left, 0), in_shape[dim] - max(-right, 0))
    out = IndexPut.apply(input.new_empty(tuple(out_shape)), source, tuple(into), True)
    for dim, (left, right) in zip(dims, pads):
        end = out_shape[dim] - max(right, 0)
        if left > 0:
            out = IndexPut.apply(out, narrowed(out, dim, end - left, end), region(dim, 0, left),
                                 True)
        if right > 0:
            start = max(left, 0)
            out = IndexPut.apply(out, narrowed(out, dim, start, start + right),
                                 region(dim, out_shape[dim] - right, out_shape[dim]), True)
    return out


_PAD_NAMES = {"reflect": "Reflection", "replicate": "Replication", "circular": "Circular"}


def _pad_samples(make):
    return [Sample((make((2, 3)), (1, 2)), name="constant last dim"),
            Sample((make((2, 3, 4)), (1, 0, -1, 2)), {"value": 1.5}, name="constant, crop"),
            Sample((make((1, 2, 4)), (3, -1)), {"mode": "reflect"}, name="reflect 1-D, crop"),
            Sample((make((1, 3, 4)), (2, 1, 1, 2)), {"mode": "replicate"}, name="replicate 2-D"),
            Sample((make((2, 2, 3)), (-1, 2, 1, 2)), {"mode": "circular"},
                   name="circular 2-D, crop")]


@register_op(namespace="nn.functional", samples=_pad_samples)
def pad(input, pad, mode="constant", value=None):
    """Pad ``input``: ``pad`` = (left, right) for the last dim, then (top, bottom) for the
    one before, and so on; negative amounts crop. Modes: 'constant' (``value``, default 0),
    'reflect' (mirror without repeating the edge; pad < size), 'replicate' (repeat the
    edge), 'circular' (wrap around; pad <= size). Non-constant modes pad the last 1, 2 or 3
    dims of a 2-3-D, 3-4-D or 4-5-D input. Cost: one copy of the output."""
    ensure_tensor(input, "pad")
    if not isinstance(mode, str):
        raise TypeError(f"pad(): argument 'mode' (position 3) must be str, not "
                        f"{type(mode).__name__}")
    pad = tuple(int(p) for p in pad)
    shape = input._data.shape
    ndim = len(shape)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{ndim}")
    pairs = [(0, 0)] * ndim
    for k in range(len(pad) // 2):
        pairs[ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    for d, (a, b) in enumerate(pairs):
        if shape[d] + a + b < 0:
            raise RuntimeError(f"The input size {shape[d]}, plus negative padding {a} and {b} "
                               f"resulted in a negative output size, which is invalid. Check "
                               f"dimension {d} of your input.")
    if mode == "constant":
        for d, (a, b) in enumerate(pairs):
            if max(-a, 0) + max(-b, 0) > shape[d]:
                raise RuntimeError(f"pad(): the negative padding ({a}, {b}) crops more than the "
                                   f"size {shape[d]} of dimension {d} (narrow(): length must be "
                                   f"non-negative)")
        return ConstantPad.apply(input, tuple(pairs), 0 if value is None else value)
    if mode not in _PAD_NAMES:
        raise NotImplementedError(f"Unrecognised padding mode {mode} (expected 'constant', "
                                  f"'reflect', 'replicate' or 'circular')")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k not in (1, 2, 3) or ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\nSupported "
            "combinations for non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads "
            "last dimension)\n  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    xp = backend.xp_for_device(input._device)
    indices = []
    for d, (a, b) in enumerate(pairs):
        if not (a or b):
            continue
        n = shape[d]
        if mode == "reflect" and (a >= n or b >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({a}, {b}) at dimension {d} "
                               f"of input {list(shape)}")
        kept = n - max(-a, 0) - max(-b, 0)  # circular wraps over the cropped tensor
        if mode == "circular" and (a > kept or b > kept):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n == 0 and n + a + b > 0:
            raise RuntimeError(f"pad(): can't pad an empty dimension {d} in mode {mode} (there "
                               f"is nothing to copy from)")
        indices.append((d, _pad_index(n, a, b, mode, xp)))
    if mode != "circular" and all(shape[d] + a + b < 1 for d, (a, b) in enumerate(pairs)
                                  if a or b) and any(a or b for a, b in pairs):
        sizes = [shape[d] + a + b for d, (a, b) in enumerate(pairs) if a or b]
        raise RuntimeError(f"pad(): input {list(shape)} is too small for mode {mode} with "
                           f"padding {list(pad)}: the padded dims would have sizes {sizes}")
    if not indices:
        return input.clone()
    if mode == "circular" and input.ndim == k + 2:
        return _pad_circular(input, [pairs[input.ndim - 1 - i] for i in range(k)])
    # one gather of input positions over the padded dims (the gradient scatter-adds them
    # back); dims between padded ones take every position, so the indices stay adjacent
    by_dim = dict(indices)
    first, last = indices[0][0], indices[-1][0]
    span = range(first, last + 1)
    index = tuple(by_dim[d] if d in by_dim else xp.arange(shape[d]) for d in span)
    index = tuple(ix.reshape((-1,) + (1,) * (last - d)) for d, ix in zip(span, index))
    out = AdvancedIndex.apply(input, (slice(None),) * first + index)
    if out.grad_fn is not None:
        out.grad_fn.node_name = f"{_PAD_NAMES[mode]}Pad{k}DBackward0"
    return out


# ----------------------------------------------------------------------------- windows
@register_op(methods=("ravel",), samples=lambda make: [Sample((make((2, 3)),)),
                                                       Sample((make((3, 2)).t(),)),
                                                       Sample((make(()),))])
def ravel(input):
    """The elements as a 1-D tensor in row-major order (a view when the layout allows)."""
    ensure_tensor(input, "ravel")
    return reshape(input, (-1,))


class Unfold(Function):
    """Sliding windows along one dim as a view: windows replace the dim, each window's
    elements form a new last dim."""

    array_backward = True
    node_name = "UnfoldBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, dim, size, step):
        ctx.input_shape, ctx.args = x.shape, (dim, size, step)
        shape = list(x.shape)
        strides = list(x.strides)
        shape[dim] = (x.shape[dim] - size) // step + 1
        strides[dim] = x.strides[dim] * step
        # overlapping windows share memory: NumPy marks them read-only, as PyTorch refuses
        # in-place writes there
        return backend.as_strided(x, tuple(shape) + (size,), tuple(strides) + (x.strides[dim],),
                                  writeable=step >= size)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(UnfoldAdjoint, grad, ctx.input_shape, *ctx.args), None, None, None


class UnfoldAdjoint(Function):
    """Add every window's gradient back onto the positions it covers (overlaps add)."""

    array_backward = True
    node_name = "UnfoldBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, shape, dim, size, step):
        ctx.args = (dim, size, step)
        xp = ctx.xp
        windows = grad.shape[dim]
        index = (xp.arange(windows)[:, None] * step + xp.arange(size)[None, :]).reshape(-1)
        spread = xp.moveaxis(grad, -1, dim + 1)
        spread = spread.reshape(grad.shape[:dim] + (windows * size,) + grad.shape[dim + 1:-1])
        out = xp.zeros(shape, grad.dtype)
        backend.scatter_add(out, (slice(None),) * dim + (index,), spread)
        return out

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(Unfold, grad, *ctx.args), None, None, None, None


def _unfold_samples(make):
    return [Sample((make((7,)), 0, 3, 2), name="overlapping"),
            Sample((make((2, 5, 2)), 1, 2, 3), name="gaps"),
            Sample((make((3, 4)), -1, 4, 1), name="whole dim")]


@register_op("unfold", methods=("unfold",), samples=_unfold_samples,
             torch=lambda torch, x, *args: x.unfold(*args))
def unfold(input, dimension, size, step):
    """``Tensor.unfold``: all windows of ``size`` elements along ``dimension``, ``step``
    apart, as a view of shape (..., windows, ..., size) with windows = (n - size) // step
    + 1. The gradient adds overlapping windows. (``nn.functional.unfold``, im2col, is a
    different op.)"""
    ensure_tensor(input, "unfold")
    size, step = as_int(size, "unfold", "size"), as_int(step, "unfold", "step")
    ndim = input._data.ndim
    d = wrap_dim(dimension, ndim, "unfold")
    n = input._data.shape[d] if ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if ndim == 0:
        return reshape(input, (1,))
    return Unfold.apply(input, d, size, step)


# ----------------------------------------------------------------------------- in-place views
def _view_inplace(self: Tensor, function, *args, node_name=None) -> Tensor:
    """``x.unsqueeze_(0)`` and friends: x itself takes the view's shape and strides (same
    memory), its node becomes the view op's; the version counter goes up, as in PyTorch."""
    from ..autograd import grad_mode

    if grad_mode._state.enabled and self.grad_fn is None and self._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation. "
            "Change its shape inside `with ember.no_grad():`, or use the out-of-place op.")
    result = function(self, *args)
    if node_name is not None and result.grad_fn is not None:
        result.grad_fn.node_name = node_name  # PyTorch names the in-place forms apart
    self._data = result._data
    bump_version(self)
    if result.grad_fn is not None:
        self.grad_fn, self._output_nr = result.grad_fn, result._output_nr
    if self._base is not None:
        self._view_chain = result._view_chain
    return self


def _unsqueeze_(self, dim):
    """In-place ``unsqueeze``: self gains a size-1 dim at ``dim``."""
    return _view_inplace(self, unsqueeze, dim, node_name="UnsqueezeBackward1")


def _squeeze_(self, dim=None):
    """In-place ``squeeze``: self drops size-1 dims (all, or those in ``dim``)."""
    name = "SqueezeBackward3" if dim is None else (
        "SqueezeBackward5" if isinstance(dim, (tuple, list)) else "SqueezeBackward4")
    return _view_inplace(self, squeeze, dim, node_name=name)


def _transpose_(self, dim0, dim1):
    """In-place ``transpose``: self swaps two dims."""
    return _view_inplace(self, transpose, dim0, dim1, node_name="TransposeBackward1")


def _t_(self):
    """In-place ``t``: self, of at most 2 dims, is transposed."""
    return _view_inplace(self, _t, node_name="TBackward1")


for _name, _function in (("unsqueeze_", _unsqueeze_), ("squeeze_", _squeeze_),
                         ("transpose_", _transpose_), ("swapaxes_", _transpose_),
                         ("swapdims_", _transpose_), ("t_", _t_)):
    setattr(Tensor, _name, _function)


# ----------------------------------------------------------------------------- products, blocks
def _one_d_tensors(tensors, op: str) -> tuple:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError(f"{op}(): expects a non-empty TensorList")
    for i, x in enumerate(tensors):
        ensure_tensor(x, op, f"tensors[{i}]")
        if x._data.ndim != 1:
            raise RuntimeError(f"{op}(): Expect a 1D vector, but got shape "
                               f"{list(x.shape)} (tensors[{i}])")
    return tuple(tensors)


@register_op(samples=lambda make: [
    Sample((make((3,)), make((2,))), name="two"),
    Sample((make((2,)), make((3,)), make((2,))), name="three"),
    Sample((make((4,)),), name="one")])
def cartesian_prod(*tensors):
    """Cartesian product of 1-D tensors: a (n0*n1*..., k) tensor whose rows run over all
    tuples in row-major (lexicographic) order, like ``itertools.product``; one tensor comes
    back as it is."""
    tensors = _one_d_tensors(tensors, "cartesian_prod")
    if len(tensors) == 1:
        return tensors[0]
    grids = NAMESPACES["ember"]["meshgrid"](*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], dim=1)


def _combination_index(xp, n: int, r: int, with_replacement: bool):
    """(count, r) int64 positions of the r-combinations of range(n) in lexicographic
    order: all n**r tuples (an r-dim grid), kept where strictly (non-strictly) increasing."""
    grid = np.indices((n,) * r).reshape(r, -1)
    steps = np.diff(grid, axis=0)
    keep = (steps >= 0).all(axis=0) if with_replacement else (steps > 0).all(axis=0)
    return xp.asarray(np.ascontiguousarray(grid[:, keep].T), dtype=np.int64)


@register_op(samples=lambda make: [
    Sample((make((4,)),), name="pairs"),
    Sample((make((4,)), 3), name="r=3"),
    Sample((make((3,)),), {"with_replacement": True}, name="with replacement"),
    Sample((make((3,)), 1), name="r=1"),
    Sample((make((2,)), 3), name="r > n")])
def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-D tensor's elements, as rows of a (count, r)
    tensor in lexicographic order of positions (like ``itertools.combinations``, or
    ``combinations_with_replacement``); ``r=0`` gives an empty 1-D tensor. Cost: the index
    is chosen among n**r tuples."""
    ensure_tensor(input, "combinations")
    if input._data.ndim != 1:
        raise RuntimeError(f"combinations(): Expect a 1D vector, but got shape "
                           f"{list(input.shape)}")
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
        raise TypeError(f"combinations(): argument 'r' must be int, not {type(r).__name__}")
    if r < 0:
        raise RuntimeError(f"combinations(): Expect a non-negative number, but got {r}")
    if r == 0:
        return input[:0]
    n = input._data.shape[0]
    xp = backend.xp_for_device(input._device)
    index = _combination_index(xp, n, int(r), bool(with_replacement))
    position = Tensor._make(index.reshape(-1), input._device)
    return input.index_select(0, position).reshape(index.shape[0], int(r))


def _block_samples(make):
    return [Sample((make((2, 2)), make((1, 3))), name="matrices"),
            Sample((make(()), make((2,)), make((2, 1))), name="0-D, 1-D, 2-D"),
            Sample((make((2, 2)), make.int((1, 2), -3, 3)), name="mixed dtypes")]


@register_op(samples=_block_samples)
def block_diag(*tensors):
    """Block-diagonal matrix of the given 0-D, 1-D (a row) or 2-D tensors, in order, zeros
    elsewhere; the dtype is the promoted one."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    mats = []
    for i, x in enumerate(tensors):
        ensure_tensor(x, "block_diag", f"tensors[{i}]")
        if x._data.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {x._data.ndim} dimensions")
        mats.append(x.reshape(1, -1) if x._data.ndim < 2 else x)
    if not mats:
        return Tensor._make(np.empty((1, 0), dtypes.get_default_dtype().numpy), backend.CPU)
    result = dtypes.result_type(*mats)
    mats = [m if m.dtype is result else m.to(result) for m in mats]
    total = sum(m._data.shape[1] for m in mats)
    pad = NAMESPACES["nn.functional"]["pad"]
    rows, before = [], 0
    for m in mats:
        cols = m._data.shape[1]
        rows.append(pad(m, (before, total - before - cols)))
        before += cols
    return cat(rows, dim=0)


# ----------------------------------------------------------------------------- as_strided
def _positions(xp, shape, strides, offset: int):
    """The storage index of every element of a (shape, strides, offset) view."""
    index = xp.full(tuple(shape), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        step = xp.arange(n, dtype=np.int64) * s
        index = index + step.reshape((n,) + (1,) * (len(shape) - d - 1))
    return index


def _storage(x, op: str):
    found = backend.storage_of(x)
    if found is None:
        raise RuntimeError(f"{op}(): the tensor's memory is not one dense block of its dtype "
                           "(it views a wider or reinterpreted array); clone() it first")
    return found


class StorageMove(Function):
    """The gradient map of ``as_strided``: add each element of ``g`` into the storage slot
    ``scatter_index`` names, then read the slots ``gather_index`` names (scaled). Its
    adjoint is the same move the other way round."""

    array_backward = True
    node_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx, g, scatter_index, gather_index, size, pre, post):
        ctx.args = (scatter_index, gather_index, size, pre, post)
        xp = ctx.xp
        storage = xp.zeros(size, g.dtype)
        backend.scatter_add(storage, scatter_index.reshape(-1),
                            (g if pre is None else g * pre).reshape(-1))
        out = storage[gather_index]
        return out if post is None else out * post

    @staticmethod
    def backward(ctx, grad):
        scatter_index, gather_index, size, pre, post = ctx.args
        return (ctx.math.apply(StorageMove, grad, gather_index, scatter_index, size, post, pre),
                None, None, None, None, None)


class AsStrided(Function):
    array_backward = True
    node_name = "AsStridedBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, size, stride, offset):
        flat, own_offset = _storage(x, "as_strided")
        xp = ctx.xp
        needed = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0
        if needed > flat.size:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{offset}, and itemsize {x.itemsize} requiring a storage size of "
                f"{needed * x.itemsize} are out of bounds for storage of size "
                f"{flat.size * x.itemsize}")
        needs = getattr(ctx, "needs_input_grad", None)
        if needs and needs[0]:
            in_strides = tuple(s // x.itemsize for s in x.strides)
            inside = _positions(xp, x.shape, in_strides, own_offset)
            outside = _positions(xp, size, stride, offset)
            counts = xp.zeros(flat.size, x.dtype)
            backend.scatter_add(counts, inside.reshape(-1), xp.ones(inside.size, x.dtype))
            seen = counts[inside]
            # an input that overlaps itself (expanded) shares each slot's gradient out
            post = None if not seen.size or float(seen.max()) <= 1 else 1 / seen
            ctx.move = (outside, inside, flat.size, None, post)
        return backend.as_strided(flat[offset:], tuple(size),
                                  tuple(s * x.itemsize for s in stride))

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(StorageMove, grad, *ctx.move), None, None, None


def _as_strided_samples(make):
    return [Sample((make((3, 4)), (2, 2), (1, 2)), name="transposed window"),
            Sample((make((6,)), (3, 2), (1, 1), 1), name="overlapping, offset"),
            Sample((make((2, 3)), (4,), (0,)), name="broadcast one element")]


@register_op(methods=("as_strided",), samples=_as_strided_samples)
def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s memory with the given sizes, strides and storage offset (in
    elements; by default ``input.storage_offset()``). Elements the view repeats get the sum
    of their gradients.

    >>> x = ember.arange(6.0)
    >>> ember.as_strided(x, (2, 2), (1, 2))
    tensor([[0., 2.],
            [1., 3.]])
    """
    ensure_tensor(input, "as_strided")
    size = parse_shape((size,), "as_strided")
    stride = parse_shape((stride,), "as_strided", "stride")
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides "
                           f"for {len(size)} sizes")
    if any(n < 0 for n in size):
        raise RuntimeError(f"as_strided: Negative size: {list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    offset = input.storage_offset() if storage_offset is None else as_int(
        storage_offset, "as_strided", "storage_offset")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    return AsStrided.apply(input, size, stride, offset)


def _as_strided_(self, size, stride, storage_offset=None):
    """In-place ``as_strided``: self becomes the view."""
    return _view_inplace(self, as_strided, size, stride, storage_offset)


def _as_strided_scatter_samples(make):
    return [Sample((make((3, 4)), make((2, 2)), (2, 2), (1, 2)), name="window"),
            Sample((make((6,)), make((2, 2)), (2, 2), (3, 1), 1), name="offset")]


def _torch_as_strided_scatter(torch, input, src, size, stride, storage_offset=None):
    # torch.as_strided_scatter's own input gradient fails torch's gradcheck (it keeps the
    # overwritten slots instead of the others); the same embedding by clone + copy_ is right
    out = input.clone()
    out.as_strided(size, stride, storage_offset or 0).copy_(src)
    return out


@register_op(methods=("as_strided_scatter",), samples=_as_strided_scatter_samples,
             torch=_torch_as_strided_scatter)
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` (contiguous) with the elements of ``input.as_strided(size,
    stride, storage_offset)`` replaced by ``src``.

    >>> ember.as_strided_scatter(ember.zeros(4), ember.ones(2), (2,), (2,))
    tensor([1., 0., 1., 0.])
    """
    ensure_tensor(input, "as_strided_scatter")
    ensure_tensor(src, "as_strided_scatter", "src")
    out = clone(input).contiguous()
    offset = 0 if storage_offset is None else storage_offset
    view = as_strided(out, size, stride, offset)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(view.shape)}")
    view.copy_(src)
    return out


@register_op(methods=("diagonal_scatter",), samples=lambda make: [
    Sample((make((3, 4)), make((3,))), name="main"),
    Sample((make((3, 4)), make((2,)), 2), name="offset 2"),
    Sample((make((2, 3, 3)), make((2, 2)), -1, 1, 2), name="batched, below")])
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with its ``diagonal(offset, dim1, dim2)`` replaced by ``src``
    (the functional form of ``x.diagonal(...).copy_(src)``).

    >>> ember.diagonal_scatter(ember.zeros(2, 2), ember.ones(2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    ensure_tensor(input, "diagonal_scatter")
    ensure_tensor(src, "diagonal_scatter", "src")
    out = clone(input).contiguous()
    view = NAMESPACES["ember"]["diagonal"](out, offset, dim1, dim2)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(view.shape)}")
    view.copy_(src)
    return out


@register_op(samples=lambda make: [Sample((make((2, 6)), [1, 3, 2], 1), name="sizes"),
                                   Sample((make((4, 2)), [4]), name="one piece")])
def split_with_sizes(input, split_sizes, dim=0):
    """Views of consecutive pieces of the given sizes along ``dim`` (they must add up to
    the dim's size).

    >>> [p.shape[0] for p in ember.split_with_sizes(ember.zeros(5), [2, 3])]
    [2, 3]
    """
    ensure_tensor(input, "split_with_sizes")
    if not isinstance(split_sizes, (tuple, list)):
        raise TypeError("split_with_sizes(): argument 'split_sizes' must be a sequence of ints, "
                        f"not {type(split_sizes).__name__}")
    return split(input, list(split_sizes), dim)


Tensor.as_strided_ = _as_strided_
NAMESPACES["ember"]["as_strided_"] = _as_strided_


# ----------------------------------------------------------------------------- unravel, resize
@register_op(differentiable=False, samples=lambda make: [
    Sample((make.int((5,), -6, 6), (2, 3)), name="1-D, negative"),
    Sample((make.int((2, 2), 0, 24), (2, 3, 4)), name="2-D")])
def unravel_index(indices, shape):
    """The coordinates in a tensor of ``shape`` of each flat index (negative ones count
    from the end): a tuple of int64 tensors, one per dim.

    >>> ember.unravel_index(ember.tensor([4, 1]), (2, 3))
    (tensor([1, 0]), tensor([1, 1]))
    """
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index(): expected 'indices' to be a Tensor, got "
                        f"{type(indices).__name__}")
    if indices._data.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = parse_shape((shape,) if isinstance(shape, int) else (tuple(shape),),
                        "unravel_index")
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    total = int(np.prod(shape))
    xp = backend.xp_of(indices._data)
    flat = indices._data.astype(np.int64)
    if flat.size and (int(flat.min()) < -total or int(flat.max()) >= total):
        raise RuntimeError(f"'indices' must be in range [-{total}, {total - 1}] for 'shape' "
                           f"{shape}")
    flat = xp.where(flat < 0, flat + total, flat)
    out = []
    for size in reversed(shape):
        out.append(flat % size if size else flat * 0)
        flat = flat // size if size else flat
    return tuple(Tensor._make(a, indices._device) for a in reversed(out))


def _resize_(self, *sizes, memory_format=None):
    """Give self a new shape in place: its first elements keep their values (row-major),
    new ones are uninitialized. Not for tensors that require grad (as in PyTorch).

    >>> x = ember.arange(6.0)
    >>> x.resize_(2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = parse_shape(sizes, "resize_")
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    data = self._data
    count = int(np.prod(shape))
    found = backend.storage_of(data) if data.flags.c_contiguous else None
    if found is not None and found[1] + count <= found[0].size:
        # the memory block holds enough elements (a shrink, or a regrow after one): view it
        flat, offset = found
        self._data = flat[offset:offset + count].reshape(shape)
    else:
        fresh = backend.xp_of(data).empty(shape, data.dtype)
        if found is not None:
            flat, offset = found
            keep = min(count, flat.size - offset)
            fresh.reshape(-1)[:keep] = flat[offset:offset + keep]
        else:
            keep = min(count, data.size)
            fresh.reshape(-1)[:keep] = data.reshape(-1)[:keep]
        self._data = fresh
    bump_version(self)
    return self


def _resize_as_(self, the_template, memory_format=None):
    """``resize_`` to ``the_template``'s shape."""
    ensure_tensor(the_template, "resize_as_", "the_template")
    return _resize_(self, tuple(the_template.shape))


def _resize(self, *sizes):
    """Deprecated out-of-place resize: a reshaped view with the same number of elements."""
    import warnings

    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    shape = parse_shape(sizes, "resize")
    if int(np.prod(shape)) != self.numel():
        raise RuntimeError(f"resize(): shape {list(shape)} is invalid for input of size "
                           f"{self.numel()} (the out-of-place form keeps the number of "
                           "elements; use resize_ to change it)")
    return reshape(self, shape)


def _resize_as(self, tensor):
    """Deprecated out-of-place ``resize_as``: ``resize(tensor.shape)``."""
    import warnings

    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    ensure_tensor(tensor, "resize_as", "tensor")
    if tensor.numel() != self.numel():
        raise RuntimeError(f"resize_as(): shape {list(tensor.shape)} is invalid for input of "
                           f"size {self.numel()} (the out-of-place form keeps the number of "
                           "elements; use resize_as_ to change it)")
    return reshape(self, tuple(tensor.shape))


def _fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal (all indices equal) with ``fill_value`` in place; with
    ``wrap``, a tall matrix's diagonal starts again every ``cols + 1`` rows (NumPy's
    ``fill_diagonal``).

    >>> ember.zeros(2, 3).fill_diagonal_(5.0)
    tensor([[5., 0., 0.],
            [0., 5., 0.]])
    """
    data = self._data
    if data.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if data.ndim > 2 and len(set(data.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = np.zeros(data.shape, dtype=bool)
    np.fill_diagonal(mask, True, wrap=bool(wrap))
    condition = Tensor._make(backend.xp_of(data).asarray(mask), self._device)
    def fill(x, value):
        return NAMESPACES["ember"]["where"](condition, value, x)

    return apply_inplace(self, fill, fill_value)


for _name, _function in (("resize_", _resize_), ("resize_as_", _resize_as_),
                         ("resize", _resize), ("resize_as", _resize_as),
                         ("fill_diagonal_", _fill_diagonal_)):
    setattr(Tensor, _name, _function)
NAMESPACES["ember"]["resize_as_"] = _resize_as_
Tensor.select_scatter = select_scatter
Tensor.slice_scatter = slice_scatter


def index_put_(input, indices, values, accumulate=False):
    """``input[indices] = values`` in place (``+=`` with ``accumulate``): the function form
    of ``Tensor.index_put_``.

    >>> x = ember.zeros(3)
    >>> ember.index_put_(x, (ember.tensor([0, 0]),), ember.tensor(1.0), accumulate=True)
    tensor([2., 0., 0.])
    """
    ensure_tensor(input, "index_put_")
    return input.index_put_(indices, values, accumulate)


NAMESPACES["ember"]["index_put_"] = index_put_
