"""Random sampling ops: the in-place fills (``uniform_``, ``normal_``, ...) and the sampling
functions (``bernoulli``, ``multinomial``, ``poisson``, ``normal``), drawing from the
generators of ``ember.random``. On CPU they draw PyTorch's numbers, in PyTorch's order
(``ember._mt_stream``); on CUDA they draw from CuPy.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import backend, dtypes
from .._mt_stream import TorchCompatibleGenerator
from .._mt_stream import bernoulli_scalar as mt_bernoulli_scalar
from .._mt_stream import bernoulli_tensor as mt_bernoulli_tensor
from .._mt_stream import binomial as mt_binomial
from .._mt_stream import cauchy as mt_cauchy
from .._mt_stream import exponential as mt_exponential
from .._mt_stream import geometric as mt_geometric
from .._mt_stream import log_normal as mt_log_normal
from .._mt_stream import multinomial as mt_multinomial
from .._mt_stream import normal as mt_normal
from .._mt_stream import poisson as mt_poisson
from .._mt_stream import random_from_to as mt_random_from_to
from .._mt_stream import random_full as mt_random_full
from .._mt_stream import uniform as mt_uniform
from ..autograd.function import Function
from ..creation import _device, _dtype_or_default, _finish, _shape
from ..random import Generator, generator_for
from ..tensor import Tensor, apply_inplace
from .registry import NAMESPACES, Sample, register_op

# ----------------------------------------------------------------------------- sampling
# On CPU the draws come from the PyTorch-compatible stream, in the tensor's dtype and in
# the order PyTorch fills the tensor (its memory order). On CUDA they are float64 (or
# int64) CuPy arrays cast to the tensor's dtype. Their results have no reparameterized
# gradient: as in PyTorch, the gradient reaching their inputs is zero.


class _Sampled(Function):
    """``apply(*parameter_tensors, sample)`` returns ``sample``, an array drawn beforehand.
    The gradient to each tensor argument is zero: a random draw depends neither on the
    values it overwrites nor (without reparameterization) on its parameters."""

    array_backward = True
    node_name = "SampledBackward0"

    @staticmethod
    def forward(ctx, *args):
        ctx.shapes = [getattr(a, "shape", None) for a in args[:-1]]
        return args[-1]

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        needs = ctx.needs_input_grad
        zero = grad * 0
        return tuple(m.sum_to_shape(zero, shape) if needs[i] else None
                     for i, shape in enumerate(ctx.shapes)) + (None,)


_NODES: dict[str, type] = {}


def _sampled(name: str, *inputs_and_sample):
    """Wrap the sample (last argument: an array on the inputs' device) as the output of a
    node named ``name`` (PyTorch's grad_fn name) whose gradient to each input is zero."""
    node = _NODES.get(name)
    if node is None:
        node = _NODES[name] = type(name, (_Sampled,), {"node_name": name})
    return node.apply(*inputs_and_sample)


def _source(device, generator, op: str):
    """The NumPy/CuPy generator for ``device``; PyTorch's error when ``generator`` belongs
    to another kind of device."""
    if generator is not None:
        if not isinstance(generator, Generator):
            raise TypeError(f"{op}(): argument 'generator' must be an ember.Generator, not "
                            f"{type(generator).__name__}")
        if generator.device.type != device.type:
            raise RuntimeError(f"Expected a '{device.type}' device type for generator but "
                               f"found '{generator.device.type}'")
    return generator_for(device, generator)


def _xp(t):
    return backend.xp_for_device(t._device)


def _exact(source) -> bool:
    """Whether ``source`` is the CPU stream that reproduces PyTorch's draws."""
    return isinstance(source, TorchCompatibleGenerator)


def _fill_axes(data) -> list:
    """The axes of ``data`` from the slowest-varying to the fastest in memory: PyTorch
    fills a tensor in this order (``_mt_stream.fill_order``)."""
    strides = [abs(s) for s in data.strides]
    return sorted(range(data.ndim), key=lambda axis: -strides[axis])


def _laid_out(data, values):
    """``values`` (flat, in ``data``'s fill order) as an array of ``data``'s shape."""
    axes = _fill_axes(data)
    out = np.empty(data.shape, dtype=values.dtype)
    out.transpose(axes)[...] = values.reshape([data.shape[a] for a in axes])
    return out


def _in_fill_order(data, values):
    """``values`` (an array of ``data``'s shape) flattened in ``data``'s fill order."""
    return np.ascontiguousarray(values.transpose(_fill_axes(data))).reshape(-1)


def _draw_kind(dtype) -> str:
    """The dtype the stream draws in: ``dtype``, or float32 for other float formats (their
    draws are then rounded to ``dtype``)."""
    name = np.dtype(dtype).name
    return name if name in ("float16", "float32", "float64") else "float32"


def _float_kind(t) -> str:
    return _draw_kind(t._data.dtype)


def _shape_of(t) -> tuple:
    return tuple(t._data.shape)


def _number(value, op: str, name: str):
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise RuntimeError(f"{op}(): argument '{name}' must be a number, got a tensor of "
                               f"shape {list(value.shape)}")
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"{op}(): argument '{name}' must be a number, not "
                        f"{type(value).__name__}")
    return value


def _require_float(t, op: str, kernel: str | None = None) -> None:
    """Draws of real numbers need a float tensor. ``kernel``: PyTorch's kernel name, where
    its refusal is the dispatch's NotImplementedError (uniform_, normal_, log_normal_)."""
    if not t.dtype.is_floating_point:
        why = (f"{op} draws real numbers, so the tensor must have a floating-point dtype "
               f"(it is {t.dtype.name})")
        if kernel is not None:
            raise NotImplementedError(
                f'"{kernel}" not implemented for \'{t.dtype.scalar_name}\' ({why})')
        raise RuntimeError(f'"{op}" is not defined for {t.dtype.name} tensors: {why}')


def _write(t, name: str, array):
    """Write ``array`` into ``t`` the way every in-place op does (leaf check, version bump,
    zero gradient to the overwritten values)."""
    array = array.astype(t._data.dtype, copy=False)
    return apply_inplace(t, lambda self: _sampled(name, self, array))


def _float_draw(t, values):
    """Cast float64 draws to ``t``'s float dtype."""
    return values.astype(t._data.dtype)


def uniform_(t, from_=0.0, to=1.0, *, generator=None, **kwargs):
    """Fill ``t`` with U[from, to) samples: ``from + (to - from) * u``, u uniform in [0, 1).
    A value that rounds up to ``to`` in a narrow dtype is moved to the largest one below."""
    from_, to = _from_to(kwargs, from_, to, "uniform_")
    from_, to = _number(from_, "uniform_", "from"), _number(to, "uniform_", "to")
    _require_float(t, "uniform_", "check_uniform_bounds")
    if not from_ <= to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_} > to={to}")
    source = _source(t._device, generator, "uniform_")
    if _exact(source):
        drawn = mt_uniform(source, t._data.size, _float_kind(t), from_, to)
        return _write(t, "UniformBackward0", _laid_out(t._data, drawn))
    xp = _xp(t)
    u = source.random(_shape_of(t), dtype=np.float64)
    values = _float_draw(t, from_ + (to - from_) * u)
    if from_ < to:
        below = np.nextafter(t._data.dtype.type(to), t._data.dtype.type(from_))
        values = xp.where(values >= to, float(below), values).astype(t._data.dtype, copy=False)
    return _write(t, "UniformBackward0", values)


