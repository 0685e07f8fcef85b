"""Norms: ``linalg.vector_norm``, ``linalg.matrix_norm``, ``linalg.norm``, ``norm`` and
``dist``. The nuclear and spectral matrix norms take their singular values from
``linalg.svdvals`` (in ``decompositions``).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import dtypes
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import ensure_tensor, wrap_dim
from .reductions import (
    _check_nonempty,
    _keepdim_shape,
    _reduced_dims,
    amax,
    amin,
)
from .registry import NAMESPACES, OPS, Sample, register_op
from .unary import abs as _abs


# ----------------------------------------------------------------------------- norms
class VectorNorm(Function):
    """``(sum |x|^p)^(1/p)`` over dims; p = inf / -inf are max / min of |x|, p = 0 counts
    non-zeros. Gradients are 0 where the norm (or, for p < 1, the element) is 0."""

    array_backward = True
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
        m = ctx.math
        x, out = ctx.saved_tensors
        shape, dims, keepdim, p = ctx.shape, ctx.dims, ctx.keepdim, ctx.ord
        if p == 0:
            return None, None, None, None
        kept = _keepdim_shape(shape, dims)
        g = m.reshape(grad, kept) if not keepdim and dims else grad
        if p == 1:
            return g * m.sign(x), None, None, None
        norm = m.reshape(out, kept) if not keepdim and dims else out
        if p == math.inf or p == -math.inf:
            ties = m.abs(x) == norm
            # 0 only in rows holding NaN: gradient 0; a count in the gradient's dtype
            count = m.cast(m.sum(ties, dims, True), grad)
            count = m.where(count == 0, 1.0, count)
            return m.where(ties, g * m.sign(x), 0.0) / count, None, None, None
        norm_safe = m.where(norm == 0, 1.0, norm)
        if p == 2:
            return x * m.where(norm == 0, 0.0, g / norm_safe), None, None, None
        x_safe = m.where(x == 0, 1.0, x)
        element = m.where(x == 0, 0.0, m.sign(x_safe) * m.abs(x_safe) ** (p - 1))
        return element * m.where(norm == 0, 0.0, g / norm_safe ** (p - 1)), None, None, None


def _check_norm_input(input, op):
    ensure_tensor(input, op)
    if input._data.dtype.kind not in "fV":
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. "
                           f"Got {input.dtype.scalar_name}")


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
    if math.isinf(ord) and x._data.size == 0:  # max and min have no identity
        if dim is None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {float(ord):g} norm on "
                               f"an empty tensor because the operation does not have an "
                               f"identity")
        for d in dims:
            if x._data.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {float(ord):g} norm "
                                   f"on the dimension {d}because this dimension is empty and "
                                   f"the operation does not have an identity")
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


# ----------------------------------------------------------------------------- dist
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
    if input._data.dtype.kind not in "fV" or other._data.dtype.kind not in "fV":
        raise RuntimeError(f"dist(): is not defined for {input.dtype.name} and "
                           f"{other.dtype.name} (it needs floating-point tensors)")
    return vector_norm(input - other, p)


# ----------------------------------------------------------------------------- linalg.norm
def _linalg_norm_samples(make):
    return [Sample((make((3, 4)),), name="flattened 2-norm"),
            Sample((make((3, 4)), "fro"), name="frobenius"),
            Sample((make((4,)), 1), name="vector ord 1"),
            Sample((make((2, 3, 4)), 2, -1, True), name="dim -1 keepdim"),
            Sample((make((2, 3)), float("inf"), (0, 1)), name="matrix inf")]


@register_op("norm", namespace="linalg", samples=_linalg_norm_samples)
def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector or matrix norm, chosen as PyTorch does: dim an int -> vector_norm over it;
    dim a pair -> matrix_norm over those dims; dim None -> the 2-norm of the flattened input
    when ord is None, else vector_norm for 1-D and matrix_norm for 2-D input."""
    ensure_tensor(A, "linalg.norm", "A")
    ndim = A._data.ndim
    if isinstance(dim, (int, np.integer)) and not isinstance(dim, bool):
        dim = (int(dim),)
    if dim is not None:
        dim = tuple(dim)
        if len(dim) == 1:
            return _linalg("vector_norm")(A, 2 if ord is None else ord, dim, keepdim,
                                          dtype=dtype)
        if len(dim) == 2:
            return _linalg("matrix_norm")(A, "fro" if ord is None else ord, dim, keepdim,
                                          dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           f"Got {list(dim)}")
    if ord is None:
        return _linalg("vector_norm")(A, 2, None, keepdim, dtype=dtype)
    if ndim == 1:
        return _linalg("vector_norm")(A, ord, None, keepdim, dtype=dtype)
    if ndim == 2:
        return _linalg("matrix_norm")(A, ord, (-2, -1), keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D "
                       f"or 2D. Got {ndim}D.")


def _linalg(name: str):
    function = NAMESPACES["linalg"].get(name)
    if function is None:
        raise RuntimeError(f"linalg.norm needs ember.linalg.{name}, which is not available")
    return function
