"""Activation functions, as ``ember.nn.functional`` offers them (and ``ember.selu`` & co
where PyTorch has a ``torch.<name>`` too).

Each op is one Function class (forward on arrays via ``ctx.xp``, backward written once
against ``ctx.math``, so it runs on arrays and, under ``create_graph``, on Tensors) and one
registered public function. The elementwise steps of forward and backward are formulas
(``elementwise_formula``): plain NumPy calls on the CPU, one fused kernel on CUDA. In-place forms
(``inplace=True``, ``relu_``, ``elu_``...) go through ``ember.tensor.apply_inplace``: the same
out-of-place op, written back into the input's memory.
"""
from __future__ import annotations

import math

import numpy as np

from .. import backend, dtypes
from ..autograd.backward_math import array_math, elementwise_formula
from ..autograd.function import Function
from ..tensor import Tensor, apply_inplace
from ._util import dtype_not_implemented, float_operand, integer_scalar, wrap_dim
from .comparison import clamp as _clamp
from .comparison import where
from .registry import NAMESPACES, Sample, register_op
from .unary import relu as _relu
from .unary import sigmoid, tanh

_F = "nn.functional"
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_CUBIC = 0.044715
_SQRT_HALF = math.sqrt(0.5)


def _float_input(input, op: str) -> Tensor:
    """Activations take floating-point tensors; PyTorch raises for integer ones."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if input._data.dtype.kind not in "fV":
        raise dtype_not_implemented(op, input.dtype, f"{op} needs a floating-point tensor: "
                                    "convert with .float() first")
    return input


def _integer_input(input, op: str) -> bool:
    """Whether input is an integer tensor, which the clamping activations (hardtanh, relu6,
    threshold) take as PyTorch does; bools are refused."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    kind = input._data.dtype.kind
    if kind == "b":
        if op == "threshold":
            _float_input(input, op)
        raise RuntimeError(f"Bool inputs not supported for hardtanh ({op}(): convert with "
                           ".int() or .float() first)")
    return kind in "iu"


def _maybe_inplace(function, input, inplace: bool, *args):
    """``function(input, *args)``, written back into input when ``inplace``."""
    if inplace:
        return apply_inplace(input, function, *args)
    return function(input, *args)


def _number(value, op: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.generic)):
        raise TypeError(f"{op}(): argument '{name}' must be a number, not "
                        f"{type(value).__name__}")
    return float(value)


def _stable_softplus(m, z):
    """``log(1 + exp(z))`` for any z: max(z, 0) + log1p(exp(-|z|)) never overflows."""
    return m.maximum(z, 0) + m.log1p(m.exp(-m.abs(z)))


def _samples_in(low, high, extra=()):
    """A matrix, a 0-d tensor and a 3-D tensor in [low, high), plus keyword variants."""
    def samples(make):
        out = [Sample((make((3, 4), low=low, high=high),), name="matrix"),
               Sample((make((), low=low, high=high),), name="0-d"),
               Sample((make((2, 1, 3), low=low, high=high),), name="3-d")]
        for kwargs in extra:
            out.append(Sample((make((5,), low=low, high=high),), dict(kwargs),
                              name=", ".join(f"{k}={v}" for k, v in kwargs.items())))
        return out
    return samples


# ----------------------------------------------------------------------------- relu family
def _relu_inplace(input):
    """``relu`` written into input; returns input."""
    return apply_inplace(input, _relu)


@register_op(namespace=_F, samples=lambda make: [Sample((make((3, 4)),))])
def relu(input, inplace: bool = False):
    """``max(input, 0)``; the gradient at 0 is 0. ``inplace=True`` overwrites input."""
    return _maybe_inplace(_relu, input, inplace)


NAMESPACES["ember"]["relu_"] = _relu_inplace
NAMESPACES[_F]["relu_"] = _relu_inplace
# sigmoid and tanh have the same signature in both namespaces
NAMESPACES[_F]["sigmoid"] = NAMESPACES["ember"]["sigmoid"]
NAMESPACES[_F]["tanh"] = NAMESPACES["ember"]["tanh"]
NAMESPACES["special"]["expit"] = NAMESPACES["ember"]["sigmoid"]  # with out=