def normal_(t, mean=0.0, std=1.0, *, generator=None):
    """Fill ``t`` with N(mean, std^2) samples: ``mean + std * z``, z standard normal."""
    mean, std = _number(mean, "normal_", "mean"), _number(std, "normal_", "std")
    _require_float(t, "normal_", f"normal_kernel_{t.device.type}")
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    source = _source(t._device, generator, "normal_")
    if _exact(source):
        drawn = mt_normal(source, t._data.size, _float_kind(t), mean, std,
                          contiguous=t._data.flags.c_contiguous)
        return _write(t, "NormalBackward0", _laid_out(t._data, drawn))
    z = source.standard_normal(_shape_of(t), dtype=np.float64)
    return _write(t, "NormalBackward0", _float_draw(t, mean + std * z))


def log_normal_(t, mean=1.0, std=2.0, *, generator=None):
    """Fill ``t`` with log-normal samples ``exp(mean + std * z)``, z standard normal
    (``mean`` and ``std`` are those of the underlying normal)."""
    mean, std = _number(mean, "log_normal_", "mean"), _number(std, "log_normal_", "std")
    _require_float(t, "log_normal_", f"log_normal_{t.device.type}")
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    source = _source(t._device, generator, "log_normal_")
    if _exact(source):
        drawn = mt_log_normal(source, t._data.size, _float_kind(t), mean, std)
        return _write(t, "LogNormalBackward0", _laid_out(t._data, drawn))
    z = source.standard_normal(_shape_of(t), dtype=np.float64)
    return _write(t, "LogNormalBackward0", _float_draw(t, _xp(t).exp(mean + std * z)))


