"""The Dirichlet distribution."""
from __future__ import annotations

import ember
import ember.nn.functional as F

from . import constraints
from ._special import digamma, lgamma, standard_gamma
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution on the simplex, with ``concentration`` alpha along the
    last dim: density ``Gamma(sum alpha) / prod Gamma(alpha_i) prod x_i^(alpha_i - 1)``.

    ``rsample`` draws independent Gamma(alpha_i, 1) variables (each reparameterized
    implicitly, see Gamma) and normalizes them, so gradients reach ``concentration``.

    >>> m = Dirichlet(ember.tensor([1.0, 1.0, 1.0]))
    >>> m.log_prob(ember.tensor([0.2, 0.3, 0.5]))
    tensor(0.6931)
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = ember.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self._event_shape)
        return self._finish_expand(new, batch_shape, Dirichlet)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        gammas = standard_gamma(self.concentration.expand(shape))
        return gammas / gammas.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ember.xlogy(self.concentration - 1.0, value).sum(-1) \
            + lgamma(self.concentration.sum(-1)) - lgamma(self.concentration).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        """``(alpha - 1) / sum(alpha - 1)`` (alpha - 1 clamped at 0). Where every
        alpha < 1 the density is unbounded at each vertex; as PyTorch, the first vertex
        is returned."""
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, True)
        first = ember.zeros(tuple(shifted.shape[:-1]), dtype=ember.int64, device=mode.device)
        vertex = F.one_hot(first, shifted.shape[-1]).to(mode.dtype)
        all_below = (self.concentration < 1).all(dim=-1, keepdim=True)
        return ember.where(all_below, vertex, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        k = self.concentration.shape[-1]
        total = self.concentration.sum(-1)
        return lgamma(self.concentration).sum(-1) - lgamma(total) \
            - (k - total) * digamma(total) \
            - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1)

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))
