"""Student's t distribution."""
from __future__ import annotations

import math
import numbers

import ember

from . import constraints
from ._special import digamma, lgamma
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, ``loc`` and ``scale``: density
    proportional to ``(1 + z^2 / df)^(-(df + 1) / 2)``, z = (x - loc) / scale.
    ``rsample`` is ``loc + scale X / sqrt(Z / df)`` with X normal and Z ~ Chi2(df)
    (reparameterized implicitly), so gradients reach ``df`` too. The mean is NaN for
    df <= 1; the variance is inf for 1 < df <= 2 and NaN for df <= 1.

    >>> m = StudentT(ember.tensor([3.0]))
    >>> m.log_prob(ember.tensor([1.0]))
    tensor([-1.5763])
    >>> m.variance
    tensor([3.])
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        scalar = all(isinstance(v, numbers.Number) for v in (df, loc, scale))
        super().__init__(() if scalar else self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = ember.Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        return self._finish_expand(new, batch_shape, StudentT)

    @property
    def mean(self):
        return ember.where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        return ember.where(df > 2, finite, ember.where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = ember.randn(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * ember.rsqrt(z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        log_norm = self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) \
            + lgamma(0.5 * self.df) - lgamma(0.5 * (self.df + 1.0))
        return -0.5 * (self.df + 1.0) * ember.log1p(y.pow(2) / self.df) - log_norm

    def entropy(self):
        half_df = 0.5 * self.df
        lbeta = lgamma(half_df) + math.lgamma(0.5) - lgamma(half_df + 0.5)
        return self.scale.log() + (half_df + 0.5) * (digamma(half_df + 0.5)
                                                     - digamma(half_df)) \
            + 0.5 * self.df.log() + lbeta
