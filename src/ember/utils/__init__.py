"""``ember.utils``: data loading and other utilities."""
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401
