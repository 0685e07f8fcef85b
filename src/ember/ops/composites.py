"""Ops PyTorch offers that are mostly compositions of ember's ops (their gradients come from the
parts): addcmul, addcdiv, deg2rad, rad2deg, inner, float_power, adjoint, positive,
isposinf, isneginf; the functional in-place forms (``torch.exp_(x)``)."""
from __future__ import annotations

import math

from .. import dtypes
from ..autograd.function import Function
from ..creation import full_like, ones_like
from ..tensor import Tensor
from . import _samples, comparison, pooling
from ._util import (
    broadcast_error,
    dtype_not_implemented,
    ensure_tensor,
    float_operand,
    float_operands,
    integer_scalar,
    refuse_low_precision,
)
from .arithmetic import pow
from .neural import log_softmax, pairwise_distance, softmax
from .products import tensordot
from .registry import NAMESPACES, Sample, bind_method, register_op
from .shape import roll, split, stack, transpose


def _ternary(make):
    return [Sample((make((3, 4)), make((3, 4)), make((3, 4), low=0.5, high=2.0)), name="same"),
            Sample((make((2, 3, 4)), make((4,)), make((3, 1), low=0.5, high=2.0)),
                   {"value": -0.5}, name="broadcast, value")]


@register_op(inplace=("addcmul_",), methods=("addcmul",), samples=_ternary)
def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2``, elementwise with broadcasting."""
    ensure_tensor(input, "addcmul", "input")
    result = dtypes.result_type(input, tensor1, tensor2)
    if not result.is_floating_point:
        # PyTorch computes in the result dtype, value cast to it (0.5 is 0 for integers)
        if result is dtypes.bool:
            raise dtype_not_implemented("addcmul", result, "addcmul of bools: convert with "
                                        ".int() or .float() first")
        if isinstance(value, Tensor):
            value = value.item()
        value = integer_scalar(value, result.numpy)
        input, tensor1, tensor2 = (t.to(result) if isinstance(t, Tensor) else t
                                   for t in (input, tensor1, tensor2))
    return input + value * (tensor1 * tensor2)


@register_op(inplace=("addcdiv_",), methods=("addcdiv",), samples=_ternary)
def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``; integer tensor1 and tensor2 are refused, as in
    PyTorch (integer division would truncate)."""
    ensure_tensor(input, "addcdiv", "input")
    for t in (tensor1, tensor2):
        if isinstance(t, Tensor) and not t.dtype.is_floating_point:
            raise RuntimeError(
                "Integer division with addcdiv is no longer supported, and in a future "
                "release addcdiv will perform a true division of tensor1 and tensor2. The "
                "historic addcdiv behavior can be implemented as (input + value * "
                "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                "(input + value * tensor1 / tensor2) for float inputs.")
    return input + value * (tensor1 / tensor2)


def _to_float(input):
    return input if input.dtype.is_floating_point else input.to(dtypes.get_default_dtype())


@register_op(inplace=("deg2rad_",), methods=("deg2rad",), samples=_samples.unary(-200.0, 200.0))
def deg2rad(input):
    """Degrees to radians: ``input * pi / 180`` (integers give the default float dtype)."""
    ensure_tensor(input, "deg2rad", "input")
    return _to_float(input) * (math.pi / 180.0)


@register_op(inplace=("rad2deg_",), methods=("rad2deg",), samples=_samples.unary())
def rad2deg(input):
    """Radians to degrees: ``input * 180 / pi``."""
    ensure_tensor(input, "rad2deg", "input")
    return _to_float(input) * (180.0 / math.pi)


@register_op(methods=("inner",), samples=lambda make: [
    Sample((make((3,)), make((3,))), name="vectors"),
    Sample((make((2, 3)), make((4, 3))), name="matrices"),
    Sample((make(()), make((2, 3))), name="scalar")])
def inner(input, other):
    """The inner product over the last dimension: ``out[i.., j..] = sum_k input[i.., k] *
    other[j.., k]``; a 0-d operand multiplies."""
    ensure_tensor(input, "inner", "input")
    ensure_tensor(other, "inner", "other")
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, dims=([input.ndim - 1], [other.ndim - 1]))


