"""Fractional max pooling modules (``nn.functional.fractional_max_pool2d`` / ``3d``)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


class _FractionalMaxPoolNd(Module):
    _dims = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None):
        super().__init__()
        n = self._dims
        self.kernel_size = kernel_size if isinstance(kernel_size, tuple) else (kernel_size,) * n
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = (output_size if output_size is None or isinstance(output_size, tuple)
                            else (output_size,) * n)
        self.output_ratio = (output_ratio if output_ratio is None
                             or isinstance(output_ratio, tuple) else (output_ratio,) * n)
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             f"ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None:
            for ratio in self.output_ratio:
                if not 0 < ratio < 1:
                    raise ValueError(f"output_ratio must be between 0 and 1 (got "
                                     f"{output_ratio})")

    def forward(self, input):
        function = F.fractional_max_pool2d if self._dims == 2 else F.fractional_max_pool3d
        return function(input, self.kernel_size, self.output_size, self.output_ratio,
                        self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, H, W) input: windows of ``kernel_size`` at
    pseudo-random starts, to ``output_size`` or ``output_ratio`` (in (0, 1)) of the input.

    >>> import ember
    >>> pool = ember.nn.FractionalMaxPool2d(3, output_ratio=0.5)
    >>> pool(ember.randn(2, 4, 10, 12)).shape
    ember.Size([2, 4, 5, 6])
    """

    _dims = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, T, H, W) input.

    >>> import ember
    >>> pool = ember.nn.FractionalMaxPool3d(2, output_size=(2, 3, 3))
    >>> pool(ember.randn(1, 2, 5, 6, 7)).shape
    ember.Size([1, 2, 2, 3, 3])
    """

    _dims = 3
