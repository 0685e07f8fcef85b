"""``ember.autograd.anomaly_mode``: PyTorch's module path for anomaly detection.

>>> from ember.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
>>> with set_detect_anomaly(True):
...     ember.autograd.anomaly.is_anomaly_enabled()
True
"""
from __future__ import annotations

from .anomaly import detect_anomaly, set_detect_anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly"]
