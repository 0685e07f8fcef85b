"""RMSprop: gradients scaled by a running root-mean-square."""
from __future__ import annotations

from .. import backend
from ..tensor import bump_version
from .optimizer import (
    Optimizer,
    algorithm_flags,
    as_float,
    check_hyperparameter,
    step_tensor,
    zeros_like_state,
)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop (Hinton's lecture 6e), optionally centered and with momentum.

    .. math::
        g &\leftarrow g_t + \lambda\theta, \qquad v_t = \alpha v_{t-1} + (1-\alpha) g^2 \\
        \bar g_t &= \alpha \bar g_{t-1} + (1-\alpha) g \text{ (centered)}, \qquad
        d = \sqrt{v_t - \bar g_t^2} + \epsilon \text{ (centered) or } \sqrt{v_t} + \epsilon \\
        b_t &= \mu b_{t-1} + g / d, \qquad \theta \leftarrow \theta - \gamma b_t
        \quad(\text{or } \theta - \gamma g / d \text{ without momentum})
    """

    # PyTorch's option names in its order (``state_dict()['param_groups']`` prints them)
    _option_order = ("lr", "momentum", "alpha", "eps", "centered", "weight_decay", "capturable",
                     "foreach", "maximize", "differentiable")

    _tensor_scalar_state = ("step",)

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        as_float(lr, "lr")  # a Tensor lr stays in the groups, as in PyTorch
        check_hyperparameter(lr=lr, eps=eps, weight_decay=weight_decay, momentum=momentum)
        if not alpha >= 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay, "maximize": maximize,
                    **algorithm_flags("RMSprop", foreach, None, capturable, differentiable)}
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One RMSprop step; returns the closure's loss (None without a closure)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, alpha, eps = as_float(group["lr"], "lr"), group["alpha"], group["eps"]
            weight_decay, momentum, centered = (group["weight_decay"], group["momentum"],
                                                group["centered"])
            for p, param, grad in self._params_with_grad(group):
                xp = backend.xp_of(param)
                state = self.state[p]
                if not state:
                    state["step"] = step_tensor()
                    state["square_avg"] = zeros_like_state(p)
                    if momentum > 0:
                        state["momentum_buffer"] = zeros_like_state(p)
                    if centered:
                        state["grad_avg"] = zeros_like_state(p)
                state["step"]._data += 1
                if weight_decay != 0:
                    grad = grad + weight_decay * param
                square_avg = state["square_avg"]._data
                scratch = xp.multiply(grad, grad)
                square_avg *= alpha
                scratch *= 1 - alpha
                square_avg += scratch
                if centered:
                    grad_avg = state["grad_avg"]._data
                    xp.subtract(grad, grad_avg, out=scratch)
                    scratch *= 1 - alpha
                    grad_avg += scratch
                    avg = xp.multiply(grad_avg, grad_avg, out=scratch)
                    xp.subtract(square_avg, avg, out=avg)
                    xp.sqrt(avg, out=avg)
                else:
                    avg = xp.sqrt(square_avg, out=scratch)
                avg += eps
                ratio = xp.divide(grad, avg, out=avg)
                if momentum > 0:
                    buf = state["momentum_buffer"]._data
                    buf *= momentum
                    buf += ratio
                    ratio = xp.multiply(buf, lr, out=ratio)
                else:
                    ratio *= lr
                param -= ratio
                bump_version(p)
        return loss
