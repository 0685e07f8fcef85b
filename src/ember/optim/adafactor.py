"""Adafactor: Adam-like steps with a factored (row x column) second-moment estimate."""
from __future__ import annotations

import numpy as np

from .. import backend
from ..tensor import bump_version
from .optimizer import Optimizer, algorithm_flags, as_float, step_tensor, zeros_like_state

__all__ = ["Adafactor"]


def lerp_(xp, start, end, weight: float) -> None:
    """``start += weight * (end - start)`` in place, rounded as PyTorch's lerp (which
    works from ``end`` when the weight is 0.5 or more)."""
    if abs(weight) < 0.5:
        start += weight * (end - start)
    else:
        xp.subtract(end, (end - start) * (1 - weight), out=start)


class Adafactor(Optimizer):
    r"""Adafactor (Shazeer and Stern, 2018), as PyTorch implements it.

    For a parameter of two or more dimensions only the row and column means of
    :math:`g^2` over the last two dimensions are kept (``row_var``, ``col_var``), so the
    state is :math:`O(n + m)` instead of :math:`O(nm)`; vectors keep a full ``variance``.
    Per step :math:`t`, with :math:`\hat\beta_{2,t} = 1 - t^{c}` (:math:`c` =
    ``beta2_decay``):

    .. math::
        \rho_t &= \min(\gamma, 1/\sqrt t), \qquad
        \alpha_t = \max(\epsilon_2, \mathrm{RMS}(\theta))\,\rho_t \\
        \hat V &= \frac{R\,C}{\max(\mathrm{mean}(R), \epsilon_1)}, \qquad
        U = \frac{g}{\sqrt{\max(\hat V, \epsilon_1^2)}} \\
        \theta &\leftarrow (1 - \gamma\lambda)\,\theta
            - \frac{\alpha_t}{\max(1, \mathrm{RMS}(U)/d)}\, U

    ``eps=(eps1, eps2)``; ``eps1=None`` uses the machine epsilon of the parameter's dtype.

    >>> w = ember.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    >>> opt = ember.optim.Adafactor([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> state = opt.state[w]
    >>> state["row_var"].shape, state["col_var"].shape
    (ember.Size([2, 1]), ember.Size([1, 2]))
    """

    _tensor_scalar_state = ("step",)

    def __init__(self, params, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps=(None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach=None, maximize: bool = False) -> None:
        as_float(lr, "lr")  # a Tensor lr stays in the groups, as in PyTorch
        if not 0.0 <= as_float(lr, "lr"):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        foreach = algorithm_flags("Adafactor", foreach, None)["foreach"]
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adafactor step; returns the closure's loss (None without a closure)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = as_float(group["lr"], "lr")
            eps1, eps2 = group["eps"]
            for p, param, grad in self._params_with_grad(group):
                xp = backend.xp_of(param)
                state = self.state[p]
                if not state:
                    state["step"] = step_tensor()
                    if grad.ndim > 1:
                        shape = grad.shape
                        state["row_var"] = zeros_like_state(p, shape=shape[:-1] + (1,))
                        state["col_var"] = zeros_like_state(
                            p, shape=shape[:-2] + (1,) + shape[-1:])
                    else:
                        state["variance"] = zeros_like_state(p)
                state["step"]._data += 1
                self._update(xp, group, state, param, grad, lr, eps1, eps2)
                bump_version(p)
        return loss

    @staticmethod
    def _update(xp, group, state, param, grad, lr, eps1, eps2) -> None:
        if eps1 is None:
            eps1 = float(np.finfo(param.dtype).eps)
        step = float(state["step"]._data)
        weight = step ** group["beta2_decay"]
        rho = min(lr, 1 / step ** 0.5)
        alpha = max(eps2, float(xp.sqrt(xp.sum(param * param))) / param.size ** 0.5) * rho
        if group["weight_decay"] != 0:
            param *= 1 - lr * group["weight_decay"]
        if grad.ndim > 1:
            row_var, col_var = state["row_var"]._data, state["col_var"]._data
            square = grad * grad
            lerp_(xp, row_var, xp.mean(square, axis=-1, keepdims=True), weight)
            lerp_(xp, col_var, xp.mean(square, axis=-2, keepdims=True), weight)
            estimate = xp.matmul(row_var, col_var)
            estimate /= xp.maximum(xp.mean(row_var, axis=-2, keepdims=True), eps1)
        else:
            variance = state["variance"]._data
            lerp_(xp, variance, grad * grad, weight)
            estimate = variance.copy()
        update = 1 / xp.sqrt(xp.maximum(estimate, eps1 * eps1))
        update *= grad
        rms = float(xp.sqrt(xp.sum(update * update))) / (update.size ** 0.5 * group["d"])
        param -= (alpha / max(1.0, rms)) * update
