"""Optimizer hooks: step hooks (per optimizer and global), state_dict and load_state_dict
hooks, ``prepend``, return values that replace, handles; each traced against PyTorch."""
from __future__ import annotations

import copy
import sys

import pytest

import ember
from tests.conftest import requires_torch

LIBS = ["ember", pytest.param("torch", marks=requires_torch)]


def _lib(name):
    if name == "torch":
        import torch
        import torch.optim.optimizer  # torch.optim deletes its name for the submodule

        return torch
    return ember


def _global_hooks(lib):
    return sys.modules[f"{lib.__name__}.optim.optimizer"]


def _optimizer(lib, momentum=0.9):
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
    b = lib.nn.Parameter(lib.tensor([0.5]))
    opt = lib.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1,
                        momentum=momentum)
    return w, b, opt


def _train(lib, w, b, opt, steps=2):
    for _ in range(steps):
        opt.zero_grad()
        ((w * w).sum() + (b * 3).sum()).backward()
        opt.step()


def _plain(value):
    """A state dict as nested lists/dicts of numbers (tensors as lists), to compare."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def _both(trace):
    import torch  # noqa: F401

    return trace(ember), trace(_lib("torch"))


# --------------------------------------------------------------------- step hooks
def _step_hook_trace(lib):
    module = _global_hooks(lib)
    w, b, opt = _optimizer(lib)
    calls = []

    def hook(name, replace=None):
        def run(optimizer, args, kwargs):
            calls.append((name, optimizer is opt, args[0] is optimizer, len(args),
                          sorted(kwargs)))
            return replace
        return run

    handles = [module.register_optimizer_step_pre_hook(hook("global-pre")),
               opt.register_step_pre_hook(hook("pre-1")),
               opt.register_step_pre_hook(hook("pre-2", replace=((opt,), {"closure": None}))),
               opt.register_step_post_hook(hook("post-1")),
               module.register_optimizer_step_post_hook(hook("global-post")),
               opt.register_step_post_hook(hook("post-2"))]
    try:
        _train(lib, w, b, opt, steps=1)
        opt.step(lambda: 1 / 0)  # the pre-hook replaces the closure, so it never runs
        handles[1].remove()
        handles[1].remove()  # a second remove does nothing
        handles[0].remove()
        opt.step()
        other = lib.optim.Adam([lib.nn.Parameter(lib.ones(1))])
        with module.register_optimizer_step_post_hook(hook("ctx")):
            other.step()
        other.step()  # the context manager removed it
    finally:
        for handle in handles:
            handle.remove()
    opt.step()
    return calls, w.tolist(), b.tolist()


@requires_torch
def test_step_hooks_order_and_replacement_match_torch():
    ours, theirs = _both(_step_hook_trace)
    assert ours == theirs
    names = [c[0] for c in ours[0]]
    assert names[:6] == ["global-pre", "pre-1", "pre-2", "post-1", "post-2", "global-post"]


def test_step_hooks_order_without_torch():
    calls, _, _ = _step_hook_trace(ember)
    assert [c[0] for c in calls][:6] == ["global-pre", "pre-1", "pre-2", "post-1", "post-2",
                                         "global-post"]
    assert not _global_hooks(ember)._global_step_pre_hooks
    assert not _global_hooks(ember)._global_step_post_hooks


@pytest.mark.parametrize("lib_name", LIBS)
def test_step_pre_hook_bad_return_raises(lib_name):
    lib = _lib(lib_name)
    _, _, opt = _optimizer(lib)
    opt.register_step_pre_hook(lambda o, args, kwargs: "nope")
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()


@pytest.mark.parametrize("lib_name", LIBS)
def test_global_hooks_reach_custom_optimizers(lib_name):
    lib = _lib(lib_name)

    class Halve(lib.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {})

        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.data.mul_(0.5)

    seen = []
    module = _global_hooks(lib)
    w = lib.nn.Parameter(lib.ones(2))
    opt = Halve([w])
    handle = module.register_optimizer_step_pre_hook(
        lambda o, args, kwargs: seen.append(type(o).__name__))
    try:
        opt.step()
        lbfgs = lib.optim.LBFGS([w], max_iter=1)

        def closure():
            lbfgs.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        lbfgs.step(closure)
    finally:
        handle.remove()
    opt.step()
    assert seen == ["Halve", "LBFGS"]


# --------------------------------------------------------------------- state_dict hooks
def _state_dict_trace(lib):
    w, b, opt = _optimizer(lib)
    _train(lib, w, b, opt)
    calls = []

    def pre(name):
        def run(optimizer):
            calls.append((name, optimizer is opt))
            return "ignored"  # a pre-hook's return value does not matter
        return run

    def post_in_place(optimizer, state_dict):
        calls.append(("post-in-place", sorted(state_dict)))
        state_dict["note"] = "in place"

    def post_replace(optimizer, state_dict):
        calls.append(("post-replace", sorted(state_dict)))
        return {"state": state_dict["state"], "param_groups": state_dict["param_groups"],
                "replaced": True}

    def post_last(optimizer, state_dict):
        calls.append(("post-last", sorted(state_dict)))

    h1 = opt.register_state_dict_pre_hook(pre("pre-a"))
    opt.register_state_dict_pre_hook(pre("pre-b"))
    opt.register_state_dict_pre_hook(pre("pre-first"), prepend=True)
    opt.register_state_dict_post_hook(post_replace)
    opt.register_state_dict_post_hook(post_in_place, prepend=True)
    h_last = opt.register_state_dict_post_hook(post_last)
    first = opt.state_dict()
    h1.remove()
    h_last.remove()
    second = opt.state_dict()
    return calls, _plain(first), _plain(second)


@requires_torch
def test_state_dict_hooks_match_torch():
    ours, theirs = _both(_state_dict_trace)
    assert ours == theirs
    calls, first, _ = ours
    assert [c[0] for c in calls[:6]] == ["pre-first", "pre-a", "pre-b", "post-in-place",
                                         "post-replace", "post-last"]
    assert first["replaced"] is True and "note" not in first


def test_state_dict_hooks_without_torch():
    calls, first, second = _state_dict_trace(ember)
    assert [c[0] for c in calls] == ["pre-first", "pre-a", "pre-b", "post-in-place",
                                     "post-replace", "post-last", "pre-first", "pre-b",
                                     "post-in-place", "post-replace"]
    assert first["replaced"] is True and second["replaced"] is True


# --------------------------------------------------------------------- load_state_dict hooks
def _load_trace(lib):
    w, b, opt = _optimizer(lib)
    _train(lib, w, b, opt)
    saved = opt.state_dict()
    w2, b2, fresh = _optimizer(lib)
    calls = []

    def pre_in_place(optimizer, state_dict):
        calls.append(("pre-in-place", state_dict is saved, sorted(state_dict)))
        state_dict["extra"] = 1  # on the shallow copy: the caller's dict keeps its keys

    def pre_replace(optimizer, state_dict):
        calls.append(("pre-replace", sorted(state_dict)))
        groups = [{**g, "lr": g["lr"] * 10} for g in state_dict["param_groups"]]
        return {"state": state_dict["state"], "param_groups": groups}

    def pre_after(optimizer, state_dict):
        calls.append(("pre-after", sorted(state_dict),
                      [g["lr"] for g in state_dict["param_groups"]]))

    def post(name):
        def run(optimizer):
            calls.append((name, [g["lr"] for g in optimizer.param_groups],
                          _plain(optimizer.state[w2])))
            return "ignored"
        return run

    fresh.register_load_state_dict_pre_hook(pre_replace)
    fresh.register_load_state_dict_pre_hook(pre_in_place, prepend=True)
    h_after = fresh.register_load_state_dict_pre_hook(pre_after)
    fresh.register_load_state_dict_post_hook(post("post-a"))
    h_first = fresh.register_load_state_dict_post_hook(post("post-first"), prepend=True)
    fresh.load_state_dict(saved)
    caller_keys = sorted(saved)
    lrs = [g["lr"] for g in fresh.param_groups]
    h_after.remove()
    h_first.remove()
    fresh.load_state_dict(saved)
    _train(lib, w2, b2, fresh, steps=1)
    return calls, caller_keys, lrs, w2.tolist(), b2.tolist()


@requires_torch
def test_load_state_dict_hooks_match_torch():
    ours, theirs = _both(_load_trace)
    assert ours == theirs
    calls, caller_keys, lrs, _, _ = ours
    assert [c[0] for c in calls[:5]] == ["pre-in-place", "pre-replace", "pre-after",
                                         "post-first", "post-a"]
    assert calls[0][1] is False  # the hooks get a copy
    assert caller_keys == ["param_groups", "state"] and lrs == [1.0, 5.0]


def test_load_state_dict_hooks_without_torch():
    calls, caller_keys, lrs, _, _ = _load_trace(ember)
    assert [c[0] for c in calls] == ["pre-in-place", "pre-replace", "pre-after", "post-first",
                                     "post-a", "pre-in-place", "pre-replace", "post-a"]
    assert caller_keys == ["param_groups", "state"] and lrs == [1.0, 5.0]


@pytest.mark.parametrize("lib_name", LIBS)
def test_load_pre_hook_can_fix_a_dict_the_check_would_refuse(lib_name):
    lib = _lib(lib_name)
    _, _, opt = _optimizer(lib)
    saved = opt.state_dict()
    _, _, fresh = _optimizer(lib)
    fresh.register_load_state_dict_pre_hook(lambda o, sd: sd["checkpoint"])
    fresh.load_state_dict({"checkpoint": saved})
    assert [g["lr"] for g in fresh.param_groups] == [0.1, 0.5]


# --------------------------------------------------------------------- copies
@pytest.mark.parametrize("lib_name", LIBS)
def test_deepcopy_drops_hooks(lib_name):
    lib = _lib(lib_name)
    w, b, opt = _optimizer(lib)
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("step"))
    opt.register_state_dict_pre_hook(lambda o: calls.append("state_dict"))
    opt.register_load_state_dict_post_hook(lambda o: calls.append("load"))
    twin = copy.deepcopy(opt)
    twin.step()
    twin.load_state_dict(twin.state_dict())
    assert calls == []
    opt.step()
    opt.load_state_dict(opt.state_dict())
    assert calls == ["step", "state_dict", "load"]


@requires_torch
def test_hook_methods_have_torch_signatures():
    import inspect

    import torch

    for name in ("register_step_pre_hook", "register_step_post_hook",
                 "register_state_dict_pre_hook", "register_state_dict_post_hook",
                 "register_load_state_dict_pre_hook", "register_load_state_dict_post_hook"):
        ours = inspect.signature(getattr(ember.optim.Optimizer, name))
        theirs = inspect.signature(getattr(torch.optim.Optimizer, name))
        assert [(p.name, p.default) for p in ours.parameters.values()] == \
            [(p.name, p.default) for p in theirs.parameters.values()], name
    for name in ("register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"):
        ours = inspect.signature(getattr(_global_hooks(ember), name))
        theirs = inspect.signature(getattr(_global_hooks(_lib("torch")), name))
        assert list(ours.parameters) == list(theirs.parameters)
    assert set(_global_hooks(_lib("torch")).__all__) <= set(dir(_global_hooks(ember)))


@requires_torch
def test_adagrad_share_memory_matches_torch():
    results = []
    for lib in (ember, _lib("torch")):
        w = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        opt = lib.optim.Adagrad([w], lr=0.1, initial_accumulator_value=0.5)
        assert opt.share_memory() is None
        (w * w).sum().backward()
        opt.step()
        results.append((w.tolist(), opt.state[w]["sum"].tolist()))
    assert results[0] == results[1]
