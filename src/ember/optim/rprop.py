"""Rprop: sign-based updates with per-coordinate step sizes."""
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

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Resilient backpropagation (Riedmiller and Braun, 1993).

    Each coordinate keeps a step size :math:`\eta_i`: it grows by ``etas[1]`` while the
    gradient keeps its sign, shrinks by ``etas[0]`` when the sign flips (and that step is
    skipped), stays within ``step_sizes``; the parameter moves by
    :math:`-\mathrm{sign}(g_i)\,\eta_i`.

    >>> import ember
    >>> w = ember.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ember.optim.Rprop([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    # PyTorch's option names in its order (``state_dict()['param_groups']`` prints them)
    _option_order = ("lr", "etas", "step_sizes", "foreach", "maximize", "differentiable",
                     "capturable")

    _tensor_scalar_state = ("step",)

    def __init__(self, params, lr: float = 1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        as_float(lr, "lr")  # a Tensor lr stays in the groups, as in PyTorch
        check_hyperparameter(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes,
                    "maximize": maximize,
                    **algorithm_flags("Rprop", foreach, None, capturable=capturable,
                             differentiable=differentiable)}
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Rprop step; returns the closure's loss (None without a closure)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            eta_minus, eta_plus = group["etas"]
            low, high = group["step_sizes"]
            for p, param, grad in self._params_with_grad(group):
                xp = backend.xp_of(param)
                state = self.state[p]
                if not state:
                    state["step"] = step_tensor()
                    state["prev"] = zeros_like_state(p)
                    state["step_size"] = zeros_like_state(p, as_float(group["lr"], "lr"))
                state["step"]._data += 1
                prev, size = state["prev"]._data, state["step_size"]._data
                agreement = xp.sign(grad * prev)
                factor = xp.where(agreement > 0, eta_plus,
                                  xp.where(agreement < 0, eta_minus, 1.0)).astype(size.dtype)
                size *= factor
                xp.clip(size, low, high, out=size)
                # a sign flip: skip this coordinate's step and forget its gradient
                grad = xp.where(agreement < 0, 0, grad).astype(grad.dtype)
                param -= xp.sign(grad) * size
                prev[...] = grad
                bump_version(p)
        return loss
