"""``ember.nn.grad``: the gradients of a convolution with respect to its input and its
weight, given the gradient of its output (what a custom convolution's backward needs).

Each is the derivative of ``conv{1,2,3}d`` computed by ember's autograd: a convolution is
linear in its input and in its weight, so its vector-Jacobian product is the answer, and
it records a graph when ``weight``/``input`` or ``grad_output`` require grad.

>>> import ember
>>> from ember.nn import grad
>>> x, w = ember.randn(1, 2, 5), ember.randn(3, 2, 3)
>>> g = ember.ones(1, 3, 3)
>>> grad.conv1d_weight(x, w.shape, g).shape
ember.Size([3, 2, 3])
>>> grad.conv1d_input(x.shape, w, g).shape
ember.Size([1, 2, 5])
"""
from __future__ import annotations

from .. import autograd
from ..creation import zeros
from ..grad_mode import is_grad_enabled
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight",
           "conv3d_input", "conv3d_weight"]

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _vjp(n, wrt, input, weight, grad_output, stride, padding, dilation, groups):
    """d conv(input, weight) / d(wrt) applied to grad_output."""
    recording = is_grad_enabled() and any(
        t.requires_grad for t in (input, weight, grad_output))
    with autograd.enable_grad():
        # the derivative's point does not matter (conv is linear in each argument): a
        # fresh leaf stands in for the argument we differentiate by
        if wrt == "input":
            x, w = input.detach().requires_grad_(True), weight if recording else weight.detach()
            leaf = x
        else:
            x, w = input if recording else input.detach(), weight.detach().requires_grad_(True)
            leaf = w
        out = _CONV[n](x, w, None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"conv{n}d_{wrt}(): grad_output has shape "
                               f"{tuple(grad_output.shape)}, but the convolution's output "
                               f"has shape {tuple(out.shape)}")
        (result,) = autograd.grad(out, leaf, grad_output, create_graph=recording)
    return result


def _input(n, input_size, weight, grad_output, stride, padding, dilation, groups):
    size = tuple(int(s) for s in input_size)
    if len(size) != n + 2:
        raise ValueError(f"conv{n}d_input(): input_size must have {n + 2} entries (N, C, "
                         f"...), got {list(size)}")
    placeholder = zeros(size, dtype=grad_output.dtype, device=grad_output.device)
    return _vjp(n, "input", placeholder, weight, grad_output, stride, padding, dilation, groups)


def _weight(n, input, weight_size, grad_output, stride, padding, dilation, groups):
    size = tuple(int(s) for s in weight_size)
    if len(size) != n + 2:
        raise ValueError(f"conv{n}d_weight(): weight_size must have {n + 2} entries, got "
                         f"{list(size)}")
    placeholder = zeros(size, dtype=grad_output.dtype, device=grad_output.device)
    return _vjp(n, "weight", input, placeholder, grad_output, stride, padding, dilation, groups)


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv1d`` with respect to an input of shape ``input_size``."""
    return _input(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv1d`` with respect to a weight of shape ``weight_size``."""
    return _weight(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv2d`` with respect to an input of shape ``input_size``.

    >>> import ember
    >>> w = ember.ones(1, 1, 2, 2)
    >>> ember.nn.grad.conv2d_input((1, 1, 3, 3), w, ember.ones(1, 1, 2, 2))
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    return _input(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv2d`` with respect to a weight of shape ``weight_size``."""
    return _weight(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv3d`` with respect to an input of shape ``input_size``."""
    return _input(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv3d`` with respect to a weight of shape ``weight_size``."""
    return _weight(3, input, weight_size, grad_output, stride, padding, dilation, groups)
