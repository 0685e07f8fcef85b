"""swa_utils (AveragedModel, SWALR, update_bn, the averaging functions) and
swap_in_optimizer_params_and_state against PyTorch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
from ember import optim
from ember.optim import swa_utils
from tests.conftest import requires_torch

AVERAGING = ["swa", "ema_multi", "ema", "swa_multi", "swa_fn", "buffers"]


def _averaging(lib, kind):
    su = lib.optim.swa_utils
    return {"swa": {}, "ema_multi": dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.9)),
            "ema": dict(avg_fn=su.get_ema_avg_fn(0.8)),
            "swa_multi": dict(multi_avg_fn=su.get_swa_multi_avg_fn()),
            "swa_fn": dict(avg_fn=su.get_swa_avg_fn()), "buffers": dict(use_buffers=True)}[kind]


def _train_and_average(lib, kind, batches, weights):
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4),
                              lib.nn.Linear(4, 1)).double()
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.tensor(w))
    averaged = lib.optim.swa_utils.AveragedModel(model, **_averaging(lib, kind))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    scheduler = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
    lrs = []
    for x in batches:
        opt.zero_grad()
        model(lib.tensor(x)).tanh().sum().backward()
        opt.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
        averaged.update_parameters(model)
    lib.optim.swa_utils.update_bn([lib.tensor(x) for x in batches], averaged)
    tensors = list(averaged.parameters()) + list(averaged.buffers())
    return [t.detach().numpy() for t in tensors], lrs, averaged


@requires_torch
@pytest.mark.parametrize("kind", AVERAGING)
def test_averaged_model_matches_pytorch(kind):
    import torch

    rng = np.random.default_rng(0)
    batches = rng.normal(size=(5, 8, 3))
    shapes = [(4, 3), (4,), (4,), (4,), (1, 4), (1,)]
    weights = [rng.normal(size=s) for s in shapes]
    ours, our_lrs, averaged = _train_and_average(ember, kind, batches, weights)
    theirs, their_lrs, _ = _train_and_average(torch, kind, batches, weights)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert our_lrs == their_lrs
    assert int(averaged.n_averaged) == 5 and averaged.n_averaged.dtype == ember.int64


def test_first_update_copies_and_later_ones_average():
    model = ember.nn.Linear(2, 1, bias=False)
    averaged = swa_utils.AveragedModel(model)
    seen = []
    for value in (1.0, 2.0, 6.0):
        with ember.no_grad():
            model.weight.fill_(value)
        averaged.update_parameters(model)
        seen.append(averaged.module.weight.tolist())
    assert seen == [[[1.0, 1.0]], [[1.5, 1.5]], [[3.0, 3.0]]]
    assert averaged.module.weight is not model.weight
    out = averaged(ember.ones(1, 2))
    assert out.tolist() == [[6.0]]


def test_averaging_function_errors():
    with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided"):
        swa_utils.get_ema_avg_fn(1.5)
    with pytest.raises(ValueError, match=r"Invalid decay value -0.1 provided"):
        swa_utils.get_ema_multi_avg_fn(-0.1)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa_utils.AveragedModel(ember.nn.Linear(1, 1), avg_fn=swa_utils.get_swa_avg_fn(),
                                multi_avg_fn=swa_utils.get_swa_multi_avg_fn())


@requires_torch
@pytest.mark.parametrize("options", [dict(anneal_epochs=3), dict(anneal_epochs=0),
                                     dict(anneal_epochs=4, anneal_strategy="linear"),
                                     dict(anneal_epochs=1, swa_lr=[0.2, 0.02])])
def test_swalr_matches_pytorch(options):
    import torch

    sequences = []
    for lib in (ember, torch):
        a = lib.tensor([1.0], requires_grad=True)
        b = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=1.0)
        scheduler = lib.optim.swa_utils.SWALR(opt, **{"swa_lr": 0.1, **options})
        values = [scheduler.get_last_lr()]
        for _ in range(6):
            opt.step()
            scheduler.step()
            values.append(scheduler.get_last_lr())
        sequences.append(values)
    assert sequences[0] == sequences[1]


def test_swalr_state_dict_and_errors():
    w = ember.tensor([1.0], requires_grad=True)
    opt = optim.SGD([w], lr=1.0)
    scheduler = swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=4, anneal_strategy="linear")
    opt.step()
    scheduler.step()
    state = scheduler.state_dict()
    assert "anneal_func" not in state and "optimizer" not in state
    other = swa_utils.SWALR(optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=1.0),
                            swa_lr=0.1)
    other.load_state_dict(state)
    assert other.anneal_func(0.5) == 0.5 and other.anneal_epochs == 4
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scheduler.get_lr()
    assert "get_last_lr()" in str(caught[0].message)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must have the same length"):
        swa_utils.SWALR(opt, swa_lr=[0.1, 0.2])


def test_update_bn_recomputes_statistics_and_restores_modes():
    model = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.BatchNorm1d(3, momentum=0.3))
    model.eval()
    batches = [ember.randn(4, 2) for _ in range(3)]
    swa_utils.update_bn([(x, 0) for x in batches], model)
    bn = model[1]
    assert bn.momentum == 0.3 and not model.training
    with ember.no_grad():
        features = ember.cat([model[0](x) for x in batches])
    # the cumulative average of the per-batch means
    np.testing.assert_allclose(bn.running_mean.numpy(), features.mean(0).numpy(), rtol=1e-5,
                               atol=1e-6)
    assert int(bn.num_batches_tracked) == 3
    plain = ember.nn.Linear(2, 2)
    swa_utils.update_bn(batches, plain)  # no batch norm: nothing to do


def _swap_setup(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    v = lib.tensor([3.0], requires_grad=True)
    opt = lib.optim.Adam([{"params": [w]}, {"params": [v], "lr": 0.5}], lr=0.1)
    w.grad = lib.tensor([1.0, -1.0])
    v.grad = lib.tensor([2.0])
    opt.step()
    return w, v, opt


@requires_torch
def test_swap_in_runs_the_step_on_the_given_tensors_as_pytorch():
    import torch

    results = []
    for lib in (ember, torch):
        w, v, opt = _swap_setup(lib)
        saved = opt.state_dict()
        params = {"w": lib.tensor([5.0, 6.0]), "v": lib.tensor([7.0])}
        params["w"].grad = lib.tensor([0.5, 0.5])
        params["v"].grad = lib.tensor([-1.0])
        swap_state = {"state": {k: {n: t.clone() for n, t in s.items()}
                                for k, s in saved["state"].items()},
                      "param_groups": [dict(g, lr=1.0) for g in saved["param_groups"]]}
        before = [opt.param_groups[0]["params"], opt.state]
        with lib.optim.swap_in_optimizer_params_and_state(opt, params, swap_state):
            assert opt.param_groups[1]["lr"] == 1.0
            opt.step()
        assert opt.param_groups[0]["params"] is before[0] and opt.state is before[1]
        assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
        results.append([params["w"].numpy(), params["v"].numpy(), w.detach().numpy(),
                        swap_state["state"][0]["exp_avg"].numpy(),
                        swap_state["state"][1]["step"].numpy()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@requires_torch
@pytest.mark.parametrize("change", ["not_dict", "state_type", "groups_type", "group_count",
                                    "group_keys", "param_count", "extra_state", "too_few"])
def test_swap_in_errors_as_pytorch(change):
    import torch

    messages = []
    for lib in (ember, torch):
        w, v, opt = _swap_setup(lib)
        saved = opt.state_dict()
        params = {"w": w.detach().clone(), "v": v.detach().clone()}
        groups = [dict(g) for g in saved["param_groups"]]
        swap = {"state": dict(saved["state"]), "param_groups": groups}
        if change == "not_dict":
            swap = [1]
        elif change == "state_type":
            swap["state"] = [1]
        elif change == "groups_type":
            swap["param_groups"] = tuple(groups)
        elif change == "group_count":
            swap["param_groups"] = groups[:1]
        elif change == "group_keys":
            groups[0]["momentum"] = 0.9
        elif change == "param_count":
            groups[1]["params"] = [1, 2]
        elif change == "extra_state":
            swap["state"][7] = {}
        elif change == "too_few":
            params = {"w": params["w"]}
        with pytest.raises(RuntimeError) as error:
            with lib.optim.swap_in_optimizer_params_and_state(opt, params, swap):
                pass
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_swap_in_needs_initialized_state():
    w = ember.tensor([1.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
        with optim.swap_in_optimizer_params_and_state(opt, {"w": w}, opt.state_dict()):
            pass


def test_averaged_model_on_each_device(device):
    model = ember.nn.Linear(3, 2).double().to(device)
    averaged = swa_utils.AveragedModel(model)
    expected = [p.detach().cpu().numpy().copy() for p in model.parameters()]
    for step in range(1, 4):
        with ember.no_grad():
            for p in model.parameters():
                p.mul_(1.5)
        averaged.update_parameters(model)
        if step == 1:
            expected = [p.detach().cpu().numpy().copy() for p in model.parameters()]
        else:
            expected = [e + (p.detach().cpu().numpy() - e) / step
                        for e, p in zip(expected, model.parameters())]
    # on a GPU the running mean is PyTorch's lerp with a float32 weight 1/(n+1)
    rtol = 1e-14 if device == "cpu" else 1e-7
    for p, e in zip(averaged.module.parameters(), expected):
        assert p.device.type == device
        np.testing.assert_allclose(p.detach().cpu().numpy(), e, rtol=rtol)
    on_cpu = swa_utils.AveragedModel(model, device="cpu")
    assert next(on_cpu.parameters()).device.type == "cpu"
    assert on_cpu.n_averaged.device.type == "cpu"
