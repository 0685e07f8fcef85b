"""The torch-level forms of nn functions (``torch.batch_norm``, ``torch.kl_div``,
``torch.embedding``, ``torch.lstm_cell``, ...), with PyTorch's signatures for them: flags passed
positionally, reductions as integers (0 'none', 1 'mean', 2 'sum'; a left-out reduction is
0 there, as PyTorch's bindings make it), ``embedding`` taking the
weight first. Each is computed by the nn.functional op it mirrors, so its gradients are
that op's; the recurrent cells are built from ``linear`` and the gate activations (the
whole layers, ``torch.lstm`` and the like, are fused ops in ``recurrent.py``).

>>> import ember
>>> x = ember.tensor([[0.2, 0.8]]).log()
>>> ember.kl_div(x, ember.tensor([[0.5, 0.5]]), 2)
tensor(0.2231)
"""
from __future__ import annotations

from ..autograd import grad_mode
from ..tensor import Tensor
from . import losses, normalization, pooling
from ._util import ensure_tensor
from .activations import sigmoid
from .composites import channel_shuffle, pdist
from .neural import _alpha_dropout, _dropout, _renorm_rows, bilinear, dropout, linear
from .neural import alpha_dropout as _f_alpha_dropout
from .neural import embedding as _embedding
from .registry import NAMESPACES, Sample, register_op
from .shape import chunk
from .unary import relu, tanh

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction, name: str) -> str:
    """PyTorch's reduction enum (an int) as the nn.functional string."""
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise TypeError(f"{name}(): argument 'reduction' must be int, not "
                        f"{type(reduction).__name__}")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction (0 'none', 1 'mean' "
                         f"or 2 'sum')")
    return _REDUCTIONS[reduction]


def _int_reduction(samples):
    """The nn.functional samples with the reduction as PyTorch's enum."""
    codes = {v: k for k, v in _REDUCTIONS.items()}

    def converted(make):
        out = []
        for s in samples(make):
            kwargs = dict(s.kwargs)
            if kwargs.get("reduction") not in (None, *codes):
                continue  # 'batchmean' is nn.functional's alone
            if "reduction" in kwargs:
                kwargs["reduction"] = codes[kwargs["reduction"]]
            out.append(Sample(s.args, kwargs, s.name))
        return out
    return converted


# ----------------------------------------------------------------------------- dropout
def _feature_shape(input: Tensor, train: bool, name: str) -> tuple:
    ensure_tensor(input, name)
    if not train:  # identity: any rank will do, as in PyTorch
        return tuple(input.shape)
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return tuple(input.shape[:2]) + (1,) * (input.ndim - 2)


def _eval_samples(make):
    # masks are random, so the table checks the deterministic forms (the random ones are
    # tested in tests/ops/test_aten_forms.py)
    return [Sample((make((2, 3, 4)), 0.5, False), name="eval"),
            Sample((make((2, 3)), 0.0, True), name="p=0")]


@register_op(samples=_eval_samples)
def alpha_dropout(input, p, train):
    """``nn.functional.alpha_dropout(input, p, train)``, with the flag positional."""
    return _f_alpha_dropout(input, p, train)


@register_op(samples=_eval_samples)
def feature_dropout(input, p, train):
    """Dropout of whole channels: dims 0 and 1 of the input pick the mask, as
    ``dropout2d`` does for any rank."""
    return _dropout(input, p, train, False, _feature_shape(input, train, "feature_dropout"),
                    "feature_dropout")


@register_op(samples=_eval_samples)
def feature_alpha_dropout(input, p, train):
    """Alpha dropout of whole channels (dims 0 and 1 of the input pick the mask)."""
    return _alpha_dropout(input, p, train, False,
                          _feature_shape(input, train, "feature_alpha_dropout"),
                          "feature_alpha_dropout")


def dropout_(input, p, train):
    """In-place ``dropout(input, p, train)``: returns ``input``, zeroed and rescaled.

    >>> import ember
    >>> x = ember.ones(3)
    >>> ember.dropout_(x, 0.5, False) is x
    True
    """
    return dropout(input, p, train, inplace=True)


