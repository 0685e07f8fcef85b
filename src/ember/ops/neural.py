"""Other nn.functional ops: softmax family, dropout family, embedding, one_hot, linear,
bilinear, attention, distances.

Softmax and log-softmax are single nodes with stable forwards (the maximum along ``dim`` is
subtracted before ``exp``) and backwards written once against ``ctx.math`` (arrays, or ember
ops when gradients of gradients are wanted). The rest are compositions of registered ops (matmul,
where, indexing), which gives
them their gradients, or small nodes of their own where the composition would be unstable
(the p-norm at zero distance) or wasteful (the embedding lookup).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import backend, dtypes, tracing
from .._mt_stream import TorchCompatibleGenerator
from .._mt_stream import bernoulli_scalar as mt_bernoulli_scalar
from .._mt_stream import exponential as mt_exponential
from ..autograd import grad_mode
from ..autograd.backward_math import array_math
from ..autograd.function import Function
from ..tensor import Tensor, apply_inplace, bump_version
from ._util import (
    broadcast_error,
    dtype_not_implemented,
    ensure_tensor,
    float_operand,
    wrap_dim,
    xp_of,
)
from .arithmetic import Add, Sub, mul
from .comparison import where
from .indexing import IndexScatter
from .products import addmm, matmul, mm
from .registry import Sample, register_op
from .shape import Squeeze, UnsafeView, reshape, unsqueeze
from .shape import t as _t

_NN = "nn.functional"


def _constant(array, like: Tensor) -> Tensor:
    """A tensor without history on ``like``'s device, around an array made here."""
    return Tensor._make(array, like._device, False)


# ----------------------------------------------------------------------------- softmax family
def _implicit_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's legacy rule for a missing ``dim``: 0 for 0-, 1- and 3-D inputs, else 1."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_input(input, dim, dtype, name: str, stacklevel):
    ensure_tensor(input, name)
    if not isinstance(stacklevel, int):  # x.softmax(dim, dtype): the method's 2nd argument
        dtype, stacklevel = stacklevel, 3
    if dtype is not None:
        input = input.to(dtypes.to_dtype(dtype))
    if input._data.dtype.kind not in "fV":
        raise dtype_not_implemented(name, input.dtype, "it takes floating-point input: pass "
                                    "dtype=ember.float32 or call .float() first")
    if dim is None:
        dim = _implicit_softmax_dim(name, input._data.ndim, stacklevel + 1)
    return input, wrap_dim(dim, input._data.ndim, name)


def _shifted(xp, x, dim):
    """``x - max(x, dim)``: the stable argument of exp (0-d inputs are their own row)."""
    peak = xp.max(x, axis=dim, keepdims=True) if x.ndim else x
    # A row that is all -inf has no finite peak; shifting by 0 keeps exp at 0 there. A +inf
    # peak stays: inf - inf is NaN, and the whole row NaN, as in PyTorch.
    peak = xp.where(peak == -np.inf, 0, peak)
    with np.errstate(invalid="ignore"):
        return x - peak


class Softmax(Function):
    array_backward = True
    node_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        xp = ctx.xp
        ctx.dim, ctx.empty = dim, x.size == 0
        if ctx.empty:
            return x.copy()
        e = xp.exp(_shifted(xp, x, dim))
        with np.errstate(invalid="ignore"):  # an all -inf row is NaN, silently as PyTorch
            out = e / (e.sum(axis=dim, keepdims=True) if x.ndim else e)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        if ctx.empty:
            return grad, None
        (y,) = ctx.saved_tensors
        # d softmax: y * (g - <g, y>) along dim.
        return y * (grad - m.sum(grad * y, ctx.dim, True)), None


class LogSoftmax(Function):
    array_backward = True
    node_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        xp = ctx.xp
        ctx.dim, ctx.empty = dim, x.size == 0
        if ctx.empty:
            return x.copy()
        shifted = _shifted(xp, x, dim)
        total = xp.exp(shifted).sum(axis=dim, keepdims=True) if x.ndim else xp.exp(shifted)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = shifted - xp.log(total)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        if ctx.empty:
            return grad, None
        (y,) = ctx.saved_tensors
        # d log_softmax: g - softmax * sum(g) along dim.
        return grad - m.exp(y) * m.sum(grad, ctx.dim, True), None


def _softmax_samples(make):
    return [Sample((make((3, 4)), 1), name="dim 1"),
            Sample((make((2, 3, 4)), -1), name="last dim of 3-D"),
            Sample((make((2, 3, 2)), 0), name="dim 0"),
            Sample((make(()), 0), name="0-d"),
            Sample((make((3, 4), low=-30, high=30),), {"dim": 1}, name="large logits")]


@register_op(namespace=_NN, methods=("softmax",), exported_in=("ember",),
             samples=_softmax_samples)
def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x_i - max x) / sum_j exp(x_j - max x)`` along ``dim``: a probability
    distribution over ``dim``. ``dtype`` casts the input first. Without ``dim``, PyTorch's
    legacy rule picks 0 for 0-, 1- and 3-D inputs and 1 otherwise, with a warning.

    >>> ember.softmax(ember.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([0.0900, 0.2447, 0.6652])
    """
    input, dim = _softmax_input(input, dim, dtype, "softmax", _stacklevel)
    return Softmax.apply(input, dim)


@register_op(namespace=_NN, methods=("log_softmax",), exported_in=("ember",),
             samples=_softmax_samples)
def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``x_i - max x - log sum_j exp(x_j - max x)`` along ``dim``: the logarithm of
    softmax, computed without forming softmax (finite for any finite logits).

    >>> ember.log_softmax(ember.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([-2.4076, -1.4076, -0.4076])
    """
    input, dim = _softmax_input(input, dim, dtype, "log_softmax", _stacklevel)
    return LogSoftmax.apply(input, dim)


@register_op(namespace=_NN, samples=lambda make: _softmax_samples(make)[:3])
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-x)`` along ``dim``: weights that favour the smallest entries."""
    input, dim = _softmax_input(input, dim, dtype, "softmin", _stacklevel)
    return Softmax.apply(-input, dim)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    ``g = -log(E)``, ``E ~ Exponential(1)`` drawn from ember's default generator. With
    ``hard=True`` the result is the one-hot of its argmax in the forward pass and keeps the
    soft sample's gradient (the straight-through estimator). ``eps`` is unused (PyTorch
    keeps it for compatibility)."""
    from ..random import generator_for

    ensure_tensor(logits, "gumbel_softmax")
    xp = xp_of(logits)
    rng = generator_for(logits._device)
    if isinstance(rng, TorchCompatibleGenerator):
        # PyTorch: -empty_like(logits).exponential_().log(), in the logits' dtype
        kind = logits._data.dtype
        noise = mt_exponential(rng, logits._data.size, kind.name).reshape(logits._data.shape)
    else:
        noise = rng.standard_exponential(size=logits._data.shape)
    gumbels = _constant((-xp.log(noise)).astype(logits._data.dtype), logits)
    soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    d = wrap_dim(dim, logits._data.ndim, "gumbel_softmax")
    winner = xp.expand_dims(xp.argmax(soft._data, axis=d), d)
    positions = xp.arange(soft.shape[d]).reshape([-1 if i == d else 1 for i in range(soft.ndim)])
    onehot = (positions == winner).astype(soft._data.dtype)
    return soft - soft.detach() + _constant(onehot, soft)


