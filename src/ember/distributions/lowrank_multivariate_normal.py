"""The multivariate normal with a low-rank-plus-diagonal covariance."""
from __future__ import annotations

import math

import ember

from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _batch_mv(matrix, vector):
    return ember.matmul(matrix, vector.unsqueeze(-1)).squeeze(-1)


def _batch_capacitance_tril(W, D):
    """The Cholesky factor of the capacitance matrix ``I + W^T D^-1 W`` (m x m)."""
    m = W.shape[-1]
    K = ember.matmul(W.mT / D.unsqueeze(-2), W)
    K = K + ember.eye(m, dtype=W.dtype, device=W.device)
    return ember.linalg.cholesky(K)


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log det(W W^T + D) by the matrix determinant lemma:
    log det(capacitance) + log det(D)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x by the Woodbury identity:
    x^T D^-1 x - |C^-1 W^T D^-1 x|^2 with C the capacitance's Cholesky factor."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, _batch_mv(Wt_Dinv, x))


class LowRankMultivariateNormal(Distribution):
    """The multivariate normal with covariance ``cov_factor cov_factor^T +
    diag(cov_diag)`` (``cov_factor`` n x m, usually m << n): log_prob and entropy cost
    O(n m^2) through the Woodbury identity and the matrix determinant lemma, not
    O(n^3).

    >>> m = LowRankMultivariateNormal(ember.zeros(2), ember.tensor([[1.0], [0.0]]),
    ...                               ember.ones(2))
    >>> m.log_prob(ember.zeros(2))
    tensor(-2.1845)
    >>> m.covariance_matrix
    tensor([[2., 0.],
            [0., 1.]])
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = ember.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as error:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from error
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = ember.Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return self._finish_expand(new, batch_shape, LowRankMultivariateNormal)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    def _matrix_shape(self):
        return tuple(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(
                    tuple(self._batch_shape + self._event_shape))

    @lazy_property
    def scale_tril(self):
        """The Cholesky factor of the covariance: sqrt(D) chol(I + D^-1/2 W W^T D^-1/2)
        (a well-conditioned factorization)."""
        n = self._event_shape[0]
        root = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / root
        K = ember.matmul(scaled, scaled.mT) + ember.eye(n, dtype=root.dtype,
                                                        device=root.device)
        return (root * ember.linalg.cholesky(K)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        covariance = ember.matmul(W, W.mT) + ember.diag_embed(self._unbroadcasted_cov_diag)
        return covariance.expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """``D^-1 - A^T A`` with A = C^-1 W^T D^-1 (Woodbury)."""
        D = self._unbroadcasted_cov_diag
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / D.unsqueeze(-2)
        A = ember.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        precision = ember.diag_embed(D.reciprocal()) - ember.matmul(A.mT, A)
        return precision.expand(self._matrix_shape())

    def rsample(self, sample_shape=()):
        """``loc + W eps_W + sqrt(D) eps_D`` with independent standard normals."""
        shape = self._extended_shape(sample_shape)
        W = self._unbroadcasted_cov_factor
        eps_w = ember.randn(tuple(shape[:-1]) + tuple(W.shape[-1:]), dtype=self.loc.dtype,
                            device=self.loc.device)
        eps_d = ember.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(W, eps_w) + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self):
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        entropy = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        if len(self._batch_shape) == 0:
            return entropy
        return entropy.expand(tuple(self._batch_shape))