def alpha_dropout_(input, p, train):
    """In-place ``alpha_dropout``."""
    return _alpha_dropout(input, p, train, True, tuple(input.shape), "alpha_dropout_")


def feature_dropout_(input, p, train):
    """In-place ``feature_dropout``."""
    return _dropout(input, p, train, True, _feature_shape(input, train, "feature_dropout_"),
                    "feature_dropout_")


def feature_alpha_dropout_(input, p, train):
    """In-place ``feature_alpha_dropout``."""
    return _alpha_dropout(input, p, train, True,
                          _feature_shape(input, train, "feature_alpha_dropout_"),
                          "feature_alpha_dropout_")


# ----------------------------------------------------------------------------- norms
def _norm_samples(make):
    x = make((4, 3, 5))
    stats = (make((3,), requires_grad=False), make((3,), 0.5, 2.0, requires_grad=False))
    return [Sample((x, make((3,)), make((3,)), *stats, True, 0.1, 1e-5, False), name="train"),
            Sample((make((2, 3)), None, None, *stats, False, 0.1, 1e-3, False), name="eval")]


@register_op(samples=_norm_samples)
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """``nn.functional.batch_norm`` with PyTorch's torch-level argument order: weight and
    bias come before the running statistics; ``cudnn_enabled`` is accepted (ember picks
    its kernels itself)."""
    return normalization.batch_norm(input, running_mean, running_var, weight, bias, training,
                                    momentum, eps)


def _instance_samples(make):
    return [Sample((make((2, 3, 5)), make((3,)), make((3,)), None, None, True, 0.1, 1e-5,
                    False), name="input stats"),
            Sample((make((2, 3, 4)), None, None, make((3,), requires_grad=False),
                    make((3,), 0.5, 2.0, requires_grad=False), False, 0.1, 1e-5, False),
                   name="running stats")]


@register_op(samples=_instance_samples)
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    """``nn.functional.instance_norm`` with the torch-level argument order."""
    return normalization.instance_norm(input, running_mean, running_var, weight, bias,
                                       use_input_stats, momentum, eps)


# ----------------------------------------------------------------------------- embedding
def _embedding_samples(make):
    weight = make((6, 3))
    # padding_idx and scale_grad_by_freq change the gradient on purpose (it is no longer
    # the derivative): tests/ops/test_aten_forms.py compares them with PyTorch
    return [Sample((weight, make.index((2, 4), 6)), name="plain"),
            Sample((make((5, 2)), make.index((7,), 5), -1), name="padding_idx -1 (none)")]


