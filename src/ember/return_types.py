"""The named tuples that ops such as ``max(dim)``, ``sort`` and ``linalg.qr`` return, one
class per result kind (``ember.return_types.max``), printed as PyTorch prints its own:

>>> import ember
>>> ember.max(ember.tensor([[1., 5.], [4., 2.]]), 1)
ember.return_types.max(
values=tensor([5., 4.]),
indices=tensor([1, 0]))
>>> values, indices = ember.tensor([3., 1., 2.]).sort()
>>> indices
tensor([1, 2, 0])
"""
from __future__ import annotations

from collections import namedtuple

__all__: list = []  # filled by ``result_type``: one class per name


def _repr(self) -> str:
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"ember.return_types.{type(self).__name__}(\n{fields})"


def result_type(name: str, fields: list) -> type:
    """The result class ``name`` with these fields, made once (an op module asks for it at
    import) and kept here, where pickling looks for it."""
    existing = globals().get(name)
    if existing is not None:
        if list(existing._fields) != list(fields):
            raise ValueError(f"result type {name!r} exists with fields {existing._fields}")
        return existing
    cls = type(name, (namedtuple(name, fields),),
               {"__slots__": (), "__repr__": _repr, "__module__": __name__})
    globals()[name] = cls
    __all__.append(name)
    return cls
