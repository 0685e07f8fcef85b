"""``ember.nn.init``: fill parameters in place with the standard initial distributions.

Every function works under ``no_grad``, draws from ember's default generator for the
tensor's device (or ``generator=``), and returns the tensor it filled. On CPU the draws,
their order and the bounds are PyTorch's, so a seeded model starts from PyTorch's weights.

>>> import ember
>>> _ = ember.manual_seed(0)
>>> ember.nn.init.uniform_(ember.empty(3), -1.0, 1.0)  # torch gives the same
tensor([-0.0075,  0.5364, -0.8230])
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import grad_mode, tracing
from .._mt_stream import TorchCompatibleGenerator
from .._mt_stream import normal as mt_normal
from .._mt_stream import randperm as mt_randperm
from .._mt_stream import uniform as mt_uniform
from ..random import generator_for
from ..tensor import Tensor, bump_version, check_writable

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_", "eye_",
           "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "trunc_normal_", "orthogonal_", "sparse_"]


def _fill(tensor: Tensor, array) -> Tensor:
    """Write ``array`` (NumPy/CuPy, broadcastable) into ``tensor`` in place, bumping its
    version like any in-place op."""
    if tracing.state.tracer is not None:
        tracing.unsupported("an nn.init fill writes a tensor in place")
    check_writable(tensor)  # (an overlapping view: the one error of every in-place write)
    with grad_mode.no_grad():
        if tensor._data.ndim == 0 and isinstance(tensor._data, np.ndarray):
            tensor._data[()] = array
        else:
            tensor._data[...] = array
        bump_version(tensor)
    return tensor


def _rng(tensor: Tensor, generator):
    return generator_for(tensor._device, generator)


def _check(tensor, op: str) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"nn.init.{op}: expected a Tensor, got {type(tensor).__name__}")


# PyTorch's kernels that draw real numbers refuse other dtypes with NotImplementedError:
# uniform draws always (even into an empty tensor), normal draws only when there is
# something to fill.
def _refuse_uniform(tensor: Tensor, op: str) -> None:
    if not tensor.dtype.is_floating_point:
        raise NotImplementedError(
            f'"check_uniform_bounds" not implemented for \'{tensor.dtype.scalar_name}\': '
            f"nn.init.{op} draws real numbers, so the tensor must have a floating-point dtype")


def _refuse_normal(tensor: Tensor, op: str) -> None:
    if not tensor.dtype.is_floating_point and tensor.numel() != 0:
        raise NotImplementedError(
            f'"normal_kernel_{tensor.device.type}" not implemented for '
            f"'{tensor.dtype.scalar_name}': nn.init.{op} draws real numbers, so the tensor "
            "must have a floating-point dtype")


def _negative(value) -> bool:
    try:
        return float(value) < 0
    except (TypeError, ValueError, RuntimeError):
        return False


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended scale of initial weights for a nonlinearity: 1 for linear/conv/
    sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2/(1+slope^2)) for leaky_relu, 3/4 for
    selu."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with values drawn from U(a, b) (``tensor.uniform_(a, b)`` without grad)."""
    _check(tensor, "uniform_")
    _refuse_uniform(tensor, "uniform_")
    with grad_mode.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with values drawn from N(mean, std^2) (``tensor.normal_`` without grad)."""
    _check(tensor, "normal_")
    if _negative(std):  # PyTorch checks std before the dtype
        raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")
    _refuse_normal(tensor, "normal_")
    if tensor.numel() == 0:  # nothing to draw: PyTorch accepts any dtype then
        return tensor
    with grad_mode.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _exact_stream(tensor: Tensor, generator):
    """The CPU stream that reproduces PyTorch's draws, or None on CUDA."""
    source = _rng(tensor, generator)
    return source if isinstance(source, TorchCompatibleGenerator) else None


