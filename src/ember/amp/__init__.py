"""``ember.amp``: mixed precision. :class:`autocast` runs matrix products and
convolutions in float16/bfloat16 and precision-sensitive ops in float32;
:class:`GradScaler` keeps float16 gradients from underflowing. See docs/amp.md."""
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_enabled", "get_autocast_dtype"]
