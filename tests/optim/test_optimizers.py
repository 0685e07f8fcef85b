"""Optimizers against PyTorch: the same parameters, the same fixed loss, several steps,
compared in float64 with tight tolerances; plus errors, state dicts and resuming."""
from __future__ import annotations

import io

import numpy as np
import pytest

import ember
from ember import optim
from tests.conftest import requires_torch

STEPS = 8

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.5, weight_decay=0.1, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.1, weight_decay=0.1)),
    ("Adam", dict(lr=0.1, maximize=True)),
    ("Adam", dict(lr=0.05, betas=(0.5, 0.9), eps=1e-3, amsgrad=True, weight_decay=0.1,
                  maximize=True)),
    ("Adam", dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.1)),
    ("AdamW", dict(lr=0.1, weight_decay=0.5, amsgrad=True)),
    ("AdamW", dict(lr=0.1, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True, eps=1e-3)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.5, weight_decay=0.1)),
    ("Adadelta", dict(maximize=True, eps=1e-3)),
    ("Adamax", dict(lr=0.1)),
    ("Adamax", dict(lr=0.1, weight_decay=0.1, betas=(0.8, 0.9), maximize=True)),
    ("NAdam", dict(lr=0.1)),
    ("NAdam", dict(lr=0.1, weight_decay=0.1, momentum_decay=0.1)),
    ("NAdam", dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.1)),
    ("RAdam", dict(lr=0.1, betas=(0.9, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.1, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True,
                   maximize=True)),
]


def _initial(dtype=np.float64):
    rng = np.random.default_rng(1234)
    return [rng.uniform(-1, 1, (3, 4)).astype(dtype), rng.uniform(-1, 1, (5,)).astype(dtype),
            rng.uniform(-1, 1, (2,)).astype(dtype)]


def _loss(lib, a, b, step):
    """The same fixed loss in both libraries; it changes with the step so that the
    gradients vary in size and sign. The third parameter gets no gradient."""
    scale = 1.0 + 0.25 * step
    return ((a * a * scale).sum() + (b.sin() * (2.0 - step * 0.3)).sum()
            + a.sum() * b.sum() * 0.1)


def _run(lib, name, options, arrays, steps=STEPS, groups=False, device="cpu"):
    if lib is ember:
        params = [ember.tensor(x, device=device, requires_grad=True) for x in arrays]
    else:
        params = [lib.tensor(x, requires_grad=True) for x in arrays]
    if groups:
        lr = options.get("lr", 1.0)
        spec = [{"params": params[:1]}, {"params": params[1:], "lr": lr * 0.5}]
    else:
        spec = params
    opt = getattr(lib.optim, name)(spec, **options)
    for step in range(steps):
        opt.zero_grad()
        _loss(lib, params[0], params[1], step).backward()
        opt.step()
    return [p.detach().cpu().numpy() if lib is ember else p.detach().numpy() for p in params], opt


@requires_torch
@pytest.mark.parametrize("name,options", CASES, ids=[f"{n}-{i}" for i, (n, _) in
                                                       enumerate(CASES)])
def test_matches_pytorch_float64(name, options, device):
    import torch

    arrays = _initial()
    mine, opt = _run(ember, name, options, arrays, device=device)
    theirs, topt = _run(torch, name, options, arrays)
    for m, t in zip(mine, theirs):
        assert m.dtype == np.float64
        np.testing.assert_allclose(m, t, rtol=1e-11, atol=1e-13)
    # the state holds the same buffers with the same names and values
    ours, ref = opt.state_dict(), topt.state_dict()
    assert set(ours["state"]) == set(ref["state"])
    for index, entries in ref["state"].items():
        assert set(ours["state"][index]) == set(entries)
        for key, value in entries.items():
            np.testing.assert_allclose(np.asarray(ours["state"][index][key].cpu().numpy()),
                                       value.numpy(), rtol=1e-11, atol=1e-13)
            assert ours["state"][index][key].dtype.name == str(value.dtype).split(".")[1]
    assert ours["param_groups"][0]["params"] == ref["param_groups"][0]["params"]
    for key in ref["param_groups"][0]:
        if key not in ("params",):
            assert ours["param_groups"][0][key] == ref["param_groups"][0][key], key


