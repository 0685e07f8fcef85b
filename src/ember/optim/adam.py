"""The Adam family: Adam, AdamW, Adamax, NAdam and RAdam. Each keeps running averages of
the gradient (first moment) and of its square or maximum (second moment). On CUDA, Adam's
and AdamW's update of one parameter is one fused kernel (``_adam_update``)."""
from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.backward_math import array_math, elementwise_formula
from ..tensor import Tensor, bump_version
from .optimizer import (
    Optimizer,
    algorithm_flags,
    as_float,
    check_hyperparameter,
    step_tensor,
    zeros_like_state,
)

__all__ = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam"]


def _decay(param, grad, lr: float, weight_decay: float, decoupled: bool):
    """L2 penalty added to the gradient, or (decoupled, AdamW-style) a shrink of the
    parameter by ``1 - lr * weight_decay``. Returns the gradient to use."""
    if weight_decay == 0:
        return grad
    if decoupled:
        param *= 1 - lr * weight_decay
        return grad
    return grad + weight_decay * param


def _moments(xp, state: dict, grad, beta1: float, beta2: float, scratch):
    """Update m <- lerp(m, g, 1 - beta1) and v <- beta2 v + (1 - beta2) g^2 in place,
    using ``scratch`` (an array like the parameter) instead of fresh temporaries."""
    exp_avg = state["exp_avg"]._data
    exp_avg_sq = state["exp_avg_sq"]._data
    xp.subtract(grad, exp_avg, out=scratch)
    scratch *= 1 - beta1
    exp_avg += scratch
    exp_avg_sq *= beta2
    xp.multiply(grad, grad, out=scratch)
    scratch *= 1 - beta2
    exp_avg_sq += scratch
    return exp_avg, exp_avg_sq


@elementwise_formula
def _adam_update(m, param, grad, exp_avg, exp_avg_sq, one_minus_beta1, beta2,
                 one_minus_beta2, bias_correction2_sqrt, eps, step_size):
    """Adam's step of one parameter, in place: the moments, then the parameter, in the
    order of operations of the CPU's scratch-array code (which it matches to the bit)."""
    exp_avg += (grad - exp_avg) * one_minus_beta1
    exp_avg_sq *= beta2
    exp_avg_sq += grad * grad * one_minus_beta2
    param -= exp_avg / (m.sqrt(exp_avg_sq) / bias_correction2_sqrt + eps) * step_size


@elementwise_formula
def _amsgrad_update(m, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, one_minus_beta1,
                    beta2, one_minus_beta2, bias_correction2_sqrt, eps, step_size):
    """``_adam_update`` with the running maximum of the second moment (AMSGrad)."""
    exp_avg += (grad - exp_avg) * one_minus_beta1
    exp_avg_sq *= beta2
    exp_avg_sq += grad * grad * one_minus_beta2
    max_exp_avg_sq[...] = m.maximum(max_exp_avg_sq, exp_avg_sq)
    param -= exp_avg / (m.sqrt(max_exp_avg_sq) / bias_correction2_sqrt + eps) * step_size


def _fused_adam_step(xp, state: dict, param, grad, beta1, beta2, eps, step_size,
                     bias_correction2_sqrt, amsgrad: bool) -> None:
    moments = (state["exp_avg"]._data, state["exp_avg_sq"]._data)
    if amsgrad:
        moments += (state["max_exp_avg_sq"]._data,)
    array_math(xp).elementwise(_amsgrad_update if amsgrad else _adam_update, param, grad,
                               *moments, 1 - beta1, beta2, 1 - beta2, bias_correction2_sqrt,
                               eps, step_size)


def _begin(state: dict, p, names, scalars=()) -> float:
    """Create the state on the first step (``scalars``: extra float32 CPU scalars as
    (name, value)), advance ``step``, return the new step count."""
    if not state:
        state["step"] = step_tensor()
        for name, value in scalars:
            state[name] = step_tensor(value)
        for name in names:
            state[name] = zeros_like_state(p)
    state["step"]._data += 1
    return float(state["step"]._data)


