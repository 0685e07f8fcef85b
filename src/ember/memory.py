"""Tensors made from raw memory: ``empty_strided``, ``empty_permuted``, ``frombuffer``
and ``to_dlpack``.

>>> import ember
>>> ember.empty_strided((2, 3), (1, 2)).stride()
(1, 2)
>>> ember.frombuffer(bytearray(b"\\x01\\x00\\x02\\x00"), dtype=ember.int16)
tensor([1, 2], dtype=ember.int16)
"""
from __future__ import annotations

import operator

import numpy as np

from . import backend, dtypes
from .creation import empty
from .tensor import Tensor

__all__ = ["empty_strided", "empty_permuted", "frombuffer", "to_dlpack"]


def _ints(values, what: str) -> tuple:
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of ints, got {values!r}") from None


def empty_strided(size, stride, *, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False) -> Tensor:
    """An uninitialized tensor with the given sizes and strides (in elements), over just
    enough memory for them.

    >>> import ember
    >>> x = ember.empty_strided((2, 3), (1, 2))
    >>> x.shape, x.stride()
    (ember.Size([2, 3]), (1, 2))
    """
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality "
                           f"of strides ({len(stride)})")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    elements = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    storage = empty(elements, dtype=dtype, device=device)
    data = storage._data
    view = backend.as_strided(data, size, tuple(s * data.itemsize for s in stride))
    out = Tensor._make(view, storage._device)
    return out.requires_grad_(requires_grad) if requires_grad else out


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False) -> Tensor:
    """An uninitialized tensor of shape ``size`` whose dims are laid out in memory in the
    order ``physical_layout`` (outermost first): ``empty_permuted((2, 3, 4), (0, 2, 1))``
    is ``empty(2, 4, 3).permute(0, 2, 1)``.

    >>> import ember
    >>> ember.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    (12, 1, 3)
    """
    size, order = _ints(size, "size"), _ints(physical_layout, "physical_layout")
    if len(size) != len(order):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; "
            f"i.e. len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    if sorted(order) != list(range(len(size))):
        if len(set(order)) != len(order):
            raise RuntimeError("Duplicate dim not allowed")
        raise IndexError(f"physical_layout {list(order)} is not a permutation of the dims of "
                         f"a {len(size)}-d tensor")
    physical = empty(tuple(size[d] for d in order), dtype=dtype, device=device)
    inverse = [0] * len(order)
    for position, d in enumerate(order):
        inverse[d] = position
    out = Tensor._make(physical._data.transpose(inverse), physical._device)
    return out.requires_grad_(requires_grad) if requires_grad else out


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D CPU tensor over the memory of a Python buffer (``bytearray``, ``array``,
    ``memoryview``...): writing to one shows in the other.

    >>> import ember
    >>> raw = bytearray(4)
    >>> t = ember.frombuffer(raw, dtype=ember.uint8)
    >>> t[1] = 7
    >>> raw
    bytearray(b'\\x00\\x07\\x00\\x00')
    """
    d = dtypes.to_dtype(dtype)
    view = memoryview(buffer).cast("B")
    length = view.nbytes
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    itemsize = np.dtype(d.numpy).itemsize
    if count < 0:
        if (length - offset) % itemsize:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset "
                             f"({offset} bytes) must be a multiple of element size "
                             f"({itemsize})")
        count = (length - offset) // itemsize
    elif offset + count * itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    array = np.frombuffer(view, dtype=d.numpy, count=count, offset=offset)
    out = Tensor._make(array, backend.CPU)
    return out.requires_grad_(requires_grad) if requires_grad else out


def to_dlpack(tensor: Tensor):
    """A DLPack capsule sharing ``tensor``'s memory, for ``from_dlpack`` in NumPy, CuPy,
    PyTorch or JAX.

    >>> import ember
    >>> capsule = ember.to_dlpack(ember.arange(3))
    >>> type(capsule).__name__
    'PyCapsule'
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): expected an ember.Tensor, got {type(tensor).__name__}")
    return tensor.__dlpack__()
