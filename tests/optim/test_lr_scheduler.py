"""Learning-rate schedulers: the sequences of every scheduler equal PyTorch's over 30
steps; state dicts round-trip through ember.save/ember.load; errors."""
from __future__ import annotations

import io
import math
import warnings

import pytest

import ember
from ember import optim
from tests.conftest import requires_torch

STEPS = 30


def _schedulers(lib):
    """name -> (optimizer maker, scheduler maker). Two groups with different lrs."""
    sched = lib.optim.lr_scheduler

    def sgd(params):
        return lib.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.5}],
                             lr=0.1, momentum=0.9)

    def adam(params):
        return lib.optim.Adam([{"params": params[:1]}, {"params": params[1:], "lr": 0.5}],
                              lr=0.1)

    def factor(epoch):
        return 0.95 ** epoch

    return {
        "StepLR": (sgd, lambda o: sched.StepLR(o, step_size=4, gamma=0.5)),
        "MultiStepLR": (sgd, lambda o: sched.MultiStepLR(o, milestones=[3, 7, 7, 20],
                                                         gamma=0.3)),
        "ExponentialLR": (sgd, lambda o: sched.ExponentialLR(o, gamma=0.9)),
        "CosineAnnealingLR": (sgd, lambda o: sched.CosineAnnealingLR(o, T_max=7,
                                                                      eta_min=0.01)),
        "CosineAnnealingWarmRestarts": (sgd, lambda o: sched.CosineAnnealingWarmRestarts(
            o, T_0=3, T_mult=2, eta_min=0.001)),
        "CosineAnnealingWarmRestarts1": (sgd, lambda o: sched.CosineAnnealingWarmRestarts(
            o, T_0=5)),
        "LambdaLR": (sgd, lambda o: sched.LambdaLR(o, lr_lambda=[factor,
                                                                 lambda e: 1 / (e + 1)])),
        "MultiplicativeLR": (sgd, lambda o: sched.MultiplicativeLR(o, lr_lambda=lambda e: 0.9)),
        "LinearLR": (sgd, lambda o: sched.LinearLR(o, start_factor=0.25, end_factor=0.9,
                                                   total_iters=10)),
        "ConstantLR": (sgd, lambda o: sched.ConstantLR(o, factor=0.5, total_iters=6)),
        "PolynomialLR": (sgd, lambda o: sched.PolynomialLR(o, total_iters=12, power=2.0)),
        "OneCycleLR": (sgd, lambda o: sched.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=31)),
        "OneCycleLR-linear-3": (adam, lambda o: sched.OneCycleLR(
            o, max_lr=1.0, epochs=4, steps_per_epoch=8, anneal_strategy="linear",
            three_phase=True, pct_start=0.25)),
        "CyclicLR": (sgd, lambda o: sched.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2],
                                                   step_size_up=4, step_size_down=6)),
        "CyclicLR-triangular2": (adam, lambda o: sched.CyclicLR(
            o, base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2")),
        "CyclicLR-exp_range": (sgd, lambda o: sched.CyclicLR(
            o, base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.9)),
        "SequentialLR": (sgd, lambda o: sched.SequentialLR(
            o, [sched.LinearLR(o, start_factor=0.1, total_iters=5),
                sched.CosineAnnealingLR(o, T_max=10),
                sched.ExponentialLR(o, gamma=0.8)], milestones=[5, 15])),
        "ChainedScheduler": (sgd, lambda o: sched.ChainedScheduler(
            [sched.ConstantLR(o, factor=0.5, total_iters=4),
             sched.ExponentialLR(o, gamma=0.9), sched.StepLR(o, 5, 0.5)])),
    }


NAMES = list(_schedulers(ember))


def _sequence(lib, name, steps=STEPS):
    make_optimizer, make_scheduler = _schedulers(lib)[name]
    params = [lib.tensor([1.0], requires_grad=True), lib.tensor([2.0], requires_grad=True)]
    opt = make_optimizer(params)
    scheduler = make_scheduler(opt)
    lrs = [list(scheduler.get_last_lr())]
    momenta = [[g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        lrs.append(list(scheduler.get_last_lr()))
        momenta.append([g.get("momentum", g.get("betas", (None,))[0])
                        for g in opt.param_groups])
        assert lrs[-1] == [g["lr"] for g in opt.param_groups]
    return lrs, momenta


@requires_torch
@pytest.mark.parametrize("name", NAMES)
def test_sequence_matches_pytorch(name):
    import torch

    ours = _sequence(ember, name)
    theirs = _sequence(torch, name)
    assert ours == theirs  # exact: the same float operations in the same order


@requires_torch
def test_reduce_lr_on_plateau_matches_pytorch():
    import torch

    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.5, 0.5, 0.5, 0.5, 0.5, 0.49999, 0.4, 0.6,
               0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6]
    results = []
    for lib, mode in ((ember, "min"), (torch, "min"), (ember, "max"), (torch, "max")):
        p = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([{"params": [p]}, {"params": [lib.tensor([1.0])], "lr": 0.01}],
                            lr=1.0)
        kwargs = dict(mode=mode, factor=0.5, patience=2, cooldown=1, min_lr=[0.1, 0.001],
                      threshold=0.05, threshold_mode="abs" if mode == "max" else "rel")
        scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        seq = []
        for m in metrics:
            opt.step()
            scheduler.step(lib.tensor(m) if lib is ember else m)
            seq.append(scheduler.get_last_lr())
        results.append(seq)
    assert results[0] == results[1]
    assert results[2] == results[3]


@requires_torch
@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR",
                                  "CosineAnnealingLR", "LinearLR", "ConstantLR",
                                  "PolynomialLR"])
