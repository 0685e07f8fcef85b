"""Unary elementwise math: neg, abs, sign, exp/log families, sqrt/rsqrt/reciprocal,
trigonometric and hyperbolic functions and their inverses, tanh/sigmoid/relu, erf/erfc/
erfinv, rounding, frac, ndtr/ndtri/log_ndtr, sinc, nan_to_num, and the erf-family array
kernels (``erf_array`` and friends) that activations also use.

Each op is one Function class (forward on arrays via ``ctx.xp``, backward with ember
ops) and one registered public function that handles argument conversion and dtype
promotion. Broadcasting is NumPy's; ``sum_to_shape`` folds gradients back.
"""
from __future__ import annotations

import math

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from ..backend.cpu import number_array
from ..return_types import result_type
from ..tensor import Tensor
from . import _samples
from ._util import dtype_not_implemented, float_operand, refuse_bool, refuse_low_precision
from .registry import NAMESPACES, Sample, register_op


# ----------------------------------------------------------------------------- unary math
class Neg(Function):
    array_backward = True
    node_name = "NegBackward0"

    @staticmethod
    def forward(ctx, x):
        if x.dtype == np.bool_:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        return -x

    @staticmethod
    def backward(ctx, grad):
        return -grad


@register_op(operators=("__neg__",), inplace=("negative_", "neg_"), methods=("neg", "negative"),
             also=("negative",), samples=_samples.unary(), fast=("unary", Neg, np.negative))
def neg(input):
    """``-input``."""
    return Neg.apply(input)


class Abs(Function):
    array_backward = True
    node_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.abs(x)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (x,) = ctx.saved_tensors
        return grad * m.sign(x)


@register_op(operators=("__abs__",), inplace=("abs_", "absolute_"), methods=("abs", "absolute"),
             also=("absolute",), samples=_samples.unary())
def abs(input):
    """``|input|``; the gradient at 0 is 0."""
    if isinstance(input, Tensor):
        refuse_bool(input, "abs")
    return Abs.apply(input)


class Sign(Function):
    array_backward = True
    node_name = "SignBackward0"

    @staticmethod
    def forward(ctx, x):
        return _sign(x)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.zeros_like(grad)  # zero, also where grad is nan or inf


def _sign(x):
    """PyTorch's sign: ``(0 < x) - (x < 0)``, so sign(nan) is 0."""
    if x.dtype == np.bool_:
        return x.copy()
    if x.dtype.kind not in "fV":
        return backend.xp_of(x).sign(x)
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


@register_op(inplace=("sign_", "sgn_"), methods=("sign", "sgn"), also=("sgn",),
             samples=_samples.unary(), gradgrad=False)
def sign(input):
    """-1, 0 or 1 by the sign of each element; the gradient is zero."""
    return Sign.apply(input)


class Exp(Function):
    array_backward = True
    node_name = "ExpBackward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.exp(x)
        ctx._to_save = (out,)  # (save_for_backward, inlined)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out


@register_op(inplace=("exp_",), methods=("exp",), samples=_samples.unary(),
             fast=("unary", Exp, np.exp))
def exp(input):
    """``e ** input``."""
    return Exp.apply(float_operand(input, "exp"))


class Log(Function):
    array_backward = True
    node_name = "LogBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.log(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / x


@register_op(inplace=("log_",), methods=("log",), samples=_samples.unary(low=0.1, high=3.0),
             fast=("unary", Log, np.log))
def log(input):
    """Natural logarithm (NaN below 0, -inf at 0, as in PyTorch)."""
    return Log.apply(float_operand(input, "log"))


class Sqrt(Function):
    array_backward = True
    node_name = "SqrtBackward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.sqrt(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad / (2 * out)


@register_op(inplace=("sqrt_",), methods=("sqrt",), samples=_samples.unary(low=0.1, high=3.0),
             fast=("unary", Sqrt, np.sqrt))
def sqrt(input):
    """Square root."""
    return Sqrt.apply(float_operand(input, "sqrt"))


class Sin(Function):
    array_backward = True
    node_name = "SinBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.sin(x)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (x,) = ctx.saved_tensors
        return grad * m.cos(x)


@register_op(inplace=("sin_",), methods=("sin",), samples=_samples.unary(),
             fast=("unary", Sin, np.sin))
def sin(input):
    """Sine (radians)."""
    return Sin.apply(float_operand(input, "sin"))


class Cos(Function):
    array_backward = True
    node_name = "CosBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.cos(x)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (x,) = ctx.saved_tensors
        return -grad * m.sin(x)


@register_op(inplace=("cos_",), methods=("cos",), samples=_samples.unary(),
             fast=("unary", Cos, np.cos))
def cos(input):
    """Cosine (radians)."""
    return Cos.apply(float_operand(input, "cos"))


