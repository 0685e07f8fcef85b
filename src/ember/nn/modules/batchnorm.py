"""PyTorch's module path for the batch norms (``nn.modules.batchnorm._BatchNorm`` is what
init code tests with isinstance); they live in normalization.py."""
from .normalization import (  # noqa: F401
                            BatchNorm1d,
                            BatchNorm2d,
                            BatchNorm3d,
                            LazyBatchNorm1d,
                            LazyBatchNorm2d,
                            LazyBatchNorm3d,
                            SyncBatchNorm,
                            _BatchNorm,
                            _NormBase,
)
