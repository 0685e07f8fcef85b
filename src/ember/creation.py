"""Making tensors: from data (tensor, as_tensor, from_numpy, from_dlpack), filled
(zeros, ones, full, empty, eye, arange, linspace), random (rand, randn, randint,
randperm, normal), and the *_like forms. Every one takes ``dtype=``, ``device=`` and
``requires_grad=``."""
from __future__ import annotations

import itertools
import math
import numbers
import operator
import warnings

import numpy as np

from . import backend, dtypes
from ._exact_float import fma64
from ._mt_stream import TorchCompatibleGenerator
from ._mt_stream import normal as mt_normal
from ._mt_stream import random_from_to as mt_random_from_to
from ._mt_stream import randperm as mt_randperm
from ._mt_stream import uniform as mt_uniform
from .outputs import out_keyword, sized
from .random import generator_for
from .runtime import channels_last, channels_last_3d, contiguous_format, preserve_format
from .tensor import Tensor

__all__ = ["tensor", "as_tensor", "from_numpy", "from_dlpack", "zeros", "ones", "full",
           "empty", "eye", "arange", "linspace", "logspace", "rand", "randn", "randint",
           "randperm", "zeros_like", "ones_like", "full_like", "empty_like",
           "rand_like", "randn_like", "randint_like", "is_tensor", "numel", "scalar_tensor",
           "set_default_device", "get_default_device"]


_DEFAULT_DEVICE = [backend.CPU]


def set_default_device(device) -> None:
    """The device the factories (``tensor``, ``zeros``, ``rand``, ...) use when given no
    ``device=``; ``None`` restores the CPU.

    >>> import ember
    >>> ember.set_default_device("cpu")
    >>> ember.zeros(2).device
    device(type='cpu')
    """
    _DEFAULT_DEVICE[0] = backend.CPU if device is None else backend.parse_device(device)


def get_default_device():
    """The device factories use when given no ``device=`` (see ``set_default_device``)."""
    return _DEFAULT_DEVICE[0]


def _device(device):
    return _DEFAULT_DEVICE[0] if device is None else backend.parse_device(device)


def _finish(array, device, requires_grad: bool) -> Tensor:
    """Put a host or device array on ``device`` and wrap it."""
    if device.type == "cuda" and isinstance(array, np.ndarray):
        array = backend.move(array, backend.CPU, device)
    t = Tensor._make(array, device, False)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _plain(data):
    """Nested data with tensors replaced by Python numbers/lists."""
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_plain(d) for d in data]
    return data


