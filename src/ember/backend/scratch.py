"""Reused temporary buffers for large CPU kernels. A fresh multi-megabyte NumPy array
costs a page fault per 4 KiB page the first time it is written (the allocator hands big
blocks back to the system when they are freed), which in a training step of a small CNN
adds up to thousands of faults; a kernel's temporaries that never leave it can be kept
and reused instead.

Buffers live per thread (so kernels in different threads never share one), keyed by the
caller's name for the buffer, its shape and dtype; the least recently used are dropped
beyond ``LIMIT_BYTES`` per thread. Only NumPy arrays are kept: CuPy has its own pool."""
from __future__ import annotations

import threading

import numpy as np

LIMIT_BYTES = 64 << 20
MIN_BYTES = 1 << 20  # smaller arrays come from the allocator's reused memory anyway
_local = threading.local()


def empty(xp, name: str, shape: tuple, dtype):
    """An array of ``shape`` and ``dtype`` with undefined contents, valid until the same
    ``name``, shape and dtype is asked for again in this thread: only for temporaries
    that no result keeps."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    if xp is not np or size < MIN_BYTES or size > LIMIT_BYTES:
        return xp.empty(shape, dtype=dtype)
    buffers = getattr(_local, "buffers", None)
    if buffers is None:
        buffers = _local.buffers = {}
    key = (name, tuple(shape), dtype)
    buffer = buffers.pop(key, None)
    if buffer is None:
        buffer = np.empty(shape, dtype=dtype)
        total = size + sum(b.nbytes for b in buffers.values())
        while buffers and total > LIMIT_BYTES:
            total -= buffers.pop(next(iter(buffers))).nbytes   # the least recently used
    buffers[key] = buffer                                      # now the most recent
    return buffer


def clear() -> None:
    """Drop this thread's buffers."""
    _local.buffers = {}


def subtract_scaled(xp, target, scale: float, value) -> None:
    """``target -= scale * value`` in place, the product in a reused buffer (an optimizer's
    update of a large parameter would otherwise fault in a fresh temporary each step)."""
    if type(scale) not in (float, int) or value.shape != target.shape or \
            value.dtype != target.dtype:
        target -= scale * value
        return
    product = empty(xp, "subtract_scaled", value.shape, value.dtype)
    xp.multiply(value, scale, out=product)
    target -= product