# gumbel_softmax is random in every call, so finite differences can't check it; it is a
# composition of checked ops and is tested in tests/ops/test_neural.py instead of the table.
from .registry import NAMESPACES as _NAMESPACES  # noqa: E402

_NAMESPACES[_NN]["gumbel_softmax"] = gumbel_softmax


# ----------------------------------------------------------------------------- linear layers
def _check_same_dtype(op: str, **tensors) -> None:
    """PyTorch's kernels take no mixed dtypes here (no promotion); None entries are absent
    arguments."""
    given = [(name, t) for name, t in tensors.items() if t is not None]
    for name, t in given:
        ensure_tensor(t, op, name)
    first = given[0][1].dtype
    if any(t.dtype is not first for _, t in given):
        got = ", ".join(f"{name}: {t.dtype.scalar_name}" for name, t in given)
        raise RuntimeError(f"{op}(): expected all tensors to have the same dtype (PyTorch "
                           f"does not promote here), got {got}")


def _linear_samples(make):
    return [Sample((make((3, 4)), make((2, 4)), make((2,))), name="matrix with bias"),
            Sample((make((2, 3, 4)), make((2, 4))), name="3-D without bias"),
            Sample((make((4,)), make((3, 4)), make((3,))), name="1-D input"),
            Sample((make((3, 4)), make((4,))), name="1-D weight")]


@register_op(namespace=_NN, samples=_linear_samples)
def linear(input, weight, bias=None):
    """``y = x W^T + b`` over the last dimension of ``x``: (..., in) with W (out, in) gives
    (..., out). Costs one matrix product, O(numel(x) * out).

    >>> F.linear(ember.tensor([[1.0, 2.0]]), ember.tensor([[1.0, 0.0], [1.0, 1.0]]),
    ...          ember.tensor([0.5, 0.0]))
    tensor([[1.5000, 3.0000]])
    """
    ensure_tensor(input, "linear")
    ensure_tensor(weight, "linear", "weight")
    features = input.shape[-1] if input.ndim else None
    if weight.ndim not in (1, 2) or features is None or weight.shape[-1] != features:
        rows = int(np.prod(input.shape[:-1])) if input.ndim else 1
        raise RuntimeError(
            f"linear(): input of shape {list(input.shape)} has {features} features but weight "
            f"of shape {list(weight.shape)} expects in_features="
            f"{weight.shape[-1] if weight.ndim else None}"
            f" (mat1 and mat2 shapes cannot be multiplied ({rows}x{features} and "
            f"{'x'.join(str(s) for s in reversed(weight.shape))}))")
    if weight.ndim == 1 and bias is not None:
        raise RuntimeError("linear(): a 1-D weight takes no bias (PyTorch: mat2 must be a "
                           "matrix, got 1-D tensor)")
    _check_same_dtype("linear", input=input, weight=weight, bias=bias)
    if weight.ndim == 1:
        return matmul(input, weight)
    if bias is not None and input.ndim >= 3 and not input._data.flags.c_contiguous:
        # PyTorch fuses the bias only into contiguous inputs; otherwise it is a matmul
        # (rows, Mm, the rows viewed back) and then an Add
        rows = reshape(input, (-1, features))
        out = UnsafeView.apply(mm(rows, _t(weight)),
                               tuple(input.shape[:-1]) + (weight.shape[0],))
        return out + bias
    # PyTorch's graph: rows of the input (a view), one Addmm (Mm without a bias) against
    # the weight's transpose, and the rows viewed back to the input's leading dims.
    rows = input if input.ndim == 2 else (
        unsqueeze(input, 0) if input.ndim == 1 and bias is None
        else reshape(input, (-1, features)))
    out = mm(rows, _t(weight)) if bias is None else addmm(bias, rows, _t(weight))
    if input.ndim == 2:
        return out
    if input.ndim == 1:
        return Squeeze.apply(out, (0,), "SqueezeBackward4") if bias is None else \
            reshape(out, (weight.shape[0],))
    shape = tuple(input.shape[:-1]) + (weight.shape[0],)
    return reshape(out, shape) if bias is not None else UnsafeView.apply(out, shape)


def _bilinear_samples(make):
    return [Sample((make((2, 3)), make((2, 2)), make((4, 3, 2)), make((4,))), name="bias"),
            Sample((make((3,)), make((2,)), make((2, 3, 2))), name="unbatched, no bias"),
            Sample((make((2, 2, 3)), make((2, 2, 4)), make((3, 3, 4)), make((3,))),
                   name="3-D")]


@register_op(namespace=_NN, samples=_bilinear_samples)
def bilinear(input1, input2, weight, bias=None):
    """``y_k = x1^T A_k x2 + b_k``: (..., in1) and (..., in2) with A (out, in1, in2) give
    (..., out); the product is one node (TrilinearBackward0). Costs O(batch * out * in1 *
    in2).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.bilinear(ember.tensor([[1.0, 2.0]]), ember.tensor([[3.0]]), ember.ones(1, 2, 1))
    tensor([[9.]])
    """
    for t, arg in ((input1, "input1"), (input2, "input2"), (weight, "weight")):
        ensure_tensor(t, "bilinear", arg)
    _check_same_dtype("bilinear", input1=input1, input2=input2, weight=weight, bias=bias)
    if weight.ndim != 3 or input1.shape[-1:] != weight.shape[1:2] or \
            input2.shape[-1:] != weight.shape[2:3] or input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear(): expected input1 (..., in1), input2 (..., in2) with the same leading "
            f"dims and weight (out, in1, in2), got {list(input1.shape)}, "
            f"{list(input2.shape)} and {list(weight.shape)}")
    out_features, in1, in2 = weight.shape
    # PyTorch's composition: rows of both inputs, one trilinear product, the output's shape
    out = Trilinear.apply(reshape(input1, (-1, in1)), weight, reshape(input2, (-1, in2)))
    out = reshape(out, tuple(input1.shape[:-1]) + (out_features,))
    return out if bias is None else out + bias


