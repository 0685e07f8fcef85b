"""Convolutions (conv1d/2d/3d, conv_transpose1d/2d) and unfold/fold, vectorized with
strided windows and matrix products.

Three array kernels share one geometry (``_Geometry``: the spatial size of the
convolution's input, kernel, stride, padding on each side, dilation, groups, output size):

- ``_conv``: with stride 1, one group and 32 or more input channels, one matrix product
  per kernel offset over the zero-padded, channels-last input, each reading a shifted
  contiguous view (no im2col copy; ``_conv_shifted``); otherwise im2col (one
  strided-window view, one copy) and one matmul over the whole batch (one GEMM per group),
- ``_conv_transpose``: the adjoint of ``_conv`` in its input: one matmul, then col2im
  (a loop over the handful of kernel offsets, each one strided add),
- ``_conv_weight``: the adjoint of ``_conv`` in its weight: one product per kernel offset
  over the same shifted views, or im2col and one matmul.

The three Functions built on them are each other's backward, so gradients of any order
are convolutions again (on arrays, the backward calls the kernels themselves; under
``create_graph`` it calls the Functions, so the result is differentiable again):

    y = conv(x, w)            dx = conv_transpose(dy, w)    dw = conv_weight(x, dy)
    x = conv_transpose(y, w)  dy = conv(dx, w)              dw = conv_weight(dx, y)
    w = conv_weight(x, y)     dx = conv_transpose(y, dw)    dy = conv(x, dw)

Cost of one call, for a batch B, C input and O output channels, groups g, kernel volume
K and P output positions: time O(B * P * C * K * O / g) (one GEMM), extra memory
O(B * P * C * K) for the im2col matrix.
"""
from __future__ import annotations

import itertools
import math
from typing import NamedTuple

from .. import backend
from ..autograd.function import Function
from ..backend import scratch
from ._util import ensure_tensor
from .registry import Sample, register_op

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "unfold", "fold"]


class _Geometry(NamedTuple):
    """Where the windows of a convolution lie. ``size`` is the spatial size of the
    convolution's input (the output of the transposed convolution); ``out`` the number of
    windows along each dim; ``pad_hi`` may exceed what the windows reach."""

    size: tuple
    kernel: tuple
    stride: tuple
    pad_lo: tuple
    pad_hi: tuple
    dilation: tuple
    groups: int
    out: tuple


# ----------------------------------------------------------------------------- array kernels
def _pad(xp, x, lo, hi, value=0.0):
    """``x`` with its trailing ``len(lo)`` dims padded by ``value`` (the same array when no
    padding is needed)."""
    if not any(lo) and not any(hi):
        return x
    n = len(lo)
    lead = x.shape[:x.ndim - n]
    shape = lead + tuple(s + a + b for s, a, b in zip(x.shape[x.ndim - n:], lo, hi))
    out = xp.full(shape, value, dtype=x.dtype)
    inner = tuple(slice(a, a + s) for a, s in zip(lo, x.shape[x.ndim - n:]))
    out[(Ellipsis,) + inner] = x
    return out


def _windows(xp, padded, kernel, stride, dilation, out, lead_shape=None, lead_strides=None):
    """A strided view of ``padded`` (lead dims, then spatial dims) with shape
    lead + kernel + out: element [..., k, o] is padded[..., o * stride + k * dilation]."""
    n = len(kernel)
    strides = padded.strides[padded.ndim - n:]
    if lead_shape is None:
        lead_shape = padded.shape[:padded.ndim - n]
        lead_strides = padded.strides[:padded.ndim - n]
    shape = tuple(lead_shape) + tuple(kernel) + tuple(out)
    view_strides = (tuple(lead_strides) + tuple(s * d for s, d in zip(strides, dilation))
                    + tuple(s * st for s, st in zip(strides, stride)))
    return xp.lib.stride_tricks.as_strided(padded, shape, view_strides)


def _im2col(xp, x, geo: _Geometry, batch_last: bool = False):
    """The im2col matrix of x (B, C, *size): (B, g, C/g * K, P), or with ``batch_last``
    (g, C/g * K, B * P)."""
    batch, channels = x.shape[:2]
    g = geo.groups
    cg = channels // g
    padded = _pad(xp, x, geo.pad_lo, geo.pad_hi)
    sb, sc = padded.strides[:2]
    kernel_volume = math.prod(geo.kernel)
    positions = math.prod(geo.out)
    if batch_last:
        # (g, Cg, *k, B, *out): the batch sits next to the output positions
        spatial = padded.strides[2:]
        shape = (g, cg) + geo.kernel + (batch,) + geo.out
        strides = ((cg * sc, sc) + tuple(s * d for s, d in zip(spatial, geo.dilation)) + (sb,)
                   + tuple(s * st for s, st in zip(spatial, geo.stride)))
        view = xp.lib.stride_tricks.as_strided(padded, shape, strides)
        return view.reshape(g, cg * kernel_volume, batch * positions)
    view = _windows(xp, padded, geo.kernel, geo.stride, geo.dilation, geo.out,
                    (batch, g, cg), (sb, cg * sc, sc))
    return view.reshape(batch, g, cg * kernel_volume, positions)


def _non_overlapping(geo: _Geometry) -> bool:
    """True when no padded element lies in two windows (stride >= the window's span)."""
    return all(st >= d * (k - 1) + 1 for st, d, k in zip(geo.stride, geo.dilation, geo.kernel))