class Hardtanh(Function):
    """Clamp to [min_val, max_val]; the gradient passes strictly inside (PyTorch)."""

    array_backward = True
    node_name = "HardtanhBackward0"

    @staticmethod
    def forward(ctx, x, min_val, max_val):
        out = array_math(ctx.xp).elementwise(_hardtanh_values, x, min_val, max_val)
        # the output is enough to find the interior (and survives in-place use)
        ctx.save_for_backward(out)
        ctx.bounds = (min_val, max_val)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        low, high = ctx.bounds
        return ctx.math.elementwise(_hardtanh_grad, grad, out, low, high), None, None


@elementwise_formula
def _hardtanh_values(m, x, low, high):
    return m.cast(m.minimum(m.maximum(x, low), high), x)


@elementwise_formula
def _hardtanh_grad(m, grad, out, low, high):
    return m.cast(m.where((out > low) & (out < high), grad, 0.0), grad)


def _hardtanh(input, min_val, max_val):
    return Hardtanh.apply(input, min_val, max_val)


@register_op(namespace=_F, samples=_samples_in(-2.0, 2.0, ({"min_val": -0.5, "max_val": 1.5},)))
def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """``clamp(input, min_val, max_val)``; the gradient is 1 strictly between the bounds."""
    integer = _integer_input(input, "hardtanh")
    low, high = _number(min_val, "hardtanh", "min_val"), _number(max_val, "hardtanh", "max_val")
    if low > high:
        raise ValueError(f"hardtanh(): min_val ({low}) cannot be greater than max_val "
                         f"({high})")
    if integer:
        return _integer_hardtanh(input, inplace, min_val, max_val)
    return _maybe_inplace(_hardtanh, input, inplace, low, high)


def _integer_hardtanh(input, inplace, min_val, max_val):
    """hardtanh of an integer tensor: a clamp with the bounds cast (truncated) to integers."""
    if input._data.dtype.kind == "u" and min(min_val, max_val) < 0:
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    dtype = input._data.dtype
    return _maybe_inplace(_clamp, input, inplace, integer_scalar(min_val, dtype),
                          integer_scalar(max_val, dtype))


@register_op(namespace=_F, samples=_samples_in(-2.0, 8.0))
def relu6(input, inplace: bool = False):
    """``min(max(input, 0), 6)`` (hardtanh with bounds 0 and 6)."""
    if _integer_input(input, "relu6"):
        return _integer_hardtanh(input, inplace, 0, 6)
    return _maybe_inplace(_hardtanh, input, inplace, 0.0, 6.0)


class LeakyRelu(Function):
    array_backward = True
    node_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx, x, negative_slope):
        ctx.save_for_backward(x)
        ctx.slope = negative_slope
        return array_math(ctx.xp).elementwise(_leaky_relu_values, x, negative_slope)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return ctx.math.elementwise(_leaky_relu_grad, grad, x, ctx.slope), None


@elementwise_formula
def _leaky_relu_values(m, x, slope):
    return m.cast(m.where(x > 0, x, x * slope), x)


@elementwise_formula
def _leaky_relu_grad(m, grad, x, slope):
    return m.cast(m.where(x > 0, grad, grad * slope), grad)


def _leaky_relu(input, negative_slope):
    return LeakyRelu.apply(input, negative_slope)


@register_op(namespace=_F, samples=_samples_in(-2.0, 2.0, ({"negative_slope": 0.2},
                                                           {"negative_slope": -0.5})))
def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """``input`` where positive, ``negative_slope * input`` elsewhere."""
    _float_input(input, "leaky_relu")
    slope = _number(negative_slope, "leaky_relu", "negative_slope")
    return _maybe_inplace(_leaky_relu, input, inplace, slope)