class Trilinear(Function):
    """``out[b, k] = sum_ij x1[b, i] A[k, i, j] x2[b, j]`` for rows x1 (B, in1), x2 (B, in2)
    and A (out, in1, in2), as one node (PyTorch's _trilinear): the outer product of each
    row pair times A flattened to (out, in1 * in2). Backward: three products of the same
    kind, so double backward records them."""

    array_backward = True
    node_name = "TrilinearBackward0"

    @staticmethod
    def forward(ctx, x1, weight, x2):
        xp = ctx.xp
        rows, (out, in1, in2) = x1.shape[0], weight.shape
        ctx.save_for_backward(x1, weight, x2)
        outer = (x1[:, :, None] * x2[:, None, :]).reshape(rows, in1 * in2)
        return backend.matmul(xp, outer, weight.reshape(out, in1 * in2).T)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x1, weight, x2 = ctx.saved_tensors
        need1, need_w, need2 = ctx.needs_input_grad[:3]
        rows, (out, in1, in2) = x1.shape[0], tuple(weight.shape)
        grad1 = grad_w = grad2 = None
        if need_w:
            outer = m.reshape(m.unsqueeze(x1, 2) * m.unsqueeze(x2, 1), (rows, in1 * in2))
            grad_w = m.reshape(m.matmul(m.mT(grad), outer), (out, in1, in2))
        if need1 or need2:
            mixed = m.reshape(m.matmul(grad, m.reshape(weight, (out, in1 * in2))),
                              (rows, in1, in2))
            if need1:
                grad1 = m.sum(mixed * m.unsqueeze(x2, 1), 2)
            if need2:
                grad2 = m.sum(mixed * m.unsqueeze(x1, 2), 1)
        return grad1, grad_w, grad2


# ----------------------------------------------------------------------------- dropout family
def _check_p(p, name: str) -> float:
    if isinstance(p, Tensor):
        p = p.item()
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name}: dropout probability has to be between 0 and 1, but got {p}")
    return float(p)


def _keep_mask(input: Tensor, shape: tuple, p: float):
    """Bernoulli(1 - p) keep mask of ``shape`` from ember's default generator, drawn on CPU
    as PyTorch draws it (``empty(shape).bernoulli_(1 - p)``)."""
    from ..random import generator_for

    rng = generator_for(input._device)
    if isinstance(rng, TorchCompatibleGenerator):
        n = int(np.prod(shape, dtype=np.int64))
        return mt_bernoulli_scalar(rng, n, 1.0 - p).reshape(shape)
    return rng.random(size=shape) < (1.0 - p)


def _apply_mask(input: Tensor, factor, inplace: bool) -> Tensor:
    factor = _constant(factor.astype(input._data.dtype, copy=False), input)
    return apply_inplace(input, mul, factor) if inplace else mul(input, factor)


def _dropout(input, p, training, inplace, mask_shape, name: str):
    p = _check_p(p, name)
    ensure_tensor(input, name)
    if not training or p == 0.0:
        return input
    if input._data.dtype.kind not in "fV":
        raise RuntimeError(f"{name}(): expected a floating-point input, got {input.dtype.name}")
    xp = xp_of(input)
    if p == 1.0:
        factor = xp.zeros(mask_shape)
    else:
        # PyTorch divides the mask by 1 - p in the input's dtype
        kind = input._data.dtype.type
        factor = _keep_mask(input, mask_shape, p).astype(kind) / kind(1.0 - p)
    return _apply_mask(input, factor, inplace)


def _dropout_samples(make):
    # The mask is random in every call, so the table checks the deterministic cases; the
    # random ones are tested in tests/ops/test_neural.py.
    return [Sample((make((3, 4)),), {"p": 0.5, "training": False}, name="eval mode"),
            Sample((make((3, 4)),), {"p": 0.0}, name="p=0"),
            Sample((make((3, 4)),), {"p": 1.0}, name="p=1")]


@register_op(namespace=_NN, exported_in=("ember",), samples=_dropout_samples)
def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability ``p`` and scales the rest by ``1 / (1 - p)``
    (so the expectation is unchanged), in training mode; identity otherwise."""
    return _dropout(input, p, training, inplace, input.shape, "dropout")


def _channel_mask_shape(input: Tensor, batched: bool) -> tuple:
    shape = input._data.shape
    lead = 2 if batched else 1
    return tuple(shape[:lead]) + (1,) * (len(shape) - lead)


def _feature_samples(ndims):
    def samples(make):
        shape = (2, 3) + (2,) * (ndims - 2)
        return [Sample((make(shape),), {"p": 0.5, "training": False}, name="eval mode"),
                Sample((make(shape),), {"p": 1.0}, name="p=1"),
                Sample((make(shape[1:]),), {"p": 0.0}, name="unbatched p=0")]
    return samples


@register_op(namespace=_NN, samples=_feature_samples(3))
def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout for (N, C, L) or (C, L) inputs: each channel is zeroed with
    probability ``p`` as a whole; kept channels are scaled by ``1 / (1 - p)``."""
    ensure_tensor(input, "dropout1d")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a "
                           f"{input.ndim}D input (channel-wise dropout over one spatial "
                           "dimension takes (C, L) or (N, C, L))")
    return _dropout(input, p, training, inplace,
                    _channel_mask_shape(input, input.ndim == 3), "dropout1d")


@register_op(namespace=_NN, samples=_feature_samples(4))
def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout for (N, C, H, W) or (C, H, W) inputs. As in PyTorch, a 3-D
    input is read as (N, C, L) (with a warning) and other ranks drop along dims 0 and 1
    (with a warning)."""
    ensure_tensor(input, "dropout2d")
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: got a {input.ndim}-D input; dropout2d is meant for 3-D or "
                      "4-D inputs (channel-wise dropout over two spatial dimensions) and "
                      "will reject other ranks in a future release; use dropout instead.",
                      UserWarning, stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: got a 3-D input, read as (N, C, L) and dropped channel-wise "
                      "as dropout1d does; a future release will read it as an unbatched "
                      "(C, H, W). Use dropout1d to keep this behaviour.", UserWarning,
                      stacklevel=2)
    if input.ndim < 2:
        raise RuntimeError("dropout2d(): feature dropout requires at least 2 dimensions in "
                           f"the input, got {input.ndim}")
    return _dropout(input, p, training, inplace, _channel_mask_shape(input, True), "dropout2d")


@register_op(namespace=_NN, samples=_feature_samples(5))
def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout for (N, C, D, H, W) or (C, D, H, W) inputs."""
    ensure_tensor(input, "dropout3d")
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: got a {input.ndim}-D input; dropout3d is meant for 4-D or "
                      "5-D inputs (channel-wise dropout over three spatial dimensions) and "
                      "will reject other ranks in a future release; use dropout instead.",
                      UserWarning, stacklevel=2)
    if input.ndim < 2:
        raise RuntimeError("dropout3d(): feature dropout requires at least 2 dimensions in "
                           f"the input, got {input.ndim}")
    return _dropout(input, p, training, inplace,
                    _channel_mask_shape(input, input.ndim != 4), "dropout3d")


