"""The two namespaces a backward formula runs on: one formula, two speeds.

Every op writes its derivative once, against ``ctx.math``. The engine picks the namespace:

- ``ArrayMath`` (NumPy or CuPy, whichever the node's device uses) when no graph of the
  backward is needed (``create_graph=False``, the common case): gradients and saved values
  are raw arrays, and the formula makes no Tensor and no node;
- ``TENSOR_MATH`` under ``create_graph=True``: gradients and saved values are Tensors,
  every call is an ember op, and the backward is recorded, so gradients of gradients work.

A formula uses Python's operators (``grad * out``, ``-grad``, ``x > 0``), ``.shape`` and
``.ndim``, and the functions below, which keep ember's names and signatures in both
namespaces (``math.sum(x, dim, keepdim)``, ``math.where(cond, a, b)``). Operators mean the
same on arrays and on Tensors; methods don't (``.sum(dim=...)``, ``.t()``), so formulas
call functions instead.

An *elementwise formula* is a plain function ``formula(m, *args)`` that uses only
operators and the elementwise functions of ``m`` (see ``ELEMENTWISE``), no shapes.
``m.elementwise(formula, *args)`` runs it on the namespace's lane: NumPy calls, one fused
CuPy kernel (``backend.fused``), or ember ops on Tensors that record a graph.

>>> class Cube(ember.autograd.Function): ...   # user Functions always get Tensors
"""
from __future__ import annotations

import numpy as np

from .. import backend


def _axes(dim, ndim: int):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(d % ndim if ndim else 0 for d in dim)
    return dim % ndim if ndim else 0


