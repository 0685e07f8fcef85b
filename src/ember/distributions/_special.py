"""Special functions of the Gamma family, for the distributions: lgamma, digamma,
polygamma, the regularized incomplete gamma function, and Gamma(alpha, 1) sampling with
an implicit reparameterization gradient.

Each is an autograd Function whose forward runs on the raw arrays (NumPy or CuPy, in
float64) and whose backward is written with the next function of the family, so
gradients of gradients work (lgamma' = digamma, digamma' = polygamma(1), ...).

Values for x >= 0.5: the recurrences Gamma(x + 1) = x Gamma(x), psi(x + 1) = psi(x) + 1/x
lift x to z >= 15, where the Stirling (asymptotic) series with Bernoulli numbers up to
B_20 is accurate to about 1e-16; below 0.5 the reflection formulas
Gamma(x) Gamma(1 - x) = pi / sin(pi x) and psi(1 - x) - psi(x) = pi / tan(pi x) apply.
"""
from __future__ import annotations

import math

import numpy as np

import ember

from .. import backend

# B_2, B_4, ..., B_20
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330)
_LIFT = 15.0
_EPS = 1e-17


def _xp(tensor):
    return backend.xp_for_device(tensor.device)


def _wrap(array, like):
    """A tensor holding ``array`` (cast to ``like``'s float dtype) on ``like``'s device."""
    dtype = like.dtype if like.dtype.is_floating_point else ember.get_default_dtype()
    return ember.Tensor._make(array.astype(dtype.numpy, copy=False), like.device)


def _float64(tensor):
    return tensor._data.astype(np.float64)


def _lift(xp, x):
    """(z, m): z = x + m >= _LIFT with m a non-negative integer per element."""
    m = xp.ceil(xp.maximum(_LIFT - x, 0.0))
    return x + m, m


def _lgamma_lifted(xp, x):
    z, m = _lift(xp, x)
    product = xp.ones_like(x)
    for k in range(int(m.max()) if m.size else 0):
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
    for k in range(int(m.max()) if m.size else 0):
        total = xp.where(k < m, total + 1.0 / (x + k), total)
    inv2 = 1.0 / (z * z)
    series, power = 0.0, inv2
    for k, b in enumerate(_BERNOULLI, 1):
        series = series + b / (2 * k) * power
        power = power * inv2
    return xp.log(z) - 0.5 / z - series - total


def lgamma_array(xp, x):
    """log|Gamma(x)| on a float64 array: +inf at 0, the negative integers and +-inf."""
    finite = xp.isfinite(x)
    safe = xp.where(finite, x, 1.0)
    reflect = safe < 0.5
    lifted = _lgamma_lifted(xp, xp.where(reflect, 1.0 - safe, safe))
    sine = xp.abs(xp.sin(math.pi * (safe - xp.floor(safe))))
    with np.errstate(divide="ignore"):
        reflected = math.log(math.pi) - xp.log(sine) - lifted
    result = xp.where(reflect, reflected, lifted)
    return xp.where(finite, result, xp.where(xp.isnan(x), x, math.inf))


def digamma_array(xp, x):
    """psi(x) = d/dx log Gamma(x) on a float64 array: -inf at 0, NaN at the negative
    integers and -inf, +inf at +inf."""
    finite = xp.isfinite(x)
    safe = xp.where(finite, x, 1.0)
    reflect = safe < 0.5
    lifted = _digamma_lifted(xp, xp.where(reflect, 1.0 - safe, safe))
    with np.errstate(divide="ignore", invalid="ignore"):
        reflected = lifted - math.pi / xp.tan(math.pi * (safe - xp.floor(safe)))
    result = xp.where(reflect, reflected, lifted)
    result = xp.where(safe == 0, -math.inf, result)
    result = xp.where((safe < 0) & (safe == xp.floor(safe)), math.nan, result)
    return xp.where(finite, result, xp.where(x == math.inf, math.inf, math.nan))