class Tanh(Function):
    array_backward = True
    node_name = "TanhBackward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.tanh(x)
        ctx._to_save = (out,)  # (save_for_backward, inlined)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (out,) = ctx.saved_tensors
        return _tanh_grad(grad, out) if m.arrays else TanhGrad.apply(grad, out)


def _tanh_grad(grad, out):
    # (grad * (1 - out^2), spelled without the constant: on small arrays fetching it costs
    # as much as one of the three ufuncs)
    return grad - grad * out * out


class TanhGrad(Function):
    """tanh's backward, ``grad * (1 - out^2)``, as one op (one dispatch instead of three);
    differentiable itself, so double backward still works."""

    array_backward = True

    node_name = "TanhBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(grad, out)
        return _tanh_grad(grad, out)

    @staticmethod
    def backward(ctx, gg):
        m = ctx.math
        grad, out = ctx.saved_tensors
        need_grad, need_out = ctx.needs_input_grad
        return ((_tanh_grad(gg, out) if m.arrays else TanhGrad.apply(gg, out)) if need_grad
                else None,
                -2 * gg * grad * out if need_out else None)


@register_op(inplace=("tanh_",), methods=("tanh",), namespace="ember", samples=_samples.unary(),
             fast=("unary", Tanh, np.tanh))
def tanh(input):
    """Hyperbolic tangent."""
    return Tanh.apply(float_operand(input, "tanh"))


class Sigmoid(Function):
    array_backward = True
    node_name = "SigmoidBackward0"

    @staticmethod
    def forward(ctx, x):
        xp = ctx.xp
        # exp of -|x| never overflows: stable at |x| = 400 and beyond
        e = xp.exp(-xp.abs(x))
        out = xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (out,) = ctx.saved_tensors
        return _sigmoid_grad(grad, out) if m.arrays else SigmoidGrad.apply(grad, out)


def _sigmoid_grad(grad, out):
    return grad * out * (number_array(1, out) - out)


class SigmoidGrad(Function):
    """sigmoid's backward, ``grad * out * (1 - out)``, as one differentiable op."""

    array_backward = True

    node_name = "SigmoidBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(grad, out)
        return _sigmoid_grad(grad, out)

    @staticmethod
    def backward(ctx, gg):
        m = ctx.math
        grad, out = ctx.saved_tensors
        need_grad, need_out = ctx.needs_input_grad
        return ((_sigmoid_grad(gg, out) if m.arrays else SigmoidGrad.apply(gg, out))
                if need_grad else None,
                gg * grad * (1 - 2 * out) if need_out else None)


@register_op(inplace=("sigmoid_",), methods=("sigmoid",),
             samples=_samples.unary(low=-4.0, high=4.0), fast=("unary", Sigmoid))
def sigmoid(input):
    """``1 / (1 + exp(-input))``, computed without overflow."""
    return Sigmoid.apply(float_operand(input, "sigmoid"))


class Relu(Function):
    array_backward = True
    node_name = "ReluBackward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.maximum(x, 0).astype(x.dtype, copy=False)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (out,) = ctx.saved_tensors
        # select, not multiply: a nan or inf gradient where the slope is 0 gives 0; and,
        # as PyTorch's threshold_backward, the gradient passes unless out <= 0 (at nan too)
        return m.where(~(out <= 0), grad, 0.0) if m.arrays else ReluGrad.apply(grad, out)


class ReluGrad(Function):
    """relu's backward, 0 where ``out <= 0`` else ``grad``, as one op; its derivative
    w.r.t. ``out`` is zero almost everywhere."""

    array_backward = True

    node_name = "ThresholdBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        mask = ~(out <= 0)
        ctx.save_for_backward(mask)
        return ctx.xp.where(mask, grad, 0.0)

    @staticmethod
    def backward(ctx, gg):
        (mask,) = ctx.saved_tensors
        return (gg * mask if ctx.needs_input_grad[0] else None), None


@register_op(inplace=("relu_",), methods=("relu",), samples=_samples.unary())
def relu(input):
    """``max(input, 0)``; the gradient at 0 is 0."""
    if input.dtype is dtypes.bool:
        raise RuntimeError("relu(): bool tensors are not supported")
    return Relu.apply(input)


# ----------------------------------------------------------------------------- special kernels
# NumPy has no erf. These are array code over ``xp`` (NumPy or CuPy alike), computed in
# float64 and cast back. W. J. Cody's rational Chebyshev approximations (Math. Comp. 23,
# 1969) give erf/erfc to about 1e-16 relative; erfinv starts from M. Giles' polynomial
# ("Approximating the erfinv function", 2010) and is polished by Newton steps on erf/erfc.
_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
          3.20937758913846947e03, 1.85777706184603153e-1)
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERF_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
          2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
          2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_ERF_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
          1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
          3.43936767414372164e03, 1.23033935480374942e03)
