"""``ember.signal``: signal-processing helpers; ``ember.signal.windows`` holds the window
functions (``hann``, ``kaiser``, ``gaussian``, ...).

>>> import ember
>>> ember.signal.windows.hann(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
from . import windows

__all__ = ["windows"]
