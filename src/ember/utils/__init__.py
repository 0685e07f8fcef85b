"""``ember.utils``: data loading and other utilities."""
from . import (
    checkpoint,
    data,
)
