"""``ember.autocast``: run chosen ops in float16/bfloat16 and others in float32.

Autocast hooks into op dispatch in one place: ``register_op`` passes every op named in
``lists.py`` through :func:`wrap`. Outside any autocast region the wrapper costs one flag
check; inside, it casts the op's floating-point Tensor arguments on the region's device
type by the op's policy, then runs the op with autocast off, so an op's own inner calls
are not cast again (as PyTorch's autocast dispatch key does).
"""
from __future__ import annotations

import functools
import threading
import warnings

from .. import detours, dtypes, grad_mode
from ..tensor import Tensor
from . import lists

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled",
           "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting"]

_DEFAULT_DTYPE = {"cpu": dtypes.bfloat16, "cuda": dtypes.float16}
_SUPPORTED = {"cpu": (dtypes.bfloat16, dtypes.float16),
              "cuda": (dtypes.float16, dtypes.bfloat16)}
# Ops that take ``dtype=``: a call that names one keeps it (PyTorch's fp32_set_opt_dtype).
_DTYPE_ARG = {"prod", "nn.functional.softmax", "nn.functional.log_softmax", "cumprod",
              "cumsum", "linalg.vector_norm", "linalg.matrix_norm", "sum", "norm"}




class _Local(threading.local):
    def __init__(self):
        self.dtype = {"cpu": None, "cuda": None}  # None: autocast off for that device type
        self.fast = dict(_DEFAULT_DTYPE)  # the dtype autocast casts to when switched on
        self.switched_on: set = set()  # device types set_autocast_enabled turned on
        self.cache_enabled = True
        self.depth = 0
        self.cache: dict = {}  # id(leaf) -> (leaf, its cast): a region casts a weight once


