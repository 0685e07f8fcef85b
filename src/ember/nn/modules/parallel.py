"""DataParallel, kept so PyTorch code that wraps its model still runs."""
from __future__ import annotations

from .module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Wraps ``module`` as PyTorch's DataParallel does (state_dict keys gain the
    'module.' prefix), but runs it on the device its parameters are on: ember does not
    split a batch across GPUs."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
