"""``ember.cpu.amp``: PyTorch's older CPU spelling of autocast."""
from __future__ import annotations

from .. import dtypes
from . import autocast_mode

__all__ = ["autocast"]


class autocast(autocast_mode.autocast):
    """``ember.autocast("cpu", ...)``.

    >>> import ember
    >>> ember.cpu.amp.autocast().fast_dtype
    ember.bfloat16
    """

    def __init__(self, enabled: bool = True, dtype=dtypes.bfloat16,
                 cache_enabled: bool = True):
        super().__init__("cpu", dtype, enabled, cache_enabled)
