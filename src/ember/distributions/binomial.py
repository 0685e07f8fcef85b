"""The binomial distribution."""
from __future__ import annotations

import numpy as np

import ember

from .. import backend
from ..ops.special_kernels import lgamma_array
from . import constraints
from ._special import lgamma
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial"]


def _uniform(xp, n: int, device):
    return ember.rand(n, dtype=ember.float64, device=device)._data


def _inversion(xp, n, q, device):
    """Binomial(n, q) draws by a sequential search of the cdf (for n q < 10, where the
    search is short and (1 - q)^n does not underflow)."""
    u = _uniform(xp, n.size, device)
    k = xp.zeros_like(n)
    pmf = xp.exp(n * xp.log1p(-q))
    cdf = pmf.copy()
    odds = q / (1 - q)
    active = (u > cdf) & (k < n)
    while bool(active.any()):
        pmf = xp.where(active, pmf * (n - k) / (k + 1) * odds, pmf)
        k = xp.where(active, k + 1, k)
        cdf = xp.where(active, cdf + pmf, cdf)
        active = (u > cdf) & (k < n)
    return k


def _btrs(xp, n, q, device):
    """Binomial(n, q) draws by Hormann's transformed rejection with squeeze (BTRS), for
    n q >= 10: a uniform pair is mapped near the mode and accepted against the exact
    log-pmf."""
    out = xp.zeros_like(n)
    spq = xp.sqrt(n * q * (1 - q))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * q
    c = n * q + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    log_odds = xp.log(q / (1 - q))
    m = xp.floor((n + 1) * q)
    h = lgamma_array(xp, m + 1) + lgamma_array(xp, n - m + 1)
    pending = xp.arange(n.size)
    while pending.size:
        u = _uniform(xp, pending.size, device) - 0.5
        v = _uniform(xp, pending.size, device)
        us = 0.5 - xp.abs(u)
        ap, bp, count = a[pending], b[pending], n[pending]
        k = xp.floor((2 * ap / us + bp) * u + c[pending])
        inside = (k >= 0) & (k <= count)
        squeeze = inside & (us >= 0.07) & (v <= v_r[pending])
        with np.errstate(divide="ignore", invalid="ignore"):
            log_v = xp.log(v * alpha[pending] / (ap / (us * us) + bp))
            safe_k = xp.where(inside, k, 0.0)
            bound = h[pending] - lgamma_array(xp, safe_k + 1) \
                - lgamma_array(xp, count - safe_k + 1) + (safe_k - m[pending]) * log_odds[pending]
        accept = squeeze | (inside & (log_v <= bound))
        out[pending[accept]] = k[accept]
        pending = pending[~accept]
    return out


def sample_binomial(total_count, probs):
    """Draws of Binomial(total_count, probs) (broadcast tensors of one shape), as a
    tensor of probs' dtype. Exact for every n: inversion where n min(p, 1-p) < 10,
    BTRS otherwise; p > 1/2 draws n - Binomial(n, 1 - p)."""
    xp = backend.xp_for_device(probs.device)
    n = total_count._data.astype(np.float64).ravel()
    p = probs._data.astype(np.float64).ravel()
    flip = p > 0.5
    q = xp.where(flip, 1 - p, p)
    out = xp.zeros_like(n)
    live = (n > 0) & (q > 0)
    small = live & (n * q < 10)
    large = live & ~small
    for mask, method in ((small, _inversion), (large, _btrs)):
        index = xp.nonzero(mask)[0]
        if index.size:
            out[index] = method(xp, n[index], q[index], probs.device)
    out = xp.where(flip, n - out, out)
    return ember.Tensor._make(out.reshape(probs.shape).astype(probs.dtype.numpy),
                              probs.device)


def _count_and_param(d, total_count, probs, logits) -> None:
    """Binomial-like ``total_count`` with ``probs`` or ``logits`` (exactly one), broadcast
    together, the count in the parameter's dtype."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    d.total_count, param = broadcast_all(total_count, value)
    d.total_count = d.total_count.type_as(param)
    setattr(d, name, param)
    d._param = param


class Binomial(Distribution):
    """The number of successes in ``total_count`` Bernoulli(``probs``) trials:
    ``P(k) = C(n, k) p^k (1 - p)^(n - k)``. Give ``probs`` or ``logits``;
    ``total_count`` may be a tensor broadcast with them.

    >>> m = Binomial(10, ember.tensor([0.5]))
    >>> m.log_prob(ember.tensor([5.0]))
    tensor([-1.4020])
    >>> m.mean
    tensor([5.])
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _count_and_param(self, total_count, probs, logits)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = ember.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        self._expand_probs_logits(new, batch_shape)
        return self._finish_expand(new, batch_shape, Binomial)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> ember.Size:
        return self._param.shape

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return sample_binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        # n log(1 + e^logits), stable for either sign of the logits
        log_normalizer = n * logits.clamp(min=0) + n * ember.log1p(ember.exp(-logits.abs()))
        return value * logits - lgamma(value + 1) - lgamma(n - value + 1) \
            + lgamma(n + 1) - log_normalizer

    def _homogeneous_count(self, what: str) -> int:
        count = int(self.total_count.max())
        if not bool(self.total_count.min() == count):
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return count

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(ember.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        count = self._homogeneous_count("enumerate_support")
        values = ember.arange(1 + count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


