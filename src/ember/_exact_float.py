"""Floating-point building blocks that reproduce, bit for bit, the arithmetic PyTorch's CPU
random kernels perform (used by ``ember._mt_stream``).

- ``fma32`` / ``fma64``: fused multiply-add with one rounding. PyTorch's kernels are built
  with FMA contraction, so ``x * (to - from) + from`` rounds once; NumPy has no vector FMA,
  so it is emulated exactly with error-free transformations and rounding to odd
  (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums", 2008).
- ``libm``: the C library's ``log``/``log1p``/``cos``/``sin``/``tan``/``exp`` element by
  element. PyTorch's scalar kernels call them; NumPy's own SIMD versions differ from them
  in the last bit for a few percent of inputs.
- ``logf_cephes`` / ``sincosf_cephes``: the single-precision Cephes polynomials (the
  ``avx_mathfun`` formulation, with FMA contraction) that PyTorch's x86 float32
  ``normal_`` uses for 16 values at a time.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["fma32", "fma64", "libm", "logf_cephes", "sincosf_cephes"]

_F32, _F64 = np.float32, np.float64
_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's splitting constant for doubles
_F32_TINY = 2.0 ** -126  # below it a float32 result is subnormal


def _two_sum(a, b):
    """``s, e`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_prod(a, b):
    """``p, e`` with ``p = fl(a * b)`` and ``a * b = p + e`` exactly (Dekker)."""
    p = a * b
    ca, cb = _SPLIT * a, _SPLIT * b
    ah, bh = ca - (ca - a), cb - (cb - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _round_odd_sum(a, b):
    """``a + b`` rounded to odd: exact sums as they are, inexact ones to the neighbour whose
    last significand bit is 1 (what makes a second rounding to fewer bits correct)."""
    s, err = _two_sum(a, b)
    s = np.asarray(s, _F64)
    fix = (err != 0) & ((s.view(np.int64) & 1) == 0)
    if fix.any():
        s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s


def fma64(a, b, c) -> np.ndarray:
    """``a * b + c`` in float64 with a single rounding, elementwise (arrays broadcast).

    >>> float(fma64(0.1, 10.0, -1.0))  # the plain expression gives 0.0
    5.551115123125783e-17
    """
    a, b, c = np.broadcast_arrays(np.asarray(a, _F64), np.asarray(b, _F64),
                                  np.asarray(c, _F64))
    with np.errstate(over="ignore", invalid="ignore"):
        uh, ul = _two_prod(a, b)
        th, tl = _two_sum(c, uh)
        result = np.asarray(th + _round_odd_sum(tl, ul), _F64)
        # the splitting overflows for huge operands; there the result is inf or nan, or
        # the product dwarfs c, and the plain expression is what remains
        plain = ~np.isfinite(result) | ~np.isfinite(ul)
        if plain.any():
            result = np.where(plain, a * b + c, result)
    return result


def fma32(a, b, c) -> np.ndarray:
    """``a * b + c`` on float32 values with a single rounding to float32, elementwise.

    The float64 product of two float32 values is exact, so only the sum can round twice
    (once to float64, then to float32): that happens only where the float64 sum lands
    exactly halfway between two float32 values (or in float32's subnormal range); those
    few elements are redone with the sum rounded to odd.

    >>> import numpy as np
    >>> x, y = np.float32(1 + 2 ** -12), np.float32(1 - 2 ** -12)
    >>> float(fma32(x, y, -1.0))  # the plain float32 expression gives 0.0
    -5.960464477539063e-08
    """
    p = np.asarray(a, _F32).astype(_F64) * np.asarray(b, _F32).astype(_F64)
    p, c64 = np.broadcast_arrays(p, np.asarray(c, _F32).astype(_F64))
    s = np.array(p + c64, _F64)
    flat = s.reshape(-1)
    suspect = (((flat.view(np.int64) & 0x1FFFFFFF) == 0x10000000)
               | (np.abs(flat) < _F32_TINY))
    if suspect.any():
        where = np.nonzero(suspect)[0]
        flat[where] = _round_odd_sum(p.reshape(-1)[where], c64.reshape(-1)[where])
    return s.astype(_F32)


def _exact_or_limit(function, value: float) -> float:
    """What libm returns where :mod:`math` raises instead (a pole or an overflow)."""
    try:
        return function(value)
    except OverflowError:
        return math.inf
    except ValueError:
        if function in (math.log, math.log1p) and value == (0.0 if function is math.log
                                                            else -1.0):
            return -math.inf
        return math.nan


class _Libm:
    """The C math library's double functions applied element by element: ``np.frompyfunc``
    over :mod:`math`, which calls the platform ``libm``, as PyTorch's kernels do."""

    def __init__(self):
        for name in ("log", "log1p", "cos", "sin", "tan", "exp"):
            setattr(self, name, self._vectorized(getattr(math, name)))

    @staticmethod
    def _vectorized(function):
        ufunc = np.frompyfunc(function, 1, 1)

        def apply(x):
            x = np.asarray(x, _F64)
            try:
                return np.asarray(ufunc(x), _F64) if x.size else x.copy()
            except (ValueError, OverflowError):
                flat = [_exact_or_limit(function, float(v)) for v in x.ravel()]
                return np.array(flat, _F64).reshape(x.shape)
        apply.__name__ = function.__name__
        return apply


libm = _Libm()

# The Cephes single-precision coefficients (Moshier's logf, sinf, cosf).
_LOG_P = tuple(_F32(v) for v in (
    7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
    -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1))
_LOG_Q1, _LOG_Q2 = _F32(-2.12194440e-4), _F32(0.693359375)
_SQRT_HALF = _F32(0.707106781186547524)
_MIN_NORMAL = _F32(1.17549435e-38)
_FOUR_OVER_PI = _F32(1.27323954473516)
_MINUS_DP = (_F32(-0.78515625), _F32(-2.4187564849853515625e-4),
             _F32(-3.77489497744594108e-8))
_COS_P = (_F32(2.443315711809948e-5), _F32(-1.388731625493765e-3),
          _F32(4.166664568298827e-2))
_SIN_P = (_F32(-1.9515295891e-4), _F32(8.3321608736e-3), _F32(-1.6666654611e-1))
_HALF, _ONE = _F32(0.5), _F32(1.0)


def logf_cephes(x: np.ndarray) -> np.ndarray:
    """Natural log of positive float32 values the way PyTorch's x86 ``normal_`` computes
    it: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), a degree-9 polynomial in m - 1, and
    e * ln 2 added in two parts; multiply-adds fused as the compiler fuses them."""
    x = np.maximum(np.asarray(x, _F32), _MIN_NORMAL)
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F32) + _ONE
    m = ((bits & ~0x7F800000) | 0x3F000000).view(_F32)  # the significand in [0.5, 1)
    small = m < _SQRT_HALF
    tmp = np.where(small, m, _F32(0))
    m = m - _ONE
    e = e - np.where(small, _ONE, _F32(0))
    m = m + tmp
    z = m * m
    y = np.full_like(m, _LOG_P[0])
    for coefficient in _LOG_P[1:]:
        y = fma32(y, m, coefficient)
    y = y * m
    y = fma32(y, z, e * _LOG_Q1)
    y = fma32(-z, _HALF, y)
    return fma32(e, _LOG_Q2, m + y)


def sincosf_cephes(x: np.ndarray):
    """``(sin x, cos x)`` of float32 values the way PyTorch's x86 ``normal_`` computes them:
    reduction by multiples of pi/4 in three parts, then the Cephes sine and cosine
    polynomials, chosen and signed by the octant."""
    x = np.asarray(x, _F32)
    sign_sin = x.view(np.int32) & np.int32(-0x80000000)
    x = np.abs(x)
    j = (x * _FOUR_OVER_PI).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(_F32)
    swap = (j & 4) << 29
    use_sine_poly = (j & 2) == 0
    for part in _MINUS_DP:
        x = fma32(y, part, x)
    sign_cos = (~(j - 2) & 4) << 29
    sign_sin = sign_sin ^ swap
    z = x * x
    cos_poly = np.full_like(x, _COS_P[0])
    for coefficient in _COS_P[1:]:
        cos_poly = fma32(cos_poly, z, coefficient)
    cos_poly = cos_poly * z
    cos_poly = fma32(cos_poly, z, -(z * _HALF)) + _ONE
    sin_poly = np.full_like(x, _SIN_P[0])
    for coefficient in _SIN_P[1:]:
        sin_poly = fma32(sin_poly, z, coefficient)
    sin_poly = sin_poly * z
    sin_poly = fma32(sin_poly, x, x)
    zero = _F32(0)
    sine = np.where(use_sine_poly, zero, cos_poly) + np.where(use_sine_poly, sin_poly, zero)
    cosine = np.where(use_sine_poly, cos_poly, zero) + np.where(use_sine_poly, zero, sin_poly)
    sine = (sine.view(np.int32) ^ sign_sin).view(_F32)
    cosine = (cosine.view(np.int32) ^ sign_cos).view(_F32)
    return sine, cosine