class Elu(Function):
    """``scale * (x if x > 0 else alpha * (exp(input_scale * x) - 1))``: elu, selu, celu."""

    array_backward = True
    node_name = "EluBackward0"

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        ctx.save_for_backward(x)
        ctx.constants = (alpha, scale, input_scale)
        return array_math(ctx.xp).elementwise(_elu_values, x, alpha, scale, input_scale)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        alpha, scale, input_scale = ctx.constants
        # the constants multiplied here, in Python: inside a fused kernel a product of two
        # scalar arguments would no longer be a weak scalar
        return ctx.math.elementwise(_elu_grad, grad, x, scale, scale * alpha * input_scale,
                                    input_scale), None, None, None


@elementwise_formula
def _elu_values(m, x, alpha, scale, input_scale):
    negative = alpha * m.expm1(m.minimum(x, 0) * input_scale)
    return m.cast(scale * m.where(x > 0, x, negative), x)


@elementwise_formula
def _elu_grad(m, grad, x, scale, negative_slope, input_scale):
    negative = grad * negative_slope * m.exp(x * input_scale)
    return m.cast(m.where(x > 0, grad * scale, negative), grad)


def _elu(input, alpha, scale=1.0, input_scale=1.0):
    return Elu.apply(input, alpha, scale, input_scale)


@register_op(namespace=_F, samples=_samples_in(-3.0, 2.0, ({"alpha": 0.5},)))
def elu(input, alpha: float = 1.0, inplace: bool = False):
    """``input`` where positive, ``alpha * (exp(input) - 1)`` elsewhere."""
    _float_input(input, "elu")
    return _maybe_inplace(_elu, input, inplace, _number(alpha, "elu", "alpha"))


@register_op(namespace=_F, exported_in=("ember",), samples=_samples_in(-3.0, 2.0))
def selu(input, inplace: bool = False):
    """``scale * elu(input, alpha)`` with the self-normalizing constants
    alpha = 1.6732632..., scale = 1.0507009..."""
    _float_input(input, "selu")
    return _maybe_inplace(_elu, input, inplace, _SELU_ALPHA, _SELU_SCALE)


@register_op(namespace=_F, exported_in=("ember",),
             samples=_samples_in(-3.0, 2.0, ({"alpha": 2.0},)))
def celu(input, alpha: float = 1.0, inplace: bool = False):
    """``max(0, input) + min(0, alpha * (exp(input / alpha) - 1))``."""
    _float_input(input, "celu")
    alpha = _number(alpha, "celu", "alpha")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu(): alpha cannot be 0 (the input is "
                           "divided by alpha)")
    return _maybe_inplace(_celu, input, inplace, alpha, 1.0, 1.0 / alpha)


class Celu(Elu):
    node_name = "CeluBackward0"


def _celu(input, alpha, scale=1.0, input_scale=1.0):
    return Celu.apply(input, alpha, scale, input_scale)


def _inplace_form(name: str, function, namespaces):
    def inplace_function(input, *args, **kwargs):
        return function(input, *args, inplace=True, **kwargs)

    inplace_function.__name__ = name
    inplace_function.__doc__ = f"In-place ``{function.__name__}``: overwrites input, returns it."
    for namespace in namespaces:
        NAMESPACES[namespace][name] = inplace_function
    return inplace_function


_inplace_form("leaky_relu_", leaky_relu, (_F,))
_inplace_form("elu_", elu, (_F,))
_inplace_form("selu_", selu, (_F, "ember"))
_inplace_form("celu_", celu, (_F, "ember"))
_inplace_form("hardtanh_", hardtanh, (_F,))


class Threshold(Function):
    array_backward = True
    node_name = "ThresholdBackward0"

    @staticmethod
    def forward(ctx, x, threshold, value):
        ctx.save_for_backward(x)
        ctx.threshold = threshold
        return array_math(ctx.xp).elementwise(_threshold_values, x, threshold, value)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return ctx.math.elementwise(_threshold_grad, grad, x, ctx.threshold), None, None


@elementwise_formula
def _threshold_values(m, x, threshold, value):
    return m.cast(m.where(x > threshold, x, value), x)


@elementwise_formula
def _threshold_grad(m, grad, x, threshold):
    return m.cast(m.where(x > threshold, grad, 0.0), grad)


def _threshold(input, threshold, value):
    return Threshold.apply(input, threshold, value)