def exponential_(t, lambd=1.0, *, generator=None):
    """Fill ``t`` with Exp(lambd) samples (density ``lambd * exp(-lambd * x)``, x >= 0)."""
    lambd = _number(lambd, "exponential_", "lambd")
    _require_float(t, "exponential_")
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    source = _source(t._device, generator, "exponential_")
    if _exact(source):
        drawn = mt_exponential(source, t._data.size, _float_kind(t), lambd)
        return _write(t, "ExponentialBackward0", _laid_out(t._data, drawn))
    e = source.standard_exponential(_shape_of(t), dtype=np.float64)
    return _write(t, "ExponentialBackward0", _float_draw(t, e / lambd))


def cauchy_(t, median=0.0, sigma=1.0, *, generator=None):
    """Fill ``t`` with Cauchy samples: density ``1 / (pi * sigma * (1 + ((x - median) /
    sigma)^2))``, drawn as ``median + sigma * tan(pi * (u - 1/2))``."""
    median = _number(median, "cauchy_", "median")
    sigma = _number(sigma, "cauchy_", "sigma")
    _require_float(t, "cauchy_")
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    source = _source(t._device, generator, "cauchy_")
    if _exact(source):
        drawn = mt_cauchy(source, t._data.size, _float_kind(t), median, sigma)
        return _write(t, "CauchyBackward0", _laid_out(t._data, drawn))
    u = source.random(_shape_of(t), dtype=np.float64)
    values = median + sigma * _xp(t).tan(np.pi * (u - 0.5))
    return _write(t, "CauchyBackward0", _float_draw(t, values))


def geometric_(t, p, *, generator=None):
    """Fill ``t`` with Geometric(p) samples: the number of Bernoulli(p) trials up to and
    including the first success, ``P(k) = (1 - p)^(k - 1) p`` for k = 1, 2, ... Drawn as
    ``ceil(log(1 - u) / log(1 - p))`` (at least 1); any dtype."""
    p = _number(p, "geometric_", "p")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    source = _source(t._device, generator, "geometric_")
    if _exact(source):
        drawn = mt_geometric(source, t._data.size, p, t._data.dtype)
        return _write(t, "GeometricBackward0", _laid_out(t._data, drawn))
    xp = _xp(t)
    u = source.random(_shape_of(t), dtype=np.float64)
    k = xp.maximum(xp.ceil(xp.log1p(-u) / np.log1p(-p)), 1.0)
    if not t.dtype.is_floating_point:
        info = np.iinfo(t._data.dtype) if t._data.dtype.kind in "iu" else None
        k = xp.minimum(k, float(info.max) if info is not None else 1.0)
    return _write(t, "GeometricBackward0", k)


