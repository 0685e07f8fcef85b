"""The Wishart distribution over positive-definite matrices."""
from __future__ import annotations

import math
import numbers
import warnings

import ember

from . import constraints
from ._special import digamma, lgamma
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvlgamma(a, p: int):
    """log Gamma_p(a) = p (p - 1) / 4 log(pi) + sum_i lgamma(a - i / 2)."""
    total = p * (p - 1) / 4 * math.log(math.pi)
    for i in range(p):
        total = total + lgamma(a - i / 2)
    return total


def _mvdigamma(a, p: int):
    """d/da log Gamma_p(a) = sum_i digamma(a - i / 2)."""
    total = 0.0
    for i in range(p):
        total = total + digamma(a - i / 2)
    return total


def _cholesky_solve(b, tril):
    """(L L^T)^-1 b by two triangular solves."""
    half = ember.linalg.solve_triangular(tril, b, upper=False)
    return ember.linalg.solve_triangular(tril.mT, half, upper=True)


class Wishart(ExponentialFamily):
    """The Wishart distribution with ``df`` degrees of freedom (> p - 1) and scale Sigma,
    given by exactly one of ``covariance_matrix``, ``precision_matrix`` (Sigma^-1) or
    ``scale_tril`` (lower Cholesky factor of Sigma): the law of ``X^T X`` for ``df`` rows
    X_i ~ N(0, Sigma) (any real df > p - 1). ``rsample`` uses the Bartlett decomposition,
    with chi-squared diagonals reparameterized implicitly.

    >>> m = Wishart(ember.tensor(3.0), covariance_matrix=ember.eye(2))
    >>> m.log_prob(ember.eye(2))
    tensor(-3.5310)
    >>> m.mean
    tensor([[3., 0.],
            [0., 3.]])
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):  # type: ignore[override]
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = ember.Size(tuple(param.shape[:-2]))
            self.df = ember.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = ember.Size(ember.broadcast_shapes(tuple(param.shape[:-2]),
                                                            tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{p - 1}.")
        matrix_shape = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(matrix_shape)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(matrix_shape)
        else:
            self.precision_matrix = param.expand(matrix_shape)
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        """Chi2(df - i) for the Bartlett diagonal entries i = 0..p-1."""
        tril = self._unbroadcasted_scale_tril
        offsets = ember.arange(self._event_shape[-1], dtype=tril.dtype, device=tril.device)
        return Chi2(self.df.unsqueeze(-1) - offsets.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = ember.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        new._event_shape = self._event_shape
        new._dist_chi2 = new._chi2(batch_shape)
        return self._finish_expand(new, batch_shape, Wishart)

    def _matrix_shape(self):
        return tuple(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        tril = self._unbroadcasted_scale_tril
        eye = ember.eye(self._event_shape[-1], dtype=tril.dtype, device=tril.device)
        return _cholesky_solve(eye, tril).expand(self._matrix_shape())

    def _df_matrix(self, value):
        return value.view(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        """``(df - p - 1) Sigma``; NaN where df <= p + 1 (no interior mode)."""
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ember.where(factor <= 0, math.nan, factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diagonal = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + diagonal.unsqueeze(-1)
                                           * diagonal.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape):
        """``(L A)(L A)^T`` with A lower triangular: sqrt(Chi2(df - i)) on the diagonal,
        standard normals below it."""
        p = self._event_shape[-1]
        eps = ember.finfo(self.df.dtype).eps
        diagonal = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        below = ember.randn(tuple(sample_shape) + tuple(self._batch_shape) + (p, p),
                            dtype=diagonal.dtype, device=diagonal.device).tril(-1)
        chol = self._unbroadcasted_scale_tril @ (below + ember.diag_embed(diagonal))
        return chol @ chol.mT

    def rsample(self, sample_shape=(), max_try_correction=None):
        """A Bartlett draw; draws that round to a singular matrix (likely when
        df < p) are drawn again, up to ``max_try_correction`` (10) times."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = ember.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = ~self.support.check(sample.detach())
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                fresh = self._bartlett_sampling(sample_shape)
                sample = ember.where(singular.unsqueeze(-1).unsqueeze(-1), fresh, sample)
                singular = ~self.support.check(sample.detach())
                if not bool(singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        half_log_det = tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = _cholesky_solve(value, tril).diagonal(dim1=-2, dim2=-1).sum(-1)
        return -nu * (p * _LOG_2 / 2 + half_log_det) - _mvlgamma(nu / 2, p) \
            + (nu - p - 1) / 2 * ember.linalg.slogdet(value).logabsdet - trace / 2

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (p + 1) * (p * _LOG_2 / 2 + half_log_det) + _mvlgamma(nu / 2, p) \
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-ember.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) \
            + _mvlgamma(y + (p + 1) / 2, p)
