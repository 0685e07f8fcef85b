"""Adagrad: per-coordinate learning rates from the sum of squared gradients."""
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

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al., 2011).

    .. math::
        g &\leftarrow g_t + \lambda\theta, \qquad
        \tilde\gamma = \gamma / (1 + (t - 1)\eta) \\
        s_t &= s_{t-1} + g^2, \qquad
        \theta \leftarrow \theta - \tilde\gamma\, g / (\sqrt{s_t} + \epsilon)

    with :math:`\eta` = ``lr_decay`` and :math:`s_0` = ``initial_accumulator_value``.
    The accumulators are created with the optimizer, as in PyTorch.
    """

    # PyTorch's option names in its order (``state_dict()['param_groups']`` prints them)
    _option_order = ("lr", "lr_decay", "eps", "weight_decay", "initial_accumulator_value",
                     "foreach", "maximize", "differentiable", "fused")

    _tensor_scalar_state = ("step",)

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach=None, *,
                 maximize: bool = False, differentiable: bool = False, fused=None) -> None:
        as_float(lr, "lr")  # a Tensor lr stays in the groups, as in PyTorch
        check_hyperparameter(lr=lr, eps=eps, weight_decay=weight_decay)
        if not lr_decay >= 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not initial_accumulator_value >= 0.0:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "maximize": maximize,
                    **algorithm_flags("Adagrad", foreach, fused, differentiable=differentiable)}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = step_tensor()
                state["sum"] = zeros_like_state(p, group["initial_accumulator_value"])

    def share_memory(self) -> None:
        """Call ``share_memory_()`` on the accumulators (for Hogwild-style training; in
        ember it leaves them as they are, see ``Tensor.share_memory_``).

        >>> opt = ember.optim.Adagrad([ember.tensor([1.0], requires_grad=True)])
        >>> opt.share_memory()
        """
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def step(self, closure=None):
        """One Adagrad step; returns the closure's loss (None without a closure)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, lr_decay = as_float(group["lr"], "lr"), group["lr_decay"]
            eps, weight_decay = group["eps"], group["weight_decay"]
            for p, param, grad in self._params_with_grad(group):
                xp = backend.xp_of(param)
                state = self.state[p]
                if not state:
                    state["step"] = step_tensor()
                    state["sum"] = zeros_like_state(p, group["initial_accumulator_value"])
                state["step"]._data += 1
                step = float(state["step"]._data)
                if weight_decay != 0:
                    grad = grad + weight_decay * param
                clr = lr / (1 + (step - 1) * lr_decay)
                total = state["sum"]._data
                scratch = xp.multiply(grad, grad)
                total += scratch
                std = xp.sqrt(total, out=scratch)
                std += eps
                update = xp.divide(grad, std, out=scratch)
                update *= clr
                param -= update
                bump_version(p)
        return loss