class Adam(Optimizer):
    r"""Adam (Kingma & Ba, 2014), with AMSGrad and optional decoupled weight decay.

    .. math::
        m_t &= \beta_1 m_{t-1} + (1-\beta_1) g, \qquad v_t = \beta_2 v_{t-1} + (1-\beta_2) g^2 \\
        \theta &\leftarrow \theta - \frac{\gamma}{1-\beta_1^t} \cdot
            \frac{m_t}{\sqrt{\hat v_t} / \sqrt{1-\beta_2^t} + \epsilon}

    with :math:`\hat v_t = v_t`, or its running maximum with ``amsgrad``. Weight decay adds
    :math:`\lambda\theta` to :math:`g`, or with ``decoupled_weight_decay`` multiplies
    :math:`\theta` by :math:`1 - \gamma\lambda` first (that is AdamW).

    >>> w = ember.tensor([1.0], requires_grad=True)
    >>> opt = ember.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); w
    tensor([0.9000], requires_grad=True)
    """

    # PyTorch's option names in its order (``state_dict()['param_groups']`` prints them)
    _option_order = ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach",
                     "capturable", "differentiable", "fused", "decoupled_weight_decay")

    _optimizer_name = "Adam"

    _tensor_scalar_state = ("step",)

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused=None,
                 decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        as_float(lr, "lr")  # a Tensor lr stays in the groups, as in PyTorch
        betas = tuple(as_float(b, f"betas[{i}]") for i, b in enumerate(betas))
        check_hyperparameter(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize,
                    **algorithm_flags(self._optimizer_name, foreach, fused, capturable,
                                      differentiable),
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adam step; returns the closure's loss (None without a closure)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2) = as_float(group["lr"], "lr"), group["betas"]
            eps = group["eps"]
            amsgrad = group["amsgrad"]
            names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if amsgrad else (
                "exp_avg", "exp_avg_sq")
            for p, param, grad in self._params_with_grad(group):
                xp = backend.xp_of(param)
                state = self.state[p]
                step = _begin(state, p, names)
                grad = _decay(param, grad, lr, group["weight_decay"],
                              group["decoupled_weight_decay"])
                step_size = lr / (1 - beta1 ** step)
                bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
                if xp is not np:  # one kernel for the whole update
                    _fused_adam_step(xp, state, param, grad, beta1, beta2, eps, step_size,
                                     bias_correction2_sqrt, amsgrad)
                    bump_version(p)
                    continue
                scratch = xp.empty_like(param)
                exp_avg, exp_avg_sq = _moments(xp, state, grad, beta1, beta2, scratch)
                if amsgrad:
                    max_sq = state["max_exp_avg_sq"]._data
                    xp.maximum(max_sq, exp_avg_sq, out=max_sq)
                    exp_avg_sq = max_sq
                denom = xp.sqrt(exp_avg_sq, out=scratch)
                denom /= bias_correction2_sqrt
                denom += eps
                update = xp.divide(exp_avg, denom, out=scratch)
                update *= step_size
                param -= update
                bump_version(p)
        return loss


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter, 2017): each step first
    multiplies :math:`\theta` by :math:`1 - \gamma\lambda`, then takes the Adam step on the
    plain gradient. ``weight_decay`` defaults to 0.01."""

    _optimizer_name = "AdamW"

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach=None, capturable: bool = False, differentiable: bool = False,
                 fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class Adamax(Adam):
    r"""Adamax: Adam with the infinity norm (Kingma & Ba, 2014, section 7).

    .. math::
        m_t = \beta_1 m_{t-1} + (1-\beta_1) g, \qquad
        u_t = \max(\beta_2 u_{t-1}, |g| + \epsilon), \qquad
        \theta \leftarrow \theta - \frac{\gamma}{1-\beta_1^t} \frac{m_t}{u_t}
    """

    # PyTorch's option names in its order (``state_dict()['param_groups']`` prints them)
    _option_order = ("lr", "betas", "eps", "weight_decay", "foreach", "maximize",
                     "differentiable", "capturable")

    _optimizer_name = "Adamax"

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        as_float(lr, "lr")  # a Tensor lr stays in the groups, as in PyTorch
        check_hyperparameter(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize,
                    **algorithm_flags("Adamax", foreach, None, capturable, differentiable)}
        Optimizer.__init__(self, params, defaults)

    def step(self, closure=None):
        """One Adamax step; returns the closure's loss (None without a closure)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2) = as_float(group["lr"], "lr"), group["betas"]
            eps = group["eps"]
            for p, param, grad in self._params_with_grad(group):
                xp = backend.xp_of(param)
                state = self.state[p]
                step = _begin(state, p, ("exp_avg", "exp_inf"))
                grad = _decay(param, grad, lr, group["weight_decay"], False)
                exp_avg = state["exp_avg"]._data
                exp_inf = state["exp_inf"]._data
                scratch = xp.subtract(grad, exp_avg)
                scratch *= 1 - beta1
                exp_avg += scratch
                exp_inf *= beta2
                xp.abs(grad, out=scratch)
                scratch += eps
                xp.maximum(exp_inf, scratch, out=exp_inf)
                update = xp.divide(exp_avg, exp_inf, out=scratch)
                update *= lr / (1 - beta1 ** step)
                param -= update
                bump_version(p)
        return loss


