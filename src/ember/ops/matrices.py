"""Matrix structure: diagonal, diag, diag_embed, diagflat, trace, tril, triu,
tril_indices, triu_indices, vander, linalg.diagonal.
"""
from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..dtypes import int64 as _INT64
from ..tensor import Tensor
from ._util import as_int, ensure_tensor, refuse_bool, wrap_dim
from .registry import NAMESPACES, Sample, register_op


# ============================================================================ diagonals
def _diagonal_view(xp, x, offset: int, dim1: int, dim2: int):
    """A writable view of the diagonal of dims (dim1, dim2), moved to the last dimension."""
    v = xp.moveaxis(x, (dim1, dim2), (-2, -1))
    v = v[..., :, offset:] if offset >= 0 else v[..., -offset:, :]
    k = max(min(v.shape[-2], v.shape[-1]), 0)
    return backend.as_strided(v, v.shape[:-2] + (k,),
                              v.strides[:-2] + (v.strides[-2] + v.strides[-1],))


def _scatter_diagonal(xp, values, shape, offset: int, dim1: int, dim2: int):
    """Zeros of ``shape`` with ``values`` (broadcast) on a diagonal."""
    out = xp.zeros(shape, values.dtype)
    _diagonal_view(xp, out, offset, dim1, dim2)[...] = values
    return out


def _diagonal_copy(xp, x, offset: int, dim1: int, dim2: int):
    """The diagonal as a new array (a gradient must not alias another gradient)."""
    return _diagonal_view(xp, x, offset, dim1, dim2).copy()


class Diagonal(Function):
    array_backward = True
    node_name = "DiagonalBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.args = (x.shape, offset, dim1, dim2)
        return _diagonal_view(ctx.xp, x, offset, dim1, dim2)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        if m.arrays:
            return _scatter_diagonal(m.xp, grad, *ctx.args), None, None, None
        return DiagonalScatter.apply(grad, *ctx.args), None, None, None