def _normal_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def _trunc_normal_exact(g, n: int, kind: str, mean, std, a, b):
    """PyTorch's sampler: when [a, b] holds more than 30% of the mass, normals, with a
    whole fresh normal draw replacing the values outside until none is; otherwise uniform
    candidates on [a, b], each kept when log(u) is at most its log density relative to the
    peak (u from a second uniform draw of the same size), rejected ones drawn again."""
    work = np.dtype(kind).type  # PyTorch computes in the tensor's dtype
    lo, hi = work(a), work(b)
    if _normal_cdf((b - mean) / std) - _normal_cdf((a - mean) / std) > 0.3:
        values = mt_normal(g, n, kind, mean, std)
        while True:
            outside = (values < lo) | (values > hi)
            if not outside.any():
                return values
            values = np.where(outside, mt_normal(g, n, kind, mean, std), values)
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def rejected(candidates):
        log_density = ((candidates.astype(work) - work(mean)) / work(std)) ** 2
        log_density = log_density * work(-0.5) - work(log_peak)
        log_u = np.log(mt_uniform(g, n, kind).astype(np.float64)).astype(work)
        return log_u > log_density

    values = mt_uniform(g, n, kind, a, b)
    pending = rejected(values)
    while pending.any():
        candidates = mt_uniform(g, n, kind, a, b)
        values = np.where(pending, candidates, values)
        pending = np.where(pending, rejected(candidates), pending)
    return values


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Fill with N(mean, std^2) truncated to [a, b]: draws outside the interval are drawn
    again (vectorized rejection; each round redraws only the rejected entries)."""
    _check(tensor, "trunc_normal_")
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    # PyTorch's checks, in its order: normal draws when [a, b] holds more than 30% of the
    # mass (the bounds cast to the tensor's dtype first), else uniform draws on [a, b]
    if _normal_cdf((b - mean) / std) - _normal_cdf((a - mean) / std) > 0.3:
        d = tensor.dtype
        if not d.is_floating_point and d.name != "bool":
            info = np.iinfo(d.numpy)
            if not (info.min <= a <= info.max and info.min <= b <= info.max):
                raise RuntimeError(f"value cannot be converted to type {d.name} without "
                                   "overflow")
        _refuse_normal(tensor, "trunc_normal_")
    else:
        _refuse_uniform(tensor, "trunc_normal_")
        if a > b:
            raise RuntimeError("uniform_ expects to return a [from, to) range, but found "
                               f"from={a:g} > to={b:g}")
    if tensor.numel() == 0:
        return tensor
    exact = _exact_stream(tensor, generator)
    if exact is not None:
        kind = tensor._data.dtype.name
        values = _trunc_normal_exact(exact, tensor.numel(), kind, mean, std, a, b)
        return _fill(tensor, values.reshape(tuple(tensor.shape)))
    rng = _rng(tensor, generator)
    xp = _xp(tensor)
    values = rng.standard_normal((tensor.numel(),)) * std + mean
    bad = xp.nonzero((values < a) | (values > b))[0]
    for _ in range(1000):
        if bad.size == 0:
            break
        values[bad] = rng.standard_normal((int(bad.size),)) * std + mean
        redrawn = values[bad]
        bad = bad[(redrawn < a) | (redrawn > b)]
    values = xp.clip(values, a, b).reshape(tuple(tensor.shape))
    return _fill(tensor, values.astype(tensor._data.dtype))


def _xp(tensor):
    from .. import backend

    return backend.xp_for_device(tensor._device)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    _check(tensor, "constant_")
    return _fill(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity (ones on the diagonal)."""
    _check(tensor, "eye_")
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    xp = _xp(tensor)
    return _fill(tensor, xp.eye(*tensor.shape, dtype=tensor._data.dtype))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta, so the convolution
    keeps its input channels (per group)."""
    _check(tensor, "dirac_")
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    xp = _xp(tensor)
    values = xp.zeros(tuple(sizes), dtype=tensor._data.dtype)
    centre = tuple(s // 2 for s in sizes[2:])
    d = xp.arange(min_dim)
    for g in range(groups):
        values[(g * out_per_group + d, d) + centre] = 1
    return _fill(tensor, values)


def _calculate_fan_in_and_fan_out(tensor: Tensor):
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015)."""
    _check(tensor, "kaiming_uniform_")
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std  # rounded in this order, as PyTorch does
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan)."""
    _check(tensor, "kaiming_normal_")
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian matrix, with the
    signs fixed by R's diagonal so the distribution is uniform (Saxe et al., 2013); the
    trailing dimensions are flattened."""
    _check(tensor, "orthogonal_")
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    _refuse_normal(tensor, "orthogonal_")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    xp = _xp(tensor)
    exact = _exact_stream(tensor, generator)
    if exact is not None:  # PyTorch: new_empty((rows, cols)).normal_(0, 1)
        kind = tensor._data.dtype.name
        flat = mt_normal(exact, rows * cols, kind).reshape(rows, cols).astype(np.float64)
    else:
        flat = _rng(tensor, generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = xp.linalg.qr(flat)
    q = q * xp.sign(xp.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (gain * q).reshape(tuple(tensor.shape)).astype(tensor._data.dtype))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """A 2-D matrix with N(0, std^2) entries and, in every column, ``ceil(sparsity *
    rows)`` entries set to zero (Martens, 2010)."""
    _check(tensor, "sparse_")
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    _refuse_normal(tensor, "sparse_")
    if not tensor.dtype.is_floating_point:  # empty (else refused): nothing to draw
        return tensor
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    exact = _exact_stream(tensor, generator)
    if exact is not None:
        # PyTorch: normal_(0, std), then per column a randperm of the rows whose first
        # num_zeros entries are zeroed
        kind = tensor._data.dtype.name
        values = mt_normal(exact, rows * cols, kind, 0.0, std).reshape(rows, cols)
        for col in range(cols):
            values[mt_randperm(exact, rows)[:num_zeros], col] = 0
        return _fill(tensor, values)
    rng = _rng(tensor, generator)
    xp = _xp(tensor)
    values = rng.standard_normal((rows, cols)) * std
    if num_zeros:
        # an independent random permutation of the rows per column: argsort of uniforms
        order = xp.argsort(rng.random((rows, cols)), axis=0)
        zero_rows = order[:num_zeros]
        values[zero_rows, xp.arange(cols)[None, :]] = 0
    return _fill(tensor, values.astype(tensor._data.dtype))


# PyTorch's old non-underscore names, deprecated there too.
def _deprecated(function):
    def wrapper(*args, **kwargs):
        warnings.warn(f"nn.init.{function.__name__[:-1]} is now deprecated in favor of "
                      f"nn.init.{function.__name__}.", FutureWarning, stacklevel=2)
        return function(*args, **kwargs)
    wrapper.__name__ = function.__name__[:-1]
    wrapper.__doc__ = function.__doc__
    return wrapper


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
