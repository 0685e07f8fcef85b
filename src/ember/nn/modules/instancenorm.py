"""PyTorch's module path for the instance norms; they live in normalization.py."""
from .normalization import (  # noqa: F401
                            InstanceNorm1d,
                            InstanceNorm2d,
                            InstanceNorm3d,
                            LazyInstanceNorm1d,
                            LazyInstanceNorm2d,
                            LazyInstanceNorm3d,
                            _InstanceNorm,
)
