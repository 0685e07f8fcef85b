"""Parametrizations: make ``module.weight`` the output of a small module applied to a
stored original (``module.parametrizations.weight.original``), recomputed on each access.

>>> class Symmetric(nn.Module):
...     def forward(self, X):
...         return X.triu() + X.triu(1).transpose(-1, -2)
>>> layer = nn.Linear(3, 3)
>>> parametrize.register_parametrization(layer, "weight", Symmetric())
"""
from __future__ import annotations

import contextlib
import copy

from ... import grad_mode
from ...tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized",
           "cached", "ParametrizationList", "type_before_parametrizations"]

_cache_enabled = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Inside this block each parametrized tensor is computed once and reused."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to ``original`` (or to
    ``original0, original1, ...`` when the first one's right_inverse returns several
    tensors)."""

    def __init__(self, modules, original, unsafe: bool = False):
        super().__init__(modules)
        self.unsafe = unsafe
        with grad_mode.no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if isinstance(original, Parameter):
                if new is not original:
                    if new.shape == original.shape and new.dtype is original.dtype:
                        with grad_mode.no_grad():
                            original.copy_(new)  # keep the Parameter optimizers may hold
                    else:
                        original = Parameter(new.detach(), original.requires_grad)
                self.register_parameter("original", original)
            else:
                self.register_buffer("original", new)
        else:
            for i, tensor in enumerate(new):
                if isinstance(original, Parameter):
                    self.register_parameter(f"original{i}", Parameter(
                        tensor.detach().clone(), original.requires_grad))
                else:
                    self.register_buffer(f"original{i}", tensor)

    def right_inverse(self, value) -> None:
        """Assigning ``module.weight = value`` stores right_inverse(value) in original."""
        with grad_mode.no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for i, tensor in enumerate(value):
                    getattr(self, f"original{i}").copy_(tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _make_property(tensor_name: str):
    def getter(self):
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(self), tensor_name)
            if key not in _cache:
                _cache[key] = parametrization()
            return _cache[key]
        return parametrization()

    def setter(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    return property(getter, setter)


def _deepcopy(self, memo):
    """Copies get their own Parametrized class: the properties live on the class, and
    removing a parametrization from one copy must not touch the other."""
    cls = type(self)
    namespace = {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")}
    result = object.__new__(type(cls.__name__, cls.__bases__, namespace))
    memo[id(self)] = result
    result.__dict__.update(copy.deepcopy(self.__dict__, memo))
    return result


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` (or its ``tensor_name``) has parametrizations."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else \
        tensor_name in parametrizations


def type_before_parametrizations(module: Module) -> type:
    """The module's class before the first parametrization swapped it."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def register_parametrization(module: Module, tensor_name: str, parametrization: Module,
                             *, unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` be ``parametrization(original)``; a second call on
    the same tensor chains another parametrization after the first."""
    if not isinstance(parametrization, Module):
        raise TypeError("register_parametrization: parametrization must be an nn.Module, "
                        f"got {type(parametrization).__name__}")
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].append(parametrization)
        return module
    if tensor_name in module._parameters or tensor_name in module._buffers:
        original = getattr(module, tensor_name)
        if tensor_name in module._parameters:
            del module._parameters[tensor_name]
        else:
            del module._buffers[tensor_name]
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    if not is_parametrized(module):
        cls = type(module)
        module.__class__ = type("Parametrized" + cls.__name__, (cls,),
                                {"__deepcopy__": _deepcopy})
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = ParametrizationList([parametrization], original,
                                                               unsafe=unsafe)
    setattr(type(module), tensor_name, _make_property(tensor_name))
    return module


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo register_parametrization: ``tensor_name`` becomes a plain parameter again,
    holding the parametrized value (``leave_parametrized``) or the original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with grad_mode.no_grad():
                value = getattr(module, tensor_name)
            original = Parameter(value.detach().clone(), original.requires_grad) \
                if isinstance(original, Parameter) else value.detach().clone()
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        with grad_mode.no_grad():
            value = getattr(module, tensor_name)
        first = plist.original0
        original = Parameter(value.detach().clone(), first.requires_grad) \
            if isinstance(first, Parameter) else value.detach().clone()
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        del module.parametrizations
        module.__class__ = type(module).__bases__[0]
    return module
