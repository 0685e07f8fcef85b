"""ASGD, Adafactor and Muon against PyTorch: the same parameters and state after several
steps in float64 (and float32), resuming from a saved state, and PyTorch's argument
errors."""
from __future__ import annotations

import io

import numpy as np
import pytest

import ember
from ember import optim
from tests.conftest import requires_torch

STEPS = 8

CASES = [
    ("ASGD", dict(lr=0.1)),
    ("ASGD", dict(lr=0.1, t0=3, lambd=0.1, alpha=0.5)),
    ("ASGD", dict(lr=0.1, t0=2, weight_decay=0.1, maximize=True)),
    ("Adafactor", dict()),
    ("Adafactor", dict(lr=0.1)),
    ("Adafactor", dict(lr=0.1, beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.5)),
    ("Adafactor", dict(lr=0.1, weight_decay=0.1, maximize=True, foreach=False)),
    ("Muon", dict(lr=0.1)),
    ("Muon", dict(lr=0.05, nesterov=False, momentum=0.5, weight_decay=0.0)),
    ("Muon", dict(lr=0.1, adjust_lr_fn="match_rms_adamw", ns_steps=3,
                  ns_coefficients=(2.0, -1.5, 0.5), eps=1e-5)),
    ("Muon", dict(lr=0.1, adjust_lr_fn="original", weight_decay=0.2)),
]


def _initial(name, dtype=np.float64):
    rng = np.random.default_rng(1234)
    if name == "Muon":  # 2-D weights only: wide, tall and square
        shapes = [(3, 5), (6, 2), (4, 4)]
    else:  # a matrix, a vector, a batch of matrices (factored over the last two dims)
        shapes = [(3, 4), (5,), (2, 3, 2)]
    return [rng.uniform(-1, 1, shape).astype(dtype) for shape in shapes]


def _loss(params, step):
    """A fixed loss whose gradients change in size and sign from step to step; the last
    parameter gets no gradient on odd steps."""
    a, b, c = params
    scale = 1.0 + 0.25 * step
    loss = (a * a * scale).sum() + (b.sin() * (2.0 - step * 0.3)).sum() + a.sum() * b.sum() * 0.1
    if step % 2 == 0:
        loss = loss + (c * c * c).sum()
    return loss


def _make(lib, name, options, arrays, device="cpu"):
    if lib is ember:
        params = [ember.tensor(x, device=device, requires_grad=True) for x in arrays]
    else:
        params = [lib.tensor(x, requires_grad=True) for x in arrays]
    return params, getattr(lib.optim, name)(params, **options)


def _train(params, opt, steps, start=0):
    for step in range(start, start + steps):
        opt.zero_grad()
        _loss(params, step).backward()
        opt.step()


def _numpy(t):
    return t.detach().cpu().numpy()


@requires_torch
@pytest.mark.parametrize("name,options", CASES, ids=[f"{n}-{i}" for i, (n, _) in
                                                       enumerate(CASES)])
def test_matches_pytorch_float64(name, options, device):
    import torch

    arrays = _initial(name)
    params, opt = _make(ember, name, options, arrays, device)
    tparams, topt = _make(torch, name, options, arrays)
    _train(params, opt, STEPS)
    _train(tparams, topt, STEPS)
    for p, t in zip(params, tparams):
        assert p.dtype == ember.float64
        np.testing.assert_allclose(_numpy(p), t.detach().numpy(), rtol=1e-11, atol=1e-13)
    ours, ref = opt.state_dict(), topt.state_dict()
    assert set(ours["state"]) == set(ref["state"])
    for index, entries in ref["state"].items():
        assert set(ours["state"][index]) == set(entries)
        for key, value in entries.items():
            mine = ours["state"][index][key]
            np.testing.assert_allclose(_numpy(mine), value.numpy(), rtol=1e-11, atol=1e-13)
            assert mine.dtype.name == str(value.dtype).split(".")[1], key
            assert tuple(mine.shape) == tuple(value.shape), key
    assert ours["param_groups"][0].keys() == ref["param_groups"][0].keys()
    for key, value in ref["param_groups"][0].items():
        assert ours["param_groups"][0][key] == value, key


