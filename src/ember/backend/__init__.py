"""The only place that knows about devices: which array module serves a device, and moving
arrays between devices. Ops ask for ``xp`` and never test for CuPy themselves."""
from __future__ import annotations

import contextlib
import math

import numpy as np

from . import cpu, cuda
from .device import CPU, device

__all__ = ["device", "CPU", "matmul", "einsum", "where", "xp_of", "xp_for_device", "move",
           "parse_device", "scatter_add", "scatter_reduce", "as_strided", "fused",
           "preserved_strides", "channels_last_strides", "empty_with_strides",
           "internal_overlap", "writable"]


def parse_device(value) -> device:
    """A concrete device: 'cuda' becomes 'cuda:<current>', checked to exist."""
    d = value if isinstance(value, device) else device(value)
    if d.type == "cpu":
        return CPU
    if not cuda.is_available():
        cuda.cupy()  # raises with the reason
    index = cuda.current_device() if d.index is None else d.index
    if index >= cuda.device_count():
        raise RuntimeError(
            f"CUDA error: invalid device ordinal: cuda:{index} requested but only "
            f"{cuda.device_count()} CUDA device(s) exist"
        )
    return _cuda_devices.setdefault(index, device("cuda", index))


_cuda_devices: dict[int, device] = {}


def xp_for_device(d: device):
    return np if d.type == "cpu" else cuda.cupy()


def xp_of(array):
    """NumPy for NumPy arrays, CuPy for CuPy arrays."""
    return np if isinstance(array, (np.ndarray, np.generic)) else cuda.cupy()


def device_of_array(array) -> device:
    if isinstance(array, np.ndarray):
        return CPU
    return parse_device(device("cuda", cuda.array_device_index(array)))


def move(array, src: device, dst: device, copy: bool = False):
    """The array on ``dst`` (the same object when it is already there and copy is False)."""
    if src == dst:
        return array.copy() if copy else array
    if dst.type == "cpu":
        return cuda.to_host(array)
    if src.type == "cpu":
        return cuda.from_host(array, dst.index)
    cp = cuda.cupy()
    with cp.cuda.Device(dst.index):
        return cp.array(array, copy=True)


def fused(formula, namespace):
    """``formula(namespace, *args)`` for CuPy arrays as one fused CUDA kernel: the callable
    that ``backend/cuda.py`` makes with ``cupy.fuse`` once per formula and keeps. Called
    with CuPy arrays (and Python or NumPy scalars) it launches one kernel; the formula's
    own Python lines run only while CuPy traces it. On NumPy arrays call the formula
    itself (``ArrayMath.elementwise`` does).

    >>> def scaled_tanh(m, x, scale):
    ...     return m.tanh(x) * scale
    >>> array_math(np).elementwise(scaled_tanh, np.zeros(2), 2.0)  # the NumPy lane
    array([0., 0.])

    On CUDA, ``fused(scaled_tanh, array_math(cupy))(x, 2.0)`` is one kernel launch.
    """
    return cuda.fused(formula, namespace)


def scatter_add(target, index, values) -> None:
    """``target[index] += values``, accumulating repeated indices, on the array's device."""
    if isinstance(target, np.ndarray):
        cpu.scatter_add(target, index, values)
    else:
        cuda.scatter_add(target, index, values)


def scatter_reduce(target, index, values, op: str) -> None:
    """``target[index] = op(target[index], values)`` applying every repeated index; op is
    'add', 'multiply', 'maximum' or 'minimum'."""
    if isinstance(target, np.ndarray):
        cpu.scatter_reduce(target, index, values, op)
    else:
        cuda.scatter_reduce(target, index, values, op)


def as_strided(array, shape, strides, writeable: bool = True):
    """A view with the given shape and byte strides (sliding windows)."""
    if isinstance(array, np.ndarray):
        return cpu.as_strided(array, shape, strides, writeable)
    return cuda.as_strided(array, shape, strides, writeable)