# SELU's saturation value -scale * alpha: alpha dropout sets dropped units to it.
_SELU_SATURATION = 1.0507009873554804934193349852946 * 1.6732632423543772848170429916717


def _alpha_dropout(input, p, training, inplace, mask_shape, name: str):
    p = _check_p(p, name)
    ensure_tensor(input, name)
    if not training or p == 0.0:
        return input
    xp = xp_of(input)
    if p == 1.0:
        return _apply_mask(input, xp.zeros(mask_shape), inplace)
    keep = _keep_mask(input, mask_shape, p)
    # y = x * keep - s * (1 - keep) has mean -s p and variance (1 - p)(1 + p s^2) for a
    # unit-variance, zero-mean x; a (y + s p) restores both.
    s = _SELU_SATURATION
    a = 1.0 / math.sqrt((1.0 - p) * (1.0 + p * s * s))
    factor = a * keep
    offset = _constant((a * s * (p - 1.0 + keep)).astype(input._data.dtype), input)
    if inplace:
        return apply_inplace(input, lambda x: x * _constant(factor.astype(x._data.dtype), x)
                        + offset)
    return input * _constant(factor.astype(input._data.dtype), input) + offset


@register_op(namespace=_NN, samples=_dropout_samples)
def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped units take SELU's negative saturation value and
    an affine map keeps zero mean and unit variance. Identity unless ``training``."""
    return _alpha_dropout(input, p, training, inplace, input.shape, "alpha_dropout")


@register_op(namespace=_NN, samples=_feature_samples(4))
def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (dims 0 and 1 of the input pick the mask)."""
    ensure_tensor(input, "feature_alpha_dropout")
    if input.ndim < 2:
        raise RuntimeError("feature_alpha_dropout(): feature dropout requires at least 2 "
                           f"dimensions in the input, got {input.ndim}")
    return _alpha_dropout(input, p, training, inplace, _channel_mask_shape(input, True),
                          "feature_alpha_dropout")


# ----------------------------------------------------------------------------- embedding
def _check_indices(indices: Tensor, rows: int, name: str, arg: str = "input"):
    ensure_tensor(indices, name, arg)
    if indices._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): expected argument '{arg}' to hold integer indices "
                           f"(int64 or int32), got {indices.dtype.name}")
    if indices._data.size:
        xp = xp_of(indices)
        low, high = int(xp.min(indices._data)), int(xp.max(indices._data))
        bad = low if low < 0 else (high if high >= rows else None)
        if bad is not None:
            raise IndexError(f"{name}(): index {bad} is out of range for a weight with {rows} "
                             f"rows (valid indices are 0 to {rows - 1})")


class Embedding(Function):
    array_backward = True
    node_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
        ctx.rows, ctx.indices = weight.shape, indices
        if ctx._recording and (padding_idx is not None or scale_grad_by_freq):
            # each picked row's share of the gradient: 0 for padding, 1/count when scaled
            xp = ctx.xp
            factor = None
            if padding_idx is not None:
                factor = (indices != padding_idx).astype(weight.dtype)
            if scale_grad_by_freq:
                counts = xp.bincount(indices.ravel(), minlength=weight.shape[0])
                inverse = (1.0 / counts[indices]).astype(weight.dtype)
                factor = inverse if factor is None else factor * inverse
            ctx.save_for_backward(factor)
        return weight[indices]

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        saved = ctx.saved_tensors
        if saved:
            grad = grad * m.unsqueeze(saved[0], -1)
        rows, index = ctx.rows, (ctx.indices,)
        return (_scatter_rows(m.xp, grad, rows, index) if m.arrays
                else IndexScatter.apply(grad, rows, index, True)), None, None, None


def _scatter_rows(xp, grad, rows, index):
    """IndexScatter's forward on arrays: zeros of ``rows`` with grad added at index."""
    out = xp.zeros(rows, grad.dtype)
    backend.scatter_add(out, index, grad)
    return out


