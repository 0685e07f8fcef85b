"""Activation functions (relu6, leaky_relu, elu, selu, celu, gelu, silu, mish, softplus, ...), each in ember and ember.nn.functional."""
from __future__ import annotations
