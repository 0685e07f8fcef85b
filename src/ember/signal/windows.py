"""Window functions, as ``torch.signal.windows``: each returns a 1-D tensor of ``M`` points.

``sym=True`` (the default) gives a symmetric window, for filter design; ``sym=False`` a
periodic one, for spectral analysis (the symmetric window of ``M + 1`` points without its
last point). The values are computed in float64 on the host and then cast.

>>> import ember
>>> ember.signal.windows.bartlett(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
>>> ember.signal.windows.hann(4, sym=False)
tensor([0.0000, 0.5000, 1.0000, 0.5000])
"""
from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .. import dtypes
from ..creation import tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name: str, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout) not in ("torch.strided", "strided"):
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    dtype = dtypes.get_default_dtype() if dtype is None else dtype
    if dtype not in (dtypes.float32, dtypes.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _done(values, dtype, device, requires_grad):
    return tensor(np.asarray(values, dtype=np.float64), dtype=dtype, device=device,
                  requires_grad=requires_grad)


def _points(M: int, start: float, step: float):
    """``start, start + step, ...``: M points (torch's linspace from start to its end)."""
    return start + step * np.arange(M, dtype=np.float64)


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=None, device=None,
                   requires_grad: bool = False):
    """``w_n = sum_i (-1)^i a_i cos(2 pi i n / (M - 1))`` (``M`` in place of ``M - 1`` when
    ``sym=False``).

    >>> import ember
    >>> ember.signal.windows.general_cosine(3, a=[0.5, 0.5])
    tensor([0., 1., 0.])
    """
    dtype = _checks("general_cosine", M, dtype, layout)
    if a is None:
        raise TypeError("Coefficients are required")
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    if M <= 1:
        return _done(np.ones(M), dtype, device, requires_grad)
    k = _points(M, 0.0, 2 * math.pi / (M - 1 if sym else M))
    w = sum((-1) ** i * c * np.cos(i * k) for i, c in enumerate(a))
    return _done(w, dtype, device, requires_grad)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=None,
                    device=None, requires_grad: bool = False):
    """``w_n = alpha - (1 - alpha) cos(2 pi n / (M - 1))``.

    >>> import ember
    >>> ember.signal.windows.general_hamming(3, alpha=0.5)
    tensor([0., 1., 0.])
    """
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
            requires_grad: bool = False):
    """The Hamming window, ``0.54 - 0.46 cos(2 pi n / (M - 1))``.

    >>> import ember
    >>> ember.signal.windows.hamming(3)
    tensor([0.0800, 1.0000, 0.0800])
    """
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
         requires_grad: bool = False):
    """The Hann window, ``0.5 - 0.5 cos(2 pi n / (M - 1))`` = ``sin(pi n / (M - 1))^2``.

    >>> import ember
    >>> ember.signal.windows.hann(3)
    tensor([0., 1., 0.])
    """
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
             requires_grad: bool = False):
    """The Blackman window, the cosine sum with coefficients ``[0.42, 0.5, 0.08]``.

    >>> import ember
    >>> ember.signal.windows.blackman(5)[1:4]
    tensor([0.3400, 1.0000, 0.3400])
    """
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
            requires_grad: bool = False):
    """The minimum 4-term Blackman-Harris window of Nuttall.

    >>> import ember
    >>> ember.signal.windows.nuttall(3)
    tensor([3.6280e-04, 1.0000e+00, 3.6280e-04])
    """
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
             requires_grad: bool = False):
    """The triangular window ``1 - |2 n / (M - 1) - 1|``.

    >>> import ember
    >>> ember.signal.windows.bartlett(3)
    tensor([0., 1., 0.])
    """
    dtype = _checks("bartlett", M, dtype, layout)
    if M <= 1:
        return _done(np.ones(M), dtype, device, requires_grad)
    k = _points(M, -1.0, 2.0 / (M - 1 if sym else M))
    return _done(1 - np.abs(k), dtype, device, requires_grad)


def cosine(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
           requires_grad: bool = False):
    """The cosine (sine) window ``sin(pi (n + 1/2) / M)``.

    >>> import ember
    >>> ember.signal.windows.cosine(3)
    tensor([0.5000, 1.0000, 0.5000])
    """
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _done(np.ones(0), dtype, device, requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return _done(np.sin(_points(M, 0.5 * step, step)), dtype, device, requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype=None, layout=None, device=None, requires_grad: bool = False):
    """The exponential (Poisson) window ``exp(-|n - center| / tau)``; ``center`` defaults to
    the middle and must be None for a symmetric window.

    >>> import ember
    >>> ember.signal.windows.exponential(3)
    tensor([0.3679, 1.0000, 0.3679])
    """
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _done(np.ones(0), dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _points(M, -center / tau, 1.0 / tau)
    return _done(np.exp(-np.abs(k)), dtype, device, requires_grad)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=None,
             device=None, requires_grad: bool = False):
    """The Gaussian window ``exp(-((n - (M - 1) / 2) / std)^2 / 2)``.

    >>> import ember
    >>> ember.signal.windows.gaussian(3)
    tensor([0.6065, 1.0000, 0.6065])
    """
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _done(np.ones(0), dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / (std * math.sqrt(2))
    k = _points(M, start * scale, scale)
    return _done(np.exp(-(k ** 2)), dtype, device, requires_grad)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=None,
           device=None, requires_grad: bool = False):
    """The Kaiser window ``I0(beta sqrt(1 - (2 n / (M - 1) - 1)^2)) / I0(beta)``.

    >>> import ember
    >>> ember.signal.windows.kaiser(3, beta=0.0)
    tensor([1., 1., 1.])
    """
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _done(np.ones(M), dtype, device, requires_grad)
    k = np.minimum(_points(M, -beta, 2 * beta / (M - 1 if sym else M)), beta)
    w = np.i0(np.sqrt(np.maximum(beta * beta - k * k, 0.0))) / np.i0(beta)
    return _done(w, dtype, device, requires_grad)
