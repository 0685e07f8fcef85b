"""``linear_cross_entropy``: cross entropy of a linear map's logits in one call, and its
``LinearCrossEntropyOptions`` (PyTorch's settings for a chunked implementation).

ember computes the reference path, ``cross_entropy(linear(input, W, b), target)``, for any
options: the options are checked and kept, and the values and gradients are the same as
PyTorch's chunked path gives (up to rounding).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .. import dtypes
from ._util import ensure_tensor
from .losses import cross_entropy
from .neural import linear
from .registry import Sample, register_op

_NN = "nn.functional"
_POLICIES = ("accurate", "balanced", "compact", "auto")


@dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """Settings of PyTorch's chunked ``linear_cross_entropy`` (batch rows per chunk, the
    chunking heuristic, the accumulation policy and dtype). ember validates and keeps them;
    it computes the reference path.

    >>> import ember
    >>> options = ember.nn.LinearCrossEntropyOptions(batch_chunk_size=64, chunking_method=None)
    >>> options.batch_chunk_size, options.acc_policy
    (64, 'auto')
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        method = self.chunking_method
        if method is not None and method not in ("auto", "aspect_ratio"):
            match = re.fullmatch(r"aspect_ratio:(\d+)", str(method))
            if match is None or int(match.group(1)) < 1:
                raise ValueError(f"invalid chunking_method: {method!r}")
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        size = self.batch_chunk_size
        if size is not None and (isinstance(size, bool) or not isinstance(size, int)
                                 or size < 1):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size}")
        allowed = (None, dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
        if self.acc_dtype not in allowed:
            raise ValueError(f"acc_dtype must be one of {{None, ember.float16, ember.bfloat16, "
                             f"ember.float32, ember.float64}}, got {self.acc_dtype}. Pass "
                             f"acc_dtype=None to let the op pick automatically.")


def _samples(make):
    x, w = make((4, 3)), make((5, 3))
    return [Sample((x, w, make.index((4,), 5)), {"linear_bias": make((5,))}, name="indices"),
            Sample((make((4, 3)), make((5, 3)), make.index((4,), 5)),
                   {"weight": make((5,), 0.5, 2.0, requires_grad=False), "ignore_index": 2,
                    "reduction": "sum", "label_smoothing": 0.1}, name="weight, ignore, smooth"),
            Sample((make((2, 3)), make((5, 2, 2, 3)), make.index((2, 2, 2), 5)),
                   {"linear_bias": make((5, 2, 2)), "reduction": "none"}, name="K-dim"),
            Sample((make((3,)), make((4, 3)), make((4,), 0.0, 1.0, requires_grad=False)
                    .softmax(0)), name="unbatched, probabilities")]


@register_op(namespace=_NN, samples=_samples)
def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``. The
    weight is (C, in_features) or (C, d_1, ..., d_K, in_features) for a K-dimensional loss
    over a batched (N, in_features) input; ``ignore_index`` None means -100 for class-index
    targets (and must be None for probability targets).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> x, w = ember.ones(2, 3), ember.zeros(4, 3)
    >>> F.linear_cross_entropy(x, w, ember.tensor([0, 3]))
    tensor(1.3863)
    """
    ensure_tensor(input, "linear_cross_entropy", "input")
    ensure_tensor(linear_weight, "linear_cross_entropy", "linear_weight")
    if options is not None and not isinstance(options, LinearCrossEntropyOptions):
        raise TypeError(f"linear_cross_entropy(): options must be a LinearCrossEntropyOptions "
                        f"or None, got {type(options).__name__}")
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.ndim}")
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    batch = tuple(input.shape[:-1])
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batch, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    flat_weight = linear_weight.reshape(math.prod((classes, *out_features)), in_features)
    flat_bias = None if linear_bias is None else linear_bias.reshape(-1)
    logits = linear(input, flat_weight, flat_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight, ignore_index=ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)
