"""Normalization: batch_norm, layer_norm, group_norm, instance_norm, rms_norm,
local_response_norm, normalize.

batch_norm, layer_norm and group_norm are one node each, as in PyTorch (NativeBatchNorm,
NativeLayerNorm, NativeGroupNorm): the forward computes the statistics on arrays
(two-pass variances, stable where E[x^2] - E[x]^2 is not) and applies ``x * scale +
shift``; the backward is the closed-form gradient, written once against ``ctx.math``,
which recomputes the statistics from x under create_graph so the double backward
differentiates them. instance_norm, rms_norm and local_response_norm are PyTorch's
compositions of ember ops, node for node. Running statistics are updated in place,
outside the graph, as PyTorch does. The elementwise steps after the reductions are
formulas (``elementwise_formula``): one fused kernel each on CUDA.
"""
from __future__ import annotations

import math

from .. import dtypes, tracing
from ..autograd import grad_mode
from ..autograd.backward_math import array_math, elementwise_formula
from ..autograd.function import Function
from ..tensor import bump_version
from ._util import ensure_tensor, wrap_dim
from .conv import _sizes
from .neural import add_scalar
from .registry import Sample, register_op

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm",
           "local_response_norm", "normalize"]


def _check_float(input, op):
    ensure_tensor(input, op)
    if input._data.dtype.kind not in "fV":
        raise RuntimeError(f"{op}(): expected a floating-point input, but got "
                           f"{input.dtype.name}")


def _check_param(value, name, size, op):
    if value is None:
        return
    ensure_tensor(value, op, name)
    if value.numel() != size:
        raise RuntimeError(f"{op}(): {name} should contain {size} elements not "
                           f"{value.numel()}")


def _channel_shape(ndim: int) -> tuple:
    return (1, -1) + (1,) * (ndim - 2)


def _affine(out, weight, bias, shape):
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _standardize(x, dims, eps):
    """(x - mean) / sqrt(var + eps) over ``dims`` (biased variance), and the statistics."""
    mean = x.mean(dim=dims, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dim=dims, keepdim=True)
    return centered * (var + eps).rsqrt(), mean, var


def _update_running(running, value, momentum):
    """running = (1 - momentum) * running + momentum * value, in place (no graph)."""
    with grad_mode.no_grad():
        _copy_into(running, running * (1.0 - momentum) + value.detach().to(running.dtype)
                   * momentum)


def _copy_into(running, new):
    """``running[...] = new`` outside the graph (running statistics); ember.compile replays
    the copy."""
    tracer = tracing.current()
    if tracer is not None:
        tracer.record_copy(running, new)
    running._data[...] = new._data
    bump_version(running)


# ----------------------------------------------------------------------------- batch_norm
def _batch_norm_samples(make):
    def stats(c):
        return make((c,), requires_grad=False), make((c,), low=0.5, high=2.0,
                                                     requires_grad=False)

    mean3, var3 = stats(3)
    mean2, var2 = stats(2)
    return [Sample((make((4, 3)), mean3, var3, make((3,)), make((3,))),
                   dict(training=True, momentum=0.2), name="2-D training affine"),
            Sample((make((2, 2, 3)), mean2, var2), dict(training=False), name="eval"),
            Sample((make((2, 2, 3, 2)), mean2, var2, make((2,)), make((2,))),
                   dict(training=False, eps=1e-3), name="eval affine 4-D"),
            Sample((make((2, 2, 2, 2)), None, None, make((2,)), None), dict(training=True),
                   name="4-D no running stats")]


