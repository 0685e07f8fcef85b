"""``LinearCrossEntropyLoss``: a Linear layer to class logits and the cross entropy, fused
into ``nn.functional.linear_cross_entropy``."""
from __future__ import annotations

import math

from ...ops.linear_cross_entropy import LinearCrossEntropyOptions
from .. import functional as F
from .linear import Linear
from .module import Module

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


class LinearCrossEntropyLoss(Module):
    """Cross entropy of ``Linear(in_features, num_classes * prod(out_features))``'s logits,
    seen as (N, num_classes, *out_features), against class indices or probabilities.

    >>> import ember
    >>> loss = ember.nn.LinearCrossEntropyLoss(5, 10, out_features=(4, 3))
    >>> value = loss(ember.randn(2, 5, requires_grad=True), ember.randint(0, 10, (2, 4, 3)))
    >>> value.backward()
    >>> loss.linear.weight.grad.shape
    ember.Size([120, 5])
    """

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (),
                 bias: bool = False, device=None, dtype=None, reduction: str = "mean",
                 weight=None, ignore_index=None, label_smoothing: float = 0.0,
                 options=None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__()
        self.register_buffer("weight", weight)
        self.reduction = reduction
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # Linear keeps a 2-D weight; forward views it as (C, *out_features, in_features)
        self.linear = Linear(in_features, math.prod(self.out_features) * num_classes,
                             bias=bias, device=device, dtype=dtype)
        self.options = options

    def forward(self, input, target):
        weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features))
        bias = None if self.linear.bias is None else self.linear.bias.reshape(
            (self.num_classes, *self.out_features))
        return F.linear_cross_entropy(input, weight, target, linear_bias=bias,
                                      weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
