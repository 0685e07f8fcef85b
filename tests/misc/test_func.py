"""ember.func against torch.func: gradients, vjp/jvp, Jacobians, Hessians, vmap."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import func

from ..conftest import requires_torch


def _f(x, y):
    return (ember.sin(x) * y ** 2).sum()


def test_grad_values_and_argnums():
    x, y = ember.tensor([0.5, 1.0]), ember.tensor([2.0, 3.0])
    gx = func.grad(_f)(x, y)
    np.testing.assert_allclose(gx.numpy(), np.cos([0.5, 1.0]) * [4.0, 9.0], rtol=1e-6)
    gx2, gy = func.grad(_f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gy.numpy(), 2 * np.sin([0.5, 1.0]) * [2.0, 3.0], rtol=1e-6)
    assert not gx.requires_grad and not x.requires_grad


def test_grad_of_grad_and_aux_and_trees():
    third = func.grad(func.grad(func.grad(lambda x: x ** 4)))
    assert third(ember.tensor(2.0)).item() == pytest.approx(48.0)
    g, aux = func.grad(lambda x: ((x ** 2).sum(), "aux"), has_aux=True)(ember.ones(2))
    assert aux == "aux" and g.tolist() == [2.0, 2.0]
    tree = {"a": ember.tensor(1.0), "b": (ember.tensor(2.0),)}
    g = func.grad(lambda p: p["a"] * p["b"][0] ** 2)(tree)
    assert g["a"].item() == 4.0 and g["b"][0].item() == 4.0
    unused = func.grad(lambda x, y: (x * 2).sum(), argnums=1)(ember.ones(2), ember.ones(3))
    assert unused.tolist() == [0.0, 0.0, 0.0]
    value = func.grad_and_value(lambda x: (x ** 2).sum())(ember.ones(2))[1]
    assert value.item() == 2.0


def test_grad_errors():
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar"):
        func.grad(lambda x: x * 2)(ember.ones(2))
    with pytest.raises(RuntimeError, match="only 1 positional inputs"):
        func.grad(lambda x: x.sum(), argnums=1)(ember.ones(2))
    with pytest.raises(RuntimeError, match="floating-point"):
        func.grad(lambda x: x.sum())(ember.ones(2, dtype=ember.int64))


def test_grad_inside_a_tracked_computation():
    w = ember.tensor([1.0, 2.0], requires_grad=True)
    g = func.grad(lambda x: ((x * w).sum()) ** 2)(ember.ones(2))  # 2 (x.w) w
    assert g.tolist() == [6.0, 12.0]


def test_vjp_and_jvp():
    x = ember.tensor([0.3, -1.2, 2.0])
    out, vjp_fn = func.vjp(ember.tanh, x)
    (g,) = vjp_fn(ember.ones(3))
    np.testing.assert_allclose(g.numpy(), 1 - np.tanh(x.numpy()) ** 2, rtol=1e-6)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        vjp_fn(ember.ones(2))
    value, tangent = func.jvp(lambda a: a ** 3, (x,), (ember.ones(3),))
    np.testing.assert_allclose(tangent.numpy(), 3 * x.numpy() ** 2, rtol=1e-6)
    np.testing.assert_allclose(value.numpy(), x.numpy() ** 3, rtol=1e-6)
    with pytest.raises(RuntimeError, match="same shape"):
        func.jvp(ember.sin, (x,), (ember.ones(2),))
    with pytest.raises(RuntimeError, match="tuples"):
        func.jvp(ember.sin, x, ember.ones(3))


@requires_torch
def test_jacobians_and_hessian_match_torch():
    import torch
    import torch.func as tf

    rng = np.random.default_rng(0)
    a = rng.standard_normal((3,))
    b = rng.standard_normal((3, 2))

    def f(lib, x, m):
        return lib.tanh(x @ m) * x.sum()

    def scalar(lib, x):
        return (lib.exp(x) * x ** 2).sum()

    x, m = ember.tensor(a), ember.tensor(b)
    tx, tm = torch.tensor(a), torch.tensor(b)
    for ours, theirs in ((func.jacrev, tf.jacrev), (func.jacfwd, tf.jacfwd)):
        got = ours(lambda p, q: f(ember, p, q), argnums=(0, 1))(x, m)
        want = theirs(lambda p, q: f(torch, p, q), argnums=(0, 1))(tx, tm)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)
    h = func.hessian(lambda p: scalar(ember, p))(x)
    np.testing.assert_allclose(h.numpy(), tf.hessian(lambda p: scalar(torch, p))(tx).numpy(),
                               rtol=1e-10)
    _, jv = func.jvp(lambda p: f(ember, p, m), (x,), (ember.ones(3, dtype=ember.float64),))
    _, tjv = tf.jvp(lambda p: f(torch, p, tm), (tx,), (torch.ones(3, dtype=torch.float64),))
    np.testing.assert_allclose(jv.numpy(), tjv.numpy(), rtol=1e-10)


def test_vmap_in_and_out_dims():
    rows, w = ember.arange(6.0).view(3, 2), ember.tensor([1.0, 2.0])
    out = func.vmap(lambda r, v: (r * v).sum(), in_dims=(0, None))(rows, w)
    assert out.tolist() == [2.0, 8.0, 14.0]
    cols = func.vmap(ember.sum, in_dims=1)(rows)
    assert cols.tolist() == [6.0, 9.0]
    first, second = func.vmap(lambda r: (r, r * 2), out_dims=(0, 1))(rows)
    assert first.shape == (3, 2) and second.shape == (2, 3)
    nested = func.vmap(func.vmap(ember.mul))(ember.ones(2, 3), ember.full((2, 3), 2.0))
    assert nested.tolist() == [[2.0] * 3] * 2
    assert ember.vmap is func.vmap
    per_sample = func.vmap(func.grad(lambda x: (x ** 2).sum()))(rows)
    assert per_sample.tolist() == (2 * rows).tolist()


def test_vmap_errors():
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        func.vmap(ember.add)(ember.ones(2), ember.ones(3))
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        func.vmap(ember.add, in_dims=(0,))(ember.ones(2), ember.ones(2))
    with pytest.raises(ValueError, match="must only return Tensors"):
        func.vmap(lambda x: 3)(ember.ones(2))
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        func.vmap(lambda x, n: x * n, in_dims=(0, 0))(ember.ones(2), 3)
    with pytest.raises(RuntimeError, match="randomness"):
        func.vmap(ember.sin, randomness="bad")


@requires_torch
def test_vmap_matches_torch():
    import torch

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 3, 2)), rng.standard_normal((2, 5))
    got = func.vmap(ember.matmul, in_dims=(0, None))(ember.tensor(a), ember.tensor(b))
    want = torch.vmap(torch.matmul, in_dims=(0, None))(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_functional_call():
    model = ember.nn.Linear(2, 1)
    params = {k: ember.zeros_like(v) for k, v in model.named_parameters()}
    assert func.functional_call(model, params, (ember.ones(3, 2),)).tolist() == [[0.0]] * 3
    grads = func.grad(lambda p: func.functional_call(model, p, (ember.ones(3, 2),)).sum())(
        params)
    assert grads["weight"].tolist() == [[3.0, 3.0]] and grads["bias"].tolist() == [3.0]
