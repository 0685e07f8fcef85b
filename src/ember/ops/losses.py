"""Loss functions of ember.nn.functional.

Most losses are short compositions of registered ops (their gradients, and gradients of
gradients, come from those ops). Three get nodes of their own: softplus (stable in both
directions, used by the logistic losses), binary cross-entropy (PyTorch's clamped logs and
its gradient formula), and CTC (an alpha/beta recursion on arrays, looping over time only).
Their elementwise steps are formulas (``elementwise_formula``): one fused kernel on CUDA.

Every loss takes ``reduction`` = 'none' | 'mean' | 'sum' (kl_div also 'batchmean') and the
legacy ``size_average``/``reduce`` flags where PyTorch has them.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import backend, dtypes
from ..autograd.backward_math import array_math, elementwise_formula
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..tensor import Tensor
from ._util import dtype_not_implemented, ensure_tensor, float_operand, refuse_low_precision
from .activations import logsigmoid
from .arithmetic import xlogy as _xlogy
from .comparison import clamp_min, minimum, where
from .neural import _constant, add_scalar, log_softmax, sub_scalar
from .registry import Sample, register_op
from .unary import abs as _abs

_NN = "nn.functional"



# ----------------------------------------------------------------------------- helpers
def _legacy_reduction(size_average, reduce) -> str:
    """The reduction that the deprecated ``size_average``/``reduce`` flags ask for."""
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  "reduction='mean', 'sum' or 'none' instead.", UserWarning, stacklevel=4)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _reduction(reduction, name: str, size_average=None, reduce=None, extra=()) -> str:
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum") + tuple(extra):
        allowed = ", ".join(repr(r) for r in ("none", "mean", "sum") + tuple(extra))
        raise ValueError(f"{reduction} is not a valid value for reduction ({name} accepts "
                         f"{allowed})")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        if loss.numel() == 0:  # NaN, without the warning of an empty mean
            return loss.sum() * math.nan
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _as_tensor_like(value, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        return value
    from ..creation import tensor

    return tensor(value, dtype=like.dtype, device=like.device)


def _broadcast_warning(input: Tensor, target: Tensor, name: str, stacklevel: int = 3) -> None:
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"{name}(): using a target size ({target.shape}) that is different to "
                      f"the input size ({input.shape}). This will likely lead to incorrect "
                      "results due to broadcasting. Please ensure they have the same size.",
                      UserWarning, stacklevel=stacklevel)


def _float_pair(input, target, name: str, kernel: str | None = None, warn: bool = False,
                promote_input: bool = False, keep_input_dtype: bool = False):
    """input and target in one floating dtype; ``kernel``: PyTorch's kernel, whose
    refusal of other inputs is a NotImplementedError (else a RuntimeError). ``warn``: the
    size-mismatch warning, given (as PyTorch) before any broadcast error. ``promote_input``:
    an integer input takes a float target's dtype; ``keep_input_dtype``: the target takes
    the input's dtype (kernels that write into a tensor like the input)."""
    ensure_tensor(input, name)
    target = _as_tensor_like(target, input)
    if warn:
        _broadcast_warning(input, target, name, stacklevel=4)
    if promote_input and input._data.dtype.kind in "iub" and target._data.dtype.kind in "fV":
        input = input.to(target.dtype)  # an integer input takes a float target's dtype
    if input._data.dtype.kind not in "fV":
        if kernel is not None:
            _float_kernel(input, kernel, name)
        raise RuntimeError(f"{name}(): expected a floating-point input, got "
                           f"{input.dtype.name}")
    if target.dtype is not input.dtype:
        # A float target promotes with the input; an integer or bool one takes its dtype.
        common = dtypes.promote_types(input.dtype, target.dtype) \
            if target._data.dtype.kind in "fV" and not keep_input_dtype else input.dtype
        input = input.to(common) if input.dtype is not common else input
        target = target.to(common) if target.dtype is not common else target
    try:
        np.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    except ValueError:
        raise RuntimeError(f"{name}(): the size of input {list(input.shape)} and target "
                           f"{list(target.shape)} don't broadcast") from None
    return input, target


def _no_derivative(t, name: str, arg: str) -> None:
    """PyTorch refuses, at the call, an argument it has no derivative for that requires
    grad (rather than silently giving it one)."""
    if isinstance(t, Tensor) and t.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to "
                           f"argument '{arg}'. This input cannot have requires_grad True.")


def _float_kernel(input: Tensor, kernel: str, name: str) -> None:
    """PyTorch's loss kernels exist for floating-point inputs only (NotImplementedError)."""
    if input._data.dtype.kind not in "fV":
        raise dtype_not_implemented(kernel, input.dtype, f"{name}() takes a floating-point "
                                    "input: convert with .float() first")


def _elementwise_weight(loss: Tensor, weight, input: Tensor, reduction: str, mean_by_weight):
    """Apply an elementwise ``weight`` (same size as input) and reduce."""
    if weight is None:
        return _reduce(loss, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError(f"Weights and input must have the same size (weight "
                         f"{list(weight.shape)}, input {list(input.shape)}).")
    loss = loss * weight
    if reduction == "mean" and mean_by_weight:
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


class Softplus(Function):
    """``log(1 + exp(x))`` as ``max(x, 0) + log1p(exp(-|x|))``: finite for any x."""

    array_backward = True
    node_name = "SoftplusBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return array_math(ctx.xp).elementwise(_softplus_values, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return ctx.math.elementwise(_softplus_grad, grad, x)


@elementwise_formula
def _softplus_values(m, x):
    return m.cast(m.maximum(x, 0) + m.log1p(m.exp(-m.abs(x))), x)


@elementwise_formula
def _softplus_grad(m, grad, x):
    return m.cast(grad * m.sigmoid(x), x)


def _broadcasts_to(value: Tensor, input: Tensor) -> bool:
    """Whether ``value`` broadcasts to exactly the input's shape."""
    try:
        return np.broadcast_shapes(tuple(value.shape), tuple(input.shape)) == tuple(input.shape)
    except ValueError:
        return False


def _softplus(x: Tensor) -> Tensor:
    return Softplus.apply(x)


# ----------------------------------------------------------------------------- regression
def _regression_samples(make):
    return [Sample((make((3, 4)), make((3, 4), requires_grad=False)), name="mean"),
            Sample((make((3, 4)), make((3, 4))), {"reduction": "sum"},
                   name="sum, target with grad"),
            Sample((make((2, 3)), make((2, 3), requires_grad=False)), {"reduction": "none"},
                   name="none"),
            Sample((make(()), make((), requires_grad=False)), name="0-d")]


def _weighted_samples(make):
    return _regression_samples(make) + [
        Sample((make((2, 3)), make((2, 3), requires_grad=False)),
               {"weight": make((2, 3), low=0.5, high=2.0, requires_grad=False)},
               name="elementwise weight")]


@register_op(namespace=_NN, samples=_weighted_samples)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """``(input - target)^2``, reduced. Inputs broadcast (with a warning when their sizes
    differ). With an elementwise ``weight``, 'mean' is ``sum(w * loss) / sum(w)``.

    >>> F.mse_loss(ember.tensor([1.0, 2.0]), ember.tensor([0.0, 4.0]))
    tensor(2.5000)
    """
    input, target = _float_pair(input, target, "mse_loss", "mse_loss", warn=True,
                                promote_input=True)
    reduction = _reduction(reduction, "mse_loss", size_average, reduce)
    if weight is None:
        return MseLoss.apply(input, target, reduction)
    return _elementwise_weight((input - target) ** 2, weight, input, reduction, True)


@register_op(namespace=_NN, samples=_weighted_samples)
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """``|input - target|``, reduced (the gradient at 0 is 0). With an elementwise
    ``weight``, 'mean' is ``sum(w * loss) / sum(w)``."""
    ensure_tensor(input, "l1_loss")
    if input._data.dtype.kind in "iu":  # |input - target| in the promoted dtype, as PyTorch
        target = _as_tensor_like(target, input)
        _broadcast_warning(input, target, "l1_loss")
    else:
        target = _as_tensor_like(target, input)
        if target._data.dtype == np.bool_:  # PyTorch subtracts, which bool refuses
            raise RuntimeError("l1_loss(): Subtraction, the `-` operator, with a bool tensor "
                               "is not supported; convert the target with .float() first")
        input, target = _float_pair(input, target, "l1_loss", warn=True)
    reduction = _reduction(reduction, "l1_loss", size_average, reduce)
    return _elementwise_weight(_abs(input - target), weight, input, reduction, True)


def _smooth_samples(parameter):
    def samples(make):
        out = _regression_samples(make)
        out.append(Sample((make((3, 4)), make((3, 4), requires_grad=False)),
                          {parameter: 0.5}, name=f"{parameter} 0.5"))
        if parameter == "beta":
            out.append(Sample((make((2, 3)), make((2, 3), requires_grad=False)),
                              {"beta": 0.0}, name="beta 0 (L1)"))
        return out
    return samples


@register_op(namespace=_NN, samples=_smooth_samples("beta"))
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (d = input -
    target); ``beta = 0`` is the L1 loss."""
    input, target = _float_pair(input, target, "smooth_l1_loss", "smooth_l1_loss", warn=True,
                                promote_input=True)
    reduction = _reduction(reduction, "smooth_l1_loss", size_average, reduce)
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss does not support negative values for beta "
                           f"(got {beta})")
    if beta == 0:
        return _reduce(_abs(input - target), reduction)
    return SmoothL1Loss.apply(input, target, reduction, float(beta))


@register_op(namespace=_NN, samples=_smooth_samples("delta"))
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``: smooth_l1 scaled
    by delta. An elementwise ``weight`` multiplies the loss ('mean' stays a plain mean)."""
    ensure_tensor(input, "huber_loss")
    target = _as_tensor_like(target, input)
    if input._data.dtype.kind in "iub" and target._data.dtype.kind in "fV":
        raise RuntimeError(f"huber_loss(): result type {target.dtype.scalar_name} can't be cast "
                           f"to the desired output type {input.dtype.scalar_name} (convert "
                           "the input with .float() first)")
    out_dtype = input.dtype  # computed in the promoted dtype, written in the input's
    input, target = _float_pair(input, target, "huber_loss", "huber_loss", warn=True)
    reduction = _reduction(reduction, "huber_loss")
    if delta <= 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta "
                           f"(got {delta})")
    if weight is None:
        out = HuberLoss.apply(input, target, reduction, float(delta))
    else:
        loss = HuberLoss.apply(input, target, "none", float(delta))
        out = _elementwise_weight(loss, weight, input, reduction, False)
    return out if out.dtype is out_dtype else out.to(out_dtype)


