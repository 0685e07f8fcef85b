"""The LKJ distribution over Cholesky factors of correlation matrices."""
from __future__ import annotations

import math

import ember

from . import constraints
from ._special import lgamma
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


def _mvlgamma(a, p: int):
    """The multivariate log-gamma log Gamma_p(a)."""
    total = p * (p - 1) / 4 * math.log(math.pi)
    for i in range(p):
        total = total + lgamma(a - i / 2)
    return total


class LKJCholesky(Distribution):
    """The LKJ distribution (Lewandowski, Kurowicka and Joe, 2009) on the lower
    Cholesky factors L of ``dim`` x ``dim`` correlation matrices: the density of
    ``L L^T`` is proportional to ``det(L L^T)^(concentration - 1)`` (uniform over
    correlation matrices at concentration 1). Sampled by the onion method.

    >>> m = LKJCholesky(3, ember.tensor(1.0))
    >>> m.log_prob(ember.eye(3))
    tensor(-1.5963)
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.shape
        event_shape = (dim, dim)
        # row i's squared norm below the diagonal ~ Beta(i / 2, conc + (dim - 1 - i) / 2)
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = ember.arange(self.dim - 1, dtype=self.concentration.dtype,
                              device=self.concentration.device)
        offset = ember.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = ember.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        return self._finish_expand(new, batch_shape, LKJCholesky)

    def sample(self, sample_shape=()):
        """Onion method: row i is ``sqrt(y_i) u_i`` (y_i Beta, u_i uniform on the unit
        sphere in its first i coordinates) and the diagonal makes the row unit norm."""
        with ember.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = ember.randn(self._extended_shape(sample_shape), dtype=y.dtype,
                            device=y.device).tril(-1)
            tiny = ember.finfo(y.dtype).tiny
            sphere = u / u.norm(dim=-1, keepdim=True).clamp(min=tiny)  # row 0 stays 0
            w = y.sqrt() * sphere
            diagonal = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + ember.diag_embed(diagonal)

    def log_prob(self, value):
        """``sum_i (2 (conc - 1) + dim - i) log L_ii`` (i = 2..dim) less the log
        normalizer."""
        if self._validate_args:
            self._validate_sample(value)
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = ember.arange(2, self.dim + 1, dtype=value.dtype, device=value.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diagonal.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = 0.5 * dm1 * math.log(math.pi) + _mvlgamma(alpha - 0.5, dm1) \
            - lgamma(alpha) * dm1
        return unnormalized - normalizer
