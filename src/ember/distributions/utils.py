"""Helpers shared by the distributions: broadcasting parameters, probabilities <-> logits,
lazily computed attributes."""
from __future__ import annotations

import functools
import numbers

import ember

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant


def _is_number(value) -> bool:
    return isinstance(value, numbers.Number)


def broadcast_all(*values):
    """The values broadcast to one shape, as tensors. Numbers become tensors of the first
    tensor's dtype and device (the default dtype when all are numbers).

    >>> loc, scale = broadcast_all(ember.zeros(3), 1.0)
    >>> scale
    tensor([1., 1., 1.])
    """
    if not all(isinstance(v, ember.Tensor) or _is_number(v) for v in values):
        raise ValueError("Input arguments must all be instances of Number or ember.Tensor.")
    like = next((v for v in values if isinstance(v, ember.Tensor)), None)
    options = {"dtype": ember.get_default_dtype()} if like is None else \
        {"dtype": like.dtype, "device": like.device}
    tensors = [v if isinstance(v, ember.Tensor) else ember.tensor(v, **options)
               for v in values]
    return tuple(ember.broadcast_tensors(*tensors))


def _sum_rightmost(value, dim: int):
    """``value`` summed over its ``dim`` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    """Probabilities from logits: ``sigmoid`` for binary (log-odds) logits, ``softmax``
    over the last dim otherwise."""
    if is_binary:
        return ember.sigmoid(logits)
    return ember.softmax(logits, dim=-1)


def clamp_probs(probs):
    """``probs`` clamped to ``[eps, 1 - eps]`` (``eps`` of its dtype), away from 0 and 1.

    >>> clamp_probs(ember.tensor([0.0, 0.5, 1.0], dtype=ember.float64))
    tensor([2.2204e-16, 5.0000e-01, 1.0000e+00], dtype=ember.float64)
    """
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Logits from probabilities (clamped first): log-odds for binary, log otherwise."""
    clamped = clamp_probs(probs)
    if is_binary:
        return ember.log(clamped) - ember.log1p(-clamped)
    return ember.log(clamped)


class lazy_property:
    """An attribute computed on first access (with gradients enabled) and then stored on
    the instance, as ``Categorical.logits`` from ``probs``."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_mask(n: int, diag: int, device):
    index = ember.arange(n, device=device)
    return index < index.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower-triangular entries (below diagonal ``diag``) of ``mat``'s last two dims,
    in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of ``tril_matrix_to_vec``: a (batch of) D x D lower-triangular matrices
    filled in row order from ``vec``'s last dim."""
    size = vec.shape[-1]
    root = ((1 + 2 * diag) ** 2 + 8 * size + 4 * abs(diag) * (diag + 1)) ** 0.5
    n = (-(1 + 2 * diag) + root) / 2
    if abs(round(n) - n) > 1e-9:
        raise ValueError(f"The size of last dimension is {size} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mask = _tril_mask(n, diag, vec.device)
    rows, cols = mask.nonzero().unbind(-1)
    flat = vec.new_zeros(tuple(vec.shape[:-1]) + (n * n,))
    index = (rows * n + cols).expand(tuple(vec.shape[:-1]) + (size,))
    return flat.scatter(-1, index, vec).reshape(tuple(vec.shape[:-1]) + (n, n))
