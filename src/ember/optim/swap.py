"""swap_in_optimizer_params_and_state: run an optimizer on other parameters and state."""
from __future__ import annotations

import contextlib
from collections import defaultdict

from ..tensor import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]

_WHO = "swap_in_optimizer_params_and_state"


def _check_state(state) -> dict:
    if not isinstance(state, dict):
        raise RuntimeError(f"{_WHO} requires swapin_optim_state['state'] to be a dict mapping "
                           "packed parameter ids to per-param state dicts, got "
                           f"{type(state).__name__}.")
    if any(isinstance(key, Tensor) for key in state):
        raise RuntimeError(f"{_WHO} requires optimizer.state_dict()-style state keyed by "
                           "packed parameter ids.")
    if any(isinstance(key, int) and not isinstance(value, dict)
           for key, value in state.items()):
        raise RuntimeError(f"{_WHO} requires per-parameter optimizer state entries to be "
                           "dictionaries.")
    return state


def _check_group(index: int, live: dict, swapin) -> list:
    if not isinstance(swapin, dict):
        raise RuntimeError(f"{_WHO} requires each optimizer param group to be a dictionary.")
    ids = swapin.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_WHO} requires optimizer.state_dict()-style "
                           "param_groups[*]['params'] entries keyed by packed parameter ids.")
    if len(live["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {index} has a different number of "
                           "params than the live optimizer param group.")
    swapin_only = [k for k in swapin if k not in live]
    live_only = [k for k in live if k not in swapin]
    if swapin_only or live_only:
        raise RuntimeError(f"{_WHO} requires optimizer.state_dict()-style param group keys to "
                           "exactly match the live optimizer group keys for group "
                           f"{index}. Keys only in swap-in: {swapin_only}. Keys only in live: "
                           f"{live_only}.")
    return ids


def _prepare(optimizer, swapin_parameters: dict, swapin_optim_state) -> tuple:
    """Validate the swap-in values; returns (state by id, [(live group, swap-in group,
    its tensors)])."""
    if not optimizer.state:
        raise RuntimeError(f"{_WHO} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_WHO} requires a DCP-style optimizer state_dict.")
    state = _check_state(swapin_optim_state.get("state"))
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(f"{_WHO} requires swapin_optim_state['param_groups'] to be a list "
                           f"of param-group dicts, got {type(groups).__name__}.")
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")
    tensors = list(swapin_parameters.values())
    offset = 0
    seen: set = set()
    plan = []
    for index, (live, swapin) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _check_group(index, live, swapin)
        seen.update(ids)
        end = offset + len(ids)
        if end > len(tensors):
            raise RuntimeError(f"{_WHO} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering.")
        plan.append((live, swapin, tensors[offset:end]))
        offset = end
    extra = [key for key in state if key not in seen]
    if extra:
        raise RuntimeError(f"{_WHO} requires swapin_optim_state['state'] to be keyed only by "
                           f"packed parameter ids from param_groups[*]['params']; got extra "
                           f"keys {extra!r}.")
    return state, plan


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters: dict,
                                       swapin_optim_state: dict):
    """Within the context, ``optimizer`` works on ``swapin_parameters`` (a dict of
    tensors in the order of the optimizer's parameters, as ``model.named_parameters()``)
    with the hyper-parameters and state of ``swapin_optim_state`` (an
    ``optimizer.state_dict()``-shaped dict); on exit its own parameters, groups and state
    come back. In-place updates of the swap-in tensors and state tensors stay in them;
    new entries added to the state during the context are dropped. Unlike
    ``load_state_dict``, this swaps the parameters too. The optimizer must have taken a
    step (its state is initialized).

    >>> w = ember.tensor([1.0], requires_grad=True)
    >>> opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> w.grad = ember.tensor([1.0]); opt.step()
    >>> other = ember.tensor([5.0])
    >>> groups = opt.state_dict()["param_groups"]  # the same layout, other values
    >>> group = dict(groups[0], lr=1.0)
    >>> saved = {"state": {0: {"momentum_buffer": ember.tensor([0.0])}},
    ...          "param_groups": [group]}
    >>> other.grad = ember.tensor([2.0])
    >>> with ember.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, saved):
    ...     opt.step()
    >>> other, w
    (tensor([3.]), tensor([0.9000], requires_grad=True))
    """
    state, plan = _prepare(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(group) for group in optimizer.param_groups]
    try:
        swapped: defaultdict = defaultdict(dict)
        for live, swapin, tensors in plan:
            live["params"] = tensors
            for key, value in swapin.items():
                if key != "params":
                    live[key] = value
            for tensor, index in zip(tensors, swapin["params"], strict=True):
                # a shallow copy: in-place tensor updates reach the caller's dict,
                # new or replaced entries do not
                swapped[tensor] = dict(state.get(index, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots, strict=True):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
