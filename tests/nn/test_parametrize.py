"""nn.utils.parametrize and the weight_norm / spectral_norm parametrizations, against
PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn.utils import parametrizations, parametrize

from .compare import check_module, same_keys, same_repr

torch = pytest.importorskip("torch")


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


class Symmetric(nn.Module):
    def forward(self, x):
        upper = x * ember.tensor(np.triu(np.ones(tuple(x.shape))), dtype=x.dtype)
        strict = x * ember.tensor(np.triu(np.ones(tuple(x.shape)), 1), dtype=x.dtype)
        return upper + strict.transpose(0, 1)


def test_register_and_remove_parametrization():
    layer = nn.Linear(3, 3)
    weight = layer.weight
    parametrize.register_parametrization(layer, "weight", Symmetric())
    assert parametrize.is_parametrized(layer) and parametrize.is_parametrized(layer, "weight")
    assert type(layer).__name__ == "ParametrizedLinear"
    assert parametrize.type_before_parametrizations(layer) is nn.Linear
    assert layer.parametrizations.weight.original is weight
    w = layer.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)
    assert [n for n, _ in layer.named_parameters()] == ["bias",
                                                        "parametrizations.weight.original"]
    layer(ember.ones(2, 3)).sum().backward()
    assert weight.grad is not None
    with parametrize.cached():
        assert layer.weight is layer.weight
    parametrize.remove_parametrizations(layer, "weight")
    assert type(layer) is nn.Linear and isinstance(layer.weight, nn.Parameter)
    np.testing.assert_allclose(layer.weight.detach().numpy(), w)
    with pytest.raises(ValueError, match="does not have a parametrization"):
        parametrize.remove_parametrizations(layer, "weight")


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(dim):
    t = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 4), dim=dim)
    e = parametrizations.weight_norm(nn.Linear(3, 4), dim=dim)
    same_keys(t, e)
    same_repr(t, e)
    check_module(t, e, rand(2, 3))


def test_weight_norm_conv_initial_value_is_the_weight():
    conv = nn.Conv2d(2, 3, 3)
    before = conv.weight.detach().numpy().copy()
    parametrizations.weight_norm(conv)
    np.testing.assert_allclose(conv.weight.detach().numpy(), before, rtol=1e-6, atol=1e-7)
    assert conv.parametrizations.weight.original0.shape == (3, 1, 1, 1)


@pytest.mark.parametrize("build", [lambda m: m.Linear(3, 4),
                                   lambda m: m.ConvTranspose2d(2, 3, 2)],
                         ids=["Linear", "ConvTranspose2d"])
def test_spectral_norm_matches_torch(build):
    t = torch.nn.utils.parametrizations.spectral_norm(build(torch.nn))
    e = parametrizations.spectral_norm(build(nn))
    same_keys(t, e)
    inputs = [rand(2, 3)] if isinstance(e, nn.Linear) else [rand(1, 2, 3, 3)]
    check_module(t, e, *inputs)  # training mode: one power iteration, same u, v
    for key, value in t.state_dict().items():
        np.testing.assert_allclose(e.state_dict()[key].numpy(), value.numpy(), rtol=1e-9,
                                   err_msg=key)
    t.eval()
    e.eval()
    check_module(t, e, *inputs)


def test_spectral_norm_bounds_largest_singular_value():
    layer = parametrizations.spectral_norm(nn.Linear(6, 5), n_power_iterations=5)
    for _ in range(5):
        layer(ember.ones(1, 6))
    sigma = np.linalg.svd(layer.weight.detach().numpy(), compute_uv=False)[0]
    assert sigma == pytest.approx(1.0, rel=1e-3)


@pytest.mark.filterwarnings("ignore:.*weight_norm. is deprecated")
def test_hook_based_weight_norm_matches_torch():
    t = torch.nn.utils.weight_norm(torch.nn.Linear(3, 4))
    e = nn.utils.weight_norm(nn.Linear(3, 4))
    same_keys(t, e)
    check_module(t, e, rand(2, 3))
    ones = ember.ones(1, 3, dtype=ember.float64)  # check_module made the module float64
    before = e(ones).detach().numpy()
    nn.utils.remove_weight_norm(e)
    assert list(e.state_dict()) == ["bias", "weight"]
    assert isinstance(e.weight, nn.Parameter)
    np.testing.assert_allclose(e(ones).detach().numpy(), before, rtol=1e-12)
    with pytest.raises(ValueError, match="not found"):
        nn.utils.remove_weight_norm(e)


def test_deepcopy_of_parametrized_module_is_independent():
    import copy

    layer = parametrizations.weight_norm(nn.Linear(3, 2))
    clone = copy.deepcopy(layer)
    assert type(clone) is not type(layer)
    parametrize.remove_parametrizations(clone, "weight")
    assert type(clone) is nn.Linear
    assert parametrize.is_parametrized(layer) and layer.weight.shape == (2, 3)
    np.testing.assert_allclose(clone.weight.detach().numpy(), layer.weight.detach().numpy())