@register_op(namespace=_F, exported_in=("ember",),
             samples=lambda make: [Sample((make((3, 4)), 0.5, -2.0), name="matrix"),
                                   Sample((make((2, 1, 3)), -0.3, 0.0), name="3-d")])
def threshold(input, threshold: float, value: float, inplace: bool = False):
    """``input`` where ``input > threshold``, else ``value``."""
    integer = _integer_input(input, "threshold")
    numbers = _number(threshold, "threshold", "threshold"), _number(value, "threshold", "value")
    if integer:  # both numbers cast (truncated) to the input's integer dtype, as given
        dtype = input._data.dtype
        return _maybe_inplace(_integer_threshold, input, inplace,
                              integer_scalar(threshold, dtype), integer_scalar(value, dtype))
    return _maybe_inplace(_threshold, input, inplace, *numbers)


def _integer_threshold(input, threshold: int, value: int):
    return where(input > threshold, input, value)


_inplace_form("threshold_", threshold, (_F, "ember"))


def _prelu_samples(make):
    return [Sample((make((2, 3, 4)), make((3,), low=0.0, high=0.5)), name="per channel"),
            Sample((make((3, 4)), make((1,), low=0.0, high=0.5)), name="one weight"),
            Sample((make((5,)), make((1,), low=-0.5, high=0.5)), name="1-d input")]