@register_op(inplace=("float_power_",), methods=("float_power",), samples=lambda make: [
    Sample((make((3, 4), low=0.5, high=2.0), make((3, 4))), name="tensors"),
    Sample((make((3,), low=0.5, high=2.0), 2.5), name="scalar exponent")])
def float_power(input, exponent):
    """``input ** exponent`` computed in float64, whatever the operands' dtypes."""
    if not isinstance(input, Tensor):
        ensure_tensor(exponent, "float_power", "exponent")
        return pow(input, exponent.to(dtypes.float64))
    e = exponent.to(dtypes.float64) if isinstance(exponent, Tensor) else exponent
    return pow(input.to(dtypes.float64), e)


@register_op(methods=("adjoint",), samples=lambda make: [
    Sample((make((3, 4)),)), Sample((make((2, 3, 4)),), name="batched")])
def adjoint(input):
    """The conjugate transpose of the last two dims; for real tensors a transpose view."""
    ensure_tensor(input, "adjoint", "input")
    if input.ndim < 2:
        raise RuntimeError("adjoint() is only supported for matrices and batches of matrices")
    return transpose(input, -2, -1)


@register_op(methods=("positive",), samples=_samples.unary())
def positive(input):
    """``+input``: the input itself; bool tensors are refused, as in PyTorch."""
    ensure_tensor(input, "positive", "input")
    if input.dtype is dtypes.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@register_op(methods=("isposinf",), differentiable=False, samples=lambda make: [
    Sample((make((3, 4), requires_grad=False) / 0.0,), name="infinities"),
    Sample((make.int((4,), -3, 3),), name="integers")])
def isposinf(input):
    """True where input is +inf."""
    ensure_tensor(input, "isposinf", "input")
    return input == math.inf


@register_op(methods=("isneginf",), differentiable=False, samples=lambda make: [
    Sample((make((3, 4), requires_grad=False) / 0.0,), name="infinities"),
    Sample((make.int((4,), -3, 3),), name="integers")])
def isneginf(input):
    """True where input is -inf."""
    ensure_tensor(input, "isneginf", "input")
    return input == -math.inf






def _functional_inplace(name: str):
    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be Tensor, not "
                            f"{type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = name
    function.__doc__ = f"``input.{name}(...)``: the in-place form, as a function."
    return function


# torch.exp_(x) and friends: the Tensor methods as functions
for _name in ("abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
              "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_",
              "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_",
              "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_",
              "floor_", "frac_", "gcd_", "index_put_", "lcm_", "log10_", "log1p_", "log2_",
              "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_",
              "reciprocal_", "resize_as_", "round_", "rsqrt_", "sin_", "sinc_", "sinh_",
              "sqrt_", "square_", "tan_", "trunc_", "xlogy_", "zero_"):
    if hasattr(Tensor, _name) and _name not in NAMESPACES["ember"]:
        NAMESPACES["ember"][_name] = _functional_inplace(_name)


def _shift_dims(input, dim, what):
    ensure_tensor(input, what, "input")
    if dim is None:
        return tuple(range(input.ndim))
    return (dim,) if isinstance(dim, int) else tuple(dim)


@register_op(namespace="fft", samples=lambda make: [
    Sample((make((3, 4)),)), Sample((make((5, 2)),), {"dim": 0}, name="dim 0"),
    Sample((make((2, 3, 5)),), {"dim": (-1, 1)}, name="two dims")])