_ERF_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
          1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_ERF_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
          6.05183413124413191e-2, 2.33520497626869185e-3)
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_INV_SQRT_PI = 0.56418958354775628695
_TWO_OVER_SQRT_PI = 1.1283791670955125739
_SQRT_PI_OVER_TWO = 0.88622692545275801365
_LN2 = 0.69314718055994530942
_LN10 = 2.30258509299404568402
_SQRT2 = 1.41421356237309504880
_SQRT_2PI = 2.50662827463100050242
_INV_SQRT_2PI = 0.39894228040143267794


def _erf_small(xp, x):
    """erf(x) = x R(x^2), valid for |x| <= 0.5."""
    z = xp.minimum(xp.abs(x), 0.5) ** 2
    num, den = _ERF_A[4] * z, z
    for a, b in zip(_ERF_A[:3], _ERF_B[:3]):
        num, den = (num + a) * z, (den + b) * z
    return x * (num + _ERF_A[3]) / (den + _ERF_B[3])


def _erfc_ratio(xp, y):
    """R(y) = erfc(y) exp(y^2) for y >= 0.5 (any larger y, inf included)."""
    m = xp.clip(y, 0.5, 4.0)  # 0.5 < y <= 4: a rational function of y
    num, den = _ERF_C[8] * m, m
    for c, d in zip(_ERF_C[:7], _ERF_D[:7]):
        num, den = (num + c) * m, (den + d) * m
    middle = (num + _ERF_C[7]) / (den + _ERF_D[7])
    big = xp.maximum(y, 4.0)  # y > 4: (1/sqrt(pi) - R(1/y^2) / y^2) / y
    t = 1.0 / (big * big)
    num, den = _ERF_P[5] * t, t
    for p, q in zip(_ERF_P[:4], _ERF_Q[:4]):
        num, den = (num + p) * t, (den + q) * t
    large = (_INV_SQRT_PI - t * (num + _ERF_P[4]) / (den + _ERF_Q[4])) / big
    return xp.where(y <= 4.0, middle, large)


def _erf_parts(xp, x):
    """For float64 ``x``: |x| (capped at 30), erf(x) for |x| <= 0.5, erfc(|x|) for
    |x| > 0.5 (each valid only on its own range)."""
    y = xp.minimum(xp.abs(x), 30.0)  # erfc(30) underflows to 0 anyway; keeps inf out
    # exp(-y^2) as exp(-s^2) exp(-(y-s)(y+s)), s = y rounded down to 1/16: keeps the
    # relative accuracy of the tiny factor
    s = xp.trunc(y * 16.0) / 16.0
    tail = xp.exp(-s * s) * xp.exp(-(y - s) * (y + s)) * _erfc_ratio(xp, y)
    return y, _erf_small(xp, x), tail


def erf_array(xp, x):
    """erf of a float64 array (NaN stays NaN, erf(+-inf) = +-1)."""
    y, small, tail = _erf_parts(xp, x)
    return xp.where(y <= 0.5, small, xp.where(x < 0, tail - 1.0, 1.0 - tail))


def erfc_array(xp, x):
    """erfc = 1 - erf of a float64 array, with full relative accuracy in the tail."""
    y, small, tail = _erf_parts(xp, x)
    out = xp.where(y <= 0.5, 1.0 - small, xp.where(x < 0, 2.0 - tail, tail))
    return xp.where(xp.isnan(x), x, out)


def _erfinv_magnitude(xp, a, complement):
    """The x >= 0 with erf(x) = a, for a in [0, 1) given with ``complement = 1 - a``
    (exact, so the far tail keeps its digits)."""
    w = -xp.log(complement * (1.0 + a))
    wc = w - 2.5
    central = _GILES_CENTRAL[0]
    for c in _GILES_CENTRAL[1:]:
        central = central * wc + c
    wt = xp.sqrt(w) - 3.0
    tail_start = _GILES_TAIL[0]
    for c in _GILES_TAIL[1:]:
        tail_start = tail_start * wt + c
    # beyond float64's erfinv range (ndtri of tiny p): erfc(x) ~ exp(-x^2) / (x sqrt(pi))
    far = xp.sqrt(xp.maximum(w - 0.5 * xp.log(xp.maximum(w, 1.0)) - 0.5724, 1.0))
    x = xp.where(w < 5.0, central * a, xp.where(w < 36.0, tail_start * a, far))
    # Newton on erf(x) = a near 0; in the tail on log erfc(x) = log(1 - a), where erfc
    # keeps its relative accuracy and the log scales the steps well
    tail = a > 0.5
    log_target = xp.log(xp.where(tail, complement, 1.0))
    for _ in range(5):
        xt = xp.where(tail, x, 1.0)
        # erfc = exp(-x^2) R(x), d/dx log erfc(x) = -2/sqrt(pi) / R(x): no underflow
        # (R's rational form holds from 0.5 on; below, erfc itself is far from underflow)
        ratio = xp.where(xt >= 0.5, _erfc_ratio(xp, xt), erfc_array(xp, xt) * xp.exp(xt * xt))
        tail_step = (xp.log(ratio) - xt * xt - log_target) * (ratio / -_TWO_OVER_SQRT_PI)
        central_step = (erf_array(xp, x) - a) / (_TWO_OVER_SQRT_PI * xp.exp(-x * x))
        x = x - xp.where(tail, tail_step, central_step)
    return x


