"""Ready-made parametrizations: weight_norm and spectral_norm."""
from __future__ import annotations

from ... import creation, grad_mode
from .. import functional as F
from .. import init
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm"]


def _norm_except_dim(v, dim: int):
    """sqrt(sum of v^2 over every dimension but ``dim``), kept broadcastable; dim=-1: the
    norm of the whole tensor."""
    if dim == -1:
        return (v * v).sum().sqrt()
    dims = tuple(d for d in range(v.dim()) if d != dim)
    return (v * v).sum(dim=dims, keepdim=True).sqrt()


class _WeightNorm(Module):
    """w = g * v / ||v|| (the norm over every dimension but ``dim``)."""

    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as g * v / ||v|| (Salimans & Kingma, 2016): the
    magnitude ``original0`` (g) and direction ``original1`` (v) are learned separately."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """w / sigma(w), with sigma the largest singular value of w (as a matrix with ``dim``
    first), estimated by power iteration on the buffers _u and _v (updated in training)."""

    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            matrix = self._reshape_weight_to_matrix(weight)
            h, w = matrix.shape
            u = init.normal_(creation.empty(h, dtype=weight.dtype, device=weight.device))
            v = init.normal_(creation.empty(w, dtype=weight.dtype, device=weight.device))
            self.register_buffer("_u", F.normalize(u, dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=eps))
            self._power_method(matrix, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            order = [self.dim] + [d for d in range(weight.dim()) if d != self.dim]
            weight = weight.permute(*order)
        return weight.flatten(1)

    def _power_method(self, matrix, iterations: int) -> None:
        with grad_mode.no_grad():
            for _ in range(iterations):
                u = F.normalize(matrix.matmul(self._v), dim=0, eps=self.eps)
                init._fill(self._u, u._data)
                v = F.normalize(matrix.transpose(0, 1).matmul(self._u), dim=0, eps=self.eps)
                init._fill(self._v, v._data)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        matrix = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = (u * matrix.matmul(v)).sum()
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Reparametrize ``module.<name>`` as w / sigma(w) (Miyato et al., 2018), sigma the
    spectral norm estimated by ``n_power_iterations`` power-iteration steps per training
    forward."""
    weight = getattr(module, name, None)
    if weight is None:
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) \
            else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
