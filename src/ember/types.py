"""``ember.types``: the type aliases PyTorch's annotations use (``torch.types``), for code
that annotates with them.

>>> import ember
>>> from ember.types import Number
>>> isinstance(2.5, Number.__args__)
True
"""
from __future__ import annotations

import os
from typing import IO, Any, Union

from .backend.device import device as _device
from .tensor import Size, Tensor

__all__ = ["Number", "Device", "FileLike", "IntLikeType", "FloatLikeType", "BoolLikeType",
           "Size", "Tensor", "Storage"]

Number = Union[int, float, bool]
Device = Union[_device, str, int, None]
FileLike = Union[str, os.PathLike, IO[bytes]]
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
# ember tensors own NumPy/CuPy arrays, not storages: annotations naming one accept any
Storage = Any
