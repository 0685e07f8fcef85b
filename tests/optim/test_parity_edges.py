"""Edges of the optimizers and schedulers where ember must behave as PyTorch does: state
dicts whose scalar state is a plain number (old checkpoints), the types of L-BFGS's
state, a Tensor learning rate, the keys and values of every scheduler's state_dict, and
list hyper-parameters. Each case runs the same code on ember and on torch and compares."""
from __future__ import annotations

import copy
import warnings

import pytest

import ember
from tests.conftest import requires_torch

try:
    import torch
except ImportError:  # the cases skip without PyTorch
    torch = None

pytestmark = requires_torch


def _libs():
    return (ember, torch)


def _describe(value):
    """A value's structure, comparable across the two libraries: tensors by type, dtype
    name, shape and device type; lists element by element; other values by type."""
    if isinstance(value, (ember.Tensor, getattr(torch, "Tensor", ()))):
        return ("Tensor", str(value.dtype).split(".")[-1], tuple(value.shape),
                value.device.type)
    if isinstance(value, list):
        return ("list", [_describe(v) for v in value])
    if isinstance(value, tuple):
        return ("tuple", [_describe(v) for v in value])
    return type(value).__name__


# ---------------------------------------------------------------- 1. plain-number state
# The scalar state entries an old (or hand-edited) checkpoint may hold as Python floats.
SCALAR_KEYS = ("step", "mu_product", "eta", "mu")
FLOAT_STATE_OPTIMIZERS = ["Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "RAdam", "Adamax",
                          "Adadelta", "ASGD", "Rprop"]


def _resume_from_float_state(T, name, steps_before=1, **options):
    w = T.tensor([1.0, 2.0, -0.5], dtype=T.float64, requires_grad=True)

    def make():
        return getattr(T.optim, name)([w], lr=0.01, **options)

    opt = make()
    for _ in range(steps_before):
        opt.zero_grad()
        (w ** 2).sum().backward()
        opt.step()
    saved = opt.state_dict()
    for key in SCALAR_KEYS:
        if key in saved["state"][0]:
            saved["state"][0][key] = float(saved["state"][0][key])
    resumed = make()
    resumed.load_state_dict(saved)
    loaded = {k: _describe(v) for k, v in resumed.state[w].items() if k in SCALAR_KEYS}
    resumed.zero_grad()
    (w ** 2).sum().backward()
    resumed.step()
    after = {k: (_describe(v), float(v)) for k, v in resumed.state[w].items()
             if k in SCALAR_KEYS}
    return loaded, after, w.tolist()


@pytest.mark.parametrize("name", FLOAT_STATE_OPTIMIZERS)
def test_float_scalar_state_is_made_a_tensor_on_load(name):
    ours, theirs = (_resume_from_float_state(T, name, steps_before=2) for T in _libs())
    assert ours[0] == theirs[0]  # the loaded entries: 0-d float32 CPU tensors
    assert ours[1] == theirs[1]  # and after the next step: their values
    # the parameters (float64; the algorithms' own arithmetic may differ in the last bit)
    assert ours[2] == pytest.approx(theirs[2], rel=1e-13)


def test_float_scalar_state_adafactor():
    ours, theirs = (_resume_from_float_state(T, "Adafactor") for T in _libs())
    assert ours[:2] == theirs[:2]
    assert ours[2] == pytest.approx(theirs[2], rel=1e-13)


def test_sgd_state_without_step_loads():
    ours, theirs = (_resume_from_float_state(T, "SGD", momentum=0.9) for T in _libs())
    assert ours == theirs