# ----------------------------------------------------------------------------- classification
def _class_layout(input: Tensor, target: Tensor, name: str):
    """Checks an (N, C, d1, ...) or (C,) input against an index target; returns C."""
    if input.ndim == 0:
        raise ValueError(f"{name}(): input must have at least 1 dimension (C,) or (N, C, ...), "
                         "got a 0-d tensor")
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{target.dtype.scalar_name} "
                           f"({name}() takes class indices as int64 (or uint8) of shape "
                           f"{list(input.shape[:1]) + list(input.shape[2:])}; class "
                           f"probabilities need a float target of the input's shape "
                           f"{list(input.shape)}, this target has shape "
                           f"{list(target.shape)}; e.g. target.long())")
    if target._data.dtype == np.uint8 and input.ndim > 2:
        raise RuntimeError(f"expected scalar type Long but found Byte ({name}() takes int64 "
                           "class indices for a spatial (N, C, d1, ...) input; e.g. "
                           "target.long())")
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError(f"{name}(): an unbatched input of shape {list(input.shape)} "
                               f"needs a 0-d target, got {list(target.shape)}")
        return input.shape[0]
    if target.ndim == 0 or target.shape[0] != input.shape[0]:
        got = target.shape[0] if target.ndim else 0
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({got}).")
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"{name}(): expected target size "
                           f"{[input.shape[0]] + list(input.shape[2:])}, got "
                           f"{list(target.shape)}")
    return input.shape[1]


def _pick(log_probs: Tensor, target: Tensor, ignore_index: int, name: str):
    """(the log-probability at each target class, its valid mask, the safe indices).
    ``ignore_index`` entries pick class 0 and are masked out by the caller."""
    xp = backend.xp_for_device(log_probs._device)
    classes = log_probs.shape[0 if log_probs.ndim == 1 else 1]
    safe, valid = _safe_targets(xp, target, ignore_index, classes, name)
    if log_probs.ndim == 1:
        return log_probs[_constant(safe.reshape(1), log_probs)].reshape(()), valid, safe
    # Move the class dim last and pick one entry per remaining position.
    if log_probs.ndim == 2:  # (N, C): already in that layout
        flat = log_probs
    else:
        order = [0] + list(range(2, log_probs.ndim)) + [1]
        flat = log_probs.permute(*order).reshape(-1, classes)
    rows = xp.arange(flat.shape[0])
    picked = flat[(_constant(rows, log_probs), _constant(safe.reshape(-1), log_probs))]
    return picked.reshape(tuple(target.shape)), valid, safe


def _safe_targets(xp, target, ignore_index: int, classes: int, name: str):
    """(the target indices with ``ignore_index`` entries set to 0, the mask of the others),
    after checking that every other index names a class. ``target``: a Tensor or array."""
    indices = (target._data if isinstance(target, Tensor) else target).astype(np.int64)
    valid = indices != ignore_index
    if indices.size:
        checked = indices[valid]
        if checked.size:
            low, high = int(checked.min()), int(checked.max())
            bad = low if low < 0 else (high if high >= classes else None)
            if bad is not None:
                raise IndexError(f"Target {bad} is out of bounds: {name}() expects class "
                                 f"indices in [0, {classes}) for an input with {classes} "
                                 f"classes (or ignore_index={ignore_index})")
    return xp.where(valid, indices, 0), valid


