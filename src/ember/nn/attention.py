"""``ember.nn.attention``: choosing the kernel of ``scaled_dot_product_attention``.

PyTorch has several kernels (math, flash, memory-efficient, cuDNN) and ``sdpa_kernel`` picks
among them. ember has one, the math kernel written on NumPy/CuPy, which every backend
selection runs; the selection is checked, kept while the ``with`` block runs
(``current_backends()``) and restored after, so PyTorch code that selects a kernel runs
unchanged.

>>> import ember
>>> from ember.nn.attention import SDPBackend, sdpa_kernel, current_backends
>>> q = ember.randn(1, 2, 3, 4)
>>> with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
...     out = ember.nn.functional.scaled_dot_product_attention(q, q, q)
...     current_backends()
[<SDPBackend.FLASH_ATTENTION: 1>, <SDPBackend.MATH: 0>]
>>> out.shape
ember.Size([1, 2, 3, 4])
"""
from __future__ import annotations

import contextlib
import enum
import threading
from collections.abc import Iterable

__all__ = ["SDPBackend", "sdpa_kernel", "current_backends", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The kernels of scaled dot product attention, by PyTorch's names and values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __repr__(self) -> str:
        return f"<SDPBackend.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"SDPBackend.{self.name}"


_ALL = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH,
        SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]
_state = threading.local()


def current_backends() -> list[SDPBackend]:
    """The backends the innermost ``sdpa_kernel`` selected (all of them outside one)."""
    return list(getattr(_state, "backends", _ALL))


@contextlib.contextmanager
def sdpa_kernel(backends: SDPBackend | Iterable[SDPBackend], set_priority: bool = False):
    """Select the attention backends for the ``with`` block (a list, or one backend);
    ``set_priority`` reads the list as an order of preference. ember runs its math kernel
    for any selection.

    >>> import ember
    >>> from ember.nn.attention import SDPBackend, sdpa_kernel
    >>> with sdpa_kernel(SDPBackend.MATH):
    ...     pass
    """
    if isinstance(backends, SDPBackend):
        chosen = [backends]
    elif isinstance(backends, (list, tuple, set)) and all(
            isinstance(b, SDPBackend) for b in backends):
        chosen = list(backends)
    else:
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    if not isinstance(set_priority, bool):
        raise TypeError(f"sdpa_kernel(): set_priority must be a bool, got "
                        f"{type(set_priority).__name__}")
    previous = getattr(_state, "backends", None)
    _state.backends = list(dict.fromkeys(chosen))
    try:
        yield {}
    finally:
        if previous is None:
            del _state.backends
        else:
            _state.backends = previous
