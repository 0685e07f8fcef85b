"""Tensor methods that make new tensors (``x.new_zeros(2, 3)``): ember.creation's
functions, bound through the registry like every other method."""
from __future__ import annotations

from .. import creation
from .registry import register_op

for _factory in (creation.new_tensor, creation.new_zeros, creation.new_ones,
                 creation.new_empty, creation.new_full, creation.pin_memory):
    register_op(_factory.__name__, methods=(_factory.__name__,), internal=True)(_factory)
