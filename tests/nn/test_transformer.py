"""MultiheadAttention and the Transformer modules equal PyTorch's (float64, eval mode for
the layers with dropout)."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn as nn

from .compare import Const, check_module, same_keys, same_repr

torch = pytest.importorskip("torch")


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_self_attention_weights(batch_first):
    t = torch.nn.MultiheadAttention(4, 2, batch_first=batch_first)
    e = nn.MultiheadAttention(4, 2, batch_first=batch_first)
    same_repr(t, e)
    same_keys(t, e)
    x = rand(2, 3, 4)
    check_module(t, e, x, x + 0.5, x - 0.25)
    check_module(t, e, x, x, x, call=lambda m, q, k, v: m(q, k, v, average_attn_weights=False))
    check_module(t, e, x, x, x, call=lambda m, q, k, v: m(q, k, v, need_weights=False))


@pytest.mark.parametrize("mask_kind", ["bool", "float"])
def test_mha_masks(mask_kind):
    t, e = torch.nn.MultiheadAttention(4, 2), nn.MultiheadAttention(4, 2)
    L, S, N = 3, 4, 2
    q, k, v = rand(L, N, 4), rand(S, N, 4, seed=1), rand(S, N, 4, seed=2)
    padding = np.array([[False, False, True, False], [False, False, False, True]])
    causal = np.triu(np.ones((L, S), dtype=bool), k=2)
    if mask_kind == "float":
        padding = np.where(padding, -np.inf, 0.0)
        causal = np.where(causal, -np.inf, 0.0)

    def call(m, q_, k_, v_):
        lib = torch if isinstance(q_, torch.Tensor) else ember
        return m(q_, k_, v_, key_padding_mask=lib.tensor(padding), attn_mask=lib.tensor(causal))

    check_module(t, e, q, k, v, call=call)


def test_mha_3d_mask_kdim_vdim_bias_kv_zero_attn():
    t = torch.nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True,
                                    add_zero_attn=True)
    e = nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True)
    same_keys(t, e)
    q, k, v = rand(3, 2, 4), rand(4, 2, 3, seed=1), rand(4, 2, 5, seed=2)
    mask = rand(4, 3, 4, seed=3)  # (N*H, L, S)

    def call(m, q_, k_, v_, mask_):
        return m(q_, k_, v_, attn_mask=mask_)

    check_module(t, e, q, k, v, Const(mask), call=call)


def test_mha_unbatched_and_no_bias():
    t = torch.nn.MultiheadAttention(4, 1, bias=False)
    e = nn.MultiheadAttention(4, 1, bias=False)
    same_keys(t, e)
    x = rand(3, 4)
    check_module(t, e, x, x, x)


def test_mha_errors():
    e = nn.MultiheadAttention(4, 2)
    x = ember.ones(3, 2, 4)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is"):
        e(x, x, x, attn_mask=ember.zeros(2, 2))
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(5, 2)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal"):
        e(x, x, x, is_causal=True)


LAYERS = [
    ("encoder-post-norm", lambda m: m.TransformerEncoderLayer(4, 2, 8)),
    ("encoder-pre-norm-gelu-bf", lambda m: m.TransformerEncoderLayer(
        4, 2, 8, activation="gelu", norm_first=True, batch_first=True)),
]


@pytest.mark.parametrize("name,build", LAYERS, ids=[c[0] for c in LAYERS])
def test_encoder_layer_eval(name, build):
    t, e = build(torch.nn).eval(), build(nn).eval()
    same_repr(t, e)
    same_keys(t, e)
    src = rand(2, 3, 4) if t.self_attn.batch_first else rand(3, 2, 4)
    padding = np.array([[False, False, True], [False, False, False]])

    def call(m, x):
        lib = torch if isinstance(x, torch.Tensor) else ember
        return m(x, src_key_padding_mask=lib.tensor(padding))

    check_module(t, e, src)
    check_module(t, e, src, call=call)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_eval(norm_first):
    t = torch.nn.TransformerDecoderLayer(4, 2, 6, norm_first=norm_first).eval()
    e = nn.TransformerDecoderLayer(4, 2, 6, norm_first=norm_first).eval()
    same_repr(t, e)
    same_keys(t, e)
    tgt, memory = rand(3, 2, 4), rand(5, 2, 4, seed=1)
    mask = np.triu(np.full((3, 3), -np.inf), k=1)

    def call(m, tg, mem):
        lib = torch if isinstance(tg, torch.Tensor) else ember
        return m(tg, mem, tgt_mask=lib.tensor(mask))

    check_module(t, e, tgt, memory, call=call)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
def test_encoder_decoder_stacks_and_transformer_eval():
    layer_t = torch.nn.TransformerEncoderLayer(4, 2, 6)
    layer_e = nn.TransformerEncoderLayer(4, 2, 6)
    t = torch.nn.TransformerEncoder(layer_t, 2, norm=torch.nn.LayerNorm(4),
                                    enable_nested_tensor=False).eval()
    e = nn.TransformerEncoder(layer_e, 2, norm=nn.LayerNorm(4)).eval()
    same_repr(t, e)
    same_keys(t, e)
    check_module(t, e, rand(3, 2, 4))

    t = torch.nn.Transformer(4, 2, 1, 2, 6).eval()
    e = nn.Transformer(4, 2, 1, 2, 6).eval()
    same_repr(t, e)
    same_keys(t, e)
    mask = np.triu(np.full((3, 3), -np.inf), k=1)
    np.testing.assert_array_equal(nn.Transformer.generate_square_subsequent_mask(3).numpy(),
                                  torch.nn.Transformer.generate_square_subsequent_mask(3))

    def call(m, src, tgt):
        lib = torch if isinstance(src, torch.Tensor) else ember
        return m(src, tgt, tgt_mask=lib.tensor(mask))

    check_module(t, e, rand(4, 2, 4), rand(3, 2, 4, seed=1), call=call)


def test_transformer_initialization_is_xavier():
    model = nn.Transformer(8, 2, 1, 1, 16)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6 / (8 + 16))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound


def test_mha_without_weights_fully_masked_row_matches_torch():
    # Forward only: a query that may attend to nothing gets zeros (SDPA's convention, which
    # PyTorch's MHA follows when need_weights=False).
    from .compare import assert_close, copy_weights

    t, e = torch.nn.MultiheadAttention(4, 2).double(), nn.MultiheadAttention(4, 2).double()
    copy_weights(t, e)
    x = rand(3, 2, 4)
    padding = np.array([[True, True, True], [False, True, False]])
    with torch.no_grad():
        expected, _ = t(*(torch.tensor(x),) * 3, key_padding_mask=torch.tensor(padding),
                        need_weights=False)
    got, weights = e(*(ember.tensor(x),) * 3, key_padding_mask=ember.tensor(padding),
                     need_weights=False)
    assert weights is None
    assert np.isfinite(expected.numpy()).all()
    assert_close(got, expected)
