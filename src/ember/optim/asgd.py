"""ASGD: stochastic gradient descent with a running average of the iterates."""
from __future__ import annotations

from ..tensor import bump_version
from .optimizer import (
    Optimizer,
    algorithm_flags,
    as_float,
    check_hyperparameter,
    step_tensor,
    zeros_like_state,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""Averaged stochastic gradient descent (Polyak and Juditsky, 1992).

    Per step :math:`t`, with :math:`\eta_0` = ``lr``:

    .. math::
        \theta &\leftarrow (1 - \lambda\eta_{t-1})\,\theta - \eta_{t-1}(g_t + w\theta) \\
        \bar\theta &\leftarrow \bar\theta + \mu_{t-1}(\theta - \bar\theta) \\
        \eta_t &= \eta_0 / (1 + \lambda\eta_0 t)^{\alpha}, \qquad
        \mu_t = 1 / \max(1, t - t_0)

    where :math:`\lambda` = ``lambd``, :math:`w` = ``weight_decay``. The average
    :math:`\bar\theta` is ``state[p]['ax']``; averaging starts after ``t0`` steps.

    >>> w = ember.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ember.optim.ASGD([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    # PyTorch makes plain numbers tensors again on load: step, and eta and mu too
    _tensor_scalar_state = ("step", "eta", "mu")

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach=None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        as_float(lr, "lr")  # a Tensor lr stays in the groups, as in PyTorch
        check_hyperparameter(lr=lr, weight_decay=weight_decay)
        flags = algorithm_flags("ASGD", foreach, None, capturable, differentiable)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": flags["foreach"],
                    "maximize": maximize, "differentiable": flags["differentiable"],
                    "capturable": flags["capturable"]}
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One ASGD step; returns the closure's loss (None without a closure)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, lambd, alpha = as_float(group["lr"], "lr"), group["lambd"], group["alpha"]
            t0, weight_decay = group["t0"], group["weight_decay"]
            for p, param, grad in self._params_with_grad(group):
                state = self.state[p]
                if not state:
                    state["step"] = step_tensor()
                    state["eta"] = step_tensor(lr)
                    state["mu"] = step_tensor(1.0)
                    state["ax"] = zeros_like_state(p)
                state["step"]._data += 1
                step = float(state["step"]._data)
                if weight_decay != 0:
                    grad = grad + weight_decay * param
                # eta and mu are float32 scalars, as PyTorch keeps them
                eta = float(state["eta"]._data)
                param *= 1 - lambd * eta
                param -= eta * grad
                ax = state["ax"]._data
                mu = float(state["mu"]._data)
                if mu != 1:
                    ax += (param - ax) * mu
                else:
                    ax[...] = param
                state["eta"]._data[...] = lr / ((1 + lambd * lr * step) ** alpha)
                state["mu"]._data[...] = 1 / max(1, step - t0)
                bump_version(p)
        return loss
