"""``multi_head_attention_forward``: the functional form of ``nn.MultiheadAttention``,
with every weight passed in (PyTorch's argument list), composed from ``linear``,
``bmm``/``baddbmm``, ``softmax`` and ``scaled_dot_product_attention``."""
from __future__ import annotations

import math
import warnings

from .. import dtypes
from ..creation import full, zeros
from ..tensor import Tensor
from ._util import ensure_tensor
from .comparison import where
from .neural import dropout, linear, scaled_dot_product_attention, softmax
from .products import baddbmm, bmm
from .registry import Sample, register_op
from .shape import cat, chunk, pad

_NN = "nn.functional"


def _float_mask(mask, like: Tensor, what: str):
    """A bool mask (True: may not attend) as an additive -inf / 0 mask."""
    if mask is None:
        return None
    ensure_tensor(mask, "multi_head_attention_forward", what)
    if mask.dtype is dtypes.bool:
        return where(mask, full((), float("-inf"), dtype=like.dtype, device=like.device),
                     zeros((), dtype=like.dtype, device=like.device))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {what} are supported")
    return mask.to(like.dtype)


def _pad_key(mask):
    return None if mask is None else pad(mask, (0, 1))


def _projections(query, key, value, use_separate, in_proj_weight, in_proj_bias, q_w, k_w,
                 v_w):
    biases = (None, None, None) if in_proj_bias is None else chunk(in_proj_bias, 3)
    if use_separate:
        for w, name in ((q_w, "q_proj_weight"), (k_w, "k_proj_weight"),
                        (v_w, "v_proj_weight")):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
        weights = (q_w, k_w, v_w)
    else:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if key is value:
            return _packed_projections(query, key, in_proj_weight, in_proj_bias)
        weights = chunk(in_proj_weight, 3)
    return tuple(linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))


def _packed_projections(query, key, weight, bias):
    """Self-attention (query is key is value) projects once with the packed weight, and
    shared keys and values project together, then split off as PyTorch does (so the graph
    has its nodes: one Addmm, then Unsqueeze, Transpose, Squeeze, Clone and Select)."""
    e = query.shape[-1]

    def split(proj, parts):
        proj = proj.unflatten(-1, (parts, e)).unsqueeze(0).transpose(0, -2).squeeze(-2)
        proj = proj.contiguous()
        return tuple(proj[i] for i in range(parts))

    if query is key:
        return split(linear(query, weight, bias), 3)
    w_q, w_kv = weight.split([e, 2 * e])
    b_q, b_kv = (None, None) if bias is None else bias.split([e, 2 * e])
    return (linear(query, w_q, b_q),) + split(linear(key, w_kv, b_kv), 2)