def bernoulli_(t, p=0.5, *, generator=None):
    """Fill ``t`` with 0/1 values, 1 with probability ``p`` (a number, or a tensor of
    probabilities broadcastable to ``t``); any dtype."""
    xp = _xp(t)
    if isinstance(p, Tensor):
        if p._device != t._device:
            raise RuntimeError(f"bernoulli_: expected the probability tensor p on "
                               f"{t._device}, but it is on {p._device}")
        probs = p._data.astype(np.float64)
        if p.numel() and not bool(((probs >= 0) & (probs <= 1)).all()):
            raise RuntimeError("bernoulli_ expects all elements of p to be in [0, 1]")
        try:
            probs = xp.broadcast_to(probs, _shape_of(t))
        except ValueError:
            raise RuntimeError(f"bernoulli_: p of shape {list(p.shape)} can't be broadcast "
                               f"to the tensor's shape {list(t.shape)}") from None
        name = "BernoulliBackward2"
    else:
        probs = _number(p, "bernoulli_", "p")
        if not 0 <= probs <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={probs}")
        name = "BernoulliBackward1"
    source = _source(t._device, generator, "bernoulli_")
    if _exact(source):
        if isinstance(p, Tensor):
            ordered = _in_fill_order(t._data, xp.broadcast_to(p._data, _shape_of(t)))
            drawn = mt_bernoulli_tensor(source, ordered)
        else:
            drawn = mt_bernoulli_scalar(source, t._data.size, probs)
        return _write(t, name, _laid_out(t._data, drawn))
    u = source.random(_shape_of(t), dtype=np.float64)
    return _write(t, name, u < probs)


def random_(t, from_=None, to=None, *, generator=None, **kwargs):
    """Fill ``t`` with integers drawn uniformly: ``random_(from, to)`` from [from, to),
    ``random_(to)`` from [0, to), ``random_()`` from [0, m] where m is the dtype's largest
    value (for floats: 2^mantissa digits, the largest run of exact integers)."""
    if "from" in kwargs and to is None:
        raise TypeError("random_() takes random_(), random_(to) or random_(from, to): "
                        "'from' needs 'to'")
    from_, to = _from_to(kwargs, from_, to, "random_")
    dt = t._data.dtype
    if dt.kind in "fV":
        digits = np.finfo(dt).nmant + 1
        low_limit, high_limit = -(2 ** digits), 2 ** digits
    elif dt.kind == "b":
        low_limit, high_limit = 0, 1
    else:
        info = np.iinfo(dt)
        low_limit, high_limit = int(info.min), int(info.max)
    for name, value in (("from", from_), ("to", to)):
        if value is not None and not isinstance(_number(value, "random_", name),
                                                (int, np.integer)):
            raise TypeError(f"random_(): argument '{name}' must be an integer, not "
                            f"{type(value).__name__}")
    from_ = None if from_ is None else int(_number(from_, "random_", "from"))
    to = None if to is None else int(_number(to, "random_", "to"))
    if from_ is None and to is None:
        low, high = 0, high_limit  # inclusive
    else:
        if to is None:  # random_(to)
            from_, to = 0, from_
        elif from_ is None:
            from_ = 0
        if from_ >= to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={from_} >= to={to}")
        low, high = from_, to - 1
    if low < low_limit or high > high_limit:
        raise RuntimeError(
            f"random_: the range [{low}, {high + 1}) doesn't fit {t.dtype.name}, whose "
            f"values (as exact integers) lie in [{low_limit}, {high_limit}]")
    source = _source(t._device, generator, "random_")
    if _exact(source):
        if from_ is None and to is None:
            drawn = mt_random_full(source, t._data.size, dt)
        else:
            drawn = mt_random_from_to(source, t._data.size, low, high + 1, dt)
        return _write(t, "RandomBackward0", _laid_out(t._data, drawn))
    values = source.integers(low, high, size=_shape_of(t), dtype=np.int64, endpoint=True)
    return _write(t, "RandomBackward0", values)


