"""PyTorch's module path for the instance norms; they live in normalization.py."""
from .normalization import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,  # noqa: F401
                            LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
                            _InstanceNorm)
