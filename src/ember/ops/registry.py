"""The op registry: every public op registers here once, with its test spec.

``@register_op`` names the public function (``ember.exp``, ``ember.linalg.inv``,
``ember.nn.functional.relu``), binds its Tensor methods, operators (``__mul__``,
``__rmul__``) and in-place forms (``mul_``, ``__imul__``), and records how to test it:
sample inputs, the PyTorch reference, and whether it is differentiable (twice). The op
table in tests/ops/test_op_table.py reads ``OPS``; adding an op adds its tests.
"""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from ..amp.autocast_mode import wrap as _autocast_wrap
from ..autograd.function import fast_lane
from ..outputs import with_out
from ..tensor import _F, Tensor, apply_inplace, check_no_overlap

__all__ = ["register_op", "OPS", "OpInfo", "Sample", "NAMESPACES", "binary_operator"]


@dataclass
class Sample:
    """One call of an op for the tests: positional and keyword arguments (Tensors made by
    the test's ``make`` on the device under test)."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    name: str = ""


@dataclass
class OpInfo:
    name: str                        # public name, e.g. "exp" or "linalg.inv"
    function: Callable               # the public function
    namespace: str                   # "ember", "linalg", "nn.functional", "special", "fft"
    methods: tuple                   # Tensor method names bound to it
    samples: Callable | None         # samples(make) -> list[Sample]; None: not in the table
    torch: Any                       # PyTorch reference: dotted name or callable(torch, ...)
    differentiable: bool             # gradcheck applies
    gradgrad: bool                   # gradgradcheck applies
    float32: bool                    # also compare with PyTorch in float32
    atol: float
    rtol: float
    output_process: Callable | None  # maps outputs before comparing (e.g. sort ambiguity)
    doc: str
    # gradcheck calls gradcheck_wrapper(function, *args, **kwargs) instead of the function:
    # ops that read only part of an input (eigh reads one triangle) are checked on a
    # symmetrized input, as PyTorch's OpInfo does. None: the function itself.
    gradcheck_wrapper: Callable | None = None
    # (kind, OpClass) when Tensor methods and the function go through the fast lane;
    # ``function.__wrapped__`` is then the general path
    fast: tuple | None = None


OPS: dict[str, OpInfo] = {}
NAMESPACES: dict[str, dict[str, Callable]] = {
    "ember": {}, "linalg": {}, "nn.functional": {}, "special": {}, "fft": {},
}

# namespaces whose functions take PyTorch's out= (nn.functional's do not)
_WITH_OUT = ("ember", "linalg", "special")


def register_op(name: str | None = None, *, namespace: str = "ember", methods=(),
                samples: Callable | None = None, torch: Any = "same",
                differentiable: bool = True, gradgrad: bool = True, float32: bool = True,
                atol: float = 1e-7, rtol: float = 1e-6, output_process=None,
                also: tuple = (), internal: bool = False, exported_in: tuple = (),
                gradcheck_wrapper: Callable | None = None, operators: tuple = (),
                reflected: tuple = (), inplace: tuple = (), fast: tuple | None = None):
    """Register a public op function.

    name: the public name (defaults to the function's); methods: Tensor method names
    ("exp", "__neg__"...); also: further names in the namespace (aliases); exported_in:
    further namespaces that offer the same function (``relu`` is ``ember.relu`` and
    ``ember.nn.functional.relu``); torch: the reference for the oracle test ("same" means
    ``torch.<namespace>.<name>``, or the Tensor method when torch has no such function;
    None means no oracle); internal: reachable from the Tensor class only (``_getitem``).
    operators: Python operators bound to the op (``__mul__``: ``x * y`` is ``mul(x, y)``);
    reflected: the swapped forms (``__rmul__``: ``2 * x`` is ``mul(2, x)``); inplace:
    methods that write the result into the tensor (``mul_``, ``__imul__``).
    fast: ``(kind, OpClass)`` or ``(kind, OpClass, kernel)`` where the plain call (float
    CPU tensors; see ``autograd.function.fast_lane``) is exactly ``OpClass.apply(...)``:
    the op is then bound through the fast lane, which makes that call in one frame;
    kernel, the NumPy function the forward computes, serves calls that record nothing.
    """

    def decorate(function: Callable) -> Callable:
        public = name or function.__name__
        if namespace != "nn.functional":
            function = _numpy_aliases(function)
        function = _autocast_wrap(public if namespace == "ember" else f"{namespace}.{public}",
                                  function)
        plain = function
        if fast is not None:
            function = functools.wraps(function)(fast_lane(fast[0], fast[1], function, *fast[2:]))
        _F[public if namespace == "ember" else f"{namespace}.{public}"] = function
        for method in methods:
            setattr(Tensor, method, function)
        for method in operators:
            if method in _UNARY_OPERATORS:
                setattr(Tensor, method, function)
            elif fast is not None:  # the lane as it is; only its way out declines
                setattr(Tensor, method, functools.wraps(plain)(fast_lane(
                    fast[0], fast[1], binary_operator(plain), *fast[2:])))
            else:
                setattr(Tensor, method, binary_operator(function))
        for method in reflected:
            swapped = binary_operator(_reflected(plain, method))
            if fast is not None:
                swapped = functools.wraps(swapped)(fast_lane("reflected", fast[1], swapped))
            setattr(Tensor, method, swapped)
        for method in inplace:
            setattr(Tensor, method, _inplace_method(method, function))
        if internal:
            return function
        exported = with_out(function, public) if namespace in _WITH_OUT else function
        NAMESPACES[namespace][public] = exported
        for alias in also:
            NAMESPACES[namespace][alias] = exported
        for other in exported_in:
            NAMESPACES[other][public] = exported
        key = public if namespace == "ember" else f"{namespace}.{public}"
        if key in OPS:
            raise RuntimeError(f"op {key} is registered twice")
        reference = torch
        if reference == "same":
            reference = key if namespace != "nn.functional" else f"nn.functional.{public}"
        OPS[key] = OpInfo(
            name=key, function=function, namespace=namespace, methods=tuple(methods),
            samples=samples, torch=reference, differentiable=differentiable,
            gradgrad=gradgrad and differentiable, float32=float32, atol=atol, rtol=rtol,
            output_process=output_process, doc=(function.__doc__ or "").strip(),
            gradcheck_wrapper=gradcheck_wrapper, fast=fast)
        return function

    return decorate


_ALIASES = (("axis", "dim"), ("keepdims", "keepdim"))


def _numpy_aliases(function: Callable) -> Callable:
    """Accept NumPy's ``axis=`` / ``keepdims=`` for ``dim`` / ``keepdim``, as PyTorch's
    functions and Tensor methods do (its ``nn.functional`` ones do not)."""
    parameters = inspect.signature(function).parameters
    aliases = tuple((alias, real) for alias, real in _ALIASES if real in parameters)
    if not aliases:
        return function
    op = function.__name__

    @functools.wraps(function)
    def with_aliases(*args, **kwargs):
        if kwargs:
            for alias, real in aliases:
                if alias in kwargs:
                    if real in kwargs:
                        raise TypeError(f"{op}(): got both '{real}' and its alias '{alias}'")
                    kwargs[real] = kwargs.pop(alias)
        return function(*args, **kwargs)

    return with_aliases


# operators bound through ``operators=`` that take no second operand
_UNARY_OPERATORS = ("__neg__", "__abs__", "__pos__", "__invert__", "__getitem__")


def binary_operator(function: Callable) -> Callable:
    """``function`` as a Python binary operator (``__mul__``, ``__rmul__``...): an operand
    it does not take (a list, None, a string: a TypeError) gives NotImplemented, so that
    Python asks the other operand, as it does for PyTorch's operators: ``[1, 2] *
    tensor(2)`` repeats the list as it would for any int, and ``tensor(1) + None`` raises
    Python's "unsupported operand type(s)" TypeError.

    >>> ember.tensor(2).__rmul__([1, 2])
    NotImplemented
    >>> [1, 2] * ember.tensor(2)
    [1, 2, 1, 2]
    """
    @functools.wraps(function)
    def operator(self, other):
        try:
            return function(self, other)
        except TypeError:
            return NotImplemented

    return operator


def _reflected(function: Callable, name: str) -> Callable:
    def method(self, other):
        return function(other, self)

    method.__name__ = name
    method.__doc__ = f"``other {name}`` with the tensor on the right: ``{function.__name__}" \
        "(other, self)``."
    return method


def _inplace_method(name: str, function: Callable) -> Callable:
    def method(self, *args, **kwargs):
        check_no_overlap(self._data, args)
        if kwargs:
            check_no_overlap(self._data, kwargs.values())
        return apply_inplace(self, function, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"In-place form of ``{function.__name__}``: writes the result into self."
    try:
        sig = inspect.signature(function)
        params = list(sig.parameters.values())
        if params and params[0].kind is params[0].POSITIONAL_OR_KEYWORD:
            params[0] = params[0].replace(name="self")
        method.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        pass
    return method


def bind_method(name: str, function: Callable) -> None:
    """A Tensor method that is not an op of its own (e.g. in-place forms)."""
    setattr(Tensor, name, function)