class DiagonalScatter(Function):
    """Zeros of ``shape`` with ``values`` on a diagonal: the gradient of ``diagonal``."""

    array_backward = True
    node_name = "DiagonalBackwardBackward0"

    @staticmethod
    def forward(ctx, values, shape, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        return _scatter_diagonal(ctx.xp, values, shape, offset, dim1, dim2)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        if m.arrays:
            return _diagonal_copy(m.xp, grad, *ctx.args), None, None, None, None
        return Diagonal.apply(grad, *ctx.args), None, None, None, None


class DiagEmbed(Function):
    array_backward = True
    node_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        n = x.shape[-1] + abs(offset)
        shape = list(x.shape[:-1])
        for d in sorted((dim1, dim2)):
            shape.insert(d, n)
        out = ctx.xp.zeros(tuple(shape), x.dtype)
        _diagonal_view(ctx.xp, out, offset, dim1, dim2)[...] = x
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        if m.arrays:
            return _diagonal_copy(m.xp, grad, *ctx.args), None, None, None
        return Diagonal.apply(grad, *ctx.args), None, None, None


def _diagonal_dims(op, ndim, dim1, dim2):
    d1, d2 = wrap_dim(dim1, ndim, op), wrap_dim(dim2, ndim, op)
    if d1 == d2:
        raise RuntimeError(f"{op}: diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


@register_op(methods=("diagonal",), samples=lambda make: [
    Sample((make((3, 4)),)), Sample((make((3, 4)), 1), name="offset 1"),
    Sample((make((2, 3, 4)), -1, 2, 0), name="offset -1, dims (2, 0)"),
    Sample((make((2, 3)), 5), name="empty")])
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal input[..., i, i + offset] of dims (dim1, dim2) as a view, appended as the
    last dimension. offset > 0 is above the main diagonal, < 0 below."""
    ensure_tensor(input, "diagonal")
    offset = as_int(offset, "diagonal", "offset")
    if input._data.ndim < 2:
        raise RuntimeError(f"diagonal: expected a tensor with at least 2 dimensions, but got "
                           f"shape {list(input.shape)}")
    d1, d2 = _diagonal_dims("diagonal", input._data.ndim, dim1, dim2)
    return Diagonal.apply(input, offset, d1, d2)


@register_op(methods=("diag_embed",), samples=lambda make: [
    Sample((make((2, 3)),)), Sample((make((3,)), 1), name="offset 1"),
    Sample((make((2, 3)), -1, 0, 2), name="offset -1, dims (0, 2)")])
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose diagonal (offset, dim1, dim2) holds the last dimension of input, zeros
    elsewhere; the inverse of ``diagonal``. dims refer to the output (ndim + 1)."""
    ensure_tensor(input, "diag_embed")
    offset = as_int(offset, "diag_embed", "offset")
    if input._data.ndim < 1:
        raise RuntimeError("diag_embed: expected a tensor with at least 1 dimension, got a "
                           "0-d tensor")
    d1, d2 = _diagonal_dims("diag_embed", input._data.ndim + 1, dim1, dim2)
    return DiagEmbed.apply(input, offset, d1, d2)


@register_op(methods=("diag",), samples=lambda make: [
    Sample((make((3,)),)), Sample((make((3,)), -2), name="vector, offset -2"),
    Sample((make((3, 4)),), name="matrix"), Sample((make((3, 4)), 1), name="matrix offset 1")])
def diag(input, diagonal=0):
    """1-D input: the square matrix with input on diagonal ``diagonal``. 2-D input: that
    diagonal as a 1-D tensor (a copy)."""
    ensure_tensor(input, "diag")
    diagonal = as_int(diagonal, "diag", "diagonal")
    ndim = input._data.ndim
    if ndim == 1:
        return DiagEmbed.apply(input, diagonal, 0, 1)
    if ndim == 2:
        return Diagonal.apply(input, diagonal, 0, 1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")


@register_op(methods=("trace",), samples=lambda make: [
    Sample((make((3, 3)),)), Sample((make((2, 4)),), name="non-square")])
def trace(input):
    """Sum of the main diagonal of a 2-D tensor (integers sum to int64)."""
    ensure_tensor(input, "trace")
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{input._data.ndim}")
    refuse_bool(input, "trace")
    return Trace.apply(input)


class Trace(Function):
    array_backward = True
    node_name = "TraceBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        dtype = np.int64 if x.dtype.kind in "biu" else x.dtype
        return ctx.xp.asarray(ctx.xp.trace(x, dtype=dtype))

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        if m.arrays:
            return _scatter_diagonal(m.xp, grad, ctx.shape, 0, 0, 1)
        return DiagonalScatter.apply(m.expand(grad, (min(ctx.shape),)), ctx.shape, 0, 0, 1)


class Tril(Function):
    array_backward = True
    node_name = "TrilBackward0"

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return ctx.xp.tril(x, k)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.tril(grad, ctx.k), None


class Triu(Function):
    array_backward = True
    node_name = "TriuBackward0"

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return ctx.xp.triu(x, k)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.triu(grad, ctx.k), None


def _triangle_samples(make):
    return [Sample((make((3, 4)),)), Sample((make((2, 3, 3)), 1), name="batch, diagonal 1"),
            Sample((make((4, 3)), -1), name="diagonal -1")]


def _triangle(cls, op, input, diagonal):
    ensure_tensor(input, op)
    diagonal = as_int(diagonal, op, "diagonal")
    if input._data.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions, but got shape "
                           f"{list(input.shape)}")
    return cls.apply(input, diagonal)


@register_op(inplace=("tril_",), methods=("tril",), samples=_triangle_samples)
def tril(input, diagonal=0):
    """The lower triangle of the last two dims: elements with j - i <= diagonal, others 0."""
    return _triangle(Tril, "tril", input, diagonal)


@register_op(inplace=("triu_",), methods=("triu",), samples=_triangle_samples)
def triu(input, diagonal=0):
    """The upper triangle of the last two dims: elements with j - i >= diagonal, others 0."""
    return _triangle(Triu, "triu", input, diagonal)


# ============================================================================ linalg.diagonal
@register_op("diagonal", namespace="linalg", samples=lambda make: [
    Sample((make((2, 3, 4)),), {"offset": 1}), Sample((make((3, 3)),), {"dim1": 0, "dim2": 1})])
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``diagonal`` with the defaults of a batch of matrices: the diagonals of the last two
    dims (a view)."""
    return diagonal(A, offset, dim1, dim2)


# ----------------------------------------------------------------------------- index builders
def _int64():
    from .. import dtypes as _dtypes
    return _dtypes.int64


def _triangle_indices(op, lower, row, col, offset, dtype, device):
    from .. import dtypes as _dtypes

    for arg, value in (("row", row), ("col", col), ("offset", offset)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{op}(): argument '{arg}' must be int, not {type(value).__name__}")
    if row < 0 or col < 0:
        raise RuntimeError(f"{op}(): row and col must be non-negative, got row={row}, "
                           f"col={col}")
    d = _dtypes.int64 if dtype is None else _dtypes.to_dtype(dtype)
    if d.numpy.kind not in "iu":
        raise RuntimeError(f"{op}(): dtype must be an integer type, got {d.name}")
    target = backend.CPU if device is None else backend.parse_device(device)
    r, c = np.indices((row, col)).reshape(2, -1)
    keep = (c - r <= offset) if lower else (c - r >= offset)
    index = np.stack([r[keep], c[keep]]).astype(d.numpy)
    return Tensor._make(backend.xp_for_device(target).asarray(index), target)


def _index_builder_samples(make):
    device = make(()).device
    return [Sample((4, 3), {"device": device}, name="tall"),
            Sample((3, 5, 1), {"device": device}, name="offset 1"),
            Sample((3, 4, -2), {"device": device}, name="offset -2"),
            Sample((0, 3), {"device": device}, name="empty")]


@register_op(differentiable=False, samples=_index_builder_samples)
def tril_indices(row, col, offset=0, *, dtype=_INT64, device="cpu", layout=None):
    """Coordinates of the lower triangle (``j - i <= offset``) of a row x col matrix, as a
    2 x N int64 tensor (row indices, then column indices) in row-major order."""
    return _triangle_indices("tril_indices", True, row, col, offset, dtype, device)


@register_op(differentiable=False, samples=_index_builder_samples)
def triu_indices(row, col, offset=0, *, dtype=_INT64, device="cpu", layout=None):
    """Coordinates of the upper triangle (``j - i >= offset``) of a row x col matrix, as a
    2 x N int64 tensor (row indices, then column indices) in row-major order."""
    return _triangle_indices("triu_indices", False, row, col, offset, dtype, device)


@register_op(methods=("diagflat",), samples=lambda make: [
    Sample((make((2, 2)),), name="matrix flattened"),
    Sample((make((3,)), 1), name="offset 1"),
    Sample((make((3,)), -2), name="offset -2"),
    Sample((make(()),), name="0-d")])
def diagflat(input, offset=0):
    """A square matrix with the flattened ``input`` on diagonal ``offset``, zeros
    elsewhere."""
    ensure_tensor(input, "diagflat")
    return diag(input.reshape(-1), as_int(offset, "diagflat", "offset"))


def _torch_vander(torch, x, N=None, increasing=False):
    # PyTorch 2.13's own vander fails in backward (its cumprod works in place), so the
    # reference is the definition, x ** powers
    n = x.shape[0] if N is None else N
    powers = torch.arange(n) if increasing else torch.arange(n - 1, -1, -1)
    if not x.is_floating_point():
        return torch.vander(x, N, increasing)
    return x.unsqueeze(1) ** powers.to(x.dtype)


@register_op(torch=_torch_vander, samples=lambda make: [
    Sample((make((4,)),), name="square"),
    Sample((make((3,)),), {"N": 4, "increasing": True}, name="increasing, wide"),
    Sample((make((3,)), 2), name="narrow"),
    Sample((make.int((3,), -3, 4),), name="int")])
def vander(x, N=None, increasing=False):
    """Vandermonde matrix of a 1-D tensor: column j is ``x ** (N - 1 - j)`` (``x ** j``
    when increasing); N defaults to len(x). Built by a running product (like PyTorch, so
    its gradient at 0 is finite). Integer and bool inputs give int64."""
    ensure_tensor(x, "vander")
    if x._data.ndim != 1:
        raise RuntimeError(f"vander(): x must be a one-dimensional tensor (got "
                           f"{x._data.ndim} dimensions)")
    n = x._data.shape[0] if N is None else N
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"vander(): argument 'N' must be int, not {type(N).__name__}")
    if n < 0:
        raise RuntimeError(f"vander(): N must be non-negative (got {n})")
    if x._data.dtype.kind in "biu":
        x = x.to(_int64())
    xp = backend.xp_for_device(x._device)
    ones = Tensor._make(xp.ones((x._data.shape[0], 1), dtype=x._data.dtype), x._device)
    if n == 0:
        return ones[:, :0]
    if n == 1:
        result = ones
    else:
        columns = NAMESPACES["ember"]["cat"](
            [ones, x.reshape(-1, 1).expand(x._data.shape[0], int(n) - 1)], dim=1)
        result = columns.cumprod(dim=1)
    return result if increasing else result.flip(1)