@register_op(samples=_embedding_samples)
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by ``indices`` (the weight comes first here); a negative
    ``padding_idx`` means none."""
    pad = None if padding_idx is None or padding_idx < 0 else padding_idx
    return _embedding(indices, weight, pad, None, 2.0, scale_grad_by_freq, sparse)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rescale, in place, the rows of ``input`` named by ``indices`` whose ``norm_type`` norm
    exceeds ``max_norm`` to that norm; returns ``input``.

    >>> import ember
    >>> w = ember.tensor([[3.0, 4.0], [0.3, 0.4]])
    >>> ember.embedding_renorm_(w, ember.tensor([0, 1]), 1.0, 2.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    ensure_tensor(input, "embedding_renorm_", "input")
    ensure_tensor(indices, "embedding_renorm_", "indices")
    if input.ndim != 2:
        raise RuntimeError(f"embedding_renorm_(): expected a 2-D weight, got {input.ndim}-D")
    if indices.dtype.is_floating_point:
        raise RuntimeError(f"Expected tensor for argument #2 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {indices.dtype} "
                           f"instead (while checking arguments for embedding_renorm_)")
    if grad_mode.is_grad_enabled() and input.requires_grad and input.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    _renorm_rows(input, indices, float(max_norm), float(norm_type))
    return input


# ----------------------------------------------------------------------------- losses
@register_op(samples=_int_reduction(losses._kl_samples))
def kl_div(input, target, reduction=0, *, log_target=False):
    """``nn.functional.kl_div`` with the reduction as PyTorch's enum (1: the mean over all
    elements; 'batchmean' is nn.functional's alone). Left out, the reduction is 0 ('none'),
    as in PyTorch."""
    return losses.kl_div(input, target, reduction=_reduction(reduction, "kl_div"),
                   log_target=log_target)


def _bce_samples(make):
    return [Sample((make((3, 4)), make((3, 4), 0.0, 1.0, requires_grad=False)), name="mean"),
            Sample((make((3, 4)), make((3, 4), 0.0, 1.0, requires_grad=False),
                    make((4,), 0.5, 2.0, requires_grad=False),
                    make((4,), 0.5, 2.0, requires_grad=False), 0),
                   name="weights none")]


@register_op(samples=_bce_samples)
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction=0):
    """``nn.functional.binary_cross_entropy_with_logits`` with ``pos_weight`` before the
    reduction enum."""
    return losses.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(
        reduction, "binary_cross_entropy_with_logits"), pos_weight=pos_weight)


@register_op(samples=_int_reduction(losses._cosine_embedding_samples))
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """``nn.functional.cosine_embedding_loss`` with the reduction enum."""
    return losses.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(
        reduction, "cosine_embedding_loss"))


@register_op(samples=_int_reduction(losses._hinge_samples))
def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """``nn.functional.hinge_embedding_loss`` with the reduction enum."""
    return losses.hinge_embedding_loss(input, target, margin, reduction=_reduction(
        reduction, "hinge_embedding_loss"))


@register_op(samples=_int_reduction(losses._ranking_samples))
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """``nn.functional.margin_ranking_loss`` with the reduction enum."""
    return losses.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(
        reduction, "margin_ranking_loss"))


def _poisson_samples(make):
    target = make((3, 4), 0.0, 3.0, requires_grad=False)
    return [Sample((make((3, 4)), target, True, False, 1e-8, 1), name="log input"),
            Sample((make((3, 4), 0.1, 2.0), target, False, True, 1e-8, 2), name="full sum")]


@register_op(samples=_poisson_samples)
def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``nn.functional.poisson_nll_loss``, every argument positional, the reduction an
    enum."""
    return losses.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(
        reduction, "poisson_nll_loss"))


@register_op(samples=_int_reduction(losses._triplet_samples))
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=0):
    """``nn.functional.triplet_margin_loss`` with the reduction enum."""
    return losses.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                reduction=_reduction(reduction, "triplet_margin_loss"))


def _ctc_torch(torch, log_probs, targets, input_lengths, target_lengths, blank=0,
               reduction=0, zero_infinity=False):
    return losses._ctc_torch(torch, log_probs, targets, input_lengths, target_lengths, blank,
                      _REDUCTIONS[reduction], zero_infinity)


def _ctc_aten_samples(make):
    # torch.ctc_loss takes the lengths as int lists or as tensors (not a mix)
    out = []
    for s in _int_reduction(losses._ctc_samples)(make):
        lengths = [list(a.tolist()) if isinstance(a, Tensor) and a.ndim else a
                   for a in s.args[2:4]]
        if all(isinstance(a, (list, tuple)) for a in lengths):
            out.append(Sample(s.args[:2] + tuple(lengths), s.kwargs, s.name))
    return out


@register_op(samples=_ctc_aten_samples, torch=_ctc_torch, gradgrad=False)
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    """``nn.functional.ctc_loss`` with the reduction enum."""
    return losses.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                     _reduction(reduction, "ctc_loss"), zero_infinity)


# ----------------------------------------------------------------------------- pooling
@register_op(samples=lambda make: [Sample((make((2, 3, 7)), 3)), Sample((make((3, 5)), (2,)))])
def adaptive_max_pool1d(input, output_size):
    """``nn.functional.adaptive_max_pool1d(..., return_indices=True)``: the maxima and
    their positions."""
    return pooling.adaptive_max_pool1d(input, output_size, return_indices=True)