@requires_torch
@pytest.mark.parametrize("name,options", [CASES[1], CASES[5], CASES[7], CASES[9]])
def test_matches_pytorch_float32_and_groups(name, options):
    import torch

    arrays = _initial(name, np.float32)
    params, opt = _make(ember, name, options, arrays)
    tparams, topt = _make(torch, name, options, arrays)
    _train(params, opt, STEPS)
    _train(tparams, topt, STEPS)
    for p, t in zip(params, tparams):
        assert p.dtype == ember.float32
        np.testing.assert_allclose(_numpy(p), t.detach().numpy(), rtol=2e-5, atol=2e-6)

    arrays = _initial(name)
    results = []
    for lib in (ember, torch):
        params = [lib.tensor(x, requires_grad=True) for x in arrays]
        spec = [{"params": params[:1]}, {"params": params[1:], "lr": 0.02}]
        opt = getattr(lib.optim, name)(spec, **options)
        _train(params, opt, 4)
        results.append([_numpy(p) for p in params])
    for m, t in zip(*results):
        np.testing.assert_allclose(m, t, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("name,options", CASES[::2])
def test_resume_from_saved_state_is_identical(name, options):
    arrays = _initial(name)
    straight, opt = _make(ember, name, options, arrays)
    _train(straight, opt, 6)

    params, opt = _make(ember, name, options, arrays)
    _train(params, opt, 3)
    buffer = io.BytesIO()
    ember.save({"params": [p.detach() for p in params], "optimizer": opt.state_dict()}, buffer)
    buffer.seek(0)
    checkpoint = ember.load(buffer)
    params2 = [t.clone().requires_grad_() for t in checkpoint["params"]]
    opt2 = getattr(optim, name)(params2, **options)
    opt2.load_state_dict(checkpoint["optimizer"])
    _train(params2, opt2, 3, start=3)
    for p, expected in zip(params2, straight):
        np.testing.assert_array_equal(_numpy(p), _numpy(expected))


def test_asgd_keeps_the_average_and_float32_scalars():
    w = ember.tensor([1.0, -2.0], dtype=ember.float64, requires_grad=True)
    opt = optim.ASGD([w], lr=0.1, t0=0)
    seen = []
    for _ in range(4):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
        seen.append(w.detach().numpy().copy())
    state = opt.state[w]
    assert state["eta"].dtype == ember.float32 and state["mu"].dtype == ember.float32
    assert state["step"].item() == 4.0
    # with t0=0 the average is the running mean of the iterates from the second step on
    # (the first step copies the iterate)
    expected = seen[0] + (seen[1] - seen[0]) * 1.0
    expected = expected + (seen[2] - expected) / 2
    expected = expected + (seen[3] - expected) / 3
    np.testing.assert_allclose(state["ax"].numpy(), expected, rtol=1e-6)


def test_adafactor_state_is_factored():
    w = ember.zeros(2, 3, 4, requires_grad=True)
    v = ember.zeros(4, requires_grad=True)
    opt = optim.Adafactor([w, v])
    (w.sum() + v.sum()).backward()
    opt.step()
    assert set(opt.state[w]) == {"step", "row_var", "col_var"}
    assert opt.state[w]["row_var"].shape == (2, 3, 1)
    assert opt.state[w]["col_var"].shape == (2, 1, 4)
    assert set(opt.state[v]) == {"step", "variance"}


def test_muon_update_is_nearly_orthogonal():
    rng = np.random.default_rng(0)
    g = rng.normal(size=(8, 5))
    from ember.optim.muon import zeropower_via_newtonschulz

    o = zeropower_via_newtonschulz(np, g, (3.4445, -4.7750, 2.0315), 5, 1e-7)
    singular = np.linalg.svd(o.astype(np.float64), compute_uv=False)
    assert o.shape == g.shape and o.dtype == np.float32
    assert np.all(singular > 0.5) and np.all(singular < 1.5)  # US'V^T, S' near 1
    u, _, vt = np.linalg.svd(g, full_matrices=False)
    assert np.sum(o * (u @ vt)) > 0.8 * 5  # aligned with the polar factor


ERRORS = [
    ("ASGD", dict(lr=-0.1)),
    ("ASGD", dict(weight_decay=-1)),
    ("Adafactor", dict(lr=-1)),
    ("Adafactor", dict(beta2_decay=0.5)),
    ("Adafactor", dict(eps=(-1.0, 1e-3))),
    ("Adafactor", dict(eps=(None, -1e-3))),
    ("Adafactor", dict(d=0.5)),
    ("Adafactor", dict(weight_decay=-0.1)),
    ("Muon", dict(lr=-1)),
    ("Muon", dict(momentum=-0.5)),
    ("Muon", dict(weight_decay=-1)),
    ("Muon", dict(adjust_lr_fn="sqrt")),
    ("LBFGS", dict(lr=-1)),
]


@requires_torch
@pytest.mark.parametrize("name,options", ERRORS)
def test_invalid_hyperparameters_raise_as_pytorch(name, options):
    import torch

    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.ones(2, 2, requires_grad=True)], **options)
    with pytest.raises(ValueError) as ours:
        getattr(optim, name)([ember.ones(2, 2, requires_grad=True)], **options)
    assert str(ours.value) == str(theirs.value)


