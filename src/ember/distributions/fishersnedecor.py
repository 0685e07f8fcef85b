"""The Fisher-Snedecor (F) distribution."""
from __future__ import annotations

import math
import numbers

import ember

from . import constraints
from ._special import lgamma
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The F distribution with ``df1`` and ``df2`` degrees of freedom: the ratio
    ``(X1 / df1) / (X2 / df2)`` of two scaled chi-squared variables, sampled (and
    reparameterized) that way. The mean is NaN for df2 <= 2, the mode for df1 <= 2, the
    variance for df2 <= 4.

    >>> m = FisherSnedecor(ember.tensor([4.0]), ember.tensor([6.0]))
    >>> m.log_prob(ember.tensor([1.0]))
    tensor([-0.8802])
    >>> m.mean
    tensor([1.5000])
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number)
        super().__init__(() if scalar else self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = ember.Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return self._finish_expand(new, batch_shape, FisherSnedecor)

    @property
    def mean(self):
        df2 = self.df2
        return ember.where(df2 > 2, df2 / (df2 - 2), math.nan)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return ember.where(self.df1 > 2, mode, math.nan)

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        result = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return ember.where(df2 > 4, result, math.nan)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = ember.finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        x2.detach().clamp_(min=tiny)  # not recorded: keeps the ratio finite
        y = x1 / x2
        y.detach().clamp_(min=tiny)
        return y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        t1 = lgamma(half1 + half2) - lgamma(half1) - lgamma(half2)
        t2 = half1 * ratio.log() + (half1 - 1) * value.log()
        t3 = (half1 + half2) * ember.log1p(ratio * value)
        return t1 + t2 - t3