def _class_weights(weight, classes: int, like: Tensor, name: str, promote: bool = False):
    """The checked class weights; PyTorch's index-target kernels need the input's dtype
    (``promote``: the probability-target path, plain arithmetic, promotes instead)."""
    if weight is None:
        return None
    ensure_tensor(weight, name, "weight")
    if weight.ndim != 1 or weight.shape[0] != classes:
        raise RuntimeError(f"{name}(): weight tensor should be defined either for all "
                           f"{classes} classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    if not promote and weight.dtype is not like.dtype:
        raise RuntimeError(f"expected scalar type {like.dtype.scalar_name} but found "
                           f"{weight.dtype.scalar_name} ({name}() takes a weight of the "
                           "input's dtype)")
    return weight


def _nll(log_probs, target, weight, ignore_index, reduction, name):
    classes = _class_layout(log_probs, target, name)
    weight = _class_weights(weight, classes, log_probs, name)
    if weight is not None and weight.requires_grad and is_grad_enabled():
        raise RuntimeError(f"{name}(): the derivative for 'weight' is not implemented (as in "
                           "PyTorch); pass weight.detach()")
    # PyTorch's 2-D kernel takes (N, C, H, W); other spatial inputs are viewed to it.
    flat = log_probs.ndim == 3 or log_probs.ndim > 4
    if flat:
        batch = log_probs.shape[0]
        log_probs = log_probs.reshape(batch, classes, -1, 1)
    # the targets are read inside the op, so a recorded call (ember.compile) reads each
    # call's targets
    out = NllLoss.apply(log_probs, target, weight, ignore_index, reduction, name)
    return out.reshape(tuple(target.shape)) if flat and reduction == "none" else out


def _nll_samples(make):
    from ..creation import tensor

    return [Sample((make((3, 4)), make.index((3,), 4)), name="mean"),
            Sample((make((3, 4)), tensor([1, 3, 1], device=make.device)),
                   {"weight": make((4,), low=0.5, high=2.0, requires_grad=False),
                    "ignore_index": 3}, name="weight and ignore_index"),
            Sample((make((2, 3, 2, 2)), make.index((2, 2, 2), 3)), {"reduction": "none"},
                   name="spatial none"),
            Sample((make((4,)), make.index((), 4)), {"reduction": "sum"}, name="unbatched")]


@register_op(namespace=_NN, samples=_nll_samples)
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """``-w[y] * input[y]`` for log-probabilities ``input`` (N, C, d1, ...) or (C,) and
    class indices ``y`` (N, d1, ...). Targets equal to ``ignore_index`` contribute nothing;
    'mean' divides by the summed weight of the other targets.

    >>> F.nll_loss(ember.tensor([[-0.5, -1.0]]), ember.tensor([1]))
    tensor(1.)
    """
    ensure_tensor(input, "nll_loss")
    ensure_tensor(target, "nll_loss", "target")
    reduction = _reduction(reduction, "nll_loss", size_average, reduce)
    _float_kernel(input, "nll_loss_out_frame", "nll_loss")
    return _nll(input, target, weight, ignore_index, reduction, "nll_loss")


def _cross_entropy_samples(make):
    from ..creation import tensor
    from .neural import softmax

    probabilities = softmax(make((3, 4), requires_grad=False), 1)
    return [Sample((make((3, 4)), make.index((3,), 4)), name="indices"),
            Sample((make((3, 4)), tensor([0, 2, 3], device=make.device)),
                   {"weight": make((4,), low=0.5, high=2.0, requires_grad=False),
                    "ignore_index": 2, "label_smoothing": 0.2}, name="weight, ignore, smoothing"),
            Sample((make((3, 4)), tensor([2, 1, 2], device=make.device)),
                   {"ignore_index": 2, "label_smoothing": 0.2}, name="ignore, smoothing"),
            Sample((make((2, 3, 2)), make.index((2, 2), 3)),
                   {"reduction": "sum", "label_smoothing": 0.1}, name="spatial smoothing"),
            Sample((make((3, 4)), probabilities),
                   {"weight": make((4,), low=0.5, high=2.0, requires_grad=False),
                    "label_smoothing": 0.3}, name="probabilities"),
            Sample((make((4,)), make.index((), 4)), {"reduction": "none"}, name="unbatched")]


@register_op(namespace=_NN, samples=_cross_entropy_samples)
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross-entropy between logits ``input`` (N, C, d1, ...) or (C,) and either class
    indices (int64, shape (N, d1, ...)) or class probabilities (float, the input's shape):
    ``-sum_c w_c q_c log_softmax(x)_c``. Computed through log_softmax, so it stays finite
    for any finite logits. ``label_smoothing`` e mixes the target with the uniform
    distribution: ``q = (1 - e) q + e / C``. With indices, ``ignore_index`` targets are
    skipped and the weighted 'mean' divides by the total weight of the counted targets.

    >>> F.cross_entropy(ember.tensor([[2.0, 0.5, -1.0]]), ember.tensor([0]))
    tensor(0.2413)
    """
    ensure_tensor(input, "cross_entropy")
    ensure_tensor(target, "cross_entropy", "target")
    reduction = _reduction(reduction, "cross_entropy", size_average, reduce)
    if label_smoothing > 1.0:  # (PyTorch ignores a value <= 0 rather than refusing it)
        raise RuntimeError(f"cross_entropy(): label_smoothing must be between 0.0 and 1.0. "
                           f"Got: {label_smoothing}")
    _float_kernel(input, "log_softmax", "cross_entropy")
    class_dim = 0 if input.ndim == 1 else 1
    if input.ndim == 0:
        raise RuntimeError("cross_entropy(): input must have at least 1 dimension, got 0-d")
    log_probs = log_softmax(input, class_dim)
    classes = input.shape[class_dim]
    if tuple(target.shape) == tuple(input.shape) and input.ndim > 0:
        if target._data.dtype.kind not in "fV":
            raise RuntimeError(f"Expected floating point type for target with class "
                               f"probabilities, got "
                               f"{target.dtype.scalar_name}")
        if ignore_index >= 0:
            raise RuntimeError(f"cross_entropy(): ignore_index is not supported for floating "
                               f"point target (class probabilities), got ignore_index="
                               f"{ignore_index}")
        # plain arithmetic in PyTorch: target and weight promote with the input
        return _cross_entropy_probabilities(log_probs, target, weight, reduction,
                                            label_smoothing, class_dim, classes)
    loss = _nll(log_probs, target, weight, ignore_index, reduction, "cross_entropy")
    if label_smoothing <= 0.0:
        return loss
    weight = _class_weights(weight, classes, input, "cross_entropy")
    broadcast = [1] * input.ndim
    broadcast[class_dim] = classes
    spread = log_probs if weight is None else log_probs * weight.reshape(tuple(broadcast))
    smooth = -spread.sum(class_dim)
    valid = target._data != ignore_index
    smooth = where(_constant(valid, smooth), smooth, 0.0)
    if reduction == "mean":
        if not valid.any():  # nothing counted: 0 / 0, as the nll term
            smooth = smooth.sum() * math.nan
        elif weight is None:
            smooth = smooth.sum() / int(valid.sum())  # over the counted targets
        else:
            xp = backend.xp_for_device(input._device)
            counted = _constant(xp.where(valid, target._data, 0)[valid].astype(np.int64), input)
            smooth = smooth.sum() / weight[counted].sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1.0 - label_smoothing) * loss + smooth * (label_smoothing / classes)


def _cross_entropy_probabilities(log_probs, target, weight, reduction, smoothing, class_dim,
                                 classes):
    if smoothing > 0.0:
        target = target * (1.0 - smoothing) + smoothing / classes
    weight = _class_weights(weight, classes, log_probs, "cross_entropy", promote=True)
    terms = log_probs * target
    if weight is not None:
        broadcast = [1] * log_probs.ndim
        broadcast[class_dim] = classes
        terms = terms * weight.reshape(tuple(broadcast))
    loss = -terms.sum(class_dim)
    return _reduce(loss, reduction)


# ----------------------------------------------------------------------------- binary
class BinaryCrossEntropy(Function):
    """``-w (t log x + (1 - t) log(1 - x))`` with both logs clamped at -100 (PyTorch's
    convention, so x = 0 or 1 give a finite loss), reduced; ``w`` broadcasts to x."""

    array_backward = True
    node_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, x, t, weight, reduction):
        _start(ctx, reduction, x.shape)
        ctx.save_for_backward(x, t, weight)
        with np.errstate(divide="ignore"):
            loss = array_math(ctx.xp).elementwise(_bce_values, x, t, weight)
        return _reduce_array(ctx.xp, loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, t, weight = ctx.saved_tensors
        need_x, need_t, need_w = ctx.needs_input_grad[:3]
        plain = _scaled(ctx, grad)
        grad = plain if weight is None else plain * weight
        grad_x = grad_t = grad_w = None
        if need_x:
            grad_x = m.elementwise(_bce_grad_input, grad, x, t)
        if need_t:
            # PyTorch's -logit(x), unclamped: infinite at x = 0 or 1
            with np.errstate(divide="ignore", invalid="ignore"):
                grad_t = grad * -m.log(x / (1.0 - x))
        if need_w:
            with np.errstate(divide="ignore"):  # log(0) = -inf, clamped just below
                log_x = m.log(x)
                log_rest = m.log(1.0 - x)
            log_x = m.where(log_x > -100.0, log_x, -100.0)
            log_rest = m.where(log_rest > -100.0, log_rest, -100.0)
            loss = -(t * log_x + (1.0 - t) * log_rest)
            grad_w = m.sum_to_shape(loss * plain, weight.shape)
        return grad_x, grad_t, grad_w, None


@elementwise_formula
def _bce_values(m, x, t, weight):
    log_x = m.maximum(m.log(x), -100.0)
    log_rest = m.maximum(m.log1p(-x), -100.0)
    loss = -(t * log_x + (1.0 - t) * log_rest)
    if weight is not None:
        loss = loss * weight
    return m.cast(loss, x)


@elementwise_formula
def _bce_grad_input(m, grad, x, t):
    # (x - t) / (x (1 - x)), the denominator clamped at 1e-12 as PyTorch does.
    spread = x * (1.0 - x)
    return m.cast(grad * (x - t) / m.where(spread > 1e-12, spread, 1e-12), x)


def _bce_samples(make):
    return [Sample((make((3, 4), low=0.05, high=0.95), make((3, 4), 0, 1, requires_grad=False)),
                   name="mean"),
            Sample((make((2, 3), low=0.05, high=0.95), make((2, 3), 0, 1, requires_grad=False),
                    make((2, 3), 0.5, 2, requires_grad=False)), {"reduction": "sum"},
                   name="weight sum"),
            Sample((make((4,), low=0.05, high=0.95), make((4,), 0, 1, requires_grad=False),
                    make((1,), 0.5, 2, requires_grad=False)), {"reduction": "none"},
                   name="broadcast weight none")]


@register_op(namespace=_NN, samples=_bce_samples)
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """``-w (t log x + (1 - t) log(1 - x))`` for probabilities ``x`` in [0, 1]; each log is
    clamped at -100, so saturated inputs give a finite loss and gradient. ``weight``
    broadcasts to the input."""
    ensure_tensor(input, "binary_cross_entropy")
    target = _as_tensor_like(target, input)
    reduction = _reduction(reduction, "binary_cross_entropy", size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                         f"input size ({input.shape}) is deprecated. Please ensure they have "
                         "the same size.")
    _float_kernel(input, "binary_cross_entropy", "binary_cross_entropy")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {target.dtype.scalar_name} but expected "
                           f"{input.dtype.scalar_name} (binary_cross_entropy() takes a target "
                           "of the input's dtype)")
    _check_unit_range(input, "input", " (binary_cross_entropy takes probabilities; use "
                      "binary_cross_entropy_with_logits for logits)")
    _check_unit_range(target, "target", "")
    if weight is not None:
        ensure_tensor(weight, "binary_cross_entropy", "weight")
        _no_derivative(weight, "binary_cross_entropy", "weight")
        if not _broadcasts_to(weight, input):
            raise RuntimeError(f"binary_cross_entropy(): weight of shape {list(weight.shape)} "
                               f"does not broadcast to the input's shape "
                               f"{list(input.shape)}")
        weight = weight.to(input.dtype) if weight.dtype is not input.dtype else weight
    return BinaryCrossEntropy.apply(input, target, weight, reduction)


def _check_unit_range(t: Tensor, what: str, hint: str) -> None:
    """PyTorch's check that BCE's input and target are in [0, 1]: a min and a max (no
    temporaries); NaN fails both comparisons."""
    data = t._data
    if data.size and not (0 <= data.min() and data.max() <= 1):
        raise RuntimeError(f"all elements of {what} should be between 0 and 1{hint}")


def _bce_logits_samples(make):
    return [Sample((make((3, 4), -4, 4), make((3, 4), 0, 1, requires_grad=False)), name="mean"),
            Sample((make((2, 3), -4, 4), make((2, 3), 0, 1, requires_grad=False)),
                   {"weight": make((3,), 0.5, 2, requires_grad=False),
                    "pos_weight": make((3,), 0.5, 3, requires_grad=False), "reduction": "sum"},
                   name="weight and pos_weight"),
            Sample((make((4,), -4, 4), make((4,), 0, 1)), {"reduction": "none"},
                   name="target with grad"),
            Sample((make((2, 3), -60, 60), make((2, 3), 0, 1, requires_grad=False)),
                   name="large logits")]


@register_op(namespace=_NN, samples=_bce_logits_samples)
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Binary cross-entropy of ``sigmoid(x)`` computed from the logits ``x`` in the stable
    form ``(1 - t) x + (1 + (p - 1) t) softplus(-x)`` (p = ``pos_weight``, broadcast over
    the class dim), times ``weight``; finite for any finite x.

    >>> F.binary_cross_entropy_with_logits(ember.tensor([100.0, -100.0]),
    ...                                    ember.tensor([0.0, 0.0]))
    tensor(50.)
    """
    ensure_tensor(input, "binary_cross_entropy_with_logits")
    target = _as_tensor_like(target, input)
    reduction = _reduction(reduction, "binary_cross_entropy_with_logits", size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    _float_kernel(input, "log_sigmoid", "binary_cross_entropy_with_logits")
    # PyTorch builds the loss in place in a tensor of the target's dtype: an integer or
    # bool target fails, a float one promotes and gives the result its dtype
    out_dtype = target.dtype
    if target._data.dtype.kind not in "fV":
        raise RuntimeError(f"binary_cross_entropy_with_logits(): result type "
                           f"{input.dtype.scalar_name} can't be cast to the desired output "
                           f"type {out_dtype.scalar_name} (the target must be floating "
                           "point, e.g. target.float())")
    common = input.dtype if out_dtype is input.dtype else \
        dtypes.promote_types(input.dtype, out_dtype)
    input = input.to(common) if input.dtype is not common else input
    target = target.to(common) if target.dtype is not common else target
    for extra, arg in ((weight, "weight"), (pos_weight, "pos_weight")):
        if extra is not None:
            ensure_tensor(extra, "binary_cross_entropy_with_logits", arg)
            _no_derivative(extra, "binary_cross_entropy_with_logits", arg)
            if not _broadcasts_to(extra, input):
                raise RuntimeError(f"binary_cross_entropy_with_logits(): {arg} of shape "
                                   f"{list(extra.shape)} does not broadcast to the input's "
                                   f"shape {list(input.shape)}")
    weight = weight.to(common) if weight is not None and weight.dtype is not common \
        else weight
    pos_weight = pos_weight.to(common) \
        if pos_weight is not None and pos_weight.dtype is not common else pos_weight
    out = BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)
    return out if out.dtype is out_dtype else out.to(out_dtype)


def _kl_samples(make):
    from .neural import log_softmax as _log_softmax
    from .neural import softmax

    return [Sample((_log_softmax(make((3, 4)), 1), softmax(make((3, 4), requires_grad=False), 1)),
                   {"reduction": "batchmean"}, name="batchmean"),
            Sample((make((3, 4)), make((3, 4), 0.1, 1)), {"reduction": "sum"},
                   name="target with grad"),
            Sample((make((2, 3)), make((2, 3), -2, 0)), {"reduction": "none", "log_target": True},
                   name="log_target")]


@register_op(namespace=_NN, samples=_kl_samples)
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise KL divergence ``t (log t - input)`` with log-probabilities ``input``
    (``0`` where t = 0); with ``log_target`` the target is given as log t:
    ``exp(t) (t - input)``. 'batchmean' divides the sum by the batch size (the KL
    divergence per sample); 'mean' divides by the element count (with a warning)."""
    ensure_tensor(input, "kl_div")
    target = _as_tensor_like(target, input)
    legacy = size_average is not None or reduce is not None
    reduction = _reduction(reduction, "kl_div", size_average, reduce, extra=("batchmean",))
    if reduction == "mean" and not legacy:
        warnings.warn("kl_div(): reduction='mean' divides the total loss by both the batch "
                      "size and the support size; 'batchmean' divides by the batch size "
                      "only, which is the KL divergence. 'mean' will behave as 'batchmean' in "
                      "a future release.", UserWarning, stacklevel=2)
    if input._data.dtype.kind in "iu" or target._data.dtype.kind in "iu":
        raise RuntimeError("kl_div: Integral inputs not supported (convert with .float() "
                           "first).")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # xlogy, as PyTorch: NaN for a negative target, and its derivative at t = 0
        with np.errstate(invalid="ignore", divide="ignore"):
            loss = _xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


# ----------------------------------------------------------------------------- likelihoods
def _poisson_samples(make):
    return [Sample((make((3, 4)), make((3, 4), 0, 3, requires_grad=False)), name="log input"),
            Sample((make((2, 3), 0.2, 3), make((2, 3), 0, 3, requires_grad=False)),
                   {"log_input": False, "full": True, "reduction": "sum"},
                   name="rates, full"),
            Sample((make((4,)), make((4,), 0.5, 4, requires_grad=False)),
                   {"full": True, "reduction": "none"}, name="full none")]


@register_op(namespace=_NN, samples=_poisson_samples)
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Negative log-likelihood of ``target`` under a Poisson distribution with rate
    ``exp(input)`` (``log_input``: ``exp(x) - t x``) or rate ``input`` (``x - t log(x +
    eps)``). ``full`` adds Stirling's approximation of ``log(t!)``, ``t log t - t +
    0.5 log(2 pi t)``, for t > 1."""
    if isinstance(input, Tensor) and input._data.dtype.kind in "iu":
        input = float_operand(input, "poisson_nll_loss")  # exp(x): the default float dtype
    input, target = _float_pair(input, target, "poisson_nll_loss")
    reduction = _reduction(reduction, "poisson_nll_loss", size_average, reduce)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        above = target > 1
        safe = where(above, target, 1.0)
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + where(above, stirling, 0.0)
    return _reduce(loss, reduction)


def _gaussian_samples(make):
    return [Sample((make((3, 4)), make((3, 4), requires_grad=False), make((3, 4), 0.2, 2)),
                   name="heteroscedastic"),
            Sample((make((3, 2)), make((3, 2), requires_grad=False), make((3,), 0.2, 2)),
                   {"full": True, "reduction": "sum"}, name="one dim short"),
            Sample((make((2, 3)), make((2, 3)), make((2, 1), 0.2, 2)), {"reduction": "none"},
                   name="broadcast var"),
            Sample((make((2, 3)), make((2, 3), requires_grad=False), 0.5), name="float var")]


@register_op(namespace=_NN, samples=_gaussian_samples)
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log-likelihood of ``target`` under N(input, var):
    ``0.5 (log var + (input - target)^2 / var)`` (+ ``0.5 log(2 pi)`` with ``full``).
    ``var`` matches the input, is one dim short of it, or differs in one broadcast dim;
    it is clamped at ``eps`` with the gradient passed through unchanged (as PyTorch)."""
    input, target = _float_pair(input, target, "gaussian_nll_loss")
    if not isinstance(var, Tensor):
        if var < 0:
            raise ValueError("gaussian_nll_loss(): var has negative entry/entries")
        var = _constant(backend.xp_for_device(input._device).full(
            input._data.shape, float(var), dtype=input._data.dtype), input)
    elif var._data.size and bool((var._data < 0).any()):
        raise ValueError("gaussian_nll_loss(): var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif var.ndim != input.ndim or sum(v for i, v in zip(input.shape, var.shape)
                                          if i != v) != 1:
            raise ValueError(f"gaussian_nll_loss(): var is of incorrect size "
                             f"{list(var.shape)} for input {list(input.shape)} (expected the "
                             "input's size, one dim less, or a 1 in one dim)")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
    # Clamp the values, not the graph (PyTorch clamps a clone in place under no_grad)
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# ----------------------------------------------------------------------------- margins
def _sign_target(make, shape):
    values = make.int(shape, 0, 2) * 2 - 1
    return values.to(make.dtype)


def _ranking_samples(make):
    return [Sample((make((4,)), make((4,)), _sign_target(make, (4,))), name="mean"),
            Sample((make((4,)), make((4,)), _sign_target(make, (4,))),
                   {"margin": 0.5, "reduction": "none"}, name="margin none")]


@register_op(namespace=_NN, samples=_ranking_samples)
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -y (x1 - x2) + margin)`` with ``y`` in {1, -1}: x1 should rank above x2
    where y = 1."""
    for t, arg in ((input1, "input1"), (input2, "input2"), (target, "target")):
        ensure_tensor(t, "margin_ranking_loss", arg)
    reduction = _reduction(reduction, "margin_ranking_loss", size_average, reduce)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.shape}, input2: "
                           f"{input2.shape}, target: {target.shape} ")
    # (the margin as a Scalar operand, AddBackward1, as in PyTorch's graph)
    ranked = float_operand(-target * (input1 - input2), "margin_ranking_loss")
    return _reduce(clamp_min(add_scalar(ranked, margin), 0), reduction)


