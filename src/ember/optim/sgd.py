"""Stochastic gradient descent with momentum, Nesterov momentum and weight decay. On CUDA a
momentum step of one parameter without dampening is one fused kernel."""
from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.backward_math import array_math, elementwise_formula
from ..backend import scratch
from ..tensor import Tensor, bump_version
from .optimizer import Optimizer, algorithm_flags, as_float, check_hyperparameter

__all__ = ["SGD"]


@elementwise_formula
def _momentum_update(m, param, grad, buffer, momentum, lr):
    """``b = momentum b + g; param -= lr b`` in place (the CPU's steps, to the bit)."""
    buffer *= momentum
    buffer += grad
    param -= buffer * lr


@elementwise_formula
def _nesterov_update(m, param, grad, buffer, momentum, lr):
    """``b = momentum b + g; param -= lr (g + momentum b)`` in place."""
    buffer *= momentum
    buffer += grad
    param -= (grad + momentum * buffer) * lr


class SGD(Optimizer):
    r"""Stochastic gradient descent.

    With gradient :math:`g_t` (negated when ``maximize``), per step:

    .. math::
        g &\leftarrow g_t + \lambda \theta \\
        b_t &= \mu b_{t-1} + (1 - \tau) g \quad (b_1 = g) \\
        g &\leftarrow g + \mu b_t \text{ (nesterov) or } b_t \text{ (momentum)} \\
        \theta &\leftarrow \theta - \gamma g

    where :math:`\gamma` = ``lr``, :math:`\mu` = ``momentum``, :math:`\tau` =
    ``dampening``, :math:`\lambda` = ``weight_decay``.

    >>> w = ember.tensor([1.0], requires_grad=True)
    >>> opt = ember.optim.SGD([w], lr=0.5, momentum=0.9)
    >>> (w * w).sum().backward(); opt.step(); w
    tensor([0.], requires_grad=True)
    """

    # PyTorch's option names in its order (``state_dict()['param_groups']`` prints them)
    _option_order = ("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize",
                     "foreach", "differentiable", "fused")

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach=None, differentiable: bool = False, fused=None) -> None:
        as_float(lr, "lr")  # a Tensor lr stays in the groups, as in PyTorch
        check_hyperparameter(lr=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    **algorithm_flags("SGD", foreach, fused, differentiable=differentiable)}
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One SGD step; returns the closure's loss (None without a closure)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = as_float(group["lr"], "lr")
            momentum = group["momentum"]
            dampening = group["dampening"]
            weight_decay = group["weight_decay"]
            nesterov = group["nesterov"]
            for p, param, grad in self._params_with_grad(group):
                if weight_decay != 0:
                    grad = grad + weight_decay * param
                if momentum != 0:
                    state = self.state[p]
                    buffer = state.get("momentum_buffer")
                    if buffer is None:  # an array even where grad is a 0-d result's scalar
                        state["momentum_buffer"] = buffer = Tensor._make(
                            backend.xp_of(param).array(grad, copy=True), p._device, False)
                    elif not dampening and type(param) is not np.ndarray and \
                            buffer._data.dtype == param.dtype == grad.dtype:
                        formula = _nesterov_update if nesterov else _momentum_update
                        array_math(backend.xp_of(param)).elementwise(
                            formula, param, grad, buffer._data, momentum, lr)
                        bump_version(p)
                        continue
                    else:
                        buf = buffer._data
                        buf *= momentum
                        if dampening:
                            buf += (1 - dampening) * grad
                        else:
                            buf += grad  # no scaled temporary in the common case
                    grad = grad + momentum * buffer._data if nesterov else buffer._data
                scratch.subtract_scaled(backend.xp_of(param), param, lr, grad)
                bump_version(p)
        return loss
