"""nn.utils: gradient clipping, parameters <-> vector, pad_sequence."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    parameters_to_vector,
    vector_to_parameters,
)
from ember.nn.utils.rnn import pad_sequence


def params_with_grads(grads):
    params = []
    for g in grads:
        p = nn.Parameter(ember.zeros(*np.shape(g)))
        p.grad = ember.tensor(np.asarray(g, dtype=np.float32))
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_matches_torch(norm_type):
    torch = pytest.importorskip("torch")
    grads = [np.array([[3.0, -4.0], [1.0, 2.0]]), np.array([0.5, -6.0, 2.0])]
    params = params_with_grads(grads)
    t_params = [torch.nn.Parameter(torch.zeros(*g.shape)) for g in grads]
    for p, g in zip(t_params, grads):
        p.grad = torch.tensor(g, dtype=torch.float32)
    total = clip_grad_norm_(params, 1.5, norm_type=norm_type)
    t_total = torch.nn.utils.clip_grad_norm_(t_params, 1.5, norm_type=norm_type)
    assert total.shape == () and total.dtype is ember.float32
    assert total.item() == pytest.approx(t_total.item(), rel=1e-6)
    for p, t in zip(params, t_params):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_clip_grad_norm_leaves_small_gradients_alone():
    params = params_with_grads([[0.3, 0.4]])
    total = clip_grad_norm_(params, 1.0)
    assert total.item() == pytest.approx(0.5)
    np.testing.assert_allclose(params[0].grad.numpy(), [0.3, 0.4])
    lone = params_with_grads([[3.0, 4.0]])[0]
    clip_grad_norm_(lone, 1.0)  # a single tensor works too
    assert np.linalg.norm(lone.grad.numpy()) == pytest.approx(1.0, rel=1e-5)
    assert clip_grad_norm_([nn.Parameter(ember.ones(2))], 1.0).item() == 0.0


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_clip_grad_norm_nonfinite():
    params = params_with_grads([[1.0, float("inf")]])
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    total = clip_grad_norm_(params, 1.0)
    assert math.isinf(total.item())


def test_clip_grad_value():
    params = params_with_grads([[-3.0, 0.5, 2.0]])
    clip_grad_value_(params, 1.0)
    np.testing.assert_array_equal(params[0].grad.numpy(), [-1.0, 0.5, 1.0])


def test_parameters_vector_round_trip():
    model = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    vec = parameters_to_vector(model.parameters())
    assert vec.shape == (2 * 3 + 3 + 3 + 1,)
    expected = np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])
    np.testing.assert_array_equal(vec.detach().numpy(), expected)
    vec.sum().backward()  # differentiable
    assert all(p.grad is not None for p in model.parameters())
    new = ember.arange(vec.numel(), dtype=ember.float32)
    vector_to_parameters(new, model.parameters())
    np.testing.assert_array_equal(model[0].weight.detach().numpy(),
                                  np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(model[1].bias.detach().numpy(), [12])
    with pytest.raises(TypeError, match="expected ember.Tensor"):
        vector_to_parameters([1.0], model.parameters())


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, padding_side):
    torch = pytest.importorskip("torch")
    arrays = [np.arange(6.0).reshape(3, 2), np.arange(2.0).reshape(1, 2) + 10,
              np.arange(4.0).reshape(2, 2) - 5]
    e = pad_sequence([ember.tensor(a, requires_grad=True) for a in arrays],
                     batch_first=batch_first, padding_value=-1.0, padding_side=padding_side)
    t = torch.nn.utils.rnn.pad_sequence([torch.tensor(a) for a in arrays],
                                        batch_first=batch_first, padding_value=-1.0,
                                        padding_side=padding_side)
    np.testing.assert_array_equal(e.detach().numpy(), t.numpy())
    e.sum().backward()
    with pytest.raises(ValueError, match="padding_side"):
        pad_sequence([ember.ones(2)], padding_side="middle")


def test_functional_call_uses_given_tensors_and_restores():
    from ember.nn.utils.stateless import functional_call

    lin = nn.Linear(2, 1)
    weight = ember.tensor([[1.0, 2.0]], requires_grad=True)
    out = functional_call(lin, {"weight": weight, "bias": ember.zeros(1)},
                          (ember.tensor([[3.0, 4.0]]),))
    assert out.item() == 11.0
    out.backward()
    np.testing.assert_array_equal(weight.grad.numpy(), [[3.0, 4.0]])
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.grad is None
    with pytest.raises(RuntimeError, match="missing"):
        functional_call(lin, {"weight": weight}, ember.ones(1, 2), strict=True)
    assert isinstance(lin.weight, nn.Parameter)


def test_utils_namespace_and_total_norm_helpers():
    assert nn.utils.clip_grad_norm_ is clip_grad_norm_
    assert nn.utils.rnn.pad_sequence is pad_sequence
    params = params_with_grads([[3.0, 4.0], [12.0]])
    total = nn.utils.get_total_norm([p.grad for p in params])
    assert total.item() == pytest.approx(13.0)
    nn.utils.clip_grads_with_norm_(params, 1.3, total)
    np.testing.assert_allclose(params[0].grad.numpy(), [0.3, 0.4], rtol=1e-5)


@pytest.mark.parametrize("kind", ["conv", "conv_transpose", "linear"])
def test_fusing_batchnorm_keeps_eval_outputs(kind):
    ember.manual_seed(3)
    if kind == "conv":
        layer, bn, x = nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), ember.randn(2, 2, 5, 5)
    elif kind == "conv_transpose":
        layer, bn, x = nn.ConvTranspose2d(2, 3, 2), nn.BatchNorm2d(3), ember.randn(2, 2, 3, 3)
    else:
        layer, bn, x = nn.Linear(4, 3), nn.BatchNorm1d(3), ember.randn(5, 4)
    bn(layer(x))  # one training step gives the running statistics non-trivial values
    nn.init.uniform_(bn.weight, 0.5, 2.0)
    layer.eval()
    bn.eval()
    if kind == "linear":
        fused = nn.utils.fuse_linear_bn_eval(layer, bn)
    else:
        fused = nn.utils.fuse_conv_bn_eval(layer, bn, transpose=kind == "conv_transpose")
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(layer(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    assert isinstance(fused.weight, nn.Parameter) and fused is not layer