def test_closed_form_with_epoch_matches_pytorch(name):
    import torch

    sequences = []
    for lib in (ember, torch):
        make_optimizer, make_scheduler = _schedulers(lib)[name]
        opt = make_optimizer([lib.tensor([1.0], requires_grad=True),
                              lib.tensor([1.0], requires_grad=True)])
        scheduler = make_scheduler(opt)
        seq = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (3, 9, 4, 15, 0, 22):
                opt.step()
                scheduler.step(epoch)
                seq.append(scheduler.get_last_lr())
        sequences.append(seq)
    assert sequences[0] == sequences[1]


@pytest.mark.parametrize("name", ["MultiStepLR", "CosineAnnealingWarmRestarts",
                                  "OneCycleLR", "CyclicLR", "SequentialLR",
                                  "ChainedScheduler", "LambdaLR"])
def test_state_dict_round_trip_resumes(name):
    straight, _ = _sequence(ember, name, steps=20)

    make_optimizer, make_scheduler = _schedulers(ember)[name]
    params = [ember.tensor([1.0], requires_grad=True), ember.tensor([2.0], requires_grad=True)]
    opt = make_optimizer(params)
    scheduler = make_scheduler(opt)
    for _ in range(8):
        opt.step()
        scheduler.step()
    buffer = io.BytesIO()
    ember.save({"optimizer": opt.state_dict(), "scheduler": scheduler.state_dict()}, buffer)
    buffer.seek(0)
    checkpoint = ember.load(buffer)

    params2 = [ember.tensor([1.0], requires_grad=True), ember.tensor([2.0], requires_grad=True)]
    opt2 = make_optimizer(params2)
    scheduler2 = make_scheduler(opt2)
    opt2.load_state_dict(checkpoint["optimizer"])
    scheduler2.load_state_dict(checkpoint["scheduler"])
    resumed = [scheduler2.get_last_lr()]
    for _ in range(12):
        opt2.step()
        scheduler2.step()
        resumed.append(scheduler2.get_last_lr())
    assert resumed == straight[8:]


def test_warns_when_scheduler_steps_before_optimizer():
    opt = optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=1.0)
    scheduler = optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        scheduler.step()
    opt2 = optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=1.0)
    scheduler2 = optim.lr_scheduler.StepLR(opt2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt2.step()
        scheduler2.step()


def test_errors():
    opt = optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=1.0)
    sched = optim.lr_scheduler
    with pytest.raises(TypeError, match="is not an Optimizer"):
        sched.StepLR(object(), 2)
    with pytest.raises(KeyError, match="initial_lr"):
        sched.StepLR(opt, 2, last_epoch=3)
    with pytest.raises(ValueError, match="between 0 and 1"):
        sched.ConstantLR(opt, factor=2.0)
    with pytest.raises(ValueError, match="positive integer T_0"):
        sched.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        sched.ReduceLROnPlateau(opt, factor=1.5)
    with pytest.raises(ValueError, match="either total_steps OR"):
        sched.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="momentum or beta1"):
        sched.OneCycleLR(optim.Adagrad([ember.tensor([1.0], requires_grad=True)]), 1.0,
                         total_steps=5)
    one = sched.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    opt.step()
    one.step()
    one.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        one.step()
    with pytest.raises(ValueError, match="number of milestone points"):
        sched.SequentialLR(opt, [sched.StepLR(opt, 2)], milestones=[3])
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        sched.LambdaLR(opt, [math.sqrt, math.sqrt])


