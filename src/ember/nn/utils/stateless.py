"""Calling a module with other parameters and buffers than its own."""
from __future__ import annotations

import contextlib

from ..modules.module import Module

__all__ = ["functional_call"]


@contextlib.contextmanager
def _swapped(module: Module, tensors: dict, strict: bool):
    saved = []
    try:
        for name, tensor in tensors.items():
            path, _, leaf = name.rpartition(".")
            owner = module.get_submodule(path)
            if leaf in owner._parameters:
                table = owner._parameters
            elif leaf in owner._buffers:
                table = owner._buffers
            else:
                raise AttributeError(f"functional_call: '{name}' is not a parameter or buffer "
                                     f"of {type(module).__name__}")
            saved.append((table, leaf, table[leaf]))
            table[leaf] = tensor  # stored as given: a plain (tracked) tensor is allowed here
        if strict:
            expected = set(module.state_dict(keep_vars=True))
            missing = sorted(expected - set(tensors))
            if missing:
                raise RuntimeError(f"functional_call got strict=True but these keys are "
                                   f"missing: {missing}")
        yield
    finally:
        for table, leaf, original in reversed(saved):
            table[leaf] = original


def functional_call(module: Module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """Run ``module(*args, **kwargs)`` with the named tensors of ``parameters_and_buffers``
    (a dict, or a tuple of dicts) in place of the module's own; the module is restored
    afterwards. Gradients flow to the given tensors, so this is how to differentiate a
    model w.r.t. its weights as function inputs."""
    if isinstance(parameters_and_buffers, (tuple, list)):
        merged: dict = {}
        for d in parameters_and_buffers:
            overlap = set(merged) & set(d)
            if overlap:
                raise ValueError(f"functional_call: {sorted(overlap)} appeared in multiple "
                                 "dictionaries")
            merged.update(d)
        parameters_and_buffers = merged
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, dict(parameters_and_buffers), strict):
        return module(*args, **(kwargs or {}))