def _hinge_samples(make):
    return [Sample((make((3, 4)), _sign_target(make, (3, 4))), name="mean"),
            Sample((make((4,)), _sign_target(make, (4,))), {"margin": 0.5, "reduction": "none"},
                   name="margin none")]


@register_op(namespace=_NN, samples=_hinge_samples)
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``x`` where y = 1 and ``max(0, margin - x)`` where y = -1 (for distances ``x``
    between pairs that are similar or not); other y values get both terms."""
    ensure_tensor(input, "hinge_embedding_loss")
    reduction = _reduction(reduction, "hinge_embedding_loss", size_average, reduce)
    target = _as_tensor_like(target, input)
    # (zeros of the input's dtype: integer inputs keep it, as in PyTorch)
    below = where(target != 1, clamp_min(_as_tensor_like(margin, input) - input, 0), 0)
    same = where(target != -1, input, 0)
    return _reduce(below + same, reduction)


def _soft_margin_samples(make):
    return [Sample((make((3, 4)), _sign_target(make, (3, 4))), name="mean"),
            Sample((make((4,)), _sign_target(make, (4,))), {"reduction": "sum"}, name="sum")]


@register_op(namespace=_NN, samples=_soft_margin_samples)
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Two-class logistic loss ``log(1 + exp(-y x))`` for ``y`` in {1, -1} (stable)."""
    ensure_tensor(input, "soft_margin_loss")
    target = _as_tensor_like(target, input)
    if target._data.dtype == np.bool_:  # PyTorch negates the target, which bool refuses
        raise RuntimeError("soft_margin_loss(): Negation, the `-` operator, on a bool tensor "
                           "is not supported; pass a target of 1 and -1 as floats")
    input, target = _float_pair(input, target, "soft_margin_loss", keep_input_dtype=True)
    reduction = _reduction(reduction, "soft_margin_loss", size_average, reduce)
    _no_derivative(target, "soft_margin_loss", "target")
    return SoftMarginLoss.apply(input, target, reduction)


