"""``ember.distributions``: probability distributions with PyTorch's API.

Each distribution has ``batch_shape`` / ``event_shape``, ``sample`` and (where it is
reparameterizable, ``has_rsample``) ``rsample``, ``log_prob``, ``entropy``, ``mean``,
``mode``, ``variance``, ``stddev``, ``cdf`` / ``icdf`` where defined, ``expand``, and
``support`` / ``arg_constraints`` for validation; ``kl_divergence(p, q)`` covers the
registered pairs.

>>> from ember.distributions import Normal, kl_divergence
>>> loc = ember.tensor(0.0, requires_grad=True)
>>> x = Normal(loc, 1.0).rsample((4,))
>>> x.sum().backward()                 # pathwise: each draw moves with loc
>>> loc.grad
tensor(4.)
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transforms import (
                         AffineTransform,
                         ComposeTransform,
                         ExpTransform,
                         PowerTransform,
                         SigmoidTransform,
                         TanhTransform,
                         Transform,
                         identity_transform,
)
from .uniform import Uniform

__all__ = [
    "AffineTransform", "Bernoulli", "Beta", "Categorical", "ComposeTransform", "Dirichlet",
    "Distribution", "ExpTransform", "Exponential", "ExponentialFamily", "Gamma",
    "Independent", "Laplace", "LogNormal", "Multinomial", "MultivariateNormal", "Normal",
    "OneHotCategorical", "Poisson", "PowerTransform", "SigmoidTransform", "TanhTransform",
    "Transform", "TransformedDistribution", "Uniform", "constraints", "identity_transform",
    "kl_divergence", "register_kl", "transforms",
]