def bernoulli(input, p=None, *, generator=None):
    """0/1 samples, 1 with probability ``input[i]`` (or with probability ``p`` everywhere
    when ``p`` is given); the result has ``input``'s shape, dtype and device."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    xp = _xp(input)
    if p is None:
        _require_float(input, "bernoulli")
        probs = input._data.astype(np.float64)
        if input.numel() and not bool(((probs >= 0) & (probs <= 1)).all()):
            raise RuntimeError("bernoulli(): expected all elements of input to be "
                               "probabilities in [0, 1]")
        name = "BernoulliBackward0"
    else:
        probs = _number(p, "bernoulli", "p")
        if not 0 <= probs <= 1:
            raise RuntimeError(f"bernoulli expects p to be in [0, 1], but got p={probs}")
        name = "BernoulliBackward1"
    source = _source(input._device, generator, "bernoulli")
    if _exact(source):  # PyTorch fills a fresh contiguous tensor: in C order
        if p is None:
            drawn = mt_bernoulli_tensor(source, input._data)
        else:
            drawn = mt_bernoulli_scalar(source, input._data.size, probs)
        sample = drawn.reshape(_shape_of(input)).astype(input._data.dtype)
        return _sampled(name, input, sample)
    u = source.random(_shape_of(input), dtype=np.float64)
    sample = xp.asarray(u < probs).astype(input._data.dtype)
    return _sampled(name, input, sample)


def poisson(input, generator=None):
    """Samples from Poisson(rate) for each element ``rate`` of ``input`` (non-negative
    floats); the counts come back in ``input``'s dtype."""
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    _require_float(input, "poisson")
    rates = input._data.astype(np.float64)
    if input.numel() and not bool((rates >= 0).all()):
        raise RuntimeError("poisson(): invalid Poisson rate, expected every rate in input to "
                           "be non-negative (and not nan)")
    source = _source(input._device, generator, "poisson")
    if _exact(source):  # into a fresh contiguous tensor: in C order
        counts = mt_poisson(source, rates)
    else:
        counts = source.poisson(rates, size=rates.shape)
    return _sampled("PoissonBackward0", input, counts.astype(input._data.dtype))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Draw ``num_samples`` category indices from each row of ``input`` (1-D: one
    distribution; 2-D: one per row) with probabilities proportional to the row's
    non-negative weights. Returns int64 indices of shape ``(num_samples,)`` or
    ``(rows, num_samples)``.

    With replacement: inverse-CDF sampling, a binary search of each uniform draw in its
    row's cumulative weights, O(rows * num_samples * log(categories)). Without
    replacement: keys ``E / w`` with E ~ Exp(1) and the ``num_samples`` smallest keys per
    row (equivalent to drawing one category at a time and removing it; once a row's
    positive categories are used up, its zero-weight ones follow in index order, as
    PyTorch also returns them rather than failing),
    O(rows * categories * log(categories))."""
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError(f"multinomial(): argument 'num_samples' must be int, not "
                        f"{type(num_samples).__name__}")
    num_samples = int(num_samples)
    if input.dim() not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim, but got a {input.dim()}-d tensor")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype.name}")
    if num_samples <= 0:
        raise RuntimeError(f"cannot sample n_sample <= 0 samples (got {num_samples})")
    categories = input.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without "
                           f"replacement (n_sample={num_samples}, prob_dist.size(-1)="
                           f"{categories})")
    xp = _xp(input)
    weights = input._data.astype(np.float64).reshape(-1, categories)
    rows = weights.shape[0]
    if weights.size:
        if not bool(xp.isfinite(weights).all()) or bool((weights < 0).any()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or "
                               "element < 0")
        totals = weights.sum(axis=1)
        if bool((totals <= 0).any()):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    elif categories == 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _source(input._device, generator, "multinomial")
    if _exact(rng):
        index = mt_multinomial(rng, input._data.reshape(-1, categories), num_samples,
                               replacement)
        if input.dim() == 1:
            index = index.reshape(num_samples)
        return Tensor._make(index, input._device, False)
    if replacement:
        cdf = xp.cumsum(weights, axis=1)
        cdf /= cdf[:, -1:]
        offsets = xp.arange(rows, dtype=np.float64)[:, None]
        u = rng.random((rows, num_samples), dtype=np.float64)
        # one flat search: row r's cdf is shifted into [r, r + 1], and so are its draws
        flat = xp.searchsorted((cdf + offsets).ravel(), (u + offsets).ravel(), side="right")
        index = flat.reshape(rows, num_samples) - offsets.astype(np.int64) * categories
        # a draw that rounded up to the row's end belongs to its last positive category
        last = categories - 1 - xp.argmax((weights > 0)[:, ::-1], axis=1)
        index = xp.minimum(index, last[:, None])
    else:
        e = rng.standard_exponential((rows, categories), dtype=np.float64)
        with np.errstate(divide="ignore"):
            keys = e / weights
        keys = xp.where(weights > 0, keys, np.inf)
        index = xp.argsort(keys, axis=1, kind="stable")[:, :num_samples]
    index = index.astype(np.int64)
    if input.dim() == 1:
        index = index.reshape(num_samples)
    return Tensor._make(index, input._device, False)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False) -> Tensor:
    """Normal samples ``mean + std * z`` (z standard normal), in PyTorch's four forms:
    ``normal(mean_tensor, std_tensor)`` (broadcast together), ``normal(mean_tensor,
    std=1.0)``, ``normal(mean, std_tensor)``, each with the tensors' dtype and device, and
    ``normal(mean, std, size, dtype=, device=, requires_grad=)`` with numbers. As in
    PyTorch, the gradient to tensor ``mean``/``std`` is zero (no reparameterization: use
    ``mean + std * randn_like(mean)`` for that)."""
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal(): with a number mean and std, argument 'size' is "
                            "required (e.g. normal(0.0, 1.0, size=(2, 3)))")
        for name, value in (("mean", mean), ("std", std)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"normal(): argument '{name}' must be a number or a Tensor, "
                                f"not {type(value).__name__}")
        if not std >= 0.0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        shape = _shape((size,) if isinstance(size, int) else tuple(size), "normal")
        d = _dtype_or_default(dtype)
        if not d.is_floating_point:
            raise RuntimeError(f'"normal" is not defined for {d.name} tensors: it draws real '
                               "numbers, so dtype must be a floating-point dtype")
        target = _device(device)
        source = _source(target, generator, "normal")
        if _exact(source):  # PyTorch: empty(size).normal_(mean, std)
            n = int(np.prod(shape, dtype=np.int64))
            drawn = mt_normal(source, n, _draw_kind(d.numpy), mean, std).reshape(shape)
            return _finish(drawn.astype(d.numpy, copy=False), target, requires_grad)
        z = source.standard_normal(shape, dtype=np.float64)
        return _finish((mean + std * z).astype(d.numpy), target, requires_grad)
    if size is not None:
        raise TypeError("normal(): argument 'size' is only accepted with a number mean and "
                        "std; with a tensor mean or std the shape comes from the tensors")
    for name, value in (("mean", mean), ("std", std)):
        if isinstance(value, Tensor):
            if not value.dtype.is_floating_point:
                raise RuntimeError(f"normal expects a floating-point tensor for '{name}', "
                                   f"but got {value.dtype.name}")
        elif isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"normal(): argument '{name}' must be a number or a Tensor, not "
                            f"{type(value).__name__}")
    if len(tensors) == 2 and mean._device != std._device:
        raise RuntimeError(f"normal(): expected mean and std on the same device, but got "
                           f"mean on {mean._device} and std on {std._device}")
    ref = tensors[0]
    result_dtype = tensors[0].dtype if len(tensors) == 1 else \
        dtypes.promote_types(mean.dtype, std.dtype)
    xp = backend.xp_for_device(ref._device)
    mean_values = mean._data.astype(np.float64) if isinstance(mean, Tensor) else mean
    std_values = std._data.astype(np.float64) if isinstance(std, Tensor) else std
    if isinstance(std, Tensor):
        if std.numel() and not bool((std_values >= 0).all()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    try:
        shape = np.broadcast_shapes(*(t._data.shape for t in tensors))
    except ValueError:
        raise RuntimeError(f"normal(): mean of shape {list(mean.shape)} and std of shape "
                           f"{list(std.shape)} can't be broadcast together") from None
    source = _source(ref._device, generator, "normal")
    if _exact(source):
        # PyTorch: output.normal_(0, 1) then mul_(std) and add_(mean) in the output's
        # dtype (with a number std: normal_(0, std), then add_(mean))
        kind = np.dtype(result_dtype.numpy)
        n = int(np.prod(shape, dtype=np.int64))
        scale = 1.0 if isinstance(std, Tensor) else std
        z = mt_normal(source, n, _draw_kind(kind), 0.0, scale).reshape(shape).astype(kind)
        if isinstance(std, Tensor):
            z = z * std._data.astype(kind)
        sample = (z + (mean._data.astype(kind) if isinstance(mean, Tensor)
                       else kind.type(mean))).astype(kind)
    else:
        z = source.standard_normal(shape, dtype=np.float64)
        sample = xp.asarray(mean_values + std_values * z).astype(result_dtype.numpy)
    name = "NormalBackward3" if len(tensors) == 2 else (
        "NormalBackward1" if isinstance(mean, Tensor) else "NormalBackward2")
    return _sampled(name, *tensors, sample)


def _from_to(kwargs, from_, to, op: str):
    """PyTorch spells the first argument ``from``, a Python keyword: accept it through
    ``**{"from": value}`` as well as positionally or as ``from_``."""
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"{op}() got unexpected keyword arguments {sorted(kwargs)}")
    return from_, to


# The in-place fills are Tensor methods only, as in PyTorch.
for _fill in (uniform_, normal_, log_normal_, exponential_, cauchy_, geometric_, bernoulli_,
              random_):
    register_op(_fill.__name__, methods=(_fill.__name__,), internal=True)(_fill)
register_op("bernoulli", methods=("bernoulli",), torch=None, differentiable=False,
            samples=lambda make: [Sample((make((3, 4), low=0.0, high=1.0),))])(bernoulli)
register_op("multinomial", methods=("multinomial",), torch=None, differentiable=False,
            samples=lambda make: [Sample((make((2, 5), low=0.1, high=1.0), 3))])(multinomial)
register_op("poisson", torch=None, differentiable=False,
            samples=lambda make: [Sample((make((3, 4), low=0.5, high=4.0),))])(poisson)
register_op("normal", torch=None, differentiable=False,
            samples=lambda make: [Sample((make((3,)), make((3,), low=0.5, high=2.0)))])(normal)


def _sampled_samples(make):
    # A fixed draw: the node's output ignores its inputs, so the gradient (zero) is
    # checked by finite differences like any other op's.
    return [Sample(("BernoulliBackward2", make((3, 4), low=0.1, high=0.9),
                    np.ones((3, 4))), name="tensor p"),
            Sample(("NormalBackward3", make((2, 3)), make((3,), low=0.5, high=2.0),
                    np.zeros((2, 3))), name="broadcast")]


register_op("_sampled", samples=_sampled_samples, torch=None, gradgrad=False)(_sampled)


def binomial(count, prob, generator=None):
    """Samples from Binomial(count, prob) elementwise (``count`` and ``prob`` float
    tensors of one shape); the counts come back in ``count``'s dtype. On the CPU the draws
    are PyTorch's for the same seed.

    >>> g = ember.Generator().manual_seed(0)
    >>> ember.binomial(ember.tensor([10.0, 100.0]), ember.tensor([0.5, 0.2]), generator=g)
    tensor([ 7., 21.])
    """
    for name, value in (("count", count), ("prob", prob)):
        if not isinstance(value, Tensor):
            raise TypeError(f"binomial(): argument '{name}' must be a Tensor, not "
                            f"{type(value).__name__}")
        _require_float(value, "binomial")
    if tuple(count.shape) != tuple(prob.shape):
        raise RuntimeError(f"binomial(): count and prob must have the same shape, got "
                           f"{list(count.shape)} and {list(prob.shape)}")
    if count.device != prob.device:
        raise RuntimeError(f"binomial(): count is on {count.device}, prob on {prob.device}")
    source = _source(count._device, generator, "binomial")
    n = backend.move(count._data, count._device, backend.CPU).astype(np.float64)
    p = backend.move(prob._data, prob._device, backend.CPU).astype(np.float64)
    if _exact(source):
        draws = mt_binomial(source, np.ascontiguousarray(n), np.ascontiguousarray(p))
    else:  # a GPU generator: seed a host sampler from its stream
        seed = int(backend.move(source.integers(0, 2 ** 62, size=1), count._device,
                                backend.CPU)[0])
        draws = np.random.default_rng(seed).binomial(n.astype(np.int64), p).astype(np.float64)
    draws = backend.move(draws, backend.CPU, count._device)
    return _sampled("BinomialBackward0", count, prob, draws.astype(count._data.dtype))


NAMESPACES["ember"]["binomial"] = binomial