@register_op(namespace=_F, exported_in=("ember",), methods=("prelu",), samples=_prelu_samples)
def prelu(input, weight):
    """``input`` where positive, ``weight * input`` elsewhere; weight has one element or
    one per channel (dimension 1 of input)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"prelu(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu(): argument 'weight' must be a Tensor, not "
                        f"{type(weight).__name__}")
    if weight.dtype != input.dtype:  # PyTorch checks this first, before dtype or shape
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{input.dtype.scalar_name} and {weight.dtype.scalar_name} "
                           f"(input and weight must have the same dtype)")
    _float_input(input, "prelu")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu(): weight must be 0-d or 1-d, got {weight.ndim} dimensions")
    count = weight.numel()
    if count != 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if count != channels:
            raise RuntimeError(
                f"prelu(): mismatch of parameter numbers and input channel size. Found "
                f"parameter numbers = {count} and channel size = {channels}.")
        weight = weight.reshape((count,) + (1,) * (input.ndim - 2))
    else:
        weight = weight.reshape((1,) * input.ndim)  # PyTorch views it too
    return Prelu.apply(input, weight)


class Prelu(Function):
    """``x`` where positive, ``w * x`` elsewhere, ``w`` broadcast to x, as one node."""

    array_backward = True
    node_name = "PreluKernelBackward0"

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return ctx.xp.where(x > 0, x, w * x).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, w = ctx.saved_tensors
        need_x, need_w = ctx.needs_input_grad
        positive = x > 0
        return (m.where(positive, grad, grad * w) if need_x else None,
                m.sum_to_shape(m.where(positive, 0.0, grad * x), w.shape) if need_w else None)


def _rrelu_samples(make):
    return [Sample((make((3, 4)),), name="eval"),
            Sample((make((2, 3)), 0.2, 0.6), name="eval, bounds")]


@register_op(namespace=_F, exported_in=("ember",), samples=_rrelu_samples)
def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False):
    """Randomized leaky relu: ``input`` where >= 0, else ``a * input`` with ``a`` drawn
    uniformly from [lower, upper] per element in training, and ``(lower + upper) / 2``
    in evaluation."""
    _float_input(input, "rrelu")
    lower, upper = _number(lower, "rrelu", "lower"), _number(upper, "rrelu", "upper")
    if lower > upper:
        raise RuntimeError(f"rrelu(): lower bound ({lower}) should be less than or equal to "
                           f"the upper bound ({upper})")
    if not training:
        return _maybe_inplace(_leaky_relu, input, inplace, (lower + upper) / 2)
    from ..creation import rand

    # PyTorch draws one double per element <= 0, in order, and none for the others: the
    # same draws keep the random stream in step with PyTorch's
    data = input._data
    xp = backend.xp_of(data)
    drawn = data <= 0
    units = rand(int(drawn.sum()), dtype=dtypes.float64, device=input.device)._data
    # scaled in double between the bounds as the kernel's arithmetic type holds them
    # (float32 below double precision), as PyTorch's kernel does
    if data.dtype != np.float64:
        lower, upper = float(np.float32(lower)), float(np.float32(upper))
    noise = xp.ones_like(data)
    noise[drawn] = (units * (upper - lower) + lower).astype(data.dtype)
    return _maybe_inplace(_rrelu_with_noise, input, inplace, noise)


def _rrelu_with_noise(input, noise):
    return RReLUWithNoise.apply(input, noise)


class RReLUWithNoise(Function):
    """Training rrelu as one node (PyTorch's): ``x * noise``, the noise being the drawn
    slope where x <= 0 and 1 elsewhere; the gradient is ``grad * noise``."""

    array_backward = True
    node_name = "RreluWithNoiseBackward0"

    @staticmethod
    def forward(ctx, x, noise):
        ctx.save_for_backward(noise)
        return x * noise

    @staticmethod
    def backward(ctx, grad):
        (noise,) = ctx.saved_tensors
        return grad * noise, None


_inplace_form("rrelu_", rrelu, (_F, "ember"))


class Shrink(Function):
    """hardshrink (keep x) and softshrink (move x toward 0 by lambd) where |x| > lambd;
    0 inside [-lambd, lambd]."""

    array_backward = True
    node_name = "HardshrinkBackward0"

    @staticmethod
    def forward(ctx, x, lambd, soft):
        ctx.save_for_backward(x)
        ctx.lambd = lambd
        if soft:
            ctx.node_name = "SoftshrinkBackward0"
        formula = _softshrink_values if soft else _hardshrink_values
        return array_math(ctx.xp).elementwise(formula, x, lambd, -lambd)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return ctx.math.elementwise(_shrink_grad, grad, x, ctx.lambd, -ctx.lambd), None, None


@elementwise_formula
def _hardshrink_values(m, x, lambd, minus_lambd):
    outside = (x > lambd) | (x < minus_lambd) | m.isnan(x)  # nan stays nan, as in PyTorch
    return m.cast(m.where(outside, x, 0), x)


@elementwise_formula
def _softshrink_values(m, x, lambd, minus_lambd):
    outside = (x > lambd) | (x < minus_lambd) | m.isnan(x)
    kept = m.where(x > 0, x - lambd, x - minus_lambd)
    return m.cast(m.where(outside, kept, 0), x)


@elementwise_formula
def _shrink_grad(m, grad, x, lambd, minus_lambd):
    return m.cast(m.where((x >= minus_lambd) & (x <= lambd), 0.0, grad), grad)


def _shrink_lambda(lambd, op):
    lambd = _number(lambd, op, "lambd")
    if lambd < 0:
        raise RuntimeError(f"{op}(): lambda must be non-negative, but found {lambd}")
    return lambd


@register_op(namespace=_F, exported_in=("ember",), methods=("hardshrink",),
             samples=_samples_in(-2.0, 2.0, ({"lambd": 1.2},)))
def hardshrink(input, lambd: float = 0.5):
    """``input`` where ``|input| > lambd``, else 0."""
    _float_input(input, "hardshrink")
    return Shrink.apply(input, _shrink_lambda(lambd, "hardshrink"), False)


@register_op(namespace=_F, samples=_samples_in(-2.0, 2.0, ({"lambd": 1.2},)))
def softshrink(input, lambd: float = 0.5):
    """``input - lambd`` above lambd, ``input + lambd`` below -lambd, 0 between."""
    _float_input(input, "softshrink")
    return Shrink.apply(input, _shrink_lambda(lambd, "softshrink"), True)


@register_op(namespace=_F, samples=_samples_in(-2.0, 2.0))
def tanhshrink(input):
    """``input - tanh(input)``."""
    if isinstance(input, Tensor) and input._data.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    x = float_operand(input, "tanhshrink")
    return x - tanh(x)


# ----------------------------------------------------------------------------- smooth ones
class Gelu(Function):
    array_backward = True
    node_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, x, approximate):
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        formula = _gelu_tanh_values if approximate == "tanh" else _gelu_values
        return array_math(ctx.xp).elementwise(formula, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        formula = _gelu_tanh_grad if ctx.approximate == "tanh" else _gelu_grad
        return ctx.math.elementwise(formula, grad, x), None


@elementwise_formula
def _gelu_values(m, x):
    cdf = 0.5 * (1 + m.erf(x * _SQRT_HALF))  # erf in float64, as ember.erf computes it
    return m.cast(x * cdf, x)


@elementwise_formula
def _gelu_grad(m, grad, x):
    cdf = (m.erf(x * _SQRT_HALF) + 1) * 0.5
    density = m.exp(x * x * -0.5) * _INV_SQRT_2PI
    return m.cast(grad * (cdf + x * density), x)


@elementwise_formula
def _gelu_tanh_values(m, x):
    inner = _SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)
    return m.cast(0.5 * x * (1 + m.tanh(inner)), x)


@elementwise_formula
def _gelu_tanh_grad(m, grad, x):
    x_squared = x * x
    t = m.tanh((x + x_squared * x * _GELU_CUBIC) * _SQRT_2_OVER_PI)
    inner_slope = (x_squared * (3 * _GELU_CUBIC) + 1) * _SQRT_2_OVER_PI
    return m.cast(grad * ((t + 1) * 0.5 + x * (1 - t * t) * inner_slope * 0.5), x)


@register_op(namespace=_F, samples=_samples_in(-3.0, 3.0, ({"approximate": "tanh"},)))
def gelu(input, approximate: str = "none"):
    """``input * Phi(input)`` with Phi the standard normal CDF; ``approximate='tanh'``
    uses ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    _float_input(input, "gelu")
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"gelu(): approximate argument must be either none or tanh, got "
                           f"{approximate!r}")
    return Gelu.apply(input, approximate)


