"""The older, hook-based weight normalization: parameters ``<name>_g`` and ``<name>_v``,
with ``<name>`` recomputed before every forward. New code should prefer
``parametrizations.weight_norm``."""
from __future__ import annotations

import warnings

from ..modules.module import Module
from ..parameter import Parameter
from .parametrizations import _norm_except_dim

__all__ = ["weight_norm", "remove_weight_norm"]


class _WeightNormHook:
    """Recomputes ``module.<name> = g * v / ||v||`` (the norm over every dim but ``dim``)."""

    def __init__(self, name: str, dim: int):
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split ``module.<name>`` into a magnitude ``<name>_g`` and a direction ``<name>_v``
    (Salimans & Kingma, 2016); ``<name>`` = g * v / ||v|| is recomputed before each
    forward. ``dim=None`` normalizes over the whole tensor."""
    warnings.warn("`ember.nn.utils.weight_norm` is deprecated in favor of "
                  "`ember.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                  stacklevel=2)
    hooks = module.__dict__.setdefault("_weight_norm_hooks", {})
    if name in hooks:
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                           f"{name}")
    hook = _WeightNormHook(name, -1 if dim is None else dim)
    weight = getattr(module, name)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(
        _norm_except_dim(weight, hook.dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, hook.compute_weight(module))
    hooks[name] = (hook, module.register_forward_pre_hook(hook))
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo weight_norm: ``<name>`` becomes a plain parameter holding g * v / ||v||."""
    hooks = module.__dict__.get("_weight_norm_hooks", {})
    if name not in hooks:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    hook, handle = hooks.pop(name)
    weight = hook.compute_weight(module).detach()
    handle.remove()
    del module._parameters[name + "_g"]
    del module._parameters[name + "_v"]
    module.__dict__.pop(name, None)
    module.register_parameter(name, Parameter(weight))
    return module
