"""The Gamma-family special functions the distributions use: lgamma, digamma,
polygamma and the regularized incomplete gamma function are ember's registered ops
(``ember.lgamma``, ...); Gamma(alpha, 1) sampling with an implicit reparameterization
gradient lives here, on the ops' array kernels (``ember.ops.special_kernels``).
"""
from __future__ import annotations

import numpy as np

import ember

from .. import backend
from ..ops.special import digamma, lgamma, polygamma
from ..ops.special import igamma as gammainc
from ..ops.special_kernels import incomplete_gamma

__all__ = ["lgamma", "digamma", "polygamma", "gammainc", "standard_gamma",
           "standard_gamma_grad"]


def _xp(tensor):
    return backend.xp_for_device(tensor.device)


def _wrap(array, like):
    """A tensor holding ``array`` (cast to ``like``'s float dtype) on ``like``'s device."""
    dtype = like.dtype if like.dtype.is_floating_point else ember.get_default_dtype()
    return ember.Tensor._make(array.astype(dtype.numpy, copy=False), like.device)


def _float64(tensor):
    return tensor._data.astype(np.float64)


# --------------------------------------------------------------------- Gamma sampling
def _standard_gamma_array(alpha, device):
    """Gamma(alpha, 1) draws by Marsaglia and Tsang's method (a squeezed transform of a
    normal draw, accepted with a uniform one); alpha < 1 draws Gamma(alpha + 1) times
    U^(1/alpha). The normals and uniforms come from ember's default generator."""
    xp = backend.xp_for_device(device)
    a = alpha.ravel()
    boost = a < 1
    lifted = xp.where(boost, a + 1.0, a)
    d = lifted - 1.0 / 3.0
    c = 1.0 / xp.sqrt(9.0 * d)
    out = xp.empty_like(a)
    pending = xp.arange(a.size)
    while pending.size:
        z = ember.randn(int(pending.size), dtype=ember.float64, device=device)._data
        u = ember.rand(int(pending.size), dtype=ember.float64, device=device)._data
        v = (1.0 + c[pending] * z) ** 3
        with np.errstate(invalid="ignore", divide="ignore"):
            log_v = xp.log(xp.where(v > 0, v, 1.0))
            dp = d[pending]
            accept = (v > 0) & (xp.log(u) < 0.5 * z * z + dp - dp * v + dp * log_v)
        out[pending[accept]] = (dp * v)[accept]
        pending = pending[~accept]
    log_out = xp.log(out)
    if bool(boost.any()):
        u = ember.rand(int(a.size), dtype=ember.float64, device=device)._data
        with np.errstate(divide="ignore"):
            log_out = xp.where(boost, log_out + xp.log(u) / a, log_out)
    return xp.exp(log_out).reshape(alpha.shape)


def standard_gamma_grad_array(xp, alpha, x):
    """dx/dalpha for x ~ Gamma(alpha, 1) held at its CDF level: -(dP/dalpha) / f(x)."""
    _, _, scaled = incomplete_gamma(xp, alpha, x)
    return -scaled


class _StandardGamma(ember.autograd.Function):
    @staticmethod
    def forward(ctx, alpha):
        a64 = _float64(alpha)
        draws = _standard_gamma_array(a64, alpha.device)
        out = _wrap(draws, alpha)
        tiny = float(np.finfo(out._data.dtype).tiny)
        out._data = _xp(alpha).maximum(out._data, tiny)
        ctx.arrays = (a64, out._data.astype(np.float64))
        return out

    @staticmethod
    @ember.autograd.once_differentiable
    def backward(ctx, grad):
        a64, x64 = ctx.arrays
        return grad * _wrap(standard_gamma_grad_array(_xp(grad), a64, x64), grad)

    def name(self) -> str:
        return "StandardGammaBackward0"


def standard_gamma(alpha):
    """Draws from Gamma(alpha, 1) with the implicit reparameterization gradient
    dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha) (F the CDF, f the density)."""
    return _StandardGamma.apply(alpha)


def standard_gamma_grad(alpha, x):
    """The implicit gradient dx/dalpha at draws ``x`` of Gamma(alpha, 1)."""
    alpha, x = ember.broadcast_tensors(alpha, x)
    return _wrap(standard_gamma_grad_array(_xp(alpha), _float64(alpha), _float64(x)), alpha)
