"""Array-level collectives for ember's own callers (DistributedDataParallel): raw NumPy or
CuPy arrays, moved to and from the host when the group's backend works on the host."""
from __future__ import annotations

import numpy as np

from .. import backend
from ._group import ReduceOp, Work


def _to_group(group, array):
    """(array the backend can use, copy back into ``array``)."""
    on_host = isinstance(array, np.ndarray)
    if group.device_type == "cpu" and not on_host:
        host = backend.cuda.to_host(array)

        def copy_back():
            array[...] = backend.move(host, backend.CPU, backend.device_of_array(array))
        return host, copy_back
    if group.device_type == "cuda" and on_host:
        moved = backend.move(array, backend.CPU, group.device)

        def copy_back():
            array[...] = backend.cuda.to_host(moved)
        return moved, copy_back
    return array, None


def all_reduce_average(group, flat) -> Work:
    """Start averaging the contiguous ``flat`` across ranks, in place; returns the Work."""
    target, copy_back = _to_group(group, flat)
    work = group.all_reduce(target, ReduceOp.AVG)
    if copy_back is not None:
        previous = work._finish

        def finish():
            if previous is not None:
                previous()
            copy_back()
        work._finish = finish
    return work


def all_reduce_max(group, array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    target, copy_back = _to_group(group, array)
    group.all_reduce(target, ReduceOp.MAX).wait()
    if copy_back is not None:
        copy_back()
    return array


def all_gather_array(group, array: np.ndarray) -> np.ndarray:
    """Every rank's ``array``, stacked in rank order (a host array)."""
    array = np.ascontiguousarray(array)
    out = np.empty((group.size(),) + array.shape, dtype=array.dtype)
    source, _ = _to_group(group, array)
    target, copy_back = _to_group(group, out)
    group.all_gather(target, source).wait()
    if copy_back is not None:
        copy_back()
    return out


def broadcast_array(group, flat, src: int):
    """``flat`` (contiguous) overwritten with rank ``src``'s values; returns it."""
    target, copy_back = _to_group(group, flat)
    group.broadcast(target, src).wait()
    if copy_back is not None:
        copy_back()
    return flat
