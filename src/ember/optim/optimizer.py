"""The Optimizer base class: parameter groups, per-parameter state, state dicts.

Every optimizer updates the parameters' arrays in place, directly with the array module of
the parameter (NumPy or CuPy, ``ember.backend.xp_of``): no ember Tensors and no graph are
made per parameter per step, which keeps a training step close to the cost of the array
math itself. Each in-place update bumps the parameter's version counter, so a graph that
saved the old value refuses to backward, as in PyTorch.
"""
from __future__ import annotations

import copy
import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any, Optional, TypeAlias, Union

import numpy as np

from .. import backend, dtypes, grad_mode, tracing
from ..autograd import graph_watch
from ..hooks import RemovableHandle
from ..tensor import Tensor, bump_version

# The helpers every algorithm uses: state tensors, PyTorch's argument checks and options.
__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook", "step_tensor", "zeros_like_state",
           "check_hyperparameter", "algorithm_flags", "as_float"]

# PyTorch's annotation aliases (custom optimizers annotate ``params: ParamsT``).
Args: TypeAlias = tuple[Any, ...]
Kwargs: TypeAlias = dict[str, Any]
StateDict: TypeAlias = dict[str, Any]
ParamsT: TypeAlias = Union[Iterable[Tensor], Iterable[dict[str, Any]],
                           Iterable[tuple[str, Tensor]]]
GlobalOptimizerPreHook: TypeAlias = Callable[["Optimizer", Args, Kwargs],
                                             Optional[tuple[Args, Kwargs]]]
GlobalOptimizerPostHook: TypeAlias = Callable[["Optimizer", Args, Kwargs], None]

# Step hooks that run for every optimizer: the pre-hooks before each instance's own, the
# post-hooks after them, as in PyTorch.
_global_step_pre_hooks: list = []
_global_step_post_hooks: list = []


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` before the ``step`` of every optimizer (before
    the optimizer's own pre-hooks); as for ``Optimizer.register_step_pre_hook``, ``args``
    starts with the optimizer, and the hook may return ``(new_args, new_kwargs)`` to
    replace step's arguments. Returns a handle with ``remove()``.

    >>> from ember.optim.optimizer import register_optimizer_step_pre_hook
    >>> seen = []
    >>> handle = register_optimizer_step_pre_hook(lambda opt, args, kwargs: seen.append(opt))
    >>> opt = ember.optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=0.1)
    >>> opt.step()
    >>> seen == [opt]
    True
    >>> handle.remove()
    """
    _global_step_pre_hooks.append(hook)
    return RemovableHandle(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` after the ``step`` of every optimizer (after
    the optimizer's own post-hooks). Returns a handle with ``remove()``.

    >>> from ember.optim.optimizer import register_optimizer_step_post_hook
    >>> steps = []
    >>> handle = register_optimizer_step_post_hook(lambda opt, args, kwargs: steps.append(1))
    >>> opt = ember.optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=0.1)
    >>> opt.step(); opt.step()
    >>> len(steps)
    2
    >>> handle.remove()
    """
    _global_step_post_hooks.append(hook)
    return RemovableHandle(_global_step_post_hooks, hook)


def _add_hook(hooks: list, hook, prepend: bool) -> RemovableHandle:
    if prepend:
        hooks.insert(0, hook)
    else:
        hooks.append(hook)
    return RemovableHandle(hooks, hook)


class _RequiredParameter:
    """The marker for a hyper-parameter without a default (it must be given)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

# State entries that keep their own dtype and stay on the CPU when a state dict is loaded.
# (PyTorch casts NAdam's float32 mu_product and ASGD's eta and mu to the parameter's dtype
# on load, so a resumed run drifts from an uninterrupted one; float32 makes resuming exact.)
_SCALAR_STATE_KEYS = ("step", "mu_product", "eta", "mu")


def _scalar_dtype():
    """The dtype of PyTorch's scalar state (``step``, NAdam's ``mu_product``, ASGD's ``eta``
    and ``mu``): float64 while the default dtype is float64, else float32."""
    return np.float64 if dtypes.get_default_dtype() is dtypes.float64 else np.float32


