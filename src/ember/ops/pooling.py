"""Pooling: max/avg/adaptive/lp pooling, max_unpool, interpolate, pixel_shuffle."""
from __future__ import annotations
