"""Process-wide switches with PyTorch's names: CPU threads, determinism, matmul precision,
warnings, the default tensor type, and the memory-format and layout tags.

>>> import ember
>>> before = ember.get_num_threads()
>>> ember.set_num_threads(1)
>>> ember.get_num_threads()
1
>>> ember.set_num_threads(before)
>>> ember.use_deterministic_algorithms(True)
>>> ember.are_deterministic_algorithms_enabled()
True
>>> ember.use_deterministic_algorithms(False)
"""
from __future__ import annotations

import numbers
import os
import warnings

from . import dtypes

__all__ = [
    "AcceleratorError", "OutOfMemoryError", "get_num_threads", "set_num_threads",
    "get_num_interop_threads", "set_num_interop_threads", "init_num_threads",
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "get_deterministic_debug_mode",
    "set_deterministic_debug_mode", "get_float32_matmul_precision",
    "set_float32_matmul_precision", "set_flush_denormal", "set_warn_always",
    "is_warn_always_enabled", "set_default_tensor_type", "memory_format", "contiguous_format",
    "preserve_format", "channels_last", "channels_last_3d", "legacy_contiguous_format",
    "layout", "strided",
]


class AcceleratorError(RuntimeError):
    """An error the accelerator (CUDA) reported, as ``torch.AcceleratorError``."""


class OutOfMemoryError(RuntimeError):
    """The device ran out of memory, as ``torch.OutOfMemoryError``."""


class _State:
    threads: int | None = None          # None: whatever the BLAS library chose
    interop_threads: int | None = None
    deterministic = False
    warn_only = False
    matmul_precision = "highest"
    warn_always = False
    warned_threads = False


_state = _State()


def _positive_int(value, name: str) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise RuntimeError(f"{name} expects an int, but got {type(value).__name__}")
    if value <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return int(value)


def _threadpoolctl():
    try:
        import threadpoolctl
    except ImportError:
        return None
    return threadpoolctl


def get_num_threads() -> int:
    """The number of threads NumPy's BLAS uses for ember's CPU matrix products.

    Read from the BLAS library through ``threadpoolctl`` when it is installed; otherwise
    the last value given to :func:`set_num_threads` (or the CPU count).
    """
    control = _threadpoolctl()
    if control is not None:
        counts = [pool["num_threads"] for pool in control.threadpool_info()
                  if pool.get("user_api") == "blas"]
        if counts:
            return int(max(counts))
    return _state.threads or os.cpu_count() or 1


def set_num_threads(int) -> None:
    """Use ``int`` threads for CPU matrix products (NumPy's BLAS).

    The BLAS thread pool is limited through ``threadpoolctl`` (``pip install
    threadpoolctl``); without it the number is recorded and a warning says it has no
    effect.

    >>> import ember
    >>> before = ember.get_num_threads()
    >>> ember.set_num_threads(2)
    >>> ember.get_num_threads() <= 2
    True
    >>> ember.set_num_threads(before)
    """
    count = _positive_int(int, "set_num_threads")
    _state.threads = count
    control = _threadpoolctl()
    if control is not None:
        control.threadpool_limits(limits=count, user_api="blas")
    elif not _state.warned_threads:
        _state.warned_threads = True
        warnings.warn("set_num_threads() has no effect on NumPy's BLAS threads without "
                      "threadpoolctl: pip install threadpoolctl", stacklevel=2)


def get_num_interop_threads() -> int:
    """Threads for running independent ops in parallel: ember runs ops one after another
    in the calling thread, so this is 1 unless :func:`set_num_interop_threads` set it."""
    return _state.interop_threads or 1


def set_num_interop_threads(int) -> None:
    """Record the inter-op thread count. As in PyTorch it can be set once; ember runs
    ops in the calling thread, so the value is only reported back."""
    count = _positive_int(int, "set_num_interop_threads")
    if _state.interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _state.interop_threads = count


