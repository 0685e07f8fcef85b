"""Padding modules: constant (zero), reflection, replication and circular padding of the
last 1, 2 or 3 dimensions, through ``F.pad``."""
from __future__ import annotations

from .. import functional as F
from ._utils import _ntuple
from .module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


class _PadNd(Module):
    """``padding`` is an int (every side) or (left, right[, top, bottom[, front, back]]),
    the last dimension first, as in F.pad."""

    _dims = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(2 * self._dims)(padding)
        if len(self.padding) != 2 * self._dims:
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of "
                             f"{2 * self._dims} ints, got {padding}")

    def forward(self, input):
        return F.pad(input, self.padding, mode=self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, mode="constant", value=self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dimension with ``value``."""

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dimensions with ``value``."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dimensions with ``value``."""

    _dims = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dimension with zeros."""

    _dims = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last two dimensions with zeros."""

    _dims = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last three dimensions with zeros."""

    _dims = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dimension with its mirror image (edge not repeated)."""

    _dims, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last two dimensions with their mirror image."""

    _dims, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pad the last three dimensions with their mirror image."""

    _dims, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dimension by repeating the edge value."""

    _dims, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last two dimensions by repeating the edge values."""

    _dims, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last three dimensions by repeating the edge values."""

    _dims, _mode = 3, "replicate"


class CircularPad1d(_PadNd):
    """Pad the last dimension by wrapping around."""

    _dims, _mode = 1, "circular"


class CircularPad2d(_PadNd):
    """Pad the last two dimensions by wrapping around."""

    _dims, _mode = 2, "circular"


class CircularPad3d(_PadNd):
    """Pad the last three dimensions by wrapping around."""

    _dims, _mode = 3, "circular"
