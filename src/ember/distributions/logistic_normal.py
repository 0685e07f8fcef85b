"""The logistic-normal distribution on the simplex."""
from __future__ import annotations

from . import constraints
from .independent import Independent
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """A Normal(``loc``, ``scale``) vector of K - 1 entries mapped onto the K-simplex by
    the StickBreakingTransform.

    >>> m = LogisticNormal(ember.zeros(2), ember.ones(2))
    >>> m.log_prob(ember.tensor([1 / 3, 1 / 3, 1 / 3]))
    tensor(1.4580)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        base = self.base_dist
        return (base.base_dist if isinstance(base, Independent) else base).loc

    @property
    def scale(self):
        base = self.base_dist
        return (base.base_dist if isinstance(base, Independent) else base).scale
