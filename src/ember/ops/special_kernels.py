"""Array kernels of the special functions, on float64 arrays over ``xp`` (NumPy or CuPy):
the gamma family, the Hurwitz zeta function, the incomplete gamma function and the
modified Bessel functions of order 0 and 1.

Gamma family, x >= 0.5: the recurrences Gamma(x + 1) = x Gamma(x), psi(x + 1) = psi(x) + 1/x
lift x to z >= 15, where the Stirling (asymptotic) series with Bernoulli numbers up to B_20
is accurate to about 1e-16; below 0.5 the reflection formulas
Gamma(x) Gamma(1 - x) = pi / sin(pi x) and psi(1 - x) - psi(x) = pi / tan(pi x) apply.
zeta(s, q) sums its first terms directly up to q + m >= 15 and the rest by the
Euler-Maclaurin formula (DLMF 25.11.5 with 10 Bernoulli terms); polygamma(n, x) for n >= 1
is (-1)^(n+1) n! zeta(n + 1, x).
I0 and I1: the power series (DLMF 10.25.2) below |x| = 20, the asymptotic expansion
(DLMF 10.40.1) above, where its smallest term is under 1e-17.
"""
from __future__ import annotations

import math

import numpy as np

# B_2, B_4, ..., B_20
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330)
_LIFT = 15.0
_EPS = 1e-17
_BESSEL_SWITCH = 20.0


def _lift(xp, x):
    """(z, m): z = x + m >= _LIFT with m a non-negative integer per element."""
    m = xp.ceil(xp.maximum(_LIFT - x, 0.0))
    return x + m, m


def _steps(m) -> int:
    return int(m.max()) if m.size else 0


def _lgamma_lifted(xp, x):
    z, m = _lift(xp, x)
    product = xp.ones_like(x)
    for k in range(_steps(m)):
        product = xp.where(k < m, product * (x + k), product)
    inv, series = 1.0 / z, 0.0
    power, inv2 = inv, inv * inv
    for k, b in enumerate(_BERNOULLI, 1):
        series = series + b / (2 * k * (2 * k - 1)) * power
        power = power * inv2
    return (z - 0.5) * xp.log(z) - z + 0.5 * math.log(2 * math.pi) + series - xp.log(product)


def _digamma_lifted(xp, x):
    z, m = _lift(xp, x)
    total = xp.zeros_like(x)
    for k in range(_steps(m)):
        total = xp.where(k < m, total + 1.0 / (x + k), total)
    inv2 = 1.0 / (z * z)
    series, power = 0.0, inv2
    for k, b in enumerate(_BERNOULLI, 1):
        series = series + b / (2 * k) * power
        power = power * inv2
    return xp.log(z) - 0.5 / z - series - total


def _pi_remainder(xp, x):
    """x - round(x), exact in float64: sin(pi x) and tan(pi x) from it keep full
    relative accuracy next to the integers."""
    return x - xp.round(x)


_EULER_GAMMA = 0.5772156649015329
_ZETA_AT_INTEGERS: list = []  # zeta(2), zeta(3), ..., zeta(41), filled on first use


def _lgamma_near_one(xp, z):
    """lgamma(1 + z) = -gamma z + sum_{k>=2} (-1)^k zeta(k) z^k / k, for |z| <= 1/4."""
    if not _ZETA_AT_INTEGERS:
        _ZETA_AT_INTEGERS.extend(float(v) for v in zeta_array(np, np.arange(2.0, 42.0),
                                                              np.ones(40)))
    total = xp.zeros_like(z)
    for k in range(41, 1, -1):  # Horner, smallest terms first
        total = (total + (-1) ** k * _ZETA_AT_INTEGERS[k - 2] / k) * z
    return (total - _EULER_GAMMA) * z