class BatchNorm(Function):
    """batch_norm as one node (PyTorch's NativeBatchNorm): per-channel statistics over
    the batch and spatial dims (training) or the running ones (evaluation), then
    ``x * scale + shift`` with ``scale = weight / sqrt(var + eps)``. Outputs the result and
    the batch mean and biased variance (no gradient; the caller updates the running
    statistics from them).

    Backward is the closed form ``dx = weight * invstd * (g - mean(g) - xhat * mean(g xhat))``
    (training; ``weight * invstd * g`` in evaluation); under create_graph the statistics are
    recomputed from x with the same lines, so the double backward differentiates them too.
    """

    array_backward = True
    node_name = "NativeBatchNormBackward0"
    _materialize_grads = False

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, training, eps):
        xp = ctx.xp
        ndim = x.ndim
        axes = (0,) + tuple(range(2, ndim))
        shape = (1, x.shape[1]) + (1,) * (ndim - 2)
        if training:
            mean = x.mean(axis=axes)
            centered = x - mean.reshape(shape)
            var = xp.mean(xp.square(centered, out=centered), axis=axes)
            del centered
        else:
            mean = running_mean.astype(x.dtype)
            var = running_var.astype(x.dtype)
        invstd = 1.0 / xp.sqrt(var + eps)
        scale = invstd if weight is None else invstd * weight.reshape(-1)
        shift = -mean * scale if bias is None else bias.reshape(-1) - mean * scale
        out = x * scale.reshape(shape)
        out += shift.reshape(shape)
        ctx.training, ctx.eps, ctx.axes, ctx.shape = training, eps, axes, shape
        ctx.stats = (mean, invstd)
        ctx.bias_shape = None if bias is None else bias.shape
        # evaluation keeps its statistics as constants (copies): the running ones may
        # change before backward (a training step), as in PyTorch
        ctx.save_for_backward(x, weight, None if training else mean,
                              None if training else invstd)
        ctx.mark_non_differentiable(mean, var)
        return out.astype(x.dtype, copy=False), mean, var

    @staticmethod
    def backward(ctx, grad, _grad_mean=None, _grad_var=None):
        m = ctx.math
        x, weight, eval_mean, eval_invstd = ctx.saved_tensors
        training = ctx.training
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        shape = tuple(x.shape)
        channels = shape[1]
        flat = (shape[0], channels, math.prod(shape[2:]))   # (N, C, positions)
        stat = (1, channels, 1)
        x3, g3 = m.reshape(x, flat), m.reshape(grad, flat)
        if training and m.arrays:  # the forward's statistics (no graph to differentiate)
            mean, invstd = (m.reshape(v, stat) for v in ctx.stats)
        elif training:
            mean = m.mean(x3, [0, 2], True)
            centered = x3 - mean
            invstd = m.rsqrt(m.mean(centered * centered, [0, 2], True) + ctx.eps)
        else:
            mean, invstd = m.reshape(eval_mean, stat), m.reshape(eval_invstd, stat)
        count = flat[0] * flat[2]
        centered = x3 - mean
        # per channel: the sum of the gradient, and of the gradient times (x - mean)
        sum_g = m.sum(g3, [0, 2], True)
        sum_gc = m.reshape(m.sum(m.einsum("ncs,ncs->nc", g3, centered), 0), stat)
        grad_x = grad_w = grad_b = None
        if need_x:
            k = invstd if weight is None else invstd * m.reshape(weight, stat)
            if training:  # k (g - mean(g) - xhat mean(g xhat)), xhat = (x - mean) invstd
                grad_x = m.elementwise(_batch_norm_grad_input, g3, centered, k, invstd, sum_g,
                                       sum_gc, count)
            else:
                grad_x = k * g3
            grad_x = m.reshape(grad_x, shape)
        if need_w:
            grad_w = m.reshape(invstd * sum_gc, weight.shape)
        if need_b:
            grad_b = m.reshape(sum_g, ctx.bias_shape)
        return grad_x, grad_w, grad_b, None, None, None, None


@elementwise_formula
def _batch_norm_grad_input(m, grad, centered, k, invstd, sum_g, sum_gc, count):
    return k * grad - k * sum_g / count - centered * (k * invstd * invstd * sum_gc / count)


