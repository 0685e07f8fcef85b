"""Loss functions of ember.nn.functional."""
from __future__ import annotations
