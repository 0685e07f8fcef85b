"""The von Mises distribution on the circle."""
from __future__ import annotations

import math

import numpy as np

import ember

from .. import backend
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

_SWITCH = 30.0  # power series below, Hankel's asymptotic series above


def _xp(tensor):
    return backend.xp_for_device(tensor.device)


def _log_bessel_i_array(xp, order: int, x):
    """log I_order(x) for x >= 0 (order 0 or 1) on a float64 array. Below _SWITCH the
    power series sum_k (x/2)^(2k + order) / (k! (k + order)!) (all terms positive, no
    cancellation), summed relative to its first term; above it Hankel's expansion
    I_v(x) ~ e^x / sqrt(2 pi x) sum_k (-1)^k a_k(v) / x^k, accurate to rounding there."""
    small = xp.minimum(x, _SWITCH)
    quarter = small * small / 4
    term = xp.ones_like(x)
    rest = xp.zeros_like(x)  # the series less its first term, for log1p at small x
    for k in range(1, 80):
        term = term * quarter / (k * (k + order))
        rest = rest + term
    with np.errstate(divide="ignore"):
        series = xp.log1p(rest) + (order * (xp.log(small) - math.log(2.0)) if order else 0.0)
    large = xp.maximum(x, _SWITCH)
    mu = 4.0 * order * order
    term = xp.ones_like(x)
    total = xp.ones_like(x)
    for k in range(1, 30):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * large)
        total = total + term
    asymptotic = large - 0.5 * xp.log(2 * math.pi * large) + xp.log(total)
    return xp.where(x < _SWITCH, series, asymptotic)


def _wrap(array, like):
    return ember.Tensor._make(array.astype(like.dtype.numpy, copy=False), like.device)


class _LogI0(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(_log_bessel_i_array(_xp(x), 0, x._data.astype(np.float64)), x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * bessel_ratio(x)

    def name(self) -> str:
        return "LogI0Backward0"


class _BesselRatio(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        xp = _xp(x)
        x64 = x._data.astype(np.float64)
        ratio = xp.exp(_log_bessel_i_array(xp, 1, x64) - _log_bessel_i_array(xp, 0, x64))
        return _wrap(ratio, x)

    @staticmethod
    def backward(ctx, grad):
        # (I1 / I0)' = I1' / I0 - I1 I0' / I0^2 = 1 - r / x - r^2  (I1' = I0 - I1 / x)
        (x,) = ctx.saved_tensors
        r = bessel_ratio(x)
        return grad * (1 - r / x - r * r)

    def name(self) -> str:
        return "BesselRatioBackward0"


def log_i0(x):
    """log I_0(x), the log of the modified Bessel function of order 0, for x >= 0;
    d/dx = I_1(x) / I_0(x)."""
    return _LogI0.apply(x)


def bessel_ratio(x):
    """I_1(x) / I_0(x) for x > 0, differentiable to any order."""
    return _BesselRatio.apply(x)


def _sample_array(xp, loc, kappa, device):
    """Best and Fisher's (1979) rejection sampler on float64 arrays: a wrapped-Cauchy
    envelope of radius parameter ``r``, two uniforms per proposal and a third for the
    sign."""
    tau = 1 + xp.sqrt(1 + 4 * kappa * kappa)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = (tau - xp.sqrt(2 * tau)) / (2 * kappa)
        r = xp.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho * rho) / (2 * rho))
    out = xp.empty_like(kappa)
    pending = xp.arange(kappa.size)
    while pending.size:
        u = ember.rand(3, int(pending.size), dtype=ember.float64, device=device)._data
        k, rp = kappa[pending], r[pending]
        z = xp.cos(math.pi * u[0])
        f = (1 + rp * z) / (rp + z)
        c = k * (rp - f)
        with np.errstate(divide="ignore", invalid="ignore"):
            accept = (c * (2 - c) - u[1] > 0) | (xp.log(c / u[1]) + 1 - c >= 0)
        theta = xp.sign(u[2] - 0.5) * xp.arccos(xp.clip(f, -1.0, 1.0))
        out[pending[accept]] = theta[accept]
        pending = pending[~accept]
    wrapped = (out + math.pi + loc) % (2 * math.pi) - math.pi
    return wrapped


class VonMises(Distribution):
    """The von Mises (circular normal) distribution with mean angle ``loc`` and
    ``concentration`` kappa: density ``exp(kappa cos(x - loc)) / (2 pi I_0(kappa))``.
    Draws lie in [-pi, pi); ``mean`` and ``variance`` are the circular ones
    (``loc`` and ``1 - I_1(kappa) / I_0(kappa)``).

    >>> m = VonMises(ember.tensor([0.0]), ember.tensor([1.0]))
    >>> m.log_prob(ember.tensor([0.0]))
    tensor([-1.0738])
    >>> m.variance
    tensor([0.5536])
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(VonMises, _instance)
        batch_shape = ember.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        return self._finish_expand(new, batch_shape, VonMises)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.concentration * ember.cos(value - self.loc) - math.log(2 * math.pi) \
            - log_i0(self.concentration)

    def sample(self, sample_shape=()):
        """Rejection sampling (Best and Fisher) in float64, cast to the parameters'
        dtype."""
        shape = self._extended_shape(sample_shape)
        xp = _xp(self.loc)
        with ember.no_grad():
            loc = self.loc.expand(shape)._data.astype(np.float64).ravel()
            kappa = self.concentration.expand(shape)._data.astype(np.float64).ravel()
            draws = _sample_array(xp, loc, kappa, self.loc.device)
            return _wrap(draws.reshape(tuple(shape)), self.loc)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return 1 - bessel_ratio(self.concentration)
