"""The negative binomial distribution."""
from __future__ import annotations

import ember
import ember.nn.functional as F

from . import constraints
from ._special import lgamma
from .binomial import _count_and_param
from .distribution import Distribution
from .gamma import Gamma
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """The number of successes before ``total_count`` failures in Bernoulli(``probs``)
    trials: ``P(k) = Gamma(k + r) / (k! Gamma(r)) p^k (1 - p)^r``, r = ``total_count``
    (any r > 0). Sampled as a Gamma-Poisson mixture.

    >>> m = NegativeBinomial(3.0, ember.tensor([0.5]))
    >>> m.log_prob(ember.tensor([2.0]))
    tensor([-1.6740])
    >>> m.mean
    tensor([3.])
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _count_and_param(self, total_count, probs, logits)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = ember.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        self._expand_probs_logits(new, batch_shape)
        return self._finish_expand(new, batch_shape, NegativeBinomial)

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
        return self.total_count * ember.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / ember.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(self.total_count, ember.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=()):
        """Poisson(rate) with rate ~ Gamma(total_count, (1 - p) / p)."""
        with ember.no_grad():
            return ember.poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = self.total_count * F.logsigmoid(-self.logits) \
            + value * F.logsigmoid(self.logits)
        log_normalization = -lgamma(self.total_count + value) + lgamma(1.0 + value) \
            + lgamma(self.total_count)
        # r + k = 0 only at r = 0, k = 0: P = 1 there
        log_normalization = ember.where(self.total_count + value == 0.0, 0.0,
                                        log_normalization)
        return log_unnormalized - log_normalization
