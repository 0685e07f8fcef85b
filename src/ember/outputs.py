"""``out=`` and ``size=``: how public functions get PyTorch's ``out`` and ``size`` keywords.

``register_op`` wraps each function of the ``ember``, ``linalg`` and ``special`` namespaces
that has no ``out`` of its own: the op runs as usual, then its result is written into
``out`` (resized when its shape differs, as PyTorch does) and ``out`` is returned.

>>> import ember
>>> z = ember.empty(3)
>>> ember.add(ember.ones(3), 2, out=z) is z
True
>>> z
tensor([3., 3., 3.])
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Callable

from . import dtypes
from .grad_mode import is_grad_enabled
from .tensor import Tensor

__all__ = ["with_out", "write_out", "sized", "out_keyword"]


def _write_one(name: str, out, result) -> Tensor:
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if not isinstance(result, Tensor):
        raise TypeError(f"{name}(): does not return a tensor, so out= does not apply")
    if out.device != result.device:
        raise RuntimeError(f"{name}(): expected out tensor on {result.device}, "
                           f"but got it on {out.device}")
    if not dtypes.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {result.dtype} can't be cast to the desired output "
                           f"type {out.dtype}")
    if out.shape == result.shape:
        out.copy_(result)
        return out
    if out.numel() != 0:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(out.shape)}, which does not match the required output shape "
            f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch "
            "release outputs will not be resized unless they have zero elements. You can "
            "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
            "t.resize_(0).", UserWarning, stacklevel=4)
    out.data = result.detach().to(out.dtype)
    return out


def write_out(name: str, out, result):
    """Write ``result`` (a Tensor or a tuple of Tensors) into ``out``; return ``out``."""
    if is_grad_enabled():
        results = result if isinstance(result, tuple) else (result,)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if any(isinstance(t, Tensor) and t.requires_grad for t in (*results, *outs)):
            raise RuntimeError(
                f"{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad.")
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} "
                            "Tensors")
        return type(result)(*(_write_one(name, o, r) for o, r in zip(out, result))) \
            if hasattr(result, "_fields") else tuple(
                _write_one(name, o, r) for o, r in zip(out, result))
    return _write_one(name, out, result)


def _factory_defaults(kwargs: dict, out) -> dict:
    """A factory given ``out`` and no dtype/device makes ``out``'s, as PyTorch does."""
    if isinstance(out, Tensor):
        kwargs.setdefault("dtype", out.dtype)
        kwargs.setdefault("device", out.device)
    return kwargs


def with_out(function: Callable, name: str, factory: bool = False) -> Callable:
    """``function`` with a keyword-only ``out=None``; the function itself when it has one.
    ``factory``: without dtype=/device=, the result takes ``out``'s."""
    try:
        sig = inspect.signature(function)
    except (TypeError, ValueError):
        return function
    if "out" in sig.parameters or any(
            p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return function

    @functools.wraps(function)
    def public(*args, out=None, **kwargs):
        if factory and out is not None:
            kwargs = _factory_defaults(kwargs, out)
        result = function(*args, **kwargs)
        return result if out is None else write_out(name, out, result)

    params = list(sig.parameters.values())
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    public.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    return public


def out_keyword(function: Callable) -> Callable:
    """Decorator form of ``with_out`` for the factories outside the op registry."""
    return with_out(function, function.__name__, factory=True)


def sized(function: Callable) -> Callable:
    """A factory taking its shape as ``*size`` that also accepts PyTorch's ``size=`` keyword
    (``randn(size=(2, 3))``) and ``out=``.

    >>> import ember
    >>> ember.zeros(size=(2, 3)).shape
    ember.Size([2, 3])
    """
    name = function.__name__
    sig = inspect.signature(function)

    @functools.wraps(function)
    def public(*size_args, size=None, out=None, **kwargs):
        if size is not None:
            if size_args:
                raise TypeError(f"{name}() received an invalid combination of arguments: "
                                "size given both positionally and as size=")
            size_args = (size,)
        if out is not None:
            kwargs = _factory_defaults(kwargs, out)
        result = function(*size_args, **kwargs)
        return result if out is None else write_out(name, out, result)

    params = [p for p in sig.parameters.values() if p.kind is not p.VAR_POSITIONAL
              and p.name != "out"]
    params.insert(0, inspect.Parameter("size_args", inspect.Parameter.VAR_POSITIONAL))
    params.insert(1, inspect.Parameter("size", inspect.Parameter.KEYWORD_ONLY, default=None))
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    public.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    return public