def fftshift(input, dim=None):
    """Move the zero-frequency term to the center: a roll by ``n // 2`` along ``dim`` (all
    dims by default)."""
    dims = _shift_dims(input, dim, "fft.fftshift")
    if not dims:
        return input
    return roll(input, tuple(input.shape[d] // 2 for d in dims), dims)


@register_op(namespace="fft", samples=lambda make: [
    Sample((make((3, 4)),)), Sample((make((5, 2)),), {"dim": 0}, name="dim 0"),
    Sample((make((2, 3, 5)),), {"dim": (-1, 1)}, name="two dims")])
def ifftshift(input, dim=None):
    """The inverse of ``fftshift``: a roll by ``-(n // 2)`` along ``dim``."""
    dims = _shift_dims(input, dim, "fft.ifftshift")
    if not dims:
        return input
    return roll(input, tuple(-(input.shape[d] // 2) for d in dims), dims)


# ------------------------------------------------------------------------------- linalg
def _prod(shape) -> int:
    return math.prod(int(s) for s in shape)


@register_op(namespace="linalg", samples=lambda make: [
    Sample((make((4,)),)), Sample((make((2, 3)),), {"N": 4}, name="batched, N=4"),
    Sample((make((3,)),), {"N": 2}, name="N=2")])
def vander(x, N=None):
    """The Vandermonde matrix of ``x`` (shape (*, n)): columns ``x ** 0, ..., x ** (N - 1)``
    (N defaults to n), shape (*, n, N)."""
    ensure_tensor(x, "linalg.vander", "x")
    if x.ndim == 0:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x._data.dtype.kind == "b" or x._data.dtype.itemsize == 2 and x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {x.dtype.scalar_name} (convert with .float())")
    if not x.dtype.is_floating_point:  # integer powers in int64, as in PyTorch
        x = x.to(dtypes.int64)
    columns = [ones_like(x)]
    for _ in range(n - 1):
        columns.append(columns[-1] * x)       # products, not pow: exact gradients at 0
    return stack(columns, dim=-1)


@register_op(namespace="linalg", atol=1e-6, samples=lambda make: [
    Sample((make((4, 2, 2)) + 3 * _identity_like(make, (4, 4)).reshape(4, 2, 2),),
           {"ind": 1}, name="4x(2x2)"),
    Sample((make((2, 3, 6)) + 3 * _identity_like(make, (6, 6)).reshape(2, 3, 6),),
           {"ind": 2}, name="(2x3)x6")])
def tensorinv(A, ind=2):
    """The inverse of ``A`` seen as a matrix of its first ``ind`` dims by the rest: the
    result has shape ``A.shape[ind:] + A.shape[:ind]``."""
    ensure_tensor(A, "linalg.tensorinv", "A")
    if ind <= 0:
        raise RuntimeError(f"linalg.tensorinv: Expected a strictly positive integer for "
                           f"'ind', but got {ind}")
    rows, cols = _prod(A.shape[:ind]), _prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"linalg.tensorinv: Expected self to satisfy the requirement "
                           f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got "
                           f"{cols} != {rows}")
    inverse = NAMESPACES["linalg"]["inv"](A.reshape(rows, cols))
    return inverse.reshape(*A.shape[ind:], *A.shape[:ind])


@register_op(namespace="linalg", atol=1e-6, samples=lambda make: [
    Sample((make((2, 3, 6)) + 3 * _identity_like(make, (6, 6)).reshape(2, 3, 6),
            make((2, 3))), name="(2x3)x6"),
    Sample((make((6, 2, 3)) + 3 * _identity_like(make, (6, 6)).reshape(6, 2, 3),
            make((2, 3))), {"dims": (0,)}, name="dims=(0,)")])
def tensorsolve(A, B, dims=None):
    """The ``X`` with ``tensordot(A, X, X.ndim) == B``; ``dims`` first moves those dims of
    ``A`` to the end. X has shape ``A.shape[B.ndim:]``."""
    ensure_tensor(A, "linalg.tensorsolve", "A")
    ensure_tensor(B, "linalg.tensorsolve", "B")
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        order = [d for d in range(A.ndim) if d not in dims] + dims
        A = A.permute(*order)
    rows, result_shape = B.numel(), tuple(A.shape[B.ndim:])
    if _prod(A.shape[:B.ndim]) != rows or _prod(result_shape) != rows:
        raise RuntimeError("linalg.tensorsolve: Expected self to satisfy the requirement "
                           "prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
                           f"but got shapes {list(A.shape)} and {list(B.shape)}")
    x = NAMESPACES["linalg"]["solve"](A.reshape(rows, rows), B.reshape(rows))
    return x.reshape(*result_shape)


def _identity_like(make, shape):
    eye = make(shape, requires_grad=False) * 0
    n = shape[0]
    for i in range(n):
        eye[i, i] = 1.0
    return eye


# ------------------------------------------------------------------------------ special
NAMESPACES["special"]["softmax"] = softmax
NAMESPACES["special"]["log_softmax"] = log_softmax


class Xlog1py(Function):
    array_backward = True
    node_name = "SpecialXlog1PyBackward0"

    @staticmethod
    def forward(ctx, a, b):
        xp = ctx.xp
        ctx.save_for_backward(a, b)
        ctx.shapes = (a.shape, b.shape)
        zero = (a == 0) & ~xp.isnan(b)  # 0 * log1p(y) is 0 for every y but NaN
        return xp.where(zero, 0, a * xp.log1p(xp.where(zero, 0, b))).astype(a.dtype,
                                                                            copy=False)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if need_a:
            # PyTorch's: xlog1py(grad, y), and 0 where x == 0 and y <= -1
            zero = ((grad == 0) & (b == b)) | ((a == 0) & (b <= -1))
            grad_a = m.sum_to_shape(m.where(zero, 0.0, grad * m.log1p(b)), ctx.shapes[0])
        if need_b:
            grad_b = m.sum_to_shape(grad * a / (b + 1), ctx.shapes[1])
        return grad_a, grad_b


@register_op(namespace="special", samples=_samples.binary(0.1, 2.0, -0.5, 2.0,
                                                                scalars=(0.5, 2.5)))
def xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN); at
    ``input == 0`` its gradient is ``log1p(other)`` (0 where ``other <= -1``).

    >>> ember.special.xlog1py(ember.tensor([0.0, 2.0]), ember.tensor([-1.0, 1.0]))
    tensor([0.0000, 1.3863])
    """
    if not isinstance(input, Tensor):
        ensure_tensor(other, "special.xlog1py", "other")
        input = full_like(_to_float(other), input)
    elif not isinstance(other, Tensor):
        other = full_like(_to_float(input), other)
    a, b = float_operands(input, other, "special.xlog1py")
    try:
        return Xlog1py.apply(a, b)
    except ValueError:
        raise broadcast_error("special.xlog1py", a.shape, b.shape) from None


class Entr(Function):
    array_backward = True
    node_name = "SpecialEntrBackward0"

    @staticmethod
    def forward(ctx, x):
        xp = ctx.xp
        ctx.save_for_backward(x)
        safe = xp.where(x > 0, x, 1)
        value = xp.where(x > 0, -x * xp.log(safe), x * 0)      # 0 at 0, NaN stays NaN
        return xp.where(x < 0, -math.inf, value).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        m = ctx.math
        return grad * -(m.log(x) + 1)          # +inf at 0 and NaN below, as PyTorch


@register_op(namespace="special", samples=_samples.unary(0.1, 3.0))
def entr(input):
    """The elementwise entropy ``-x ln x``: 0 at 0, -inf below 0, NaN for NaN."""
    return Entr.apply(float_operand(input, "special.entr"))


# ---------------------------------------------------------------- orthogonal polynomials
def _polynomial(what, x, n, first, step):
    """Evaluate a three-term recurrence p_{k+1} = step(k, x, p_{k-1}, p_k) from p_0 = 1 and
    p_1 = first(x) at the (integer-truncated) degrees ``n``; 0 where n < 0."""
    if not isinstance(x, Tensor) and not isinstance(n, Tensor):
        raise TypeError(f"{what}(): expected at least one Tensor argument")
    like = x if isinstance(x, Tensor) else n
    result = dtypes.result_type(x, n)
    if result.is_floating_point and result.itemsize == 2:
        raise dtype_not_implemented(what, result, "the polynomials compute in float32 or "
                                    "float64: convert with .float() first")
    x = _to_float(x if isinstance(x, Tensor) else full_like(_to_float(like), x))
    n = n if isinstance(n, Tensor) else full_like(x, n)
    if n.dtype.is_floating_point:
        n = n.trunc()
    x, n = x * ones_like(n).to(x.dtype), n * ones_like(x).to(n.dtype)  # broadcast both
    top = int(n.max().item()) if n.numel() else -1
    prev, cur = ones_like(x), first(x)
    result = comparison.where(n == 0, prev, x * 0)
    for k in range(1, top + 1):
        result = comparison.where(n == k, cur, result)
        prev, cur = cur, step(k, x, prev, cur)
    return comparison.where(n < 0, x * 0, result)


def _chebyshev(first, shifted=False):
    def evaluate(what, x, n):
        if shifted:
            x = _to_float(x) * 2 - 1 if isinstance(x, Tensor) else 2 * x - 1
        return _polynomial(what, x, n, first, lambda k, x, p, c: 2 * x * c - p)
    return evaluate


_POLYNOMIALS = {
    "chebyshev_polynomial_t": _chebyshev(lambda x: x),
    "chebyshev_polynomial_u": _chebyshev(lambda x: 2 * x),
    "chebyshev_polynomial_v": _chebyshev(lambda x: 2 * x - 1),
    "chebyshev_polynomial_w": _chebyshev(lambda x: 2 * x + 1),
    "shifted_chebyshev_polynomial_t": _chebyshev(lambda x: x, shifted=True),
    "shifted_chebyshev_polynomial_u": _chebyshev(lambda x: 2 * x, shifted=True),
    "shifted_chebyshev_polynomial_v": _chebyshev(lambda x: 2 * x - 1, shifted=True),
    "shifted_chebyshev_polynomial_w": _chebyshev(lambda x: 2 * x + 1, shifted=True),
    "hermite_polynomial_h": lambda what, x, n: _polynomial(
        what, x, n, lambda x: 2 * x, lambda k, x, p, c: 2 * x * c - 2 * k * p),
    "hermite_polynomial_he": lambda what, x, n: _polynomial(
        what, x, n, lambda x: x, lambda k, x, p, c: x * c - k * p),
    "laguerre_polynomial_l": lambda what, x, n: _polynomial(
        what, x, n, lambda x: 1 - x, lambda k, x, p, c: ((2 * k + 1 - x) * c - k * p) / (k + 1)),
    "legendre_polynomial_p": lambda what, x, n: _polynomial(
        what, x, n, lambda x: x, lambda k, x, p, c: ((2 * k + 1) * x * c - k * p) / (k + 1)),
}


def _polynomial_samples(make):
    return [Sample((make((3, 4), low=-1.0, high=1.0, requires_grad=False), 3), name="n=3"),
            Sample((make((5,), low=-1.0, high=1.0, requires_grad=False),
                    make.int((5,), -1, 6)), name="n tensor"),
            Sample((make((2, 1), requires_grad=False), make.int((1, 3), 0, 4)),
                   name="broadcast")]


def _register_polynomial(name, evaluate):
    def function(input, n):
        return evaluate(f"special.{name}", input, n)

    function.__name__ = name
    function.__doc__ = (f"The {name.replace('_', ' ')} of degree ``n`` (truncated to an "
                        "integer; 0 where n < 0) at ``input``, by its three-term recurrence.")
    register_op(name, namespace="special", differentiable=False,
                samples=_polynomial_samples)(function)


for _name, _evaluate in _POLYNOMIALS.items():
    _register_polynomial(_name, _evaluate)


# ------------------------------------------------------------------ nn.functional forms
_FN = "nn.functional"


def _with_indices(pool, dims):
    if "adaptive" in pool.__name__:
        def function(input, output_size, return_indices=False):
            return pool(input, output_size, return_indices=True)
    else:
        def function(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                     return_indices=False):
            return pool(input, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices=True)
    function.__name__ = pool.__name__ + "_with_indices"
    function.__doc__ = f"``{pool.__name__}(..., return_indices=True)``: (output, indices)."
    if "adaptive" in pool.__name__:
        samples = [Sample((None, 2)), Sample((None, (3,) * dims), name="size 3")]
    else:
        samples = [Sample((None, 2)), Sample((None, 3, 2, 1), name="k3 s2 p1")]
    shape = (2, 3) + (5,) * dims

    def make_samples(make):
        return [Sample((make(shape),) + s.args[1:], s.kwargs, s.name) for s in samples]
    register_op(namespace=_FN, samples=make_samples)(function)


for _pool, _dims in ((pooling.max_pool1d, 1), (pooling.max_pool2d, 2), (pooling.max_pool3d, 3),
                     (pooling.adaptive_max_pool1d, 1), (pooling.adaptive_max_pool2d, 2),
                     (pooling.adaptive_max_pool3d, 3)):
    _with_indices(_pool, _dims)


@register_op(namespace=_FN, torch=None, samples=lambda make: [
    Sample((make((1, 2, 3, 3)),), {"scale_factor": 2}, name="scale 2"),
    Sample((make((1, 2, 4)),), {"size": 6, "mode": "linear"}, name="linear")])
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated spelling of ``interpolate`` (same arguments)."""
    return pooling.interpolate(input, size, scale_factor, mode, align_corners)


@register_op(namespace=_FN, torch=None, samples=lambda make: [
    Sample((make((1, 2, 3, 3)),), {"scale_factor": 2})])
def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode="nearest")``."""
    return pooling.interpolate(input, size, scale_factor, mode="nearest")


@register_op(namespace=_FN, torch=None, samples=lambda make: [
    Sample((make((1, 2, 3, 3)),), {"size": (5, 4)})])
def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode="bilinear",
    align_corners=True)``."""
    return pooling.interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


@register_op(namespace=_FN, also=("native_channel_shuffle",), samples=lambda make: [
    Sample((make((1, 4, 2, 2)), 2)), Sample((make((2, 6, 3)), 3), name="1-d, 3 groups")])
def channel_shuffle(input, groups):
    """Split the channels (dim 1) into ``groups`` and interleave them:
    (N, g * k, ...) -> (N, k * g, ...)."""
    ensure_tensor(input, "channel_shuffle", "input")
    if input.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with sizes {list(input.shape)}")
    if groups <= 0 or input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got "
                           f"{input.shape[1]} channels and {groups} groups.")
    return ChannelShuffle.apply(input, int(groups))


class ChannelShuffle(Function):
    """One node, as PyTorch's; its backward is the inverse shuffle (groups and the group
    size swapped), which is a shuffle too, so gradients of gradients come for free."""

    array_backward = True
    node_name = "ChannelShuffleBackward0"

    @staticmethod
    def forward(ctx, x, groups):
        ctx.groups = groups
        return _shuffle(x, groups)

    @staticmethod
    def backward(ctx, grad):
        inverse = grad.shape[1] // ctx.groups
        if ctx.math.arrays:
            return _shuffle(grad, inverse), None
        return ChannelShuffle.apply(grad, inverse), None  # (recorded: a graph of the backward)


def _shuffle(x, groups):
    """(N, g * k, ...) arrays -> (N, k * g, ...): the channels of the g groups interleaved."""
    n, c = x.shape[0], x.shape[1]
    rest = tuple(x.shape[2:])
    return x.reshape((n, groups, c // groups) + rest).swapaxes(1, 2).reshape((n, c) + rest)


@register_op(namespace=_FN, samples=lambda make: [
    Sample((make((4, 3)),)), Sample((make((5, 2)),), {"p": 1.0}, name="p=1")])
def pdist(input, p=2):
    """The p-norm distances between all pairs of rows of an (N, M) input: the upper
    triangle of the distance matrix, row by row, as N * (N - 1) / 2 values."""
    ensure_tensor(input, "pdist", "input")
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"pdist only supports floating-point dtypes, got "
                           f"{input.dtype.scalar_name}")
    refuse_low_precision(input, "pdist")
    if not p >= 0:  # NaN fails too, as in PyTorch
        raise RuntimeError(f"pdist only supports non-negative p values, got p={p}")
    n = input.shape[0]
    rows, cols = NAMESPACES["ember"]["triu_indices"](n, n, 1, device=input.device)
    diff = input[rows] - input[cols]
    return NAMESPACES["linalg"]["vector_norm"](diff, p, dim=-1)


@register_op(namespace=_FN, samples=lambda make: [
    Sample((make((4, 3)), make((4, 3)), make((4, 3)))),
    Sample((make((4, 3)), make((4, 3)), make((4, 3))), {"swap": True, "margin": 0.5,
                                                       "reduction": "sum"}, name="swap")])
def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with any distance ``d`` (default
    ``pairwise_distance``); ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative
    distance."""
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: margin must be greater than 0, "
                         f"got {margin}")
    d = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = d(anchor, positive), d(anchor, negative)
    if swap:
        d_neg = NAMESPACES["ember"]["minimum"](d_neg, d(positive, negative))
    loss = NAMESPACES["ember"]["clamp_min"](margin + d_pos - d_neg, 0.0)  # PyTorch's order
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


# ------------------------------------------------------------------ small Tensor queries
def is_nonzero(input) -> bool:
    """Whether a one-element tensor is nonzero (ambiguous for more or fewer elements)."""
    ensure_tensor(input, "is_nonzero", "input")
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


def is_same_size(input, other) -> bool:
    """Whether two tensors have the same shape."""
    ensure_tensor(input, "is_same_size", "input")
    ensure_tensor(other, "is_same_size", "other")
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input) -> bool:
    """Whether the tensor's dtype is signed (floats and signed integers)."""
    ensure_tensor(input, "is_signed", "input")
    return bool(input.dtype.is_signed)


for _query in (is_nonzero, is_same_size, is_signed):
    NAMESPACES["ember"][_query.__name__] = _query
    bind_method(_query.__name__, _query)


@register_op(methods=("sum_to_size",), torch=lambda torch, x, *size: x.sum_to_size(*size),
             samples=lambda make: [Sample((make((2, 3, 4)), 3, 1)),
                                   Sample((make((2, 3)), (1, 3)), name="tuple"),
                                   Sample((make((2, 3)), 2, 3), name="same")])
def sum_to_size(input, *size):
    """Sum ``input`` down to ``size``, a shape it broadcasts from (the adjoint of
    ``expand``)."""
    ensure_tensor(input, "sum_to_size", "input")
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) \
        else tuple(size)
    lead = input.ndim - len(shape)
    if lead < 0 or any(s not in (1, d) for s, d in zip(shape, input.shape[lead:])):
        raise RuntimeError(f"size {{{', '.join(map(str, shape))}}} is not expandable to size "
                           f"{{{', '.join(map(str, input.shape))}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and input.shape[lead + i] != 1)
    out = input.sum(dim=dims, keepdim=True) if dims else input
    return out.reshape(*shape)


def _split_with_sizes(self, split_sizes, dim=0):
    if sum(split_sizes) != self.shape[dim]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{self.shape[dim]} (input tensor's size at dimension {dim}), but "
                           f"got split_sizes={list(split_sizes)}")
    return split(self, list(split_sizes), dim)


bind_method("split_with_sizes", _split_with_sizes)
