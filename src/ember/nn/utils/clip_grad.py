"""Gradient clipping: rescale gradients by their total norm, or clamp each value."""
from __future__ import annotations

import math
import warnings

from ... import backend, grad_mode
from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _grads(parameters) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _norm_array(array, norm_type: float):
    xp = backend.xp_of(array)
    magnitude = xp.abs(array.astype(array.dtype if array.dtype.kind in "fV" else "float64"))
    if math.isinf(norm_type):
        return magnitude.max() if norm_type > 0 else magnitude.min()
    if norm_type == 0:
        return (magnitude != 0).sum().astype(magnitude.dtype)
    if norm_type == 2:
        return xp.sqrt((magnitude * magnitude).sum())
    return (magnitude ** norm_type).sum() ** (1.0 / norm_type)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` together, as if concatenated into one
    vector (the norm of the per-tensor norms)."""
    from ...creation import tensor as make

    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = [t for t in tensors if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return make(0.0)
    first = tensors[0]
    norms = [backend.move(_norm_array(t._data, norm_type), t._device, first._device)
             for t in tensors]
    xp = backend.xp_of(first._data)
    total = _norm_array(xp.stack([xp.asarray(n) for n in norms]), norm_type)
    total = Tensor._make(xp.asarray(total, dtype=first._data.dtype), first._device, False)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their total
    ``norm_type``-norm (inf: the largest magnitude) is at most ``max_norm``:
    g *= min(1, max_norm / (total_norm + 1e-6)). Returns the total norm before
    clipping."""
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if grads:
        clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm, foreach=None) -> None:
    """Scale the gradients in place by min(1, max_norm / (total_norm + 1e-6)), given a
    total norm computed beforehand (e.g. by get_total_norm)."""
    total = float(total_norm)
    coefficient = max_norm / (total + 1e-6)
    if math.isfinite(total):
        coefficient = min(1.0, coefficient)
    with grad_mode.no_grad():
        for g in _grads(parameters):
            g.mul_(coefficient)


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Deprecated name of ``clip_grad_norm_``."""
    warnings.warn("`ember.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`ember.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element of ``parameters`` into [-clip_value, clip_value], in
    place."""
    clip_value = float(clip_value)
    with grad_mode.no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
