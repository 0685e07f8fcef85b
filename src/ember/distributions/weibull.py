"""The two-parameter Weibull distribution."""
from __future__ import annotations

import ember

from . import constraints
from ._special import lgamma
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The Weibull distribution: cdf ``1 - exp(-(x / scale)^concentration)`` on x >= 0;
    ``scale E^(1 / concentration)`` for E ~ Exponential(1).

    >>> m = Weibull(ember.tensor([1.0]), ember.tensor([2.0]))
    >>> m.log_prob(ember.tensor([1.0]))
    tensor([-0.3069])
    >>> m.mean
    tensor([0.8862])
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(ember.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self):
        """``scale ((k - 1) / k)^(1 / k)``: NaN where k < 1 (as in PyTorch)."""
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        return self.scale.pow(2) * (lgamma(1 + 2 * self.concentration_reciprocal).exp()
                                    - lgamma(1 + self.concentration_reciprocal).exp().pow(2))

    def entropy(self):
        return euler_constant * (1 - self.concentration_reciprocal) \
            + (self.scale * self.concentration_reciprocal).log() + 1
