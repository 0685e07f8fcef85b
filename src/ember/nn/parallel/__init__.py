"""``ember.nn.parallel``: DataParallel and DistributedDataParallel, at PyTorch's paths."""
from ..modules.parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