def _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """Whether the inputs are batched (3-D) or not (2-D), checking they agree."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 2-D but found {key_padding_mask.ndim}-D tensor "
                                 f"instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be "
                                 f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                                 f"instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to "
                                 f"be 2-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` "
                                 f"to be `None` or 1-D but found {key_padding_mask.ndim}-D "
                                 f"tensor instead")
        if attn_mask is not None and attn_mask.ndim == 3 and \
                tuple(attn_mask.shape) != (num_heads, query.shape[0], key.shape[0]):
            raise AssertionError(f"Expected `attn_mask` shape to be "
                                 f"{(num_heads, query.shape[0], key.shape[0])} but got "
                                 f"{tuple(attn_mask.shape)}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.ndim}-D query tensor")


def _mha_samples(make):
    e, h = 4, 2

    def weights(bias=True):
        return (make((3 * e, e)), make((3 * e,)) if bias else None)

    def out_proj():
        return make((e, e)), make((e,))

    q, k, v = make((3, 2, e)), make((5, 2, e)), make((5, 2, e))
    # distinct tensors: the oracle converts each argument on its own
    same = (make((3, 2, e)), make((3, 2, e)), make((3, 2, e)))
    out = [Sample((*same, e, h, *weights(), None, None, False, 0.0, *out_proj()),
                  name="same lengths, weights"),
           Sample((q, k, v, e, h, *weights(), None, None, False, 0.0, *out_proj()),
                  {"need_weights": False, "key_padding_mask": make.bool((2, 5)) & False,
                   "attn_mask": make((3, 5), requires_grad=False)},
                  name="sdpa path with masks"),
           Sample((q, k, v, e, h, *weights(), make((1, 1, e)), make((1, 1, e)), True, 0.0,
                   *out_proj()), {"average_attn_weights": False},
                  name="bias_k, add_zero_attn, per-head weights"),
           Sample((make((3, e)), make((5, 3)), make((5, 2)), e, h, None, make((3 * e,)), None,
                   None, False, 0.0, *out_proj()),
                  {"use_separate_proj_weight": True, "q_proj_weight": make((e, e)),
                   "k_proj_weight": make((e, 3)), "v_proj_weight": make((e, 2))},
                  name="unbatched, separate kdim/vdim")]
    return out


@register_op(namespace=_NN, samples=_mha_samples)
def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention on (L, N, E) query and (S, N, E) key/value (or unbatched
    (L, E) / (S, E)): project with ``in_proj_weight`` (the stacked W_q, W_k, W_v) or the
    separate ``q/k/v_proj_weight``, attend per head with ``softmax(Q K^T / sqrt(d) + mask)``,
    project with ``out_proj_weight``. Returns ``(output, weights)``; the weights are averaged
    over heads unless ``average_attn_weights=False``, and None unless ``need_weights``.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> x = ember.randn(3, 1, 4)
    >>> w, b = ember.randn(12, 4), ember.zeros(12)
    >>> out, attn = F.multi_head_attention_forward(x, x, x, 4, 2, w, b, None, None, False,
    ...                                            0.0, ember.eye(4), None)
    >>> out.shape, attn.shape
    (ember.Size([3, 1, 4]), ember.Size([1, 3, 3]))
    """
    for t, what in ((query, "query"), (key, "key"), (value, "value")):
        ensure_tensor(t, "multi_head_attention_forward", what)
    batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if key_padding_mask is not None and attn_mask is not None and \
            getattr(key_padding_mask, "dtype", None) != getattr(attn_mask, "dtype", None):
        warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. "
                      "Use same type for both instead.", stacklevel=2)
    key_padding_mask = _float_mask(key_padding_mask, query, "key_padding_mask")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention builds the causal mask itself
    else:
        attn_mask = _float_mask(attn_mask, query, "attn_mask")
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not "
                                 f"match value's {tuple(value.shape[:2])}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape "
                             f"{tuple(value.shape)}")
    q, k, v = _projections(query, key, value, use_separate_proj_weight, in_proj_weight,
                           in_proj_bias, q_proj_weight, k_proj_weight, v_proj_weight)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, "
                                   f"but should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, "
                                   f"but should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key or value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _pad_key(attn_mask), _pad_key(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given, or neither")
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, bsz * num_heads, head_dim, "key")
    v = _heads(v, static_v, bsz * num_heads, head_dim, "value")
    if add_zero_attn:
        z = zeros(bsz * num_heads, 1, head_dim, dtype=q.dtype, device=q.device)
        k, v = cat([k, z], 1), cat([v, z], 1)
        attn_mask, key_padding_mask = _pad_key(attn_mask), _pad_key(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but "
                                 f"got {tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(
            bsz, num_heads, 1, src_len).reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        scaled = q * math.sqrt(1.0 / head_dim)
        if attn_mask is not None:
            scores = baddbmm(attn_mask, scaled, k.transpose(-2, -1))
        else:
            scores = bmm(scaled, k.transpose(-2, -1))
        weights = softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, embed_dim)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 else \
            attn_mask.reshape(bsz, num_heads, -1, src_len)
    out = scaled_dot_product_attention(
        q.reshape(bsz, num_heads, tgt_len, head_dim), k.reshape(bsz, num_heads, src_len,
                                                                head_dim),
        v.reshape(bsz, num_heads, src_len, head_dim), attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).contiguous().view(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, embed_dim)
    return (out if batched else out.squeeze(1)), None


def _heads(x, static, batch_heads: int, head_dim: int, what: str):
    """(S, N, E) -> (N * H, S, d), or the given static keys / values."""
    if static is None:
        return x.reshape(x.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.shape[0] != batch_heads:
        raise AssertionError(f"expecting static_{what[0]}.size(0) of {batch_heads}, but got "
                             f"{static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting static_{what[0]}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")
    return static
