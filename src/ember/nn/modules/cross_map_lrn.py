"""``CrossMapLRN2d``: the legacy (Lua Torch) cross-channel local response normalization."""
from __future__ import annotations

from ... import creation
from .. import functional as F
from .module import Module

__all__ = ["CrossMapLRN2d"]


class CrossMapLRN2d(Module):
    """``x_c * (k + alpha / size * sum_{j in W(c)} x_j^2) ^ -beta`` over the channels of a
    4-D (N, C, H, W) input, where ``W(c)`` is the ``2 * ((size - 1) // 2) + 1`` channels
    around ``c``. As in PyTorch's implementation, channel 0 stays in every window (its
    running sum never drops it); gradients are the derivative of that forward.

    >>> import ember
    >>> lrn = ember.nn.CrossMapLRN2d(3, alpha=1.0, beta=1.0, k=1.0)
    >>> lrn(ember.ones(1, 2, 1, 1)).flatten()
    tensor([0.6000, 0.6000])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             f"instead.")
        channels = input.shape[1]
        reach = int((self.size - 1) / 2 + 1) - 1  # channels on each side of c
        square = input * input
        padded = F.pad(square, (0, 0, 0, 0, reach, reach))
        total = padded[:, 0:channels]
        for offset in range(1, 2 * reach + 1):
            total = total + padded[:, offset:offset + channels]
        # windows that no longer reach channel 0 still hold it
        outside = (creation.arange(channels, device=input.device) > reach).to(input.dtype)
        total = total + square[:, 0:1] * outside.reshape(1, channels, 1, 1)
        return input * (self.k + self.alpha / self.size * total) ** -self.beta
