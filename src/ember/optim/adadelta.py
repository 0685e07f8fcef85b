"""Adadelta: step sizes from running averages of squared gradients and squared updates."""
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

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta (Zeiler, 2012).

    .. math::
        g &\leftarrow g_t + \lambda\theta, \qquad
        v_t = \rho v_{t-1} + (1-\rho) g^2 \\
        \Delta &= \frac{\sqrt{u_{t-1} + \epsilon}}{\sqrt{v_t + \epsilon}}\, g, \qquad
        u_t = \rho u_{t-1} + (1-\rho)\Delta^2, \qquad
        \theta \leftarrow \theta - \gamma \Delta
    """

    # PyTorch's option names in its order (``state_dict()['param_groups']`` prints them)
    _option_order = ("lr", "rho", "eps", "weight_decay", "maximize", "capturable", "foreach",
                     "differentiable")

    _tensor_scalar_state = ("step",)

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach=None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        as_float(lr, "lr")  # a Tensor lr stays in the groups, as in PyTorch
        check_hyperparameter(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize,
                    **algorithm_flags("Adadelta", foreach, None, capturable, differentiable)}
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adadelta step; returns the closure's loss (None without a closure)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, rho = as_float(group["lr"], "lr"), group["rho"]
            eps, weight_decay = group["eps"], group["weight_decay"]
            for p, param, grad in self._params_with_grad(group):
                xp = backend.xp_of(param)
                state = self.state[p]
                if not state:
                    state["step"] = step_tensor()
                    state["square_avg"] = zeros_like_state(p)
                    state["acc_delta"] = zeros_like_state(p)
                state["step"]._data += 1
                if weight_decay != 0:
                    grad = grad + weight_decay * param
                square_avg = state["square_avg"]._data
                acc_delta = state["acc_delta"]._data
                scratch = xp.multiply(grad, grad)
                scratch *= 1 - rho
                square_avg *= rho
                square_avg += scratch
                std = xp.add(square_avg, eps, out=scratch)
                xp.sqrt(std, out=std)
                delta = xp.add(acc_delta, eps)
                xp.sqrt(delta, out=delta)
                delta /= std
                delta *= grad
                xp.multiply(delta, delta, out=scratch)
                scratch *= 1 - rho
                acc_delta *= rho
                acc_delta += scratch
                delta *= lr
                param -= delta
                bump_version(p)
        return loss