def _col2im(xp, col, lead: tuple, geo: _Geometry):
    """The adjoint of im2col: ``col`` (lead..., C * K, P), or already (lead..., *k, *out),
    summed back into an array (lead..., *size). One strided add per kernel offset, or,
    when the windows don't overlap, one assignment through a strided-window view."""
    padded_size = tuple(s + a + b for s, a, b in zip(geo.size, geo.pad_lo, geo.pad_hi))
    padded = xp.zeros(tuple(lead) + padded_size, dtype=col.dtype)
    blocks = col.reshape(tuple(lead) + geo.kernel + geo.out)
    depth = len(lead)
    if _non_overlapping(geo):
        # every padded element is written at most once: adding is assigning
        _windows(xp, padded, geo.kernel, geo.stride, geo.dilation, geo.out)[...] = blocks
    else:
        for offset in itertools.product(*(range(k) for k in geo.kernel)):
            target = tuple(slice(o * d, o * d + st * (m - 1) + 1, st)
                           for o, d, st, m in zip(offset, geo.dilation, geo.stride, geo.out))
            padded[(Ellipsis,) + target] += blocks[(slice(None),) * depth + offset]
    if not any(geo.pad_lo) and not any(geo.pad_hi):
        return padded
    inner = tuple(slice(a, a + s) for a, s in zip(geo.pad_lo, geo.size))
    return padded[(Ellipsis,) + inner]


# Below this many input channels the per-offset products are too thin for BLAS to run
# well (one input channel makes them outer products), and im2col's copy is small.
SHIFTED_MIN_CHANNELS = 32


def _shifted(geo: _Geometry, channels: int) -> bool:
    """True when the convolution runs as shifted products (stride 1, one group, enough
    input channels)."""
    return (geo.groups == 1 and channels >= SHIFTED_MIN_CHANNELS
            and all(st == 1 for st in geo.stride))


class _Rows(NamedTuple):
    """Where a shifted convolution's input sits in its channels-last rows. Each sample is
    a block of ``block`` (the spatial size plus a shared padding q per dim, q = the
    larger of the two paddings: the padding after one line along a dim is also the
    padding before the next, since a window's read past a line's end or start lands in
    a zero tail); the input starts each block, ``lead`` zero rows come first, and row
    o of the output (o < ``computed``, block positions, the excess dropped) is
    sum_k rows[o + shifts[k]] @ w_k."""

    block: tuple
    lead: int
    shifts: list
    computed: int
    total: int


def _rows(geo: _Geometry, batch: int) -> _Rows:
    reach = [d * (k - 1) for d, k in zip(geo.dilation, geo.kernel)]
    # a block must also hold a whole output line (padding beyond the kernel's reach)
    block = tuple(s + max(lo, hi, lo + hi - r)
                  for s, lo, hi, r in zip(geo.size, geo.pad_lo, geo.pad_hi, reach))
    place = [math.prod(block[d + 1:]) for d in range(len(block))]
    lead = sum(lo * p for lo, p in zip(geo.pad_lo, place))
    shifts = [sum(o * dl * p for o, dl, p in zip(offset, geo.dilation, place))
              for offset in itertools.product(*(range(k) for k in geo.kernel))]
    computed = batch * math.prod(block)
    return _Rows(block, lead, shifts, computed, max(computed + shifts[-1], lead + computed))


def _place_rows(xp, x, rows: _Rows, start: int, size: tuple, name=None):
    """(rows.total, C) zeros with x (B, C, *size) channels-last at the first ``size``
    positions of each block, the first block at row ``start``. With ``name``, a reused
    buffer (for a temporary)."""
    channels = x.shape[1]
    shape = (rows.total, channels)
    if name is None:
        flat = xp.zeros(shape, dtype=x.dtype)
    else:
        flat = scratch.empty(xp, name, shape, x.dtype)
        flat.fill(0)
    body = flat[start:start + rows.computed].reshape((x.shape[0],) + rows.block + (channels,))
    body[(slice(None),) + tuple(slice(0, s) for s in size) + (slice(None),)] = \
        xp.moveaxis(x, 1, -1)
    return flat


def _channels_last(xp, x, geo: _Geometry):
    """x (B, C, *size) zero-padded and channels-last, as rows (see ``_Rows``)."""
    rows = _rows(geo, x.shape[0])
    return _place_rows(xp, x, rows, rows.lead, geo.size)


def _taps(xp, w):
    """w (O, C, *k) as one (C, O) matrix per kernel offset: (K, C, O)."""
    return xp.ascontiguousarray(w.reshape(w.shape[0], w.shape[1], -1).transpose(2, 1, 0))


def _with_bias(xp, y, bias, n_spatial: int):
    """A fresh C-contiguous copy of ``y`` (B, O, *spatial, possibly a strided view), with
    ``bias`` (O,) added in the same pass when given."""
    out = xp.empty(y.shape, dtype=y.dtype)
    if bias is None:
        out[...] = y
    else:
        xp.add(y, bias.reshape((-1,) + (1,) * n_spatial), out=out)
    return out


