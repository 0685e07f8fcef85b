"""Fractional max pooling (Graham, 2014): windows of a fixed size placed at pseudo-random,
increasing starts, so that an input of size ``L`` pools to any ``L_out`` with
``L_out + k - 1 <= L`` (``< L`` in 3-D, as in PyTorch).

Each (sample, channel) plane draws one number ``u`` in [0, 1) per spatial dim (or takes it
from ``_random_samples``); window ``i`` starts at ``int((i + u) a) - int(u a)`` with
``a = (L - k) / (L_out - 1)``, and the last at ``L - k``, computed in the input's dtype as
PyTorch does. The maximum's index is found on arrays and the values gathered, so gradients
(and gradients of gradients) flow to the chosen positions.
"""
from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from .pooling import _check_input, _plane_gather
from .registry import Sample, register_op

_NN = "nn.functional"


def _starts(xp, samples, size: int, out: int, kernel: int):
    """Window starts (planes..., out) for one spatial dim from samples (planes...)."""
    dtype = samples.dtype
    last = xp.full(samples.shape + (min(out, 1),), size - kernel, dtype=np.int64)
    if out <= 1:
        return last
    alpha = np.array(size - kernel, dtype=dtype) / np.array(out - 1, dtype=dtype)
    steps = xp.arange(out - 1, dtype=dtype)
    starts = ((steps + samples[..., None]) * alpha).astype(np.int64) \
        - (samples * alpha).astype(np.int64)[..., None]
    return xp.concatenate([starts, last], axis=-1)


class _FractionalIndices(Function):
    """The flat in-plane index of each window's maximum (NaN wins, as in PyTorch: the last
    NaN of the window; otherwise the first maximum)."""

    differentiable = False

    @staticmethod
    def forward(ctx, x, samples, kernel, out):
        xp = ctx.xp
        n = len(kernel)
        size = x.shape[2:]
        lead = x.shape[:2]
        # PyTorch's sample order: (w, h) in 2-D, (t, h, w) in 3-D
        order = (1, 0) if n == 2 else (0, 1, 2)
        flat = xp.zeros(lead + (1,) * (2 * n), dtype=np.int64)
        for d in range(n):
            starts = _starts(xp, samples[:, :, order[d]], size[d], out[d], kernel[d])
            window = starts[..., None] + xp.arange(kernel[d], dtype=np.int64)
            shape = list(lead) + [1] * (2 * n)
            shape[2 + d], shape[2 + n + d] = out[d], kernel[d]
            flat = flat * size[d] + window.reshape(shape)
        flat = xp.broadcast_to(flat, lead + tuple(out) + tuple(kernel))
        taps = math.prod(kernel)
        points = math.prod(out)  # explicit sizes: -1 is ambiguous for an empty batch
        flat = flat.reshape(lead + (points, taps))
        planes = x.reshape(lead + (math.prod(size),))
        values = xp.take_along_axis(planes, flat.reshape(lead + (points * taps,)), axis=2)
        values = values.reshape(flat.shape)
        choice = xp.argmax(values, axis=-1)
        nan = xp.isnan(values)
        last_nan = taps - 1 - xp.argmax(nan[..., ::-1], axis=-1)
        choice = xp.where(nan.any(axis=-1), last_nan, choice)
        index = xp.take_along_axis(flat, choice[..., None], axis=-1)[..., 0]
        return index.reshape(lead + tuple(out))


def _tuple(value, n: int, what: str):
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"fractional_max_pool{n}d requires {what} to either be a single "
                             f"number or a tuple of {n} numbers, got {value}")
        return tuple(value)
    return (value,) * n