def _infer_dtype(array: np.ndarray, data) -> dtypes.dtype:
    kind = array.dtype.kind
    if kind == "b":
        return dtypes.bool
    if kind in "iu":
        return dtypes.from_numpy(array.dtype) if isinstance(data, (np.ndarray, np.generic)) \
            else dtypes.int64
    if kind in "fV":
        if isinstance(data, np.ndarray) or isinstance(data, np.generic):
            return dtypes.from_numpy(array.dtype)
        return dtypes.get_default_dtype()
    if kind == "c":
        raise TypeError("ember has no complex dtypes")
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _to_array(data, what: str) -> np.ndarray:
    if isinstance(data, (str, bytes)):
        raise TypeError(f"{what}(): new(): invalid data type '{type(data).__name__}'")
    try:
        array = np.asarray(data)
    except ValueError as error:
        if isinstance(data, (list, tuple)):
            data = _plain(data)
            try:
                array = np.asarray(data)
            except ValueError:
                raise ValueError(f"{what}(): nested sequences of unequal length can't make a "
                                 f"tensor ({error})") from None
        else:
            raise
    except RuntimeError:
        array = np.asarray(_plain(data))
    if array.dtype == object:
        array = np.asarray(_plain(data))
        if array.dtype == object:
            raise TypeError(f"{what}(): could not make a tensor from {type(data).__name__} "
                            "(nested sequences must be numbers of equal lengths)")
    return array


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (numbers, nested lists, NumPy arrays).

    Python floats become the default dtype (float32), ints int64, bools bool; NumPy arrays
    keep their dtype.

    >>> ember.tensor([[1, 2], [3, 4]])
    tensor([[1, 2],
            [3, 4]])
    """
    target = _device(device)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.clone().detach() or "
                      "sourceTensor.clone().detach().requires_grad_(True), rather than "
                      "ember.tensor(sourceTensor).", UserWarning, stacklevel=2)
        out = data.detach().to(dtype=dtype or data.dtype, device=target, copy=True)
        return out.requires_grad_(requires_grad) if requires_grad else out
    if hasattr(data, "__cuda_array_interface__") or (
            hasattr(data, "__dlpack_device__") and not isinstance(data, np.ndarray)
            and data.__dlpack_device__()[0] != 1):
        source = from_dlpack(data)
        return source.to(dtype=dtype or source.dtype, device=target, copy=True).requires_grad_(
            requires_grad)
    python = not isinstance(data, (np.ndarray, np.generic))
    if isinstance(data, (list, tuple)) and not _numbers_only(data):
        # NumPy values or tensors inside (their dtypes promote), or something that is not a
        # number: PyTorch's checks, in Python (plain numbers take NumPy's fast path)
        _check_nested(data, 0, _nested_shape(data))
        inferred = _nested_dtype(data)
        if inferred is not None:  # NumPy values or tensors inside: their dtypes promote
            d = dtypes.to_dtype(dtype) if dtype is not None else inferred
            with np.errstate(over="ignore", invalid="ignore"):
                array = np.array(_scalars(data), dtype=d.numpy)
            return _finish(array, target, requires_grad)
    if data is None:
        raise RuntimeError("Could not infer dtype of NoneType")
    try:
        array = _to_array(data, "tensor")
    except TypeError:
        if not python or not _numbers(data):
            raise
        array = _beyond_int64(data, dtype)
    except ValueError:
        if isinstance(data, (list, tuple)):
            _check_nested(data, 0, _nested_shape(data))  # PyTorch's words for ragged data
        raise
    peak = None
    if python and array.dtype.kind == "f" and array.size:
        peak = np.abs(array).max()
        if peak >= 2 ** 63:
            array = _beyond_int64(data, dtype)  # NumPy's float for ints past 2**63, or floats
    d = dtypes.to_dtype(dtype) if dtype is not None else _infer_dtype(array, data)
    if python and d.numpy.kind in "iu" and array.size:
        _check_fits(array, d.numpy)
    if peak is not None and peak > _FLOAT_MAX.get(d.numpy, math.inf):
        with np.errstate(over="ignore"):  # float overflow gives inf, as in PyTorch
            array = np.array(array, dtype=d.numpy, copy=True)
    else:
        array = np.array(array, dtype=d.numpy, copy=True)
    return _finish(array, target, requires_grad)


# the largest finite values of the float dtypes a Python float may be narrowed to
_FLOAT_MAX = {np.dtype(t): float(np.finfo(t).max) for t in (np.float16, np.float32)}


_PYTHON_NUMBERS = {float, int, bool}
_SEQUENCES = {list, tuple}


def _numbers_only(data) -> bool:
    """Whether nested lists hold Python numbers alone, level by level (C-speed scans)."""
    while True:
        kinds = set(map(type, data))
        if kinds <= _PYTHON_NUMBERS:
            return True
        if not kinds <= _SEQUENCES:
            return False
        data = list(itertools.chain.from_iterable(data))


def _nested_shape(data) -> list:
    """The shape PyTorch reads off nested data: each level's first element's length."""
    shape = []
    while isinstance(data, (list, tuple)):
        shape.append(len(data))
        if not data:
            break
        data = data[0]
    if isinstance(data, np.ndarray):
        shape.extend(data.shape)
    return shape


def _check_nested(data, dim: int, shape: list) -> None:
    """PyTorch's errors for ragged data: a length that differs from the first's
    (ValueError), or a number where a sequence should be (TypeError)."""
    if dim >= len(shape):
        if isinstance(data, (list, tuple)) and data or isinstance(data, str):
            raise ValueError(f"too many dimensions '{type(data).__name__}'")
        return
    if not isinstance(data, (list, tuple, np.ndarray)):
        if isinstance(data, Tensor) and data.ndim:
            return
        raise TypeError(f"not a sequence: expected a sequence at dim {dim}, got "
                        f"{type(data).__name__}")
    if len(data) != shape[dim]:
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} "
                         f"(got {len(data)}): nested sequences of unequal length")
    if isinstance(data, (list, tuple)):
        for item in data:
            _check_nested(item, dim + 1, shape)


def _nested_dtype(data):
    """The dtype PyTorch infers for nested data holding NumPy scalars or arrays or
    tensors (each element's dtype, promoted with the Python numbers' ones), or None when
    it holds only Python numbers."""
    found = [False, False]  # a NumPy value or tensor seen; the warning given

    def walk(value):
        if isinstance(value, (list, tuple)):
            if value and isinstance(value[0], np.ndarray) and not found[1]:
                found[1] = True
                warnings.warn("Creating a tensor from a list of numpy.ndarrays is extremely "
                              "slow. Please consider converting the list to a single "
                              "numpy.ndarray with numpy.array() before converting to a "
                              "tensor.", UserWarning, stacklevel=4)
            result = None
            for item in value:
                d = walk(item)
                result = d if result is None else dtypes.promote_types(result, d)
            return result
        if isinstance(value, Tensor):
            found[0] = True
            return value.dtype
        if isinstance(value, (np.ndarray, np.generic)):
            found[0] = True
            return dtypes.from_numpy(value.dtype)
        if isinstance(value, (bool, int, float)):
            return dtypes.scalar_dtype(value)
        return None

    result = walk(data)
    return (result or dtypes.get_default_dtype()) if found[0] else None


def _scalars(data):
    """Nested data with tensors of one element as Python numbers and arrays as lists."""
    if isinstance(data, (list, tuple)):
        return [_scalars(d) for d in data]
    if isinstance(data, Tensor):
        if data.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data.item()
    if isinstance(data, np.ndarray):
        return data.tolist()
    return data


_OVERFLOW = "Overflow when unpacking long long"


def _numbers(data) -> bool:
    """Whether nested data holds only Python numbers (the case NumPy makes an object array
    of: an int beyond 64 bits)."""
    if isinstance(data, (list, tuple)):
        return all(_numbers(d) for d in data)
    return isinstance(data, (bool, int, float))


def _beyond_int64(data, dtype) -> np.ndarray:
    """Nested numbers with an int beyond 64 bits: floats when the data has a float or the
    dtype is a float one (an integer dtype then checks the values), else PyTorch's
    error."""
    def floats(d):
        return any(floats(v) for v in d) if isinstance(d, (list, tuple)) else \
            not isinstance(d, int)  # (a float, or a number type NumPy took as one)

    if floats(data) or dtype is not None and dtypes.to_dtype(dtype).is_floating_point:
        return np.asarray(_plain(data), dtype=np.float64)
    raise ValueError(_OVERFLOW)


def _check_fits(array: np.ndarray, target: np.dtype) -> None:
    """Python numbers going into an integer dtype must fit it, as PyTorch checks (NumPy
    would wrap them or turn NaN into the minimum). An unsigned dtype takes the negatives
    of its range (wrapped, as in C)."""
    if array.dtype == np.uint64 and target != np.uint64:  # Python ints past 2**63
        raise ValueError(_OVERFLOW)
    if array.dtype.kind not in "iuf":
        return
    info = np.iinfo(target)
    low = -info.max if target.kind == "u" else info.min
    if array.dtype.kind == "f" and not np.isfinite(array).all() or \
            array.min() < low or array.max() > info.max:
        raise RuntimeError(f"value cannot be converted to type {target.name} without "
                           "overflow")


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a NumPy array or Tensor when no conversion is
    needed."""
    if isinstance(data, Tensor):
        return data.to(dtype=dtype or data.dtype, device=device or data.device)
    if isinstance(data, np.ndarray) and (device is None or _device(device).type == "cpu"):
        if not data.dtype.isnative:
            raise ValueError("given numpy array has byte order different from the native "
                             "byte order. Conversion between byte orders is currently not "
                             "supported.")
        d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.from_numpy(data.dtype)
        array = data if data.dtype == d.numpy else data.astype(d.numpy)
        return Tensor._make(array, backend.CPU)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None) -> Tensor:
    """A tensor from ``obj`` sharing its memory when it can (``copy=None``), always copying
    (``copy=True``) or never (``copy=False``: ValueError when a copy is needed).

    >>> import numpy as np, ember
    >>> a = np.zeros(2, dtype=np.float32)
    >>> ember.asarray(a, copy=False).numpy() is not None
    True
    """
    out = as_tensor(obj, dtype=dtype, device=device)
    source = obj._data if isinstance(obj, Tensor) else obj
    if copy is True:
        out = out.detach().clone()
    elif copy is False:
        shared = isinstance(source, np.ndarray) and isinstance(out._data, np.ndarray) and \
            np.shares_memory(source, out._data)
        if not (shared or out._data is source):
            raise ValueError("asarray(): copy=False, but a copy is needed for this input")
    if requires_grad:
        if out is obj:
            out = out.detach()
        out.requires_grad_(True)
    return out


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with a NumPy array."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if not array.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    dtypes.from_numpy(array.dtype)  # raises for unsupported dtypes
    if not array.flags.writeable:
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support "
                      "non-writable tensors. This means writing to this tensor will result "
                      "in undefined behavior. You may want to copy the array to protect its "
                      "data or make it writable before converting it to a tensor.",
                      UserWarning, stacklevel=2)
    if array.dtype.kind == "u" and array.dtype != np.uint8:
        array = array.astype(dtypes.from_numpy(array.dtype).numpy)
    return Tensor._make(array, backend.CPU)