def _same_dtype(input, params, op):
    """PyTorch's rule: the parameters (and running statistics) share the input's dtype,
    except all-float32 ones of a 16-bit input (as under autocast), which compute in
    float32. True for that mixed case."""
    given = [p for p in params if p is not None]
    other = [p for p in given if p.dtype is not input.dtype]
    if not other:
        return False
    if input.dtype.itemsize == 2 and all(p.dtype is dtypes.float32 for p in given):
        return True
    raise RuntimeError(f"{op}(): mixed dtype: expected parameters of the input's dtype "
                       f"{input.dtype.name} (or all float32 for a 16-bit input), got "
                       f"{other[0].dtype.name}")


# not exported as ember.batch_norm: torch.batch_norm takes its arguments in another order
@register_op(namespace="nn.functional", samples=_batch_norm_samples)
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` per channel (dim 1), statistics over
    the batch and spatial dims. In training the batch's statistics are used (biased
    variance) and ``running_mean`` / ``running_var`` (if given) move toward them in place:
    ``running = (1 - momentum) * running + momentum * batch_stat`` with the unbiased
    variance; in evaluation the running statistics are used. One graph node
    (NativeBatchNormBackward0). Time O(numel).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> x = ember.tensor([[1.0, 2.0], [3.0, 6.0]])
    >>> rm, rv = ember.zeros(2), ember.ones(2)
    >>> F.batch_norm(x, rm, rv, training=True, momentum=0.5)
    tensor([[-1.0000, -1.0000],
            [ 1.0000,  1.0000]])
    >>> rm, rv
    (tensor([1., 2.]), tensor([1.5000, 4.5000]))
    """
    _check_float(input, "batch_norm")
    ndim = input._data.ndim
    if ndim < 2:
        raise ValueError(f"batch_norm(): expected 2D or more input (batch, channels, ...), "
                         f"got {ndim}D input of size {_sizes(input.shape)}")
    channels = input.shape[1]
    for value, name in ((running_mean, "running_mean"), (running_var, "running_var"),
                        (weight, "weight"), (bias, "bias")):
        _check_param(value, name, channels, "batch_norm")
    if isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        raise TypeError(f"batch_norm(): argument 'momentum' must be float, not "
                        f"{type(momentum).__name__}")
    if training:
        count = input.numel() // channels if channels else 0
        if count == 0:  # an empty batch: an empty result, statistics untouched
            return _affine(input * 1.0, weight, bias, _channel_shape(ndim))
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {_sizes(input.shape)}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("batch_norm(): running_mean and running_var must be defined in "
                           "evaluation mode (training=False)")
    if _same_dtype(input, (weight, bias, running_mean, running_var), "batch_norm"):
        return batch_norm(input.float(), running_mean, running_var, weight, bias, training,
                          momentum, eps).to(input.dtype)
    if training:
        out, mean, var = BatchNorm.apply(input, weight, bias, None, None, True, float(eps))
        if running_mean is not None:
            _update_running(running_mean, mean, momentum)
        if running_var is not None:
            _update_running(running_var, var * (count / (count - 1)), momentum)
        return out
    return BatchNorm.apply(input, weight, bias, running_mean, running_var, False,
                           float(eps))[0]


# ----------------------------------------------------------------------------- layer_norm
def _normalized_dims(input, normalized_shape, op):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(int(s) for s in normalized_shape)
    n = len(normalized_shape)
    if n == 0:
        raise RuntimeError(f"{op}(): Expected normalized_shape to be at least 1-dimensional, "
                           "i.e., containing at least one element, but got normalized_shape "
                           "= []")
    if input._data.ndim < n or tuple(input.shape[input._data.ndim - n:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, normalized_shape))}], but got "
                           f"input of size{_sizes(input.shape)}")
    return normalized_shape, tuple(range(input._data.ndim - n, input._data.ndim))


def _check_elementwise_param(value, name, normalized_shape, op):
    if value is None:
        return
    ensure_tensor(value, op, name)
    if tuple(value.shape) != tuple(normalized_shape):
        raise RuntimeError(f"{op}(): Expected {name} to be of same shape as normalized_shape, "
                           f"but got {name} of shape {_sizes(value.shape)} and normalized_shape "
                           f"= {_sizes(normalized_shape)}")


@register_op(namespace="nn.functional", exported_in=("ember",),
             samples=lambda make: [
                 Sample((make((2, 3, 4)), (4,), make((4,)), make((4,))), name="last dim affine"),
                 Sample((make((2, 2, 3)), [2, 3]), dict(eps=1e-3), name="two dims"),
                 Sample((make((3, 4)), (4,), make((4,)), None), name="weight only")])
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` with mean and (biased) variance
    over the trailing ``normalized_shape`` dims of each sample; weight and bias have that
    shape. Time O(numel)."""
    _check_float(input, "layer_norm")
    normalized_shape, dims = _normalized_dims(input, normalized_shape, "layer_norm")
    _check_elementwise_param(weight, "weight", normalized_shape, "layer_norm")
    _check_elementwise_param(bias, "bias", normalized_shape, "layer_norm")
    if input._data.size == 0:
        out, _, _ = _standardize(input, list(dims), eps)
        return _affine(out, weight, bias, normalized_shape)
    low = input.dtype.itemsize == 2 and any(
        p is not None and p.dtype is dtypes.float32 for p in (weight, bias))
    if low:  # a 16-bit input with float32 parameters (as under autocast) stays 16-bit
        return layer_norm(input.float(), normalized_shape, weight, bias, eps).to(input.dtype)
    same = [t for t in (weight, bias) if t is not None and t.dtype is not input.dtype]
    if same:
        raise RuntimeError(f"layer_norm(): mixed dtype: expected weight and bias of the "
                           f"input's dtype {input.dtype.name}, got {same[0].dtype.name}")
    return LayerNorm.apply(input, weight, bias, tuple(dims), float(eps))


class LayerNorm(Function):
    """layer_norm as one node (PyTorch's NativeLayerNorm): standardize over the trailing
    ``dims``, then scale and shift. Backward recomputes the statistics from x, so the same
    lines give the double backward."""

    array_backward = True
    node_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, dims, eps):
        xp = ctx.xp
        ctx.dims, ctx.eps = dims, eps
        ctx.saved_bias_shape = None if bias is None else bias.shape
        ctx.save_for_backward(x, weight)
        mean = x.mean(axis=dims, keepdims=True)
        centered = x - mean
        var = (centered * centered).mean(axis=dims, keepdims=True)
        return array_math(xp).elementwise(_layer_norm_values, x, centered, var, eps, weight,
                                          bias)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, weight = ctx.saved_tensors
        dims = list(ctx.dims)
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        centered = x - m.mean(x, dims, True)
        rstd = m.rsqrt(m.mean(centered * centered, dims, True) + ctx.eps)
        xhat = centered * rstd
        grad_x = grad_w = grad_b = None
        if need_x:
            g = grad * weight if weight is not None else grad
            grad_x = m.elementwise(_layer_norm_grad_input, rstd, g, m.mean(g, dims, True), xhat,
                                   m.mean(g * xhat, dims, True))
        if need_w:
            grad_w = m.sum_to_shape(grad * xhat, weight.shape)
        if need_b:
            grad_b = m.sum_to_shape(grad, ctx.saved_bias_shape)
        return grad_x, grad_w, grad_b, None, None


@elementwise_formula
def _layer_norm_values(m, x, centered, var, eps, weight, bias):
    out = centered / m.sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return m.cast(out, x)


@elementwise_formula
def _layer_norm_grad_input(m, rstd, grad, mean_grad, xhat, mean_grad_xhat):
    return rstd * (grad - mean_grad - xhat * mean_grad_xhat)


@register_op(namespace="nn.functional", exported_in=("ember",),
             samples=lambda make: [
                 Sample((make((2, 3, 4)), (4,), make((4,))), name="weight"),
                 Sample((make((2, 2, 3)), [2, 3]), dict(eps=1e-3), name="two dims"),
                 Sample((make((3, 4)), (4,)), name="eps None")])
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x^2) + eps) * weight`` over the trailing ``normalized_shape`` dims
    (no centering); eps None means the dtype's machine epsilon. Time O(numel)."""
    _check_float(input, "rms_norm")
    normalized_shape, dims = _normalized_dims(input, normalized_shape, "rms_norm")
    _check_elementwise_param(weight, "weight", normalized_shape, "rms_norm")
    if eps is None:
        eps = dtypes.finfo(input.dtype).eps
    mean_square = input.pow(2).mean(dim=list(dims), keepdim=True)
    out = input * add_scalar(mean_square, eps).rsqrt()
    if weight is None:
        return out
    out = out * weight
    # PyTorch casts back (type_as): a wider weight does not widen the result
    return out if out.dtype is input.dtype else out.to(input.dtype)


# ----------------------------------------------------------------------------- group / instance
@register_op(namespace="nn.functional", exported_in=("ember",),
             samples=lambda make: [
                 Sample((make((2, 4, 3)), 2, make((4,)), make((4,))), name="affine"),
                 Sample((make((1, 6, 2, 2)), 3), dict(eps=1e-3), name="4-D"),
                 Sample((make((3, 2)), 1, make((2,)), make((2,))), name="2-D"),
                 Sample((make((2, 4, 2, 3)), 2, make((4,)), None), name="4-D weight only")])
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Split the channels (dim 1) into ``num_groups`` groups and standardize each group of
    each sample over its channels and spatial positions; then a per-channel affine.
    One graph node (NativeGroupNormBackward0). Time O(numel).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.group_norm(ember.tensor([[1.0, 3.0, 2.0, 6.0]]), 2, eps=0.0)
    tensor([[-1.,  1., -1.,  1.]])
    """
    _check_float(input, "group_norm")
    ndim = input._data.ndim
    if ndim < 2:
        raise RuntimeError(f"group_norm(): Expected at least 2 dimensions for input tensor but "
                           f"received {ndim}")
    batch, channels = input.shape[:2]
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {_sizes(input.shape)} and "
                           f"num_groups={num_groups}")
    _check_param(weight, "weight", channels, "group_norm")
    _check_param(bias, "bias", channels, "group_norm")
    if input.numel() == 0:
        return _affine(input * 1.0, weight, bias, _channel_shape(ndim))
    if _same_dtype(input, (weight, bias), "group_norm"):
        return group_norm(input.float(), num_groups, weight, bias, eps).to(input.dtype)
    return GroupNorm.apply(input, weight, bias, int(num_groups), float(eps))


class GroupNorm(Function):
    """group_norm as one node (PyTorch's NativeGroupNorm): statistics per (sample, group)
    over the group's channels and positions, then ``x * scale + shift`` with a per-(sample,
    channel) ``scale = weight * invstd``. Backward is the closed form of layer norm within
    each group; under create_graph the statistics are recomputed from x, so the double
    backward differentiates them."""

    array_backward = True
    node_name = "NativeGroupNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, groups, eps):
        xp = ctx.xp
        batch, channels = x.shape[:2]
        grouped = x.reshape(batch, groups, -1)
        mean = grouped.mean(axis=2, keepdims=True)
        centered = grouped - mean
        var = xp.mean(xp.square(centered, out=centered), axis=2, keepdims=True)
        del centered
        invstd = 1.0 / xp.sqrt(var + eps)
        # per (sample, channel): invstd of the channel's group times the channel's weight
        scale = xp.repeat(invstd.reshape(batch, groups), channels // groups, axis=1)
        shift = -xp.repeat(mean.reshape(batch, groups), channels // groups, axis=1) * scale
        if weight is not None:
            scale = scale * weight
            shift = shift * weight
        if bias is not None:
            shift = shift + bias
        spatial = (1,) * (x.ndim - 2)
        out = x * scale.reshape((batch, channels) + spatial)
        out += shift.reshape((batch, channels) + spatial)
        ctx.groups, ctx.eps, ctx.stats = groups, eps, (mean, invstd)
        ctx.bias_shape = None if bias is None else bias.shape
        ctx.save_for_backward(x, weight)
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        shape = tuple(x.shape)
        batch, channels = shape[:2]
        groups = ctx.groups
        per_group = channels // groups
        flat = (batch, channels, math.prod(shape[2:]))   # (N, C, positions)
        size = per_group * flat[2]                         # elements per group
        if m.arrays:
            mean, invstd = ctx.stats
        else:
            grouped = m.reshape(x, (batch, groups, size))
            mean = m.mean(grouped, 2, True)
            centered = grouped - mean
            invstd = m.rsqrt(m.mean(centered * centered, 2, True) + ctx.eps)

        def per_channel(t):  # (N, G, ...) -> (N, C, 1), each group's value on its channels
            t = m.expand(m.reshape(t, (batch, groups, 1)), (batch, groups, per_group))
            return m.reshape(t, (batch, channels, 1))

        x3, g3 = m.reshape(x, flat), m.reshape(grad, flat)
        invstd_c = per_channel(invstd)
        centered = x3 - per_channel(mean)
        # per (sample, channel): the sum of the gradient, and of the gradient times x - mean
        sum_g = m.sum(g3, 2)
        sum_gc = m.einsum("ncs,ncs->nc", g3, centered)
        scaled = m.reshape(invstd_c, (batch, channels)) * sum_gc   # sum of grad * xhat
        grad_x = grad_w = grad_b = None
        if need_x:
            w = m.reshape(weight, (1, channels)) if weight is not None else None
            wg, wgx = (sum_g, scaled) if w is None else (w * sum_g, w * scaled)
            # the group means of g = grad * weight and of g * xhat
            mean_g = per_channel(m.sum(m.reshape(wg, (batch, groups, per_group)), 2) / size)
            mean_gx = per_channel(m.sum(m.reshape(wgx, (batch, groups, per_group)), 2) / size)
            k = invstd_c if w is None else invstd_c * m.reshape(w, (1, channels, 1))
            grad_x = m.elementwise(_group_norm_grad_input, g3, centered, k, invstd_c, mean_g,
                                   mean_gx)
            grad_x = m.reshape(grad_x, shape)
        if need_w:
            grad_w = m.reshape(m.sum(scaled, 0), weight.shape)
        if need_b:
            grad_b = m.reshape(m.sum(sum_g, 0), ctx.bias_shape)
        return grad_x, grad_w, grad_b, None, None


@elementwise_formula
def _group_norm_grad_input(m, grad, centered, k, invstd, mean_g, mean_gx):
    return k * grad - invstd * mean_g - centered * (invstd * invstd * mean_gx)


def _instance_norm_samples(make):
    mean = make((2,), requires_grad=False)
    var = make((2,), low=0.5, high=2.0, requires_grad=False)
    return [Sample((make((2, 2, 4)),), name="no stats"),
            Sample((make((2, 2, 2, 2)), mean, var, make((2,)), make((2,))),
                   dict(momentum=0.3), name="running stats affine"),
            Sample((make((1, 2, 3)), mean, var), dict(use_input_stats=False),
                   name="use running stats")]


# not exported as ember.instance_norm: torch.instance_norm orders its arguments differently
@register_op(namespace="nn.functional", samples=_instance_norm_samples)
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Standardize each channel of each sample over its spatial dims, then a per-channel
    affine. With ``use_input_stats`` and running statistics given, these move (in place)
    toward the batch average of the per-instance mean and unbiased variance; with
    ``use_input_stats=False`` the running statistics are used instead. Time O(numel)."""
    _check_float(input, "instance_norm")
    ndim = input._data.ndim
    if ndim < 3:
        raise ValueError(f"instance_norm(): expected 3D or more input (batch, channels, "
                         f"spatial...), got {ndim}D input of size {_sizes(input.shape)}")
    channels = input.shape[1]
    for value, name in ((running_mean, "running_mean"), (running_var, "running_var"),
                        (weight, "weight"), (bias, "bias")):
        _check_param(value, name, channels, "instance_norm")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("instance_norm(): Expected running_mean and running_var to be "
                           "defined when use_input_stats is false")
    if input.numel() == 0:
        return _affine(input * 1.0, weight, bias, _channel_shape(ndim))
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{_sizes(input.shape)}")
    # PyTorch's composition: one batch norm over (1, N * C, ...), each instance a channel
    batch = input.shape[0]
    flat = input.reshape((1, batch * channels) + tuple(input.shape[2:]))
    stats = [None if s is None else s.repeat(batch) for s in (running_mean, running_var)]
    out = batch_norm(flat, stats[0], stats[1], None if weight is None else weight.repeat(batch),
                     None if bias is None else bias.repeat(batch), use_input_stats, momentum,
                     eps)
    if use_input_stats:
        for running, repeated in zip((running_mean, running_var), stats):
            if running is not None:
                _copy_into(running, repeated.reshape(batch, channels).mean(dim=0))
    return out.reshape(tuple(input.shape))


# ----------------------------------------------------------------------------- LRN, normalize
@register_op(namespace="nn.functional",
             samples=lambda make: [
                 Sample((make((2, 5, 3)), 3), name="3-D size 3"),
                 Sample((make((1, 4, 2, 2)), 2), dict(alpha=0.1, beta=0.5, k=2.0),
                        name="4-D size 2")])
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``x / (k + alpha * mean_window(x^2)) ^ beta``, the window running over ``size``
    neighbouring channels (dim 1; zero beyond the ends, ``size // 2`` before and
    ``(size - 1) // 2`` after). Time O(numel * size)."""
    from .pooling import avg_pool2d, avg_pool3d
    from .shape import pad

    _check_float(input, "local_response_norm")
    ndim = input._data.ndim
    if ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {ndim} "
                         "dimensions)")
    if isinstance(size, bool) or int(size) != size or int(size) <= 0:
        raise ValueError(f"local_response_norm(): size must be a positive integer, got {size}")
    size = int(size)
    if input.numel() == 0:
        return input
    # PyTorch's composition: the channels become a pooled dim of a 2-D (3-D input) or
    # 3-D (more dims) average pool with zero padding
    squares = input * input
    before, after = size // 2, (size - 1) // 2
    if ndim == 3:
        div = pad(squares.unsqueeze(1), (0, 0, before, after))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        shape = tuple(input.shape)
        div = squares.view(shape[0], 1, shape[1], shape[2], -1)
        div = pad(div, (0, 0, 0, 0, before, after))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(shape)
    return input / (div * alpha + k) ** beta


@register_op(namespace="nn.functional",
             samples=lambda make: [
                 Sample((make((3, 4)),), name="default p=2 dim=1"),
                 Sample((make((2, 3, 2)),), dict(p=1.0, dim=-1), name="p=1 dim=-1"),
                 Sample((make((2, 3)),), dict(p=3.0, dim=0, eps=1e-2), name="p=3 dim=0")])
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``x / max(||x||_p, eps)`` with the norm taken along ``dim``: unit-norm vectors,
    and no division by zero for zero vectors. Time O(numel)."""
    _check_float(input, "normalize")
    if out is not None:
        raise TypeError("normalize(): the out= argument is not supported by ember")
    from .. import linalg

    d = wrap_dim(dim, input._data.ndim, "normalize")
    norm = linalg.vector_norm(input, p, dim=d, keepdim=True)
    return input / norm.clamp(min=eps).expand_as(input)