def _custom_schedulers(lib):
    """A warm-up written against the old ``_LRScheduler`` name (closed form from
    ``base_lrs``) and a halving one against ``LRScheduler`` (chainable, from the groups)."""
    sched = lib.optim.lr_scheduler

    class Warmup(sched._LRScheduler):
        def __init__(self, optimizer, warmup_steps, last_epoch=-1):
            self.warmup_steps = warmup_steps
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            factor = min(1.0, (self.last_epoch + 1) / self.warmup_steps)
            return [base * factor for base in self.base_lrs]

    class Halving(sched.LRScheduler):
        def get_lr(self):
            if self.last_epoch == 0 or self.last_epoch % 3:
                return [group["lr"] for group in self.optimizer.param_groups]
            return [group["lr"] * 0.5 for group in self.optimizer.param_groups]

    return Warmup, Halving


def _custom_run(lib, which, steps=10):
    warmup, halving = _custom_schedulers(lib)
    params = [lib.tensor([1.0], requires_grad=True), lib.tensor([2.0], requires_grad=True)]
    opt = lib.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.3}], lr=0.1)
    scheduler = warmup(opt, 4) if which == "_LRScheduler" else halving(opt)
    seen = [(list(scheduler.get_last_lr()), [g["lr"] for g in opt.param_groups])]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither base class warns (optimizer stepped first)
        for _ in range(steps):
            opt.step()
            scheduler.step()
            seen.append((list(scheduler.get_last_lr()), [g["lr"] for g in opt.param_groups]))
    names = [cls.__name__ for cls in type(scheduler).__mro__[1:3]]
    return seen, scheduler.state_dict(), scheduler.last_epoch, scheduler.base_lrs, names


@requires_torch
@pytest.mark.parametrize("which", ["_LRScheduler", "LRScheduler"])
def test_custom_scheduler_subclass_matches_pytorch(which):
    import torch

    ours = _custom_run(ember, which)
    theirs = _custom_run(torch, which)
    assert ours == theirs  # the lrs, get_last_lr(), state_dict(), last_epoch, base_lrs
    assert len(ours[0]) == 11


def test_old_scheduler_name_is_a_subclass():
    sched = optim.lr_scheduler
    assert issubclass(sched._LRScheduler, sched.LRScheduler)
    assert sched._LRScheduler.__name__ == "_LRScheduler"
    seen, state, last_epoch, _, names = _custom_run(ember, "_LRScheduler")
    assert names == ["_LRScheduler", "LRScheduler"] and last_epoch == 10
    assert [lrs for lrs, _ in seen[:5]] == [[0.025, 0.075], [0.05, 0.15],
                                            [0.07500000000000001, 0.22499999999999998],
                                            [0.1, 0.3], [0.1, 0.3]]
    assert state["warmup_steps"] == 4 and "optimizer" not in state


def test_custom_scheduler_state_dict_resumes():
    straight, state, *_ = _custom_run(ember, "LRScheduler", steps=10)
    _, halving = _custom_schedulers(ember)
    _, mid_state, *_ = _custom_run(ember, "LRScheduler", steps=4)
    params = [ember.tensor([1.0], requires_grad=True), ember.tensor([2.0], requires_grad=True)]
    opt = ember.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.3}], lr=0.1)
    resumed = halving(opt)
    resumed.load_state_dict(mid_state)
    for group, lr in zip(opt.param_groups, mid_state["_last_lr"]):
        group["lr"] = lr  # the optimizer's own state dict would carry these
    for _ in range(6):
        opt.step()
        resumed.step()
    assert resumed.get_last_lr() == straight[-1][0]
    assert resumed.state_dict() == state


@requires_torch
def test_sequential_recursive_undo_matches_pytorch():
    import torch

    results = []
    for lib in (ember, torch):
        sched = lib.optim.lr_scheduler
        opt = lib.optim.SGD([lib.tensor([1.0], requires_grad=True)], lr=1.0)
        inner = [sched.StepLR(opt, 2), sched.ExponentialLR(opt, 0.9)]
        seq = sched.SequentialLR(opt, inner, milestones=[3])
        before = [s.last_epoch for s in inner]
        seq.recursive_undo()
        after = [s.last_epoch for s in inner]
        seq.recursive_undo(inner[1])
        results.append((before, after, [s.last_epoch for s in inner], seq.last_epoch))
    assert results[0] == results[1]