def lgamma_array(xp, x):
    """log|Gamma(x)|: +inf at 0, the negative integers and +-inf; exactly 0 at 1 and 2."""
    with np.errstate(all="ignore"):
        finite = xp.isfinite(x)
        safe = xp.where(finite, x, 1.0)
        reflect = safe < 0.5
        lifted = _lgamma_lifted(xp, xp.where(reflect, 1.0 - safe, safe))
        sine = xp.abs(xp.sin(math.pi * _pi_remainder(xp, safe)))
        reflected = math.log(math.pi) - xp.log(sine) - lifted
        result = xp.where(reflect, reflected, lifted)
        # next to the roots at 1 and 2, the Taylor series keeps full relative accuracy
        z1 = xp.where(xp.abs(safe - 1.0) <= 0.25, safe - 1.0, 0.0)
        z2 = xp.where(xp.abs(safe - 2.0) <= 0.25, safe - 2.0, 0.0)
        result = xp.where(xp.abs(safe - 1.0) <= 0.25, _lgamma_near_one(xp, z1), result)
        result = xp.where(xp.abs(safe - 2.0) <= 0.25,
                          _lgamma_near_one(xp, z2) + xp.log1p(z2), result)
        # below 1e-17, lgamma(x) = -log|x| - gamma x + O(x^2) is -log|x| to the last bit;
        # the reflection's sin(pi x) would lose digits on subnormal x (pi x rounds to a
        # multiple of the smallest subnormal: 4.5% off at 5e-324)
        result = xp.where(xp.abs(safe) < 1e-17, -xp.log(xp.abs(safe)), result)
        return xp.where(finite, result, xp.where(xp.isnan(x), x, math.inf))


def digamma_array(xp, x):
    """psi(x) = d/dx log Gamma(x): -inf at +0 (+inf at -0), NaN at the negative integers
    and -inf, +inf at +inf."""
    with np.errstate(all="ignore"):
        finite = xp.isfinite(x)
        safe = xp.where(finite, x, 1.0)
        reflect = safe < 0.5
        lifted = _digamma_lifted(xp, xp.where(reflect, 1.0 - safe, safe))
        reflected = lifted - math.pi / xp.tan(math.pi * _pi_remainder(xp, safe))
        result = xp.where(reflect, reflected, lifted)
        result = xp.where(safe == 0, xp.copysign(math.inf, -safe), result)
        result = xp.where((safe < 0) & (safe == xp.floor(safe)), math.nan, result)
        return xp.where(finite, result, xp.where(x == math.inf, math.inf, math.nan))


def _direct_sum(xp, s, q, m):
    """sum_{k < m} (q + k)^-s per element. Every 32 steps the elements that are done leave
    the loop, so one far-negative q costs its own steps only."""
    shape = s.shape
    s, q, m = s.ravel(), q.ravel(), m.ravel()
    out = xp.zeros_like(q)
    index = xp.arange(q.size)
    partial = xp.zeros_like(q)
    k = 0
    while index.size and k < _steps(m):
        partial = xp.where(k < m, partial + (q + k) ** -s, partial)
        k += 1
        if k % 32 == 0:
            done = m <= k
            if bool(done.any()):
                out[index[done]] = partial[done]
                keep = ~done
                index, s, q, m, partial = (v[keep] for v in (index, s, q, m, partial))
    out[index] = partial
    return out.reshape(shape)


def zeta_array(xp, s, q):
    """The Hurwitz zeta function sum_k (k + q)^-s. PyTorch's special values, checked in
    this order: inf at s = 1, NaN for s < 1, inf at integer q <= 0 (-inf included), NaN
    for q < 0 with s not an integer (q^-s is not real there) and at q = +inf."""
    with np.errstate(all="ignore"):
        s, q = xp.broadcast_arrays(s, q)
        q_pole = (q <= 0) & (q == xp.floor(q))
        q_bad = (q < 0) & (s != xp.floor(s))
        good = (s > 1) & ~q_pole & ~q_bad & xp.isfinite(q) & (s < math.inf)
        s_safe, q_safe = xp.where(good, s, 2.0), xp.where(good, q, 1.0)
        # sum directly up to w = q + m >= max(15, s), where the Bernoulli terms shrink
        # by (s / (2 pi w))^2 each (capped: past s = 200 the first terms dominate anyway)
        m = xp.ceil(xp.maximum(xp.maximum(_LIFT, xp.minimum(s_safe, 200.0)) - q_safe, 0.0))
        w = q_safe + m
        direct = _direct_sum(xp, s_safe, q_safe, m)
        lead = w ** -s_safe
        tail = w * lead / (s_safe - 1.0) + 0.5 * lead
        rising, power, inv2 = s_safe, lead / w, 1.0 / (w * w)
        factorial = 2.0
        for j, b in enumerate(_BERNOULLI, 1):
            tail = tail + b / factorial * rising * power
            rising = rising * (s_safe + 2 * j - 1) * (s_safe + 2 * j)
            power = power * inv2
            factorial *= (2 * j + 1) * (2 * j + 2)
        result = xp.where(good, direct + tail, math.nan)
        # s = inf: only the k = 0 term can be left
        at_inf = (s == math.inf) & (q > 0)
        result = xp.where(at_inf, xp.where(q > 1, 0.0, xp.where(q == 1, 1.0, math.inf)),
                          result)
        result = xp.where(q_bad, math.nan, result)
        result = xp.where(q_pole, math.inf, result)
        result = xp.where(s < 1, math.nan, result)
        return xp.where(s == 1, math.inf, result)