def _multi_margin_samples(make):
    return [Sample((make((3, 4)), make.index((3,), 4)), name="p=1"),
            Sample((make((3, 4)), make.index((3,), 4)),
                   {"p": 2, "margin": 0.5, "weight": make((4,), 0.5, 2, requires_grad=False),
                    "reduction": "none"}, name="p=2 weight none"),
            Sample((make((4,)), make.index((), 4)), {"reduction": "sum"}, name="unbatched"),
            Sample((make((5, 3)), make.index((5,), 3)),
                   {"p": 2, "margin": 1.5, "weight": make((3,), 0.5, 2, requires_grad=False)},
                   name="p=2 weight mean"),
            Sample((make((4,)), make.index((1,), 4)), {"reduction": "none", "margin": 2.0},
                   name="unbatched none")]


@register_op(namespace=_NN, samples=_multi_margin_samples)
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss: ``sum_{i != y} w_y max(0, margin - x_y + x_i)^p / C`` per
    sample, for scores (N, C) or (C,) and class indices y; p is 1 or 2; ``weight`` (C,)
    scales each sample's loss by its class's weight. One node (MultiMarginLossBackward0);
    time O(N C).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> x = ember.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> F.multi_margin_loss(x, ember.tensor([3]))
    tensor(0.3250)
    """
    ensure_tensor(input, "multi_margin_loss")
    ensure_tensor(target, "multi_margin_loss", "target")
    reduction = _reduction(reduction, "multi_margin_loss", size_average, reduce)
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss(): only p == 1 and p == 2 supported, got {p}")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"multi_margin_loss(): expected a 1-D or 2-D input, got "
                           f"{list(input.shape)}")
    unbatched = input.ndim == 1
    classes = input.shape[-1]
    rows = 1 if unbatched else input.shape[0]
    if target.ndim > 1 or target.numel() != rows or not unbatched and target.ndim != 1:
        raise RuntimeError(f"multi_margin_loss(): inconsistent target size "
                           f"{list(target.shape)} for input of size {list(input.shape)}")
    _float_kernel(input, "multi_margin_loss_cpu_kernel", "multi_margin_loss")
    if target.dtype is not dtypes.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.scalar_name} "
                           "(multi_margin_loss() takes int64 class indices)")
    if weight is not None and weight.ndim != 1:
        raise ValueError(f"multi_margin_loss(): weight must be one-dimensional, got shape "
                         f"{list(weight.shape)}")
    labels = target._data
    if labels.size and bool(((labels < 0) | (labels >= classes)).any()):
        raise RuntimeError(f"multi_margin_loss(): target out of range: class indices must be "
                           f"in [0, {classes})")
    weight = _class_weights(weight, classes, input, "multi_margin_loss")
    if weight is not None and weight.requires_grad and is_grad_enabled():
        raise RuntimeError("multi_margin_loss(): the derivative for 'weight' is not "
                           "implemented (as in PyTorch); pass weight.detach()")
    if isinstance(margin, Tensor):
        margin = margin.item()
    # the targets are read inside the op, so a recorded call (ember.compile) reads each
    # call's targets
    return MultiMarginLoss.apply(input, target, weight, int(p), float(margin), reduction)


class MultiMarginLoss(Function):
    """``sum_{i != y} w_y max(0, margin - x_y + x_i)^p / C`` per row of (N, C) or (C,)
    scores, reduced. Backward: each active hinge (``z > 0``) adds ``w_y p z^(p-1) / C`` to
    ``x_i`` and takes it from ``x_y``; the hinges are recomputed from x, so under
    create_graph the same lines give the double backward (zero for p = 1)."""

    array_backward = True
    node_name = "MultiMarginLossBackward0"

    @staticmethod
    def forward(ctx, x, target, weight, p, margin, reduction):
        xp = ctx.xp
        classes = x.shape[-1]
        scores = x.reshape(-1, classes)
        safe, _ = _safe_targets(xp, target.reshape(-1), -(2 ** 62), classes,
                                "multi_margin_loss")
        rows = xp.arange(scores.shape[0])
        others = xp.ones(scores.shape, dtype=bool)
        others[rows, safe] = False
        hinge = margin - scores[rows, safe][:, None] + scores
        hinge = xp.where(others & (hinge > 0), hinge, 0)
        if p == 2:
            hinge = hinge * hinge
        scale = xp.full((scores.shape[0],), 1.0 / classes, dtype=x.dtype)
        if weight is not None:
            scale = scale * weight[safe]
        losses = hinge.sum(axis=1) * scale
        ctx.p, ctx.margin, ctx.reduction, ctx.count = p, margin, reduction, scores.shape[0]
        ctx.shape = x.shape
        ctx.save_for_backward(x, others, scale)
        losses = losses.astype(x.dtype, copy=False)
        if reduction == "none":
            return losses.reshape(target.shape) if x.ndim == 1 else losses
        return _reduce_array(xp, losses, reduction)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, others, scale = ctx.saved_tensors
        if not ctx.needs_input_grad[0]:
            return None, None, None, None, None, None
        scores = m.reshape(x, (ctx.count, ctx.shape[-1]))
        mask = m.cast(others, scores)
        own = m.sum(scores * (1 - mask), 1, True)   # x_y: the one entry outside ``others``
        hinge = ctx.margin - own + scores
        active = m.cast(hinge > 0, scores) * mask
        slope = active if ctx.p == 1 else 2 * hinge * active
        per_row = (m.reshape(grad, (ctx.count,)) if ctx.reduction == "none"
                   else _scaled(ctx, grad)) * scale
        spread = slope * m.unsqueeze(per_row, -1)
        grad_x = spread - (1 - mask) * m.sum(spread, 1, True)
        return m.reshape(grad_x, ctx.shape), None, None, None, None, None


def _multilabel_target(make, shape, classes):
    rows = []
    for r in range(shape[0]):
        picks = list(make.rng.permutation(classes)[: 1 + r % (classes - 1)])
        rows.append(picks + [-1] * (classes - len(picks)))
    from ..creation import tensor

    return tensor(rows, device=make.device)


def _multilabel_samples(make):
    return [Sample((make((3, 4)), _multilabel_target(make, (3, 4), 4)), name="mean"),
            Sample((make((2, 3)), _multilabel_target(make, (2, 3), 3)), {"reduction": "none"},
                   name="none")]


@register_op(namespace=_NN, samples=_multilabel_samples)
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: for each sample, ``sum_{j in Y, i not in Y} max(0, 1 - (x_j -
    x_i)) / C``, where Y holds the target's class indices up to its first -1. Costs
    O(N C^2)."""
    ensure_tensor(input, "multilabel_margin_loss")
    ensure_tensor(target, "multilabel_margin_loss", "target")
    reduction = _reduction(reduction, "multilabel_margin_loss", size_average, reduce)
    _float_kernel(input, "multilabel_margin_loss_forward_out_frame", "multilabel_margin_loss")
    if input.ndim not in (1, 2) or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"multilabel_margin_loss(): expected input and target of the same "
                           f"shape (C,) or (N, C), got {list(input.shape)} and "
                           f"{list(target.shape)}")
    if target._data.dtype != np.int64:
        raise RuntimeError(f"multilabel_margin_loss(): expected an int64 target, got "
                           f"{target.dtype.name}")
    labels = target._data.reshape((-1, input.shape[-1]))
    xp = backend.xp_for_device(input._device)
    classes = labels.shape[1]
    # Slots before the first -1 are targets; the rest are ignored.
    listed = xp.cumprod(labels >= 0, axis=1).astype(bool)
    # PyTorch checks every entry, those after the first -1 too
    if labels.size and (int(labels.min()) < -1 or int(labels.max()) >= classes):
        raise RuntimeError(f"multilabel_margin_loss(): argument #2 'target' is out of range: "
                           f"entries must be class indices in [0, {classes}) or -1")
    return MultilabelMarginLoss.apply(input, xp.where(listed, labels, 0), listed, reduction)