@requires_torch
@pytest.mark.parametrize("name,options", [CASES[1], CASES[7], CASES[18], CASES[21],
                                          CASES[29]])
def test_matches_pytorch_groups_and_float32(name, options):
    import torch

    arrays = _initial()
    mine, _ = _run(ember, name, options, arrays, groups=True)
    theirs, _ = _run(torch, name, options, arrays, groups=True)
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m, t, rtol=1e-11, atol=1e-13)
    arrays = _initial(np.float32)
    mine, _ = _run(ember, name, options, arrays)
    theirs, _ = _run(torch, name, options, arrays)
    for m, t in zip(mine, theirs):
        assert m.dtype == np.float32
        np.testing.assert_allclose(m, t, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name,options", CASES[::3])
def test_resume_from_saved_state_is_identical(name, options):
    arrays = _initial()
    straight, _ = _run(ember, name, options, arrays, steps=6)

    params = [ember.tensor(x, requires_grad=True) for x in arrays]
    opt = getattr(optim, name)(params, **options)
    for step in range(3):
        opt.zero_grad()
        _loss(ember, params[0], params[1], step).backward()
        opt.step()
    buffer = io.BytesIO()
    ember.save({"params": [p.detach() for p in params], "optimizer": opt.state_dict()}, buffer)
    buffer.seek(0)
    checkpoint = ember.load(buffer)

    params2 = [t.clone().requires_grad_() for t in checkpoint["params"]]
    opt2 = getattr(optim, name)(params2, **options)
    opt2.load_state_dict(checkpoint["optimizer"])
    for step in range(3, 6):
        opt2.zero_grad()
        _loss(ember, params2[0], params2[1], step).backward()
        opt2.step()
    for p, expected in zip(params2, straight):
        np.testing.assert_array_equal(p.detach().numpy(), expected)


def test_step_returns_closure_loss_and_runs_it_with_grad():
    w = ember.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    seen = []

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        seen.append(ember.is_grad_enabled())
        return loss

    with ember.no_grad():
        loss = opt.step(closure)
    assert seen == [True]
    assert loss.item() == 5.0
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 1.6])
    assert opt.step() is None


def test_step_bumps_version_and_updates_in_place():
    w = ember.tensor([1.0, 2.0], requires_grad=True)
    data = w._data
    opt = optim.Adam([w])
    (w * 3).sum().backward()
    before = w._version
    opt.step()
    assert w._data is data
    assert w._version == before + 1


def test_zero_grad():
    w = ember.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert w.grad is not None and w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


