"""``ember.masked``: reductions and normalizations that see only the elements a boolean
``mask`` keeps, with ``torch.masked``'s names and results. The mask broadcasts to the
input; masked-out elements count as the operation's identity (0 for sums, -inf for
maxima, ...), and a reduction over nothing gives what PyTorch gives (``mean`` NaN,
``amax`` -inf, ``sum`` 0). Gradients flow to the kept elements only.

>>> import ember
>>> x = ember.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
>>> keep = ember.tensor([[True, False, True], [False, False, False]])
>>> ember.masked.sum(x, 1, mask=keep)
tensor([4., 0.])
>>> ember.masked.mean(x, 1, mask=keep)
tensor([2., nan])
"""
from __future__ import annotations

import math

from .. import dtypes
from ..creation import ones_like
from ..ops import NAMESPACES
from ..tensor import Tensor

__all__ = ["sum", "mean", "amax", "amin", "argmax", "argmin", "prod", "median", "var",
           "std", "norm", "logsumexp", "softmax", "log_softmax", "softmin", "normalize",
           "cumsum", "cumprod", "logaddexp"]

_E = NAMESPACES["ember"]
_F = NAMESPACES["nn.functional"]


def _mask(input: Tensor, mask, op: str) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"masked.{op}(): input must be a Tensor, got {type(input).__name__}")
    if mask is None:
        return ones_like(input, dtype=dtypes.bool)
    if not isinstance(mask, Tensor) or mask.dtype is not dtypes.bool:
        raise ValueError(f"masked.{op}(): mask must be a bool Tensor")
    try:
        return _E["broadcast_to"](mask.to(device=input.device), tuple(input.shape))
    except RuntimeError:
        raise RuntimeError(f"masked.{op}(): mask of shape {list(mask.shape)} does not "
                           f"broadcast to the input's shape {list(input.shape)}") from None


def _cast(input: Tensor, dtype) -> Tensor:
    return input if dtype is None else input.to(dtype)


def _filled(input: Tensor, mask: Tensor, value) -> Tensor:
    return _E["where"](mask, input, value)


def _dims(dim, ndim: int):
    if dim is None:
        return tuple(range(ndim))
    return (dim,) if isinstance(dim, int) else tuple(dim)


