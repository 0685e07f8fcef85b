"""``Module``: the base class of every layer. It keeps parameters, buffers and submodules
in ordered dicts, walks them recursively (parameters(), state_dict(), to(), train()),
and runs forward with hooks."""
from __future__ import annotations

import itertools
from collections import OrderedDict, namedtuple

from ... import grad_mode, tracing
from ...hooks import KeyedHandle
from ...tensor import Tensor
from ..parameter import Buffer, Parameter, is_lazy

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook"]

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class _IncompatibleKeys(IncompatibleKeys):
    """What ``load_state_dict`` returns (PyTorch's class name and repr)."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_global_forward_pre_hooks: dict = OrderedDict()
_global_forward_hooks: dict = OrderedDict()


def register_module_forward_pre_hook(hook) -> KeyedHandle:
    """A forward pre-hook that runs for every Module."""
    handle = KeyedHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook) -> KeyedHandle:
    """A forward hook that runs for every Module."""
    handle = KeyedHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = hook
    return handle


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module:
    """Base class for neural-network layers and models.

    Subclasses set parameters and submodules as attributes in ``__init__`` and define
    ``forward``; calling the module runs forward (with hooks)::

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x).relu()
    """

    training: bool
    _version = 1
    call_super_init = False

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = set()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = set()
        d["_forward_hooks_always_called"] = set()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_has_hooks"] = False

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ------------------------------------------------------------------ registration
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (running means, masks). It moves
        with ``to()`` and, if ``persistent``, is saved in ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(ember.Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None, a placeholder) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (ember.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                "be created explicitly. To express '" + name + "' as a function of another "
                "Tensor, compute the value in the forward() method.")
        self._parameters[name] = param

    def add_module(self, name: str, module: "Module | None") -> None:
        """Add a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f"module name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> "Module":
        """The submodule at the dotted path ``target`` ('' is self)."""
        if target == "":
            return self
        module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return module._buffers[name]

    # ------------------------------------------------------------------ attribute protocol
    def __getattr__(self, name: str):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(self, name, d, self._buffers, self._modules,
                         self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(ember.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(self, name, d, self._parameters, self._buffers,
                         self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (ember.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer):
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            _remove_from(self, name, d, self._parameters, self._modules)
            self.register_buffer(name, value, value.persistent)
            return
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(ember.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        attrs = set(dir(type(self))) | set(self.__dict__)
        attrs |= set(self._parameters) | set(self._buffers) | set(self._modules)
        return sorted(a for a in attrs if not a[0].isdigit())

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)

    # ------------------------------------------------------------------ iteration
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in memo:
                        continue
                    memo.add(id(value))
                yield (module_prefix + ("." if module_prefix else "") + name, value)

    def parameters(self, recurse: bool = True):
        """Every parameter of this module (and, with ``recurse``, its submodules), each
        once."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True):
        """(dotted name, parameter) pairs, e.g. ('0.weight', Parameter)."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse: bool = True):
        """Every buffer (running statistics, masks) of this module and its submodules."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True):
        """(dotted name, buffer) pairs, e.g. ('0.running_mean', Tensor)."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def children(self):
        """The direct submodules, each once."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """(name, module) for the direct submodules, each once."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self):
        """This module and every descendant, depth first, each once."""
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True):
        """(dotted name, module) for this module and every descendant, depth first."""
        if memo is None:
            memo = set()
        if remove_duplicate and id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        # Iterative pre-order walk (user models can nest deeply).
        stack = [(prefix, self, iter(self._modules.items()))]
        while stack:
            module_prefix, module, items = stack[-1]
            for name, child in items:
                if child is None:
                    continue
                if remove_duplicate:
                    if id(child) in memo:
                        continue
                    memo.add(id(child))
                child_prefix = module_prefix + ("." if module_prefix else "") + name
                yield child_prefix, child
                stack.append((child_prefix, child, iter(child._modules.items())))
                break
            else:
                stack.pop()

    # ------------------------------------------------------------------ modes
    def train(self, mode: bool = True) -> "Module":
        """Set training mode (Dropout drops, BatchNorm uses batch statistics) on this module
        and all descendants."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.__dict__["training"] = mode
        for module in self.children():
            module.train(mode)  # through each child's own train(), which may be overridden
        return self

    def eval(self) -> "Module":
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Set ``requires_grad`` on every parameter (False freezes the module)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad``: to None (default) or to zeros."""
        tracer = tracing.current()
        if tracer is not None:
            return tracer.record_call(Module.zero_grad, self, (set_to_none,), {})
        for p in self.parameters():
            if p._grad is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                grad = p._grad
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                with grad_mode.no_grad():
                    grad.zero_()

    def apply(self, fn) -> "Module":
        """Call ``fn(module)`` on every submodule (children first) and on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ device / dtype
    def _apply(self, fn, recurse: bool = True) -> "Module":
        """Replace every parameter's data (keeping the Parameter objects) and every buffer
        by ``fn(tensor)``; the one path behind to/cuda/cpu/float/double/half/type."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        with grad_mode.no_grad():
            for key, param in self._parameters.items():
                if param is None:
                    continue
                new = fn(param)
                if new is not param:
                    param._data = new._data
                    param._device = new._device
                if param._grad is not None:
                    grad = fn(param._grad)
                    if grad is not param._grad:
                        param._grad = Tensor._make(grad._data, grad._device, False)
            for key, buf in self._buffers.items():
                if buf is None:
                    continue
                new = fn(buf)
                if is_lazy(buf):  # keep the placeholder object, with the new dtype/device
                    buf._data = new._data
                    buf._device = new._device
                else:
                    self._buffers[key] = new
        return self

    def to(self, *args, **kwargs) -> "Module":
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``. Only floating-point tensors change dtype."""
        from ... import dtypes
        from ...tensor import _parse_to

        device, dtype, _ = _parse_to(args, dict(kwargs))
        if dtype is not None:
            dtype = dtypes.to_dtype(dtype)
            if not dtype.is_floating_point:
                raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got "
                                f"desired dtype={dtype}")

        def convert(t):
            if dtype is not None and t.is_floating_point():
                return t.to(device=device, dtype=dtype) if device is not None else t.to(dtype)
            return t.to(device) if device is not None else t

        return self._apply(convert)

    def cuda(self, device=None) -> "Module":
        """Move every parameter and buffer to a GPU (the current one by default)."""
        return self._apply(lambda t: t.cuda(device))

    def cpu(self) -> "Module":
        """Move every parameter and buffer to the CPU."""
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type) -> "Module":
        """Cast every parameter and buffer to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> "Module":
        """Cast floating-point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> "Module":
        """Cast floating-point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> "Module":
        """Cast floating-point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> "Module":
        """Cast floating-point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    # ------------------------------------------------------------------ state dict
    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def get_extra_state(self):
        """Override (with set_extra_state) to save non-tensor state in the state_dict under
        '<prefix>_extra_state'."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called: override get_extra_state together with "
                           "set_extra_state")

    def set_extra_state(self, state) -> None:
        """Restore what get_extra_state returned."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called: override set_extra_state together with "
                           "get_extra_state")

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ordered dict of every parameter and persistent buffer by dotted name
        (detached unless ``keep_vars``)."""
        if args:  # the old positional (destination, prefix, keep_vars) form
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
        for module_prefix, module in self.named_modules(prefix=prefix.rstrip(".")
                                                        if prefix else "",
                                                        remove_duplicate=False):
            dotted = module_prefix + "." if module_prefix else ""
            for hook in module._state_dict_pre_hooks.values():
                hook(module, dotted, keep_vars)
            module._save_to_state_dict(destination, dotted, keep_vars)
            for hook in module._state_dict_hooks.values():
                result = hook(module, destination, dotted, {})
                if result is not None:
                    destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs,
                              assign: bool = False) -> None:
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local = list(itertools.chain(self._parameters.items(), persistent.items()))
        local_names = {name for name, value in local if value is not None}
        for name, param in local:
            key = prefix + name
            if param is None:
                continue
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected ember.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}")
                continue
            if is_lazy(param):
                with grad_mode.no_grad():
                    param.materialize(value.shape, device=param.device, dtype=param.dtype)
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {param.shape}.")
                continue
            if assign:
                if name in self._parameters:
                    self._parameters[name] = Parameter(value.detach(),
                                                       requires_grad=param._requires_grad)
                else:
                    self._buffers[name] = value
                continue
            try:
                with grad_mode.no_grad():
                    param.copy_(value)
            except Exception as error:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.shape} and whose dimensions in the checkpoint are "
                    f"{value.shape}, an exception occurred : {error.args}.")
        extra_key = prefix + "_extra_state"
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key == extra_key:
                    continue
                if key.startswith(prefix):
                    parts = key[len(prefix):].split(".", 1)
                    if len(parts) > 1:  # belongs to a child, which must exist
                        if parts[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif parts[0] not in local_names:  # None entries take no value
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy values from ``state_dict`` into this module's parameters and buffers, in
        place (optimizers keep their references). With ``strict``, missing or unexpected
        keys raise a RuntimeError naming them; shape mismatches always raise. With
        ``assign=True`` the tensors of the state_dict replace the module's (parameters stay
        Parameters, keeping their requires_grad). Returns ``(missing_keys,
        unexpected_keys)``."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list = []
        unexpected_keys: list = []
        error_msgs: list = []
        for module_prefix, module in self.named_modules(remove_duplicate=False):
            prefix = module_prefix + "." if module_prefix else ""
            module._load_from_state_dict(state_dict, prefix, {}, True, missing_keys,
                                         unexpected_keys, error_msgs, assign)
        # a module shared under two names reports its keys twice; keep each once, in order
        unexpected_keys = list(dict.fromkeys(unexpected_keys))
        result = _IncompatibleKeys(missing_keys, unexpected_keys)
        for module in self.modules():
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, result)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return result

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` runs before this module's entries are
        written into a state_dict."""
        return self._register_plain(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` runs after this module's
        entries are written; a non-None result replaces the state_dict."""
        return self._register_plain(self._state_dict_hooks, hook)

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module loads its entries."""
        return self._register_plain(self._load_state_dict_pre_hooks,
                                    lambda sd, prefix, md, strict, mk, uk, em: hook(
                                        self, sd, prefix, md, strict, mk, uk, em))

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` runs after load_state_dict; it may edit the
        key lists (emptying them silences the strict error)."""
        return self._register_plain(self._load_state_dict_post_hooks, hook)

    def _register_plain(self, hooks: dict, hook):
        handle = KeyedHandle(hooks)
        hooks[handle.id] = hook
        return handle

    # ------------------------------------------------------------------ hooks
    def _register(self, hooks: dict, hook):
        handle = KeyedHandle(hooks)
        hooks[handle.id] = hook
        self.__dict__["_has_hooks"] = True
        return handle

    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False):
        """``hook(module, args)`` (or ``hook(module, args, kwargs)`` with ``with_kwargs``)
        runs before forward; a non-None result replaces the args (and kwargs)."""
        handle = self._register(self._forward_pre_hooks, hook)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False):
        """``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``) runs
        after forward; a non-None result replaces the output."""
        handle = self._register(self._forward_hooks, hook)
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """``hook(module, grad_input, grad_output)`` runs when the gradients w.r.t. the
        module's inputs are computed; a non-None result replaces grad_input. Entries are
        None for inputs that are not tensors requiring grad."""
        handle = self._register(self._backward_hooks, hook)
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """``hook(module, grad_output)`` runs when the gradients w.r.t. the module's outputs
        are computed; a non-None result replaces grad_output."""
        handle = self._register(self._backward_pre_hooks, hook)
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """The old name; registers a full backward hook."""
        return self.register_full_backward_hook(hook)

    # ------------------------------------------------------------------ call
    def __call__(self, *args, **kwargs):
        try:
            has_hooks = self.__dict__["_has_hooks"]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} was not initialized: its __init__ must call "
                "super().__init__() before using the module") from None
        try:
            if not (has_hooks or _global_forward_hooks or _global_forward_pre_hooks):
                return self.forward(*args, **kwargs)
            return self._call_with_hooks(args, kwargs)
        except (RuntimeError, TypeError, ValueError, IndexError) as error:
            _name_module(error, self)
            raise

    _call_impl = __call__

    def _call_with_hooks(self, args, kwargs):
        pre_hooks = list(_global_forward_pre_hooks.items()) + \
            list(self._forward_pre_hooks.items())
        for hook_id, hook in pre_hooks:
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward_hooks = bool(self._backward_hooks or self._backward_pre_hooks)
        if backward_hooks:
            state = _BackwardHookState(self, args)
            args = state.wrap_inputs(args)
        try:
            output = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in self._forward_hooks.items():
                if hook_id in self._forward_hooks_always_called:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception:
                        pass
            raise
        post_hooks = list(_global_forward_hooks.items()) + list(self._forward_hooks.items())
        for hook_id, hook in post_hooks:
            if hook_id in self._forward_hooks_with_kwargs:
                result = hook(self, args, kwargs, output)
            else:
                result = hook(self, args, output)
            if result is not None:
                output = result
        if backward_hooks:
            output = state.wrap_outputs(output)
        return output

    # ------------------------------------------------------------------ printing
    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr (its settings)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def share_memory(self) -> "Module":
        """A no-op kept for PyTorch code (ember tensors are not shared across processes)."""
        return self

    def __getstate__(self):
        return self.__dict__.copy()


def _check_name(name, kind: str) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f"{kind} name can't contain \".\"")
    if name == "":
        raise KeyError(f"{kind} name can't be empty string \"\"")


def _remove_from(module, name, d, *containers) -> None:
    for c in containers:
        if isinstance(c, set):
            c.discard(name)
        elif name in c:
            del c[name]
    if name in d:
        del d[name]


class _BackwardHookState:
    """Runs a module's full backward hooks: identity nodes wrap the tensor inputs (their
    gradient is grad_input) and the tensor outputs (their gradient is grad_output)."""

    def __init__(self, module: Module, args):
        self.module = module
        self.n_inputs = len(args)
        self.input_positions = []
        self.grad_output = None
        self.n_outputs = 0
        self.inputs_tracked = False

    def wrap_inputs(self, args):
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)
                     and a._requires_grad]
        if not positions or not grad_mode.is_grad_enabled():
            return args
        wrapped = _BackwardHookIdentity.apply(*[args[i] for i in positions])
        if not isinstance(wrapped, tuple):
            wrapped = (wrapped,)
        node = wrapped[0].grad_fn
        node.register_hook(self._on_input_grads)
        self.input_positions = positions
        self.inputs_tracked = True
        args = list(args)
        for i, t in zip(positions, wrapped):
            args[i] = t
        return tuple(args)

    def _pack_inputs(self, grads):
        full = [None] * self.n_inputs
        for i, g in zip(self.input_positions, grads):
            full[i] = g
        return tuple(full)

    def _on_input_grads(self, grad_inputs, grad_outputs):
        # grad_outputs of the identity node are the gradients w.r.t. the module's inputs.
        grads = self._pack_inputs(grad_outputs)
        for hook in list(self.module._backward_hooks.values()):
            result = hook(self.module, grads, self.grad_output)
            if result is not None:
                result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(result) != len(grads):
                    raise RuntimeError(
                        f"Backward hook returned an invalid number of grad_input, got "
                        f"{len(result)}, but expected {len(grads)}")
                grads = result
        return tuple(grads[i] for i in self.input_positions)

    def wrap_outputs(self, output):
        single = isinstance(output, Tensor)
        outputs = (output,) if single else output
        if not isinstance(outputs, tuple):
            return output
        positions = [i for i, o in enumerate(outputs) if isinstance(o, Tensor)
                     and o._requires_grad]
        if not positions:
            return output
        self.n_outputs = len(outputs)
        wrapped = _BackwardHookIdentity.apply(*[outputs[i] for i in positions])
        if not isinstance(wrapped, tuple):
            wrapped = (wrapped,)
        wrapped[0].grad_fn.register_prehook(self._make_output_hook(positions))
        outputs = list(outputs)
        for i, t in zip(positions, wrapped):
            outputs[i] = t
        return outputs[0] if single else tuple(outputs)

    def _make_output_hook(self, positions):
        def on_output_grads(grads):
            full = [None] * self.n_outputs
            for i, g in zip(positions, grads):
                full[i] = g
            full = tuple(full)
            for hook in list(self.module._backward_pre_hooks.values()):
                result = hook(self.module, full)
                if result is not None:
                    result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                    if len(result) != len(full):
                        raise RuntimeError(
                            f"Backward pre hook returned an invalid number of grad_output, got "
                            f"{len(result)}, but expected {len(full)}")
                    full = result
            self.grad_output = full
            if not self.inputs_tracked:
                # No input needs a gradient: the hooks still run, with grad_input all None.
                nones = (None,) * self.n_inputs
                for hook in list(self.module._backward_hooks.values()):
                    result = hook(self.module, nones, full)
                    if result is not None and any(r is not None for r in result):
                        raise RuntimeError("can't replace grad_input of a module whose inputs "
                                           "don't require grad")
            return tuple(full[i] for i in positions)
        return on_output_grads


from ...autograd import Function as _UserFunction  # noqa: E402


class _BackwardHookIdentity(_UserFunction):
    """Identity whose graph node marks where a module's inputs or outputs sit."""

    @staticmethod
    def forward(ctx, *tensors):
        return tensors if len(tensors) > 1 else tensors[0]

    @staticmethod
    def backward(ctx, *grads):
        return grads if len(grads) > 1 else grads[0]