@pytest.mark.parametrize("name", ["Adam", "NAdam", "ASGD", "Rprop"])
def test_scalar_state_follows_a_float64_default_dtype(name):
    results = []
    for T in _libs():
        previous = T.get_default_dtype()
        T.set_default_dtype(T.float64)
        try:
            w = T.tensor([1.0, 2.0], requires_grad=True)
            opt = getattr(T.optim, name)([w], lr=0.01)
            (w ** 2).sum().backward()
            opt.step()
            fresh = {k: _describe(v) for k, v in opt.state[w].items() if k in SCALAR_KEYS}
            saved = opt.state_dict()
            for key in SCALAR_KEYS:
                if key in saved["state"][0]:
                    saved["state"][0][key] = float(saved["state"][0][key])
            resumed = getattr(T.optim, name)([w], lr=0.01)
            resumed.load_state_dict(saved)
            loaded = {k: _describe(v) for k, v in resumed.state[w].items()
                      if k in SCALAR_KEYS}
        finally:
            T.set_default_dtype(previous)
        results.append((fresh, loaded))
    assert results[0] == results[1]


# ---------------------------------------------------------------- 2. L-BFGS state types
@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("max_iter", [1, 4])
def test_lbfgs_state_types(line_search, dtype, max_iter):
    described = []
    for T in _libs():
        w = T.tensor([3.5, -2.5, 2.0], dtype=getattr(T, dtype), requires_grad=True)
        opt = T.optim.LBFGS([w], line_search_fn=line_search, max_iter=max_iter,
                            history_size=3)

        def closure():
            opt.zero_grad()
            loss = ((w - 1) ** 4).sum() + (w[0] * w[1]) ** 2
            loss.backward()
            return loss

        steps = []
        for _ in range(3):
            opt.step(closure)
            steps.append({k: _describe(v) for k, v in opt.state[w].items()})
        described.append(steps)
    assert described[0] == described[1]


# ---------------------------------------------------------------- 3. a Tensor lr
TENSOR_LR_OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "RAdam",
                        "Adamax", "Adadelta", "ASGD", "Rprop", "Adafactor"]


def _normalized_repr(optimizer):
    return repr(optimizer).replace("ember", "T").replace("torch", "T")


@pytest.mark.parametrize("name", TENSOR_LR_OPTIMIZERS)
def test_tensor_lr_stays_in_the_param_groups(name):
    results = []
    for T in _libs():
        w = T.tensor([1.0, 2.0, -3.0], requires_grad=True)
        lr = T.tensor(0.01)
        opt = getattr(T.optim, name)([w], lr=lr)
        for _ in range(3):
            opt.zero_grad()
            ((w ** 3).sum() + (w ** 2).sum()).backward()
            opt.step()
        group = opt.state_dict()["param_groups"][0]
        results.append((opt.param_groups[0]["lr"] is lr, _describe(group["lr"]),
                        float(group["lr"]), _normalized_repr(opt), w.tolist()))
    ours, theirs = results
    assert ours[:4] == theirs[:4]
    # float32 parameters: PyTorch's float32 arithmetic with the tensor rate rounds the
    # same as ember's (SGD may differ in the last bit, as with a float rate)
    assert ours[4] == pytest.approx(theirs[4], rel=1e-6)


def test_tensor_lr_must_have_one_element():
    for T in _libs():
        w = T.tensor([1.0], requires_grad=True)
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            T.optim.Adam([w], lr=T.tensor([0.1, 0.2]))
        with pytest.raises(ValueError, match="capturable=False and foreach=True"):
            T.optim.Adam([w], lr=T.tensor(0.1), foreach=True)


def _tensor_lr_schedule(T, name):
    sched = T.optim.lr_scheduler
    w = T.tensor([1.0, 2.0], requires_grad=True)
    lr = T.tensor(0.1)
    opt = T.optim.SGD([w], lr=lr, momentum=0.9)
    make = {
        "StepLR": lambda: sched.StepLR(opt, 2, 0.5),
        "ExponentialLR": lambda: sched.ExponentialLR(opt, 0.9),
        "CosineAnnealingLR": lambda: sched.CosineAnnealingLR(opt, 10),
        "CosineAnnealingWarmRestarts": lambda: sched.CosineAnnealingWarmRestarts(opt, 3),
        "LinearLR": lambda: sched.LinearLR(opt, 0.3, total_iters=4),
        "OneCycleLR": lambda: sched.OneCycleLR(opt, 0.5, total_steps=20),
        "CyclicLR": lambda: sched.CyclicLR(opt, 0.01, 0.1, 3),
        "ReduceLROnPlateau": lambda: sched.ReduceLROnPlateau(opt, patience=1),
        "PolynomialLR": lambda: sched.PolynomialLR(opt, 8, 2.0),
        "SequentialLR": lambda: sched.SequentialLR(
            opt, [sched.ConstantLR(opt, 0.5, 2), sched.ExponentialLR(opt, 0.9)], [3]),
    }[name]
    scheduler = make()
    seen = []
    for _ in range(8):
        opt.zero_grad()
        (w ** 2).sum().backward()
        opt.step()
        if name == "ReduceLROnPlateau":
            scheduler.step(1.0)
        else:
            scheduler.step()
        group_lr = opt.param_groups[0]["lr"]
        last = scheduler.get_last_lr()[0]
        seen.append((group_lr is lr, _describe(last), last is group_lr, float(last)))
    return seen


