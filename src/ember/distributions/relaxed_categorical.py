"""The relaxed one-hot categorical (Concrete / Gumbel-softmax) distribution."""
from __future__ import annotations

import ember

from . import constraints
from ._special import lgamma
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical draw: ``log_softmax((logits + G) /
    temperature)`` with G standard Gumbel noise; working in log space keeps small
    probabilities exact.

    >>> m = ExpRelaxedCategorical(ember.tensor(1.0), probs=ember.tensor([0.5, 0.5]))
    >>> m.log_prob(ember.log(ember.tensor([0.5, 0.5])))
    tensor(-1.3863)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = ember.Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        return self._finish_expand(new, batch_shape, ExpRelaxedCategorical)

    @property
    def param_shape(self) -> ember.Size:
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        logits = self.logits
        u = clamp_probs(ember.rand(shape, dtype=logits.dtype, device=logits.device))
        gumbels = -((-(u.log())).log())
        scores = (logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        temperature = ember.as_tensor(self.temperature, dtype=logits.dtype,
                                      device=logits.device)
        log_scale = lgamma(ember.full_like(temperature, float(k))) \
            + (k - 1) * temperature.log()
        score = logits - value * temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """A continuous relaxation of OneHotCategorical on the simplex (the Gumbel-softmax):
    ``exp`` of an ExpRelaxedCategorical draw. Lower ``temperature`` gives draws closer
    to one-hot vectors; ``rsample`` carries gradients to the probabilities.

    >>> m = RelaxedOneHotCategorical(ember.tensor(1.0), probs=ember.tensor([0.5, 0.5]))
    >>> m.log_prob(ember.tensor([0.5, 0.5]))
    tensor(0.)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
