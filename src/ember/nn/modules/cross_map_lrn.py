"""``CrossMapLRN2d``: the legacy (Lua Torch) cross-channel local response normalization."""
from __future__ import annotations

from ... import autograd, creation, grad_mode
from ...autograd import Function
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
        return _CrossMapLRN2d.CrossMapLRN2d.apply(input, self.size, self.alpha, self.beta,
                                                self.k)


def _response(input, size, alpha, beta, k):
    """The layer's forward, composed of ember's ops."""
    channels = input.shape[1]
    reach = int((size - 1) / 2 + 1) - 1  # channels on each side of c
    square = input * input
    padded = F.pad(square, (0, 0, 0, 0, reach, reach))
    total = padded[:, 0:channels]
    for offset in range(1, 2 * reach + 1):
        total = total + padded[:, offset:offset + channels]
    # windows that no longer reach channel 0 still hold it
    outside = (creation.arange(channels, device=input.device) > reach).to(input.dtype)
    total = total + square[:, 0:1] * outside.reshape(1, channels, 1, 1)
    return input * (k + alpha / size * total) ** -beta


class _CrossMapLRN2d:
    """A namespace for the layer's Function, which needs PyTorch's class name: PyTorch's
    layer is a Python autograd Function called CrossMapLRN2d too (its node:
    CrossMapLRN2dBackward)."""

    class CrossMapLRN2d(Function):
        """One node. Backward differentiates the composed forward again, so the gradient
        is the derivative of this forward, and of any order."""

        @staticmethod
        def forward(ctx, input, size, alpha, beta, k):
            ctx.save_for_backward(input)
            ctx.args = (size, alpha, beta, k)
            return _response(input, size, alpha, beta, k)

        @staticmethod
        def backward(ctx, grad):
            (input,) = ctx.saved_tensors
            higher = grad_mode.is_grad_enabled()  # create_graph: keep the graph of this
            with grad_mode.enable_grad():
                x = input if higher and input.requires_grad else input.detach().requires_grad_()
                out = _response(x, *ctx.args)
                (dx,) = autograd.grad(out, x, grad, create_graph=higher)
            return dx, None, None, None, None