class Silu(Function):
    array_backward = True
    node_name = "SiluBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return array_math(ctx.xp).elementwise(_silu_values, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return ctx.math.elementwise(_silu_grad, grad, x)


@elementwise_formula
def _silu_values(m, x):
    return m.cast(x * m.sigmoid(x), x)


@elementwise_formula
def _silu_grad(m, grad, x):
    s = m.sigmoid(x)
    return m.cast(grad * s * (x * (1 - s) + 1), x)


@register_op(namespace=_F, samples=_samples_in(-4.0, 4.0))
def silu(input, inplace: bool = False):
    """``input * sigmoid(input)`` (swish)."""
    _float_input(input, "silu")
    return _maybe_inplace(Silu.apply, input, inplace)


class Mish(Function):
    array_backward = True
    node_name = "MishBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return array_math(ctx.xp).elementwise(_mish_values, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return ctx.math.elementwise(_mish_grad, grad, x)


@elementwise_formula
def _mish_values(m, x):
    return m.cast(x * m.tanh(_stable_softplus(m, x)), x)


@elementwise_formula
def _mish_grad(m, grad, x):
    t = m.tanh(m.softplus(x))
    return m.cast(grad * (t + x * m.sigmoid(x) * (1 - t * t)), x)


@register_op(namespace=_F, samples=_samples_in(-4.0, 4.0))
def mish(input, inplace: bool = False):
    """``input * tanh(softplus(input))``."""
    _float_input(input, "mish")
    return _maybe_inplace(Mish.apply, input, inplace)


class Softplus(Function):
    array_backward = True
    node_name = "SoftplusBackward0"

    @staticmethod
    def forward(ctx, x, beta, threshold):
        ctx.save_for_backward(x)
        ctx.constants = (beta, threshold)
        return array_math(ctx.xp).elementwise(_softplus_values, x, beta, threshold)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        beta, threshold = ctx.constants
        return ctx.math.elementwise(_softplus_grad, grad, x, beta, threshold), None, None


@elementwise_formula
def _softplus_values(m, x, beta, threshold):
    z = x * beta
    smooth = _stable_softplus(m, z) / beta
    return m.cast(m.where(z > threshold, x, smooth), x)


