"""The torch-level window factories (``ember.hann_window``, ...): ``periodic=True`` (the
default) is ``sym=False`` of ``ember.signal.windows``.

>>> import ember
>>> ember.hann_window(4)
tensor([0.0000, 0.5000, 1.0000, 0.5000])
>>> ember.hann_window(5, periodic=False)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..creation import tensor

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]


def _length(name: str, window_length, dtype):
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    dtype = dtypes.get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    return dtype


def _n(window_length: int, periodic: bool):
    """The positions and the denominator ``N - 1`` (``N`` when periodic)."""
    return np.arange(window_length, dtype=np.float64), window_length - (0 if periodic else 1)


def _done(values, dtype, device, requires_grad):
    return tensor(np.asarray(values, dtype=np.float64), dtype=dtype, device=device,
                  requires_grad=requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """``alpha - beta cos(2 pi n / (N - 1))``, ``N`` in place of ``N - 1`` when periodic.

    >>> import ember
    >>> ember.hamming_window(3, periodic=False)
    tensor([0.0800, 1.0000, 0.0800])
    """
    dtype = _length("hamming_window", window_length, dtype)
    if window_length <= 1:
        return _done(np.ones(window_length), dtype, device, requires_grad)
    n, d = _n(window_length, periodic)
    return _done(alpha - beta * np.cos(2 * math.pi * n / d), dtype, device, requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """``0.5 - 0.5 cos(2 pi n / (N - 1))``, ``N`` in place of ``N - 1`` when periodic.

    >>> import ember
    >>> ember.hann_window(3, periodic=False)
    tensor([0., 1., 0.])
    """
    dtype = _length("hann_window", window_length, dtype)
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``.

    >>> import ember
    >>> ember.blackman_window(5, periodic=False)[1:4]
    tensor([0.3400, 1.0000, 0.3400])
    """
    dtype = _length("blackman_window", window_length, dtype)
    if window_length <= 1:
        return _done(np.ones(window_length), dtype, device, requires_grad)
    n, d = _n(window_length, periodic)
    w = 0.42 - 0.5 * np.cos(2 * math.pi * n / d) + 0.08 * np.cos(4 * math.pi * n / d)
    return _done(w, dtype, device, requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The triangular window ``1 - |2 n / (N - 1) - 1|``.

    >>> import ember
    >>> ember.bartlett_window(5, periodic=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    dtype = _length("bartlett_window", window_length, dtype)
    if window_length <= 1:
        return _done(np.ones(window_length), dtype, device, requires_grad)
    n, d = _n(window_length, periodic)
    return _done(1 - np.abs(2 * n / d - 1), dtype, device, requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """``I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)``.

    >>> import ember
    >>> ember.kaiser_window(3, periodic=False, beta=0.0)
    tensor([1., 1., 1.])
    """
    dtype = _length("kaiser_window", window_length, dtype)
    if window_length <= 1:
        return _done(np.ones(window_length), dtype, device, requires_grad)
    n, d = _n(window_length, periodic)
    ratio = 2 * n / d - 1
    w = np.i0(beta * np.sqrt(np.maximum(1 - ratio * ratio, 0.0))) / np.i0(beta)
    return _done(w, dtype, device, requires_grad)