def init_num_threads() -> None:
    """Apply the thread count chosen by :func:`set_num_threads` in this thread (PyTorch
    calls it in new worker threads)."""
    if _state.threads is not None:
        control = _threadpoolctl()
        if control is not None:
            control.threadpool_limits(limits=_state.threads, user_api="blas")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms. ember's CPU ops are deterministic already (NumPy
    kernels run in a fixed order); the setting is kept for code that reads it back.

    >>> import ember
    >>> ember.use_deterministic_algorithms(True, warn_only=True)
    >>> ember.get_deterministic_debug_mode()
    1
    >>> ember.use_deterministic_algorithms(False)
    """
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, "
                        f"not {type(mode).__name__}")
    _state.deterministic = mode
    _state.warn_only = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` is on."""
    return _state.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic mode only warns (``warn_only=True``)."""
    return _state.warn_only


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn) or 2 (error): the deterministic mode as one number."""
    if not _state.deterministic:
        return 0
    return 1 if _state.warn_only else 2


def set_deterministic_debug_mode(debug_mode) -> None:
    """Set deterministic mode by name ("default", "warn", "error") or number (0, 1, 2)."""
    names = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    elif not isinstance(debug_mode, numbers.Integral) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_float32_matmul_precision() -> str:
    """'highest', 'high' or 'medium'. ember's float32 matrix products always run in full
    float32 (NumPy has no TF32 or bfloat16-pass kernels), whatever is set."""
    return _state.matmul_precision


def set_float32_matmul_precision(precision: str) -> None:
    """Record the float32 matmul precision ('highest', 'high' or 'medium'); another value
    warns and changes nothing, as in PyTorch."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", stacklevel=2)
        return
    _state.matmul_precision = precision


def set_flush_denormal(mode: bool) -> bool:
    """Returns False: NumPy gives no control over the CPU's flush-to-zero mode, so
    denormal numbers stay as they are (PyTorch returns False where it is unsupported)."""
    return False


def set_warn_always(b: bool) -> None:
    """Repeat warnings that are normally shown once per process."""
    _state.warn_always = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether :func:`set_warn_always` is on."""
    return _state.warn_always


def set_default_tensor_type(t) -> None:
    """Deprecated: set the default floating-point dtype from a tensor type
    (``ember.DoubleTensor`` or the string ``'torch.DoubleTensor'``).

    >>> import ember
    >>> ember.set_default_tensor_type(ember.DoubleTensor)
    >>> ember.tensor([1.5]).dtype
    ember.float64
    >>> ember.set_default_tensor_type("torch.FloatTensor")
    """
    warnings.warn("ember.set_default_tensor_type() is deprecated, as in PyTorch 2.1; use "
                  "ember.set_default_dtype() instead.", UserWarning, stacklevel=2)
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module not in ("torch", "ember") or name not in _TENSOR_TYPES:
            raise TypeError(f"invalid type: '{t}'")
        dtype = _TENSOR_TYPES[name]
    else:
        dtype = getattr(t, "dtype", None)
        if not isinstance(dtype, dtypes.dtype) or getattr(t, "__name__", "") not in \
                _TENSOR_TYPES:
            raise TypeError(f"invalid type: {t!r}")
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.set_default_dtype(dtype)


_TENSOR_TYPES = {"FloatTensor": dtypes.float32, "DoubleTensor": dtypes.float64,
                 "HalfTensor": dtypes.float16, "BFloat16Tensor": dtypes.bfloat16,
                 "LongTensor": dtypes.int64, "IntTensor": dtypes.int32,
                 "ShortTensor": dtypes.int16, "CharTensor": dtypes.int8,
                 "ByteTensor": dtypes.uint8, "BoolTensor": dtypes.bool}


class memory_format:
    """How a tensor's elements are laid out in memory (``x.to(memory_format=...)``,
    ``empty(..., memory_format=...)``). ember's arrays are row-major; the tags exist so
    code that names them runs."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return f"ember.{self._name}"

    def __reduce__(self):
        return self._name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
legacy_contiguous_format = contiguous_format  # PyTorch's alias of the same object


class layout:
    """How a tensor is stored: ember has the dense ``ember.strided`` layout only."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return f"ember.{self._name}"

    def __reduce__(self):
        return self._name


strided = layout("strided")
