"""The CPU backend: NumPy. Device-specific helpers that NumPy and CuPy spell differently."""
from __future__ import annotations

import numpy as np

xp = np


def scatter_add(target, index, values) -> None:
    """``target[index] += values`` with repeated indices accumulated (unbuffered)."""
    np.add.at(target, index, values)


def to_host(array):
    return array


def from_host(array, index=None):
    return array


def view_reshape(array, shape):
    """Reshape without copying; ValueError when the strides don't allow it."""
    return np.reshape(array, shape, copy=False)


def scatter_reduce(target, index, values, op: str) -> None:
    """``target[index] = op(target[index], values)`` with repeated indices all applied;
    op is one of 'add', 'multiply', 'maximum', 'minimum' (NumPy's unbuffered ufunc.at)."""
    getattr(np, op).at(target, index, values)


def as_strided(array, shape, strides, writeable: bool = True):
    """A view of ``array``'s memory with the given shape and byte strides."""
    return np.lib.stride_tricks.as_strided(array, shape, strides, writeable=writeable)


def scipy_special(name: str):
    """``scipy.special.<name>``; SciPy is an optional extra, so its absence is an
    ImportError that says how to install it."""
    try:
        import scipy.special
    except ImportError as error:
        raise ImportError(f"this special function needs SciPy (scipy.special.{name}): "
                          "pip install scipy, or pip install 'ember[special]'") from error
    return getattr(scipy.special, name)


def storage_of(array):
    """The 1-D array over the whole memory block ``array`` lives in, and ``array``'s first
    element's offset in it (in elements); None when the block isn't one dense run."""
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    start = root.__array_interface__["data"][0]
    return _flat(root, array, array.__array_interface__["data"][0] - start)


def _flat(root, array, byte_offset: int):
    if root.dtype != array.dtype or not (root.flags.c_contiguous or root.flags.f_contiguous):
        return None
    flat = root.reshape(-1, order="A")
    return flat, byte_offset // array.itemsize
