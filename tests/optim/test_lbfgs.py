"""LBFGS against PyTorch: the same iterates, losses and evaluation counts, with and
without the strong-Wolfe line search; its state dict and its errors."""
from __future__ import annotations

import io

import numpy as np
import pytest

import ember
from ember import optim
from tests.conftest import requires_torch


def _initial(dtype=np.float64):
    rng = np.random.default_rng(0)
    return [rng.uniform(-1, 1, (3, 4)).astype(dtype), rng.uniform(-1, 1, (5,)).astype(dtype)]


def _setup(lib, options, arrays, device="cpu"):
    if lib is ember:
        params = [ember.tensor(x, device=device, requires_grad=True) for x in arrays]
    else:
        params = [lib.tensor(x, requires_grad=True) for x in arrays]
    opt = lib.optim.LBFGS(params, **options)

    def closure():
        opt.zero_grad()
        a, b = params
        loss = (((a - 0.3) ** 2 * (a + 2)).sum() + (b.sin() * 2).sum()
                + (a.sum() * b.sum() * 0.1) ** 2 + (b ** 4).sum())
        loss.backward()
        return loss

    return params, opt, closure


def _steps(lib, options, arrays, steps=3, device="cpu"):
    params, opt, closure = _setup(lib, options, arrays, device)
    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    state = opt.state[params[0]]
    return params, losses, opt, state


CASES = [
    dict(),
    dict(line_search_fn="strong_wolfe"),
    dict(history_size=3, max_iter=7, lr=0.5),
    dict(history_size=2, line_search_fn="strong_wolfe", max_iter=10, max_eval=12),
    dict(tolerance_grad=1e-3, line_search_fn="strong_wolfe"),
    dict(tolerance_change=1e-3, max_iter=30),
    dict(max_iter=1),
]


@requires_torch
@pytest.mark.parametrize("options", CASES, ids=[str(i) for i in range(len(CASES))])
def test_matches_pytorch_float64(options, device):
    import torch

    arrays = _initial()
    params, losses, opt, state = _steps(ember, options, arrays, device=device)
    tparams, tlosses, topt, tstate = _steps(torch, options, arrays)
    for p, t in zip(params, tparams):
        np.testing.assert_allclose(p.detach().cpu().numpy(), t.detach().numpy(),
                                   rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(losses, tlosses, rtol=1e-12)
    assert (state["func_evals"], state["n_iter"]) == (tstate["func_evals"], tstate["n_iter"])
    assert set(state) == set(tstate)
    assert len(state["old_dirs"]) == len(tstate["old_dirs"])
    for key in ("d", "prev_flat_grad"):
        np.testing.assert_allclose(state[key].cpu().numpy(), tstate[key].numpy(),
                                   rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(float(state["t"]), float(tstate["t"]), rtol=1e-10)
    assert state["prev_loss"] == pytest.approx(tstate["prev_loss"], rel=1e-12)
    group = opt.state_dict()["param_groups"][0]
    assert group == {**topt.state_dict()["param_groups"][0]}


@requires_torch
@pytest.mark.parametrize("options", [dict(max_iter=4),
                                     dict(max_iter=4, line_search_fn="strong_wolfe")])
def test_matches_pytorch_float32(options):
    import torch

    arrays = _initial(np.float32)
    params, losses, _, state = _steps(ember, options, arrays, steps=2)
    tparams, tlosses, _, tstate = _steps(torch, options, arrays, steps=2)
    for p, t in zip(params, tparams):
        assert p.dtype == ember.float32
        np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
    assert state["d"].dtype == ember.float32
    np.testing.assert_allclose(losses, tlosses, rtol=1e-5)


def test_finds_the_minimum_of_a_quadratic():
    rng = np.random.default_rng(1)
    m = rng.normal(size=(6, 6))
    a = ember.tensor(m @ m.T + 6 * np.eye(6))
    b = ember.tensor(rng.normal(size=6))
    x = ember.zeros(6, dtype=ember.float64, requires_grad=True)
    opt = optim.LBFGS([x], line_search_fn="strong_wolfe", history_size=4, max_iter=50,
                      tolerance_grad=1e-12, tolerance_change=1e-15)

    def closure():
        opt.zero_grad()
        loss = 0.5 * (x @ (a @ x)) - b @ x
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(a.numpy(), b.numpy()),
                               rtol=1e-6, atol=1e-8)


def test_history_size_bounds_the_memory():
    arrays = _initial()
    _, _, _, state = _steps(ember, dict(history_size=2, max_iter=10), arrays, steps=2)
    assert len(state["old_dirs"]) == len(state["old_stps"]) == len(state["ro"]) == 2
    assert len(state["al"]) == 2


def test_resume_from_saved_state_is_identical():
    arrays = _initial()
    options = dict(history_size=4, max_iter=4, line_search_fn="strong_wolfe")
    params, opt, closure = _setup(ember, options, arrays)
    for _ in range(4):
        opt.step(closure)
    straight = [p.detach().numpy().copy() for p in params]

    params, opt, closure = _setup(ember, options, arrays)
    for _ in range(2):
        opt.step(closure)
    buffer = io.BytesIO()
    ember.save({"params": [p.detach() for p in params], "optimizer": opt.state_dict()}, buffer)
    buffer.seek(0)
    checkpoint = ember.load(buffer)
    params2, opt2, closure2 = _setup(ember, options, [t.numpy() for t in checkpoint["params"]])
    opt2.load_state_dict(checkpoint["optimizer"])
    for _ in range(2):
        opt2.step(closure2)
    for p, expected in zip(params2, straight):
        np.testing.assert_array_equal(p.detach().numpy(), expected)


def test_stops_at_once_when_the_gradient_is_small():
    w = ember.tensor([1.0], requires_grad=True)
    opt = optim.LBFGS([w])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = (w * 0).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 0.0
    assert len(calls) == 1 and w.item() == 1.0


@requires_torch
def test_errors():
    import torch

    w = ember.tensor([1.0], requires_grad=True)
    v = ember.tensor([2.0], requires_grad=True)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        optim.LBFGS([{"params": [w]}, {"params": [v]}])
    opt = optim.LBFGS([w])
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        opt.add_param_group({"params": [v]})
    with pytest.raises(RuntimeError, match="needs a closure"):
        opt.step(None)
    with pytest.raises(ValueError, match="only 'strong_wolfe' is supported"):
        optim.LBFGS([w], line_search_fn="backtracking")
    with pytest.raises(ValueError) as theirs:
        torch.optim.LBFGS([torch.ones(1, requires_grad=True)], lr=-2)
    with pytest.raises(ValueError) as ours:
        optim.LBFGS([w], lr=-2)
    assert str(ours.value) == str(theirs.value)
