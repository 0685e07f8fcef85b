"""Spatial transformers: ``affine_grid`` (a sampling grid from affine matrices) and
``grid_sample`` (an input read at a grid of normalized positions).

``grid_sample`` is composed from ember's ops: the positions are unnormalized, clipped or
reflected (the padding mode) and split into integer corners (on arrays) and interpolation
weights (Tensors of the grid); the input is gathered at the corners. So the gradient reaches
both the input (through the gather) and the grid (through the weights), and gradients of
gradients come from the same ops. PyTorch's conventions are kept: no gradient flows to the
grid where a position is clipped at the border, and ``nearest`` gives the grid none.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..tensor import Tensor
from ._util import ensure_tensor, xp_of
from .arithmetic import fmod
from .comparison import where
from .products import matmul
from .registry import Sample, register_op
from .scatter import gather
from .unary import abs as _abs

_NN = "nn.functional"
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")


# ----------------------------------------------------------------------------- affine_grid
def _base_axis(steps: int, align_corners: bool, like: Tensor):
    """The normalized positions of ``steps`` pixel centers (corners when aligned)."""
    xp = xp_of(like)
    if steps <= 1:
        return xp.zeros(max(steps, 0), dtype=like._data.dtype)
    axis = np.linspace(-1.0, 1.0, steps)
    if not align_corners:
        axis = axis * (steps - 1) / steps
    return xp.asarray(axis, dtype=like._data.dtype)


def _affine_samples(make):
    return [Sample((make((2, 2, 3)), (2, 3, 4, 5)), {"align_corners": False}, name="2-D"),
            Sample((make((1, 2, 3)), [1, 1, 3, 1]), {"align_corners": False}, name="2-D, unit"),
            Sample((make((2, 3, 4)), (2, 1, 2, 3, 4)), {"align_corners": True}, name="3-D")]


@register_op(namespace=_NN, samples=_affine_samples)
def affine_grid(theta, size, align_corners=None):
    """The sampling grid of ``grid_sample`` for a batch of affine maps: ``theta`` (N, 2, 3)
    with ``size`` (N, C, H, W) gives (N, H, W, 2), each point ``theta @ (x, y, 1)`` for the
    normalized output position (x, y); (N, 3, 4) with (N, C, D, H, W) gives (N, D, H, W, 3).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> identity = ember.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> F.affine_grid(identity, (1, 1, 1, 2), align_corners=False)
    tensor([[[[-0.5000,  0.0000],
              [ 0.5000,  0.0000]]]])
    """
    ensure_tensor(theta, "affine_grid", "theta")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) in (4, 5):
        n = len(size) - 2
        if theta.ndim != 3 or theta.shape[-2] != n or theta.shape[-1] != n + 1:
            raise ValueError(f"Expected a batch of {n}D affine matrices of shape Nx{n}x{n + 1} "
                             f"for size {size}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid(): expected theta's batch size {theta.shape[0]} to "
                           f"equal size[0] = {size[0]}")
    xp = xp_of(theta)
    # columns (x, y[, z], 1): x runs along the last spatial dim
    axes = [_base_axis(s, align_corners, theta) for s in reversed(spatial)]
    mesh = xp.meshgrid(*axes[::-1], indexing="ij")[::-1]
    ones = xp.ones(tuple(spatial), dtype=theta._data.dtype)
    base = xp.stack(list(mesh) + [ones], axis=-1).reshape(1, -1, n + 1)
    grid = matmul(Tensor._make(base, theta._device), theta.transpose(1, 2))
    return grid.reshape(size[0], *spatial, n)


# ----------------------------------------------------------------------------- grid_sample
def _unnormalize(coord, size: int, align_corners: bool):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(x, size: int):
    """Clamp into [0, size - 1]; no gradient at or beyond the edges, and NaN goes to 0, as in
    PyTorch."""
    top = size - 1
    inside = (x > 0) & (x < top)
    xp = xp_of(x)
    edge = xp.clip(xp.where(xp.isnan(x._data), 0, x._data), 0, top)
    return where(inside, x, Tensor._make(edge.astype(x._data.dtype, copy=False), x._device))


def _reflect(x, twice_low: int, twice_high: int):
    """Fold x into [twice_low / 2, twice_high / 2] by reflecting at the ends."""
    if twice_low == twice_high:
        return x * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = _abs(x - low)
    extra = fmod(distance, span)
    flips = xp_of(x).floor(distance._data / span)
    even = Tensor._make(flips % 2 == 0, x._device)
    return where(even, extra + low, span - extra + low)


def _padded(x, size: int, padding_mode: str, align_corners: bool):
    if padding_mode == "border":
        return _clip(x, size)
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        return _clip(x, size)
    return x


def _padded_array(xp, x, size: int, padding_mode: str, align_corners: bool):
    """``_padded`` on the integer tap positions of bicubic (arrays, no gradient)."""
    if padding_mode == "zeros":
        return x
    if padding_mode == "reflection":
        twice_low, twice_high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if twice_low == twice_high:
            x = xp.zeros_like(x)
        else:
            low, span = twice_low / 2, (twice_high - twice_low) / 2
            distance = xp.abs(x - low)
            extra, flips = xp.fmod(distance, span), xp.floor(distance / span)
            x = xp.where(flips % 2 == 0, extra + low, span - extra + low)
    return xp.clip(x, 0, size - 1)


def _integer(xp, x):
    """Positions as int64; non-finite ones go far outside (PyTorch's -100)."""
    x = xp.where(xp.isfinite(x), x, -100.0)
    return xp.clip(x, -100.0, 2.0 ** 40).astype(np.int64)


class _Reader:
    """Reads the input (N, C, *sizes) at integer positions (one (N, P) array per spatial
    dim); positions outside read 0."""

    def __init__(self, input):
        self.xp = xp_of(input)
        self.sizes = tuple(input.shape[2:])
        n, c = input.shape[0], input.shape[1]
        self.flat = input.reshape(n, c, math.prod(self.sizes))  # sizes: n may be 0
        self.channels = c
        self.input = input

    def __call__(self, positions):
        xp = self.xp
        inside = None
        linear = 0
        for p, size in zip(positions, self.sizes):
            ok = (p >= 0) & (p < size)
            inside = ok if inside is None else inside & ok
            linear = linear * size + xp.clip(p, 0, size - 1)
        n, count = linear.shape
        index = xp.broadcast_to(linear[:, None, :], (n, self.channels, count))
        values = gather(self.flat, 2, Tensor._make(xp.ascontiguousarray(index),
                                                   self.input._device))
        if bool(inside.all()):
            return values
        mask = Tensor._make(inside[:, None, :].astype(self.input._data.dtype),
                            self.input._device)
        return values * mask


def _cubic_weights(t):
    """The four cubic-convolution weights (A = -0.75) of taps -1, 0, 1, 2 at offset t."""
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _grid_samples(make):
    def grid(shape, spread=1.3):
        return make(shape, -spread, spread)

    out = []
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            for align in (False, True):
                if mode == "nearest" and align:
                    continue
                out.append(Sample((make((2, 2, 4, 5)), grid((2, 3, 2, 2))),
                                  {"mode": mode, "padding_mode": padding,
                                   "align_corners": align}, name=f"2-D {mode} {padding} {align}"))
    for mode in ("bilinear", "nearest"):
        for padding in ("zeros", "border", "reflection"):
            out.append(Sample((make((1, 2, 3, 4, 3)), grid((1, 2, 2, 2, 3))),
                              {"mode": mode, "padding_mode": padding, "align_corners": False},
                              name=f"3-D {mode} {padding}"))
    return out


@register_op(namespace=_NN, samples=_grid_samples, atol=1e-6, rtol=1e-5)
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Read ``input`` (N, C, H, W) at the positions ``grid`` (N, H_out, W_out, 2) gives,
    normalized to [-1, 1] (x along W, y along H); 5-D input takes a (N, D, H, W, 3) grid.
    ``mode``: 'bilinear' | 'nearest' | 'bicubic' (4-D only); ``padding_mode``: what
    positions outside read, 'zeros' | 'border' (the nearest edge) | 'reflection';
    ``align_corners``: whether -1 and 1 are the centers of the corner pixels (True) or
    their outer edges (False, the default). Costs O(N C P) for P grid points (16 taps per
    point for bicubic).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> image = ember.arange(4.0).reshape(1, 1, 2, 2)
    >>> centre = ember.zeros(1, 1, 1, 2)
    >>> F.grid_sample(image, centre, align_corners=False)
    tensor([[[[1.5000]]]])
    """
    ensure_tensor(input, "grid_sample", "input")
    ensure_tensor(grid, "grid_sample", "grid")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if input.device != grid.device:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be on same device, "
                           f"but input is on {input.device} and grid is on {grid.device}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but "
                           f"input has {input.dtype} and grid has {grid.dtype}")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same "
                           f"number of dimensions, but got input with sizes "
                           f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
    n = input.ndim - 2
    if grid.shape[-1] != n:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {n} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if mode == "bicubic" and n != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input.")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"grid_sampler(): expected a floating-point input, got "
                           f"{input.dtype}")
    if any(s == 0 for s in input.shape[2:]):
        raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                           f"dimensions, but input has sizes {list(input.shape)}")
    batch, out_shape = grid.shape[0], tuple(grid.shape[1:-1])
    points = grid.reshape(batch, math.prod(out_shape), n)
    sizes = tuple(input.shape[2:])
    # spatial dim d (D, H, W order) reads grid component n - 1 - d (x is along W)
    coords = [points[:, :, n - 1 - d] for d in range(n)]
    read = _Reader(input)
    xp = read.xp
    if mode == "bicubic":
        source = [_unnormalize(c, s, align_corners) for c, s in zip(coords, sizes)]
        low = [xp.floor(s._data) for s in source]
        weights = [_cubic_weights((s - Tensor._make(lo, s._device))[:, None, :])
                   for s, lo in zip(source, low)]
        out = None
        for i in range(4):
            row = None
            for j in range(4):
                taps = [_integer(xp, _padded_array(xp, lo + k - 1, s, padding_mode,
                                                   align_corners))
                        for lo, k, s in zip(low, (i, j), sizes)]
                term = read(taps) * weights[1][j]
                row = term if row is None else row + term
            term = row * weights[0][i]
            out = term if out is None else out + term
    else:
        source = [_padded(_unnormalize(c, s, align_corners), s, padding_mode, align_corners)
                  for c, s in zip(coords, sizes)]
        if mode == "nearest":
            out = read([_integer(xp, xp.rint(s._data)) for s in source])
        else:
            low = [xp.floor(s._data) for s in source]
            frac = [(s - Tensor._make(lo, s._device))[:, None, :] for s, lo in zip(source, low)]
            base = [_integer(xp, lo) for lo in low]
            out = None
            for corner in range(2 ** n):
                bits = [(corner >> (n - 1 - d)) & 1 for d in range(n)]
                weight = None
                for d, bit in enumerate(bits):
                    w = frac[d] if bit else 1 - frac[d]
                    weight = w if weight is None else weight * w
                term = read([b + bit for b, bit in zip(base, bits)]) * weight
                out = term if out is None else out + term
    return out.reshape(batch, input.shape[1], *out_shape)