def _fractional(n: int, input, kernel_size, output_size, output_ratio, _random_samples):
    op = f"fractional_max_pool{n}d"
    _check_input(input, n, op)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    size = tuple(input.shape[-n:])
    if output_size is None:
        ratio = _tuple(output_ratio, n, "output_ratio")
        output_size = tuple(int(s * r) for s, r in zip(size, ratio))
    out = tuple(int(o) for o in _tuple(output_size, n, "output_size"))
    kernel = tuple(int(k) for k in _tuple(kernel_size, n, "kernel_size"))
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"{op}(): kernel_size must be greater than zero, got {kernel}")
    if any(o < 0 for o in out):
        raise RuntimeError(f"{op}(): output_size must be non-negative, got {out}")
    names = ("height", "width") if n == 2 else ("time", "height", "width")
    for o, k, s, name in zip(out, kernel, size, names):
        # PyTorch's 3-D form also refuses the last window ending at the edge
        if o + k - 1 > s or (n == 3 and o + k - 1 == s):
            raise RuntimeError(f"{op}{'' if n == 2 else '_out'}(): pool {name} {k} too large "
                               f"relative to input {name} {s}")
    batched = input.ndim == n + 2
    x = input if batched else input.unsqueeze(0)
    channels = x.shape[1]
    if _random_samples is None:
        from ..creation import rand

        _random_samples = rand(x.shape[0], channels, n, dtype=input.dtype,
                               device=input.device)
    samples = _random_samples
    if not isinstance(samples, Tensor):
        raise TypeError(f"{op}(): _random_samples must be a Tensor, got "
                        f"{type(samples).__name__}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to be 3-D (batch, channels, {n}); got "
                           f"{samples.ndim}-D.")
    if samples.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got "
                           f"{samples.shape[2]}.")
    if samples.shape[1] != channels:
        raise RuntimeError(f"Expect _random_samples.size(1) equals to input channel size "
                           f"{channels}; got {samples.shape[1]}.")
    if samples.shape[0] < x.shape[0]:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.device != input.device:
        raise RuntimeError(f"Expected _random_samples on {input.device}, like the input, got "
                           f"{samples.device}")
    index = _FractionalIndices.apply(x.detach(), samples.detach()[:x.shape[0]], kernel, out)
    if not batched:
        index = index.squeeze(0)
    # gather from the input itself, so its node is the pooling's whatever the rank
    values = _plane_gather(input, index._data, n, f"FractionalMaxPool{n}DBackward0")
    return values, index


def _samples_for(n: int):
    def samples(make):
        if n == 2:
            x = make((2, 3, 7, 8))
            u = make((2, 3, 2), 0.0, 1.0, requires_grad=False)
            unbatched = make((2, 6, 5))
            return [Sample((x, 3), {"output_size": (4, 5), "_random_samples": u},
                           name="output_size"),
                    Sample((x, (2, 3)), {"output_ratio": (0.5, 0.5), "_random_samples": u},
                           name="output_ratio"),
                    Sample((unbatched, 2), {"output_size": 3, "_random_samples":
                                            make((1, 2, 2), 0.0, 1.0, requires_grad=False)},
                           name="unbatched")]
        x = make((2, 2, 5, 6, 5))
        u = make((2, 2, 3), 0.0, 1.0, requires_grad=False)
        return [Sample((x, 2), {"output_size": (3, 4, 2), "_random_samples": u},
                       name="output_size"),
                Sample((x, (2, 3, 2)), {"output_ratio": (0.5, 0.5, 0.6),
                                        "_random_samples": u}, name="output_ratio")]
    return samples


def _with_indices_samples(n: int):
    base = _samples_for(n)
    return lambda make: base(make)[:2]


@register_op(namespace=_NN, samples=_with_indices_samples(2))
def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """Fractional max pooling of (N, C, H, W) or (C, H, W) input, returning the maxima and
    their flat indices in each H x W plane.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> x = ember.arange(16.0).reshape(1, 1, 4, 4)
    >>> u = ember.full((1, 1, 2), 0.5)
    >>> F.fractional_max_pool2d_with_indices(x, 2, output_size=2, _random_samples=u)[1]
    tensor([[[[ 5,  7],
              [13, 15]]]])
    """
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


@register_op(namespace=_NN, samples=_samples_for(2))
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling of (N, C, H, W) or (C, H, W) input with windows of
    ``kernel_size``, to ``output_size`` or ``int(input_size * output_ratio)``; one random
    number per plane and dim (``ember.rand``, or ``_random_samples`` of shape (N, C, 2))
    places the windows. ``return_indices=True`` also returns the flat in-plane indices.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> x = ember.arange(16.0).reshape(1, 1, 4, 4)
    >>> F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=ember.full((1, 1, 2), 0.5))
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    values, indices = _fractional(2, input, kernel_size, output_size, output_ratio,
                                  _random_samples)
    return (values, indices) if return_indices else values


@register_op(namespace=_NN, samples=_with_indices_samples(3))
def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """Fractional max pooling of (N, C, T, H, W) or (C, T, H, W) input, returning the
    maxima and their flat indices in each T x H x W volume."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


@register_op(namespace=_NN, samples=_samples_for(3))
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling of (N, C, T, H, W) or (C, T, H, W) input; ``_random_samples``
    has shape (N, C, 3). See ``fractional_max_pool2d``.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> x = ember.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> F.fractional_max_pool3d(x, 1, output_size=1, _random_samples=ember.zeros(1, 1, 3))
    tensor([[[[[7.]]]]])
    """
    values, indices = _fractional(3, input, kernel_size, output_size, output_ratio,
                                  _random_samples)
    return (values, indices) if return_indices else values