def _shifted_products(xp, flat, taps, geo: _Geometry, batch: int, bias=None):
    """y (B, O, *out) from channels-last rows ``flat`` laid out by ``_rows(geo, batch)``:
    output row o is sum_k flat[o + shift_k] @ taps[k], each product reading a contiguous
    shifted view, so no im2col copy is made. The rows of each block past the output's
    size are computed and dropped."""
    out_channels = taps.shape[2]
    layout = _rows(geo, batch)
    shifts, n = layout.shifts, layout.computed
    dtype = xp.result_type(flat, taps)
    # both temporaries stay inside: the result is a fresh NCHW copy
    y = scratch.empty(xp, "conv rows", (n, out_channels), dtype)
    xp.matmul(flat[shifts[0]:shifts[0] + n], taps[0], out=y)
    if len(shifts) > 1:
        part = scratch.empty(xp, "conv part", (n, out_channels), dtype)
        for k in range(1, len(shifts)):
            xp.matmul(flat[shifts[k]:shifts[k] + n], taps[k], out=part)
            y += part
    y = y.reshape((batch,) + layout.block + (out_channels,))
    y = y[(slice(None),) + tuple(slice(0, o) for o in geo.out)]
    return _with_bias(xp, xp.moveaxis(y, -1, 1), bias, len(geo.out))


def _conv_shifted(xp, x, w, geo: _Geometry, keep: list | None = None, bias=None):
    """Stride-1 convolution as one matrix product per kernel offset over the zero-padded,
    channels-last rows of x (``_shifted_products``). With ``keep``, the padded rows are
    kept for dw."""
    flat = _channels_last(xp, x, geo)                          # (rows, C)
    if keep is not None:
        keep.append(flat)
    return _shifted_products(xp, flat, _taps(xp, w), geo, x.shape[0], bias)


def _shares_grid(geo: _Geometry, channels: int, out_channels: int) -> bool:
    """True when both gradients of a shifted convolution can read one padded grid of dy:
    the output keeps the input's size (padding = the kernel's reach, 'same'), so dx's
    convolution pads dy to the forward's grid, and dy has enough channels for dx to run
    as shifted products too."""
    return (_shifted(geo, channels) and out_channels >= SHIFTED_MIN_CHANNELS
            and all(lo + hi == d * (k - 1) for lo, hi, d, k in
                    zip(geo.pad_lo, geo.pad_hi, geo.dilation, geo.kernel)))


def _conv_grads_shifted(xp, dy, w, geo: _Geometry, flat):
    """dx and dw of a 'same' shifted convolution from one channels-last copy of dy, laid
    out as the input of dx's convolution (dy padded by the kernel's reach less x's
    padding; ``_shares_grid``), whose blocks and shifts are the forward's: dx is the
    shifted convolution of those rows with the flipped, channel-swapped kernel, and
    dw_k = flat[shift_k:][:n]^T @ rows[lead:][:n], dy's output o sitting at row lead + o
    (the other rows are zero)."""
    batch, out_channels = dy.shape[:2]
    before = tuple(d * (k - 1) - lo for d, k, lo in zip(geo.dilation, geo.kernel, geo.pad_lo))
    after = tuple(d * (k - 1) - hi for d, k, hi in zip(geo.dilation, geo.kernel, geo.pad_hi))
    transposed = _Geometry(geo.out, geo.kernel, geo.stride, before, after, geo.dilation, 1,
                           geo.size)
    layout = _rows(transposed, batch)          # the forward's blocks and shifts ('same')
    grid = _place_rows(xp, dy, layout, layout.lead, geo.out, "conv grad grid")
    dx = _shifted_products(xp, grid, _taps(xp, _flipped_transposed(xp, w, 1)), transposed,
                           batch)
    shifts, n, start = layout.shifts, layout.computed, layout.lead
    taps = xp.empty((len(shifts), flat.shape[1], out_channels),
                    dtype=xp.result_type(flat, grid))
    for k, shift in enumerate(shifts):
        xp.matmul(flat[shift:shift + n].T, grid[start:start + n], out=taps[k])
    return dx, xp.ascontiguousarray(taps.transpose(2, 1, 0)).reshape(w.shape)


def _conv_weight_shifted(xp, x, y, geo: _Geometry, kernel_shape, flat=None):
    """The weight gradient of ``_conv_shifted``: dw_k = x_rows[shift_k:][:n]^T @ dy_rows,
    dy placed at the output rows of the forward's layout (zeros where no output is)."""
    if flat is None:
        flat = _channels_last(xp, x, geo)
    layout = _rows(geo, y.shape[0])
    # dy at the output rows (block positions), zeros elsewhere
    grid = _place_rows(xp, y, layout, 0, geo.out, "conv grad grid")
    shifts, n = layout.shifts, layout.computed
    taps = xp.empty((len(shifts), flat.shape[1], y.shape[1]),
                    dtype=xp.result_type(flat, grid))
    for k, shift in enumerate(shifts):
        xp.matmul(flat[shift:shift + n].T, grid[:n], out=taps[k])
    return xp.ascontiguousarray(taps.transpose(2, 1, 0)).reshape(kernel_shape)


