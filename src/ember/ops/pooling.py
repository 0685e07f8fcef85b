"""Pooling: max/avg pooling (1-3 d), adaptive avg/max pooling, lp pooling, max_unpool,
interpolate, pixel_shuffle / pixel_unshuffle.

Pooling works on the last n dims of any leading shape, with strided windows:
- sums over windows (avg/lp pooling) are one strided add per kernel offset, and their
  adjoint (the backward) is col2im, the same loop the other way (``WindowSum`` and
  ``WindowSumTranspose`` are each other's backward, so double backward works);
- max pooling finds per-plane flat indices (PyTorch's ``return_indices``), by a
  branch-free separable scan over the windows, and gathers at them; its backward
  scatters into the plane, and max_unpool is that scatter;
- adaptive pooling and interpolation are separable: along each dim, every output reads a
  few input positions ("taps") with weights, a gather along one axis; ``Resample`` does
  all the dims in one node, and its adjoint (``ResampleTranspose``) is the same kind of
  map with the taps transposed.
The max-pooling gathers and scatters are ember's one pair, ``indexing.AdvancedIndex`` /
``indexing.IndexScatter``, each the other's backward.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from ..backend import scratch
from ..tensor import Tensor
from ._util import ensure_tensor
from .conv import _col2im, _Geometry, _non_overlapping, _pad, _sizes, _tuple, _windows
from .indexing import AdvancedIndex, IndexScatter
from .registry import Sample, register_op

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "lp_pool1d",
           "lp_pool2d", "lp_pool3d",
           "max_unpool1d", "max_unpool2d", "max_unpool3d", "interpolate", "pixel_shuffle",
           "pixel_unshuffle"]


# ----------------------------------------------------------------------------- Functions
def _window_sum(xp, x, geo: _Geometry):
    """Sums over the windows: one strided add per kernel offset for small kernels, one
    reduction over a strided-window view for large ones (global pooling)."""
    padded = _pad(xp, x, geo.pad_lo, geo.pad_hi)
    n = len(geo.kernel)
    if math.prod(geo.kernel) > 16:
        view = _windows(xp, padded, geo.kernel, geo.stride, geo.dilation, geo.out)
        lead = padded.ndim - n
        return view.sum(axis=tuple(range(lead, lead + n)), dtype=x.dtype)
    out = None
    for offset in itertools.product(*(range(k) for k in geo.kernel)):
        part = padded[(Ellipsis,) + tuple(
            slice(o * d, o * d + st * (m - 1) + 1, st)
            for o, d, st, m in zip(offset, geo.dilation, geo.stride, geo.out))]
        out = part.copy() if out is None else out.__iadd__(part)
    return out


class WindowSum(Function):
    """out[..., p] = scale[p] * sum over the window of p (zero padding); backward is the
    transpose (col2im)."""

    array_backward = True
    node_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, geo, scale, node_name):
        ctx.geo, ctx.scale = geo, scale
        if node_name:
            ctx.node_name = node_name
        out = _window_sum(ctx.xp, x, geo)
        if scale is not None:
            out *= ctx.xp.asarray(scale, dtype=out.dtype)
        return out

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(WindowSumTranspose, grad, ctx.geo, ctx.scale), None, None, None


class WindowSumTranspose(Function):
    """Spread ``scale[p] * grad[..., p]`` over the window of p: the adjoint of WindowSum."""

    array_backward = True
    node_name = "AvgPoolBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, geo, scale):
        ctx.geo, ctx.scale = geo, scale
        xp = ctx.xp
        if scale is not None:
            grad = grad * xp.asarray(scale, dtype=grad.dtype)
        n = len(geo.kernel)
        lead = grad.shape[:grad.ndim - n]
        blocks = xp.broadcast_to(grad.reshape(lead + (1,) * n + geo.out),
                                 lead + geo.kernel + geo.out)
        return _col2im(xp, blocks, lead, geo)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(WindowSum, grad, ctx.geo, ctx.scale, None), None, None


def _transpose_taps(index: np.ndarray, weight, size: int):
    """The adjoint of a taps map (out[i] = sum_j weight[i, j] * x[index[i, j]]) in the same
    form: for each of the ``size`` inputs, the outputs that read it and their weights
    (padded with weight 0 to the largest count)."""
    out, taps = index.shape
    src = index.ravel()
    dst = np.repeat(np.arange(out), taps)
    w = np.ones(src.shape) if weight is None else np.asarray(weight, np.float64).ravel()
    order = np.argsort(src, kind="stable")
    src, dst, w = src[order], dst[order], w[order]
    counts = np.bincount(src, minlength=size)
    rank = np.arange(src.size) - np.repeat(np.cumsum(counts) - counts, counts)
    width = max(int(counts.max()) if counts.size else 0, 1)
    index_t = np.zeros((size, width), np.int64)
    weight_t = np.zeros((size, width))
    index_t[src, rank] = dst
    weight_t[src, rank] = w
    return index_t, weight_t


def _take_taps(xp, x, axis: int, index: np.ndarray, weight):
    """out[..., i, ...] = sum_j weight[i, j] * x[..., index[i, j], ...] along ``axis``, one
    gather and one multiply-add per tap; ``weight`` None: one tap of weight 1."""
    if weight is None:
        return xp.take(x, xp.asarray(index[:, 0]), axis=axis)
    shape = [1] * x.ndim
    shape[axis] = index.shape[0]
    out = None
    for j in range(index.shape[1]):
        w = xp.asarray(weight[:, j].reshape(shape), dtype=x.dtype)
        term = xp.take(x, xp.asarray(index[:, j]), axis=axis)
        term *= w
        out = term if out is None else out.__iadd__(term)
    return out


class Resample(Function):
    """A separable linear resampling of some axes (interpolation, adaptive average pooling)
    as one node: ``plan`` holds, per axis, the taps of each output and of the adjoint.
    ``ResampleTranspose`` is its backward and it is ResampleTranspose's, so double
    backward is the same pair again."""

    array_backward = True
    node_name = "UpsampleNearest2DBackward0"

    @staticmethod
    def forward(ctx, x, plan, node_name):
        ctx.plan, ctx.node_name = plan, node_name
        for axis, index, weight, _, _ in plan:
            x = _take_taps(ctx.xp, x, axis, index, weight)
        return x

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(ResampleTranspose, grad, ctx.plan, ctx.node_name), None, None


class ResampleTranspose(Function):
    """The adjoint of ``Resample``: each input position sums the outputs that read it."""

    array_backward = True

    @staticmethod
    def forward(ctx, grad, plan, node_name):
        ctx.plan, ctx.forward_name = plan, node_name
        ctx.node_name = node_name.replace("Backward0", "BackwardBackward0")
        for axis, _, _, index_t, weight_t in reversed(plan):
            grad = _take_taps(ctx.xp, grad, axis, index_t, weight_t)
        return grad

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(Resample, grad, ctx.plan, ctx.forward_name), None, None


def _resample(x: Tensor, axes_taps, node_name: str) -> Tensor:
    """Resample ``x`` along each (axis, index, weight, size) of ``axes_taps`` in one node."""
    plan = tuple((axis, index, weight) + _transpose_taps(index, weight, size)
                 for axis, index, weight, size in axes_taps)
    return Resample.apply(x, plan, node_name)


def _positions(xp, index, n: int, plane: int):
    """Positions in the flattened tensor of per-plane flat indices (shape lead + out) into
    a tensor whose last n dims form planes of ``plane`` elements: the gather / scatter
    index."""
    lead = index.shape[:index.ndim - n]
    if math.prod(lead) <= 1:
        return index
    offsets = xp.arange(math.prod(lead), dtype=index.dtype) * plane
    return index + offsets.reshape(lead + (1,) * n)


def _plane_gather(x: Tensor, index, n: int, name: str, unique: bool = False, empty=None):
    """out[..., p] = x[..., index[..., p]] with x's last n dims flattened into a plane
    (the gather at global positions); ``empty`` marks outputs that read -inf instead."""
    xp = backend.xp_for_device(x._device)
    plane = math.prod(x._data.shape[x._data.ndim - n:])
    out = AdvancedIndex.apply(x, _positions(xp, index, n, plane), unique)
    if out.grad_fn is not None:
        out.grad_fn.node_name = name
    if empty is not None:  # max pooling windows without an element above -inf
        xp.copyto(out._data, -np.inf, where=empty)
    return out


# ----------------------------------------------------------------------------- arguments
def _check_input(input, n: int, op: str, integers: bool = False):
    ensure_tensor(input, op)
    ndim = input._data.ndim
    if ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{op}(): Expected {n + 1}D or {n + 2}D (batch mode) tensor for "
                           f"input with optional 0 dim batch size, but got input of size: "
                           f"{_sizes(input.shape)}")
    kind = input._data.dtype.kind
    if kind in "iub" and not (integers and kind in "iu"):
        raise NotImplementedError(f"\"{op}\" not implemented for '{input.dtype.name}' "
                                  f"({op}() takes floating-point inputs)")
    if kind not in "fV" and not (integers and kind in "iu"):
        raise RuntimeError(f"{op}(): expected a floating-point input, but got "
                           f"{input.dtype.name}")
    if any(s == 0 for s in input.shape[ndim - n:]):
        raise RuntimeError(f"{op}(): Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {_sizes(input.shape)}")


def _pool_geometry(op, size, kernel_size, stride, padding, dilation, ceil_mode, n,
                   pad_limit_text):
    kernel = _tuple(kernel_size, n, op, "kernel_size")
    stride = kernel if stride is None or stride == [] or stride == () else \
        _tuple(stride, n, op, "stride")
    padding = _tuple(padding, n, op, "padding")
    dilation = _tuple(dilation, n, op, "dilation")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"{op}(): kernel_size must be greater than zero, but got "
                           f"{list(kernel)}")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"{op}(): stride must be greater than zero, but got {list(stride)}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"{op}(): dilation must be greater than zero, but got "
                           f"{list(dilation)}")
    for p, k, d in zip(padding, kernel, dilation):
        if p < 0 or p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"{op}(): pad should be at most half of {pad_limit_text}, but "
                               f"got pad={p}, kernel_size={k}" +
                               (f" and dilation={d}" if "effective" in pad_limit_text else ""))
    out = []
    for s, k, st, p, d in zip(size, kernel, stride, padding, dilation):
        span = s + 2 * p - d * (k - 1) - 1
        o = (-(-span // st) if ceil_mode else span // st) + 1
        if ceil_mode and (o - 1) * st >= s + p:
            o -= 1
        out.append(o)
    if any(o < 1 for o in out):
        raise RuntimeError(f"{op}(): Given input size: ({'x'.join(map(str, size))}). "
                           f"Calculated output size: ({'x'.join(map(str, out))}). Output size "
                           "is too small")
    hi = tuple(max(p, (o - 1) * st + d * (k - 1) + 1 - s - p)
               for s, k, st, p, d, o in zip(size, kernel, stride, padding, dilation, out))
    return _Geometry(tuple(size), kernel, stride, padding, hi, dilation, 1, tuple(out))


# ----------------------------------------------------------------------------- max pooling
def _window_starts(geo: _Geometry, places: list):
    """Per-plane flat position of each window's start (which may lie in the padding), and
    the offset from it of the window's first element inside the input, both shaped
    ``out``."""
    n = len(geo.kernel)
    base = np.zeros((1,) * n, dtype=np.int64)
    first = np.zeros((1,) * n, dtype=np.int64)
    for i in range(n):
        start = np.arange(geo.out[i]) * geo.stride[i] - geo.pad_lo[i]
        shape = (-1,) + (1,) * (n - 1 - i)
        base = base + (start * places[i]).reshape(shape)
        # first in-bounds element of the window along dim i
        skip = -(-np.maximum(-start, 0) // geo.dilation[i]) * geo.dilation[i]
        first = first + (skip * places[i]).reshape(shape)
    return base, first


def _first_max(xp, padded, geo: _Geometry, places: list):
    """Each window's maximum and the flat plane offset (from the window's start) of its
    first occurrence in row-major window order, by a separable scan: along the last
    kernel dim, then the one before, each step keeping a later element only if it is
    strictly greater. Comparisons and integer arithmetic only, no masked writes (whose
    branches on random data cost ten times a pass). NaN is not handled (see caller)."""
    n = len(geo.kernel)
    view = _windows(xp, padded, geo.kernel, geo.stride, geo.dilation, geo.out)
    depth = padded.ndim - n
    plane = math.prod(padded.shape[depth:])
    code_type = np.int32 if plane < 2 ** 31 else np.int64
    best, code = view, None
    for d in reversed(range(n)):
        at = (slice(None),) * (depth + d)
        step = geo.dilation[d] * places[d]
        top = best[at + (0,)]
        chosen = None if code is None else code[at + (0,)]
        for j in range(1, geo.kernel[d]):
            value = best[at + (j,)]
            better = value > top
            if j == 1:  # the stage's running maximum and offsets: reused buffers
                top = xp.maximum(top, value, out=scratch.empty(
                    xp, f"pool max {d}", top.shape, top.dtype))
            else:
                xp.maximum(top, value, out=top)
            if chosen is None:
                chosen = scratch.empty(xp, f"pool offset {d}", top.shape, code_type)
                chosen[...] = better
                if j * step != 1:
                    chosen *= j * step
            elif code is None:
                change = scratch.empty(xp, f"pool change {d}", top.shape, code_type)
                xp.subtract(j * step, chosen, out=change)
                change *= better
                chosen += change
            else:
                change = scratch.empty(xp, f"pool change {d}", top.shape, code_type)
                xp.subtract(code[at + (j,)], chosen, out=change)
                change += j * step
                change *= better
                chosen += change
        best, code = top, chosen
    return best, code


def _scanned_max_indices(xp, padded, geo: _Geometry, places: list):
    """The offsets (from each window's start) that PyTorch's scan keeps, where a later
    element wins if it is greater or NaN; -1 where no element is above -inf. One pass
    per kernel offset with masked writes: the route for windows holding NaN."""
    lead = padded.shape[:padded.ndim - len(geo.kernel)]
    best = xp.full(lead + geo.out, -np.inf, dtype=padded.dtype)
    chosen = xp.full(lead + geo.out, -1, dtype=np.int64)
    for offset in itertools.product(*(range(k) for k in geo.kernel)):
        part = padded[(Ellipsis,) + tuple(
            slice(o * d, o * d + st * (m - 1) + 1, st)
            for o, d, st, m in zip(offset, geo.dilation, geo.stride, geo.out))]
        better = (part > best) | (part != part)
        xp.copyto(best, part, where=better)
        delta = sum(o * d * p for o, d, p in zip(offset, geo.dilation, places))
        xp.copyto(chosen, delta, where=better)
    return chosen


def _max_pool_indices(xp, x, geo: _Geometry):
    """Per-plane flat indices (int64, shape lead + out) of each window's maximum, with
    PyTorch's scan: a later element wins if it is greater or NaN; a window of only -inf
    (or only padding) gives its first position past the padding and is flagged in the
    second result. A branch-free scan (``_first_max``) answers every window without NaN;
    when some window holds NaN the masked per-offset scan runs instead."""
    n = len(geo.kernel)
    places = [math.prod(geo.size[i + 1:]) for i in range(n)]
    padded = _pad(xp, x, geo.pad_lo, geo.pad_hi, -np.inf)
    best, chosen = _first_max(xp, padded, geo, places)
    if bool(xp.isnan(best).any()):
        chosen = _scanned_max_indices(xp, padded, geo, places)
        empty = chosen < 0
    else:
        empty = best == -np.inf
        if chosen is None:  # a kernel of one element
            chosen = xp.zeros(best.shape, dtype=np.int64)
    base, first = (xp.asarray(a) for a in _window_starts(geo, places))
    if bool(empty.any()):
        chosen = xp.where(empty, first, chosen)
    return base + chosen, empty


class _MaxPoolIndices(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x, geo):
        return _max_pool_indices(ctx.xp, x, geo)


class _MaxPoolGather(AdvancedIndex):
    """The values at the max pooling indices: the gather, with its index made inside
    forward from the indices array (so a recorded call reads each call's indices)."""

    @staticmethod
    def forward(ctx, x, indices, empty, n, non_overlapping):
        xp = ctx.xp
        plane = math.prod(x.shape[x.ndim - n:])
        # PyTorch's index for a window of only padding or -inf is its first position past
        # the padding, which can lie outside the plane; its value is -inf (and its gradient
        # goes to that position, clipped into the plane here)
        any_empty = bool(empty.any())
        inside = indices.clip(0, plane - 1) if any_empty else indices
        out = AdvancedIndex.forward(ctx, x, _positions(xp, inside, n, plane),
                                    non_overlapping and not any_empty)
        if any_empty:
            xp.copyto(out, -np.inf, where=empty)
        return out

    @staticmethod
    def backward(ctx, grad):
        return AdvancedIndex.backward(ctx, grad)[0], None, None, None, None


def _max_pool(n, op, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    _check_input(input, n, op, integers=n == 2)  # PyTorch pools integers in 2-D only
    size = tuple(input.shape[input._data.ndim - n:])
    geo = _pool_geometry(op, size, kernel_size, stride, padding, dilation, ceil_mode, n,
                         "effective kernel size")
    if n == 1:  # as PyTorch: a 2-D pool of height 1 (Unsqueeze, MaxPool2D, Squeeze)
        out = _max_pool(2, op, input.unsqueeze(-2), (1,) + geo.kernel, (1,) + geo.stride,
                        (0,) + geo.pad_lo, (1,) + geo.dilation, ceil_mode, return_indices)
        return tuple(o.squeeze(-2) for o in out) if return_indices else out.squeeze(-2)
    # integers find their maxima as float64 (exact below 2 ** 53) and keep their dtype
    search = input.detach() if input._data.dtype.kind in "fV" else input.detach().double()
    indices, empty = _MaxPoolIndices.apply(search, geo)
    values = _MaxPoolGather.apply(input, indices, empty, n, _non_overlapping(geo))
    if values.grad_fn is not None:
        values.grad_fn.node_name = f"MaxPool{n}DWithIndicesBackward0"
    return (values, indices) if return_indices else values


def _max_pool_samples(n):
    def samples(make):
        if n == 1:
            return [Sample((make((2, 2, 6)), 3), dict(stride=2, padding=1), name="pad"),
                    Sample((make((1, 7)), 2), dict(dilation=2, ceil_mode=True,
                                                   return_indices=True), name="dil ceil idx")]
        if n == 2:
            return [Sample((make((1, 2, 4, 4)), 2), name="kernel 2"),
                    Sample((make((1, 1, 5, 5)), 3), dict(stride=2, padding=1, ceil_mode=True,
                                                         return_indices=True),
                           name="pad ceil indices"),
                    Sample((make((2, 5, 4)), (2, 3)), dict(stride=1, dilation=(2, 1)),
                           name="unbatched dilation overlap")]
        return [Sample((make((1, 1, 3, 4, 3)), 2), dict(stride=1, padding=1,
                                                        return_indices=True), name="pad"),
                Sample((make((1, 3, 3, 3)), (2, 2, 3)), dict(ceil_mode=True), name="ceil")]
    return samples


@register_op(namespace="nn.functional", exported_in=("ember",), samples=_max_pool_samples(1))
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Maximum over sliding windows of the last dim (padding counts as -inf); with
    ``return_indices`` also the flat position of each maximum in its row.
    Time O(N * L_out * k) for N rows."""
    return _max_pool(1, "max_pool1d", input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


@register_op(namespace="nn.functional", exported_in=("ember",), samples=_max_pool_samples(2))
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """``out[..., i, j] = max_{p, q} x_padded[..., i * sh + p * dh, j * sw + q * dw]`` with
    -inf padding; stride defaults to kernel_size; ``ceil_mode`` keeps a last partial window
    that starts inside the input. ``return_indices`` also gives each maximum's flat index
    ``h * W + w`` in its (H, W) plane, as PyTorch does (for max_unpool2d). Gradients flow to
    the chosen (first) maximum. Time O(N * H_out * W_out * kh * kw), N = batch * channels."""
    return _max_pool(2, "max_pool2d", input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


@register_op(namespace="nn.functional", exported_in=("ember",), samples=_max_pool_samples(3))
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max pooling over (D, H, W) windows, as max_pool2d; indices are flat in the
    (D, H, W) volume. Time O(N * D_out * H_out * W_out * K), K the kernel volume."""
    return _max_pool(3, "max_pool3d", input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


# ----------------------------------------------------------------------------- avg pooling
def _avg_divisor(geo: _Geometry, count_include_pad: bool, divisor_override):
    """1 / divisor for each output position (shape ``out``), PyTorch's rule: windows are
    clipped to the padded input; padding counts only with ``count_include_pad``."""
    if divisor_override is not None:
        return np.full(geo.out, 1.0 / divisor_override)
    scale = np.ones(geo.out)
    n = len(geo.kernel)
    for i in range(n):
        start = np.arange(geo.out[i]) * geo.stride[i] - geo.pad_lo[i]
        end = np.minimum(start + geo.kernel[i], geo.size[i] + geo.pad_lo[i])
        length = end - start
        if not count_include_pad:
            length = np.minimum(end, geo.size[i]) - np.maximum(start, 0)
        scale = scale / length.reshape((-1,) + (1,) * (n - 1 - i))
    return scale


def _avg_pool(n, op, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    _check_input(input, n, op)
    if divisor_override is not None and (isinstance(divisor_override, bool)
                                         or int(divisor_override) == 0):
        raise RuntimeError(f"{op}(): divisor must be not zero")
    size = tuple(input.shape[input._data.ndim - n:])
    geo = _pool_geometry(op, size, kernel_size, stride, padding, 1, ceil_mode, n,
                         "kernel size")
    if n == 3 and any(s < k for s, k in zip(size, geo.kernel)):
        # PyTorch's avg_pool3d (only) checks the unpadded input against the kernel
        raise RuntimeError(f"input image (T: {size[0]} H: {size[1]} W: {size[2]}) smaller "
                           f"than kernel size (kT: {geo.kernel[0]} kH: {geo.kernel[1]} "
                           f"kW: {geo.kernel[2]})")
    if n == 1:  # as PyTorch: a 2-D pool of height 1 (Unsqueeze, AvgPool2D, Squeeze)
        return _avg_pool(2, op, input.unsqueeze(-2), (1,) + geo.kernel, (1,) + geo.stride,
                         (0,) + geo.pad_lo, ceil_mode, count_include_pad,
                         divisor_override).squeeze(-2)
    scale = _avg_divisor(geo, count_include_pad, divisor_override)
    return WindowSum.apply(input, geo, scale, f"AvgPool{n}DBackward0")


def _avg_pool_samples(n):
    def samples(make):
        if n == 1:
            return [Sample((make((2, 2, 6)), 3), dict(stride=2, padding=1), name="pad"),
                    Sample((make((1, 7)), 2), dict(ceil_mode=True, count_include_pad=False),
                           name="ceil exclude pad")]
        if n == 2:
            return [Sample((make((1, 2, 4, 4)), 2), name="kernel 2"),
                    Sample((make((1, 1, 5, 5)), 3), dict(stride=2, padding=1, ceil_mode=True,
                                                         count_include_pad=False),
                           name="pad ceil exclude"),
                    Sample((make((2, 5, 4)), (2, 3)), dict(stride=1, padding=(1, 1),
                                                           ceil_mode=True),
                           name="unbatched pad ceil include"),
                    Sample((make((1, 1, 4, 4)), 3), dict(stride=2, padding=1,
                                                         divisor_override=2),
                           name="divisor override")]
        return [Sample((make((1, 1, 3, 4, 3)), 2), dict(stride=1, padding=1), name="pad"),
                Sample((make((1, 3, 3, 3)), (2, 2, 3)), dict(ceil_mode=True,
                                                             count_include_pad=False),
                       name="ceil")]
    return samples


@register_op(namespace="nn.functional", exported_in=("ember",), samples=_avg_pool_samples(1))
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """Mean over sliding windows of the last dim (zero padding, counted unless
    ``count_include_pad=False``). Time O(N * L_out * k)."""
    return _avg_pool(1, "avg_pool1d", input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, None)


@register_op(namespace="nn.functional", samples=_avg_pool_samples(2))
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """``out[..., i, j] = sum_window(x_padded) / divisor``: divisor is the window's size
    clipped to the padded input (``count_include_pad``), or the number of real input
    elements in it, or ``divisor_override``. Time O(N * H_out * W_out * kh * kw) (one
    strided add per kernel offset); backward spreads each gradient back over its window."""
    return _avg_pool(2, "avg_pool2d", input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


@register_op(namespace="nn.functional", samples=_avg_pool_samples(3))
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Average pooling over (D, H, W) windows, as avg_pool2d.
    Time O(N * D_out * H_out * W_out * K), K the kernel volume."""
    return _avg_pool(3, "avg_pool3d", input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


# ----------------------------------------------------------------------------- lp pooling
def _lp_pool(n, op, input, norm_type, kernel_size, stride, ceil_mode):
    _check_input(input, n, op)
    kernel = _tuple(kernel_size, n, op, "kernel_size")
    from .unary import abs as _abs
    from .unary import relu as _relu
    from .unary import sign as _sign
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        # PyTorch's limit: the largest (p = inf) or smallest (p = -inf) magnitude
        if norm_type > 0:
            return _max_pool(n, op, _abs(input), kernel, stride, 0, 1, ceil_mode, False)
        return -_max_pool(n, op, -_abs(input), kernel, stride, 0, 1, ceil_mode, False)
    powered = input ** norm_type
    pooled = _avg_pool(n, op, powered, kernel, stride, 0, ceil_mode, True, None)
    # PyTorch's form: sign(s) * relu(|s|) keeps its gradient at s = 0 equal to PyTorch's
    return (_sign(pooled) * _relu(_abs(pooled))).mul(math.prod(kernel)) ** (1.0 / norm_type)


def _lp_pool_samples(n):
    def samples(make):
        if n == 1:
            return [Sample((make((1, 2, 6), low=0.5, high=2.0), 2.0, 3), dict(stride=2),
                           name="p=2"),
                    Sample((make((2, 5), low=0.5, high=2.0), 3, 2), dict(ceil_mode=True),
                           name="p=3 ceil")]
        if n == 3:
            return [Sample((make((1, 3, 2, 4), low=0.5, high=2.0), 2.0, (2, 1, 2)),
                           name="p=2 unbatched")]
        return [Sample((make((1, 2, 4, 4), low=0.5, high=2.0), 2.0, 2), name="p=2"),
                Sample((make((1, 5, 4), low=0.5, high=2.0), 1.5, (2, 3)),
                       dict(stride=1, ceil_mode=True), name="p=1.5 unbatched")]
    return samples


@register_op(namespace="nn.functional", samples=_lp_pool_samples(1))
def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling ``(sum_window x^p)^(1/p)`` over the last dim.
    Time O(N * L_out * k)."""
    return _lp_pool(1, "lp_pool1d", input, norm_type, kernel_size, stride, ceil_mode)


@register_op(namespace="nn.functional", samples=_lp_pool_samples(2))
def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling ``(sum_window x^p)^(1/p)`` over (H, W) windows, computed as
    PyTorch does: the window mean of x^p times the window size, to the power 1/p (so a
    negative sum of odd powers gives NaN, as there). Time O(N * H_out * W_out * kh * kw)."""
    return _lp_pool(2, "lp_pool2d", input, norm_type, kernel_size, stride, ceil_mode)


@register_op(namespace="nn.functional", samples=_lp_pool_samples(3))
def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling ``(sum_window x^p)^(1/p)`` over (D, H, W) windows, as
    lp_pool2d. Time O(N * D_out * H_out * W_out * K), K the kernel volume."""
    return _lp_pool(3, "lp_pool3d", input, norm_type, kernel_size, stride, ceil_mode)


# ----------------------------------------------------------------------------- adaptive
def _adaptive_taps(size: int, out: int, mean: bool):
    """For each of ``out`` windows over ``size`` positions, [floor(i*size/out),
    ceil((i+1)*size/out)): tap indices (out, taps) (short windows repeat their last
    position) and, for means, weights 1/length on real taps and 0 on repeats."""
    if out == 0:  # an empty output along this dim
        return np.zeros((0, 1), dtype=np.int64), (np.zeros((0, 1)) if mean else None)
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    taps = int((end - start).max())
    j = np.arange(taps)
    index = np.minimum(start[:, None] + j, end[:, None] - 1)
    if not mean:
        return index, None
    length = (end - start)[:, None]
    return index, np.where(j < length, 1.0 / length, 0.0)


def _output_size(output_size, size, n, op):
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != n:
            raise RuntimeError(f"{op}(): output_size must have {n} elements, got "
                               f"{list(output_size)}")
        if n == 1 and output_size[0] is None:  # PyTorch keeps a size only from 2-D on
            raise TypeError(f"{op}(): argument 'output_size' must be tuple of ints, but "
                            "found element of type NoneType at pos 0")
        out = tuple(s if o is None else o for o, s in zip(output_size, size))
    elif output_size is None:
        raise TypeError(f"{op}(): argument 'output_size' must be an int or a tuple of ints, "
                        "not NoneType")
    else:
        out = (output_size,) * n
    out = tuple(int(o) for o in out)
    if any(o < 0 for o in out):
        raise RuntimeError(f"{op}(): elements of output_size must be greater than or equal to "
                           f"0 but received {list(out)}")
    return out


def _adaptive_avg(n, op, input, output_size):
    _check_input(input, n, op)
    ndim = input._data.ndim
    size = tuple(input.shape[ndim - n:])
    out = _output_size(output_size, size, n, op)
    if n == 1:  # PyTorch pools a length as a (1, L) plane
        plane = _adaptive_avg(2, op, input.unsqueeze(-2), (1, out[0]))
        return plane.squeeze(-2)
    if n > 1 and all(o == 1 for o in out) and input._data.size:
        # a global average, which PyTorch computes (and names) as a mean
        return input.mean(tuple(range(ndim - n, ndim)), keepdim=True)
    if all(o > 0 and s % o == 0 for s, o in zip(size, out)):
        # equal windows: plain average pooling (the common global-average case)
        kernel = tuple(s // o for s, o in zip(size, out))
        geo = _Geometry(size, kernel, kernel, (0,) * n, (0,) * n, (1,) * n, 1, out)
        return WindowSum.apply(input, geo, np.full(out, 1.0 / math.prod(kernel)),
                               f"AdaptiveAvgPool{n}DBackward0")
    taps = [(ndim - n + i,) + _adaptive_taps(size[i], out[i], True) + (size[i],)
            for i in range(n)]
    return _resample(input, taps, f"AdaptiveAvgPool{n}DBackward0")


def _adaptive_avg_samples(n):
    def samples(make):
        if n == 1:
            return [Sample((make((2, 2, 7)), 3), name="uneven"),
                    Sample((make((2, 6)), 3), name="even unbatched")]
        if n == 2:
            return [Sample((make((1, 2, 5, 7)), (3, 4)), name="uneven"),
                    Sample((make((2, 4, 4)), 1), name="global unbatched"),
                    Sample((make((1, 1, 3, 4)), (None, 6)), name="None and upsampling")]
        return [Sample((make((1, 3, 4, 5)), (2, 3, 2)), name="uneven")]
    return samples


@register_op(namespace="nn.functional", exported_in=("ember",),
             samples=_adaptive_avg_samples(1))
def adaptive_avg_pool1d(input, output_size):
    """Average pooling to a fixed output length: window i covers
    [floor(i L / out), ceil((i + 1) L / out)). Time O(N * L_out * ceil(L / L_out))."""
    return _adaptive_avg(1, "adaptive_avg_pool1d", input, output_size)


@register_op(namespace="nn.functional", samples=_adaptive_avg_samples(2))
def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed (H_out, W_out) (an int, a pair, None keeps a size), with
    window i along a dim of size S covering [floor(i S / out), ceil((i + 1) S / out)); done
    one dim at a time (the windows are separable). Time O(N * H_out * W_out * window)."""
    return _adaptive_avg(2, "adaptive_avg_pool2d", input, output_size)


@register_op(namespace="nn.functional", samples=_adaptive_avg_samples(3))
def adaptive_avg_pool3d(input, output_size):
    """Average pooling to a fixed (D_out, H_out, W_out), as adaptive_avg_pool2d."""
    return _adaptive_avg(3, "adaptive_avg_pool3d", input, output_size)


class _AdaptiveMaxIndices(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, x, taps, size):
        xp = ctx.xp
        n = len(taps)
        lead = x.shape[:x.ndim - n]
        gathered = x
        for i, index in enumerate(taps):
            gathered = xp.take(gathered, xp.asarray(index.ravel()), axis=len(lead) + i)
        split = lead + tuple(itertools.chain.from_iterable(t.shape for t in taps))
        gathered = gathered.reshape(split)
        # (lead, o0, k0, o1, k1, ...) -> (lead, o0, o1, ..., k0 k1 ...)
        order = (tuple(range(len(lead))) + tuple(len(lead) + 2 * i for i in range(n))
                 + tuple(len(lead) + 2 * i + 1 for i in range(n)))
        outs = tuple(t.shape[0] for t in taps)
        windows = gathered.transpose(order).reshape(
            lead + outs + (math.prod(t.shape[1] for t in taps),))
        local = xp.argmax(windows, axis=-1)
        flat = xp.zeros(local.shape, dtype=np.int64)
        rest = local
        place = 1
        for i in reversed(range(n)):
            k_i = rest % taps[i].shape[1]
            rest = rest // taps[i].shape[1]
            index = xp.asarray(taps[i])
            rows = xp.arange(outs[i]).reshape((-1,) + (1,) * (n - 1 - i))
            flat += index[rows, k_i] * place
            place *= size[i]
        return flat


def _adaptive_max(n, op, input, output_size, return_indices):
    _check_input(input, n, op)
    ndim = input._data.ndim
    size = tuple(input.shape[ndim - n:])
    out = _output_size(output_size, size, n, op)
    if n == 1:  # as PyTorch: a 2-D pool of height 1 (Unsqueeze, AdaptiveMaxPool2D, Squeeze)
        result = _adaptive_max(2, op, input.unsqueeze(-2), (1,) + tuple(out), return_indices)
        return tuple(r.squeeze(-2) for r in result) if return_indices else result.squeeze(-2)
    taps = tuple(_adaptive_taps(s, o, False)[0] for s, o in zip(size, out))
    indices = _AdaptiveMaxIndices.apply(input.detach(), taps, size)
    values = _plane_gather(input, indices._data, n, f"AdaptiveMaxPool{n}DBackward0")
    return (values, indices) if return_indices else values


def _adaptive_max_samples(n):
    def samples(make):
        if n == 1:
            return [Sample((make((2, 2, 7)), 3), dict(return_indices=True), name="uneven")]
        if n == 3:
            return [Sample((make((1, 3, 4, 5)), (2, 3, 2)), dict(return_indices=True),
                           name="uneven unbatched")]
        return [Sample((make((1, 2, 5, 7)), (3, 4)), dict(return_indices=True), name="uneven"),
                Sample((make((2, 4, 4)), 1), name="global unbatched"),
                Sample((make((1, 1, 3, 4)), (None, 2)), dict(return_indices=True),
                       name="None")]
    return samples


@register_op(namespace="nn.functional", samples=_adaptive_max_samples(1))
def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling to a fixed output length (windows as adaptive_avg_pool1d); indices are
    positions in the row. Time O(N * L_out * ceil(L / L_out))."""
    return _adaptive_max(1, "adaptive_max_pool1d", input, output_size, return_indices)


@register_op(namespace="nn.functional", samples=_adaptive_max_samples(2))
def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed (H_out, W_out) with adaptive windows; ``return_indices``
    gives flat ``h * W + w`` positions in each plane. Time O(N * H_out * W_out * window)."""
    return _adaptive_max(2, "adaptive_max_pool2d", input, output_size, return_indices)


@register_op(namespace="nn.functional", samples=_adaptive_max_samples(3))
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling to a fixed (D_out, H_out, W_out) with adaptive windows; indices are flat
    in each (D, H, W) volume. Time O(N * D_out * H_out * W_out * window)."""
    return _adaptive_max(3, "adaptive_max_pool3d", input, output_size, return_indices)


# ----------------------------------------------------------------------------- max_unpool
def _max_unpool(n, op, input, indices, kernel_size, stride, padding, output_size):
    _check_input(input, n, op)
    if not isinstance(indices, Tensor) or indices._data.dtype != np.int64:
        raise RuntimeError(f"{op}(): expected 'indices' to be an int64 tensor (as max_pool "
                           f"returns with return_indices=True)")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"{op}(): Expected shape of indices to be same as that of the "
                           f"input tensor ({_sizes(input.shape)}) but got indices tensor with "
                           f"shape: {_sizes(indices.shape)}")
    kernel = _tuple(kernel_size, n, op, "kernel_size")
    stride = kernel if stride is None else _tuple(stride, n, op, "stride")
    padding = _tuple(padding, n, op, "padding")
    ndim = input._data.ndim
    size = tuple(input.shape[ndim - n:])
    default = tuple((s - 1) * st - 2 * p + k for s, st, p, k in zip(size, stride, padding,
                                                                     kernel))
    if output_size is None:
        out = default
    else:
        out = tuple(int(o) for o in output_size)
        if len(out) == n + 2:
            out = out[2:]
        if len(out) != n:
            raise ValueError(f"{op}(): output_size should be a sequence containing {n} or "
                             f"{n + 2} elements, but it has a length of '{len(out)}'")
        for o, d, st in zip(out, default, stride):
            if not d - st < o < d + st:
                raise ValueError(f"{op}(): invalid output_size {list(out)} (dim should be "
                                 f"between {[d - s + 1 for d, s in zip(default, stride)]} and "
                                 f"{[d + s - 1 for d, s in zip(default, stride)]})")
    plane = math.prod(out)
    data = indices._data
    if data.size and (int(data.min()) < 0 or int(data.max()) >= plane):
        raise RuntimeError(f"{op}(): Found an invalid max index: {int(data.max())} (output "
                           f"volumes are of size {'x'.join(map(str, out))})")
    shape = tuple(input.shape[:ndim - n]) + out
    # a repeated index keeps one of its values, as in PyTorch; the backward gathers
    xp = backend.xp_for_device(input._device)
    out = IndexScatter.apply(input, shape, _positions(xp, data, n, plane), False)
    if out.grad_fn is not None:
        out.grad_fn.node_name = f"MaxUnpool{n}DBackward0"
    return out


def _max_unpool_samples(n):
    def samples(make):
        if n == 2:
            x = make((1, 2, 4, 4), requires_grad=False)
            values, idx = max_pool2d(x, 2, return_indices=True)
            x5 = make((1, 1, 5, 5), requires_grad=False)
            v5, i5 = max_pool2d(x5, 2, return_indices=True)
            return [Sample((values.detach().requires_grad_(), idx, 2), name="kernel 2"),
                    Sample((v5.detach().requires_grad_(), i5, 2), dict(output_size=(5, 5)),
                           name="output_size")]
        if n == 1:
            x = make((2, 2, 6), requires_grad=False)
            values, idx = max_pool1d(x, 3, stride=3, padding=1, return_indices=True)
            return [Sample((values.detach().requires_grad_(), idx, 3),
                           dict(stride=3, padding=1, output_size=(6,)), name="pad")]
        x = make((1, 1, 2, 4, 4), requires_grad=False)
        values, idx = max_pool3d(x, 2, return_indices=True)
        return [Sample((values.detach().requires_grad_(), idx, 2), name="kernel 2")]
    return samples


@register_op(namespace="nn.functional", samples=_max_unpool_samples(1))
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: zeros everywhere except ``input`` placed at
    ``indices`` (positions in each output row). Time O(N * L)."""
    return _max_unpool(1, "max_unpool1d", input, indices, kernel_size, stride, padding,
                       output_size)


@register_op(namespace="nn.functional", samples=_max_unpool_samples(2))
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d: an (H_out, W_out) plane of zeros with
    ``input[..., p]`` written at flat position ``indices[..., p]``. Default output size
    ``(H - 1) * stride - 2 * padding + kernel``. Time O(N * H_out * W_out)."""
    return _max_unpool(2, "max_unpool2d", input, indices, kernel_size, stride, padding,
                       output_size)


@register_op(namespace="nn.functional", samples=_max_unpool_samples(3))
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d (flat indices in each (D, H, W) volume)."""
    return _max_unpool(3, "max_unpool3d", input, indices, kernel_size, stride, padding,
                       output_size)


# ----------------------------------------------------------------------------- interpolate
_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_MODE_NAMES = {"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear",
               "bilinear": "Bilinear", "bicubic": "Bicubic", "trilinear": "Trilinear",
               "lanczos": "Lanczos"}
_CUBIC_A = -0.75


def _interp_taps(mode, size, out, scale, align_corners, dims):
    """Tap indices (out, taps) and weights (out, taps) along one dim, PyTorch's rules.
    ``scale`` is input/output as PyTorch uses it (1/scale_factor when given)."""
    dst = np.arange(out, dtype=np.float64)
    if mode in ("nearest", "nearest-exact"):
        # PyTorch computes these in single precision: floorf(float(dst) * float(scale)),
        # except that its 2-D nearest kernel copies an unchanged size and halves
        # indices for an exact doubling, whatever the scale_factor
        if mode == "nearest" and dims == 2 and out == size:
            return np.arange(out)[:, None], None
        if mode == "nearest" and dims == 2 and out == 2 * size:
            return (np.arange(out) // 2)[:, None], None
        shift = np.float32(0.5 if mode == "nearest-exact" else 0.0)
        source = np.floor((dst.astype(np.float32) + shift) * np.float32(scale))
        return np.minimum(source.astype(np.int64), size - 1)[:, None], None
    if mode != "bicubic" and out == size:
        # PyTorch's linear kernels copy a dim whose size doesn't change, whatever the
        # scale_factor (bicubic doesn't)
        return np.arange(out)[:, None], None
    if align_corners:
        src = dst * ((size - 1) / (out - 1) if out > 1 else 0.0)
    else:
        src = (dst + 0.5) * scale - 0.5
        if mode != "bicubic":
            src = np.maximum(src, 0.0)
    if mode != "bicubic":
        i0 = np.floor(src).astype(np.int64)
        i0 = np.minimum(i0, size - 1)
        i1 = np.minimum(i0 + 1, size - 1)
        t = src - i0
        return np.stack([i0, i1], 1), np.stack([1.0 - t, t], 1)
    i = np.floor(src).astype(np.int64)
    t = src - i
    a = _CUBIC_A

    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    weights = np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], 1)
    index = np.clip(np.stack([i - 1, i, i + 1, i + 2], 1), 0, size - 1)
    return index, weights


_AA_SUPPORT = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}  # half the filter width


def _aa_filter(mode, x):
    x = np.abs(x)
    if mode == "bilinear":
        return np.where(x < 1, 1 - x, 0.0)
    if mode == "bicubic":  # Keys' cubic with a = -0.5, as PIL and PyTorch's antialias use
        a = -0.5
        return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                        np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0))
    return np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0.0)  # Lanczos-3


def _aa_taps(mode, size, out, scale):
    """Antialiased taps (PIL's resampling, as PyTorch's ``antialias=True``): when shrinking,
    the filter is stretched by ``scale`` (input/output) so every input contributes; the
    taps are cut at the borders and each output's weights are renormalized to sum 1."""
    stretch = scale if scale >= 1.0 else 1.0
    support = _AA_SUPPORT[mode] * stretch
    center = scale * (np.arange(out) + 0.5)
    start = np.maximum((center - support + 0.5).astype(np.int64), 0)
    stop = np.minimum((center + support + 0.5).astype(np.int64), size)
    width = max(int((stop - start).max()) if out else 1, 1)
    j = np.arange(width)
    index = start[:, None] + j
    weight = _aa_filter(mode, (index - center[:, None] + 0.5) / stretch)
    weight = np.where(j < (stop - start)[:, None], weight, 0.0)
    total = weight.sum(1, keepdims=True)
    weight = np.where(total != 0, weight / np.where(total != 0, total, 1.0), weight)
    return np.minimum(index, size - 1), weight


def _interpolate_samples(make):
    return [Sample((make((1, 2, 3)),), dict(size=5, mode="nearest"), name="nearest up"),
            Sample((make((1, 1, 5, 4)),), dict(scale_factor=0.6, mode="nearest"),
                   name="nearest down scale"),
            Sample((make((1, 1, 3, 4)),), dict(size=(5, 3), mode="bilinear"),
                   name="bilinear"),
            Sample((make((1, 1, 3, 3)),), dict(scale_factor=1.5, mode="bilinear",
                                               align_corners=True), name="bilinear corners"),
            Sample((make((1, 1, 3, 4)),), dict(size=(4, 5), mode="bicubic"), name="bicubic"),
            Sample((make((2, 1, 4)),), dict(scale_factor=1.7, mode="linear"),
                   name="linear scale"),
            Sample((make((1, 2, 4)),), dict(size=7, mode="nearest-exact"), name="exact"),
            Sample((make((1, 1, 2, 3, 2)),), dict(scale_factor=(1.5, 1, 2), mode="trilinear",
                                                  align_corners=True), name="trilinear"),
            Sample((make((1, 1, 2, 2, 3)),), dict(scale_factor=1.7, mode="nearest",
                                                  recompute_scale_factor=True),
                   name="nearest 3-D recompute"),
            Sample((make((1, 2, 5, 4)),), dict(size=(3, 6), mode="area"), name="area"),
            Sample((make((1, 1, 7, 6)),), dict(size=(3, 4), mode="bilinear", antialias=True),
                   name="bilinear antialias"),
            Sample((make((1, 1, 6, 5)),), dict(scale_factor=(0.5, 1.5), mode="bicubic",
                                               align_corners=True, antialias=True),
                   name="bicubic antialias corners"),
            Sample((make((1, 1, 7, 4)),), dict(size=(3, 5), mode="lanczos", antialias=True),
                   name="lanczos")]


@register_op(namespace="nn.functional", samples=_interpolate_samples)
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the last 1-3 dims by ``size`` or ``scale_factor``, with ``mode`` 'nearest'
    (PyTorch's legacy rule: source = floor(dst * in / out)), 'nearest-exact', 'linear' /
    'bilinear' / 'trilinear' (align_corners: corners map to corners; else half-pixel
    centres), 'bicubic' (cubic convolution, a = -0.75, clamped borders) or 'area'
    (adaptive average pooling). ``antialias=True`` (4-D bilinear / bicubic, and 'lanczos',
    which needs it) resamples as PIL does: the filter widens by the shrink factor so every
    input contributes, and the weights are cut at the borders and renormalized (PyTorch's
    forward, though not its backward, differs where the output width is 1).
    One node, named as PyTorch names it per mode
    (UpsampleBilinear2DBackward0, ...; AdaptiveAvgPool{n}DBackward0 for 'area'). Separable:
    one gather-and-weigh pass per dim, time O(N * prod(out) * taps) per pass; the backward
    is the exact adjoint of the forward (PyTorch's 3-D nearest backward with a non-integer
    ``scale_factor`` reads other positions than its forward).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.interpolate(ember.tensor([[[0.0, 2.0]]]), scale_factor=2, mode="linear")
    tensor([[[0.0000, 0.5000, 1.5000, 2.0000]]])
    """
    ensure_tensor(input, "interpolate")
    ndim = input._data.ndim
    n = ndim - 2
    if n < 1 or n > 3:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {ndim}D) for the modes: nearest | linear | bilinear "
                                  f"| bicubic | trilinear | area | nearest-exact (got {mode})")
    modes = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area",
             "lanczos")
    if mode not in modes:
        raise NotImplementedError(f"interpolate(): mode '{mode}' is not one of {modes}")
    if antialias and not (mode in _AA_SUPPORT and n == 2):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "lanczos":
        if n != 2:
            raise NotImplementedError(f"Got {ndim}D input, but lanczos mode needs 4D input")
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode in _MODE_DIMS and _MODE_DIMS[mode] != n:
        raise NotImplementedError(f"Got {ndim}D input, but {mode} mode needs "
                                  f"{_MODE_DIMS[mode] + 2}D input")
    if align_corners is not None and mode not in _MODE_DIMS and mode != "lanczos":
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if input.dtype is dtypes.uint8 and mode == "bilinear":
        # uint8 images: in float, rounded half up (PyTorch's fixed-point kernel may differ by 1)
        smooth = interpolate(input.float(), size, scale_factor, mode, align_corners,
                             recompute_scale_factor, antialias)
        return (smooth + 0.5).floor().clamp(0, 255).to(dtypes.uint8)
    if input._data.dtype.kind not in "fV" and mode not in ("nearest", "nearest-exact"):
        raise NotImplementedError(f"interpolate(): mode '{mode}' needs a floating-point "
                                  f"input, got {input.dtype.name} (nearest modes accept it)")
    in_size = tuple(input.shape[2:])
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size
                         is not None else "either size or scale_factor should be defined")
    scales = None
    if size is not None:
        if isinstance(size, (list, tuple)) and len(size) != n:
            raise ValueError(f"Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(in_size)} and output size of {list(size)}.")
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        out = _tuple(size, n, "interpolate", "size") if isinstance(size, (list, tuple)) \
            else (int(size),) * n
    else:
        factors = tuple(scale_factor) if isinstance(scale_factor, (list, tuple)) \
            else (scale_factor,) * n
        if len(factors) != n:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(in_size)} and scale_factor of shape {list(factors)}.")
        out = tuple(int(math.floor(float(s) * float(f))) for s, f in zip(in_size, factors))
        if not recompute_scale_factor:
            scales = tuple(1.0 / float(f) for f in factors)
    if mode == "area":
        return _adaptive_avg(n, "interpolate", input, out)
    if any(o <= 0 for o in out) or any(s <= 0 for s in in_size):
        names = ("D", "H", "W")[3 - n:]
        def dims(sizes):
            return ", ".join(f"{a}: {b}" for a, b in zip(names, sizes))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({dims(in_size)}){' and' if n == 1 else ''} output ({dims(out)})")
    taps = []
    for i in range(n):
        scale = scales[i] if scales is not None else in_size[i] / out[i]
        if antialias:
            if align_corners:
                scale = (in_size[i] - 1) / (out[i] - 1) if out[i] > 1 else 0.0
            index, weight = _aa_taps(mode, in_size[i], out[i], scale)
        else:
            index, weight = _interp_taps(mode, in_size[i], out[i], scale, bool(align_corners),
                                         n)
        taps.append((2 + i, index, weight, in_size[i]))
    name = f"Upsample{_MODE_NAMES[mode]}{n}D{'Aa' if antialias else ''}Backward0"
    return _resample(input, taps, name)


# ----------------------------------------------------------------------------- pixel shuffle
@register_op(namespace="nn.functional", exported_in=("ember",),
             samples=lambda make: [Sample((make((1, 8, 2, 3)), 2), name="r=2"),
                                   Sample((make((9, 1, 2)), 3), name="unbatched r=3")])
def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r): ``out[c, h r + i, w r + j] =
    in[c r^2 + i r + j, h, w]``. One node (PixelShuffleBackward0); time O(numel).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.pixel_shuffle(ember.arange(4.0).reshape(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    ensure_tensor(input, "pixel_shuffle")
    r = int(upscale_factor)
    if input._data.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input._data.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    return PixelShuffle.apply(input, r)


@register_op(namespace="nn.functional", exported_in=("ember",),
             samples=lambda make: [Sample((make((1, 2, 4, 2)), 2), name="r=2"),
                                   Sample((make((1, 3, 6)), 3), name="unbatched r=3")])
def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of pixel_shuffle. One node
    (PixelUnshuffleBackward0); time O(numel).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.pixel_unshuffle(ember.arange(4.0).reshape(1, 1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    ensure_tensor(input, "pixel_unshuffle")
    r = int(downscale_factor)
    if input._data.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input._data.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        which, value = ("height", h) if h % r else ("width", w)
        raise RuntimeError(f"pixel_unshuffle expects {which} to be divisible by "
                           f"downscale_factor, but input.size({-2 if h % r else -1})={value} "
                           f"is not divisible by {r}")
    return PixelUnshuffle.apply(input, r)


def _shuffle(x, r):
    """(*, C r^2, H, W) -> (*, C, H r, W r) on arrays: a reshape, a transpose, a copy."""
    *lead, c, h, w = x.shape
    k = len(lead)
    x = x.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    x = x.transpose(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return x.reshape(tuple(lead) + (c // (r * r), h * r, w * r))


def _unshuffle(x, r):
    """(*, C, H r, W r) -> (*, C r^2, H, W) on arrays, the inverse of ``_shuffle``."""
    *lead, c, h, w = x.shape
    k = len(lead)
    x = x.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    x = x.transpose(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return x.reshape(tuple(lead) + (c * r * r, h // r, w // r))


class PixelShuffle(Function):
    """pixel_shuffle as one node; its adjoint is pixel_unshuffle (and back), so double
    backward is the same pair again."""

    array_backward = True
    node_name = "PixelShuffleBackward0"

    @staticmethod
    def forward(ctx, x, r):
        ctx.r = r
        return _shuffle(x, r)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(PixelUnshuffle, grad, ctx.r), None


class PixelUnshuffle(Function):
    """pixel_unshuffle as one node; its adjoint is pixel_shuffle."""

    array_backward = True
    node_name = "PixelUnshuffleBackward0"

    @staticmethod
    def forward(ctx, x, r):
        ctx.r = r
        return _unshuffle(x, r)

    @staticmethod
    def backward(ctx, grad):
        return ctx.math.apply(PixelShuffle, grad, ctx.r), None
