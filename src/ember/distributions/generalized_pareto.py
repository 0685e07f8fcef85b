"""The generalized Pareto distribution."""
from __future__ import annotations

import math
import numbers

import ember

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with ``loc``, ``scale`` and shape
    ``concentration`` xi: survival function ``(1 + xi z)^(-1/xi)`` with
    z = (x - loc) / scale (``exp(-z)`` at xi = 0). Its support is [loc, inf) for
    xi >= 0 and [loc, loc - scale / xi] for xi < 0; it covers the Exponential (xi = 0)
    and the Uniform (xi = -1). Sampled by inverting the cdf.

    >>> m = GeneralizedPareto(ember.tensor([0.0]), ember.tensor([1.0]), ember.tensor([0.5]))
    >>> m.log_prob(ember.tensor([1.0]))
    tensor([-1.2164])
    >>> m.mean
    tensor([2.])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(() if scalar else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = ember.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        return self._finish_expand(new, batch_shape, GeneralizedPareto)

    def _safe(self):
        """(xi == 0 mask, xi with the zeros replaced by 1) for the xi != 0 formulas."""
        zero = ember.isclose(self.concentration, ember.zeros_like(self.concentration))
        return zero, ember.where(zero, ember.ones_like(self.concentration),
                                 self.concentration)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._safe()
        y = 1 / xi + ember.ones_like(z)
        nonzero = ember.where(y == 0, y, y * ember.log1p(xi * z))
        return -self.scale.log() - ember.where(zero, z, nonzero)

    def log_survival_function(self, value):
        """log P(X > value)."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._safe()
        return ember.where(zero, -z, -ember.log1p(xi * z) / xi)

    def log_cdf(self, value):
        """log P(X <= value)."""
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ember.exp(self.log_cdf(value))

    def icdf(self, value):
        zero, xi = self._safe()
        log_u = ember.log1p(-value)
        nonzero = self.loc + self.scale / xi * ember.expm1(-xi * log_u)
        return ember.where(zero, self.loc - self.scale * log_u, nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        xi = ember.where(valid, self.concentration, 0.5)
        return ember.where(valid, self.loc + self.scale / (1 - xi), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        xi = ember.where(valid, self.concentration, 0.25)
        result = self.scale.pow(2) / ((1 - xi).pow(2) * (1 - 2 * xi))
        return ember.where(valid, result, math.nan)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(tuple(self._batch_shape))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = ember.where(self.concentration < 0,
                            self.loc - self.scale / self.concentration, math.inf)
        return constraints.interval(self.loc, upper)
