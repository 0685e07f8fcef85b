"""``Variable``: the pre-0.4 PyTorch wrapper, now the Tensor itself.

``Variable(t)`` gives a leaf sharing ``t``'s memory, ``Variable(t, requires_grad=True)`` one
that requires grad, and every tensor is an instance of ``Variable``:

>>> import ember
>>> from ember.autograd import Variable
>>> v = Variable(ember.ones(2), requires_grad=True)
>>> v.requires_grad, isinstance(ember.zeros(1), Variable)
(True, True)
"""
from __future__ import annotations

from ..tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)

    def __call__(cls, data, requires_grad: bool = False, volatile: bool = False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(data).__name__}")
        if volatile:
            raise RuntimeError("volatile was removed: use `with ember.no_grad():` instead")
        return data.detach().requires_grad_(requires_grad)


class Variable(metaclass=_VariableMeta):
    """A tensor (kept for code written before Variable and Tensor merged)."""
