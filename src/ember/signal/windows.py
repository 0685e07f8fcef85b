"""``ember.signal.windows``: window functions with ``torch.signal.windows``'s names and
values. ``sym=True`` (the default) gives a symmetric window for filter design;
``sym=False`` a periodic one for spectral analysis (the first ``M`` points of the
symmetric window of ``M + 1``).

>>> import ember
>>> ember.signal.windows.hann(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
>>> ember.signal.windows.gaussian(3, std=1.0)
tensor([0.6065, 1.0000, 0.6065])
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..creation import tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _window(name: str, M, sym: bool, dtype, device, requires_grad, values):
    """Validate, then build ``values(n, length)`` over the points of the (extended) window
    in float64 and return the first ``M`` in ``dtype``."""
    if not isinstance(M, (int, np.integer)) or isinstance(M, bool):
        raise TypeError(f"{name}(): M must be an int, got {type(M).__name__}")
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    d = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    if d not in (dtypes.float32, dtypes.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {d}")
    if M <= 1:
        data = np.ones(M)
    else:
        length = M if sym else M + 1
        data = values(np.arange(length, dtype=np.float64), length)[:M]
    return tensor(data.astype(d.numpy), dtype=d, device=device, requires_grad=requires_grad)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """``sum_k (-1)^k a[k] cos(2 pi k n / (M - 1))``.

    >>> import ember
    >>> ember.signal.windows.general_cosine(3, a=[0.5, 0.5])
    tensor([0., 1., 0.])
    """
    coefficients = [float(c) for c in a]
    if not coefficients:
        raise ValueError("general_cosine(): coefficients a must be non-empty")

    def values(n, length):
        phase = 2 * math.pi * n / (length - 1)
        return sum((-1) ** k * c * np.cos(k * phase) for k, c in enumerate(coefficients))

    return _window("general_cosine", M, sym, dtype, device, requires_grad, values)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window, ``0.5 - 0.5 cos(2 pi n / (M - 1))``."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, device=device,
                           requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hamming window, ``0.54 - 0.46 cos(2 pi n / (M - 1))``."""
    return general_hamming(M, alpha=0.54, sym=sym, dtype=dtype, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window (cosine terms 0.42, 0.5, 0.08)."""
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangular Bartlett window, ``1 - |2n / (M - 1) - 1|``."""
    return _window("bartlett", M, sym, dtype, device, requires_grad,
                   lambda n, length: 1 - np.abs(2 * n / (length - 1) - 1))


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The cosine (sine) window, ``sin(pi (n + 1/2) / M)``."""
    return _window("cosine", M, sym, dtype, device, requires_grad,
                   lambda n, length: np.sin(math.pi * (n + 0.5) / length))


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``exp(-((n - (M - 1) / 2) / std)^2 / 2)``."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    return _window("gaussian", M, sym, dtype, device, requires_grad,
                   lambda n, length: np.exp(-0.5 * ((n - (length - 1) / 2) / std) ** 2))


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    """``exp(-|n - center| / tau)``, centred by default (``center`` only for periodic
    windows)."""
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")

    def values(n, length):
        middle = (length - 1) / 2 if center is None else center
        return np.exp(-np.abs(n - middle) / tau)

    return _window("exponential", M, sym, dtype, device, requires_grad, values)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    """The Kaiser window, ``I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)``."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _window("kaiser", M, sym, dtype, device, requires_grad,
                   lambda n, length: np.i0(beta * np.sqrt(np.clip(
                       1 - (2 * n / (length - 1) - 1) ** 2, 0, None))) / np.i0(beta))
