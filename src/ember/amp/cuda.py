"""``ember.cuda.amp``: PyTorch's older CUDA spellings of autocast and GradScaler."""
from __future__ import annotations

from .. import dtypes
from . import autocast_mode, grad_scaler

__all__ = ["autocast", "GradScaler"]


class autocast(autocast_mode.autocast):
    """``ember.autocast("cuda", ...)``.

    >>> import ember
    >>> ember.cuda.amp.autocast(enabled=False).device_type
    'cuda'
    """

    def __init__(self, enabled: bool = True, dtype=dtypes.float16,
                 cache_enabled: bool = True):
        super().__init__("cuda", dtype, enabled, cache_enabled)


class GradScaler(grad_scaler.GradScaler):
    """``ember.amp.GradScaler("cuda", ...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