def _renorm_rows(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> None:
    """Rescale, in place, the rows of ``weight`` used by ``indices`` whose ``norm_type``
    norm exceeds ``max_norm`` to norm ``max_norm`` (as PyTorch's embedding_renorm_)."""
    if tracing.state.tracer is not None:
        tracing.unsupported("embedding's max_norm renormalizes the weight in place")
    xp = xp_of(weight)
    rows = xp.unique(indices._data.ravel())
    values = weight._data[rows]
    norms = _p_norm_array(xp, values, norm_type, axis=-1)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    weight._data[rows] = (values * scale[:, None]).astype(weight._data.dtype)
    bump_version(weight)


def _p_norm_array(xp, values, p, axis):
    if p == math.inf:
        return xp.abs(values).max(axis=axis)
    if p == -math.inf:
        return xp.abs(values).min(axis=axis)
    if p == 0:
        return (values != 0).sum(axis=axis).astype(values.dtype)
    return (xp.abs(values) ** p).sum(axis=axis) ** (1.0 / p)


def _padding_index(padding_idx, rows: int, name: str):
    if padding_idx is None:
        return None
    if not -rows <= padding_idx < rows:
        raise AssertionError(f"{name}(): padding_idx {padding_idx} must be within "
                             f"num_embeddings ({rows})")
    return int(padding_idx) % rows


def _embedding_samples(make):
    # padding_idx and scale_grad_by_freq change the gradient on purpose (it is no longer
    # the derivative), so finite differences can't check them: tests/ops/test_neural.py
    # compares them with PyTorch.
    return [Sample((make.index((2, 4), 5), make((5, 3))), name="2-D indices with repeats"),
            Sample((make.index((), 4), make((4, 3))), name="0-d index")]


@register_op(namespace=_NN, samples=_embedding_samples)
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` (num_embeddings, dim) picked by the integer ``input``: the result
    has shape ``input.shape + (dim,)``. Rows equal to ``padding_idx`` get no gradient;
    ``max_norm`` first rescales, in place, the used rows whose ``norm_type`` norm exceeds
    it; ``scale_grad_by_freq`` divides each row's gradient by its count in ``input``.
    ``sparse`` gradients are not supported (dense gradients are returned).

    >>> F.embedding(ember.tensor([2, 0]), ember.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]))
    tensor([[4., 5.],
            [0., 1.]])
    """
    ensure_tensor(weight, "embedding", "weight")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding(): 'weight' must be 2-D, got {list(weight.shape)}")
    rows = weight.shape[0]
    _check_indices(input, rows, "embedding")
    padding_idx = _padding_index(padding_idx, rows, "embedding")
    if max_norm is not None:
        with grad_mode.no_grad():
            _renorm_rows(weight, input, float(max_norm), float(norm_type))
    return Embedding.apply(weight, input, padding_idx, bool(scale_grad_by_freq))


def _bag_layout(input: Tensor, offsets, include_last_offset: bool, name: str):
    """(flat indices, bag of each index, number of bags) for 2-D input or 1-D + offsets."""
    xp = xp_of(input)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{name}(): if input is 2D, then offsets has to be None, as input "
                             "is treated as a mini-batch of fixed length sequences.")
        bags, length = input.shape
        flat = input._data.reshape(-1)
        bag_of = xp.repeat(xp.arange(bags), length)
        return flat, bag_of, bags
    if input.ndim != 1:
        raise ValueError(f"{name}(): input has to be 1D or 2D Tensor, but got Tensor of "
                         f"dimension {input.ndim}")
    if offsets is None:
        raise ValueError(f"{name}(): offsets has to be a 1D Tensor but got None")
    ensure_tensor(offsets, name, "offsets")
    if offsets.ndim != 1:
        raise ValueError(f"{name}(): offsets has to be a 1D Tensor, got {offsets.ndim}-D")
    every = offsets._data.astype(np.int64)
    starts = every[:-1] if include_last_offset else every
    bags = int(starts.shape[0])
    if every.shape[0]:
        if int(every[0]) != 0:
            raise RuntimeError(f"{name}(): offsets[0] has to be 0, i.e., the first sequence in "
                               f"the mini-batch has to start from position 0. However, got "
                               f"{int(every[0])}")
        if int(every[-1]) > input.shape[0]:
            raise RuntimeError(f"{name}(): offsets[-1] can not be greater than input's length "
                               f"{input.shape[0]} but got offsets[-1] of {int(every[-1])}")
        if bool((xp.diff(every) < 0).any()):
            raise RuntimeError(f"{name}(): offsets must be non-decreasing, got "
                               f"{offsets.tolist()}")
    positions = xp.arange(input.shape[0])
    # With include_last_offset the last bag still runs to the end of the input (PyTorch).
    bag_of = xp.searchsorted(starts, positions, side="right") - 1
    return input._data, bag_of, bags


def _embedding_bag_samples(make):
    from ..creation import tensor

    offsets = tensor([0, 2, 2], device=make.device)  # the middle bag is empty
    return [Sample((make.index((3, 2), 5), make((5, 2))), {"mode": "sum"}, name="2-D sum"),
            Sample((make.index((5,), 4), make((4, 2)), offsets), {"mode": "mean"},
                   name="offsets mean with an empty bag"),
            Sample((make.index((2, 3), 6), make((6, 2))), {"mode": "max"}, name="2-D max"),
            Sample((make.index((4,), 3), make((3, 2)), offsets),
                   {"mode": "sum", "per_sample_weights": make((4,)), "padding_idx": 0},
                   name="weighted sum with padding")]


@register_op(namespace=_NN, samples=_embedding_bag_samples, gradgrad=False)
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxima of bags of embedding rows, without the intermediate
    (num_indices, dim) result being user-visible. ``input`` is (bags, length), or 1-D with
    ``offsets`` giving where each bag starts; ``per_sample_weights`` scale the rows (sum
    mode only); indices equal to ``padding_idx`` are left out; empty bags give zeros.
    Costs O(num_indices * dim) plus a (bags, longest bag, dim) gather."""
    ensure_tensor(weight, "embedding_bag", "weight")
    if weight.ndim != 2:
        raise ValueError(f"embedding_bag(): 'weight' must be 2-D, got {list(weight.shape)}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag(): mode has to be one of sum, mean or max, got {mode!r}")
    if scale_grad_by_freq and mode == "max":
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    rows, width = weight.shape
    _check_indices(input, rows, "embedding_bag")
    if per_sample_weights is not None and per_sample_weights.shape != input.shape:
        raise ValueError(f"embedding_bag(): per_sample_weights has shape "
                         f"{list(per_sample_weights.shape)} but input has "
                         f"{list(input.shape)}")
    padding_idx = _padding_index(padding_idx, rows, "embedding_bag")
    if max_norm is not None:
        with grad_mode.no_grad():
            _renorm_rows(weight, input, float(max_norm), float(norm_type))
    xp = xp_of(input)
    flat, bag_of, bags = _bag_layout(input, offsets, include_last_offset, "embedding_bag")
    used = bag_of >= 0
    if padding_idx is not None:
        used = used & (flat != padding_idx)
    order = xp.nonzero(used)[0]
    layout = _BagLayout(flat[order], bag_of[order], order, bags, int(flat.shape[0]))
    scale = None
    if scale_grad_by_freq:  # each row's gradient divided by how often the input names it
        counts = xp.bincount(flat, minlength=rows)
        scale = (1.0 / counts[layout.rows]).astype(weight._data.dtype)
    return EmbeddingBag.apply(weight, per_sample_weights, layout, mode, scale)


class _BagLayout:
    """Which weight row each used index picks, its bag, and its place in the input."""

    def __init__(self, rows, bags_of, positions, bags: int, length: int):
        self.rows, self.bags_of, self.positions = rows, bags_of, positions
        self.bags, self.length = bags, length


class EmbeddingBag(Function):
    """One node, as PyTorch's (EmbeddingBagBackward0): the bags' sums, means or maxima of
    the picked rows, without the (indices, dim) intermediate. Its gradient is scattered
    back to the picked rows (and, with per_sample_weights, dotted with them); as in
    PyTorch, that gradient has no derivative of its own."""

    array_backward = True
    node_name = "EmbeddingBagBackward0"

    @staticmethod
    def forward(ctx, weight, per_sample_weights, layout, mode, scale):
        xp = ctx.xp
        picked = weight[layout.rows]                                   # (used, dim)
        if per_sample_weights is not None:
            sample = per_sample_weights.reshape(-1)[layout.positions]
            picked = picked * sample[:, None]
        counts = xp.bincount(layout.bags_of, minlength=layout.bags)[:layout.bags]
        if mode == "max":
            out = xp.full((layout.bags, weight.shape[1]), -np.inf, dtype=weight.dtype)
            backend.scatter_reduce(out, layout.bags_of, picked, "maximum")
            # which picked row holds each maximum (the first, as PyTorch's scan keeps it)
            hits = picked == out[layout.bags_of]
            first = xp.full(out.shape, picked.shape[0], dtype=np.int64)
            candidates = xp.where(hits, xp.arange(picked.shape[0])[:, None], picked.shape[0])
            backend.scatter_reduce(first, layout.bags_of, candidates, "minimum")
            out[counts == 0] = 0
            ctx.winner = first
        else:
            out = xp.zeros((layout.bags, weight.shape[1]), dtype=weight.dtype)
            backend.scatter_add(out, layout.bags_of, picked)
            if mode == "mean":
                out /= xp.maximum(counts, 1).astype(weight.dtype)[:, None]
        ctx.layout, ctx.mode, ctx.scale, ctx.counts = layout, mode, scale, counts
        ctx.weight_shape = weight.shape
        ctx.save_for_backward(weight if per_sample_weights is not None else None,
                              per_sample_weights)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        weight, per_sample_weights = ctx.saved_tensors
        need_weight, need_samples = ctx.needs_input_grad[:2]
        grad_weight, grad_samples = m.apply(
            _EmbeddingBagGrad, grad, weight, per_sample_weights, ctx.layout, ctx.mode,
            ctx.scale, ctx.counts, getattr(ctx, "winner", None), ctx.weight_shape)
        return (grad_weight if need_weight else None,
                grad_samples if need_samples and per_sample_weights is not None else None,
                None, None, None)


class _EmbeddingBagGrad(Function):
    """EmbeddingBag's gradient (weight and per-sample weights), as one op: PyTorch gives it
    no derivative, and neither does ember (differentiating it raises)."""

    array_backward = True
    node_name = "EmbeddingBagBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, weight, per_sample_weights, layout, mode, scale, counts, winner,
                weight_shape):
        xp = ctx.xp
        if mode == "max":
            rows = xp.zeros((layout.rows.shape[0] + 1, grad.shape[1]), dtype=grad.dtype)
            columns = xp.broadcast_to(xp.arange(grad.shape[1]), winner.shape)
            backend.scatter_add(rows, (winner, columns), grad)
            rows = rows[:-1]
        else:
            rows = grad[layout.bags_of]
            if mode == "mean":
                rows = rows / xp.maximum(counts, 1).astype(grad.dtype)[layout.bags_of, None]
        grad_samples = xp.zeros(0, dtype=grad.dtype)  # (a placeholder without the weights)
        if per_sample_weights is not None:
            flat = xp.zeros(layout.length, dtype=grad.dtype)
            flat[layout.positions] = (rows * weight[layout.rows]).sum(-1)
            grad_samples = flat.reshape(per_sample_weights.shape)
            rows = rows * per_sample_weights.reshape(-1)[layout.positions][:, None]
        if scale is not None:
            rows = rows * scale[:, None]
        return _scatter_rows(xp, rows, weight_shape, (layout.rows,)), grad_samples

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError(
            "the derivative for '_embedding_bag_backward' is not implemented.")


# ----------------------------------------------------------------------------- one_hot
def _one_hot_samples(make):
    return [Sample((make.index((4,), 3),), name="inferred classes"),
            Sample((make.index((2, 3), 4), 5), name="num_classes 5"),
            Sample((make.index((), 3), 3), name="0-d")]


@register_op(namespace=_NN, samples=_one_hot_samples, differentiable=False)
def one_hot(tensor, num_classes=-1):
    """An int64 tensor of shape ``tensor.shape + (num_classes,)`` with a 1 at each index;
    ``num_classes=-1`` takes ``tensor.max() + 1``.

    >>> F.one_hot(ember.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    ensure_tensor(tensor, "one_hot", "tensor")
    if tensor._data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor "
                           f"(got {tensor.dtype.name})")
    xp = xp_of(tensor)
    data = tensor._data
    if num_classes == -1:
        if data.size == 0:
            raise RuntimeError("one_hot(): can not infer total number of classes from empty "
                               "tensor; pass num_classes")
        num_classes = int(data.max()) + 1
    if data.size:
        if int(data.min()) < 0:
            raise RuntimeError(f"one_hot(): Class values must be non-negative (got "
                               f"{int(data.min())}).")
        if int(data.max()) >= num_classes:
            raise RuntimeError(f"one_hot(): Class values must be smaller than num_classes "
                               f"(got class {int(data.max())} with num_classes={num_classes}).")
    out = (data[..., None] == xp.arange(num_classes)).astype(np.int64)
    return Tensor._make(out, tensor._device, False)


# ----------------------------------------------------------------------------- attention
def _attention_samples(make):
    causal_query = make((2, 3, 2))
    bool_mask = make.bool((3, 4))
    bool_mask._data[:, 0] = True  # every query sees at least one key
    return [Sample((make((2, 3, 2)), make((2, 4, 2)), make((2, 4, 3))), name="plain"),
            Sample((causal_query, make((2, 3, 2)), make((2, 3, 2))), {"is_causal": True},
                   name="causal"),
            Sample((make((1, 3, 2)), make((1, 4, 2)), make((1, 4, 2)), bool_mask),
                   name="bool mask"),
            Sample((make((2, 3, 2)), make((2, 4, 2)), make((2, 4, 2)), make((3, 4))),
                   {"scale": 0.7}, name="float mask and scale"),
            Sample((make((1, 4, 2, 2)), make((1, 2, 3, 2)), make((1, 2, 3, 2))),
                   {"enable_gqa": True}, name="grouped query"),
            # 4-D without dropout: the fused node (plain, causal, masks, a permuted query)
            Sample((make((2, 2, 3, 2)), make((2, 2, 4, 2)), make((2, 2, 4, 3))),
                   name="fused plain"),
            Sample((make((1, 2, 3, 2)), make((1, 2, 3, 2)), make((1, 2, 3, 2))),
                   {"is_causal": True}, name="fused causal"),
            Sample((make((1, 2, 3, 2)), make((1, 2, 4, 2)), make((1, 2, 4, 2)), bool_mask),
                   name="fused bool mask"),
            Sample((make((2, 2, 3, 2)), make((2, 2, 4, 2)), make((2, 2, 4, 2)),
                    make((3, 4), requires_grad=False)), {"scale": 0.7},
                   name="fused float mask and scale")]


@register_op(namespace=_NN, samples=_attention_samples, atol=1e-6, rtol=1e-5)
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(Q K^T * scale + mask) V`` with ``scale = 1/sqrt(E)`` by default. Q is
    (..., L, E), K (..., S, E), V (..., S, Ev). A bool ``attn_mask`` keeps the True
    positions; a float one is added to the scores; ``is_causal`` keeps key j <= query i. A
    query that sees no key gets zeros. ``dropout_p`` drops attention weights (always, as
    in PyTorch's function). ``enable_gqa`` repeats K and V over query-head groups (dim -3).
    Costs O(L * S * (E + Ev)) per batch element."""
    for t, arg in ((query, "query"), (key, "key"), (value, "value")):
        ensure_tensor(t, "scaled_dot_product_attention", arg)
        if t.ndim < 2:
            raise RuntimeError(f"scaled_dot_product_attention(): '{arg}' must have at least 2 "
                               f"dimensions, got {list(t.shape)}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"scaled_dot_product_attention(): expected query (..., L, E), key (..., S, E) and "
            f"value (..., S, Ev), got {list(query.shape)}, {list(key.shape)} and "
            f"{list(value.shape)}")
    if not query.dtype.is_floating_point:  # (PyTorch's words: its kernel expects Float)
        raise RuntimeError(f"expected scalar type Float but found {query.dtype.scalar_name} "
                           "(scaled_dot_product_attention takes floating-point query, key "
                           "and value)")
    if key.dtype is not query.dtype or value.dtype is not query.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {query.dtype.scalar_name} key.dtype: "
                           f"{key.dtype.scalar_name} and value.dtype: "
                           f"{value.dtype.scalar_name} instead.")
    if attn_mask is not None:
        ensure_tensor(attn_mask, "scaled_dot_product_attention", "attn_mask")
        if attn_mask.dtype is not dtypes.bool and attn_mask.dtype is not query.dtype:
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match "
                               f"query dtype, but got attn_mask.dtype: "
                               f"{attn_mask.dtype.scalar_name} and query.dtype: "
                               f"{query.dtype.scalar_name} instead.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        heads, kv_heads = query.shape[-3], key.shape[-3]
        if heads % kv_heads or heads % value.shape[-3]:
            raise RuntimeError(f"scaled_dot_product_attention(): with enable_gqa the number "
                               f"of query heads ({heads}) must be a multiple of the key/value "
                               f"heads ({kv_heads}, {value.shape[-3]})")
        key, value = _repeat_heads(key, heads // kv_heads), _repeat_heads(
            value, heads // value.shape[-3])
    length, source = query.shape[-2], key.shape[-2]
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    if _fused_attention(query, key, value, attn_mask, dropout_p):
        return _flash(query, key, value, attn_mask, is_causal, factor)
    scores = matmul(query, key.transpose(-2, -1)) * factor
    xp = xp_of(query)
    keep = None
    if is_causal:
        keep = _constant(xp.tril(xp.ones((length, source), dtype=bool)), query)
    elif attn_mask is not None:
        if attn_mask.dtype is dtypes.bool:
            keep = attn_mask
        else:
            scores = scores + attn_mask
    if keep is not None:
        scores = where(keep, scores, -math.inf)
    # A row with no visible key is all -inf: PyTorch returns zeros there. Give softmax a
    # finite row instead (its NaN would poison the backward too), then zero the weights.
    blind = (scores._data == -math.inf).all(axis=-1, keepdims=True)
    if bool(blind.any()):
        blind = _constant(blind, scores)
        weights = where(blind, 0.0, softmax(where(blind, 0.0, scores), -1))
    else:
        weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return matmul(weights, value)


def _fused_attention(query, key, value, attn_mask, dropout_p) -> bool:
    """Where PyTorch's CPU dispatch picks its fused (flash) kernel, ember runs one fused
    node too: 4-D CPU float inputs with one head count, no dropout and a mask that needs
    no gradient. Elsewhere the composition above records its steps, as PyTorch's math
    kernel does."""
    return (query.ndim == key.ndim == value.ndim == 4 and dropout_p == 0.0
            and query.device.type == "cpu" and key.shape[-3] == query.shape[-3]
            and value.shape[-3] == query.shape[-3]
            and all(t.dtype in (dtypes.float32, dtypes.float64) and t.dtype is query.dtype
                    for t in (key, value))
            and (attn_mask is None or not attn_mask.requires_grad))


def _flash(query, key, value, attn_mask, is_causal, factor):
    xp = xp_of(query)
    mask, kind = None, None
    if is_causal:
        length, source = query.shape[-2], key.shape[-2]
        mask, kind = xp.tril(xp.ones((length, source), dtype=bool)), "keep"
    elif attn_mask is not None:
        if attn_mask.dtype is dtypes.bool:
            mask, kind = attn_mask._data, "keep"
        else:
            mask, kind = attn_mask._data, "add"
    return FlashAttention.apply(query, key, value, mask, kind, factor)


def _attention_weights(m, q, k, mask, kind, factor, blind):
    """softmax(q k^T * factor + mask) in the namespace ``m``; rows that see no key
    (``blind``) get zero weights, as PyTorch's."""
    scores = m.matmul(q, m.mT(k)) * factor
    if kind == "keep":
        scores = m.where(mask, scores, -math.inf)
    elif kind == "add":
        scores = scores + mask
    if blind is None:
        return m.softmax(scores, -1)
    return m.where(blind, 0.0, m.softmax(m.where(blind, 0.0, scores), -1))


class FlashAttention(Function):
    """``scaled_dot_product_attention`` as one node (PyTorch's CPU flash kernel's name).
    Backward recomputes the weights from q and k instead of keeping them (as flash
    attention does): dV = P^T dO, dS = P * (dO V^T - rowsum(dO V^T * P)), dQ = dS K * s,
    dK = dS^T Q * s. The output is laid out like the query (as PyTorch's kernel lays it
    out), so a following permute of heads and positions needs no copy."""

    array_backward = True
    node_name = "ScaledDotProductFlashAttentionForCpuBackward0"

    @staticmethod
    def forward(ctx, q, k, v, mask, kind, factor):
        xp = ctx.xp
        scores = xp.matmul(q, xp.swapaxes(k, -1, -2)) * factor
        if kind == "keep":
            scores = xp.where(mask, scores, -np.inf)
        elif kind == "add":
            scores = scores + mask
        blind = (scores == -np.inf).all(axis=-1, keepdims=True)
        blind = blind if bool(blind.any()) else None
        weights = _attention_weights(array_math(xp), q, k, mask, kind, factor, blind)
        out = xp.matmul(weights, v).astype(q.dtype, copy=False)
        if not q.flags.c_contiguous and v.shape[-1] == q.shape[-1]:
            laid = xp.empty_like(q)  # (order 'K': the query's memory order)
            laid[...] = out
            out = laid
        ctx.kind, ctx.factor = kind, factor
        ctx.save_for_backward(q, k, v, mask, blind)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        q, k, v, mask, blind = ctx.saved_tensors
        needs = ctx.needs_input_grad
        weights = _attention_weights(m, q, k, mask, ctx.kind, ctx.factor, blind)
        dv = m.matmul(m.mT(weights), grad) if needs[2] else None
        if not (needs[0] or needs[1]):
            return None, None, dv, None, None, None
        dp = m.matmul(grad, m.mT(v))
        ds = weights * (dp - m.sum(dp * weights, -1, True))
        dq = m.matmul(ds, k) * ctx.factor if needs[0] else None
        dk = m.matmul(m.mT(ds), q) * ctx.factor if needs[1] else None
        return dq, dk, dv, None, None, None


def _repeat_heads(t: Tensor, times: int) -> Tensor:
    """(..., H, S, E) -> (..., H * times, S, E), each head repeated ``times`` in place."""
    if times == 1:
        return t
    shape = tuple(t.shape)
    expanded = t.unsqueeze(-3).expand(shape[:-2] + (times,) + shape[-2:])
    return expanded.reshape(shape[:-3] + (shape[-3] * times,) + shape[-2:])


# ----------------------------------------------------------------------------- distances
class AddScalar(Add):
    """``tensor + number`` as PyTorch's add(Tensor, Scalar) overload, which its composite
    ops (pairwise_distance, rms_norm) call: the node is AddBackward1."""

    node_name = "AddBackward1"


def add_scalar(t: Tensor, value: float) -> Tensor:
    """``t + value`` recorded as add(Tensor, Scalar) (AddBackward1)."""
    return AddScalar.apply(t, float(value))


class SubScalar(Sub):
    """``tensor - number`` as PyTorch's sub(Tensor, Scalar) overload (SubBackward1)."""

    node_name = "SubBackward1"


def sub_scalar(t: Tensor, value: float) -> Tensor:
    """``t - value`` recorded as sub(Tensor, Scalar) (SubBackward1)."""
    return SubScalar.apply(t, float(value))


class PNorm(Function):
    """The p-norm along the last dim, with a zero gradient at a zero vector (PyTorch's
    convention for distances) and a stable backward for every p."""

    array_backward = True
    node_name = "NormBackward1"

    @staticmethod
    def forward(ctx, d, p, keepdim, split_ties):
        ctx.p, ctx.keepdim, ctx.split_ties = p, keepdim, split_ties
        out = _p_norm_array(ctx.xp, d, p, axis=-1).astype(d.dtype, copy=False)
        if keepdim:
            out = out[..., None]
        ctx.save_for_backward(d, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        d, norm = ctx.saved_tensors
        p = ctx.p
        if not ctx.keepdim:
            grad, norm = m.unsqueeze(grad, -1), m.unsqueeze(norm, -1)
        zero = norm == 0
        if p == 0:
            return grad * 0.0 * d, None, None, None
        if p in (math.inf, -math.inf):
            # The entries that attain the norm: norm() shares the gradient among ties,
            # cdist gives each its full share (both as PyTorch).
            share = m.cast(m.abs(d) == norm, d)
            if ctx.split_ties:
                share = share / m.sum(share, -1, True)
            return grad * m.sign(d) * share, None, None, None
        safe = m.where(zero, 1.0, norm)
        if p == 1:
            direction = m.sign(d)
        elif p == 2:
            direction = d / safe
        else:
            direction = m.sign(d) * m.abs(d) ** (p - 1) / safe ** (p - 1)
        return m.where(zero, 0.0, grad * direction), None, None, None


def _p_norm(d: Tensor, p: float, keepdim: bool = False, split_ties: bool = True) -> Tensor:
    return PNorm.apply(d, float(p), keepdim, split_ties)


def _distance_samples(make):
    return [Sample((make((3, 4)), make((3, 4))), name="p=2"),
            Sample((make((3, 4)), make((1, 4))), {"p": 1.0, "keepdim": True},
                   name="p=1 broadcast keepdim"),
            Sample((make((4,)), make((4,))), {"p": 3.0}, name="1-D p=3"),
            Sample((make((2, 3)), make((2, 3))), {"p": math.inf}, name="p=inf")]


@register_op(namespace=_NN, samples=_distance_samples, exported_in=("ember",))
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``|| x1 - x2 + eps ||_p`` over the last dimension (inputs broadcast).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.pairwise_distance(ember.tensor([[0.0, 0.0]]), ember.tensor([[3.0, 4.0]]), eps=0.0)
    tensor([5.])
    """
    ensure_tensor(x1, "pairwise_distance", "x1")
    ensure_tensor(x2, "pairwise_distance", "x2")
    if p < 0:
        raise RuntimeError(f"pairwise_distance(): p must be non-negative, got {p}")
    ndim = max(x1.ndim, x2.ndim)
    out = _p_norm(add_scalar(float_operand(x1 - x2, "pairwise_distance"), eps), p, keepdim)
    if ndim == 0:
        return out.reshape(())
    return out


def _cdist_samples(make):
    return [Sample((make((3, 2)), make((4, 2))), name="p=2"),
            Sample((make((2, 3, 2)), make((2, 2, 2))), {"p": 1.0}, name="batched p=1"),
            Sample((make((3, 2)), make((2, 2))), {"p": 3.0}, name="p=3"),
            Sample((make((2, 3)), make((4, 3))), {"p": math.inf}, name="p=inf")]


@register_op(samples=_cdist_samples)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """All pairwise p-norm distances: (..., P, M) and (..., R, M) give (..., P, R).
    The gradient at a zero distance is zero. Costs O(P * R * M) time and memory per batch
    element (the differences are formed explicitly, which keeps p=2 exact)."""
    ensure_tensor(x1, "cdist", "x1")
    ensure_tensor(x2, "cdist", "x2")
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, "
                           f"X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    difference = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _p_norm(difference, p, split_ties=False)


def _cosine_samples(make):
    return [Sample((make((3, 4)), make((3, 4))), name="dim 1"),
            Sample((make((2, 3)), make((1, 3))), {"dim": -1}, name="broadcast last dim"),
            Sample((make((4,)), make((4,))), {"dim": 0}, name="1-D")]


@register_op(namespace=_NN, samples=_cosine_samples, exported_in=("ember",))
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``<x1, x2> / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim`` (inputs
    broadcast): each vector is normalized separately, with its norm clamped at ``eps``
    (the clamp is outside the graph, as in PyTorch).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.cosine_similarity(ember.tensor([[1.0, 0.0]]), ember.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """
    ensure_tensor(x1, "cosine_similarity", "x1")
    ensure_tensor(x2, "cosine_similarity", "x2")
    common = dtypes.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{common.name} (cosine_similarity() takes floating-point inputs)")
    x1, x2 = (x if x.dtype is common else x.to(common) for x in (x1, x2))
    try:
        shape = tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    except ValueError:
        raise broadcast_error("cosine_similarity", x1.shape, x2.shape) from None
    d = wrap_dim(dim, len(shape), "cosine_similarity")
    if tuple(x1.shape) != tuple(x2.shape):  # PyTorch expands both (ExpandBackward0 each)
        x1, x2 = x1.expand(shape), x2.expand(shape)
    from .norms import vector_norm

    # PyTorch's composition: each input over its norm, the norm clamped at eps outside the
    # graph (so the gradient sees the unclamped norm, as PyTorch's does)
    scaled = []
    for x in (x1, x2):
        norm = vector_norm(x, 2, dim=d, keepdim=True).clone()
        with grad_mode.no_grad():
            norm.clamp_(min=float(eps))
        scaled.append(x / norm)
    return (scaled[0] * scaled[1]).sum(d)


__all__ = ["softmax", "log_softmax", "softmin", "gumbel_softmax", "linear", "bilinear",
           "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout", "embedding", "embedding_bag", "one_hot",
           "scaled_dot_product_attention", "pairwise_distance", "cdist", "cosine_similarity"]
