"""nn layers and nn.functional across their options equal PyTorch's: values, input and
parameter gradients in float64, the exception type for bad arguments and the warnings."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn

from .compare import Const, as_input, check_module, rand

torch = pytest.importorskip("torch")


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check_function(f, inputs, atol=1e-10, rtol=1e-7):
    """Run f(torch, *inputs) and f(ember, *inputs); compare outputs and input gradients."""
    t_in = [as_input(torch, x) for x in inputs]
    e_in = [as_input(ember, x) for x in inputs]
    t_out, e_out = _outputs(f(torch, *t_in)), _outputs(f(ember, *e_in))
    assert len(t_out) == len(e_out)
    rng = np.random.default_rng(0)
    t_terms, e_terms = [], []
    for t, e in zip(t_out, e_out):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol,
                                   rtol=rtol)
        if t.requires_grad:
            up = rng.standard_normal(tuple(t.shape))
            t_terms.append((t * torch.tensor(up)).sum())
            e_terms.append((e * ember.tensor(up)).sum())
    if not t_terms:
        return
    sum(t_terms).backward()
    sum(e_terms[1:], e_terms[0]).backward()
    for t, e in zip(t_in, e_in):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=atol, rtol=rtol)


def F(T):
    return T.nn.functional


X1, X2, X3 = rand(2, 2, 9, low=0.1), rand(2, 2, 7, 6, low=0.1), rand(1, 2, 5, 4, 5, low=0.1)

# (id, inputs, f(lib, *tensors))
FUNCTION_CASES = [
    # lp_pool with p = +-inf is PyTorch's max (min) pool of |x|
    ("lp_pool1d-inf", [X1], lambda T, x: F(T).lp_pool1d(x, float("inf"), 3, 2)),
    ("lp_pool1d-neg-inf-ceil", [X1], lambda T, x: F(T).lp_pool1d(x, -float("inf"), 2,
                                                                  ceil_mode=True)),
    ("lp_pool2d-inf", [X2 - 1.0], lambda T, x: F(T).lp_pool2d(x, float("inf"), 2)),
    ("lp_pool2d-inf-stride-ceil", [X2], lambda T, x: F(T).lp_pool2d(x, float("inf"), 3, 1,
                                                                     ceil_mode=True)),
    ("lp_pool3d-inf", [X3], lambda T, x: F(T).lp_pool3d(x, float("inf"), 2)),
    # hardswish's gradient at the kinks themselves: 0 at -3, 1 at 3
    ("hardswish-kinks", [np.array([-3.0, 3.0, -2.5, 2.5, -4.0, 4.0])],
     lambda T, x: F(T).hardswish(x)),
    ("native_channel_shuffle", [Const(rand(2, 6, 3))],  # (torch has no derivative for it)
     lambda T, x: F(T).native_channel_shuffle(x, 3)),
    # guards: options that already matched
    ("lp_pool2d-p1.5-ceil", [X2], lambda T, x: F(T).lp_pool2d(x, 1.5, 3, 2, ceil_mode=True)),
    ("max_pool2d-dilation-ceil-indices", [X2],
     lambda T, x: F(T).max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True,
                                  return_indices=True)),
    ("avg_pool3d-divisor-ceil", [X3],
     lambda T, x: F(T).avg_pool3d(x, 2, 2, 1, ceil_mode=True, count_include_pad=False,
                                  divisor_override=3)),
    ("adaptive_max_pool2d-None", [X2],
     lambda T, x: F(T).adaptive_max_pool2d(x, (None, 4), return_indices=True)),
    ("interpolate-bicubic-antialias", [X2],
     lambda T, x: F(T).interpolate(x, scale_factor=0.6, mode="bicubic", antialias=True,
                                   recompute_scale_factor=True)),
    ("grid_sample-bicubic-reflection", [rand(1, 2, 3, 4), rand(1, 3, 3, 2, low=-3, high=3)],
     lambda T, x, g: F(T).grid_sample(x, g, mode="bicubic", padding_mode="reflection",
                                      align_corners=False)),
    ("pad-circular-negative", [X2], lambda T, x: F(T).pad(x, (2, -1, -2, 3), mode="circular")),
    ("sdpa-gqa-float-mask-grad", [rand(2, 4, 3, 5), rand(2, 2, 4, 5, seed=1),
                                  rand(2, 2, 4, 5, seed=2), rand(1, 4, 3, 4, seed=3)],
     lambda T, q, k, v, m: F(T).scaled_dot_product_attention(q, k, v, attn_mask=m,
                                                             enable_gqa=True)),
]


@pytest.mark.parametrize("name,inputs,f", FUNCTION_CASES, ids=[c[0] for c in FUNCTION_CASES])
def test_function_matches_torch(name, inputs, f):
    check_function(f, inputs)


_W = Const(rand(6, 3, seed=4))
_FLAT = np.array([1, 2, 4, 5, 4, 3, 2, 0, 1])

# (id, f(lib)) that PyTorch rejects; ember must raise the same exception type
ERROR_CASES = [
    ("pad-mode-None", lambda T: F(T).pad(T.ones(2, 3), (1, 1), mode=None)),
    ("adaptive_avg_pool1d-two-sizes", lambda T: F(T).adaptive_avg_pool1d(T.ones(1, 2, 5), (2, 2))),
    ("adaptive_avg_pool2d-three-sizes",
     lambda T: F(T).adaptive_avg_pool2d(T.ones(1, 2, 5, 5), (2, 2, 2))),
    ("adaptive_max_pool3d-two-sizes",
     lambda T: F(T).adaptive_max_pool3d(T.ones(1, 2, 5, 5, 5), (2, 2))),
    ("adaptive_avg_pool2d-None", lambda T: F(T).adaptive_avg_pool2d(T.ones(2, 5, 5), None)),
    ("adaptive_max_pool1d-None-element",
     lambda T: F(T).adaptive_max_pool1d(T.ones(2, 5), (None,))),
    ("interpolate-size-and-recompute",
     lambda T: F(T).interpolate(T.ones(1, 1, 4, 4), size=3, recompute_scale_factor=True)),
    ("interpolate-size-too-long",
     lambda T: F(T).interpolate(T.ones(1, 1, 4, 4), size=(2, 3, 4))),
    ("conv_transpose-output-padding-at-forward",
     lambda T: T.nn.ConvTranspose2d(2, 3, 3, output_padding=1)(T.ones(1, 2, 4, 4))),
    ("embedding_bag-offsets-start",
     lambda T: F(T).embedding_bag(T.tensor(_FLAT), T.tensor(_W.array), T.tensor([1, 3]))),
    ("embedding_bag-offsets-end",
     lambda T: F(T).embedding_bag(T.tensor(_FLAT), T.tensor(_W.array), T.tensor([0, 12]))),
    ("embedding_bag-last-offset-end",
     lambda T: F(T).embedding_bag(T.tensor(_FLAT), T.tensor(_W.array), T.tensor([0, 2, 10]),
                                  include_last_offset=True)),
    ("embedding_bag-max-scale-grad",
     lambda T: F(T).embedding_bag(T.tensor(_FLAT), T.tensor(_W.array), T.tensor([0, 2]),
                                  mode="max", scale_grad_by_freq=True)),
    ("cosine_similarity-shapes",
     lambda T: F(T).cosine_similarity(T.ones(3, 4), T.ones(3, 5))),
    ("max_unpool2d-output-size-3",
     lambda T: F(T).max_unpool2d(*F(T).max_pool2d(T.ones(2, 4, 4), 2, return_indices=True), 2,
                                 output_size=[2, 5, 5])),
    ("Hardtanh-bounds", lambda T: T.nn.Hardtanh(1.0, -1.0)),
    # guards
    ("conv2d-groups", lambda T: T.nn.Conv2d(3, 4, 3, groups=2)),
    ("conv-same-strided", lambda T: T.nn.Conv1d(2, 2, 3, padding="same", stride=2)),
    ("max_pool-padding", lambda T: F(T).max_pool2d(T.ones(1, 1, 5, 5), 2, padding=2)),
    ("dropout-p", lambda T: T.nn.Dropout(1.1)),
    ("sdpa-gqa-off", lambda T: F(T).scaled_dot_product_attention(
        T.ones(1, 4, 3, 5), T.ones(1, 2, 3, 5), T.ones(1, 2, 3, 5))),
]


@pytest.mark.parametrize("name,f", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_error_type_matches_torch(name, f):
    with pytest.raises(Exception) as expected:
        f(torch)
    with pytest.raises(expected.type):
        f(ember)


def _instance_norm_mismatch(T):
    return T.nn.InstanceNorm1d(3)(T.ones(2, 4, 5, dtype=T.float64))


def _mixed_masks(T):
    T.manual_seed(0)
    m = T.nn.MultiheadAttention(4, 2, batch_first=True)
    x = T.ones(2, 3, 4)
    return m(x, x, x, attn_mask=T.zeros(3, 3), key_padding_mask=T.zeros(2, 3, dtype=T.bool))


# (id, f(lib)) whose warning categories must match PyTorch's
WARNING_CASES = [
    ("InstanceNorm-num-features-unused", _instance_norm_mismatch),
    ("MultiheadAttention-mixed-mask-types", _mixed_masks),
    ("Hardtanh-min_value", lambda T: T.nn.Hardtanh(min_value=-0.5)),
    # guards
    ("softmax-implicit-dim", lambda T: F(T).softmax(T.ones(2, 3))),
    ("Dropout2d-3d-input", lambda T: T.nn.Dropout2d(0.0)(T.ones(3, 4, 5))),
]


def _categories(f, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f(lib)
    return sorted({w.category.__name__ for w in caught})


@pytest.mark.parametrize("name,f", WARNING_CASES, ids=[c[0] for c in WARNING_CASES])
def test_warnings_match_torch(name, f):
    expected = _categories(f, torch)
    assert expected, "the case should warn"
    assert _categories(f, ember) == expected


# (id, module builder on the nn namespace, inputs, call or None)
MODULE_CASES = [
    ("LPPool2d-inf", lambda m: m.LPPool2d(float("inf"), 2), [rand(1, 2, 4, 5)], None),
    ("Hardtanh-min_value", lambda m: m.Hardtanh(min_value=-0.5, max_value=0.5),
     [rand(2, 3)], None),
    ("LazyBatchNorm1d-no-bias", lambda m: m.LazyBatchNorm1d(bias=False), [rand(4, 3)], None),
    ("RMSNorm-x-keyword", lambda m: m.RMSNorm(3), [rand(2, 3)], lambda mod, x: mod(x=x)),
    # guards
    ("Conv2d-same-even-reflect", lambda m: m.Conv2d(2, 2, (4, 2), padding="same",
                                                    dilation=(3, 1), padding_mode="reflect"),
     [rand(1, 2, 9, 8)], None),
    ("ConvTranspose3d-groups-dilation", lambda m: m.ConvTranspose3d(
        4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2),
     [rand(1, 4, 3, 3, 2)], None),
    ("BatchNorm2d-momentum-none-3-steps", lambda m: m.BatchNorm2d(3, momentum=None),
     [rand(2, 3, 2, 2)], lambda mod, x: [mod(x), mod(x * 2), mod(x - 1)]),
    ("Embedding-max-norm-padding", lambda m: m.Embedding(5, 3, max_norm=0.5, padding_idx=1,
                                                        scale_grad_by_freq=True),
     [np.array([[0, 1, 4, 1], [2, 1, 0, 4]])], None),
    ("EmbeddingBag-max-include-last", lambda m: m.EmbeddingBag(6, 3, mode="max",
                                                              include_last_offset=True,
                                                              padding_idx=2),
     [_FLAT, np.array([0, 2, 2, 5, 9])], None),
    ("LSTM-packed-unsorted-proj", lambda m: m.LSTM(3, 4, 2, batch_first=True,
                                                   bidirectional=True, proj_size=2),
     [rand(3, 5, 3)], lambda mod, x: _packed(mod, x)),
    ("MultiheadAttention-kv-shared-bias-kv", lambda m: m.MultiheadAttention(
        4, 2, batch_first=True, add_bias_kv=True, add_zero_attn=True),
     [rand(2, 3, 4), rand(2, 5, 4, seed=1),
      Const(np.array([[False, False, True, False, True], [False, True, False, False, False]]))],
     lambda mod, q, kv, kpm: mod(q, kv, kv, key_padding_mask=kpm, average_attn_weights=False)),
]


def _packed(mod, x):
    lib = torch if isinstance(mod, torch.nn.Module) else ember
    packed = lib.nn.utils.rnn.pack_padded_sequence(x, lib.tensor([2, 5, 3]), batch_first=True,
                                                   enforce_sorted=False)
    out, (h, c) = mod(packed)
    return lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)[0], h, c


@pytest.mark.filterwarnings("ignore:keyword argument:FutureWarning")
@pytest.mark.parametrize("name,build,inputs,call", MODULE_CASES,
                         ids=[c[0] for c in MODULE_CASES])
def test_module_matches_torch(name, build, inputs, call):
    torch.manual_seed(0)
    t, e = build(torch.nn), build(nn)
    if "Lazy" in name:  # materialize both before copying the weights
        t(torch.tensor(inputs[0]).float())
        e(ember.tensor(inputs[0]).float())
    check_module(t, e, *inputs, call=call)
    for key, value in t.state_dict().items():
        np.testing.assert_allclose(e.state_dict()[key].numpy(), value.numpy(), rtol=1e-7,
                                   atol=1e-12, err_msg=key)


def test_embedding_bag_scale_grad_by_freq_divides_by_the_index_count():
    # PyTorch 2.13's CPU kernel divides a row that sorts after a repeated index by that
    # index's count (pytorch/pytorch#190063); ember divides each row by its own count.
    w = ember.ones(4, 1, dtype=ember.float64, requires_grad=True)
    F(ember).embedding_bag(ember.tensor([1, 1, 3]), w, ember.tensor([0]), mode="sum",
                           scale_grad_by_freq=True).sum().backward()
    assert w.grad.flatten().tolist() == [0.0, 1.0, 0.0, 1.0]


def test_load_state_dict_result_is_named_and_printed_as_in_torch():
    def result(T):
        m = T.nn.Linear(2, 2)
        partial = m.load_state_dict({"weight": m.weight.detach()}, strict=False)
        return type(partial).__name__, repr(partial), repr(m.load_state_dict(m.state_dict()))

    assert result(ember) == result(torch)