def polygamma_array(xp, n: int, x):
    """The n-th derivative of digamma (psi itself for n = 0)."""
    if n == 0:
        return digamma_array(xp, x)
    with np.errstate(all="ignore"):
        sign = 1.0 if n % 2 else -1.0  # (-1)^(n + 1)
        scale = sign * math.exp(math.lgamma(n + 1.0))
        if n > 1:
            return scale * zeta_array(xp, xp.full_like(x, n + 1.0), x)
        # trigamma below 0 by reflection: psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)
        reflect = (x < 0) & (x != xp.floor(x))
        y = xp.where(reflect, 1.0 - x, x)
        out = zeta_array(xp, xp.full_like(x, 2.0), y)
        sine = xp.sin(math.pi * _pi_remainder(xp, xp.where(reflect, x, 0.5)))
        out = xp.where(reflect, math.pi ** 2 / (sine * sine) - out, out)
        return xp.where(x == math.inf, 0.0, xp.where(x == -math.inf, math.nan, out))


def mvlgamma_array(xp, x, p: int):
    """log of the multivariate gamma function of dimension p."""
    total = p * (p - 1) / 4.0 * math.log(math.pi)
    for i in range(p):
        total = total + lgamma_array(xp, x - i / 2.0)
    return total


# ------------------------------------------------------------------ incomplete gamma
def _xlogy(xp, x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.where(x == 0, 0.0, x * xp.log(y))


def _series(xp, a, x):
    """Region x < a + 1: P(a, x) = f(x) S with S = sum_n x^(n+1) / (a (a+1) ... (a+n)),
    f the Gamma(a, 1) density. Returns (S, dS-part): with H_n = sum_{k<=n} 1/(a+k),
    dP/da / f = (log x - psi(a)) S - sum_n s_n H_n."""
    term = x / a
    total, harmonic = term, 1.0 / a
    weighted = term * harmonic
    n = 0
    while True:
        n += 1
        term = term * x / (a + n)
        harmonic = harmonic + 1.0 / (a + n)
        total = total + term
        weighted = weighted + term * harmonic
        if n % 8 == 0 and not bool(xp.any(term > _EPS * total)) or n > 200000:
            break
    return total, (xp.log(x) - digamma_array(xp, a)) * total - weighted


def _continued_fraction(xp, a, x):
    """Region x >= a + 1: Q(a, x) = f(x) x h with h Legendre's continued fraction for the
    upper incomplete gamma, evaluated by the modified Lentz method; its derivative in a is
    carried alongside (forward mode). Returns (x h, dP/da / f). Elements leave the
    iteration once converged (rounding makes the last digits of each step jitter)."""
    h_out, dh_out = xp.empty_like(x), xp.empty_like(x)
    index = xp.arange(x.size)
    b = x + 1.0 - a
    d = 1.0 / b
    dd = d * d                    # d(1/b)/da with db/da = -1
    c = xp.full_like(x, 1e150)    # "infinite" start; c * c stays finite
    dc = xp.zeros_like(x)
    h, dh, aa = d, dd, a
    i = 0
    while index.size:
        i += 1
        an, dan = -i * (i - aa), float(i)
        b = b + 2.0
        d_pre = an * d + b
        d_pre = xp.where(xp.abs(d_pre) < 1e-300, 1e-300, d_pre)
        dd_pre = dan * d + an * dd - 1.0
        d = 1.0 / d_pre
        dd = -dd_pre * d * d
        c_new = b + an / c
        c_new = xp.where(xp.abs(c_new) < 1e-300, 1e-300, c_new)
        dc = -1.0 + dan / c - an * dc / (c * c)
        c = c_new
        delta, ddelta = d * c, dd * c + d * dc
        dh = dh * delta + h * ddelta
        h = h * delta
        done = (xp.abs(delta - 1.0) < 4e-16) & (
            xp.abs(h * ddelta) <= 4e-16 * (xp.abs(dh) + xp.abs(h)))
        done |= ~xp.isfinite(h) | ~xp.isfinite(dh) | (i > 100000)
        if bool(done.any()):
            h_out[index[done]] = h[done]
            dh_out[index[done]] = dh[done]
            keep = ~done
            index, b, d, dd, c, dc, h, dh, aa = (v[keep] for v in (index, b, d, dd, c, dc,
                                                                   h, dh, aa))
    return x * h_out, -x * ((xp.log(x) - digamma_array(xp, a)) * h_out + dh_out)


def _log1pmx(xp, t):
    """log(1 + t) - t, accurate for small t (its series below |t| = 1/4)."""
    small = xp.abs(t) < 0.25
    u = xp.where(small, t, 0.0)
    total = xp.zeros_like(u)
    for k in range(30, 1, -1):  # Horner on sum_{k>=2} (-1)^(k+1) t^k / k
        total = (total + (-1.0) ** (k + 1) / k) * u
    return xp.where(small, total * u, xp.log1p(t) - t)


def _stirling_correction(xp, a):
    """lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2), for a >= 10."""
    inv = 1.0 / a
    power, inv2, total = inv, inv * inv, 0.0
    for k, b in enumerate(_BERNOULLI, 1):
        total = total + b / (2 * k * (2 * k - 1)) * power
        power = power * inv2
    return total


def log_gamma_density(xp, a, x):
    """log of the Gamma(a, 1) density at x. For a >= 10 it is written as
    a (log1p(t) - t) - log x + log(a) / 2 - log(2 pi) / 2 - (Stirling's correction),
    t = (x - a) / a, which keeps the large terms of (a - 1) log x - x - lgamma(a) from
    cancelling."""
    with np.errstate(all="ignore"):
        plain = _xlogy(xp, a - 1.0, x) - x - lgamma_array(xp, a)
        large = (a >= 10) & (x > 0) & (x < math.inf) & (a < math.inf)
        b = xp.where(large, a, 10.0)
        y = xp.where(large, x, 10.0)
        split = (b * _log1pmx(xp, (y - b) / b) - xp.log(y) + 0.5 * xp.log(b)
                 - 0.5 * math.log(2 * math.pi) - _stirling_correction(xp, b))
        return xp.where(large, split, plain)


def _upper_series(xp, a, x):
    """Q(a, x) for small a and x <= 1.5, where 1 - P would cancel:
    Q = -expm1(a log x - lgamma(1 + a)) - x^a / Gamma(a) sum_{n>=1} (-x)^n / (n! (a + n))."""
    term = xp.ones_like(x)
    total = xp.zeros_like(x)
    for n in range(1, 60):
        term = term * -x / n
        total = total + term / (a + n)
    scale = xp.exp(a * xp.log(x) - lgamma_array(xp, a))
    return -xp.expm1(a * xp.log(x) - lgamma_array(xp, 1.0 + a)) - scale * total


# Taylor coefficients in eta of Temme's c_0 and c_1 (DLMF 8.12.10-11; c_0 = -1/3 + eta/12
# - 2 eta^2/135 + ...), fitted to 1e-26 on |eta| <= 1/2 where the closed forms cancel
_TEMME_C0 = (-0.333333333333333333, 0.0833333333333333333, -0.0148148148148148148,
             0.00115740740740740741, 0.000352733686067019401, -0.000178755144032921811,
             0.0000391926317852243496, -2.18544851067999281e-6, -1.85406221071425575e-6,
             8.2967113409532879e-7, -1.76659527385171279e-7, 6.70785354303647081e-9,
             1.02618099815546956e-8, -4.38203601440564106e-9, 9.14768477862416103e-10,
             -2.55142220312235922e-11, -5.83005715790987995e-11, 2.43620660813676837e-11,
             -5.04920050884800821e-12, 1.0977609979652446e-13, 3.74189855032938776e-13,
             -1.39075307127757666e-13)
_TEMME_C1 = (-0.00185185185185185185, -0.00347222222222222222, 0.0026455026455026455,
             -0.000990226337448559671, 0.000205761316872427983, -4.01877572016460551e-7,
             -0.0000180985503344899174, 7.64916091608108795e-6, -1.6120900894582772e-6,
             4.64712780351589644e-9, 1.3786334472759371e-7, -5.75254560484043396e-8,
             1.19516281815241391e-8, -1.75430877585328755e-11, -1.00915125572314981e-9,
             4.16278148242302809e-10, -8.56539480384512212e-11, 6.61999138884949907e-14,
             7.206450445293915e-12, -2.94967645404894578e-12, 5.27002191632426618e-13,
             2.75982221760873088e-14)
_TEMME_A = 1e5  # from here on, x near a: Temme's expansion; the series would need ~9 sqrt(a)


def _polynomial(xp, coefficients, t):
    total = xp.zeros_like(t)
    for c in reversed(coefficients):
        total = total * t + c
    return total


def _temme(xp, a, x):
    """(P, Q) for large a by Temme's uniform expansion (DLMF 8.12.8):
    Q = erfc(eta sqrt(a/2)) / 2 + R, P = erfc(-eta sqrt(a/2)) / 2 - R with
    R = exp(-a eta^2 / 2) / sqrt(2 pi a) (c_0(eta) + c_1(eta) / a), good to c_2 / a^2."""
    from .unary import erfc_array

    mu = (x - a) / a
    eta = xp.sign(mu) * xp.sqrt(-2.0 * _log1pmx(xp, mu))
    near = xp.abs(eta) < 0.5
    mu_far, eta_far = xp.where(near, 1.0, mu), xp.where(near, 1.0, eta)
    c0 = xp.where(near, _polynomial(xp, _TEMME_C0, eta), 1.0 / mu_far - 1.0 / eta_far)
    c1_far = (1.0 / eta_far ** 3 - 1.0 / mu_far ** 3 - 1.0 / mu_far ** 2
              - 1.0 / (12.0 * mu_far))
    c1 = xp.where(near, _polynomial(xp, _TEMME_C1, eta), c1_far)
    r = xp.exp(-0.5 * a * eta * eta) / xp.sqrt(2.0 * math.pi * a) * (c0 + c1 / a)
    scale = eta * xp.sqrt(0.5 * a)
    return 0.5 * erfc_array(xp, -scale) - r, 0.5 * erfc_array(xp, scale) + r


def _temme_derivative(xp, a, x):
    """dP/da / f in Temme's region, by a fourth-order central difference in a (P moves on
    the scale sqrt(a))."""
    h = 1e-3 * xp.sqrt(a)
    p = [_temme(xp, a + k * h, x)[0] for k in (-2, -1, 1, 2)]
    slope = (p[0] - 8.0 * p[1] + 8.0 * p[2] - p[3]) / (12.0 * h)
    return slope / xp.exp(log_gamma_density(xp, a, x))


def incomplete_gamma(xp, a, x):
    """(P, Q, D) on float64 arrays (broadcast): P(a, x) the regularized lower incomplete
    gamma, Q = 1 - P the upper (each computed directly where it is the small one),
    D = (dP/da) / f(x; a), f the Gamma(a, 1) density. Special values as PyTorch, in this
    order: NaN for a < 0 or x < 0; at a = 0, P = 1 for x > 0 and NaN otherwise; P = 0 at
    x = 0; at a = inf, NaN for x = inf and P = 0 otherwise; P = 1 at x = inf."""
    a, x = xp.broadcast_arrays(a, x)
    shape = a.shape
    a, x = a.ravel(), x.ravel()
    p = xp.full(a.shape, math.nan)
    scaled = xp.full(a.shape, math.nan)
    rules = (((x < 0) | (a < 0), math.nan),
             ((a == 0) & (x > 0), 1.0), (a == 0, math.nan),
             (x == 0, 0.0),
             ((a == math.inf) & (x == math.inf), math.nan), (a == math.inf, 0.0),
             (x == math.inf, 1.0))
    unset = xp.ones(a.shape, dtype=bool)
    for where, value in rules:
        hit = unset & where
        p = xp.where(hit, value, p)
        scaled = xp.where(hit, 0.0 if value == value else math.nan, scaled)
        unset = unset & ~where
    q = 1.0 - p
    inner = unset & ~xp.isnan(a) & ~xp.isnan(x)
    temme = inner & (a >= _TEMME_A) & (xp.abs(x - a) < 0.3 * a)
    inner = inner & ~temme
    with np.errstate(all="ignore"):
        index = xp.nonzero(temme)[0]
        if index.size:
            ai, xi = a[index], x[index]
            p[index], q[index] = _temme(xp, ai, xi)
            scaled[index] = _temme_derivative(xp, ai, xi)
        for region, method, lower in ((inner & (x < a + 1), _series, True),
                                      (inner & (x >= a + 1), _continued_fraction, False)):
            index = xp.nonzero(region)[0]
            if index.size == 0:
                continue
            ai, xi = a[index], x[index]
            value, derivative = method(xp, ai, xi)
            ratio = xp.exp(log_gamma_density(xp, ai, xi) + xp.log(value))
            p[index] = ratio if lower else 1.0 - ratio
            q[index] = 1.0 - ratio if lower else ratio
            scaled[index] = derivative
        index = xp.nonzero(inner & (x <= 1.5) & (a < 1) & (x < a + 1))[0]
        if index.size:
            q[index] = _upper_series(xp, a[index], x[index])
    return p.reshape(shape), q.reshape(shape), scaled.reshape(shape)


# ------------------------------------------------------------------ modified Bessel I
def _bessel_i_series(xp, x, order: int):
    """I_order(x) for order 0 or 1 by its power series (|x| < _BESSEL_SWITCH)."""
    quarter = x * x / 4.0
    term = xp.ones_like(x) if order == 0 else x / 2.0
    total = term
    for k in range(1, 80):
        term = term * quarter / (k * (k + order))
        total = total + term
        if k % 8 == 0 and not bool(xp.any(xp.abs(term) > _EPS * xp.abs(total))):
            break
    return total


def _bessel_i_asymptotic(xp, x, order: int):
    """I_order(|x|) exp(-|x|) for |x| >= _BESSEL_SWITCH, by the asymptotic expansion
    sum_k (-1)^k a_k(nu) / x^k over sqrt(2 pi x)."""
    mu = 4.0 * order * order
    y = xp.abs(x)
    term = xp.ones_like(y)
    total = term
    for k in range(1, 40):
        term = term * -(mu - (2 * k - 1) ** 2) / (8.0 * k * y)
        total = total + term
    return total / xp.sqrt(2.0 * math.pi * y)


def _bessel_i(xp, x, order: int, scaled: bool):
    with np.errstate(all="ignore"):
        large = xp.abs(x) >= _BESSEL_SWITCH
        small_x = xp.where(large, 0.0, x)
        small = _bessel_i_series(xp, small_x, order)
        if scaled:
            small = small * xp.exp(-xp.abs(small_x))
        big_x = xp.where(large, x, _BESSEL_SWITCH)
        big = _bessel_i_asymptotic(xp, big_x, order)
        if not scaled:
            # exp(|x|) in two halves keeps I finite up to where it overflows itself
            half = xp.exp(xp.abs(big_x) / 2.0)
            big = big * half * half
        if order == 1:
            big = xp.where(big_x < 0, -big, big)
        out = xp.where(large, big, small)
        if not scaled:
            out = xp.where(xp.isinf(x), xp.abs(x) if order == 0 else x, out)
        return xp.where(xp.isnan(x), x, out)


def i0_array(xp, x):
    """The modified Bessel function of the first kind of order 0."""
    return _bessel_i(xp, x, 0, scaled=False)


def i0e_array(xp, x):
    """``i0(x) * exp(-|x|)``."""
    return _bessel_i(xp, x, 0, scaled=True)


def i1_array(xp, x):
    """The modified Bessel function of the first kind of order 1."""
    return _bessel_i(xp, x, 1, scaled=False)


def i1e_array(xp, x):
    """``i1(x) * exp(-|x|)``."""
    return _bessel_i(xp, x, 1, scaled=True)


def spherical_j0_array(xp, x):
    """sin(x) / x, 1 at 0 (a Taylor polynomial below |x| = 1e-3)."""
    with np.errstate(all="ignore"):
        tiny = xp.abs(x) < 1e-3
        x2 = x * x
        near = 1.0 - x2 / 6.0 * (1.0 - x2 / 20.0)
        far = xp.sin(x) / xp.where(tiny, 1.0, x)
        out = xp.where(tiny, near, far)
        return xp.where(xp.isinf(x), 0.0, out)