def erfinv_array(xp, y):
    """The inverse of erf on a float64 array: +-inf at +-1, NaN outside [-1, 1]."""
    a = xp.abs(y)
    inside = a < 1.0
    a = xp.where(inside, a, 0.0)
    x = _erfinv_magnitude(xp, a, 1.0 - a)
    out = xp.where(inside, x, xp.where(xp.abs(y) == 1.0, np.inf, np.nan))
    return xp.copysign(out, y)


def ndtri_array(xp, p):
    """The standard normal quantile: ``ndtr(x) = p``; -inf at 0, inf at 1, NaN outside."""
    inside = (p > 0.0) & (p < 1.0)
    upper = p > 0.5
    # |2p - 1| = 1 - c with c = 2 min(p, 1 - p), exact in both halves
    c = xp.where(inside, xp.where(upper, 2.0 * (1.0 - p), 2.0 * p), 1.0)
    x = _erfinv_magnitude(xp, 1.0 - c, c) * _SQRT2
    out = xp.where(upper, x, -x)
    edge = xp.where(p == 0.0, -np.inf, xp.where(p == 1.0, np.inf, np.nan))
    return xp.where(inside, out, edge)


def ndtr_array(xp, x):
    """The standard normal CDF ``0.5 erfc(-x / sqrt(2))``."""
    return 0.5 * erfc_array(xp, -x / _SQRT2)


def log_ndtr_array(xp, x):
    """log of the standard normal CDF, finite far into the left tail."""
    right = xp.log1p(-0.5 * erfc_array(xp, xp.maximum(x, -1.0) / _SQRT2))
    z = -xp.minimum(x, -1.0) / _SQRT2  # >= 0.707: erfc(z) = exp(-z^2) R(z)
    left = -_LN2 - z * z + xp.log(_erfc_ratio(xp, z))
    return xp.where(x >= -1.0, right, left)


def _in_float64(xp, kernel, x, *extra):
    """Run a float64 kernel on ``x`` (and further operands, also in float64) and give the
    result in x's dtype."""
    with np.errstate(all="ignore"):
        args = [a.astype(np.float64, copy=False) for a in (x,) + extra]
        return kernel(xp, *args).astype(x.dtype, copy=False)


# ----------------------------------------------------------------------------- more unary math
def _float_unary(cls, input, op: str):
    """Integer and bool inputs of float math become the default float dtype (PyTorch)."""
    return cls.apply(float_operand(input, op))


class Reciprocal(Function):
    array_backward = True
    node_name = "ReciprocalBackward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.reciprocal(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return -grad * out * out


@register_op(inplace=("reciprocal_",), methods=("reciprocal",),
             samples=_samples.unary(low=0.5, high=2.0))
def reciprocal(input):
    """``1 / input`` (integers give the default float dtype)."""
    return _float_unary(Reciprocal, input, "reciprocal")


class Rsqrt(Function):
    array_backward = True
    node_name = "RsqrtBackward0"

    @staticmethod
    def forward(ctx, x):
        out = (1 / ctx.xp.sqrt(x)).astype(x.dtype, copy=False)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out * out * out * -0.5


@register_op(inplace=("rsqrt_",), methods=("rsqrt",), samples=_samples.unary(low=0.5, high=3.0))
def rsqrt(input):
    """``1 / sqrt(input)``."""
    return _float_unary(Rsqrt, input, "rsqrt")


class Exp2(Function):
    array_backward = True
    node_name = "Exp2Backward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.exp2(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out * _LN2


@register_op(inplace=("exp2_",), methods=("exp2",), exported_in=("special",),
             samples=_samples.unary())
def exp2(input):
    """``2 ** input``."""
    return _float_unary(Exp2, input, "exp2")


class Expm1(Function):
    array_backward = True
    node_name = "Expm1Backward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.expm1(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (out + 1)


@register_op(inplace=("expm1_",), methods=("expm1",), exported_in=("special",),
             samples=_samples.unary())
def expm1(input):
    """``exp(input) - 1``, accurate for small inputs (no cancellation)."""
    return _float_unary(Expm1, input, "expm1")