@pytest.mark.parametrize("name", ["StepLR", "ExponentialLR", "CosineAnnealingLR",
                                  "CosineAnnealingWarmRestarts", "LinearLR", "OneCycleLR",
                                  "CyclicLR", "ReduceLROnPlateau", "PolynomialLR",
                                  "SequentialLR"])
def test_schedulers_fill_a_tensor_lr_in_place(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = (_tensor_lr_schedule(T, name) for T in _libs())
    assert ours == theirs


# ---------------------------------------------------------------- 7. scheduler state dicts
def _scheduler_cases(T):
    sched = T.optim.lr_scheduler

    def opt(kind="SGD"):
        w = T.tensor([1.0], requires_grad=True)
        if kind == "Adam":
            return T.optim.Adam([w], lr=0.1)
        return T.optim.SGD([w], lr=0.1, momentum=0.9)

    def sequential():
        o = opt()
        return sched.SequentialLR(o, [sched.LinearLR(o, 0.5, total_iters=3),
                                      sched.ExponentialLR(o, 0.9)], milestones=[5])

    def chained():
        o = opt()
        return sched.ChainedScheduler([sched.StepLR(o, 4, 0.5), sched.ExponentialLR(o, 0.95)])

    return {
        "LambdaLR": lambda: sched.LambdaLR(opt(), lambda e: 0.9 ** e),
        "MultiplicativeLR": lambda: sched.MultiplicativeLR(opt(), lambda e: 0.99),
        "StepLR": lambda: sched.StepLR(opt(), 7, 0.5),
        "MultiStepLR": lambda: sched.MultiStepLR(opt(), [3, 10, 10, 30], 0.5),
        "ConstantLR": lambda: sched.ConstantLR(opt(), 0.5, 4),
        "LinearLR": lambda: sched.LinearLR(opt(), 0.25, 1.0, 10),
        "ExponentialLR": lambda: sched.ExponentialLR(opt(), 0.97),
        "PolynomialLR": lambda: sched.PolynomialLR(opt(), 40, 2.0),
        "CosineAnnealingLR": lambda: sched.CosineAnnealingLR(opt(), 20, 0.001),
        "CosineAnnealingWarmRestarts": lambda: sched.CosineAnnealingWarmRestarts(
            opt(), 7, 2, 0.001),
        "CyclicLR": lambda: sched.CyclicLR(opt(), 0.01, 0.1, 5),
        "CyclicLR-adam": lambda: sched.CyclicLR(opt("Adam"), 0.01, 0.1, 5, mode="exp_range",
                                                gamma=0.99),
        "OneCycleLR": lambda: sched.OneCycleLR(opt(), 0.5, total_steps=100),
        "OneCycleLR-3": lambda: sched.OneCycleLR(opt("Adam"), 0.5, total_steps=100,
                                                 three_phase=True, anneal_strategy="linear"),
        "SequentialLR": sequential,
        "ChainedScheduler": chained,
        "ReduceLROnPlateau": lambda: sched.ReduceLROnPlateau(opt(), patience=2),
        "SWALR": lambda: T.optim.swa_utils.SWALR(opt(), swa_lr=0.05, anneal_epochs=5),
    }


SCHEDULERS = list(_scheduler_cases(ember))


def _advance(scheduler, name, steps):
    lrs = []
    for _ in range(steps):
        scheduler.optimizer.step()
        if name == "ReduceLROnPlateau":
            scheduler.step(1.0)
        else:
            scheduler.step()
        lrs.append([float(v) for v in scheduler.get_last_lr()])
    return lrs


def _ordered(value):
    """A state dict with its key order made part of the value (dict equality ignores it);
    functions become a marker, Counters their sorted items."""
    if type(value).__name__ == "Counter":
        return ("Counter", sorted(dict(value).items()))
    if isinstance(value, dict):
        return ("dict", [(k, _ordered(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_ordered(v) for v in value])
    if callable(value):
        return "<callable>"
    return (type(value).__name__, value)


@pytest.mark.parametrize("steps", [0, 1, 60])
@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_state_dict_matches(name, steps):
    dicts = []
    for T in _libs():
        scheduler = _scheduler_cases(T)[name]()
        _advance(scheduler, name, steps)
        dicts.append(_ordered(scheduler.state_dict()))
    assert dicts[0] == dicts[1]


_GROUP_KEYS = ("lr", "initial_lr", "momentum", "betas", "max_lr", "min_lr", "max_momentum",
               "base_momentum", "swa_lr")


@pytest.mark.parametrize("source", ["ember", "torch"])
@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_load_state_dict_resumes(name, source):
    reference = _scheduler_cases(torch)[name]()
    _advance(reference, name, 7)
    groups = [{k: g[k] for k in _GROUP_KEYS if k in g}
              for g in reference.optimizer.param_groups]
    want = _advance(reference, name, 10)
    maker = _scheduler_cases(ember if source == "ember" else torch)[name]()
    _advance(maker, name, 7)
    saved = copy.deepcopy(maker.state_dict())
    resumed = _scheduler_cases(ember)[name]()
    for group, values in zip(resumed.optimizer.param_groups, groups):
        group.update(values)
    resumed.load_state_dict(saved)
    assert _advance(resumed, name, 10) == want


@pytest.mark.parametrize("name", [n for n in SCHEDULERS if n not in (
    "SequentialLR", "ChainedScheduler", "ReduceLROnPlateau")])
def test_get_lr_outside_step_warns(name):
    caught = []
    for T in _libs():
        scheduler = _scheduler_cases(T)[name]()
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always")
            scheduler.get_lr()
        caught.append([str(r.message) for r in records if "get_last_lr()" in str(r.message)])
    assert caught[0] == caught[1] != []


def test_cosine_warm_restarts_does_not_count_steps():
    for T in _libs():
        scheduler = _scheduler_cases(T)["CosineAnnealingWarmRestarts"]()
        _advance(scheduler, "CosineAnnealingWarmRestarts", 60)
        assert scheduler.state_dict()["_step_count"] == 0


# ---------------------------------------------------------------- 8. list hyper-parameters
LIST_CASES = [
    ("Adam", {"betas": [0.9, 0.99]}),
    ("AdamW", {"betas": [0.9, 0.99]}),
    ("NAdam", {"betas": [0.9, 0.99]}),
    ("RAdam", {"betas": [0.9, 0.99]}),
    ("Adamax", {"betas": [0.9, 0.99]}),
    ("Rprop", {"etas": [0.4, 1.3], "step_sizes": [1e-5, 10]}),
    ("Rprop", {}),
    ("NAdam", {}),
]


@pytest.mark.parametrize("name,options", LIST_CASES)
def test_list_hyperparameters_are_kept_as_given(name, options):
    results = []
    for T in _libs():
        w = T.tensor([1.0, -2.0], requires_grad=True)
        opt = getattr(T.optim, name)([w], **copy.deepcopy(options))
        for _ in range(3):
            opt.zero_grad()
            (w ** 2).sum().backward()
            opt.step()
        group = opt.state_dict()["param_groups"][0]
        results.append(({k: _describe(group[k]) for k in ("betas", "etas", "step_sizes")
                         if k in group}, _normalized_repr(opt), w.tolist()))
    assert results[0] == results[1]
