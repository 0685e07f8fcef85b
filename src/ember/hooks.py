"""The handles every ``register_*hook`` returns: ``handle.remove()`` takes the hook out
again, and a handle is a context manager that removes it on exit.

A leaf module (it imports nothing of ember), so tensors, graph nodes, modules and
optimizers all share it.

>>> x = ember.ones(2, requires_grad=True)
>>> with x.register_hook(lambda g: g * 2):
...     (x * 3).sum().backward()
>>> x.grad
tensor([6., 6.])
"""
from __future__ import annotations

import itertools

__all__ = ["RemovableHandle", "KeyedHandle"]


class RemovableHandle:
    """A hook kept in a list (tensor, node and optimizer hooks)."""

    def __init__(self, hooks: list, hook):
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        try:
            self._hooks.remove(self._hook)
        except ValueError:
            pass  # removed already

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.remove()


_ids = itertools.count()


class KeyedHandle(RemovableHandle):
    """A hook kept under one id in one or more dicts (module hooks: ``handle.id``)."""

    def __init__(self, *dicts: dict):
        self.id = next(_ids)
        self._dicts = dicts

    def remove(self) -> None:
        for d in self._dicts:
            d.pop(self.id, None)
