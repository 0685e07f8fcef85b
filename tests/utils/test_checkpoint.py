"""Activation checkpointing: the same gradients as the plain run, dropout included, with
less memory kept."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import ember
from ember import nn
from ember.utils.checkpoint import checkpoint, checkpoint_sequential


def grads(model, *extra):
    return [t.grad.clone() for t in list(model.parameters()) + list(extra)]


def same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def net():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Dropout(0.5), nn.Linear(16, 16),
                         nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 3)).double()


@pytest.mark.parametrize("x_requires_grad", [True, False])
def test_gradients_equal_the_plain_run_with_dropout(x_requires_grad):
    model = net()
    x = ember.randn(8, 4, dtype=ember.float64, requires_grad=x_requires_grad)
    ember.manual_seed(5)
    model(x).square().sum().backward()
    plain = grads(model, *([x] if x_requires_grad else []))
    after_plain = ember.rand(3)
    model.zero_grad()
    x.grad = None
    ember.manual_seed(5)
    out = checkpoint(model, x)
    assert out.requires_grad and out.grad_fn is not None
    out.square().sum().backward()
    same(plain, grads(model, *([x] if x_requires_grad else [])))
    # The recomputation replays the random stream without disturbing it.
    assert ember.equal(ember.rand(3), after_plain)


def test_without_preserved_rng_dropout_differs():
    model = net()
    x = ember.randn(64, 4, dtype=ember.float64)
    ember.manual_seed(5)
    model(x).sum().backward()
    plain = grads(model)
    model.zero_grad()
    ember.manual_seed(5)
    checkpoint(model, x, preserve_rng_state=False).sum().backward()
    assert any(not ember.equal(a, b) for a, b in zip(plain, grads(model)))


def test_several_outputs_keyword_arguments_and_non_tensor_arguments():
    w = ember.randn(3, 3, dtype=ember.float64, requires_grad=True)

    def fn(a, power, b, scale=1.0):
        return (a @ w) ** power * scale, (b * w).sum(), None

    a = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
    b = ember.randn(3, 3, dtype=ember.float64, requires_grad=True)
    first, second, nothing = fn(a, 2, b, scale=0.5)
    (first.sum() + 3 * second).backward()
    plain = [t.grad.clone() for t in (a, b, w)]
    for t in (a, b, w):
        t.grad = None
    first, second, nothing = checkpoint(fn, a, 2, b, scale=0.5)
    assert nothing is None
    (first.sum() + 3 * second).backward()
    same(plain, [t.grad for t in (a, b, w)])


def test_only_used_outputs_need_a_gradient_and_autograd_grad_works():
    w = ember.randn(3, dtype=ember.float64, requires_grad=True)
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    first, second = checkpoint(lambda t: (t * w, (t * w).exp()), x)
    (gw, gx) = ember.autograd.grad(first.sum(), [w, x])
    np.testing.assert_array_equal(gw.numpy(), x.detach().numpy())
    np.testing.assert_array_equal(gx.numpy(), w.detach().numpy())


def test_gradients_of_gradients_go_through_the_recomputation():
    x = ember.tensor([0.5, -1.5, 2.0], dtype=ember.float64, requires_grad=True)
    y = checkpoint(lambda t: (t ** 3).sum(), x)
    (dy,) = ember.autograd.grad(y, x, create_graph=True)     # 3x^2
    (d2y,) = ember.autograd.grad(dy.sum(), x)                 # 6x
    np.testing.assert_allclose(d2y.numpy(), 6 * x.detach().numpy())


def test_checkpoint_sequential_equals_the_plain_run():
    model = net()
    x = ember.randn(8, 4, dtype=ember.float64, requires_grad=True)
    ember.manual_seed(9)
    model(x).sum().backward()
    plain = grads(model, x)
    for segments in (1, 2, 3, 7, 20):
        model.zero_grad()
        x.grad = None
        ember.manual_seed(9)
        checkpoint_sequential(model, segments, x).sum().backward()
        same(plain, grads(model, x))
    model.zero_grad()
    ember.manual_seed(9)
    checkpoint_sequential(list(model.children()), 2, x.detach()).sum().backward()
    same(plain[:-1], grads(model))


def test_under_no_grad_it_is_a_plain_call():
    model = net()
    with ember.no_grad():
        out = checkpoint(model, ember.randn(2, 4, dtype=ember.float64))
    assert not out.requires_grad


def test_bad_calls():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="callable"):
        checkpoint(3, x)
    with pytest.raises(TypeError, match="Tensor or a tuple of Tensors"):
        checkpoint(lambda t: [t], x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: k"):
        checkpoint(lambda t, k=1: t, x, use_reentrant=True, k=2)
    with pytest.raises(ValueError, match="segments"):
        checkpoint_sequential(nn.Sequential(nn.Linear(2, 2)), 0, x)


def test_deep_chain_peak_memory_at_least_halves():
    # The benchmark's deep chain, smaller: 32 x (Linear(64, 64) + Tanh) on a batch of 512
    # with 6 segments. Activations dominate (128 KiB each, weights 16 KiB).
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
    try:
        import checkpoint_memory
    finally:
        sys.path.pop(0)
    result = checkpoint_memory.measure(layers=32, width=64, batch=512, segments=6,
                                       time_it=False)
    plain, checked = result["plain"]["peak"], result["checkpointed"]["peak"]
    assert plain >= 2 * checked, (plain, checked)