def polygamma_array(xp, n: int, x):
    """The n-th derivative of psi (n >= 1) on a float64 array."""
    finite = xp.isfinite(x)
    safe = xp.where(finite, x, 1.0)
    z, m = _lift(xp, safe)
    sign = 1.0 if n % 2 else -1.0  # (-1)^(n + 1)
    total = xp.zeros_like(safe)
    with np.errstate(divide="ignore"):
        for k in range(int(m.max()) if m.size else 0):
            total = xp.where(k < m, total + (safe + k) ** -(n + 1.0), total)
    series = math.factorial(n - 1) / z ** n + math.factorial(n) / (2 * z ** (n + 1))
    for k, b in enumerate(_BERNOULLI, 1):
        coefficient = b * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
        series = series + coefficient / z ** (2 * k + n)
    result = sign * (series + math.factorial(n) * total)
    return xp.where(finite, result, xp.where(x == math.inf, 0.0, math.nan))


class _Lgamma(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(lgamma_array(_xp(x), _float64(x)), x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * digamma(x)

    def name(self) -> str:
        return "LgammaBackward0"


class _Digamma(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(digamma_array(_xp(x), _float64(x)), x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * polygamma(1, x)

    def name(self) -> str:
        return "DigammaBackward0"


class _Polygamma(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.order = n
        return _wrap(polygamma_array(_xp(x), n, _float64(x)), x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * polygamma(ctx.order + 1, x), None

    def name(self) -> str:
        return "PolygammaBackward0"


def lgamma(x):
    """log|Gamma(x)|, elementwise; d/dx = digamma(x)."""
    return _Lgamma.apply(x)


def digamma(x):
    """psi(x) = d/dx lgamma(x), elementwise; d/dx = polygamma(1, x)."""
    return _Digamma.apply(x)


def polygamma(n: int, x):
    """The n-th derivative of digamma, elementwise (n >= 0)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n (got {n!r})")
    return digamma(x) if n == 0 else _Polygamma.apply(x, n)


# ------------------------------------------------------------------ incomplete gamma
def _xlogy_array(xp, x, y):
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


def _log_density(xp, a, x):
    """log of the Gamma(a, 1) density at x."""
    with np.errstate(invalid="ignore"):
        return _xlogy_array(xp, a - 1.0, x) - x - lgamma_array(xp, a)


def incomplete_gamma(xp, a, x):
    """(P, D) on float64 arrays (broadcast): P(a, x) the regularized lower incomplete
    gamma, D = (dP/da) / f(x; a), f the Gamma(a, 1) density. NaN where a <= 0 or x < 0."""
    a, x = xp.broadcast_arrays(a, x)
    shape = a.shape
    a, x = a.ravel(), x.ravel()
    p = xp.full(a.shape, math.nan)
    scaled = xp.full(a.shape, math.nan)
    valid = (a > 0) & (a < math.inf) & (x >= 0)
    p = xp.where(valid & (x == 0), 0.0, p)
    p = xp.where(valid & (x == math.inf), 1.0, p)
    scaled = xp.where(valid & ((x == 0) | (x == math.inf)), 0.0, scaled)
    inner = valid & (x > 0) & (x < math.inf)
    for region, method, lower in ((inner & (x < a + 1), _series, True),
                                  (inner & (x >= a + 1), _continued_fraction, False)):
        index = xp.nonzero(region)[0]
        if index.size == 0:
            continue
        ai, xi = a[index], x[index]
        value, derivative = method(xp, ai, xi)
        ratio = xp.exp(_log_density(xp, ai, xi) + xp.log(value))
        p[index] = ratio if lower else 1.0 - ratio
        scaled[index] = derivative
    return p.reshape(shape), scaled.reshape(shape)


class _Gammainc(ember.autograd.Function):
    @staticmethod
    def forward(ctx, a, x):
        xp = _xp(a)
        a64, x64 = _float64(a), _float64(x)
        p, scaled = incomplete_gamma(xp, a64, x64)
        density = xp.exp(_log_density(xp, a64, x64))
        with np.errstate(invalid="ignore"):
            ctx.grads = (xp.where(scaled == 0, 0.0, density * scaled), density)
        return _wrap(p, a)

    @staticmethod
    @ember.autograd.once_differentiable
    def backward(ctx, grad):
        grad_a, grad_x = ctx.grads
        return grad * _wrap(grad_a, grad), grad * _wrap(grad_x, grad)

    def name(self) -> str:
        return "IgammaBackward0"


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x) =
    (1 / Gamma(a)) * integral_0^x t^(a-1) e^-t dt, elementwise (broadcast), with gradients
    to both arguments (d/dx is the Gamma(a, 1) density; d/da comes from differentiating
    the series or continued fraction that computes P)."""
    a, x = ember.broadcast_tensors(a, x)
    return _Gammainc.apply(a, x)


# --------------------------------------------------------------------- Gamma sampling
def _standard_gamma_array(alpha, device):
    """Gamma(alpha, 1) draws by Marsaglia and Tsang's method (a squeezed transform of a
    normal draw, accepted with a uniform one); alpha < 1 draws Gamma(alpha + 1) times
    U^(1/alpha). The normals and uniforms come from ember's default generator."""
    xp = backend.xp_for_device(device)
    a = alpha.ravel()
    boost = a < 1
    lifted = xp.where(boost, a + 1.0, a)
    d = lifted - 1.0 / 3.0
    c = 1.0 / xp.sqrt(9.0 * d)
    out = xp.empty_like(a)
    pending = xp.arange(a.size)
    while pending.size:
        z = ember.randn(int(pending.size), dtype=ember.float64, device=device)._data
        u = ember.rand(int(pending.size), dtype=ember.float64, device=device)._data
        v = (1.0 + c[pending] * z) ** 3
        with np.errstate(invalid="ignore", divide="ignore"):
            log_v = xp.log(xp.where(v > 0, v, 1.0))
            dp = d[pending]
            accept = (v > 0) & (xp.log(u) < 0.5 * z * z + dp - dp * v + dp * log_v)
        out[pending[accept]] = (dp * v)[accept]
        pending = pending[~accept]
    log_out = xp.log(out)
    if bool(boost.any()):
        u = ember.rand(int(a.size), dtype=ember.float64, device=device)._data
        with np.errstate(divide="ignore"):
            log_out = xp.where(boost, log_out + xp.log(u) / a, log_out)
    return xp.exp(log_out).reshape(alpha.shape)


def standard_gamma_grad_array(xp, alpha, x):
    """dx/dalpha for x ~ Gamma(alpha, 1) held at its CDF level: -(dP/dalpha) / f(x)."""
    _, scaled = incomplete_gamma(xp, alpha, x)
    return -scaled


class _StandardGamma(ember.autograd.Function):
    @staticmethod
    def forward(ctx, alpha):
        a64 = _float64(alpha)
        draws = _standard_gamma_array(a64, alpha.device)
        out = _wrap(draws, alpha)
        tiny = float(np.finfo(out._data.dtype).tiny)
        out._data = _xp(alpha).maximum(out._data, tiny)
        ctx.arrays = (a64, out._data.astype(np.float64))
        return out

    @staticmethod
    @ember.autograd.once_differentiable
    def backward(ctx, grad):
        a64, x64 = ctx.arrays
        return grad * _wrap(standard_gamma_grad_array(_xp(grad), a64, x64), grad)

    def name(self) -> str:
        return "StandardGammaBackward0"


def standard_gamma(alpha):
    """Draws from Gamma(alpha, 1) with the implicit reparameterization gradient
    dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha) (F the CDF, f the density)."""
    return _StandardGamma.apply(alpha)


def standard_gamma_grad(alpha, x):
    """The implicit gradient dx/dalpha at draws ``x`` of Gamma(alpha, 1)."""
    alpha, x = ember.broadcast_tensors(alpha, x)
    return _wrap(standard_gamma_grad_array(_xp(alpha), _float64(alpha), _float64(x)), alpha)