@pytest.mark.parametrize("make,message", [
    (lambda p: optim.SGD(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: optim.SGD(p, lr=0.1, momentum=-0.5), "Invalid momentum value: -0.5"),
    (lambda p: optim.SGD(p, lr=0.1, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.SGD(p, lr=0.1, nesterov=True), "Nesterov momentum requires a momentum"),
    (lambda p: optim.Adam(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.Adam(p, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda p: optim.Adam(p, eps=-1e-8), "Invalid epsilon value: -1e-08"),
    (lambda p: optim.RMSprop(p, alpha=-1), "Invalid alpha value: -1"),
    (lambda p: optim.Adagrad(p, lr_decay=-1), "Invalid lr_decay value: -1"),
    (lambda p: optim.Adadelta(p, rho=1.5), "Invalid rho value: 1.5"),
    (lambda p: optim.NAdam(p, momentum_decay=-1), "Invalid momentum_decay value: -1"),
    (lambda p: optim.SGD([], lr=0.1), "optimizer got an empty parameter list"),
    (lambda p: optim.Adam(p, capturable=True), "capturable=True"),
])
def test_invalid_arguments(make, message):
    params = [ember.tensor([1.0], requires_grad=True)]
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        make(params)


def test_invalid_params():
    w = ember.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.SGD(w, lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        optim.SGD([1.0], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    with pytest.raises(ValueError, match="didn't specify a value of required"):
        from ember.optim.optimizer import Optimizer, required
        Optimizer([w], {"lr": required})


def test_param_groups_defaults_and_add_param_group():
    a = ember.tensor([1.0], requires_grad=True)
    b = ember.tensor([2.0], requires_grad=True)
    opt = optim.SGD([{"params": [a]}], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.01})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.01]
    assert opt.param_groups[1]["momentum"] == 0.9
    named = optim.Adam([("w", a)])
    assert named.param_groups[0]["param_names"] == ["w"]
    assert "Parameter Group 0" in repr(opt)


def test_load_state_dict_checks_shape_of_groups():
    a = ember.tensor([1.0], requires_grad=True)
    b = ember.tensor([2.0], requires_grad=True)
    opt = optim.Adam([a, b])
    other = optim.Adam([a])
    with pytest.raises(ValueError, match="doesn't match the size"):
        other.load_state_dict(opt.state_dict())
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.Adam([{"params": [a]}, {"params": [b]}]).load_state_dict(opt.state_dict())


def test_loaded_state_is_cast_to_parameter_dtype():
    a = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    opt = optim.Adam([a])
    (a * a).sum().backward()
    opt.step()
    state = opt.state_dict()
    b = ember.tensor([1.0, 2.0], dtype=ember.float32, requires_grad=True)
    opt2 = optim.Adam([b])
    opt2.load_state_dict(state)
    assert opt2.state[b]["exp_avg"].dtype == ember.float32
    assert opt2.state[b]["step"].dtype == ember.float32
    assert opt2.state[b]["exp_avg"]._data is not opt.state[a]["exp_avg"]._data


def test_user_defined_optimizer_in_pytorch_style():
    class PlainSGD(optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, {"lr": lr})

        @ember.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.add_(p.grad, alpha=-group["lr"])
                        self.state[p]["steps"] = self.state[p].get("steps", 0) + 1

    w = ember.tensor([1.0, 2.0], requires_grad=True)
    opt = PlainSGD([w], lr=0.25)
    scheduler = optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "scheduler before optimizer" warning
        for _ in range(2):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
            scheduler.step()
    # w <- w - 0.25 * 2w = 0.5 w, then w - 0.125 * 2w = 0.75 w
    assert w.tolist() == [0.375, 0.75]
    assert opt.state_dict()["state"] == {0: {"steps": 2}}


def test_step_hooks():
    w = ember.tensor([1.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.5)
    calls = []

    def pre(optimizer, args, kwargs):
        calls.append(("pre", optimizer is opt, args, kwargs))
        return (optimizer,), {"closure": None}  # args start with the optimizer, as in torch

    handle = opt.register_step_pre_hook(pre)
    opt.register_step_post_hook(lambda optimizer, args, kwargs: calls.append(("post", kwargs)))
    (w * w).sum().backward()
    opt.step(lambda: 1 / 0)  # the pre-hook replaces the closure
    kind, same, args, kwargs = calls[0]
    assert (kind, same, len(args), kwargs) == ("pre", True, 2, {}) and callable(args[1])
    assert args[0] is opt
    assert calls[1] == ("post", {"closure": None})
    assert w.tolist() == [0.0]
    handle.remove()
    calls.clear()
    opt.step()
    assert calls == [("post", {})]


@requires_torch
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
                                  "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS"])
def test_options_named_ordered_and_printed_as_torch(name):
    import torch

    texts = []
    for lib in (ember, torch):
        first, second = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(1))
        groups = [{"params": [first]}, {"params": [second], "lr": 0.5}]
        opt = getattr(lib.optim, name)(groups if name != "LBFGS" else [first], lr=0.1)
        groups = opt.state_dict()["param_groups"]
        texts.append((list(opt.defaults), [list(g) for g in groups], str(groups), repr(opt)))
    assert texts[0] == texts[1]
