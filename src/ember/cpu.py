"""``ember.cpu``: the CPU's PyTorch-named front (``ember.cpu.amp.autocast``)."""
from __future__ import annotations

from .amp import cpu as amp

__all__ = ["amp", "is_available"]


def is_available() -> bool:
    """Always True: ember always runs on the CPU."""
    return True