@elementwise_formula
def _softplus_grad(m, grad, x, beta, threshold):
    z = x * beta
    return m.cast(m.where(z > threshold, grad, grad * m.sigmoid(z)), x)


@register_op(namespace=_F, samples=_samples_in(-3.0, 3.0, ({"beta": 2.0, "threshold": 1.0},
                                                           {"beta": 0.5},)))
def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """``log(1 + exp(beta * input)) / beta``, and ``input`` itself where
    ``beta * input > threshold`` (linear there, as PyTorch). Computed without overflow."""
    _float_input(input, "softplus")
    beta = _number(beta, "softplus", "beta")
    if beta == 0:
        raise ValueError("softplus(): beta must not be 0")
    return Softplus.apply(input, beta, _number(threshold, "softplus", "threshold"))


@register_op(namespace=_F, samples=_samples_in(-3.0, 3.0))
def softsign(input):
    """``input / (1 + |input|)``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"softsign(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    return input / (input.abs() + 1)  # (integers: abs refuses bools, the division floats)


class LogSigmoid(Function):
    array_backward = True
    node_name = "LogSigmoidBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return array_math(ctx.xp).elementwise(_logsigmoid_values, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return ctx.math.elementwise(_logsigmoid_grad, grad, x)


@elementwise_formula
def _logsigmoid_values(m, x):
    # log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): no overflow, no log(0)
    return m.cast(m.minimum(x, 0) - m.log1p(m.exp(-m.abs(x))), x)


@elementwise_formula
def _logsigmoid_grad(m, grad, x):
    return m.cast(grad * m.sigmoid(-x), x)


@register_op(namespace=_F, samples=_samples_in(-4.0, 4.0))
def logsigmoid(input):
    """``log(sigmoid(input)) = -softplus(-input)``, stable for large |input|."""
    _float_input(input, "logsigmoid")
    return LogSigmoid.apply(input)


# ----------------------------------------------------------------------------- hard ones
class Hardsigmoid(Function):
    array_backward = True
    node_name = "HardsigmoidBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return array_math(ctx.xp).elementwise(_hardsigmoid_values, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return ctx.math.elementwise(_hardsigmoid_grad, grad, x)


@elementwise_formula
def _hardsigmoid_values(m, x):
    return m.cast(m.minimum(m.maximum(x + 3, 0), 6) / 6, x)


@elementwise_formula
def _hardsigmoid_grad(m, grad, x):
    return m.cast(m.where((x > -3) & (x < 3), grad / 6, 0.0), grad)


@register_op(namespace=_F, samples=_samples_in(-5.0, 5.0))
def hardsigmoid(input, inplace: bool = False):
    """``relu6(input + 3) / 6``; the gradient is 1/6 strictly inside (-3, 3)."""
    _float_input(input, "hardsigmoid")
    return _maybe_inplace(Hardsigmoid.apply, input, inplace)


class Hardswish(Function):
    array_backward = True
    node_name = "HardswishBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return array_math(ctx.xp).elementwise(_hardswish_values, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return ctx.math.elementwise(_hardswish_grad, grad, x)


@elementwise_formula
def _hardswish_values(m, x):
    return m.cast(x * m.minimum(m.maximum(x + 3, 0), 6) / 6, x)


@elementwise_formula
def _hardswish_grad(m, grad, x):
    middle = grad * (x / 3 + 0.5)
    # (PyTorch: 0 at -3 itself, 1 at 3 itself)
    return m.cast(m.where(x <= -3, 0.0, m.where(x < 3, middle, grad)), grad)


@register_op(namespace=_F, samples=_samples_in(-5.0, 5.0))
def hardswish(input, inplace: bool = False):
    """``input * relu6(input + 3) / 6``."""
    _float_input(input, "hardswish")
    return _maybe_inplace(Hardswish.apply, input, inplace)


# ----------------------------------------------------------------------------- glu, logit
def _glu_samples(make):
    return [Sample((make((3, 4)),), name="last dim"),
            Sample((make((4, 3)),), {"dim": 0}, name="dim=0"),
            Sample((make((2, 2, 3)),), {"dim": -2}, name="dim=-2")]


@register_op(namespace=_F, samples=_glu_samples)
def glu(input, dim: int = -1):
    """Gated linear unit: split input in halves ``a, b`` along ``dim``; ``a * sigmoid(b)``."""
    _float_input(input, "glu")
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.ndim, "glu")
    size = input.shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    return Glu.apply(input, d)


class Glu(Function):
    """``a * sigmoid(b)`` for the halves a, b of ``x`` along ``dim``, as one node."""

    array_backward = True
    node_name = "GluBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        xp = ctx.xp
        a, b = xp.split(x, 2, axis=dim)
        ctx.dim = dim
        ctx.save_for_backward(x)
        return array_math(xp).elementwise(_glu_values, a, b)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (x,) = ctx.saved_tensors
        half = x.shape[ctx.dim] // 2
        a, b = m.narrow(x, ctx.dim, 0, half), m.narrow(x, ctx.dim, half, half)
        return m.cat(list(m.elementwise(_glu_grads, grad, a, b)), ctx.dim), None


@elementwise_formula
def _glu_values(m, a, b):
    return m.cast(a * m.sigmoid(b), a)  # a sigmoid that never overflows


@elementwise_formula
def _glu_grads(m, grad, a, b):
    """The gradients of the two halves (two outputs of one kernel)."""
    gate = m.sigmoid(b)
    return m.cast(grad * gate, grad), m.cast(grad * a * gate * (1.0 - gate), grad)


class Logit(Function):
    array_backward = True
    node_name = "LogitBackward0"

    @staticmethod
    def forward(ctx, x, eps):
        ctx.eps = eps
        ctx.save_for_backward(x)
        lane = array_math(ctx.xp)
        if eps is None:
            return lane.elementwise(_logit_values, x)
        return lane.elementwise(_logit_clamped_values, x, eps, 1 - eps)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        eps = ctx.eps
        if eps is None:
            return ctx.math.elementwise(_logit_grad, grad, x), None
        return ctx.math.elementwise(_logit_clamped_grad, grad, x, eps, 1 - eps), None


@elementwise_formula
def _logit_values(m, x):
    return m.cast(m.log(x) - m.log1p(-x), x)


@elementwise_formula
def _logit_clamped_values(m, x, low, high):
    z = m.minimum(m.maximum(x, low), high)
    return m.cast(m.log(z) - m.log1p(-z), x)


@elementwise_formula
def _logit_grad(m, grad, x):
    # outside [0, 1] logit is NaN, and so is its gradient (PyTorch's convention)
    return m.cast(m.where((x < 0) | (x > 1), float("nan"), grad / (x * (1 - x))), grad)


@elementwise_formula
def _logit_clamped_grad(m, grad, x, low, high):
    # clamped elements have no gradient (PyTorch's convention)
    return m.cast(m.where((x < low) | (x > high), 0.0, grad / (x * (1 - x))), grad)


@register_op(inplace=("logit_",), methods=("logit",), exported_in=("special",),
             samples=lambda make: [Sample((make((3, 4), low=0.05, high=0.95),), name="plain"),
                                   Sample((make((6,), low=0.0, high=1.0),), {"eps": 0.2},
                                          name="eps")])
def logit(input, eps=None):
    """``log(p / (1 - p))``, the inverse of sigmoid; with ``eps``, p is first clamped to
    [eps, 1 - eps] (and the gradient is zero where it was)."""
    x = float_operand(input, "logit")
    if eps is not None:
        eps = _number(eps, "logit", "eps")
    return Logit.apply(x, eps)


def _sigmoid_inplace(self):
    """``sigmoid`` written into self; returns self."""
    return apply_inplace(self, sigmoid)


def _tanh_inplace(self):
    """``tanh`` written into self; returns self."""
    return apply_inplace(self, tanh)


NAMESPACES["ember"]["sigmoid_"] = _sigmoid_inplace
NAMESPACES["ember"]["tanh_"] = _tanh_inplace