def _count(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# The functions of the namespaces an elementwise formula may call (besides operators): each
# is one CuPy ufunc (or a composition of them) inside a fused kernel, and an ember op on
# Tensors. Arithmetic between two scalar arguments belongs outside the formula: inside
# CuPy's fusion its result is no longer a weak Python scalar and would widen float32.
ELEMENTWISE = ("where", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sign", "abs",
               "tanh", "sigmoid", "erf", "softplus", "maximum", "minimum", "isnan",
               "isfinite", "square", "reciprocal", "cast")


# the elementwise functions that are the array module's own ufuncs, under the same name
_UFUNCS = ("exp", "log", "log1p", "expm1", "sqrt", "abs", "sin", "cos", "sinh", "cosh",
           "isfinite", "isnan", "tanh", "maximum", "minimum")

FORMULAS: dict = {}  # every elementwise formula of ember's ops, by qualified name


def elementwise_formula(function):
    """Mark ``function(m, *args)`` as an elementwise formula (see the module's note) and
    list it in ``FORMULAS``, where the tests and ``tools/gpu_check.py`` find every one;
    the function itself is returned unchanged.

    >>> @elementwise_formula
    ... def softsign_values(m, x):
    ...     return m.cast(x / (m.abs(x) + 1), x)
    >>> array_math(np).elementwise(softsign_values, np.array([1.0, -3.0]))
    array([ 0.5 , -0.75])
    >>> del FORMULAS[softsign_values.__module__ + ".softsign_values"]
    """
    FORMULAS[f"{function.__module__}.{function.__qualname__}"] = function
    return function


class ArrayMath:
    """The backward namespace on raw arrays of one array module (``xp``)."""

    arrays = True

    def __init__(self, xp):
        self.xp = xp
        self._ndarray = xp.ndarray
        # bound straight to the module's ufuncs: ``m.exp(x)`` costs what ``xp.exp(x)`` does
        for name in _UFUNCS:
            setattr(self, name, getattr(xp, name))

    def elementwise(self, formula, *args):
        """``formula(self, *args)``: plain NumPy calls on the CPU; on CuPy arrays one fused
        kernel, built once per formula (``backend.fused``).

        >>> def cube_grad(m, grad, x):
        ...     return grad * 3.0 * x * x
        >>> array_math(np).elementwise(cube_grad, np.ones(2), np.array([1.0, 2.0]))
        array([ 3., 12.])
        """
        if self.xp is np:
            return formula(self, *args)
        return backend.fused(formula, self)(*args)

    # --------------------------------------------------------------- broadcasting
    def sum_to_shape(self, grad, shape: tuple):
        """Undo broadcasting: sum ``grad`` over the dims broadcasting added or stretched."""
        gshape = grad.shape
        if gshape == shape:
            return grad
        shape = tuple(shape)
        if gshape == shape:
            return grad
        lead = len(gshape) - len(shape)
        dims = tuple(range(lead)) + tuple(
            i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)
        out = grad.sum(axis=dims, keepdims=True) if dims else grad
        return out.reshape(shape) if out.shape != shape else out

    def expand(self, x, shape):
        shape = tuple(shape)
        if x.shape == shape:
            return x
        if _count(shape) <= 4096:
            # small: a filled array, through C alone (broadcast_to's Python costs more)
            out = self.xp.empty(shape, x.dtype)
            out[...] = x
            return out
        return self.xp.broadcast_to(x, shape)

    # --------------------------------------------------------------- reductions
    # (array methods rather than xp functions: NumPy's functions add Python wrappers)
    def sum(self, x, dim=None, keepdim: bool = False):
        return x.sum(axis=_axes(dim, x.ndim), keepdims=keepdim)

    def mean(self, x, dim=None, keepdim: bool = False):
        return x.mean(axis=_axes(dim, x.ndim), keepdims=keepdim)

    # --------------------------------------------------------------- shapes
    def reshape(self, x, shape):
        return x.reshape(tuple(shape))

    def unsqueeze(self, x, dim: int):
        return self.xp.expand_dims(x, dim if dim >= 0 else dim + x.ndim + 1)

    def squeeze(self, x, dim=None):
        return self.xp.squeeze(x, axis=dim)

    def transpose(self, x, dim0: int, dim1: int):
        return self.xp.swapaxes(x, dim0, dim1)

    def permute(self, x, dims):
        return self.xp.transpose(x, tuple(dims))

    def flip(self, x, dims):
        return self.xp.flip(x, axis=tuple(dims))

    def mT(self, x):
        return self.xp.swapaxes(x, -1, -2)

    def contiguous(self, x):
        return self.xp.ascontiguousarray(x)

    def cat(self, arrays, dim: int = 0):
        return self.xp.concatenate(arrays, axis=dim)

    def stack(self, arrays, dim: int = 0):
        return self.xp.stack(arrays, axis=dim)

    # --------------------------------------------------------------- elementwise
    def where(self, condition, a, b):
        if type(a) is type(b) is self._ndarray:  # two arrays: nothing to adjust
            return self.xp.where(condition, a, b)
        return backend.where(self.xp, condition, a, b)

    def rsqrt(self, x):
        return 1 / self.xp.sqrt(x)

    def sign(self, x):
        if x.dtype.kind not in "fV":
            return self.xp.sign(x)
        return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)  # sign(nan) is 0

    def sigmoid(self, x):
        xp = self.xp
        e = xp.exp(-xp.abs(x))  # never overflows (silu, mish, softplus meet |x| = 1000)
        return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))

    def square(self, x):
        return x * x

    def reciprocal(self, x):
        return 1 / x

    def xlogy(self, a, b):
        xp = self.xp
        zero = (a == 0) & ~xp.isnan(b)
        return xp.where(zero, 0, a * xp.log(xp.where(zero, 1, b))).astype(
            getattr(a, "dtype", None) or b.dtype, copy=False)

    def floor_divide(self, a, b):
        return self.xp.floor_divide(a, b)

    def div(self, a, b, *, rounding_mode=None):
        if rounding_mode is None:
            return a / b
        if rounding_mode == "floor":
            return self.xp.floor_divide(a, b)
        return self.xp.trunc(a / b)

    def clamp(self, x, min=None, max=None):
        return self.xp.clip(x, min, max)

    def zeros_like(self, x):
        return self.xp.zeros_like(x)

    def ones_like(self, x):
        return self.xp.ones_like(x)

    def full_like(self, x, value):
        return self.xp.full_like(x, value)

    def zeros(self, shape, like):
        """Zeros of ``shape`` with ``like``'s dtype and device."""
        return self.xp.zeros(tuple(shape), like.dtype)

    def cast(self, x, like):
        """``x`` in ``like``'s dtype."""
        return x.astype(like.dtype, copy=False) if x.dtype != like.dtype else x

    # --------------------------------------------------------------- products
    def matmul(self, a, b):
        # stacked (>2-D) products reach BLAS only for C-contiguous operands (as in forward)
        xp = self.xp
        if a.ndim > 2 and not a.flags.c_contiguous:
            a = xp.ascontiguousarray(a)
        if b.ndim > 2 and not b.flags.c_contiguous:
            b = xp.ascontiguousarray(b)
        return backend.matmul(xp, a, b)

    def outer(self, a, b):
        return self.xp.outer(a, b)

    # --------------------------------------------------------------- shape, indexing,
    # scatter, reductions, pooling (functions added for those families)
    def apply(self, function, *args):
        """A fused op (an ember Function) in the backward: its forward, on arrays. The
        Tensor namespace calls ``function.apply`` instead, which records the op."""
        ctx = object.__new__(function)
        ctx.xp = self.xp
        return function.forward(ctx, *args)

    def astype(self, x, dtype):
        """``x`` in the NumPy ``dtype``."""
        return x.astype(dtype, copy=False) if x.dtype != dtype else x

    def narrow(self, x, dim: int, start: int, length: int):
        return x[(slice(None),) * (dim % x.ndim) + (slice(start, start + length),)]

    def select(self, x, dim: int, index: int):
        return x[(slice(None),) * (dim % x.ndim) + (index,)]

    def roll(self, x, shifts, dims=None):
        return self.xp.roll(x, shifts, axis=dims)

    def rot90(self, x, k: int = 1, dims=(0, 1)):
        return self.xp.ascontiguousarray(self.xp.rot90(x, k, axes=tuple(dims)))

    # --------------------------------------------------------------- sorting, norms,
    # products, matrices, decompositions, comparison
    def einsum(self, equation: str, *operands):
        return backend.einsum(self.xp, equation, *operands)

    def eye(self, n: int, like):
        """The n x n identity in ``like``'s dtype and device."""
        return self.xp.eye(n, dtype=like.dtype)

    def tril(self, x, diagonal: int = 0):
        return self.xp.tril(x, diagonal)

    def triu(self, x, diagonal: int = 0):
        return self.xp.triu(x, diagonal)

    def all(self, x, dim=None, keepdim: bool = False):
        return self.xp.all(x, axis=_axes(dim, x.ndim), keepdims=keepdim)

    def prod(self, x, dim=None, keepdim: bool = False):
        return self.xp.prod(x, axis=_axes(dim, x.ndim), keepdims=keepdim)

    def detach(self, x):
        """Arrays carry no graph: ``x`` itself."""
        return x

    # --------------------------------------------------------------- activations, losses,
    # neural, normalization, convolution
    def erf(self, x):
        from ..ops.unary import _in_float64, erf_array  # the forward's own kernel

        return _in_float64(self.xp, erf_array, x)

    def softplus(self, x, beta: float = 1.0, threshold: float = 20.0):
        """``nn.functional.softplus``: ``log(1 + exp(beta x)) / beta``, linear above
        ``threshold``, without overflow."""
        xp = self.xp
        z = x * beta
        smooth = (xp.maximum(z, 0) + xp.log1p(xp.exp(-xp.abs(z)))) / beta
        return xp.where(z > threshold, x, smooth).astype(x.dtype, copy=False)

    def softmax(self, x, dim: int):
        xp = self.xp
        if x.ndim == 0:
            return xp.ones_like(x)
        peak = xp.max(x, axis=dim, keepdims=True)
        e = xp.exp(x - xp.where(xp.isfinite(peak), peak, 0))  # as the forward: -inf rows
        return e / e.sum(axis=dim, keepdims=True)

    def one_hot(self, indices, num_classes: int):
        """``nn.functional.one_hot`` (int64) of in-range indices."""
        xp = self.xp
        return (indices[..., None] == xp.arange(num_classes)).astype(xp.int64)