@register_op(samples=lambda make: [Sample((make((2, 3, 9)), 3)),
                                   Sample((make((3, 8)), (3,), (2,), 1, 1, True))])
def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """``nn.functional.max_pool1d(..., return_indices=True)``; an empty ``stride`` means the
    kernel size."""
    stride = None if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else stride
    return pooling.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode,
                      return_indices=True)


# ----------------------------------------------------------------------------- recurrent
def _check_cell(input, hx, w_ih, w_hh, name: str):
    ensure_tensor(input, name, "input")
    ensure_tensor(hx, name, "hx")
    if input.shape[-1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} "
                           f"expected {w_ih.shape[1]}")
    if input.ndim == 2 and hx.shape[0] != input.shape[0]:
        raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden0 batch "
                           f"size {hx.shape[0]}")
    if hx.shape[-1] != w_hh.shape[1]:
        raise RuntimeError(f"hidden0 has inconsistent hidden_size: got {hx.shape[-1]}, "
                           f"expected {w_hh.shape[1]}")


def _step(mode: str, x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One step of a cell: the new hidden state (and cell state for an LSTM)."""
    gates_x, gates_h = linear(x, w_ih, b_ih), linear(h, w_hh, b_hh)
    if mode == "RNN_TANH":
        return tanh(gates_x + gates_h), None
    if mode == "RNN_RELU":
        return relu(gates_x + gates_h), None
    if mode == "LSTM":
        i, f, g, o = chunk(gates_x + gates_h, 4, -1)
        c = sigmoid(f) * c + sigmoid(i) * tanh(g)
        return sigmoid(o) * tanh(c), c
    r_x, z_x, n_x = chunk(gates_x, 3, -1)
    r_h, z_h, n_h = chunk(gates_h, 3, -1)
    r, z = sigmoid(r_x + r_h), sigmoid(z_x + z_h)
    n = tanh(n_x + r * n_h)
    return n + z * (h - n), None


def _cell_samples(mode: str, gates: int):
    def samples(make):
        x, h = make((3, 4)), make((3, 5))
        w = (make((gates * 5, 4)), make((gates * 5, 5)))
        b = (make((gates * 5,)), make((gates * 5,)))
        state = [h, make((3, 5))] if mode == "LSTM" else h
        return [Sample((x, state, *w, *b), name="bias"), Sample((x, state, *w), name="no bias")]
    return samples


@register_op(samples=_cell_samples("RNN_TANH", 1))
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``: one step of an Elman RNN."""
    _check_cell(input, hx, w_ih, w_hh, "rnn_tanh_cell")
    return _step("RNN_TANH", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


@register_op(samples=_cell_samples("RNN_RELU", 1))
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``relu(x W_ih^T + b_ih + h W_hh^T + b_hh)``: one step of an Elman RNN."""
    _check_cell(input, hx, w_ih, w_hh, "rnn_relu_cell")
    return _step("RNN_RELU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


@register_op(samples=_cell_samples("GRU", 3))
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step; the gate rows of the weights are (reset, update, new)."""
    _check_cell(input, hx, w_ih, w_hh, "gru_cell")
    return _step("GRU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


@register_op(samples=_cell_samples("LSTM", 4))
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step from ``hx = [h, c]``: returns ``(h', c')``; the gate rows of the weights
    are (input, forget, cell, output)."""
    if not isinstance(hx, (list, tuple)) or len(hx) != 2:
        raise RuntimeError("lstm_cell(): expected hx to be a list of two tensors (h, c)")
    _check_cell(input, hx[0], w_ih, w_hh, "lstm_cell")
    return _step("LSTM", input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh)


# Same signature at torch level as in nn.functional: one function, two names.
for _same in (bilinear, pdist, channel_shuffle):
    NAMESPACES["ember"].setdefault(_same.__name__, _same)
for _inplace_form in (dropout_, alpha_dropout_, feature_dropout_, feature_alpha_dropout_,
                      embedding_renorm_):
    NAMESPACES["ember"][_inplace_form.__name__] = _inplace_form
del _same, _inplace_form
