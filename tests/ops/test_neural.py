"""Edge cases of the nn.functional ops in ember/ops/neural.py that the op table can't
reach: randomness (dropout, gumbel_softmax), PyTorch's gradient conventions for embedding,
masks in attention, zero distances, errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ..conftest import requires_torch


def _torch():
    return pytest.importorskip("torch")


def _pair(array, requires_grad=True, device="cpu"):
    """The same float64 values as an ember tensor and a torch tensor."""
    torch = _torch()
    array = np.asarray(array, dtype=np.float64)
    return (ember.tensor(array, device=device).requires_grad_(requires_grad),
            torch.tensor(array).requires_grad_(requires_grad))


def _close(ours, theirs, atol=1e-10):
    np.testing.assert_allclose(ours.detach().cpu().numpy(), theirs.detach().numpy(), atol=atol,
                               rtol=1e-7)


# ----------------------------------------------------------------------------- softmax
def test_softmax_is_finite_at_huge_logits(device):
    x = ember.tensor([[1e4, -1e4, 0.0], [1e30, 1e30, -1e30]], device=device)
    y = F.softmax(x, dim=1)
    assert np.isfinite(y.cpu().numpy()).all()
    np.testing.assert_allclose(y.cpu().numpy(), [[1, 0, 0], [0.5, 0.5, 0]], atol=1e-7)
    log_y = F.log_softmax(x, dim=1)
    np.testing.assert_allclose(log_y.cpu().numpy()[0], [0, -2e4, -1e4], rtol=1e-6)


def test_softmax_implicit_dim_follows_the_legacy_rule_with_a_warning():
    x3 = ember.randn(2, 3, 4)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = F.softmax(x3)
    np.testing.assert_allclose(y.sum(0).numpy(), np.ones((3, 4)), rtol=1e-6)
    with pytest.warns(UserWarning, match="log_softmax"):
        y = F.log_softmax(ember.randn(2, 3, 4, 5))
    np.testing.assert_allclose(y.exp().sum(1).numpy(), np.ones((2, 4, 5)), rtol=1e-5)


def test_softmax_dtype_argument_and_integer_inputs():
    x = ember.tensor([1, 2, 3])
    with pytest.raises(NotImplementedError,
                       match="\"softmax\" not implemented for 'Long'.*floating-point"):
        F.softmax(x, 0)
    y = F.softmax(x, 0, dtype=ember.float64)
    assert y.dtype is ember.float64
    assert ember.softmax(ember.randn(2, 3), 1, dtype=ember.float64).dtype is ember.float64
    assert ember.randn(2, 3).log_softmax(-1).shape == (2, 3)


def test_softmax_of_an_all_minus_infinity_row_is_nan_like_pytorch():
    y = F.softmax(ember.tensor([[-math.inf, -math.inf], [0.0, -math.inf]]), 1)
    assert np.isnan(y.numpy()[0]).all()
    np.testing.assert_array_equal(y.numpy()[1], [1.0, 0.0])


def test_softmax_double_backward_matches_finite_differences():
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t: F.log_softmax(t, 1) * F.softmax(t, 0), (x,))


# ----------------------------------------------------------------------------- dropout
def test_dropout_is_reproducible_with_manual_seed(device):
    x = ember.ones(50, 40, device=device)
    ember.manual_seed(123)
    first = F.dropout(x, 0.3).cpu().numpy()
    ember.manual_seed(123)
    second = F.dropout(x, 0.3).cpu().numpy()
    np.testing.assert_array_equal(first, second)
    third = F.dropout(x, 0.3).cpu().numpy()
    assert not np.array_equal(first, third)


def test_dropout_zeroes_about_p_and_scales_the_rest(device):
    ember.manual_seed(0)
    x = ember.ones(200, 100, device=device)
    y = F.dropout(x, 0.25).cpu().numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02


def test_dropout_gradient_is_the_scaled_mask(device):
    x = ember.randn(30, 20, device=device, requires_grad=True)
    y = F.dropout(x, 0.5)
    y.sum().backward()
    kept = (y.detach().cpu().numpy() != 0)
    np.testing.assert_allclose(x.grad.cpu().numpy(), kept * 2.0)


def test_dropout_eval_mode_is_the_identity(device):
    x = ember.randn(4, 5, device=device, requires_grad=True)
    for fn in (F.dropout, F.alpha_dropout, F.feature_alpha_dropout):
        assert fn(x, 0.5, training=False) is x
    assert F.dropout2d(ember.randn(2, 3, 4, 4), 0.5, training=False).shape == (2, 3, 4, 4)
    assert F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).detach().cpu().numpy(), np.zeros((4, 5)))


def test_dropout_validates_p():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        F.dropout(ember.ones(3), 1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout2d(ember.ones(2, 3, 4, 4), -0.1)


def test_inplace_dropout_writes_into_the_input():
    x = ember.ones(20, 20)
    version = x._version
    y = F.dropout(x, 0.5, inplace=True)
    assert y is x and x._version > version
    assert ((x.numpy() == 0) | (x.numpy() == 2)).all()
    leaf = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        F.dropout(leaf, 0.5, inplace=True)


def test_channel_dropout_drops_whole_channels(device):
    ember.manual_seed(1)
    y = F.dropout2d(ember.ones(8, 6, 3, 3, device=device), 0.5).cpu().numpy()
    per_channel = y.reshape(8, 6, -1)
    assert (per_channel.min(-1) == per_channel.max(-1)).all()
    assert 0 < (per_channel[..., 0] == 0).mean() < 1
    y = F.dropout1d(ember.ones(6, 5, device=device), 0.5).cpu().numpy()  # unbatched (C, L)
    assert (y.min(-1) == y.max(-1)).all()
    y = F.dropout3d(ember.ones(4, 2, 2, 2, device=device), 0.5).cpu().numpy()  # (C, D, H, W)
    assert (y.reshape(4, -1).min(-1) == y.reshape(4, -1).max(-1)).all()
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(ember.ones(2, 3, 4, 5), 0.5)
    with pytest.warns(UserWarning, match="3-D input"):
        F.dropout2d(ember.ones(2, 3, 4), 0.5)


def test_alpha_dropout_keeps_zero_mean_and_unit_variance():
    ember.manual_seed(0)
    x = ember.randn(400, 500, dtype=ember.float64)
    y = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    saturation = 1.0507009873554805 * 1.6732632423543772
    a = 1 / math.sqrt(0.8 * (1 + 0.2 * saturation ** 2))
    dropped_value = a * saturation * (0.2 - 1)
    assert abs(np.isclose(y, dropped_value).mean() - 0.2) < 0.01
    y = F.feature_alpha_dropout(ember.randn(50, 40, 3, dtype=ember.float64), 0.3,
                                training=True).numpy()
    a = 1 / math.sqrt(0.7 * (1 + 0.3 * saturation ** 2))
    dropped = np.isclose(y, a * saturation * (0.3 - 1))
    assert (dropped.all(-1) == dropped.any(-1)).all()       # whole channels
    assert 0.2 < dropped.all(-1).mean() < 0.4


# ----------------------------------------------------------------------------- embedding
@requires_torch
@pytest.mark.parametrize("kwargs", [{"padding_idx": 1}, {"padding_idx": -2},
                                    {"scale_grad_by_freq": True},
                                    {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_embedding_gradient_conventions_match_pytorch(kwargs):
    torch = _torch()
    indices = [[1, 2, 1, 0], [3, 1, 2, 2]]
    weight, t_weight = _pair(np.random.default_rng(0).standard_normal((4, 3)))
    out = F.embedding(ember.tensor(indices), weight, **kwargs)
    t_out = torch.nn.functional.embedding(torch.tensor(indices), t_weight, **kwargs)
    upstream = np.random.default_rng(1).standard_normal((2, 4, 3))
    out.backward(ember.tensor(upstream))
    t_out.backward(torch.tensor(upstream))
    _close(out, t_out)
    _close(weight.grad, t_weight.grad)


@requires_torch
def test_embedding_max_norm_renormalizes_rows_in_place_like_pytorch():
    torch = _torch()
    values = np.random.default_rng(2).standard_normal((5, 4)) * 3
    weight, t_weight = _pair(values)
    indices = [0, 2, 2, 4]
    out = F.embedding(ember.tensor(indices), weight, max_norm=1.5, norm_type=1.0)
    t_out = torch.nn.functional.embedding(torch.tensor(indices), t_weight, max_norm=1.5,
                                          norm_type=1.0)
    _close(out, t_out, atol=1e-7)
    _close(weight, t_weight, atol=1e-7)     # rows 0, 2, 4 rescaled; 1 and 3 untouched
    np.testing.assert_array_equal(weight.detach().numpy()[[1, 3]], values[[1, 3]])


def test_embedding_errors():
    weight = ember.randn(5, 2)
    with pytest.raises(IndexError, match="index 7 is out of range.*5 rows"):
        F.embedding(ember.tensor([1, 7]), weight)
    with pytest.raises(IndexError, match="index -1"):
        F.embedding(ember.tensor([-1]), weight)
    with pytest.raises(RuntimeError, match="integer indices"):
        F.embedding(ember.tensor([1.0]), weight)
    with pytest.raises(AssertionError, match="padding_idx"):
        F.embedding(ember.tensor([1]), weight, padding_idx=5)


@requires_torch
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_matches_pytorch_with_offsets_and_padding(mode):
    torch = _torch()
    indices = [1, 2, 4, 4, 3, 0, 1]
    offsets = [0, 2, 2, 5]
    weight, t_weight = _pair(np.random.default_rng(3).standard_normal((5, 3)))
    for extra in ({}, {"padding_idx": 4}, {"include_last_offset": True}):
        out = F.embedding_bag(ember.tensor(indices), weight, ember.tensor(offsets), mode=mode,
                              **extra)
        t_out = torch.nn.functional.embedding_bag(torch.tensor(indices), t_weight,
                                                  torch.tensor(offsets), mode=mode, **extra)
        _close(out, t_out)
        upstream = np.random.default_rng(4).standard_normal(tuple(out.shape))
        (grad,) = ember.autograd.grad(out, weight, ember.tensor(upstream))
        (t_grad,) = torch.autograd.grad(t_out, t_weight, torch.tensor(upstream))
        _close(grad, t_grad)


def test_embedding_bag_errors():
    weight = ember.randn(4, 2)
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(ember.tensor([[0, 1]]), weight, ember.tensor([0]))
    with pytest.raises(NotImplementedError, match="per_sample_weights"):
        F.embedding_bag(ember.tensor([[0, 1]]), weight, mode="max",
                        per_sample_weights=ember.ones(1, 2))
    with pytest.raises(ValueError, match="mode"):
        F.embedding_bag(ember.tensor([[0, 1]]), weight, mode="median")


def test_one_hot_errors_and_inferred_classes():
    assert F.one_hot(ember.tensor([0, 2])).tolist() == [[1, 0, 0], [0, 0, 1]]
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(ember.tensor([1, 5]), 3)
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(ember.tensor([-1]), 3)
    with pytest.raises(RuntimeError, match="LongTensor"):
        F.one_hot(ember.tensor([1.0]), 3)


# ----------------------------------------------------------------------------- attention
@requires_torch
@pytest.mark.parametrize("shape", [(2, 3, 4, 5, 5), (1, 2, 3, 5, 4)])
def test_attention_causal_mask_matches_pytorch(shape):
    torch = _torch()
    batch, heads, length, source, width = shape
    rng = np.random.default_rng(5)
    q, tq = _pair(rng.standard_normal((batch, heads, length, width)))
    k, tk = _pair(rng.standard_normal((batch, heads, source, width)))
    v, tv = _pair(rng.standard_normal((batch, heads, source, width)))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    t_out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    _close(out, t_out)
    upstream = rng.standard_normal(tuple(out.shape))
    grads = ember.autograd.grad(out, (q, k, v), ember.tensor(upstream))
    t_grads = torch.autograd.grad(t_out, (tq, tk, tv), torch.tensor(upstream))
    for g, tg in zip(grads, t_grads):
        _close(g, tg)


@requires_torch
def test_attention_fully_masked_query_gives_zeros_like_pytorch():
    torch = _torch()
    rng = np.random.default_rng(6)
    q, tq = _pair(rng.standard_normal((3, 2)))
    mask = np.array([[True, False, True], [False, False, False], [True, True, True]])
    out = F.scaled_dot_product_attention(q, q.detach() + 0, q.detach() * 2,
                                         attn_mask=ember.tensor(mask))
    t_out = torch.nn.functional.scaled_dot_product_attention(
        tq, tq.detach() + 0, tq.detach() * 2, attn_mask=torch.tensor(mask))
    _close(out, t_out)
    assert (out.detach().numpy()[1] == 0).all()
    out.sum().backward()
    assert np.isfinite(q.grad.numpy()).all()


def test_attention_dropout_is_seeded_and_mask_conflicts_raise():
    q = ember.randn(2, 4, 3)
    ember.manual_seed(7)
    first = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    ember.manual_seed(7)
    np.testing.assert_array_equal(first, F.scaled_dot_product_attention(q, q, q,
                                                                        dropout_p=0.5).numpy())
    with pytest.raises(RuntimeError, match="attn_mask should not be set when is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ember.ones(4, 4), is_causal=True)
    with pytest.raises(RuntimeError, match="query"):
        F.scaled_dot_product_attention(q, ember.randn(2, 4, 5), q)


# ----------------------------------------------------------------------------- distances
@requires_torch
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, math.inf])
def test_cdist_gradient_at_zero_distance_is_zero_like_pytorch(p):
    torch = _torch()
    values = np.array([[0.0, 1.0], [2.0, -1.0], [0.5, 0.5]])
    a, ta = _pair(values)
    b, tb = _pair(values[[0, 2]])            # rows 0 and 2 coincide with rows of a
    out = ember.cdist(a, b, p=p)
    t_out = torch.cdist(ta, tb, p=p)
    _close(out, t_out)
    upstream = np.random.default_rng(8).standard_normal(tuple(out.shape))
    grads = ember.autograd.grad(out, (a, b), ember.tensor(upstream))
    t_grads = torch.autograd.grad(t_out, (ta, tb), torch.tensor(upstream))
    for g, tg in zip(grads, t_grads):
        assert np.isfinite(g.numpy()).all()
        _close(g, tg)


@requires_torch
def test_cosine_similarity_of_a_zero_vector_matches_pytorch():
    torch = _torch()
    a, ta = _pair([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    b, tb = _pair([[1.0, 0.0, 1.0], [1e-9, 0.0, 0.0]])
    out = F.cosine_similarity(a, b)
    t_out = torch.nn.functional.cosine_similarity(ta, tb)
    _close(out, t_out)
    out.sum().backward()
    t_out.sum().backward()
    _close(a.grad, ta.grad, atol=1e-6)
    assert ember.pairwise_distance(ember.zeros(2, 3), ember.zeros(2, 3)).shape == (2,)


def test_cdist_errors():
    with pytest.raises(RuntimeError, match="same number of columns"):
        ember.cdist(ember.randn(3, 2), ember.randn(3, 4))
    with pytest.raises(RuntimeError, match="at least 2D"):
        ember.cdist(ember.randn(3), ember.randn(3))


# ----------------------------------------------------------------------------- gumbel
def test_gumbel_softmax_samples_soft_and_hard():
    logits = ember.randn(6, 4, requires_grad=True)
    ember.manual_seed(3)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), np.ones(6), rtol=1e-5)
    ember.manual_seed(3)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    values = hard.detach().numpy()
    assert set(np.unique(values)) <= {0.0, 1.0} and (values.sum(-1) == 1).all()
    np.testing.assert_array_equal(values.argmax(-1), soft.detach().numpy().argmax(-1))
    (hard * ember.arange(4.0)).sum().backward()
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0


# ----------------------------------------------------------------------------- linear
def test_linear_shape_error_names_both_shapes():
    with pytest.raises(RuntimeError, match=r"linear\(\).*\[3, 4\].*\[2, 5\]"):
        F.linear(ember.randn(3, 4), ember.randn(2, 5))
    with pytest.raises(RuntimeError, match="bilinear"):
        F.bilinear(ember.randn(2, 3), ember.randn(2, 2), ember.randn(4, 2, 2))