@requires_torch
def test_muon_refuses_non_matrix_parameters_as_pytorch():
    import torch

    with pytest.raises(ValueError) as theirs:
        torch.optim.Muon([torch.ones(3, requires_grad=True)])
    with pytest.raises(ValueError) as ours:
        optim.Muon([ember.ones(3, requires_grad=True)])
    assert str(ours.value) == str(theirs.value).replace("torch.Size", "ember.Size")
    with pytest.raises(ValueError, match="Muon only supports 2D"):
        optim.Muon([ember.ones(2, 2, requires_grad=True)]).add_param_group(
            {"params": [ember.ones(2, 2, 2, requires_grad=True)]})


@pytest.mark.parametrize("make", [
    lambda p: optim.ASGD(p, capturable=True),
    lambda p: optim.ASGD(p, differentiable=True),
])
def test_unsupported_implementation_flags_are_refused(make):
    with pytest.raises(ValueError, match="not supported by ember"):
        make([ember.ones(2, requires_grad=True)])


def test_tensor_lr_and_closure():
    w = ember.tensor([[1.0, 2.0]], requires_grad=True)
    for make in (lambda: optim.ASGD([w], lr=ember.tensor(0.1)),
                 lambda: optim.Adafactor([w], lr=ember.tensor(0.1)),
                 lambda: optim.Muon([w], lr=ember.tensor(0.1))):
        opt = make()
        # kept as given, as PyTorch keeps it (each step reads it as a number)
        assert isinstance(opt.param_groups[0]["lr"], ember.Tensor)

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        assert opt.step(closure) is not None
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        optim.ASGD([w], lr=ember.tensor([0.1, 0.2]))


@pytest.mark.parametrize("name,options", [CASES[2], CASES[6]])
def test_foreach_is_recorded_and_changes_nothing(name, options):
    # PyTorch's foreach kernels compute the same update (ASGD's rounds its step size in
    # float32); ember has one implementation for every choice
    arrays = _initial(name)
    results = []
    for foreach in (None, True, False):
        params, opt = _make(ember, name, dict(options, foreach=foreach), arrays)
        assert opt.param_groups[0]["foreach"] is foreach
        _train(params, opt, 4)
        results.append([_numpy(p) for p in params])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


def _signature(function):
    import inspect

    return [(p.name, p.kind, None if p.default is p.empty else
             repr(p.default).replace("torch.", "ember."))
            for p in inspect.signature(function).parameters.values()]


@requires_torch
def test_signatures_match_pytorch():
    import torch

    names = [(optim, torch.optim, n) for n in ("ASGD", "Adafactor", "LBFGS", "Muon",
                                              "swap_in_optimizer_params_and_state")]
    names += [(optim.swa_utils, torch.optim.swa_utils, n) for n in optim.swa_utils.__all__]
    for ours, theirs, name in names:
        assert _signature(getattr(ours, name)) == _signature(getattr(theirs, name)), name
    assert _signature(optim.swa_utils.AveragedModel.update_parameters) == \
        _signature(torch.optim.swa_utils.AveragedModel.update_parameters)
    assert sorted(optim.swa_utils.__all__) == sorted(torch.optim.swa_utils.__all__)
