"""The multivariate normal distribution."""
from __future__ import annotations

import math

import ember

from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mahalanobis(scale_tril, diff):
    """``diff^T (L L^T)^-1 diff`` per vector: the squared norm of ``L^-1 diff`` (one
    triangular solve; L broadcasts over diff's leading dims)."""
    solved = ember.linalg.solve_triangular(scale_tril, diff.unsqueeze(-1), upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(precision):
    """The lower Cholesky factor L of P^-1 without inverting P: with J the reversal
    permutation, U = J chol(J P J) J is upper triangular with U U^T = P, so
    Sigma = U^-T U^-1 and L = (U^T)^-1, one triangular solve."""
    flipped = ember.linalg.cholesky(ember.flip(precision, (-2, -1)))
    l_inv = ember.flip(flipped, (-2, -1)).mT
    eye = ember.eye(precision.shape[-1], dtype=precision.dtype, device=precision.device)
    return ember.linalg.solve_triangular(l_inv, eye, upper=False)


class MultivariateNormal(Distribution):
    """The multivariate normal N(loc, Sigma), with Sigma given by exactly one of
    ``covariance_matrix``, ``precision_matrix`` (Sigma^-1) or ``scale_tril`` (the lower
    Cholesky factor L, Sigma = L L^T). The others are derived lazily; everything is
    computed from L.

    >>> m = MultivariateNormal(ember.zeros(2), ember.eye(2))
    >>> m.log_prob(ember.zeros(2))
    tensor(-1.8379)
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(name, m) for name, m in (("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix),
                                           ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        batch_shape = ember.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = ember.Size(batch_shape)
        matrix_shape = batch_shape + self._event_shape + self._event_shape
        new.loc = self.loc.expand(batch_shape + self._event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(matrix_shape))
        return self._finish_expand(new, batch_shape, MultivariateNormal)

    def _matrix_shape(self):
        return tuple(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return ember.matmul(tril, tril.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        tril = self._unbroadcasted_scale_tril
        eye = ember.eye(tril.shape[-1], dtype=tril.dtype, device=tril.device)
        inverse = ember.linalg.solve_triangular(tril, eye, upper=False)
        return ember.matmul(inverse.mT, inverse).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape + self._event_shape))

    def rsample(self, sample_shape=()):
        """``loc + L eps`` with eps ~ N(0, I)."""
        shape = self._extended_shape(sample_shape)
        eps = ember.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + ember.matmul(self._unbroadcasted_scale_tril,
                                       eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        mahalanobis = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + mahalanobis) \
            - self._half_log_det()

    def entropy(self):
        entropy = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) \
            + self._half_log_det()
        if len(self._batch_shape) == 0:
            return entropy
        return entropy.expand(tuple(self._batch_shape))