class MultilabelMarginLoss(Function):
    """One node, as PyTorch's. The loss is piecewise linear in x, so its gradient is a
    coefficient matrix worked out in forward (+1/C on each non-target class of an active
    pair, -1/C on its target class) times the incoming gradient; gradients of gradients
    are zero."""

    array_backward = True
    node_name = "MultilabelMarginLossBackward0"

    @staticmethod
    def forward(ctx, x, safe, listed, reduction):
        xp = ctx.xp
        scores = x.reshape((-1, x.shape[-1]))
        rows, classes = scores.shape
        index = xp.broadcast_to(xp.arange(rows)[:, None], safe.shape)
        is_target = xp.zeros(scores.shape, dtype=bool)
        is_target[index[listed], safe[listed]] = True
        chosen = xp.take_along_axis(scores, safe, axis=1)              # (N, slots)
        margins = 1.0 - chosen[:, :, None] + scores[:, None, :]          # (N, slots, C)
        active = (margins > 0) & listed[:, :, None] & ~is_target[:, None, :]
        per_sample = (margins * active).sum(axis=(1, 2)) / classes
        coefficients = active.sum(axis=1).astype(scores.dtype)          # d/d x_i
        backend.scatter_add(coefficients, (index, safe),
                            -(active.sum(axis=2) * listed).astype(scores.dtype))
        coefficients /= classes
        ctx.reduction, ctx.shape = reduction, x.shape
        ctx.save_for_backward(coefficients)
        if reduction == "mean":
            return xp.asarray(per_sample.mean() if rows else xp.nan, dtype=scores.dtype)
        if reduction == "sum":
            return xp.asarray(per_sample.sum(), dtype=scores.dtype)
        return per_sample.reshape(x.shape[:-1]).astype(scores.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (coefficients,) = ctx.saved_tensors
        if ctx.reduction == "none":
            grad = m.reshape(grad, (-1, 1))
        elif ctx.reduction == "mean" and coefficients.shape[0]:
            grad = grad / coefficients.shape[0]
        return m.reshape(grad * coefficients, ctx.shape), None, None, None


def _multilabel_soft_samples(make):
    return [Sample((make((3, 4)), make.int((3, 4), 0, 2).to(make.dtype)), name="mean"),
            Sample((make((2, 3)), make((2, 3), 0, 1, requires_grad=False)),
                   {"weight": make((3,), 0.5, 2, requires_grad=False), "reduction": "none"},
                   name="weight none")]


@register_op(namespace=_NN, samples=_multilabel_soft_samples)
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Per-class logistic loss averaged over the C classes of each sample:
    ``-mean_c w_c (t_c log sigmoid(x_c) + (1 - t_c) log sigmoid(-x_c))``."""
    input, target = _float_pair(input, target, "multilabel_soft_margin_loss", "log_sigmoid")
    reduction = _reduction(reduction, "multilabel_soft_margin_loss", size_average, reduce)
    loss = -(target * logsigmoid(input) + (1.0 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    classes = input.shape[-1] if input.ndim else 1
    loss = loss.sum(-1) / classes if input.ndim else loss
    return _reduce(loss, reduction)


def _triplet_samples(make):
    return [Sample((make((3, 4)), make((3, 4)), make((3, 4))), name="p=2"),
            Sample((make((3, 4)), make((3, 4)), make((3, 4))),
                   {"margin": 0.5, "p": 1, "swap": True, "reduction": "none"}, name="p=1 swap"),
            Sample((make((4,)), make((4,)), make((4,))), name="unbatched")]


@register_op(namespace=_NN, samples=_triplet_samples)
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the pairwise p-norm distance
    (``swap``: use ``min(d(a, n), d(p, n))``)."""
    from .neural import pairwise_distance

    for t, arg in ((anchor, "anchor"), (positive, "positive"), (negative, "negative")):
        ensure_tensor(t, "triplet_margin_loss", arg)
    reduction = _reduction(reduction, "triplet_margin_loss", size_average, reduce)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {anchor.ndim}D, "
                           f"positive {positive.ndim}D, and negative {negative.ndim}D inputs")
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: expected margin to be greater than 0, got "
                         f"{margin} instead")
    near = pairwise_distance(anchor, positive, p, eps)
    far = pairwise_distance(anchor, negative, p, eps)
    if swap:
        far = minimum(far, pairwise_distance(positive, negative, p, eps))
    return _reduce(clamp_min(add_scalar(near, margin) - far, 0), reduction)


def _cosine_embedding_samples(make):
    return [Sample((make((3, 4)), make((3, 4)), _sign_target(make, (3,))), name="mean"),
            Sample((make((4,)), make((4,)), _sign_target(make, ())),
                   {"margin": 0.2, "reduction": "none"}, name="unbatched")]


