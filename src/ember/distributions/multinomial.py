"""The multinomial distribution."""
from __future__ import annotations

import math

import ember

from . import constraints
from ._special import lgamma
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts of ``total_count`` independent draws from a Categorical(``probs`` or
    ``logits``): ``P(x) = n! / prod(x_i!) prod(p_i^x_i)``. ``sample`` needs one integer
    ``total_count``; ``log_prob`` takes the count from the value, so any total works
    there.

    >>> m = Multinomial(4, probs=ember.tensor([0.5, 0.5]))
    >>> m.log_prob(ember.tensor([2.0, 2.0]))
    tensor(-0.9808)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if isinstance(total_count, bool) or not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = ember.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        return self._finish_expand(new, batch_shape, Multinomial)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self) -> ember.Size:
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        sample_shape = ember.Size(sample_shape)
        shape = self._extended_shape(sample_shape)
        counts = ember.zeros(shape, dtype=ember.int64, device=self.probs.device)
        if self.total_count > 0:
            draws = self._categorical.sample(ember.Size((self.total_count,)) + sample_shape)
            draws = draws.permute(*range(1, draws.dim()), 0)
            counts = counts.scatter_add(-1, draws, ember.ones_like(draws))
        return counts.type_as(self.probs)

    def _binomial_log_prob(self, k):
        """log P(x_i = k) of each count's Binomial(total_count, p_i) marginal."""
        n, p = float(self.total_count), self.probs
        log_choose = math.lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)
        return log_choose + ember.xlogy(k, p) + ember.xlogy(n - k, 1 - p)

    def entropy(self):
        """``n H(categorical) - log n! + sum_i E[log x_i!]``, the last by summing the
        Binomial marginals over 1..n (O(n K) work)."""
        n = self.total_count
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        if n == 0:
            return term1
        probs = self.probs
        k = ember.arange(1, n + 1, dtype=probs.dtype, device=probs.device)
        k = k.view((n,) + (1,) * probs.dim())
        weights = lgamma(k + 1)
        term2 = (ember.exp(self._binomial_log_prob(k)) * weights).sum(0).sum(-1)
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = ember.where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