_LOCAL = _Local()


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` in this thread."""
    return _LOCAL.dtype.get(_check_device_type(device_type)) is not None


def get_autocast_dtype(device_type: str):
    """The dtype autocast casts to on ``device_type`` (its default when off)."""
    device_type = _check_device_type(device_type)
    return _LOCAL.dtype[device_type] or _LOCAL.fast[device_type]


def set_autocast_enabled(device_type, enabled=None) -> None:
    """Switch autocast on or off for ``device_type`` in this thread, outside any ``with``
    block (``set_autocast_enabled(True)`` alone means CUDA, as in PyTorch). Ops then cast
    to :func:`get_autocast_dtype`.

    >>> import ember
    >>> ember.set_autocast_enabled("cpu", True)
    >>> (ember.randn(2, 2) @ ember.randn(2, 2)).dtype
    ember.bfloat16
    >>> ember.set_autocast_enabled("cpu", False)
    """
    if enabled is None:
        device_type, enabled = "cuda", device_type
    device_type = _check_device_type(device_type)
    local = _LOCAL
    local.dtype[device_type] = local.fast[device_type] if enabled else None
    # ember.detours counts switched-on states; count each device type once per thread
    if enabled and device_type not in local.switched_on:
        local.switched_on.add(device_type)
        detours.enter()
    elif not enabled and device_type in local.switched_on:
        local.switched_on.discard(device_type)
        detours.leave()


def set_autocast_dtype(device_type: str, dtype) -> None:
    """The dtype autocast casts to on ``device_type`` from now on in this thread.

    >>> import ember
    >>> ember.set_autocast_dtype("cpu", ember.float16)
    >>> ember.get_autocast_dtype("cpu")
    ember.float16
    >>> ember.set_autocast_dtype("cpu", ember.bfloat16)
    """
    device_type = _check_device_type(device_type)
    if not isinstance(dtype, dtypes.dtype):
        raise TypeError(f"set_autocast_dtype(): dtype must be an ember.dtype, got "
                        f"{type(dtype).__name__}")
    local = _LOCAL
    local.fast[device_type] = dtype
    if local.dtype[device_type] is not None:
        local.dtype[device_type] = dtype


def is_autocast_cache_enabled() -> bool:
    """Whether autocast regions keep one low-precision copy of each weight (the default)."""
    return _LOCAL.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Switch autocast's weight-cast cache on or off in this thread."""
    _LOCAL.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop the low-precision weight copies autocast made in this thread."""
    _LOCAL.cache.clear()


def autocast_increment_nesting() -> int:
    """One autocast level deeper; returns the new depth (PyTorch's bookkeeping for
    hand-written autocast regions)."""
    _LOCAL.depth += 1
    return _LOCAL.depth


def autocast_decrement_nesting() -> int:
    """One autocast level out; returns the new depth. A region that reaches depth 0
    clears the cache (``if autocast_decrement_nesting() == 0: clear_autocast_cache()``)."""
    _LOCAL.depth = max(_LOCAL.depth - 1, 0)
    return _LOCAL.depth


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"ember.{old}() is deprecated. Please use ember.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def get_autocast_cpu_dtype():
    """Deprecated: ``get_autocast_dtype('cpu')``."""
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    """Deprecated: ``get_autocast_dtype('cuda')``."""
    _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_cpu_dtype(dtype) -> None:
    """Deprecated: ``set_autocast_dtype('cpu', dtype)``."""
    _deprecated("set_autocast_cpu_dtype", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype) -> None:
    """Deprecated: ``set_autocast_dtype('cuda', dtype)``."""
    _deprecated("set_autocast_gpu_dtype", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def is_autocast_cpu_enabled() -> bool:
    """Deprecated: ``is_autocast_enabled('cpu')``."""
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated: ``set_autocast_enabled('cpu', enabled)``."""
    _deprecated("set_autocast_cpu_enabled", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def _check_device_type(device_type) -> str:
    if device_type not in _DEFAULT_DTYPE:
        raise RuntimeError(f"User specified an unsupported autocast device_type "
                           f"'{device_type}'")
    return device_type


class autocast:
    """A region (``with`` block or decorator) where ops run in mixed precision.

    On ``device_type`` ('cpu' or 'cuda'), matrix products and convolutions run in
    ``dtype`` (bfloat16 by default on the CPU, float16 on CUDA); losses, reductions and
    ops that need range run in float32; ops over several inputs (``cat``, ``stack``)
    run in the widest. float64 tensors are left alone. Backward needs no region: each
    gradient comes back in its forward's dtype.

    >>> import ember
    >>> a, b = ember.randn(4, 4), ember.randn(4, 4)
    >>> with ember.autocast("cpu", dtype=ember.bfloat16):
    ...     c = a @ b
    ...     loss = ember.nn.functional.mse_loss(c, ember.zeros(4, 4))
    >>> c.dtype, loss.dtype
    (ember.bfloat16, ember.float32)
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: "
                             f"`{type(device_type)}`")
        self.device_type = _check_device_type(device_type)
        if dtype is not None and not isinstance(dtype, dtypes.dtype):
            raise ValueError(f"Expected `dtype` to be ember.dtype, but got {type(dtype)}")
        if not isinstance(enabled, bool):
            raise TypeError(f"autocast: enabled must be a bool, got {type(enabled).__name__}")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._enabled = enabled
        self._cache_enabled = cache_enabled
        if enabled and device_type == "cuda":
            from .. import cuda

            if not cuda.is_available():
                warnings.warn("User provided device_type of 'cuda', but CUDA is not "
                              "available. Disabling", stacklevel=2)
                self._enabled = False
        if self._enabled and self.fast_dtype not in _SUPPORTED[device_type]:
            names = ", ".join(repr(d) for d in _SUPPORTED[device_type])
            warnings.warn(f"In {device_type.upper()} autocast, but the target dtype is not "
                          f"supported. Disabling autocast.\n{device_type.upper()} Autocast "
                          f"only supports dtype of {names} currently.", stacklevel=2)
            self._enabled = False
        self._saved: list = []

    def __enter__(self):
        local = _LOCAL
        kind = self.device_type
        self._saved.append((local.dtype[kind], local.fast[kind], local.cache_enabled))
        local.dtype[kind] = self.fast_dtype if self._enabled else None
        local.fast[kind] = self.fast_dtype
        if self._cache_enabled is not None:
            local.cache_enabled = self._cache_enabled
        local.depth += 1
        if self._enabled:
            detours.enter()
        return self

    def __exit__(self, *exc):
        local = _LOCAL
        kind = self.device_type
        local.dtype[kind], local.fast[kind], local.cache_enabled = self._saved.pop()
        local.depth -= 1
        if local.depth == 0:
            local.cache.clear()
        if self._enabled:
            detours.leave()
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def run(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled,
                          self._cache_enabled):
                return function(*args, **kwargs)
        return run


def wrap(name: str, function):
    """The op as dispatched: ``function`` itself unless autocast lists ``name``."""
    if not lists.listed(name):
        return function
    count = detours.DETOURS  # autocast regions, anomaly mode and traces, in any thread

    @functools.wraps(function)
    def dispatch(*args, **kwargs):
        if not count.count:
            return function(*args, **kwargs)
        return _autocast_call(name, function, args, kwargs)

    return dispatch


def _autocast_call(name, function, args, kwargs):
    local = _LOCAL
    device_type = _device_type(args, kwargs)
    target = local.dtype.get(device_type) if device_type else None
    policy = lists.policy(device_type, name, args, kwargs) if target is not None else None
    if policy is None:
        return function(*args, **kwargs)
    if policy == "lower":
        to = target
    elif policy == "lower_result":
        to = dtypes.float32
    elif policy == "fp32":
        to = None if name in _DTYPE_ARG and kwargs.get("dtype") is not None \
            else dtypes.float32
    elif policy == "promote":
        to = _widest(args, kwargs, device_type, target)
    elif policy == "keep":
        to = None
    else:
        raise AssertionError(f"unknown autocast policy {policy!r}")
    if to is not None:
        args = tuple(_cast(a, to, device_type, target) for a in args)
        kwargs = {k: _cast(v, to, device_type, target) for k, v in kwargs.items()}
    saved = dict(local.dtype)
    for key in local.dtype:
        local.dtype[key] = None
    try:
        out = function(*args, **kwargs)
    finally:
        local.dtype.update(saved)
    return _cast(out, target, device_type, None) if policy == "lower_result" else out


def _tensors(args, kwargs):
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, Tensor))


def _device_type(args, kwargs):
    for t in _tensors(args, kwargs):
        return t.device.type
    return None


def _eligible(t, device_type) -> bool:
    return (t.dtype.is_floating_point and t.dtype is not dtypes.float64
            and t.device.type == device_type)


def _widest(args, kwargs, device_type, target):
    found = None
    for t in _tensors(args, kwargs):
        if _eligible(t, device_type):
            found = t.dtype if found is None else dtypes.promote_types(found, t.dtype)
    return found


def _cast(value, to, device_type, target):
    if isinstance(value, Tensor):
        if not _eligible(value, device_type) or value.dtype is to:
            return value
        local = _LOCAL
        cacheable = (local.cache_enabled and to is target and value.dtype is dtypes.float32
                     and value.requires_grad and value.is_leaf
                     and grad_mode.is_grad_enabled())
        if cacheable:
            hit = local.cache.get(id(value))
            if hit is not None and hit[0] is value:
                return hit[1]
        cast = value.to(to)
        if cacheable:
            local.cache[id(value)] = (value, cast)
        return cast
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(_cast(v, to, device_type, target) for v in value)
    return value