@register_op(namespace=_NN, samples=_cosine_embedding_samples)
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(x1, x2)`` where y = 1 and ``max(0, cos(x1, x2) - margin)`` where y = -1,
    the cosine taken along the last dim as ``<x1, x2> / sqrt((|x1|^2 + e)(|x2|^2 + e))``
    with e = 1e-12."""
    for t, arg in ((input1, "input1"), (input2, "input2"), (target, "target")):
        ensure_tensor(t, "cosine_embedding_loss", arg)
    reduction = _reduction(reduction, "cosine_embedding_loss", size_average, reduce)
    if input1.shape != input2.shape or input1.ndim not in (1, 2) or \
            target.ndim != input1.ndim - 1:
        raise RuntimeError(f"cosine_embedding_loss(): expected input1 and input2 of the same "
                           f"shape (D,) or (N, D) and target () or (N,), got "
                           f"{list(input1.shape)}, {list(input2.shape)} and "
                           f"{list(target.shape)}")
    # PyTorch's composition, step for step (its graph shows these nodes)
    dot = (input1 * input2).sum(-1)
    # (integer sums meet the Python float as the default float dtype)
    squares = add_scalar(float_operand((input1 * input1).sum(-1), "cosine_embedding_loss"),
                         1e-12) * \
        add_scalar(float_operand((input2 * input2).sum(-1), "cosine_embedding_loss"), 1e-12)
    cosine = dot / squares.sqrt()
    xp = backend.xp_for_device(cosine._device)
    zeros = _constant(xp.zeros(cosine._data.shape, cosine._data.dtype), cosine)
    ones = _constant(xp.ones(cosine._data.shape, cosine._data.dtype), cosine)
    loss = where(target == 1, ones - cosine, zeros) + \
        where(target == -1, clamp_min(sub_scalar(cosine, margin), 0), zeros)
    return _reduce(loss, reduction)


# ----------------------------------------------------------------------------- CTC
def _shift_right(xp, a, k, fill):
    """``a`` moved k places along the last axis, the first k filled with ``fill``."""
    pad = xp.full(a.shape[:-1] + (k,), fill, dtype=a.dtype)
    return xp.concatenate([pad, a[..., :-k]], axis=-1) if a.shape[-1] > k else \
        xp.full(a.shape, fill, dtype=a.dtype)


def _shift_left(xp, a, k, fill):
    pad = xp.full(a.shape[:-1] + (k,), fill, dtype=a.dtype)
    return xp.concatenate([a[..., k:], pad], axis=-1) if a.shape[-1] > k else \
        xp.full(a.shape, fill, dtype=a.dtype)


def _ctc_arrays(xp, log_probs, labels, input_lengths, target_lengths, blank):
    """The CTC negative log-likelihood per sample and its gradient with respect to
    ``log_probs`` (T, N, C), by the forward (alpha) and backward (beta) recursions in log
    space over the blank-extended labels (N, 2L + 1). Vectorized over the batch and the
    labels; the only loop is over time. Costs O(T N L) plus O(T N L C) for the gradient's
    per-class sums (one batched matrix product)."""
    steps, batch, classes = log_probs.shape
    width = 2 * labels.shape[1] + 1
    neg = -np.inf
    extended = xp.full((batch, width), blank, dtype=np.int64)
    extended[:, 1::2] = labels
    # A label may be reached from two places back unless it repeats the label there.
    skip = xp.zeros((batch, width), dtype=bool)
    skip[:, 2:] = (extended[:, 2:] != blank) & (extended[:, 2:] != extended[:, :-2])
    skip_next = _shift_left(xp, skip, 2, False)
    positions = xp.arange(width)[None, :]
    live = positions < (2 * target_lengths + 1)[:, None]
    emit = xp.take_along_axis(log_probs, xp.broadcast_to(extended[None], (steps, batch, width)),
                              axis=2)
    emit = xp.where(live[None], emit, neg)
    end = 2 * target_lengths                                   # last blank
    rows = xp.arange(batch)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = xp.full((steps, batch, width), neg, dtype=log_probs.dtype)
        start = xp.where(positions < 2, emit[0], neg)
        alpha[0] = xp.where((input_lengths > 0)[:, None], start, neg)
        for t in range(1, steps):
            prev = alpha[t - 1]
            total = xp.logaddexp(prev, _shift_right(xp, prev, 1, neg))
            total = xp.logaddexp(total, xp.where(skip, _shift_right(xp, prev, 2, neg), neg))
            alpha[t] = xp.where((t < input_lengths)[:, None], total + emit[t], neg)
        last = alpha[xp.maximum(input_lengths - 1, 0), rows]    # (N, S)
        final = xp.logaddexp(last[rows, end],
                             xp.where(end > 0, last[rows, xp.maximum(end - 1, 0)], neg))
        final = xp.where(input_lengths > 0, final, xp.where(target_lengths == 0, 0.0, neg))
        nll = -final

        beta = xp.full((steps, batch, width), neg, dtype=log_probs.dtype)
        at_end = (positions == end[:, None]) | ((positions == (end - 1)[:, None]) &
                                                (end > 0)[:, None])
        nxt = xp.full((batch, width), neg, dtype=log_probs.dtype)
        for t in range(steps - 1, -1, -1):
            total = xp.logaddexp(nxt, _shift_left(xp, nxt, 1, neg))
            total = xp.logaddexp(total, xp.where(skip_next, _shift_left(xp, nxt, 2, neg), neg))
            inner = total + emit[t]
            first = xp.where(at_end, emit[t], neg)
            here = xp.where((t == input_lengths - 1)[:, None], first,
                            xp.where((t < input_lengths - 1)[:, None], inner, neg))
            beta[t] = here
            nxt = here

        # d nll / d log_probs[t, n, c] = -exp(logsumexp_{s: ext(s) = c}(alpha + beta)
        #                                     + nll - log_probs[t, n, c])
        occupancy = alpha + beta                                 # (T, N, S)
        peak = occupancy.max(axis=2, keepdims=True) if width else occupancy
        peak = xp.where(xp.isfinite(peak), peak, 0.0)
        onehot = (extended[:, :, None] == xp.arange(classes)[None, None, :]).astype(
            log_probs.dtype)                                     # (N, S, C)
        sums = xp.matmul(xp.exp(occupancy - peak).transpose(1, 0, 2), onehot).transpose(1, 0, 2)
        per_class = xp.log(sums) + peak                          # (T, N, C)
        grad = -xp.exp(per_class + nll[None, :, None] - log_probs)
        grad = xp.where(per_class == -np.inf, 0.0, grad)
        inside = (xp.arange(steps)[:, None] < input_lengths[None, :])[:, :, None]
        grad = xp.where(inside & xp.isfinite(nll)[None, :, None], grad, 0.0)
        # an impossible alignment: NaN inside the input length only, as PyTorch
        grad = xp.where(xp.isfinite(nll)[None, :, None] | ~inside, grad, xp.nan)
    return nll.astype(log_probs.dtype), grad.astype(log_probs.dtype)


class CTCLoss(Function):
    array_backward = True
    node_name = "CtcLossBackward0"

    @staticmethod
    def forward(ctx, log_probs, labels, input_lengths, target_lengths, blank, zero_infinity):
        xp = ctx.xp
        nll, grad = _ctc_arrays(xp, log_probs, labels, input_lengths, target_lengths, blank)
        if zero_infinity:
            infinite = xp.isinf(nll)
            nll = xp.where(infinite, 0.0, nll).astype(log_probs.dtype)
            grad = xp.where(infinite[None, :, None], 0.0, grad).astype(log_probs.dtype)
        ctx.save_for_backward(grad, log_probs)
        return nll

    @staticmethod
    def backward(ctx, grad_nll):
        m = ctx.math
        grad, log_probs = ctx.saved_tensors
        scaled = grad * m.reshape(grad_nll, (1, -1, 1))
        # on arrays no graph is recorded, so nothing can differentiate the gradient again
        return (scaled if m.arrays else CTCGradient.apply(scaled, log_probs),
                None, None, None, None, None)


class CTCGradient(Function):
    """The CTC gradient, passed through unchanged but linked to log_probs; differentiating
    it again raises (PyTorch has no double backward for ctc_loss either) instead of
    silently giving zero."""

    array_backward = True
    node_name = "CtcLossBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, log_probs):
        return grad.copy()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("ctc_loss(): double backward (the derivative of the CTC gradient) "
                           "isn't supported, as in PyTorch")


def _lengths(value, name: str, arg: str, count: int):
    if isinstance(value, Tensor):
        values = np.asarray(value.detach().cpu().numpy())
    else:
        values = np.asarray(value)
    if values.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): '{arg}' must hold integers, got {values.dtype}")
    values = values.reshape(-1).astype(np.int64)
    if values.shape[0] != count:
        raise RuntimeError(f"{name}(): expected {arg} to have {count} entries (one per batch "
                           f"element), got {values.shape[0]}")
    if (values < 0).any():
        raise RuntimeError(f"{name}(): {arg} must be non-negative, got {values.tolist()}")
    return values


def _ctc_samples(make):
    from ..creation import tensor

    log_probs = log_softmax(make((5, 2, 3), requires_grad=False), 2).requires_grad_(True)
    unbatched = log_softmax(make((4, 3), requires_grad=False), 1).requires_grad_(True)
    return [Sample((log_probs, tensor([[1, 2], [1, 1]], device=make.device),
                    tensor([5, 4]), tensor([2, 2])), name="padded targets, mean"),
            Sample((log_probs, tensor([2, 1, 1], device=make.device), (5, 5), (1, 2)),
                   {"reduction": "sum", "blank": 0}, name="concatenated, repeat"),
            Sample((log_probs, tensor([[2, 0], [1, 0]], device=make.device), [3, 5], [1, 0]),
                   {"reduction": "none"}, name="empty target"),
            Sample((unbatched, tensor([1, 2], device=make.device), tensor(4), tensor(2)),
                   {"blank": 0},
                   name="unbatched")]


def _ctc_torch(torch, log_probs, targets, input_lengths, target_lengths, blank=0,
               reduction="mean", zero_infinity=False):
    """PyTorch's ctc_loss, its gradient made the derivative: PyTorch's adds
    ``exp(log_probs)`` at every frame inside the input length (its formula assumes the
    inputs came from log_softmax, whose backward cancels that term)."""
    value = torch.nn.functional.ctc_loss(log_probs, targets, input_lengths, target_lengths,
                                         blank, reduction, zero_infinity)
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    lengths = torch.as_tensor(input_lengths).reshape(-1)
    tl = torch.as_tensor(target_lengths).reshape(-1).to(lp.dtype)
    inside = (torch.arange(lp.shape[0])[:, None] < lengths[None, :]).to(lp.dtype)
    extra = (lp.exp() - lp.exp().detach()).sum(2) * inside            # (T, N), value 0
    per_sample = extra.sum(0)
    if reduction == "mean":
        correction = (per_sample / tl.clamp(min=1)).mean()
    elif reduction == "sum":
        correction = per_sample.sum()
    else:
        correction = per_sample if batched else per_sample.reshape(())
    return value - correction


@register_op(namespace=_NN, samples=_ctc_samples, torch=_ctc_torch, gradgrad=False)
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification: ``-log`` of the total probability of every
    alignment of ``targets`` to the frames of ``log_probs`` (T, N, C) (or (T, C)), where an
    alignment may repeat labels and insert ``blank`` (and must put a blank between repeated
    labels). ``targets`` is padded (N, S) or the concatenation of all targets;
    ``input_lengths`` and ``target_lengths`` give each sample's lengths. 'mean' divides
    each loss by its target length, then averages; ``zero_infinity`` turns impossible
    alignments' infinite losses (and their gradients) into zeros. The gradient is the
    derivative with respect to ``log_probs`` (see the note in _ctc_torch). Costs
    O(T N S C) time, the loop over time in Python."""
    ensure_tensor(log_probs, "ctc_loss", "log_probs")
    ensure_tensor(targets, "ctc_loss", "targets")
    reduction = _reduction(reduction, "ctc_loss")
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"ctc_loss(): log_probs must be (T, N, C) or (T, C), got "
                           f"{list(log_probs.shape)}")
    _float_kernel(log_probs, "ctc_loss", "ctc_loss")
    refuse_low_precision(log_probs, "ctc_loss")
    if targets._data.dtype.kind not in "iuf":
        raise RuntimeError(f"ctc_loss(): targets must hold integer class indices, got "
                           f"{targets.dtype.name}")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    steps, batch, classes = lp.shape
    if not 0 <= blank < classes:
        raise RuntimeError(f"ctc_loss(): blank must be in label range [0, {classes}), got "
                           f"{blank}")
    inputs = _lengths(input_lengths, "ctc_loss", "input_lengths", batch)
    lengths = _lengths(target_lengths, "ctc_loss", "target_lengths", batch)
    if (inputs > steps).any():
        raise RuntimeError(f"ctc_loss(): Expected input_lengths to have value at most {steps}, "
                           f"but got value {int(inputs.max())}")
    xp = backend.xp_for_device(lp._device)
    target_data = targets._data.astype(np.int64)
    longest = int(lengths.max()) if batch else 0
    if targets.ndim == 2 and (batched or targets.shape[0] == 1):
        if targets.shape[0] != batch or targets.shape[1] < longest:
            raise RuntimeError(f"ctc_loss(): padded targets of shape {list(targets.shape)} "
                               f"don't fit {batch} samples of target lengths "
                               f"{lengths.tolist()}")
        labels = target_data[:, :longest]
    elif targets.ndim == 1:
        if targets.shape[0] < int(lengths.sum()):
            raise RuntimeError(f"ctc_loss(): concatenated targets of length "
                               f"{targets.shape[0]} are shorter than the sum of target "
                               f"lengths {int(lengths.sum())}")
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        where_from = xp.asarray(starts[:, None] + np.arange(longest)[None, :])
        inside = xp.asarray(np.arange(longest)[None, :] < lengths[:, None])
        limit = max(targets.shape[0] - 1, 0)
        labels = xp.where(inside, target_data[xp.minimum(where_from, limit)], blank) \
            if targets.shape[0] else xp.full((batch, longest), blank, dtype=np.int64)
    else:
        raise RuntimeError(f"ctc_loss(): targets must be padded (N, S) or concatenated 1-D, "
                           f"got {list(targets.shape)}")
    mask = xp.asarray(np.arange(longest)[None, :] < lengths[:, None])
    used = labels[mask]
    if used.size and bool(((used < 0) | (used >= classes) | (used == blank)).any()):
        raise RuntimeError(f"ctc_loss(): target labels must be in [0, {classes}) and differ "
                           f"from blank ({blank})")
    labels = xp.where(mask, labels, blank)
    nll = CTCLoss.apply(lp, labels, xp.asarray(inputs), xp.asarray(lengths), int(blank),
                        bool(zero_infinity))
    if not batched:
        nll = nll.reshape(())
    if reduction == "none":
        return nll
    if reduction == "sum":
        return nll.sum()
    divisor = _constant(xp.asarray(np.maximum(lengths, 1)).astype(lp._data.dtype), lp)
    return (nll / (divisor if batched else divisor.reshape(()))).mean()


# ----------------------------------------------------------------------------- loss nodes
# PyTorch computes these losses as single nodes (MseLossBackward0, ...); so does ember. The
# forward reduces on arrays; backward scales the incoming gradient by the reduction and
# applies the pointwise derivative, written against ``ctx.math`` (so double backward
# records the same formula).
def _reduce_array(xp, loss, reduction: str):
    if reduction == "mean":
        return xp.asarray(loss.mean() if loss.size else xp.nan, dtype=loss.dtype)
    if reduction == "sum":
        return xp.asarray(loss.sum(), dtype=loss.dtype)
    return loss


def _scaled(ctx, grad):
    """The incoming gradient spread over the elements the reduction combined."""
    if ctx.reduction == "mean":
        return grad * (1.0 / ctx.count) if ctx.count else grad
    return grad


def _start(ctx, reduction: str, *shapes) -> None:
    ctx.reduction = reduction
    ctx.count = int(np.prod(np.broadcast_shapes(*shapes)))
    ctx.shapes = shapes


