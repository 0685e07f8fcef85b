"""The torch-level forms of nn functions (ops/aten_forms.py) where the op table can't reach:
random masks (drawn as PyTorch draws them), in-place forms, embedding's gradient
conventions, the reduction enum, the recurrent layers' dropout and errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember

from ..conftest import requires_torch


def _torch():
    return pytest.importorskip("torch")


def _pair(array, requires_grad=False):
    torch = _torch()
    array = np.asarray(array, dtype=np.float64)
    return (ember.tensor(array).requires_grad_(requires_grad),
            torch.tensor(array).requires_grad_(requires_grad))


@requires_torch
@pytest.mark.parametrize("name", ["feature_dropout", "alpha_dropout",
                                  "feature_alpha_dropout"])
def test_random_masks_match_torch_for_the_same_seed(name):
    torch = _torch()
    x, tx = _pair(np.random.rand(4, 5, 3))
    ember.manual_seed(3)
    torch.manual_seed(3)
    ours, theirs = getattr(ember, name)(x, 0.4, True), getattr(torch, name)(tx, 0.4, True)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)


@requires_torch
@pytest.mark.parametrize("name", ["dropout_", "alpha_dropout_", "feature_dropout_",
                                  "feature_alpha_dropout_"])
def test_inplace_forms_change_and_return_their_input(name):
    torch = _torch()
    x, tx = _pair(np.random.rand(4, 5, 3))
    ember.manual_seed(5)
    torch.manual_seed(5)
    out, version = getattr(ember, name)(x, 0.5, True), x._version
    getattr(torch, name)(tx, 0.5, True)
    assert out is x and version > 0
    np.testing.assert_allclose(x.numpy(), tx.numpy(), atol=1e-12)
    kept = ember.ones(3)
    assert getattr(ember, name)(kept, 0.5, False) is kept
    assert kept.tolist() == [1.0, 1.0, 1.0]


def test_feature_dropout_needs_two_dims_and_a_probability():
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        ember.feature_dropout(ember.ones(3), 0.5, True)
    with pytest.raises(ValueError, match="between 0 and 1"):
        ember.alpha_dropout(ember.ones(3), 1.5, True)


@requires_torch
@pytest.mark.parametrize("padding_idx,scale", [(1, False), (-1, True), (2, True)])
def test_embedding_gradient_conventions_match_torch(padding_idx, scale):
    torch = _torch()
    w, tw = _pair(np.random.randn(5, 3), requires_grad=True)
    idx = [[1, 2, 2], [0, 1, 4]]
    ours = ember.embedding(w, ember.tensor(idx), padding_idx, scale)
    theirs = torch.embedding(tw, torch.tensor(idx), padding_idx, scale)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy())
    g = np.random.randn(2, 3, 3)
    ours.backward(ember.tensor(g))
    theirs.backward(torch.tensor(g))
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), atol=1e-12)


@requires_torch
def test_embedding_renorm_matches_torch_in_place():
    torch = _torch()
    w, tw = _pair(np.random.randn(6, 4) * 3)
    idx = [0, 2, 2, 5]
    assert ember.embedding_renorm_(w, ember.tensor(idx), 1.5, 1.0) is w
    torch.embedding_renorm_(tw, torch.tensor(idx), 1.5, 1.0)
    np.testing.assert_allclose(w.numpy(), tw.numpy(), rtol=1e-6)


def test_embedding_renorm_refuses_a_leaf_that_requires_grad_and_float_indices():
    w = ember.randn(4, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        ember.embedding_renorm_(w, ember.tensor([0]), 1.0, 2.0)
    with ember.no_grad():
        ember.embedding_renorm_(w, ember.tensor([0]), 1.0, 2.0)
    with pytest.raises(RuntimeError, match="indices"):
        ember.embedding_renorm_(ember.ones(4, 2), ember.tensor([0.0]), 1.0, 2.0)


@requires_torch
@pytest.mark.parametrize("reduction", [None, 0, 1, 2])
def test_reduction_enum_and_its_default_match_torch(reduction):
    torch = _torch()
    a, ta = _pair(np.random.randn(3, 4))
    t, tt = _pair(np.random.rand(3, 4))
    args = () if reduction is None else (None, None, reduction)
    ours = ember.binary_cross_entropy_with_logits(a, t, *args)
    theirs = torch.binary_cross_entropy_with_logits(ta, tt, *args)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)


def test_reduction_must_be_a_known_int():
    x = ember.randn(3, 4).log_softmax(-1)
    with pytest.raises(TypeError, match="must be int, not str"):
        ember.kl_div(x, x.exp(), "mean")
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        ember.kl_div(x, x.exp(), 7)


@requires_torch
def test_lstm_dropout_between_layers_matches_torch():
    torch = _torch()
    rng = np.random.default_rng(0)
    params = [rng.standard_normal(s) for s in [(8, 3), (8, 2), (8,), (8,)] * 1 +
              [(8, 2), (8, 2), (8,), (8,)]]
    ours_p = [ember.tensor(p) for p in params]
    theirs_p = [torch.tensor(p) for p in params]
    x, tx = _pair(rng.standard_normal((4, 2, 3)))
    h = [rng.standard_normal((2, 2, 2)), rng.standard_normal((2, 2, 2))]
    ember.manual_seed(1)
    torch.manual_seed(1)
    ours = ember.lstm(x, [ember.tensor(v) for v in h], ours_p, True, 2, 0.5, True, False,
                      False)
    theirs = torch.lstm(tx, [torch.tensor(v) for v in h], theirs_p, True, 2, 0.5, True, False,
                        False)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-10)


def test_recurrent_errors_name_what_is_wrong():
    x, h = ember.randn(4, 2, 3), ember.zeros(1, 2, 5)
    with pytest.raises(RuntimeError, match="parameter tensors"):
        ember.rnn_tanh(x, h, [ember.randn(5, 3)], False, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="input must have 3 dimensions"):
        ember.gru(ember.randn(4, 3), h, [ember.randn(15, 3), ember.randn(15, 5)], False, 1,
                  0.0, False, False, False)
    with pytest.raises(RuntimeError, match="inconsistent input_size"):
        ember.rnn_tanh_cell(ember.randn(2, 4), ember.zeros(2, 5), ember.randn(5, 3),
                            ember.randn(5, 5))
    with pytest.raises(RuntimeError, match="inconsistent hidden_size: got 5, expected 4"):
        ember.rnn_tanh_cell(ember.randn(2, 3), ember.zeros(2, 5), ember.randn(4, 3),
                            ember.randn(4, 4))
    with pytest.raises(RuntimeError, match="list of two tensors"):
        ember.lstm_cell(ember.randn(2, 3), ember.zeros(2, 5), ember.randn(20, 3),
                        ember.randn(20, 5))


def test_same_signature_forms_are_the_functional_ones():
    import ember.nn.functional as F

    assert ember.bilinear is F.bilinear and ember.pdist is F.pdist
    assert ember.channel_shuffle is F.channel_shuffle