def preserved_strides(array) -> tuple:
    """The strides, in elements, of a copy of ``array`` that keeps its layout, as PyTorch's
    ``memory_format=torch.preserve_format`` lays one out: ``array``'s own strides when its
    elements fill one block without gaps or repeats (in any order of dims; an empty array
    counts), else dense strides whose dims lie in ``array``'s order of strides."""
    shape = array.shape
    itemsize = array.itemsize
    strides = tuple(s // itemsize for s in array.strides)
    if all(s >= 0 for s in strides) and (0 in shape or _dense(array)):
        return strides
    # PyTorch's infer_dense_strides: an insertion sort of the dims, innermost first, by
    # stride and then size, in which a stride-0 dim compares equal to every other dim
    order = list(range(len(shape)))[::-1]
    for i in range(1, len(order)):
        moving = i
        for j in range(i - 1, -1, -1):
            a, b = abs(strides[order[j]]), abs(strides[order[moving]])
            if a == 0 or b == 0:
                continue
            if a < b:
                break
            if a > b or shape[order[j]] > shape[order[moving]]:
                order[j], order[moving] = order[moving], order[j]
                moving = j
    out = [0] * len(shape)
    step = 1
    for d in order:
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def channels_last_strides(shape) -> tuple:
    """The strides, in elements, of ``shape`` (4-D NCHW or 5-D NCDHW) with the channels
    innermost: PyTorch's ``channels_last`` / ``channels_last_3d``."""
    strides = [0] * len(shape)
    strides[1] = 1
    step = shape[1]
    for d in range(len(shape) - 1, 1, -1):
        strides[d] = step
        step *= shape[d]
    strides[0] = step
    return tuple(strides)


def empty_with_strides(xp, shape, dtype, strides):
    """An uninitialized array of ``shape`` with the given strides (in elements) over a
    block of exactly its elements: ``strides`` must be dense (a permutation of a
    row-major layout; the strides of size-1 dims are free). Its memory order is the
    block's, so a flat array of draws viewed this way fills it as PyTorch fills a tensor."""
    return with_strides(xp.empty(math.prod(shape), dtype), shape, strides)


def with_strides(flat, shape, strides):
    """The 1-D ``flat`` (of as many elements as ``shape`` has) viewed with ``shape`` and
    dense ``strides`` in elements (see empty_with_strides)."""
    return as_strided(flat, tuple(shape), tuple(s * flat.itemsize for s in strides))


def internal_overlap(array) -> bool:
    """Whether two elements of ``array`` share a memory location (an expanded view, windows
    of unfold with a step below their size, an overlapping as_strided). Decided from the
    shape and strides, exactly: a layout whose dims, ordered by stride, each step past all
    the smaller ones is free of overlap; anything else is checked element by element."""
    dims = sorted((abs(s), n) for s, n in zip(array.strides, array.shape) if n > 1)
    if not dims or 0 in array.shape:
        return False
    reach = array.itemsize  # bytes spanned by the dims before, plus one element
    for stride, size in dims:
        if stride == 0:
            return True
        if stride < reach:
            break
        reach += stride * (size - 1)
    else:
        return False
    offsets = np.zeros((), np.int64)
    for stride, size in dims:
        offsets = np.add.outer(offsets, np.arange(size, dtype=np.int64) * stride)
    offsets = np.sort(offsets, axis=None)
    return bool((offsets[1:] - offsets[:-1] < array.itemsize).any())


def writable(array):
    """``array``, or a writable array over the same memory where only a read-only flag kept
    it from being written (a view taken from an expanded or overlapping view, whose own
    elements don't overlap); None when the memory itself is read-only (a NumPy array made
    read-only by its owner)."""
    if isinstance(array, np.ndarray):
        return cpu.writable(array)
    return cuda.writable(array)


def partial_overlap(a, b) -> bool:
    """Whether two arrays share memory without being the same view of it (``x[1:]`` and
    ``x[:-1]``, ``x`` and ``x.t()``): a write of one computed from the other would then
    depend on the order elements are written, so PyTorch's in-place ops refuse it. Like
    PyTorch, this compares dense layouts only and lets strided ones (``x[::2]``) pass."""
    if a is b or _owner(a) != _owner(b):
        return False
    if not (_dense(a) and _dense(b)):
        return False
    if a.shape == b.shape and a.strides == b.strides and _pointer(a) == _pointer(b):
        return False  # the very same elements: x.add_(x)
    return bool(xp_of(a).may_share_memory(a, b))


def _dense(array) -> bool:
    """Its elements fill one block without gaps or repeats, in some order of dims."""
    expected = array.itemsize
    for stride, size in sorted((s, n) for s, n in zip(array.strides, array.shape) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _owner(array) -> int:
    """The memory block an array lives in (NumPy keeps its owner as every view's base)."""
    if isinstance(array, np.ndarray):
        return id(array.base if array.base is not None else array)
    return array.data.mem.ptr


def _pointer(array) -> int:
    if isinstance(array, np.ndarray):
        return array.__array_interface__["data"][0]
    return array.data.ptr


def storage_of(array):
    """(1-D array over the memory block ``array`` lives in, ``array``'s offset in it), or
    None when that block is not one dense run of ``array``'s dtype."""
    if isinstance(array, np.ndarray):
        return cpu.storage_of(array)
    return cuda.storage_of(array)


def storage_offset(array) -> int:
    """Where ``array``'s first element sits in its memory block, in elements."""
    if isinstance(array, np.ndarray):
        return cpu.storage_offset(array)
    return cuda.storage_offset(array)


def view_reshape(array, shape):
    """Reshape sharing memory, or ValueError when that needs a copy."""
    if isinstance(array, np.ndarray):
        return cpu.view_reshape(array, shape)
    return cuda.view_reshape(array, shape)


def linalg_errors(array):
    """A context in which ``xp.linalg`` raises numpy.linalg.LinAlgError for a singular or
    non-positive-definite input: NumPy always does, CuPy only when asked."""
    if isinstance(array, np.ndarray):
        return contextlib.nullcontext()
    return cuda.linalg_errstate()


def matmul(xp, a, b):
    """``a @ b`` in the operands' dtype: NumPy multiplies bfloat16 in float32 (as BLAS
    accumulates) and returns float32, so the result is rounded back."""
    out = xp.matmul(a, b)
    return out if out.dtype == a.dtype else out.astype(a.dtype)


def c_order(array):
    """A C-ordered copy of ``array`` (fast for transposed matrices on the CPU)."""
    if isinstance(array, np.ndarray):
        return cpu.c_order(array)
    return array.copy(order="C")


_ZERO_TYPES = (int, float)


def where(xp, condition, a, b):
    """``xp.where`` that keeps the array operand's dtype when the other is a Python
    number: NumPy widens bfloat16 meeting a Python float."""
    if xp is np:
        if type(b) in _ZERO_TYPES and b == 0 and not math.copysign(1, b) < 0:
            out = cpu.select_or_zero(condition, a, True)
            if out is not None:
                return out
        elif type(a) in _ZERO_TYPES and a == 0 and not math.copysign(1, a) < 0:
            out = cpu.select_or_zero(condition, b, False)
            if out is not None:
                return out
    out = xp.where(condition, a, b)
    like = a if hasattr(a, "dtype") else b
    if hasattr(like, "dtype") and not (hasattr(a, "dtype") and hasattr(b, "dtype")) \
            and out.dtype != like.dtype and like.dtype.kind == "V":
        return out.astype(like.dtype)
    return out


def einsum(xp, equation: str, *arrays):
    """``xp.einsum`` in the operands' dtype; NumPy has no bfloat16 einsum, so bfloat16
    runs in float32 and is rounded back (as a bfloat16 GEMM accumulates in float32)."""
    low = arrays[0].dtype if arrays and arrays[0].dtype.kind == "V" else None
    if low is not None:
        arrays = tuple(a.astype(np.float32) for a in arrays)
    out = xp.einsum(equation, *arrays, optimize=len(arrays) > 1)
    return out if low is None else out.astype(low)


def special_function(array, name: str):
    """SciPy's special function ``name`` for arrays on ``array``'s device: SciPy's on the
    CPU, cupyx.scipy.special's on CUDA, or SciPy's on a host copy where CuPy has none.
    Tuple results (``airy``) come back as tuples of arrays."""
    if isinstance(array, np.ndarray):
        return cpu.scipy_special(name)
    own = cuda.scipy_special(name)
    if own is not None:
        return own
    host = cpu.scipy_special(name)
    index = cuda.array_device_index(array)

    def on_host(*arrays):
        out = host(*(cuda.to_host(a) for a in arrays))
        if isinstance(out, tuple):
            return tuple(cuda.from_host(np.asarray(o), index) for o in out)
        return cuda.from_host(np.asarray(out), index)
    return on_host