def _pair_grads(ctx, m, grad_input):
    """(d/dinput, d/dtarget) of a loss of ``input - target``, summed to each shape."""
    need_x, need_t = ctx.needs_input_grad[:2]
    return (m.sum_to_shape(grad_input, ctx.shapes[0]) if need_x else None,
            m.sum_to_shape(-grad_input, ctx.shapes[1]) if need_t else None)


class MseLoss(Function):
    array_backward = True
    node_name = "MseLossBackward0"

    @staticmethod
    def forward(ctx, x, t, reduction):
        _start(ctx, reduction, x.shape, t.shape)
        ctx.save_for_backward(x, t)
        loss = array_math(ctx.xp).elementwise(_mse_values, x, t)
        return _reduce_array(ctx.xp, loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, t = ctx.saved_tensors
        return _pair_grads(ctx, m, m.elementwise(_mse_grad, x, t, _scaled(ctx, grad))) + (None,)


@elementwise_formula
def _mse_values(m, x, t):
    difference = x - t
    return difference * difference


@elementwise_formula
def _mse_grad(m, x, t, grad):
    return m.cast(2.0 * (x - t) * grad, x)


class SmoothL1Loss(Function):
    array_backward = True
    node_name = "SmoothL1LossBackward0"

    @staticmethod
    def forward(ctx, x, t, reduction, beta):
        _start(ctx, reduction, x.shape, t.shape)
        ctx.beta = beta
        ctx.save_for_backward(x, t)
        # constants combined in Python: inside a fused kernel they would widen float32
        loss = array_math(ctx.xp).elementwise(_smooth_l1_values, x, t, beta, 0.5 * beta)
        return _reduce_array(ctx.xp, loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, t = ctx.saved_tensors
        slope = m.elementwise(_smooth_l1_grad, x, t, ctx.beta, 1.0 / ctx.beta,
                              _scaled(ctx, grad))
        return _pair_grads(ctx, m, slope) + (None, None)


@elementwise_formula
def _smooth_l1_values(m, x, t, beta, half_beta):
    size = m.abs(x - t)
    return m.cast(m.where(size < beta, 0.5 * size * size / beta, size - half_beta), x)


@elementwise_formula
def _smooth_l1_grad(m, x, t, beta, inverse_beta, grad):
    d = x - t
    return m.cast(m.where(m.abs(d) < beta, d * inverse_beta, m.sign(d)) * grad, x)


class HuberLoss(Function):
    array_backward = True
    node_name = "HuberLossBackward0"

    @staticmethod
    def forward(ctx, x, t, reduction, delta):
        _start(ctx, reduction, x.shape, t.shape)
        ctx.delta = delta
        ctx.save_for_backward(x, t)
        loss = array_math(ctx.xp).elementwise(_huber_values, x, t, delta, 0.5 * delta)
        return _reduce_array(ctx.xp, loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, t = ctx.saved_tensors
        slope = m.elementwise(_huber_grad, x, t, ctx.delta, _scaled(ctx, grad))
        return _pair_grads(ctx, m, slope) + (None, None)


@elementwise_formula
def _huber_values(m, x, t, delta, half_delta):
    size = m.abs(x - t)
    return m.cast(m.where(size < delta, 0.5 * size * size, delta * (size - half_delta)), x)


@elementwise_formula
def _huber_grad(m, x, t, delta, grad):
    d = x - t
    return m.cast(m.where(m.abs(d) < delta, d, m.sign(d) * delta) * grad, x)


class SoftMarginLoss(Function):
    """``log(1 + exp(-y x))``, reduced."""

    array_backward = True
    node_name = "SoftMarginLossBackward0"

    @staticmethod
    def forward(ctx, x, y, reduction):
        _start(ctx, reduction, x.shape, y.shape)
        ctx.save_for_backward(x, y)
        loss = array_math(ctx.xp).elementwise(_soft_margin_values, x, y)
        return _reduce_array(ctx.xp, loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, y = ctx.saved_tensors
        need_x, need_y = ctx.needs_input_grad[:2]
        common = m.elementwise(_soft_margin_grad, x, y, _scaled(ctx, grad))
        return (m.sum_to_shape(common * y, ctx.shapes[0]) if need_x else None,
                m.sum_to_shape(common * x, ctx.shapes[1]) if need_y else None, None)


@elementwise_formula
def _soft_margin_values(m, x, y):
    z = -y * x
    return m.cast(m.maximum(z, 0) + m.log1p(m.exp(-m.abs(z))), x)


@elementwise_formula
def _soft_margin_grad(m, x, y, grad):
    """The gradient of the loss with respect to ``-y x``'s factor: times y for x, times x
    for y."""
    return m.cast(-m.sigmoid(-y * x) * grad, x)


class BinaryCrossEntropyWithLogits(Function):
    """``w ((1 - t) x + (1 + (p - 1) t) softplus(-x))``, reduced; ``w`` and ``p`` (the
    positive weight) are optional Tensors that broadcast to the input."""

    array_backward = True
    node_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, x, t, weight, pos_weight, reduction):
        _start(ctx, reduction, x.shape)
        ctx.save_for_backward(x, t, weight, pos_weight)
        loss = array_math(ctx.xp).elementwise(_bce_logits_values, x, t, weight, pos_weight)
        return _reduce_array(ctx.xp, loss, reduction)

    @staticmethod
    def pointwise(rest, x, t, weight, pos_weight):
        """The loss from ``rest = softplus(-x)``, on arrays or Tensors."""
        if pos_weight is not None:
            rest = rest * (1.0 + (pos_weight - 1.0) * t)
        loss = (1.0 - t) * x + rest
        return loss if weight is None else loss * weight

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, t, weight, pos_weight = ctx.saved_tensors
        need_x, need_t, need_w, need_p = ctx.needs_input_grad[:4]
        g = _scaled(ctx, grad)
        if weight is not None:
            g = g * weight
        grads = [None] * 5
        rest = m.softplus(-x, 1.0, math.inf)
        if need_x:
            grads[0] = m.sum_to_shape(m.elementwise(_bce_logits_grad_input, x, t, pos_weight, g),
                                      x.shape)
        if need_t:
            slope = -x if pos_weight is None else (pos_weight - 1.0) * rest - x
            grads[1] = m.sum_to_shape(slope * g, t.shape)
        if need_w:
            plain = BinaryCrossEntropyWithLogits.pointwise(rest, x, t, None, pos_weight)
            grads[2] = m.sum_to_shape(plain * _scaled(ctx, grad), weight.shape)
        if need_p:
            grads[3] = m.sum_to_shape(t * rest * g, pos_weight.shape)
        return tuple(grads)


@elementwise_formula
def _bce_logits_values(m, x, t, weight, pos_weight):
    rest = m.maximum(-x, 0) + m.log1p(m.exp(-m.abs(x)))  # softplus(-x)
    return m.cast(BinaryCrossEntropyWithLogits.pointwise(rest, x, t, weight, pos_weight), x)


@elementwise_formula
def _bce_logits_grad_input(m, x, t, pos_weight, grad):
    scale = 1.0 if pos_weight is None else 1.0 + (pos_weight - 1.0) * t
    return m.cast(((1.0 - t) - scale * m.sigmoid(-x)) * grad, x)


class NllLoss(Function):
    """``-w[y] log_probs[y]`` per target, reduced; ``valid`` masks ``ignore_index``
    targets, and 'mean' divides by the summed weight of the others. Class dim 1 (0 for an
    unbatched (C,) input)."""

    array_backward = True
    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, log_probs, target, weight, ignore_index, reduction, name):
        xp = ctx.xp
        if log_probs.ndim == 4:
            ctx.node_name = "NllLoss2DBackward0"
        dim = 0 if log_probs.ndim == 1 else 1
        ctx.classes = log_probs.shape[dim]
        safe, valid = _safe_targets(xp, target, ignore_index, ctx.classes, name)
        per_position = log_probs.shape[:dim] + log_probs.shape[dim + 1:]
        if safe.shape != per_position:  # a spatial input viewed to (N, C, -1, 1)
            safe, valid = safe.reshape(per_position), valid.reshape(per_position)
        picked = xp.take_along_axis(log_probs, xp.expand_dims(safe, dim), axis=dim)
        picked = xp.squeeze(picked, axis=dim)
        scale = valid.astype(log_probs.dtype)
        if weight is not None:
            scale = scale * weight[safe]
        ctx.reduction = reduction
        ctx.save_for_backward(safe, scale)
        losses = -picked * scale
        if reduction == "none":
            return losses
        total = losses.sum()
        if reduction == "mean":
            ctx.total = float(scale.sum())
            if not ctx.total:  # 0 / 0: NaN, whose gradient is NaN for the counted targets
                # and 0 for the ignored ones, as in PyTorch
                ctx.save_for_backward(safe, xp.where(valid, xp.nan, 0).astype(scale.dtype))
                ctx.total = 1.0
                return xp.asarray(xp.nan, dtype=log_probs.dtype)
            total = total / ctx.total
        return xp.asarray(total, dtype=log_probs.dtype)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        safe, scale = ctx.saved_tensors
        if ctx.reduction == "mean":
            grad = grad * (1.0 / ctx.total)
        per_target = 0.0 - grad * scale  # (not -(...): an ignored target gets +0, not -0)
        classes = ctx.classes
        onehot = m.cast(m.one_hot(safe, classes), per_target)
        spread = onehot * m.unsqueeze(per_target, -1)       # class dim last
        if spread.ndim > 2:
            order = (0, spread.ndim - 1) + tuple(range(1, spread.ndim - 1))
            spread = m.permute(spread, order)
        return spread, None, None, None, None, None
