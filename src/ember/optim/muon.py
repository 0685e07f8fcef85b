"""Muon: momentum SGD whose update is orthogonalized by a Newton-Schulz iteration."""
from __future__ import annotations

import math

from .. import backend
from ..tensor import bump_version
from .adafactor import lerp_
from .optimizer import Optimizer, as_float, zeros_like_state

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _bfloat16(xp, x):
    """``x`` rounded to bfloat16 precision (nearest, ties to even), kept as float32: the
    precision PyTorch runs the iteration in."""
    bits = xp.ascontiguousarray(x, dtype=xp.float32).view(xp.uint32)
    bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
    return bits.astype(xp.uint32).view(xp.float32)


def zeropower_via_newtonschulz(xp, grad, ns_coefficients, ns_steps: int, eps: float):
    """The orthogonalized ``grad`` (a 2-D array): ``ns_steps`` quintic Newton-Schulz
    iterations :math:`X \\leftarrow aX + (bA + cA^2)X`, :math:`A = XX^T`, from
    :math:`X = G/\\|G\\|_F`, in bfloat16 precision. Returns a float32 array."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = _bfloat16(xp, grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _bfloat16(xp, xp.sqrt(xp.sum(x * x)))
    x = _bfloat16(xp, x / xp.maximum(norm, xp.float32(eps)))
    for _ in range(ns_steps):
        gram = _bfloat16(xp, x @ x.T)
        gram_update = _bfloat16(xp, b * gram + c * (gram @ gram))
        x = _bfloat16(xp, a * x + gram_update @ x)
    return x.T if tall else x


def _adjusted_lr(lr: float, adjust_lr_fn, shape) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    r"""Muon (Jordan et al., 2024): momentum whose update is orthogonalized, for the 2-D
    weights of hidden layers (optimize biases, embeddings and the rest with e.g. AdamW).

    .. math::
        B_t &= \mu B_{t-1} + (1-\mu) g_t, \qquad
        \tilde B_t = \begin{cases} g_t + \mu (B_t - g_t) & \text{nesterov} \\
                                   B_t & \text{otherwise} \end{cases} \\
        O_t &= \mathrm{NS}^{(a,b,c)}_k(\tilde B_t), \qquad
        \theta \leftarrow (1 - \gamma\lambda)\,\theta - \gamma' O_t

    :math:`\mathrm{NS}` is ``ns_steps`` Newton-Schulz iterations with ``ns_coefficients``
    (run in bfloat16 precision, as PyTorch does); :math:`\gamma'` is the learning rate
    scaled by :math:`\sqrt{\max(1, A/B)}` (``adjust_lr_fn=None`` or ``"original"``) or
    :math:`0.2\sqrt{\max(A, B)}` (``"match_rms_adamw"``) for an :math:`A\times B` weight.

    >>> w = ember.tensor([[1.0, 0.0], [0.0, 2.0]], requires_grad=True)
    >>> opt = ember.optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> (w * w).sum().backward(); opt.step()
    >>> w.detach()
    tensor([[0.8883, 0.0000],
            [0.0000, 1.9309]])
    """

    def __init__(self, params, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps: float = EPS,
                 ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn=None) -> None:
        as_float(lr, "lr")  # a Tensor lr stays in the groups, as in PyTorch
        if not 0.0 <= as_float(lr, "lr"):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        for p in group["params"]:
            if p.ndim != 2:
                raise ValueError("Muon only supports 2D parameters whereas we found a "
                                 f"parameter with size: {p.size()}")

    def step(self, closure=None):
        """One Muon step; returns the closure's loss (None without a closure)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, momentum = as_float(group["lr"], "lr"), group["momentum"]
            for p, param, grad in self._params_with_grad(group):
                xp = backend.xp_of(param)
                if grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = zeros_like_state(p)
                buf = state["momentum_buffer"]._data
                lerp_(xp, buf, grad, 1 - momentum)
                if group["nesterov"]:
                    update = grad.copy()
                    lerp_(xp, update, buf, momentum)
                else:
                    update = buf
                update = zeropower_via_newtonschulz(xp, update, group["ns_coefficients"],
                                                    group["ns_steps"], group["eps"])
                param *= 1 - lr * group["weight_decay"]
                param -= _adjusted_lr(lr, group["adjust_lr_fn"], param.shape) * \
                    update.astype(param.dtype)
                bump_version(p)
        return loss