def _conv(xp, x, w, geo: _Geometry, keep: list | None = None, bias=None):
    """y[b, o, p] = sum_{c, k} w[o, c, k] * x_padded[b, group(o) c, p * stride + k * dil].

    One GEMM per group over the whole batch, (Og, CgK) @ (CgK, B P): a single large BLAS
    call stays efficient where many small ones (one per sample) stall on thread start-up.
    With ``keep`` (a list), the im2col matrix is appended to it for the weight gradient.
    ``bias`` (O,) is added in the pass that lays the result out as (B, O, *out).
    """
    if _shifted(geo, x.shape[1]):
        return _conv_shifted(xp, x, w, geo, keep, bias)
    batch = x.shape[0]
    g = geo.groups
    out_channels = w.shape[0]
    positions = math.prod(geo.out)
    col = _im2col(xp, x, geo, batch_last=True)                         # (g, CgK, B P)
    if keep is not None:
        keep.append(col)
    weight = w.reshape(g, out_channels // g, math.prod(w.shape[1:]))   # (g, Og, CgK)
    if col.dtype.kind == "V":  # bfloat16: NumPy multiplies it in float32
        y = backend.matmul(xp, weight, col)                            # (g, Og, B P)
    else:  # a temporary: the result is a fresh NCHW copy
        y = xp.matmul(weight, col, out=scratch.empty(
            xp, "conv gemm", (g, out_channels // g, col.shape[2]), col.dtype))
    y = y.reshape(out_channels, batch, positions).transpose(1, 0, 2)
    return _with_bias(xp, y, bias, 1).reshape((batch, out_channels) + geo.out)


def _flipped_transposed(xp, w, groups: int):
    """(O, C/g, *k) -> (C, O/g, *k) with the kernel reversed: the weight of the convolution
    that equals a stride-1 transposed convolution."""
    out_channels, cg = w.shape[:2]
    kernel = w.shape[2:]
    flip = (slice(None),) * 3 + (slice(None, None, -1),) * len(kernel)
    grouped = w.reshape((groups, out_channels // groups, cg) + kernel)[flip]
    swapped = grouped.transpose((0, 2, 1) + tuple(range(3, 3 + len(kernel))))
    return xp.ascontiguousarray(swapped).reshape((groups * cg, out_channels // groups) + kernel)


def _conv_transpose(xp, y, w, geo: _Geometry, bias=None):
    """The adjoint of ``_conv`` in x: x[b, c, :] = col2im(sum_o w[o, c, k] * y[b, o, p]).
    With stride 1 (and padding within the kernel's reach) it is the convolution of y with
    the flipped, channel-swapped kernel, which skips the col2im pass."""
    reach = tuple(d * (k - 1) for d, k in zip(geo.dilation, geo.kernel))
    # padding of y so that the flipped kernel's windows give x exactly: before, the
    # kernel's reach less x's padding; after, whatever x extends past the last window
    before = tuple(r - lo for r, lo in zip(reach, geo.pad_lo))
    after = tuple(s + lo - o for s, lo, o in zip(geo.size, geo.pad_lo, geo.out))
    if all(st == 1 for st in geo.stride) and min(before + after) >= 0:
        return _conv(xp, y, _flipped_transposed(xp, w, geo.groups), _Geometry(
            geo.out, geo.kernel, geo.stride, before, after, geo.dilation, geo.groups,
            geo.size), bias=bias)
    batch = y.shape[0]
    g = geo.groups
    out_channels, cg = w.shape[:2]
    positions = math.prod(geo.out)
    n = len(geo.kernel)
    weight = w.reshape(g, out_channels // g, math.prod(w.shape[1:]))   # (g, Og, CgK)
    grads = y.reshape(batch, g, out_channels // g, positions).transpose(1, 2, 0, 3)
    grads = grads.reshape(g, out_channels // g, batch * positions)     # (g, Og, B P)
    col = backend.matmul(xp, weight.transpose(0, 2, 1), grads)                  # (g, CgK, B P)
    # a view (B, C, *k, *out) of col for col2im
    blocks = col.reshape((g, cg) + geo.kernel + (batch,) + geo.out)
    order = ((2 + n, 0, 1) + tuple(range(2, 2 + n)) + tuple(range(3 + n, 3 + 2 * n)))
    blocks = blocks.transpose(order).reshape((batch, g * cg) + geo.kernel + geo.out)
    x = _col2im(xp, blocks, (batch, g * cg), geo)
    if bias is not None:
        x += bias.reshape(_bias_shape(n))
    return x


def _conv_weight(xp, x, y, geo: _Geometry, kernel_shape, col=None):
    """The adjoint of ``_conv`` in w: w[o, c, k] = sum_{b, p} y[b, o, p] * x_padded[...].
    ``col`` is what the forward kept of x (its im2col matrix, or its padded rows)."""
    if _shifted(geo, x.shape[1]):
        return _conv_weight_shifted(xp, x, y, geo, kernel_shape, col)
    batch = x.shape[0]
    g = geo.groups
    out_channels = y.shape[1]
    if col is None:
        col = _im2col(xp, x, geo, batch_last=True)             # (g, CgK, B P)
    positions = math.prod(geo.out)
    grads = scratch.empty(xp, "conv grad rows", (g, out_channels // g, batch, positions),
                           y.dtype)
    grads[...] = y.reshape(batch, g, out_channels // g, positions).transpose(1, 2, 0, 3)
    grads = grads.reshape(g, out_channels // g, batch * positions)     # (g, Og, B P)
    # (CgK, B P) @ (B P, Og): the long B P axis is the contraction of one GEMM per group
    w = backend.matmul(xp, col, grads.transpose(0, 2, 1))                       # (g, CgK, Og)
    return w.transpose(0, 2, 1).reshape(kernel_shape)


def _bias_shape(n_spatial: int):
    return (1, -1) + (1,) * n_spatial


# ----------------------------------------------------------------------------- Functions
# A backward computes with the kernels when it runs on arrays, and with the Functions (whose
# forwards are those kernels) when its own graph is recorded.
def _conv_of(m, x, w, geo):
    return _conv(m.xp, x, w, geo) if m.arrays else Convolution.apply(x, w, None, geo)


def _conv_transpose_of(m, y, w, geo):
    return (_conv_transpose(m.xp, y, w, geo) if m.arrays
            else ConvolutionTranspose.apply(y, w, None, geo))


def _conv_weight_of(m, x, y, geo, kernel_shape, col=None):
    return (_conv_weight(m.xp, x, y, geo, kernel_shape, col) if m.arrays
            else ConvolutionWeight.apply(x, y, geo, kernel_shape, col))


def _bias_grad(m, grad):
    return m.sum(grad, [0] + list(range(2, grad.ndim)))


class Convolution(Function):
    """conv(x, w) + b over a ``_Geometry``; backward: conv_transpose and conv_weight."""

    array_backward = True
    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, w, b, geo):
        ctx.save_for_backward(x, w)
        ctx.geo = geo
        # Keep the im2col matrix for the weight gradient: memory for one less pass over x.
        keep = [] if ctx._recording and ctx.needs_input_grad[1] else None
        y = _conv(ctx.xp, x, w, geo, keep, b)
        ctx.col = keep[0] if keep else None
        return y

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, w = ctx.saved_tensors
        geo = ctx.geo
        need_x, need_w, need_b, _ = ctx.needs_input_grad
        col, ctx.col = ctx.col, None  # used once (a second backward recomputes it)
        if m.arrays and need_x and need_w and _shares_grid(geo, x.shape[1], w.shape[0]):
            if col is None:
                col = _channels_last(m.xp, x, geo)
            grad_x, grad_w = _conv_grads_shifted(m.xp, grad, w, geo, col)
        else:
            grad_x = _conv_transpose_of(m, grad, w, geo) if need_x else None
            grad_w = _conv_weight_of(m, x, grad, geo, tuple(w.shape), col) if need_w else None
        grad_b = _bias_grad(m, grad) if need_b else None
        return grad_x, grad_w, grad_b, None


class ConvolutionTranspose(Function):
    """conv_transpose(y, w) + b: the adjoint of Convolution in its input."""

    array_backward = True
    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, y, w, b, geo):
        ctx.save_for_backward(y, w)
        ctx.geo = geo
        return _conv_transpose(ctx.xp, y, w, geo, b)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        y, w = ctx.saved_tensors
        geo = ctx.geo
        need_y, need_w, need_b, _ = ctx.needs_input_grad
        grad_y = _conv_of(m, grad, w, geo) if need_y else None
        grad_w = _conv_weight_of(m, grad, y, geo, tuple(w.shape)) if need_w else None
        grad_b = _bias_grad(m, grad) if need_b else None
        return grad_y, grad_w, grad_b, None


class ConvolutionWeight(Function):
    """The weight gradient of a convolution, as a function of (x, dy): bilinear, with
    conv and conv_transpose as its backward."""

    array_backward = True
    node_name = "ConvolutionBackwardBackward0"

    @staticmethod
    def forward(ctx, x, y, geo, kernel_shape, col=None):
        ctx.save_for_backward(x, y)
        ctx.geo = geo
        return _conv_weight(ctx.xp, x, y, geo, kernel_shape, col)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        x, y = ctx.saved_tensors
        geo = ctx.geo
        need_x, need_y = ctx.needs_input_grad[:2]
        grad_x = _conv_transpose_of(m, y, grad, geo) if need_x else None
        grad_y = _conv_of(m, x, grad, geo) if need_y else None
        return grad_x, grad_y, None, None, None


# ----------------------------------------------------------------------------- arguments
def _tuple(value, n: int, op: str, arg: str) -> tuple:
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            value = tuple(value) * n
        if len(value) != n:
            raise RuntimeError(f"{op}(): expected {arg} to be a single integer value or a list "
                               f"of {n} values to match the convolution dimensions, but got "
                               f"{arg}={list(value)}")
        out = tuple(value)
    else:
        out = (value,) * n
    for v in out:
        if isinstance(v, bool) or not isinstance(v, int) and not hasattr(v, "__index__"):
            raise TypeError(f"{op}(): argument '{arg}' must be a tuple of ints, but found "
                            f"{type(v).__name__}")
    return tuple(int(v) for v in out)


def _sizes(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _check_float(input, weight, bias, op):
    if input._data.dtype.kind not in "fV":
        raise RuntimeError(f"{op}(): expected a floating-point input, but got "
                           f"{input.dtype.name} (convert it with .float())")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"{op}(): Input type ({input.dtype.name}) and weight type "
                           f"({weight.dtype.name}) should be the same")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"{op}(): Input type ({input.dtype.name}) and bias type "
                           f"({bias.dtype.name}) should be the same")


def _batched(input, n: int, op: str):
    """(input with a batch dim, whether one was added); PyTorch's error otherwise."""
    ndim = input._data.ndim
    if ndim == n + 1:
        return input.unsqueeze(0), True
    if ndim == n + 2:
        return input, False
    raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {op}, "
                       f"but got input of size: {_sizes(input.shape)}")


def _check_weight(weight, bias, n, op, transposed, groups):
    ensure_tensor(weight, op, "weight")
    if weight._data.ndim != n + 2:
        raise RuntimeError(f"{op}(): weight should have {n + 2} dimensions "
                           f"(out_channels, in_channels / groups, *kernel), but got weight of "
                           f"size {_sizes(weight.shape)}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise RuntimeError(f"{op}(): non-positive groups is not supported (got groups="
                           f"{groups})")
    if 0 in weight.shape[2:]:
        raise RuntimeError(f"{op}(): kernel size should be greater than zero, but got weight "
                           f"of size {_sizes(weight.shape)}")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size {_sizes(weight.shape)} "
                           "instead")
    if bias is not None:
        ensure_tensor(bias, op, "bias")
        expected = weight.shape[1] * groups if transposed else weight.shape[0]
        if bias._data.ndim != 1 or bias.shape[0] != expected:
            raise RuntimeError(f"Given weight of size {_sizes(weight.shape)}, expected bias to "
                               f"be 1-dimensional with {expected} elements, but got bias of "
                               f"size {_sizes(bias.shape)} instead")


def _check_positive(values, what, op):
    if any(v <= 0 for v in values):
        raise RuntimeError(f"{op}(): non-positive {what} is not supported (got {what}="
                           f"{list(values)})")


def _convnd(n, op, input, weight, bias, stride, padding, dilation, groups):
    ensure_tensor(input, op)
    _check_weight(weight, bias, n, op, False, groups)
    _check_float(input, weight, bias, op)
    x, added = _batched(input, n, op)
    stride = _tuple(stride, n, op, "stride")
    dilation = _tuple(dilation, n, op, "dilation")
    _check_positive(stride, "stride", op)
    _check_positive(dilation, "dilation", op)
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            lo = hi = (0,) * n
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(f"{op}(): padding='same' is not supported for strided "
                                 "convolutions")
            total = tuple(d * (k - 1) for d, k in zip(dilation, kernel))
            lo = tuple(t // 2 for t in total)
            hi = tuple(t - t // 2 for t in total)
        else:
            raise ValueError(f"{op}(): Invalid padding string '{padding}', should be one of "
                             "['valid', 'same']")
    else:
        lo = hi = _tuple(padding, n, op, "padding")
        if any(p < 0 for p in lo):
            raise RuntimeError(f"{op}(): negative padding is not supported (got padding="
                               f"{list(lo)})")
    channels = x.shape[1]
    if channels != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_sizes(weight.shape)}, "
                           f"expected input{_sizes(x.shape)} to have "
                           f"{weight.shape[1] * groups} channels, but got {channels} channels "
                           "instead")
    size = tuple(x.shape[2:])
    padded = tuple(s + a + b for s, a, b in zip(size, lo, hi))
    reach = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel))
    if any(p < r for p, r in zip(padded, reach)):
        raise RuntimeError(f"{op}(): Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, reach))}). Kernel size can't be greater "
                           "than actual input size")
    out = tuple((p - r) // s + 1 for p, r, s in zip(padded, reach, stride))
    geo = _Geometry(size, kernel, stride, lo, hi, dilation, groups, out)
    y = Convolution.apply(x, weight, bias, geo)
    return y.squeeze(0) if added else y


def _conv_transposend(n, op, input, weight, bias, stride, padding, output_padding, groups,
                      dilation):
    ensure_tensor(input, op)
    _check_weight(weight, bias, n, op, True, groups)
    _check_float(input, weight, bias, op)
    y, added = _batched(input, n, op)
    stride = _tuple(stride, n, op, "stride")
    dilation = _tuple(dilation, n, op, "dilation")
    padding = _tuple(padding, n, op, "padding")
    output_padding = _tuple(output_padding, n, op, "output_padding")
    _check_positive(stride, "stride", op)
    _check_positive(dilation, "dilation", op)
    if any(p < 0 for p in padding) or any(p < 0 for p in output_padding):
        raise RuntimeError(f"{op}(): negative padding is not supported (got padding="
                           f"{list(padding)}, output_padding={list(output_padding)})")
    if any(op_ >= s and op_ >= d for op_, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(f"{op}(): output padding must be smaller than either stride or "
                           f"dilation, but got output_padding={list(output_padding)}, "
                           f"stride={list(stride)}, dilation={list(dilation)}")
    if y.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {_sizes(weight.shape)}, "
                           f"expected input{_sizes(y.shape)} to have {weight.shape[0]} "
                           f"channels, but got {y.shape[1]} channels instead")
    kernel = tuple(weight.shape[2:])
    out = tuple(y.shape[2:])
    size = tuple((i - 1) * s - 2 * p + d * (k - 1) + op_ + 1 for i, s, p, d, k, op_ in
                 zip(out, stride, padding, dilation, kernel, output_padding))
    if any(s <= 0 for s in size):
        raise RuntimeError(f"{op}(): Given input size per channel: "
                           f"({' x '.join(map(str, out))}). Calculated output size per "
                           f"channel: ({' x '.join(map(str, size))}). Output size is too small")
    geo = _Geometry(size, kernel, stride, padding, padding, dilation, groups, out)
    x = ConvolutionTranspose.apply(y, weight, bias, geo)
    return x.squeeze(0) if added else x


# ----------------------------------------------------------------------------- samples
def _conv1d_samples(make):
    return [Sample((make((1, 2, 6)), make((3, 2, 3)), make((3,))), name="bias"),
            Sample((make((2, 2, 7)), make((2, 1, 2))),
                   dict(stride=2, padding=1, dilation=2, groups=2), name="stride dil groups"),
            Sample((make((2, 5)), make((2, 2, 2))), dict(padding="same"), name="same unbatched")]


def _conv2d_samples(make):
    return [Sample((make((1, 2, 5, 5)), make((3, 2, 3, 3)), make((3,))), name="bias"),
            Sample((make((1, 2, 5, 4)), make((2, 2, 2, 2))),
                   dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2)), name="stride pad dil"),
            Sample((make((2, 4, 3, 3)), make((2, 2, 2, 2)), None),
                   dict(groups=2, padding="same"), name="groups same"),
            Sample((make((1, 2, 4, 4)), make((1, 2, 3, 3))), dict(padding="valid", stride=3),
                   name="valid stride")]


def _conv3d_samples(make):
    return [Sample((make((1, 2, 3, 3, 3)), make((2, 2, 2, 2, 2)), make((2,))),
                   dict(padding=1, stride=2), name="bias pad stride"),
            Sample((make((1, 2, 3, 4, 3)), make((2, 1, 2, 1, 2))),
                   dict(groups=2, dilation=(1, 1, 2)), name="groups dil")]


def _conv_transpose1d_samples(make):
    return [Sample((make((1, 3, 4)), make((3, 2, 3)), make((2,))), name="bias"),
            Sample((make((2, 2, 3)), make((2, 1, 3))),
                   dict(stride=2, padding=1, output_padding=1, groups=2), name="stride outpad"),
            Sample((make((2, 3)), make((2, 2, 2))), dict(dilation=2), name="dil unbatched")]


def _conv_transpose2d_samples(make):
    return [Sample((make((1, 3, 3, 3)), make((3, 2, 2, 2)), make((2,))), name="bias"),
            Sample((make((1, 2, 3, 2)), make((2, 2, 3, 2))),
                   dict(stride=(2, 1), padding=(1, 0), output_padding=(1, 0), dilation=(1, 2)),
                   name="stride pad outpad dil"),
            Sample((make((1, 4, 2, 2)), make((4, 1, 2, 2))), dict(groups=2, stride=2),
                   name="groups")]


def _conv_transpose3d_samples(make):
    return [Sample((make((1, 2, 2, 2, 2)), make((2, 2, 2, 2, 2)), make((2,))),
                   dict(stride=2, padding=1, output_padding=1), name="stride pad outpad")]


# ----------------------------------------------------------------------------- public ops
@register_op(namespace="nn.functional", exported_in=("ember",), samples=_conv1d_samples)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation: ``out[b, o, l] = bias[o] + sum_{c, k} weight[o, c, k] *
    input_padded[b, g(o) * C/groups + c, l * stride + k * dilation]``.

    input (B, C, L) or (C, L); weight (O, C/groups, k); padding an int, a tuple, 'valid'
    or 'same'. Time O(B * L_out * C * k * O / groups) as one GEMM; extra memory
    O(B * L_out * C * k) for the im2col matrix.
    """
    return _convnd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


@register_op(namespace="nn.functional", exported_in=("ember",), samples=_conv2d_samples)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation: ``out[b, o, i, j] = bias[o] + sum_{c, p, q} weight[o, c, p, q]
    * input_padded[b, g(o) * C/groups + c, i * sh + p * dh, j * sw + q * dw]``.

    input (B, C, H, W) or (C, H, W); weight (O, C/groups, kh, kw); stride, padding,
    dilation an int or a pair; padding also 'valid' or 'same' (stride 1; odd totals put the
    extra zero at the end, as PyTorch does). Time O(B * H_out * W_out * C * kh * kw * O /
    groups). Stride 1, one group and 32 or more input channels: one GEMM per kernel offset
    over shifted views of the padded channels-last input, extra memory O(B * H * W * C);
    otherwise one GEMM over im2col, extra memory O(B * H_out * W_out * C * kh * kw). Backward
    is a transposed convolution (input) and a convolution of input with the gradient
    (weight), so gradients of gradients work.

    >>> ember.nn.functional.conv2d(ember.ones(1, 1, 3, 3), ember.ones(1, 1, 2, 2)).shape
    ember.Size([1, 1, 2, 2])
    """
    return _convnd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


@register_op(namespace="nn.functional", exported_in=("ember",), samples=_conv3d_samples)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D cross-correlation over (D, H, W), as conv2d with one more spatial dim.

    Time O(B * D_out * H_out * W_out * C * K * O / groups), K the kernel volume; extra
    memory O(B * D_out * H_out * W_out * C * K)."""
    return _convnd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


@register_op(namespace="nn.functional", exported_in=("ember",),
             samples=_conv_transpose1d_samples)
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """1-D transposed convolution (the gradient of conv1d with respect to its input):
    every input element scatters ``weight[c_in, :, k]`` times itself to
    ``out[l * stride + k * dilation - padding]``.

    input (B, C_in, L) or (C_in, L); weight (C_in, C_out/groups, k); output length
    ``(L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``.
    Time O(B * L * C_in * k * C_out / groups) (one GEMM and k strided adds)."""
    return _conv_transposend(1, "conv_transpose1d", input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@register_op(namespace="nn.functional", exported_in=("ember",),
             samples=_conv_transpose2d_samples)
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """2-D transposed convolution ("deconvolution"), the adjoint of conv2d in its input.

    input (B, C_in, H, W); weight (C_in, C_out/groups, kh, kw); output height
    ``(H - 1) * sh - 2 * ph + dh * (kh - 1) + output_padding_h + 1`` (width alike).
    Time O(B * H * W * C_in * kh * kw * C_out / groups): one GEMM, then kh * kw strided
    adds (col2im)."""
    return _conv_transposend(2, "conv_transpose2d", input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@register_op(namespace="nn.functional", exported_in=("ember",),
             samples=_conv_transpose3d_samples)
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """3-D transposed convolution, as conv_transpose2d with one more spatial dim.
    Time O(B * D * H * W * C_in * K * C_out / groups), K the kernel volume."""
    return _conv_transposend(3, "conv_transpose3d", input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


# ----------------------------------------------------------------------------- unfold / fold
def _unfold(xp, x, geo: _Geometry):
    col = _im2col(xp, x, geo)
    return col.reshape(x.shape[0], col.shape[2], col.shape[3])


def _fold(xp, col, geo: _Geometry, channels: int):
    return _col2im(xp, col, (col.shape[0], channels), geo)


class Unfold(Function):
    """im2col: (B, C, H, W) -> (B, C * kh * kw, L); backward is Fold."""

    array_backward = True
    node_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx, x, geo):
        ctx.geo, ctx.channels = geo, x.shape[1]
        return _unfold(ctx.xp, x, geo)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        geo, channels = ctx.geo, ctx.channels
        return (_fold(m.xp, grad, geo, channels) if m.arrays
                else Fold.apply(grad, geo, channels)), None


class Fold(Function):
    """col2im: (B, C * kh * kw, L) -> (B, C, H, W), summing overlaps; backward is Unfold."""

    array_backward = True
    node_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, col, geo, channels):
        ctx.geo = geo
        return _fold(ctx.xp, col, geo, channels)

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        geo = ctx.geo
        return (_unfold(m.xp, grad, geo) if m.arrays else Unfold.apply(grad, geo)), None, None


def _fold_geometry(op, size, kernel_size, dilation, padding, stride):
    kernel = _tuple(kernel_size, 2, op, "kernel_size")
    dilation = _tuple(dilation, 2, op, "dilation")
    padding = _tuple(padding, 2, op, "padding")
    stride = _tuple(stride, 2, op, "stride")
    _check_positive(kernel, "kernel_size", op)
    _check_positive(stride, "stride", op)
    _check_positive(dilation, "dilation", op)
    if any(p < 0 for p in padding):
        raise RuntimeError(f"{op}(): negative padding is not supported (got padding="
                           f"{list(padding)})")
    out = tuple((s + 2 * p - d * (k - 1) - 1) // st + 1
                for s, p, d, k, st in zip(size, padding, dilation, kernel, stride))
    if any(o < 1 for o in out):
        raise RuntimeError(f"{op}(): Given input with spatial size {tuple(size)}, "
                           f"kernel_size={kernel}, dilation={dilation}, padding={padding}, "
                           f"calculated shape of the array of sliding blocks as {out}, but its "
                           "components must be at least one.")
    return _Geometry(tuple(size), kernel, stride, padding, padding, dilation, 1, out)


def _unfold_samples(make):
    return [Sample((make((1, 2, 3, 4)), 2), name="kernel 2"),
            Sample((make((2, 1, 4, 4)), (2, 3)), dict(dilation=(1, 1), padding=1, stride=2),
                   name="pad stride"),
            Sample((make((1, 3, 3)), 2), dict(dilation=2, padding=1), name="unbatched dil")]


def _fold_samples(make):
    return [Sample((make((1, 8, 6)), (3, 4), 2), name="kernel 2"),
            Sample((make((2, 6, 6)), (4, 4), (2, 3)), dict(padding=1, stride=2),
                   name="pad stride"),
            Sample((make((4, 9)), 3, 2), dict(dilation=2, padding=1), name="unbatched dil")]


@register_op(namespace="nn.functional", samples=_unfold_samples)
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding blocks (im2col): (B, C, H, W) -> (B, C * kh * kw, L), L the number
    of block positions; column l holds the block at position l (row-major), channel-major
    then kernel offset. Time and memory O(B * C * kh * kw * L)."""
    ensure_tensor(input, "unfold")
    ndim = input._data.ndim
    if ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got "
                           f"{ndim}D)")
    x = input.unsqueeze(0) if ndim == 3 else input
    geo = _fold_geometry("unfold", tuple(x.shape[2:]), kernel_size, dilation, padding, stride)
    out = Unfold.apply(x, geo)
    return out.squeeze(0) if ndim == 3 else out


@register_op(namespace="nn.functional", samples=_fold_samples)
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum sliding blocks back into an image (col2im), the adjoint of unfold:
    (B, C * kh * kw, L) -> (B, C, *output_size); overlapping entries add up.
    Time O(B * C * kh * kw * L) (one strided add per kernel offset)."""
    ensure_tensor(input, "fold")
    ndim = input._data.ndim
    if ndim not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors "
                           f"are supported (got {ndim}D)")
    col = input.unsqueeze(0) if ndim == 2 else input
    size = _tuple(output_size, 2, "fold", "output_size")
    geo = _fold_geometry("fold", size, kernel_size, dilation, padding, stride)
    kernel_volume = geo.kernel[0] * geo.kernel[1]
    if col.shape[1] % kernel_volume:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={col.shape[1]} and "
                           f"kernel_size={geo.kernel}")
    blocks = geo.out[0] * geo.out[1]
    if col.shape[2] != blocks:
        raise RuntimeError(f"Given output_size={size}, kernel_size={geo.kernel}, "
                           f"dilation={geo.dilation}, padding={geo.pad_lo}, stride={geo.stride}, "
                           f"expected size of input's dimension 2 to match the calculated "
                           f"number of sliding blocks {geo.out[0]} * {geo.out[1]} = {blocks}, "
                           f"but got input.size(2)={col.shape[2]}.")
    if col._data.dtype.kind not in "fV":
        raise RuntimeError(f"fold(): expected a floating-point input, got {col.dtype.name}")
    out = Fold.apply(col, geo, col.shape[1] // kernel_volume)
    return out.squeeze(0) if ndim == 2 else out
