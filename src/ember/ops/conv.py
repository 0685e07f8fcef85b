"""Convolutions (conv1d/2d/3d, conv_transpose1d/2d), unfold/fold: vectorized with strided windows and matrix products."""
from __future__ import annotations