def _name_module(error: BaseException, module: "Module") -> None:
    """Prefix an error from forward with the path of the module it came from
    (``in encoder.fc2 (Linear): ...``), keeping its type. Each enclosing module's __call__
    extends the path by one name, so the outermost call leaves the full path."""
    args = error.args
    if len(args) != 1 or not isinstance(args[0], str):
        return
    state = error.__dict__.get("_ember_module")
    if state is None:
        state = error._ember_module = {"inner": module, "path": [], "type": type(module),
                                       "message": args[0], "hinted": False, "open": True}
    elif state["open"]:
        inner = state["inner"]
        name = next((n for n, m in module._modules.items() if m is inner), None)
        if name is None:  # not a direct child (e.g. a module held in a plain list)
            state["open"] = False
        else:
            state["path"].insert(0, name)
            state["inner"] = module
    if not state["hinted"]:
        hint = _device_hint(module, state["message"])
        if hint:
            state["message"] += hint
            state["hinted"] = True
    where = ".".join(state["path"])
    kind = state["type"].__name__
    label = f"{where} ({kind})" if where else kind
    error.args = (f"in {label}: {state['message']}",)


def _device_hint(module: "Module", message: str) -> str:
    """For a device mismatch: the plain tensor attributes that .to() did not move."""
    if "on the same device" not in message:
        return ""
    devices = {str(p.device) for p in module.parameters()} | \
        {str(b.device) for b in module.buffers()}
    stray = [(n, v) for n, v in vars(module).items()
             if isinstance(v, Tensor) and not isinstance(v, Parameter)
             and str(v.device) not in devices]
    if not devices or not stray:
        return ""
    name, value = stray[0]
    return (f". Attribute '{name}' is a plain tensor on {value.device} while the module's "
            f"parameters are on {', '.join(sorted(devices))}: .to() moves only parameters "
            f"and buffers; register it with self.register_buffer('{name}', tensor)")