def from_dlpack(ext, *, device=None, copy=None) -> Tensor:
    """A tensor sharing memory with any DLPack producer (NumPy, CuPy, PyTorch, JAX...);
    ``device=`` moves it there, ``copy=True`` always copies."""
    out = _from_dlpack(ext)
    if device is not None:
        out = out.to(device)
    return out.clone() if copy else out


class _Capsule:
    """A bare DLPack capsule (``to_dlpack``'s result) dressed as a producer: NumPy and
    CuPy consume objects with ``__dlpack__``, not capsules."""

    def __init__(self, capsule):
        import ctypes

        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        try:
            pointer = get(capsule, b"dltensor")
        except ValueError:
            raise RuntimeError("from_dlpack: the capsule was already consumed (a DLPack "
                               "capsule can be read once)") from None
        # DLTensor starts with the data pointer, then DLDevice (int32 type, int32 id)
        device = (ctypes.c_int32 * 2).from_address(pointer + ctypes.sizeof(ctypes.c_void_p))
        self._capsule, self._device = capsule, (int(device[0]), int(device[1]))

    def __dlpack__(self, stream=None, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def _from_dlpack(ext) -> Tensor:
    if isinstance(ext, Tensor):
        return ext
    if type(ext).__name__ == "PyCapsule":
        ext = _Capsule(ext)
    kind, index = ext.__dlpack_device__()
    if int(kind) == 1:  # kDLCPU
        return Tensor._make(np.from_dlpack(ext), backend.CPU)
    if int(kind) == 2:  # kDLCUDA
        cp = backend.cuda.cupy()
        return Tensor._make(cp.from_dlpack(ext), backend.parse_device(f"cuda:{index}"))
    raise RuntimeError(f"from_dlpack: unsupported DLPack device type {kind}")


def _shape(size, what: str) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    try:
        shape = tuple(operator.index(s) for s in size)
    except TypeError:  # floats, strings, None: PyTorch refuses them too
        raise TypeError(f"{what}(): size must be a sequence of ints, got {size!r}") from None
    for s in shape:
        if s < 0:
            raise RuntimeError(f"{what}(): Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
    return shape


def _require_size(size, what: str) -> None:
    """A factory taking ``*size`` needs one: ``empty()`` is PyTorch's TypeError, while
    ``empty(())`` (and ``size=()``) makes a 0-d tensor."""
    if len(size) == 0:
        raise TypeError(f'{what}() missing 1 required positional arguments: "size"')


def _dtype_or_default(dtype) -> dtypes.dtype:
    return dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)


def _filled(kind: str, size, dtype, device, requires_grad, what: str) -> Tensor:
    _require_size(size, what)
    shape = _shape(size, what)
    d = _dtype_or_default(dtype)
    target = _device(device)
    xp = backend.xp_for_device(target)
    array = getattr(xp, kind)(shape, d.numpy)
    return _finish(array, target, requires_grad)


@sized
def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of zeros, e.g. ``zeros(2, 3)`` or ``zeros((2, 3))``."""
    return _filled("zeros", size, dtype, device, requires_grad, "zeros")


@sized
def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ones."""
    return _filled("ones", size, dtype, device, requires_grad, "ones")


@sized
def empty(*size, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    """An uninitialized tensor (its values are whatever the memory held), laid out
    row-major or as ``memory_format`` says (``channels_last``: channels innermost).

    >>> ember.empty(2, 3, 4, 5, memory_format=ember.channels_last).stride()
    (60, 1, 15, 3)
    """
    if memory_format is None or memory_format is contiguous_format:
        return _filled("empty", size, dtype, device, requires_grad, "empty")
    _require_size(size, "empty")
    shape = _shape(size, "empty")
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    strides = _format_strides(shape, memory_format, "empty")
    flat = _filled("empty", ((_numel(shape),),), dtype, device, False, "empty")
    return _laid_out(flat, shape, strides, requires_grad)


@out_keyword
def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor filled with ``fill_value``; the dtype follows the value (bool, int64 or the
    default float) unless given."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    shape = _shape(tuple(size), "full")
    if isinstance(fill_value, (Tensor, np.generic)):
        fill_value = fill_value.item()
    d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.scalar_dtype(fill_value)
    target = _device(device)
    if d.numpy.kind in "iu" and not isinstance(fill_value, bool):
        fill_value = dtypes.checked_number(fill_value, d.numpy)
    array = backend.xp_for_device(target).full(shape, fill_value, d.numpy)
    return _finish(array, target, requires_grad)


def scalar_tensor(value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full((), value, dtype=dtype or dtypes.get_default_dtype(), device=device,
                requires_grad=requires_grad)


@out_keyword
def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The identity matrix (n x m)."""
    for value, name in ((n, "n"), (m, "m")):
        if value is not None and value < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    target = _device(device)
    array = backend.xp_for_device(target).eye(n, n if m is None else m,
                                              dtype=_dtype_or_default(dtype).numpy)
    return _finish(array, target, requires_grad)


@out_keyword
def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Values from ``start`` up to (not including) ``end`` by ``step``. Integer arguments
    give int64, any float argument the default float dtype.

    >>> ember.arange(1, 4, dtype=ember.float32)
    tensor([1., 2., 3.])
    """
    if end is None:
        start, end = 0, start
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = values
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange(): upper bound and larger bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    integral = all(isinstance(v, numbers.Integral) for v in values)
    d = dtypes.to_dtype(dtype) if dtype is not None else (
        dtypes.int64 if integral else dtypes.get_default_dtype())
    if d is dtypes.bool:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    count = math.ceil((end - start) / step)
    if count * np.dtype(d.numpy).itemsize >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes=[{count}]")
    target = _device(device)
    xp = backend.xp_for_device(target)
    if not integral and d.numpy.kind in "iu":
        # PyTorch computes in the integer type: start, end and step truncated first (and
        # the count from them for int64; from the doubles for narrower integers)
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError("arange(): step must be nonzero")
        if d is dtypes.int64:
            sign = 1 if step > 0 else -1
            count = -(-(end - start + step - sign) // step)
        integral = True
    if integral:
        array = xp.arange(start, start + count * step, step, dtype=np.int64)[:count]
        array = array.astype(d.numpy, copy=False)
    else:
        # start + i * step in double, then cast: the values PyTorch computes
        array = (start + xp.arange(count, dtype=np.float64) * step).astype(d.numpy)
    return _finish(array, target, requires_grad)


@out_keyword
def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    >>> ember.linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    _check_range_args("linspace", start, end, steps)
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    d = _dtype_or_default(dtype)
    target = _device(device)
    xp = backend.xp_for_device(target)
    # PyTorch fills the first half from start and the second half back from end, with the
    # step rounded to the result's precision and each value formed by a fused multiply-add;
    # float64 arithmetic on the rounded step reproduces that rounding for narrower results,
    # and a float64 result takes the fused multiply-add itself.
    work = d.numpy.type if d.is_floating_point else np.float64
    if not d.is_floating_point:  # PyTorch takes the bounds in the integer type first
        start, end = int(start), int(end)
    if steps == 1:
        values = xp.full((1,), start, dtype=np.float64)
    else:
        i = xp.arange(steps, dtype=np.float64)
        step = float(work((work(end) - work(start)) / work(steps - 1)))
        low, high = float(work(start)), float(work(end))
        if work is np.float64 and xp is np:
            values = np.where(i < steps // 2, fma64(i, step, low),
                              fma64(-(steps - 1 - i), step, high))
        else:
            values = xp.where(i < steps // 2, low + i * step, high - (steps - 1 - i) * step)
    array = values.astype(d.numpy) if d.is_floating_point else xp.trunc(values).astype(d.numpy)
    return _finish(array, target, requires_grad)


def _check_range_args(name: str, start, end, steps) -> None:
    """PyTorch's errors for linspace/logspace: steps an int >= 0, start and end numbers or
    0-d Tensors."""
    if isinstance(steps, Tensor) and steps.ndim == 0 and not steps.dtype.is_floating_point:
        steps = steps.item()
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"{name}() received an invalid combination of arguments: 'steps' must "
                        f"be an int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    for value, arg in ((start, "start"), (end, "end")):
        if isinstance(value, Tensor):
            if value.ndim != 0:
                raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, "
                                   f"but got {arg} with {value.ndim} dimension(s).")
        elif isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise TypeError(f"{name}() received an invalid combination of arguments: '{arg}' "
                            f"must be a number or a 0-d Tensor, not {type(value).__name__}")


@out_keyword
def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None,
             requires_grad=False) -> Tensor:
    """``base ** linspace(start, end, steps)``."""
    _check_range_args("logspace", start, end, steps)
    d = _dtype_or_default(dtype)
    if d is dtypes.float64 and steps > 1 and _device(device).type == "cpu":
        # PyTorch's double kernel: libm pow of each exponent (NumPy's vector pow can
        # differ by an ulp), the second half counted back from end
        a, b = (float(v.item() if isinstance(v, Tensor) else v) for v in (start, end))
        step, half = (b - a) / (steps - 1), steps // 2
        values = [math.pow(base, a + step * i) if i < half else
                  math.pow(base, b - step * (steps - i - 1)) for i in range(steps)]
        return _finish(np.array(values, dtype=np.float64), backend.CPU, requires_grad)
    exponents = linspace(start, end, steps, dtype=dtypes.float64, device=device)
    return (base ** exponents).to(_dtype_or_default(dtype)).requires_grad_(requires_grad)


@sized
def rand(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform samples from [0, 1)."""
    _require_size(size, "rand")
    shape = _shape(size, "rand")
    d = _dtype_or_default(dtype)
    target = _device(device)
    source = generator_for(target, generator)
    if isinstance(source, TorchCompatibleGenerator):
        if not d.is_floating_point:
            raise NotImplementedError(f'"check_uniform_bounds" not implemented for '
                                      f"'{d.scalar_name}': rand draws real numbers")
        array = mt_uniform(source, _numel(shape), _draw_kind(d)).reshape(shape)
        array = array.astype(d.numpy, copy=False)
        return _finish(array, target, requires_grad)
    array = source.random(shape, dtype=np.float64).astype(d.numpy)
    if d.is_floating_point and d.numpy.itemsize < 8:
        # a float64 draw just below 1 can round up to 1 in a narrower dtype: keep [0, 1)
        below_one = float(np.nextafter(d.numpy.type(1), d.numpy.type(0)))
        array = backend.xp_for_device(target).minimum(array, below_one).astype(d.numpy)
    return _finish(array, target, requires_grad)


@sized
def randn(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal samples."""
    _require_size(size, "randn")
    return _normals(_shape(size, "randn"), generator, dtype, device, requires_grad)


def _normals(shape, generator, dtype, device, requires_grad, contiguous=True) -> Tensor:
    """randn's draws; ``contiguous``: whether the tensor they fill is (PyTorch's CPU
    kernel fills a contiguous tensor in blocks of 16, any other one value at a time)."""
    d = _dtype_or_default(dtype)
    target = _device(device)
    source = generator_for(target, generator)
    if isinstance(source, TorchCompatibleGenerator):
        if not d.is_floating_point:
            raise NotImplementedError(f'"normal_kernel_cpu" not implemented for '
                                      f"'{d.scalar_name}': randn draws real numbers")
        array = mt_normal(source, _numel(shape), _draw_kind(d),
                          contiguous=contiguous).reshape(shape)
        array = array.astype(d.numpy, copy=False)
        return _finish(array, target, requires_grad)
    array = source.standard_normal(shape, dtype=np.float64)
    return _finish(array.astype(d.numpy), target, requires_grad)


@out_keyword
def randint(low=None, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False) -> Tensor:
    """Integers uniformly from [low, high); ``randint(high, size)`` starts at 0."""
    if low is None:  # randint(high=..., size=...)
        if high is None:
            raise TypeError("randint() missing required argument 'high'")
        low = 0
    for value in (low, high):
        if isinstance(value, Tensor) and value.ndim == 0 and not value.dtype.is_floating_point:
            continue
        if value is not None and not isinstance(value, (tuple, list)) and (
                isinstance(value, (bool, float, np.floating)) or
                not isinstance(value, (int, np.integer))):
            raise TypeError(f"randint() received an invalid combination of arguments: "
                            f"'low' and 'high' must be int, not {type(value).__name__}")
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    shape = _shape((size,) if isinstance(size, int) else tuple(size), "randint")
    d = dtypes.int64 if dtype is None else dtypes.to_dtype(dtype)
    low, high = int(low), int(high)
    if d.numpy.kind in "iu" or d is dtypes.bool:
        info = np.iinfo(d.numpy) if d is not dtypes.bool else None
        lo, hi = (0, 1) if info is None else (info.min, info.max)
        name = {"uint8": "unsigned char", "int8": "signed char", "int16": "short",
                "int32": "int", "int64": "long", "bool": "bool"}.get(d.numpy.name if
                                                                    info else "bool", "")
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {name}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {name}")
    target = _device(device)
    source = generator_for(target, generator)
    if isinstance(source, TorchCompatibleGenerator):
        array = mt_random_from_to(source, _numel(shape), int(low), int(high),
                                  d.numpy).reshape(shape)
    else:
        array = source.integers(low, high, shape, dtype=np.int64)
    return _finish(array.astype(d.numpy, copy=False), target, requires_grad)


@out_keyword
def randperm(n: int, *, generator=None, dtype=dtypes.int64, device=None,
             requires_grad=False) -> Tensor:
    """A random permutation of 0..n-1."""
    target = _device(device)
    kind = (dtypes.int64 if dtype is None else dtypes.to_dtype(dtype)).numpy
    source = generator_for(target, generator)
    if isinstance(source, TorchCompatibleGenerator):
        if n < 0:
            raise RuntimeError(f"randperm(): n must be non-negative, got {n}")
        array = mt_randperm(source, n).astype(kind)
    else:
        array = source.permutation(n).astype(kind)
    return _finish(array, target, requires_grad)


def _draw_kind(d) -> str:
    """The float dtype the CPU stream draws in for ``d`` (float32 for other formats)."""
    name = np.dtype(d.numpy).name
    return name if name in ("float16", "float32", "float64") else "float32"


def _numel(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def layout_strides(data, memory_format, op: str):
    """The strides, in elements, of a copy of the array ``data`` made with
    ``memory_format``, or None for row-major. PyTorch's default, ``preserve_format``,
    keeps a dense layout's strides and the order of any other's dims
    (``backend.preserved_strides``); ``contiguous_format`` is row-major;
    ``channels_last`` (4-D) and ``channels_last_3d`` (5-D) put the channels innermost."""
    if memory_format is None or memory_format is preserve_format:
        return None if data.flags.c_contiguous else backend.preserved_strides(data)
    return _format_strides(data.shape, memory_format, op)


def _format_strides(shape, fmt, op: str):
    """The strides of ``shape`` in the memory format ``fmt`` (None: row-major)."""
    if fmt is contiguous_format:
        return None
    if fmt is channels_last or fmt is channels_last_3d:
        rank = 4 if fmt is channels_last else 5
        if len(shape) != rank:
            raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
        return backend.channels_last_strides(shape)
    raise TypeError(f"{op}(): argument 'memory_format' must be ember.memory_format, not "
                    f"{type(fmt).__name__}")


def _laid_out(flat: Tensor, shape, strides, requires_grad: bool) -> Tensor:
    """The 1-D ``flat`` viewed as ``shape`` with the dense ``strides``: its values in
    memory order, the order PyTorch's kernels fill a new tensor in."""
    t = Tensor._make(backend.with_strides(flat._data, shape, strides), flat._device, False)
    return t.requires_grad_(True) if requires_grad else t


def _row_major(shape, strides) -> bool:
    """Whether ``strides`` are row-major for ``shape`` (size-1 dims' strides don't count)."""
    step = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != step:
            return False
        step *= n
    return True


def _like(function, input: Tensor, dtype, device, requires_grad, memory_format, *args,
          **kwargs):
    """``function(*args, shape, ...)`` for ``input``'s shape, dtype and device, laid out as
    ``input`` is (or as ``memory_format`` says): drawn flat, in memory order."""
    strides = layout_strides(input._data, memory_format, f"{function.__name__}_like")
    options = {"dtype": dtype or input.dtype, "device": device or input.device, **kwargs}
    if strides is None:
        return function(*args, tuple(input.shape), requires_grad=requires_grad, **options)
    flat = function(*args, (input.numel(),), requires_grad=False, **options)
    return _laid_out(flat, tuple(input.shape), strides, requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """Zeros with ``input``'s shape, dtype, device and layout (its strides, where its
    elements fill one block; see ``clone``)."""
    return _like(zeros, input, dtype, device, requires_grad, memory_format)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """Ones with ``input``'s shape, dtype, device and layout."""
    return _like(ones, input, dtype, device, requires_grad, memory_format)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """An uninitialized tensor with ``input``'s shape, dtype, device and layout.

    >>> ember.empty_like(ember.ones(2, 3).t()).stride()
    (1, 3)
    """
    return _like(empty, input, dtype, device, requires_grad, memory_format)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    """``fill_value`` with ``input``'s shape, dtype, device and layout."""
    def filled(shape, **options):
        return full(shape, fill_value, **options)

    filled.__name__ = "full"
    return _like(filled, input, dtype, device, requires_grad, memory_format)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    return _like(rand, input, dtype, device, requires_grad, memory_format,
                 generator=generator)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
               memory_format=None):
    strides = layout_strides(input._data, memory_format, "randn_like")
    shape = tuple(input.shape)
    dtype, device = dtype or input.dtype, device or input.device
    if strides is None:
        return _normals(shape, generator, dtype, device, requires_grad)
    flat = _normals((input.numel(),), generator, dtype, device, False,
                    contiguous=_row_major(shape, strides))
    return _laid_out(flat, shape, strides, requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False, memory_format=None):
    if high is None:
        low, high = 0, low
    return _like(randint, input, dtype, device, requires_grad, memory_format, low, high,
                 generator=generator)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


# ----------------------------------------------------------------------------- Tensor.new_*
# Tensor.new_zeros and friends: a fresh tensor that inherits the source tensor's dtype and
# device unless given (never its values, shape or requires_grad).
def _new_size(size, what: str) -> tuple:
    """``new_zeros(2, 3)``, ``new_zeros((2, 3))`` or ``new_zeros(2)``, each size as
    PyTorch's int[] takes it (NumPy ints and integer tensors of one element; floats and a
    leading bool raise TypeError)."""
    from .ops._util import int_list  # ember.ops imports this module

    if not size:
        raise TypeError(f'{what}() missing 1 required positional arguments: "size"')
    if len(size) == 1:
        size = size[0]
    return _shape(int_list(size, what, "size"), what)


def new_zeros(source: Tensor, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Zeros of shape ``size`` with ``source``'s dtype and device (unless given)."""
    return zeros(_new_size(size, "new_zeros"), dtype=dtype or source.dtype,
                 device=device or source.device, requires_grad=requires_grad)


def new_ones(source: Tensor, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Ones of shape ``size`` with ``source``'s dtype and device (unless given)."""
    return ones(_new_size(size, "new_ones"), dtype=dtype or source.dtype,
                device=device or source.device, requires_grad=requires_grad)


def new_empty(source: Tensor, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """An uninitialized tensor of shape ``size`` with ``source``'s dtype and device."""
    return empty(_new_size(size, "new_empty"), dtype=dtype or source.dtype,
                 device=device or source.device, requires_grad=requires_grad)


def new_full(source: Tensor, size, fill_value, *, dtype=None, device=None,
             requires_grad=False) -> Tensor:
    """``fill_value`` everywhere, shape ``size``, ``source``'s dtype and device (unless
    given; the dtype comes from ``source``, not from the value)."""
    if not isinstance(size, (tuple, list)):  # PyTorch takes no bare int here
        raise TypeError(f"new_full(): argument 'size' must be a tuple of ints, not "
                        f"{type(size).__name__}")
    return full(_new_size((size,), "new_full"), fill_value, dtype=dtype or source.dtype,
                device=device or source.device, requires_grad=requires_grad)


def new_tensor(source: Tensor, data, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A new tensor from ``data``, with ``source``'s dtype and device unless given."""
    return tensor(data, dtype=dtype or source.dtype, device=device or source._device,
                  requires_grad=requires_grad)


def pin_memory(source: Tensor, device=None) -> Tensor:
    """A copy of a CPU tensor (ember has no page-locked host memory: NumPy arrays are
    ordinary memory and CuPy copies from them directly; the copy keeps PyTorch's contract
    that the result is a new tensor with the same values). CUDA tensors raise, as in
    PyTorch."""
    if source._device.type != "cpu":
        raise RuntimeError(f"cannot pin '{_legacy_name(source)}' only dense CPU tensors can "
                           "be pinned")
    out = Tensor._make(source._data.copy(), source._device, False)
    return out


def _legacy_name(t: Tensor) -> str:
    from .tensor import _legacy_type_name

    return _legacy_type_name(t)