def _extreme(input: Tensor, largest: bool) -> float:
    if input.is_floating_point():
        return -math.inf if largest else math.inf
    info = dtypes.iinfo(input.dtype)
    return info.min if largest else info.max


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The sum of the kept elements over ``dim`` (all dims by default); 0 where none is
    kept."""
    m = _mask(input, mask, "sum")
    x = _cast(input, dtype)
    return _E["sum"](_filled(x, m, 0), _dims(dim, x.ndim), keepdim)


def _count(m: Tensor, dim, keepdim: bool, like: Tensor) -> Tensor:
    return _E["sum"](m.to(like.dtype), _dims(dim, m.ndim), keepdim)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The mean of the kept elements; NaN where none is kept."""
    m = _mask(input, mask, "mean")
    x = _cast(input, dtype)
    if not x.is_floating_point():
        x = x.to(dtypes.get_default_dtype())
    return sum(x, dim, keepdim=keepdim, mask=m) / _count(m, dim, keepdim, x)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The largest kept element; -inf (the dtype's lowest for integers) where none is
    kept."""
    m = _mask(input, mask, "amax")
    x = _cast(input, dtype)
    return _E["amax"](_filled(x, m, _extreme(x, True)), _dims(dim, x.ndim), keepdim)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The smallest kept element; inf (the dtype's largest for integers) where none is
    kept."""
    m = _mask(input, mask, "amin")
    x = _cast(input, dtype)
    return _E["amin"](_filled(x, m, _extreme(x, False)), _dims(dim, x.ndim), keepdim)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The index of the largest kept element along ``dim`` (int64)."""
    m = _mask(input, mask, "argmax")
    x = _cast(input, dtype)
    return _E["argmax"](_filled(x, m, _extreme(x, True)), dim, keepdim)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The index of the smallest kept element along ``dim`` (int64)."""
    m = _mask(input, mask, "argmin")
    x = _cast(input, dtype)
    return _E["argmin"](_filled(x, m, _extreme(x, False)), dim, keepdim)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The product of the kept elements; 1 where none is kept."""
    m = _mask(input, mask, "prod")
    x = _filled(_cast(input, dtype), m, 1)
    for d in sorted(_dims(dim, x.ndim), reverse=True):
        x = _E["prod"](x, d, keepdim)
    return x


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """The lower median of the kept elements along ``dim``; NaN where none is kept."""
    m = _mask(input, mask, "median")
    x = _cast(input, dtype)
    if not x.is_floating_point():
        raise TypeError("masked.median(): expected a floating-point input (masked-out "
                        "elements become NaN)")
    return _E["nanmedian"](_filled(x, m, math.nan), dim, keepdim).values


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """The variance of the kept elements (``correction`` 1 by default, or 0 with
    ``unbiased=False``); NaN where too few are kept."""
    if unbiased is not None and correction is not None:
        raise ValueError("masked.var(): only one of unbiased and correction may be given")
    correction = (1 if unbiased is None or unbiased else 0) if correction is None \
        else correction
    m = _mask(input, mask, "var")
    x = _cast(input, dtype)
    if not x.is_floating_point():
        x = x.to(dtypes.get_default_dtype())
    dims = _dims(dim, x.ndim)
    count = _count(m, dims, True, x)
    centre = sum(x, dims, keepdim=True, mask=m) / count
    squares = sum((x - centre) ** 2, dims, keepdim=keepdim, mask=m)
    count = count if keepdim else _E["sum"](m.to(x.dtype), dims, False)
    divisor = count - correction
    return squares / _E["where"](divisor > 0, divisor, math.nan)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """The standard deviation of the kept elements (see :func:`var`)."""
    return _E["sqrt"](var(input, dim, unbiased, correction=correction, keepdim=keepdim,
                          dtype=dtype, mask=mask))


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The ``ord``-norm of the kept elements (0 where none is kept)."""
    m = _mask(input, mask, "norm")
    x = _cast(input, dtype)
    return NAMESPACES["linalg"]["vector_norm"](_filled(x, m, 0), ord, _dims(dim, x.ndim),
                                               keepdim)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """``log(sum(exp(kept elements)))``; -inf where none is kept."""
    m = _mask(input, mask, "logsumexp")
    x = _cast(input, dtype)
    return _E["logsumexp"](_filled(x, m, -math.inf), _dims(dim, x.ndim), keepdim)


def softmax(input, dim, *, dtype=None, mask=None):
    """Softmax over the kept elements of ``dim`` (0 at masked-out ones; NaN where a slice
    keeps nothing)."""
    m = _mask(input, mask, "softmax")
    x = _cast(input, dtype)
    return _F["softmax"](_filled(x, m, -math.inf), dim)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """Log-softmax over the kept elements of ``dim`` (-inf at masked-out ones)."""
    m = _mask(input, mask, "log_softmax")
    x = _cast(input, dtype)
    return _F["log_softmax"](_filled(x, m, -math.inf), dim)


def softmin(input, dim, *, dtype=None, mask=None):
    """Softmax of ``-input`` over the kept elements of ``dim``."""
    m = _mask(input, mask, "softmin")
    x = _cast(input, dtype)
    return _F["softmax"](_filled(-x, m, -math.inf), dim)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """``input / max(norm, eps)`` with the norm of the kept elements (masked-out elements
    become 0)."""
    m = _mask(input, mask, "normalize")
    x = _filled(_cast(input, dtype), m, 0)
    scale = NAMESPACES["linalg"]["vector_norm"](x, ord, (dim,), True)
    return x / _E["clamp"](scale, min=eps)


def cumsum(input, dim, *, dtype=None, mask=None):
    """Running sums along ``dim`` of the kept elements (masked-out ones add 0)."""
    m = _mask(input, mask, "cumsum")
    return _E["cumsum"](_filled(_cast(input, dtype), m, 0), dim)


def cumprod(input, dim, *, dtype=None, mask=None):
    """Running products along ``dim`` of the kept elements (masked-out ones multiply 1)."""
    m = _mask(input, mask, "cumprod")
    return _E["cumprod"](_filled(_cast(input, dtype), m, 1), dim)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """``log(exp(input) + exp(other))`` where each side's masked-out elements count as
    -inf."""
    a = _filled(_cast(input, dtype), _mask(input, input_mask, "logaddexp"), -math.inf)
    b = _filled(_cast(other, dtype), _mask(other, other_mask, "logaddexp"), -math.inf)
    return _E["logaddexp"](a, b)