class NAdam(Adam):
    r"""NAdam: Adam with Nesterov momentum (Dozat, 2016), with the momentum schedule
    :math:`\mu_t = \beta_1 (1 - \tfrac12 \cdot 0.96^{t\psi})` (:math:`\psi` =
    ``momentum_decay``).

    .. math::
        \theta \leftarrow \theta
          - \gamma \frac{1-\mu_t}{1-\prod_{i\le t}\mu_i} \frac{g}{d}
          - \gamma \frac{\mu_{t+1}}{1-\prod_{i\le t+1}\mu_i} \frac{m_t}{d},
        \qquad d = \sqrt{v_t / (1-\beta_2^t)} + \epsilon
    """

    # PyTorch's option names in its order (``state_dict()['param_groups']`` prints them)
    _option_order = ("lr", "betas", "eps", "weight_decay", "momentum_decay",
                     "decoupled_weight_decay", "maximize", "foreach", "capturable",
                     "differentiable")

    _optimizer_name = "NAdam"

    _tensor_scalar_state = ("step", "mu_product")

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        as_float(lr, "lr")  # a Tensor lr stays in the groups, as in PyTorch
        check_hyperparameter(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        if not momentum_decay >= 0.0:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    **algorithm_flags("NAdam", foreach, None, capturable, differentiable)}
        Optimizer.__init__(self, params, defaults)

    def step(self, closure=None):
        """One NAdam step; returns the closure's loss (None without a closure)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2) = as_float(group["lr"], "lr"), group["betas"]
            eps = group["eps"]
            momentum_decay = group["momentum_decay"]
            for p, param, grad in self._params_with_grad(group):
                xp = backend.xp_of(param)
                state = self.state[p]
                step = _begin(state, p, ("exp_avg", "exp_avg_sq"), (("mu_product", 1.0),))
                grad = _decay(param, grad, lr, group["weight_decay"],
                              group["decoupled_weight_decay"])
                bias_correction2 = 1 - beta2 ** step
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
                mu_product_array = state["mu_product"]._data
                mu_product_array *= mu
                mu_product = float(mu_product_array)
                scratch = xp.empty_like(param)
                exp_avg, exp_avg_sq = _moments(xp, state, grad, beta1, beta2, scratch)
                denom = xp.divide(exp_avg_sq, bias_correction2)
                xp.sqrt(denom, out=denom)
                denom += eps
                update = xp.divide(grad, denom, out=scratch)
                update *= lr * (1.0 - mu) / (1.0 - mu_product)
                param -= update
                update = xp.divide(exp_avg, denom, out=scratch)
                update *= lr * mu_next / (1.0 - mu_product * mu_next)
                param -= update
                bump_version(p)
        return loss


class RAdam(Adam):
    r"""RAdam: Adam with the variance of the adaptive rate rectified (Liu et al., 2019).

    With :math:`\rho_\infty = 2/(1-\beta_2) - 1` and
    :math:`\rho_t = \rho_\infty - 2t\beta_2^t/(1-\beta_2^t)`: while :math:`\rho_t \le 5`
    the step is plain momentum SGD, :math:`\theta \leftarrow \theta - \gamma \hat m_t`;
    afterwards :math:`\theta \leftarrow \theta - \gamma \hat m_t\, r_t
    \sqrt{1-\beta_2^t} / (\sqrt{v_t} + \epsilon)` with the rectification
    :math:`r_t = \sqrt{(\rho_t-4)(\rho_t-2)\rho_\infty / ((\rho_\infty-4)(\rho_\infty-2)\rho_t)}`.
    """

    # PyTorch's option names in its order (``state_dict()['param_groups']`` prints them)
    _option_order = ("lr", "betas", "eps", "weight_decay", "maximize", "foreach", "capturable",
                     "decoupled_weight_decay", "differentiable")

    _optimizer_name = "RAdam"

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        as_float(lr, "lr")  # a Tensor lr stays in the groups, as in PyTorch
        check_hyperparameter(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "decoupled_weight_decay": decoupled_weight_decay,
                    **algorithm_flags("RAdam", foreach, None, capturable, differentiable)}
        Optimizer.__init__(self, params, defaults)

    def step(self, closure=None):
        """One RAdam step; returns the closure's loss (None without a closure)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2) = as_float(group["lr"], "lr"), group["betas"]
            eps = group["eps"]
            for p, param, grad in self._params_with_grad(group):
                xp = backend.xp_of(param)
                state = self.state[p]
                step = _begin(state, p, ("exp_avg", "exp_avg_sq"))
                grad = _decay(param, grad, lr, group["weight_decay"],
                              group["decoupled_weight_decay"])
                scratch = xp.empty_like(param)
                exp_avg, exp_avg_sq = _moments(xp, state, grad, beta1, beta2, scratch)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                corrected = xp.divide(exp_avg, bias_correction1, out=scratch)
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive = xp.sqrt(exp_avg_sq)
                    adaptive += eps
                    xp.divide(bias_correction2 ** 0.5, adaptive, out=adaptive)
                    corrected *= lr
                    corrected *= adaptive
                    corrected *= rect
                else:
                    corrected *= lr
                param -= corrected
                bump_version(p)
        return loss