def step_tensor(value: float = 0.0) -> Tensor:
    """A 0-d CPU tensor, as PyTorch keeps ``state['step']``: float32 (float64 while the
    default dtype is float64)."""
    return Tensor._make(np.array(value, dtype=_scalar_dtype()), backend.CPU, False)


def zeros_like_state(param: Tensor, fill: float = 0.0, shape=None) -> Tensor:
    """A tensor of ``fill`` with the parameter's shape (or ``shape``), dtype and device."""
    data = param._data
    shape = data.shape if shape is None else tuple(shape)
    if param._device.type == "cpu":
        return Tensor._make(np.full(shape, fill, dtype=data.dtype), param._device, False)
    with backend.cuda.device_guard(param._device.index):
        array = backend.xp_of(data).full(shape, fill, dtype=data.dtype)
    return Tensor._make(array, param._device, False)


def _count_steps(step_function):
    """Wrap a subclass's ``step`` so schedulers can tell whether it was called, and run
    the step hooks (global and per optimizer) around it."""

    @functools.wraps(step_function)
    def step(self, *args, **kwargs):
        tracer = tracing.current()
        if tracer is not None:  # ember.compile replays the whole step
            return tracer.record_call(step, self, args, kwargs)
        self._opt_called = True
        self._step_count += 1
        graph_watch.check_step(self, stacklevel=2)
        hooks = self.__dict__.get("_hooks")
        pre = hooks["step_pre"] if hooks else ()
        post = hooks["step_post"] if hooks else ()
        if not (pre or post or _global_step_pre_hooks or _global_step_post_hooks):
            return step_function(self, *args, **kwargs)
        # As in PyTorch, the hooks' args start with the optimizer itself, and new args
        # from a pre-hook must too.
        args = (self, *args)
        for hook in [*_global_step_pre_hooks, *pre]:
            replaced = hook(self, args, kwargs)
            if replaced is not None:
                if not (isinstance(replaced, tuple) and len(replaced) == 2):
                    raise RuntimeError("a step pre-hook must return None or a tuple "
                                       f"(new_args, new_kwargs), but returned {replaced!r}")
                args, kwargs = replaced
        result = step_function(*args, **kwargs)
        for hook in [*post, *_global_step_post_hooks]:
            hook(self, args, kwargs)
        return result

    step._counts_steps = True
    return step


