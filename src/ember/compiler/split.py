"""A large copy of a replay split in two, one half on a helper thread.

A gradient that is a transposed product (a weight's, in a linear layer) is copied to
C order when it becomes ``.grad``; NumPy copies on one core, releasing the GIL, so two
halves along the first axis on two threads take about half as long. The bytes copied are
the same either way.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

# Whether replays split copies (more than one CPU thread); set by each lowering
ENABLED = False
_COPY_BYTES = 1 << 20
_pool = None
_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ember-replay")
    return _pool


def copy(array):
    """``array.copy(order="C")``; a large array is copied in two halves."""
    if not ENABLED or array.nbytes < _COPY_BYTES or array.ndim == 0 or array.shape[0] < 2:
        return array.copy(order="C")
    out = np.empty(array.shape, array.dtype)
    half = array.shape[0] // 2

    def first():
        out[:half] = array[:half]

    future = _executor().submit(first)
    try:
        out[half:] = array[half:]
    finally:
        future.result()
    return out
