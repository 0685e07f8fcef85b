"""Folding an eval-mode BatchNorm into the Conv or Linear layer before it."""
from __future__ import annotations

import copy

from ... import creation, grad_mode
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _defaults(bias, running_mean, bn_weight, bn_bias):
    if bias is None:
        bias = creation.zeros_like(running_mean)
    if bn_weight is None:
        bn_weight = creation.ones_like(running_mean)
    if bn_bias is None:
        bn_bias = creation.zeros_like(running_mean)
    return bias, bn_weight, bn_bias


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b,
                         transpose: bool = False):
    """The (weight, bias) of one convolution equal to conv followed by eval-mode BatchNorm:
    w' = w * gamma / sqrt(var + eps) per output channel, b' = (b - mean) * gamma /
    sqrt(var + eps) + beta."""
    requires_grad_b = conv_b.requires_grad if conv_b is not None else conv_w.requires_grad
    with grad_mode.no_grad():
        conv_b, bn_w, bn_b = _defaults(conv_b, bn_rm, bn_w, bn_b)
        scale = bn_w / (bn_rv + bn_eps).sqrt()
        ones = [1] * (conv_w.dim() - 2)
        shape = [1, -1] + ones if transpose else [-1, 1] + ones
        fused_w = (conv_w * scale.reshape(shape)).to(conv_w.dtype)
        fused_b = ((conv_b - bn_rm) * scale + bn_b).to(conv_w.dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, requires_grad_b)


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of ``conv`` computing conv then ``bn`` (both in eval mode) in one layer."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_conv_bn_eval needs a BatchNorm with running statistics")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The (weight, bias) of one Linear equal to Linear followed by eval-mode BatchNorm1d."""
    requires_grad_b = linear_b.requires_grad if linear_b is not None else \
        linear_w.requires_grad
    with grad_mode.no_grad():
        linear_b, bn_w, bn_b = _defaults(linear_b, bn_rm, bn_w, bn_b)
        scale = bn_w / (bn_rv + bn_eps).sqrt()
        fused_w = linear_w * scale.unsqueeze(-1)
        fused_b = (linear_b - bn_rm) * scale + bn_b
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, requires_grad_b)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` computing linear then ``bn`` (both in eval mode) in one
    layer."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or "
                             "bn.num_features must equal 1")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_linear_bn_eval needs a BatchNorm with running statistics")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
