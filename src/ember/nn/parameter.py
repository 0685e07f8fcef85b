"""``Parameter`` and ``Buffer``: tensors that a Module registers when they are assigned to
one of its attributes."""
from __future__ import annotations

from ..tensor import Tensor, VersionCounter, counter_of

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _share(target: Tensor, source: Tensor, requires_grad: bool) -> None:
    """Make ``target`` a leaf over ``source``'s memory and version counter."""
    target._data = source._data
    target._device = source._device
    target._requires_grad = False
    target.grad_fn = None
    target._output_nr = 0
    target._grad = None
    target._version_counter = counter_of(source)
    target._base = None
    target._view_chain = ()
    target._accumulator = None
    target._hooks = None
    target._retains_grad = False
    if requires_grad:
        target.requires_grad_(True)


class Parameter(Tensor):
    """A tensor that is a module parameter: assigning it to a Module attribute registers it
    in ``parameters()``. It is always a leaf; it requires grad by default.

    >>> p = ember.nn.Parameter(ember.zeros(2))
    >>> p
    Parameter containing:
    tensor([0., 0.], requires_grad=True)
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        from ..creation import empty

        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(data): data must be a Tensor, not {type(data).__name__}")
        self = object.__new__(cls)
        _share(self, data, requires_grad)
        return self

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__
    # PyTorch formats only plain 0-d tensors as numbers; a Parameter formats as its str
    __format__ = object.__format__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        data = Tensor._make(self._data.copy(), self._device, False)
        result = type(self)(data, self._requires_grad)
        if self._grad is not None:
            result._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return Tensor.__reduce_ex__(self, protocol)


class UninitializedParameter(Parameter):
    """The parameter of a lazy module before its first forward: it has no shape yet."""

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the parameter memory of ``shape`` and become a plain Parameter."""
        from ..creation import empty

        fresh = empty(tuple(shape), device=device if device is not None else self._device,
                      dtype=dtype if dtype is not None else self.dtype)
        requires_grad = self._requires_grad
        _share(self, fresh, False)
        self._version_counter = VersionCounter()
        self.__class__ = Parameter
        self.requires_grad_(requires_grad)

    def __repr__(self) -> str:
        return "<UninitializedParameter>"

    __str__ = __repr__


class UninitializedBuffer(Tensor):
    """The buffer of a lazy module before its first forward: it has no shape yet."""

    __slots__ = ()  # the same layout as Tensor, which it becomes on materialize()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False):
        from ..creation import empty

        self = object.__new__(cls)
        _share(self, data if data is not None else empty(0), requires_grad)
        return self

    def __init__(self, data: Tensor | None = None, requires_grad: bool = False):
        pass

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the buffer memory of ``shape`` and become a plain Tensor."""
        from ..creation import empty

        fresh = empty(tuple(shape), device=device if device is not None else self._device,
                      dtype=dtype if dtype is not None else self.dtype)
        _share(self, fresh, False)
        self._version_counter = VersionCounter()
        self.__class__ = Tensor

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"

    __str__ = __repr__


def is_lazy(value) -> bool:
    """Whether ``value`` is a parameter or buffer still waiting for its shape."""
    return isinstance(value, (UninitializedParameter, UninitializedBuffer))


class Buffer(Tensor):
    """Marks a tensor to be registered as a module buffer when assigned to an attribute:
    ``self.running = nn.Buffer(ember.zeros(3))``. ``persistent=False`` keeps it out of the
    state_dict."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        from ..creation import empty

        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(data): data must be a Tensor, not {type(data).__name__}")
        self = object.__new__(cls)
        _share(self, data, data._requires_grad)
        self.persistent = bool(persistent)
        return self

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True):
        pass