class TensorMath:
    """The backward namespace on Tensors: ember's own functions, recording a graph."""

    arrays = False

    def elementwise(self, formula, *args):
        """``formula(self, *args)`` with ember ops, so the formula records its graph."""
        return formula(self, *args)

    @staticmethod
    def maximum(a, b):
        """``ember.maximum``, where either side may also be a Python number."""
        return _extremum("maximum", "min", a, b)

    @staticmethod
    def minimum(a, b):
        """``ember.minimum``, where either side may also be a Python number."""
        return _extremum("minimum", "max", a, b)

    def __getattr__(self, name: str):
        import ember  # the public functions, found once by name

        function = getattr(ember, name, None)
        if function is None or not callable(function):
            raise AttributeError(f"the backward namespace has no function {name!r}")
        setattr(self, name, function)  # found once, then a plain attribute
        return function

    @staticmethod
    def sum_to_shape(grad, shape: tuple):
        gshape = grad._data.shape
        if gshape == shape or gshape == tuple(shape):
            return grad
        lead = len(gshape) - len(shape)
        dims = tuple(range(lead)) + tuple(
            i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)
        out = grad.sum(dim=dims, keepdim=True) if dims else grad
        if lead or out._data.shape != tuple(shape):
            out = out.reshape(tuple(shape))
        return out

    @staticmethod
    def expand(x, shape):
        return x.expand(tuple(shape))

    @staticmethod
    def mT(x):
        return x.transpose(-2, -1)

    @staticmethod
    def contiguous(x):
        return x.contiguous()

    @staticmethod
    def zeros(shape, like):
        return like.new_zeros(tuple(shape))

    @staticmethod
    def cast(x, like):
        return x.to(like.dtype) if x.dtype is not like.dtype else x

    # --------------------------------------------------------------- shape, indexing,
    # scatter, reductions, pooling
    @staticmethod
    def apply(function, *args):
        return function.apply(*args)

    @staticmethod
    def astype(x, dtype):
        from .. import dtypes

        target = dtypes.from_numpy(dtype)
        return x.to(target) if x.dtype is not target else x

    # --------------------------------------------------------------- sorting, norms,
    # products, matrices, decompositions, comparison
    @staticmethod
    def eye(n: int, like):
        import ember

        return ember.eye(n, dtype=like.dtype, device=like.device)

    # --------------------------------------------------------------- activations, losses,
    # neural, normalization, convolution
    @staticmethod
    def softplus(x, beta: float = 1.0, threshold: float = 20.0):
        from ..nn import functional  # registered there by the ops

        return functional.__dict__["softplus"](x, beta, threshold)

    @staticmethod
    def one_hot(indices, num_classes: int):
        from ..nn import functional

        return functional.__dict__["one_hot"](indices, num_classes)


def _extremum(name: str, bound: str, a, b):
    """``ember.<name>(a, b)`` on Tensors; against a Python number, ``clamp`` with that
    number as the ``bound`` (``maximum(x, 0)`` is ``clamp(x, min=0)``)."""
    import ember

    clamp = getattr(ember, "clamp")  # (registered by the ops at import)
    if not hasattr(b, "dtype"):
        return clamp(a, **{bound: b})
    if not hasattr(a, "dtype"):
        return clamp(b, **{bound: a})
    return getattr(ember, name)(a, b)


TENSOR_MATH = TensorMath()
_ARRAY_MATH = {np: ArrayMath(np)}


def array_math(xp) -> ArrayMath:
    """The array namespace of one array module (NumPy, or CuPy for GPU nodes)."""
    math = _ARRAY_MATH.get(xp)
    if math is None:
        math = _ARRAY_MATH[xp] = ArrayMath(xp)
    return math
