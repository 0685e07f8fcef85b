"""Reusable sample-input builders for the op table. ``make(shape, low=-2, high=2,
requires_grad=True)`` is supplied by the test on the device and dtype under test;
``make.int(shape, low, high)`` and ``make.bool(shape)`` make non-differentiable inputs."""
from __future__ import annotations

from .registry import Sample


def unary(low: float = -2.0, high: float = 2.0, shapes=((3, 4), (), (2, 1, 3))):
    """Elementwise unary ops: a matrix, a scalar and a 3-D tensor within a domain."""
    def samples(make):
        return [Sample((make(s, low=low, high=high),), name=f"shape{s}") for s in shapes]
    return samples


def binary(low: float = -2.0, high: float = 2.0, other_low=None, other_high=None,
           scalars=(2.5, -1.5), broadcast=True):
    """Elementwise binary ops: equal shapes, broadcasting both ways, a 0-d tensor and
    Python scalars on either side."""
    olow = low if other_low is None else other_low
    ohigh = high if other_high is None else other_high

    def samples(make):
        out = [Sample((make((3, 4), low=low, high=high), make((3, 4), low=olow, high=ohigh)),
                      name="same shape")]
        if broadcast:
            out += [
                Sample((make((2, 3, 4), low=low, high=high), make((4,), low=olow, high=ohigh)),
                       name="broadcast other"),
                Sample((make((3, 1), low=low, high=high), make((1, 4), low=olow, high=ohigh)),
                       name="broadcast both"),
                Sample((make((), low=low, high=high), make((3,), low=olow, high=ohigh)),
                       name="0-d input"),
            ]
        for s in scalars:
            out.append(Sample((make((3,), low=low, high=high), s), name=f"scalar {s}"))
        return out
    return samples