def _log_family(name: str, ufunc: str, scale: float, shift: float):
    """log2 / log10 / log1p: d/dx = 1 / ((x + shift) * scale)."""

    class LogOp(Function):
        array_backward = True
        # PyTorch's names: Log2Backward0, Log10Backward0, Log1PBackward0
        node_name = name.capitalize().replace("1p", "1P") + "Backward0"

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return getattr(ctx.xp, ufunc)(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            denominator = x if shift == 0 else x + shift
            return grad / (denominator * scale if scale != 1 else denominator)

    LogOp.__name__ = LogOp.__qualname__ = name.capitalize()
    return LogOp


Log2 = _log_family("log2", "log2", _LN2, 0.0)
Log10 = _log_family("log10", "log10", _LN10, 0.0)
Log1p = _log_family("log1p", "log1p", 1.0, 1.0)


@register_op(inplace=("log2_",), methods=("log2",), samples=_samples.unary(low=0.1, high=3.0))
def log2(input):
    """Base-2 logarithm."""
    return _float_unary(Log2, input, "log2")


@register_op(inplace=("log10_",), methods=("log10",), samples=_samples.unary(low=0.1, high=3.0))
def log10(input):
    """Base-10 logarithm."""
    return _float_unary(Log10, input, "log10")


@register_op(inplace=("log1p_",), methods=("log1p",), exported_in=("special",),
             samples=_samples.unary(low=-0.5, high=3.0))
def log1p(input):
    """``log(1 + input)``, accurate for small inputs (no cancellation)."""
    return _float_unary(Log1p, input, "log1p")


class Tan(Function):
    array_backward = True
    node_name = "TanBackward0"

    @staticmethod
    def forward(ctx, x):
        out = ctx.xp.tan(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (out * out + 1)


@register_op(inplace=("tan_",), methods=("tan",), samples=_samples.unary(low=-1.2, high=1.2))
def tan(input):
    """Tangent (radians); d/dx = 1 + tan(x)^2."""
    return _float_unary(Tan, input, "tan")


def _input_unary(name: str, ufunc: str, derivative):
    """A unary op that saves its input; backward is ``derivative(math, grad, x)``."""

    class UnaryOp(Function):
        array_backward = True
        # PyTorch's names: Log2Backward0, Log10Backward0, Log1PBackward0
        node_name = name.capitalize().replace("1p", "1P") + "Backward0"

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return getattr(ctx.xp, ufunc)(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return derivative(ctx.math, grad, x)

    UnaryOp.__name__ = UnaryOp.__qualname__ = name.capitalize()
    return UnaryOp


Asin = _input_unary("asin", "arcsin", lambda m, g, x: g * m.rsqrt(1 - x * x))
Acos = _input_unary("acos", "arccos", lambda m, g, x: -g * m.rsqrt(1 - x * x))
Atan = _input_unary("atan", "arctan", lambda m, g, x: g / (x * x + 1))
Sinh = _input_unary("sinh", "sinh", lambda m, g, x: g * m.cosh(x))
Cosh = _input_unary("cosh", "cosh", lambda m, g, x: g * m.sinh(x))
Asinh = _input_unary("asinh", "arcsinh", lambda m, g, x: g * m.rsqrt(x * x + 1))
Acosh = _input_unary("acosh", "arccosh", lambda m, g, x: g * m.rsqrt(x * x - 1))
Atanh = _input_unary("atanh", "arctanh", lambda m, g, x: g / (1 - x * x))


@register_op(inplace=("asin_", "arcsin_"), methods=("asin", "arcsin"), also=("arcsin",),
             samples=_samples.unary(low=-0.9, high=0.9))
def asin(input):
    """Inverse sine; d/dx = 1 / sqrt(1 - x^2). NaN outside [-1, 1]."""
    return _float_unary(Asin, input, "asin")


@register_op(inplace=("acos_", "arccos_"), methods=("acos", "arccos"), also=("arccos",),
             samples=_samples.unary(low=-0.9, high=0.9))
def acos(input):
    """Inverse cosine; d/dx = -1 / sqrt(1 - x^2). NaN outside [-1, 1]."""
    return _float_unary(Acos, input, "acos")


@register_op(inplace=("atan_", "arctan_"), methods=("atan", "arctan"), also=("arctan",),
             samples=_samples.unary())
def atan(input):
    """Inverse tangent; d/dx = 1 / (1 + x^2)."""
    return _float_unary(Atan, input, "atan")


@register_op(inplace=("sinh_",), methods=("sinh",), samples=_samples.unary())
def sinh(input):
    """Hyperbolic sine; d/dx = cosh(x)."""
    return _float_unary(Sinh, input, "sinh")


@register_op(inplace=("cosh_",), methods=("cosh",), samples=_samples.unary())
def cosh(input):
    """Hyperbolic cosine; d/dx = sinh(x)."""
    return _float_unary(Cosh, input, "cosh")


@register_op(inplace=("asinh_", "arcsinh_"), methods=("asinh", "arcsinh"), also=("arcsinh",),
             samples=_samples.unary())
def asinh(input):
    """Inverse hyperbolic sine; d/dx = 1 / sqrt(x^2 + 1)."""
    return _float_unary(Asinh, input, "asinh")


@register_op(inplace=("acosh_", "arccosh_"), methods=("acosh", "arccosh"), also=("arccosh",),
             samples=_samples.unary(low=1.2, high=3.0))
def acosh(input):
    """Inverse hyperbolic cosine; d/dx = 1 / sqrt(x^2 - 1). NaN below 1."""
    return _float_unary(Acosh, input, "acosh")


@register_op(inplace=("atanh_", "arctanh_"), methods=("atanh", "arctanh"), also=("arctanh",),
             samples=_samples.unary(low=-0.9, high=0.9))
def atanh(input):
    """Inverse hyperbolic tangent; d/dx = 1 / (1 - x^2). +-inf at +-1."""
    return _float_unary(Atanh, input, "atanh")


class Erf(Function):
    array_backward = True
    node_name = "ErfBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _in_float64(ctx.xp, erf_array, x)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (x,) = ctx.saved_tensors
        return grad * _TWO_OVER_SQRT_PI * m.exp(-x * x)


class Erfc(Function):
    array_backward = True
    node_name = "ErfcBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _in_float64(ctx.xp, erfc_array, x)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (x,) = ctx.saved_tensors
        return grad * -_TWO_OVER_SQRT_PI * m.exp(-x * x)


class Erfinv(Function):
    array_backward = True
    node_name = "ErfinvBackward0"

    @staticmethod
    def forward(ctx, x):
        out = _in_float64(ctx.xp, erfinv_array, x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (out,) = ctx.saved_tensors
        return grad * _SQRT_PI_OVER_TWO * m.exp(out * out)


@register_op(inplace=("erf_",), methods=("erf",), exported_in=("special",),
             samples=_samples.unary(low=-3, high=3))
def erf(input):
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``."""
    return _float_unary(Erf, input, "erf")


@register_op(inplace=("erfc_",), methods=("erfc",), exported_in=("special",),
             samples=_samples.unary(low=-3, high=3))
def erfc(input):
    """``1 - erf(input)``, with full relative accuracy for large inputs."""
    return _float_unary(Erfc, input, "erfc")


@register_op(inplace=("erfinv_",), methods=("erfinv",), exported_in=("special",),
             samples=_samples.unary(low=-0.95, high=0.95))
def erfinv(input):
    """The inverse error function: ``erf(erfinv(y)) = y`` on (-1, 1); +-inf at +-1."""
    return _float_unary(Erfinv, input, "erfinv")


def _rounding(name: str, ufunc: str):
    """floor / ceil / trunc: zero gradient (PyTorch's convention); integers pass through."""

    class RoundOp(Function):
        array_backward = True
        node_name = name.capitalize() + "Backward0"

        @staticmethod
        def forward(ctx, x):
            return getattr(ctx.xp, ufunc)(x)

        @staticmethod
        def backward(ctx, grad):
            return ctx.math.zeros_like(grad)

    RoundOp.__name__ = RoundOp.__qualname__ = name.capitalize()

    def function(input):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be a Tensor, not "
                            f"{type(input).__name__}")
        if input._data.dtype.kind not in "fV":
            refuse_bool(input, name)
            return input.clone()
        return RoundOp.apply(input)

    function.__name__ = name
    return RoundOp, function


Floor, floor = _rounding("floor", "floor")
Ceil, ceil = _rounding("ceil", "ceil")
Trunc, trunc = _rounding("trunc", "trunc")
floor.__doc__ = "The largest integer <= input, elementwise; the gradient is zero."
ceil.__doc__ = "The smallest integer >= input, elementwise; the gradient is zero."
trunc.__doc__ = "Rounds toward zero, elementwise; the gradient is zero."
register_op(methods=("floor",), inplace=("floor_",),
            samples=_samples.unary(low=-3, high=3))(floor)
register_op(methods=("ceil",), inplace=("ceil_",), samples=_samples.unary(low=-3, high=3))(ceil)
register_op(methods=("trunc", "fix"), also=("fix",), inplace=("trunc_", "fix_"),
            samples=_samples.unary(low=-3, high=3))(trunc)


class Round(Function):
    array_backward = True
    node_name = "RoundBackward0"

    @staticmethod
    def forward(ctx, x, decimals):
        if decimals == 0:
            return ctx.xp.rint(x)
        return ctx.xp.round(x, decimals)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        return m.zeros_like(grad), None


def _round_samples(make):
    return [Sample((make((3, 4), low=-3, high=3),), name="half to even"),
            Sample((make((5,), low=-3, high=3),), {"decimals": 2}, name="decimals=2"),
            Sample((make((5,), low=-300, high=300),), {"decimals": -1}, name="decimals=-1")]


@register_op(inplace=("round_",), methods=("round",), exported_in=("special",),
             samples=_round_samples)
def round(input, *, decimals=0):
    """Rounds half to even (as PyTorch), to ``decimals`` decimal places (negative: tens,
    hundreds...); the gradient is zero. Integers pass through when decimals is 0."""
    if not isinstance(input, Tensor):
        raise TypeError(f"round(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if not isinstance(decimals, (int, np.integer)) or isinstance(decimals, bool):
        raise TypeError(f"round(): argument 'decimals' must be int, not {type(decimals).__name__}")
    if input._data.dtype.kind not in "fV":
        refuse_bool(input, "round")
        if decimals != 0:
            raise dtype_not_implemented("round", input.dtype, f"decimals={decimals} needs a "
                                        "floating-point tensor: convert with .float() first")
        return input.clone()
    return Round.apply(input, int(decimals))


class Frac(Function):
    array_backward = True
    node_name = "FracBackward0"

    @staticmethod
    def forward(ctx, x):
        return x - ctx.xp.trunc(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


@register_op(inplace=("frac_",), methods=("frac",), samples=_samples.unary(low=-3, high=3))
def frac(input):
    """``input - trunc(input)``: the fractional part, with the sign of input."""
    if not isinstance(input, Tensor):
        raise TypeError(f"frac(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if input._data.dtype.kind not in "fV":
        raise dtype_not_implemented("frac", input.dtype, "frac needs a floating-point tensor: "
                                    "convert with .float() first")
    return Frac.apply(input)


class Ndtr(Function):
    array_backward = True
    node_name = "SpecialNdtrBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _in_float64(ctx.xp, ndtr_array, x)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (x,) = ctx.saved_tensors
        return grad * _INV_SQRT_2PI * m.exp(x * x * -0.5)


class Ndtri(Function):
    array_backward = True
    node_name = "SpecialNdtriBackward0"

    @staticmethod
    def forward(ctx, x):
        out = _in_float64(ctx.xp, ndtri_array, x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (out,) = ctx.saved_tensors
        return grad * _SQRT_2PI * m.exp(out * out * 0.5)


class LogNdtr(Function):
    array_backward = True
    node_name = "SpecialLogNdtrBackward0"

    @staticmethod
    def forward(ctx, x):
        out = _in_float64(ctx.xp, log_ndtr_array, x)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, out = ctx.saved_tensors
        # density / cdf = exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi): finite far to the left
        return grad * _INV_SQRT_2PI * m.exp(x * x * -0.5 - out)


@register_op("ndtr", namespace="special", samples=_samples.unary(low=-4, high=4))
def ndtr(input):
    """The standard normal CDF ``Phi(x) = (1 + erf(x / sqrt(2))) / 2``, accurate in
    both tails."""
    return _float_unary(Ndtr, input, "special.ndtr")


@register_op("ndtri", namespace="special", samples=_samples.unary(low=0.02, high=0.98))
def ndtri(input):
    """The standard normal quantile, the inverse of ndtr: -inf at 0, inf at 1, NaN
    outside [0, 1]; accurate down to p = 1e-300."""
    if isinstance(input, Tensor):
        refuse_low_precision(input, "special.ndtri")
    return _float_unary(Ndtri, input, "special.ndtri")


@register_op("log_ndtr", namespace="special", samples=_samples.unary(low=-6, high=4))
def log_ndtr(input):
    """``log(ndtr(input))``, finite far into the left tail (about -x^2/2 there)."""
    if isinstance(input, Tensor):
        refuse_low_precision(input, "special.log_ndtr")
    return _float_unary(LogNdtr, input, "special.log_ndtr")


class Sinc(Function):
    array_backward = True
    node_name = "SincBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.sinc(x)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (x,) = ctx.saved_tensors
        # d/dx sin(pi x)/(pi x) = (pi x cos(pi x) - sin(pi x)) / (pi x^2); 0 where pi x^2
        # is 0 (x = 0, or a subnormal x whose square underflows), as in PyTorch
        angle = x * math.pi
        square = angle * x
        zero = square == 0
        slope = (angle * m.cos(angle) - m.sin(angle)) / m.where(zero, 1.0, square)
        return m.where(zero, 0.0, grad * slope)


@register_op(inplace=("sinc_",), methods=("sinc",), exported_in=("special",),
             samples=_samples.unary(low=-3, high=3))
def sinc(input):
    """The normalized sinc ``sin(pi x) / (pi x)``, 1 at x = 0."""
    return _float_unary(Sinc, input, "sinc")


# ----------------------------------------------------------------------------- nan_to_num
class NanToNum(Function):
    array_backward = True
    node_name = "NanToNumBackward0"

    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        ctx.save_for_backward(x)
        if x.dtype.kind == "V":  # bfloat16, which NumPy's nan_to_num passes through as it is
            big = float(dtypes.finfo(dtypes.bfloat16).max)
            return ctx.xp.nan_to_num(x.astype(np.float32), nan=nan,
                                     posinf=big if posinf is None else posinf,
                                     neginf=-big if neginf is None else neginf).astype(x.dtype)
        return ctx.xp.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (x,) = ctx.saved_tensors
        return m.where(m.isfinite(x), grad, 0.0), None, None, None


def _nan_to_num_samples(make):
    x = make((3, 4))
    x._data[0, :3] = [np.nan, np.inf, -np.inf]
    y = make((2, 3))
    y._data[1, :3] = [-np.inf, np.nan, np.inf]
    return [Sample((x,), name="defaults"),
            Sample((y,), {"nan": 1.5, "posinf": 10.0, "neginf": -10.0}, name="values")]


@register_op(inplace=("nan_to_num_",), methods=("nan_to_num",), samples=_nan_to_num_samples)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN becomes ``nan``, +inf ``posinf`` and -inf ``neginf`` (by default the largest
    and lowest finite values of the dtype). The gradient is zero at replaced elements."""
    if not isinstance(input, Tensor):
        raise TypeError(f"nan_to_num(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if value is not None and (not isinstance(value, (int, float, np.generic))
                                  or isinstance(value, bool)):
            raise TypeError(f"nan_to_num(): argument '{name}' must be a number, not "
                            f"{type(value).__name__}")
    if input._data.dtype.kind not in "fcV":
        return input.clone()
    return NanToNum.apply(input, 0.0 if nan is None else float(nan),
                          None if posinf is None else float(posinf),
                          None if neginf is None else float(neginf))


# ----------------------------------------------------------------------------- sign bits, angle
class Signbit(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind in "fV":
            return ctx.xp.signbit(x.astype(np.float32) if x.dtype.kind == "V" else x)
        return x < 0


@register_op(methods=("signbit",), differentiable=False, samples=lambda make: [
    Sample((make((3, 4)),), name="float"), Sample((make.int((5,), -3, 3),), name="int")])
def signbit(input):
    """Whether each element's sign bit is set (True for negatives and -0.0), a bool tensor.

    >>> ember.signbit(ember.tensor([1.0, -0.0, -2.0]))
    tensor([False,  True,  True])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"signbit(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    return Signbit.apply(input)


class Angle(Function):
    """The argument of a real number: 0 for x >= 0, pi for x < 0, NaN for NaN. It is
    constant where it is differentiable, so the gradient is zero."""

    array_backward = True
    node_name = "AngleBackward0"

    @staticmethod
    def forward(ctx, x):
        xp = ctx.xp
        out = xp.where(x < 0, math.pi, 0.0).astype(x.dtype)
        return xp.where(xp.isnan(x), x, out)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.zeros_like(grad)


@register_op(methods=("angle",), samples=_samples.unary(), gradgrad=False)
def angle(input):
    """The angle of each element seen as a complex number: 0 or pi for real tensors (NaN
    stays NaN); integers give the default float dtype.

    >>> ember.angle(ember.tensor([2.0, -1.0]))
    tensor([0.0000, 3.1416])
    """
    return Angle.apply(float_operand(input, "angle"))


class FrexpExponent(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        _, exponent = ctx.xp.frexp(x.astype(np.float32) if x.dtype.kind == "V" else x)
        return exponent.astype(np.int32)


FrexpResult = result_type("frexp", ["mantissa", "exponent"])


@register_op(methods=("frexp",), samples=_samples.unary(low=-40.0, high=40.0))
def frexp(input):
    """Split each element into a mantissa in (-1, -0.5] or [0.5, 1) and an int32 exponent,
    ``input == mantissa * 2 ** exponent``. The mantissa's gradient is ``grad / 2 **
    exponent``.

    >>> ember.frexp(ember.tensor([1.5, -8.0]))
    ember.return_types.frexp(
    mantissa=tensor([ 0.7500, -0.5000]),
    exponent=tensor([1, 4], dtype=ember.int32))
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"frexp(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    if input._data.dtype.kind not in "fV":
        raise RuntimeError("frexp() only supports floating-point dtypes")
    exponent = FrexpExponent.apply(input)
    # two half-steps: 2 ** -exponent alone overflows for subnormal inputs
    half = -exponent.to(input.dtype) / 2
    power = NAMESPACES["ember"]["pow"]
    low = floor(half)
    mantissa = input * power(2.0, low) * power(2.0, 2 * half - low)
    return FrexpResult(mantissa, exponent)
