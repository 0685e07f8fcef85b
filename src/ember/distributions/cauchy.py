"""The Cauchy distribution."""
from __future__ import annotations

import math
import numbers

import ember

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution: density
    ``1 / (pi scale (1 + ((x - loc) / scale)^2))``. Its mean and variance do not exist
    (NaN and inf, as in PyTorch).

    >>> m = Cauchy(ember.tensor([0.0]), ember.tensor([1.0]))
    >>> m.log_prob(ember.tensor([1.0]))
    tensor([-1.8379])
    >>> m.icdf(ember.tensor([0.75]))
    tensor([1.])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if scalar else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Cauchy, _instance)
        batch_shape = ember.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return self._finish_expand(new, batch_shape, Cauchy)

    def _full(self, value):
        return ember.full(self._extended_shape(), value, dtype=self.loc.dtype,
                          device=self.loc.device)

    @property
    def mean(self):
        return self._full(math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._full(math.inf)

    def rsample(self, sample_shape=()):
        """``loc + scale * eps`` with eps a standard Cauchy draw."""
        shape = self._extended_shape(sample_shape)
        eps = ember.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() \
            - ((value - self.loc) / self.scale).pow(2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ember.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return ember.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