class Optimizer:
    """Base class of all optimizers.

    ``params`` is an iterable of leaf tensors (or of ``(name, tensor)`` pairs), or of dicts
    that each define a parameter group: ``{'params': [...], 'lr': 0.1, ...}``; options a
    group leaves out come from ``defaults``. ``state[p]`` holds the per-parameter buffers
    (momentum, moment estimates, step counts).

    >>> w = ember.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = ember.optim.SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0.8000, 1.6000], requires_grad=True)
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own_step = cls.__dict__.get("step")
        if own_step is not None and not getattr(own_step, "_counts_steps", False):
            cls.step = _count_steps(own_step)

    # PyTorch's annotation aliases for step hooks
    OptimizerPreHook: TypeAlias = Callable[["Optimizer", Args, Kwargs],
                                           Optional[tuple[Args, Kwargs]]]
    OptimizerPostHook: TypeAlias = Callable[["Optimizer", Args, Kwargs], None]

    # An algorithm's option names as PyTorch lists them, in its order (the keys of
    # ``defaults`` and of each group); None keeps the defaults as given.
    _option_order: tuple | None = None

    # The scalar state entries the algorithm keeps as 0-d tensors: a loaded state dict that
    # holds them as plain numbers (old PyTorch checkpoints) has them made tensors again, as
    # PyTorch's ``__setstate__`` does.
    _tensor_scalar_state: tuple = ()

    def __init__(self, params, defaults: dict) -> None:
        order = self._option_order
        self.defaults = dict(defaults) if order is None else {k: defaults[k] for k in order}
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        self._opt_called = False
        self._step_count = 0
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {params.type()}")
        if isinstance(params, dict):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got a dict (wrap a group in a list: [group])")
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ----------------------------------------------------------------- groups
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own options (the others from ``defaults``),
        e.g. to train a layer that was frozen so far."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        names = []
        tensors = []
        for item in params:
            if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
                names.append(item[0])
                item = item[1]
            tensors.append(item)
        if names and len(names) != len(tensors):
            raise ValueError("all optimizer params should be with/without names. Some param "
                             "names are missing")
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__module__}.{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor (it was computed by "
                                 f"{type(p.grad_fn).__name__}; optimize the leaf it came from, "
                                 "or use .detach().requires_grad_())")
            if not p._requires_grad and type(p) is Tensor:
                # a frozen nn.Parameter is deliberate; a plain tensor is the usual slip
                warnings.warn(
                    f"optimizer got a tensor of shape {list(p.shape)} that does not require "
                    "grad: backward never fills its .grad, so step() will not change it; "
                    "create it with requires_grad=True or call .requires_grad_()",
                    UserWarning, stacklevel=3)
        group["params"] = tensors
        if names:
            group["param_names"] = names
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group.setdefault(name, default)
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          UserWarning, stacklevel=3)
        seen = set()
        for existing in self.param_groups:
            seen.update(id(p) for p in existing["params"])
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        if self.param_groups and (("param_names" in group)
                                  != ("param_names" in self.param_groups[0])):
            raise ValueError("all optimizer param groups should be with/without names.")
        self._check_group(group)
        self.param_groups.append(group)

    def _check_group(self, group: dict) -> None:
        """Validate a group's hyper-parameters (subclasses raise ValueError)."""

    # ----------------------------------------------------------------- hooks
    def _hook_list(self, kind: str) -> list:
        # made on first use, so optimizers without hooks step on the fast path
        hooks = self.__dict__.setdefault("_hooks", {
            "step_pre": [], "step_post": [], "state_dict_pre": [], "state_dict_post": [],
            "load_state_dict_pre": [], "load_state_dict_post": []})
        return hooks[kind]

    def _hooks_of(self, kind: str) -> list:
        hooks = self.__dict__.get("_hooks")
        return list(hooks[kind]) if hooks else []

    def __getstate__(self) -> dict:
        # hooks are not copied (copy.deepcopy, pickle), as in PyTorch
        return {k: v for k, v in self.__dict__.items() if k != "_hooks"}

    def register_step_pre_hook(self, hook) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each ``step`` (after the global
        pre-hooks of ``register_optimizer_step_pre_hook``). As in PyTorch, ``args`` starts
        with the optimizer itself (``step``'s ``self``); the hook may return
        ``(new_args, new_kwargs)`` to replace them (``new_args`` starting with the optimizer
        too). Returns a handle with ``remove()``.

        >>> opt = ember.optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=0.1)
        >>> handle = opt.register_step_pre_hook(lambda o, args, kwargs: print("step"))
        >>> opt.step()
        step
        >>> handle.remove()
        """
        return _add_hook(self._hook_list("step_pre"), hook, False)

    def register_step_post_hook(self, hook) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each ``step`` (before the global
        post-hooks). Returns a handle with ``remove()``.

        >>> opt = ember.optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=0.1)
        >>> handle = opt.register_step_post_hook(lambda o, args, kwargs: print("done"))
        >>> opt.step()
        done
        >>> handle.remove()
        """
        return _add_hook(self._hook_list("step_post"), hook, False)

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer)`` at the start of ``state_dict()`` (its return value is
        ignored). The hooks run in the order registered; ``prepend=True`` puts this one
        first. Returns a handle with ``remove()``.

        >>> opt = ember.optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=0.1)
        >>> handle = opt.register_state_dict_pre_hook(lambda o: print("saving"))
        >>> _ = opt.state_dict()
        saving
        """
        return _add_hook(self._hook_list("state_dict_pre"), hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` on the dict ``state_dict()`` made, before it
        is returned; the hook may change it in place or return a dict that replaces it (and
        that the next hook gets). ``prepend=True`` runs this hook before those registered so
        far. Returns a handle with ``remove()``.

        >>> opt = ember.optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=0.1)
        >>> def tag(optimizer, state_dict):
        ...     return {**state_dict, "epoch": 3}
        >>> handle = opt.register_state_dict_post_hook(tag)
        >>> opt.state_dict()["epoch"]
        3
        """
        return _add_hook(self._hook_list("state_dict_post"), hook, prepend)

    def register_load_state_dict_pre_hook(self, hook,
                                          prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` at the start of ``load_state_dict``, on a
        shallow copy of the dict given; the hook may change it in place or return a dict
        that is loaded instead (and that the next hook gets). ``prepend=True`` runs this
        hook before those registered so far. Returns a handle with ``remove()``.

        >>> opt = ember.optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=0.1)
        >>> saved = opt.state_dict()
        >>> def lower_lr(optimizer, state_dict):
        ...     groups = [{**g, "lr": 0.01} for g in state_dict["param_groups"]]
        ...     return {"state": state_dict["state"], "param_groups": groups}
        >>> handle = opt.register_load_state_dict_pre_hook(lower_lr)
        >>> opt.load_state_dict(saved)
        >>> opt.param_groups[0]["lr"]
        0.01
        """
        return _add_hook(self._hook_list("load_state_dict_pre"), hook, prepend)

    def register_load_state_dict_post_hook(self, hook,
                                           prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer)`` at the end of ``load_state_dict``, once the state and
        groups are in place (its return value is ignored). ``prepend=True`` runs this hook
        before those registered so far. Returns a handle with ``remove()``.

        >>> opt = ember.optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=0.1)
        >>> handle = opt.register_load_state_dict_post_hook(lambda o: print("loaded"))
        >>> opt.load_state_dict(opt.state_dict())
        loaded
        """
        return _add_hook(self._hook_list("load_state_dict_post"), hook, prepend)

    # ----------------------------------------------------------------- gradients
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters: to None (default, frees the memory), or
        to zeros in place when ``set_to_none=False``."""
        tracer = tracing.current()
        if tracer is not None:
            return tracer.record_call(Optimizer.zero_grad, self, (set_to_none,), {})
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                    continue
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad._requires_grad = False
                grad._data.fill(0)
                bump_version(grad)

    def step(self, closure=None):
        """Do one optimization step; ``closure`` (re-evaluating the model and returning the
        loss) is called first with gradients enabled, and its loss is returned."""
        raise NotImplementedError(f"{type(self).__name__} does not define step()")

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with grad_mode.enable_grad():
            return closure()

    def _params_with_grad(self, group: dict):
        """(parameter, its array, its gradient's array) for the parameters that have a
        gradient, with the gradient negated when the group maximizes."""
        maximize = group.get("maximize", False)
        for p in group["params"]:
            grad = p._grad
            if grad is None:
                continue
            g = grad._data
            if p._device.type == "cpu":
                yield p, p._data, (-g if maximize else g)
            else:
                # CuPy allocates and launches on the current GPU: make it the parameter's.
                with backend.cuda.device_guard(p._device.index):
                    yield p, p._data, (-g if maximize else g)

    # ----------------------------------------------------------------- state dicts
    def state_dict(self) -> dict:
        """The optimizer's state in PyTorch's layout:
        ``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``, where
        parameters are numbered in the order of the groups. The state holds references to
        the live buffers (save it with ``ember.save``, which copies). The hooks of
        ``register_state_dict_pre_hook`` run first, those of
        ``register_state_dict_post_hook`` on the result.

        >>> opt = ember.optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=0.1)
        >>> opt.state_dict()["param_groups"][0]["params"]
        [0]
        """
        for hook in self._hooks_of("state_dict_pre"):
            hook(self)
        index_of: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index_of.setdefault(id(p), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {}
        for p, values in self.state.items():
            key = index_of[id(p)] if isinstance(p, Tensor) else p
            state[key] = values
        state_dict = {"state": state, "param_groups": groups}
        for hook in self._hooks_of("state_dict_post"):
            replaced = hook(self, state_dict)
            if replaced is not None:
                state_dict = replaced
        return state_dict

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the state saved by ``state_dict()`` (the same parameters in the same
        order). Buffers are copied and cast to each parameter's dtype and device; ``step``
        stays a CPU scalar of its dtype (a plain number becomes a 0-d tensor, as
        ``step_tensor`` makes it). The hooks of ``register_load_state_dict_pre_hook`` get
        a shallow copy of ``state_dict`` first and may replace it; those of
        ``register_load_state_dict_post_hook`` run at the end.

        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = ember.tensor([1.0]); opt.step()
        >>> again = ember.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> again.load_state_dict(opt.state_dict())
        >>> again.state[w]["momentum_buffer"]
        tensor([1.])
        """
        # a shallow copy, so hooks changing it in place leave the caller's dict alone
        state_dict = copy.copy(state_dict)
        for hook in self._hooks_of("load_state_dict_pre"):
            replaced = hook(self, state_dict)
            if replaced is not None:
                state_dict = replaced
        if not isinstance(state_dict, dict) or "state" not in state_dict \
                or "param_groups" not in state_dict:
            raise ValueError("load_state_dict expects a dict with the keys 'state' and "
                             "'param_groups', as made by Optimizer.state_dict()")
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups "
                             f"({len(saved_groups)} saved, {len(self.param_groups)} here)")
        for i, (mine, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError(
                    f"loaded state dict contains a parameter group that doesn't match the size "
                    f"of optimizer's group: group {i} has {len(saved['params'])} parameters "
                    f"saved and {len(mine['params'])} here")
        param_of = {}
        for mine, saved in zip(self.param_groups, saved_groups):
            for index, p in zip(saved["params"], mine["params"]):
                param_of[index] = p
        state: defaultdict = defaultdict(dict)
        for key, values in state_dict["state"].items():
            p = param_of.get(key)
            if p is None:
                state[key] = _copy_state_value(None, key, values)
                continue
            state[p] = {name: _copy_state_value(p, name, value) for name, value in values.items()}
            for name in self._tensor_scalar_state:
                value = state[p].get(name)
                if value is not None and not isinstance(value, Tensor):
                    state[p][name] = step_tensor(float(value))
        new_groups = []
        for mine, saved in zip(self.param_groups, saved_groups):
            group = {k: v for k, v in saved.items() if k != "params"}
            group["params"] = mine["params"]
            if "param_names" in mine and "param_names" not in saved:
                group["param_names"] = mine["param_names"]
            new_groups.append(group)
        self.state = state
        self.param_groups = new_groups
        for hook in self._hooks_of("load_state_dict_post"):
            hook(self)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            if i:
                lines.append("")  # a blank line between groups, as PyTorch prints
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key not in ("params", "param_names"):
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


def _copy_state_value(param, name, value):
    """A state entry from a loaded dict: tensors copied, cast and moved to the parameter."""
    if not isinstance(value, Tensor):
        return value
    if param is None or name in _SCALAR_STATE_KEYS:
        data = value._host().copy()
        return Tensor._make(data, backend.CPU, False)
    data = value._data
    if value._device != param._device:
        data = backend.move(data, value._device, param._device)
    else:
        data = data.copy()
    if data.dtype.kind in "fV" and data.dtype != param._data.dtype:
        data = data.astype(param._data.dtype)
    return Tensor._make(data, param._device, False)


# --------------------------------------------------------------------- shared helpers
def check_hyperparameter(lr=None, eps=None, betas=None, weight_decay=None,
                         momentum=None) -> None:
    """PyTorch's argument checks, with its messages (``lr`` may be a one-element Tensor)."""
    if lr is not None and not as_float(lr, "lr") >= 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps is not None and not eps >= 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if betas is not None:
        if len(betas) != 2:
            raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        for index, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {index}: {beta}")
    if weight_decay is not None and not weight_decay >= 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if momentum is not None and not momentum >= 0.0:
        raise ValueError(f"Invalid momentum value: {momentum}")


def algorithm_flags(name: str, foreach, fused, capturable: bool = False,
                    differentiable: bool = False) -> dict:
    """PyTorch's implementation-choice options. ``foreach`` and ``fused`` pick kernels in
    PyTorch with the same math; ember has one implementation, so they change nothing.
    ``capturable`` (CUDA graphs) and ``differentiable`` (a graph through the update) have
    no ember counterpart and are refused rather than ignored."""
    if capturable:
        raise ValueError(f"{name}: capturable=True (CUDA-graph capture) is not supported by "
                         "ember")
    if differentiable:
        raise ValueError(f"{name}: differentiable=True (autograd through the optimizer step) is "
                         "not supported by ember")
    return {"foreach": foreach, "fused": fused, "capturable": False, "differentiable": False}


def as_float(value, what: str) -> float:
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"Tensor {what} must be 1-element")
        return float(value.item())
    return value
