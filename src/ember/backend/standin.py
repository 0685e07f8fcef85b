"""A strict stand-in for CuPy, for the CPU test suite (``EMBER_TEST_STANDIN=1``).

Its arrays keep NumPy arrays underneath but behave as CuPy's do: NumPy cannot convert
them (``np.asarray``, ``np.array``, ``__array__`` raise); mixing them with NumPy arrays
in one op raises (NumPy functions called on them run as CuPy's, on device arrays only);
``.get()`` is the way to the host; reductions give 0-d device arrays; and each array
reports the device it was made on. A CUDA path that lets a host array in, or converts a
device array implicitly, fails on a CPU-only machine. ``backend/cuda.py`` hands this
module out instead of CuPy when the variable is set; nothing else uses it.

``fuse`` runs the decorated function itself on stand-in arrays (as CuPy does for NumPy
inputs), so the stand-in suite runs the very formula a GPU would fuse; while it runs, the
arrays allow only what CuPy's fusion tracer allows (operators, ufuncs, ``where``,
``clip``, ``dtype``, ``ndim``, ``astype``, ``a[...] = b``), so a formula that could not be
fused on a GPU fails here too.
"""
from __future__ import annotations

import contextlib
import operator
import types

import numpy as np

DEVICE_COUNT = 2
_current = [0]
_fusing = [0]  # > 0 while a fused function runs: arrays then act as CuPy's traced ones


def _traced(what: str):
    raise TypeError(f"{what} is not available inside cupy.fuse: a fused function sees "
                    "traced arrays (operators, ufuncs, where, clip, dtype, ndim, astype and "
                    "a[...] = b only)")


def _refuse(kind: str):
    raise TypeError(f"Unsupported type {kind}: a stand-in CUDA array met a NumPy array; "
                    "move it with cupy.asarray() or .get() first")


def _unwrap(value):
    """Stand-in arrays to their NumPy data; NumPy arrays refused; containers walked."""
    if type(value) is ndarray:
        return value._a
    if isinstance(value, np.ndarray):
        _refuse(repr(type(value)))
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    return value


def _wrap(value, device=None):
    """NumPy results back to stand-in arrays (0-d for scalars, as CuPy returns)."""
    if isinstance(value, np.ndarray):
        return ndarray(value, _current[0] if device is None else device)
    if isinstance(value, np.generic):
        return ndarray(np.asarray(value), _current[0] if device is None else device)
    if isinstance(value, tuple):
        return tuple(_wrap(v, device) for v in value)
    if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
        return [_wrap(v, device) for v in value]
    return value


class Device:
    """``cupy.cuda.Device``: a device id and a with-block that makes it current."""

    def __init__(self, device=None):
        self.id = _current[0] if device is None else int(device)
        if not 0 <= self.id < DEVICE_COUNT:
            raise RuntimeError(f"cudaErrorInvalidDevice: stand-in device {self.id}")
        self._saved: list = []

    def __enter__(self):
        self._saved.append(_current[0])
        _current[0] = self.id
        return self

    def __exit__(self, *exc):
        _current[0] = self._saved.pop()
        return False

    def synchronize(self):
        pass

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(("Device", self.id))

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


class ndarray:
    """A stand-in CUDA array."""

    __slots__ = ("_a", "_device")
    __array_priority__ = 100

    def __init__(self, data, device: int):
        self._a = data
        self._device = device

    # ---------------------------------------------------------------- NumPy refuses it
    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

    # NumPy functions and ufuncs dispatch to CuPy's own (NEP 13/18), as on CuPy: they take
    # device arrays only, so a NumPy array among the inputs still raises
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if _fusing[0]:
            _traced(f"NumPy's {ufunc.__name__}")
        return _call(getattr(ufunc, method), inputs, kwargs)  # (out= is unwrapped there)

    def __array_function__(self, func, types, args, kwargs):
        if _fusing[0]:
            _traced(f"NumPy's {func.__name__}")
        return _call(func, args, kwargs)

    # ---------------------------------------------------------------- CuPy's own API
    @property
    def device(self) -> Device:
        return Device(self._device)

    def get(self, stream=None, order="C", out=None):
        if _fusing[0]:
            _traced("get()")
        return np.array(self._a, copy=True)

    @property
    def data(self):
        """CuPy's MemoryPointer: ``ptr`` (the first element's address) and ``mem.ptr``
        (the allocation's)."""
        root = self._a
        while isinstance(root.base, np.ndarray):
            root = root.base
        return types.SimpleNamespace(ptr=self._a.__array_interface__["data"][0],
                                     mem=types.SimpleNamespace(
                                         ptr=root.__array_interface__["data"][0]))

    @property
    def base(self):
        base = self._a.base
        return ndarray(base, self._device) if isinstance(base, np.ndarray) else None

    def __repr__(self):
        return repr(self._a).replace("array(", "stand-in array(")

    def __str__(self):
        return str(self._a)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __bool__(self):
        if _fusing[0]:
            _traced("the truth value of an array")
        return bool(self._a)

    def __float__(self):
        if _fusing[0]:
            _traced("float() of an array")
        return float(self._a)

    def __int__(self):
        if _fusing[0]:
            _traced("int() of an array")
        return int(self._a)

    def __complex__(self):
        return complex(self._a)

    def __index__(self):
        return operator.index(self._a.item())

    def __getitem__(self, key):
        if _fusing[0]:
            _traced("indexing")
        return _wrap(self._a[_index(key)], self._device)

    def __setitem__(self, key, value):
        if _fusing[0] and not (key is Ellipsis or key == slice(None)):
            _traced(f"assigning to a[{key!r}]")
        self._a[_index(key)] = _value(value)

    def __setattr__(self, name, value):
        if name in ndarray.__slots__:
            object.__setattr__(self, name, value)
        else:  # view.shape = ... reshapes in place, as on CuPy
            setattr(self._a, name, value)

    def __getattr__(self, name):
        if name.startswith("__"):  # __array_interface__ and friends would hand NumPy the data
            raise AttributeError(name)
        if _fusing[0] and name not in ("dtype", "ndim", "astype"):
            raise AttributeError(f"a traced array inside cupy.fuse has no attribute {name!r} "
                                 "(only dtype, ndim and astype)")
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap(attr, self._device) if name in ("T", "real", "imag", "mT") else attr
        device = self._device

        def method(*args, **kwargs):
            if name in ("tolist", "item"):
                return attr(*args, **kwargs)
            out = attr(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
            if out is self._a:  # astype(same dtype, copy=False): CuPy returns the array itself
                return self
            return _wrap(out, device)
        return method

    def __reduce__(self):
        return (_rebuild, (self._a, self._device))


def _rebuild(data, device):
    return ndarray(data, device)


def _index(key):
    # CuPy takes host index arrays and lists, converting them to the device
    if type(key) is ndarray:
        return key._a
    if isinstance(key, tuple):
        return tuple(k._a if type(k) is ndarray else k for k in key)
    return key


def _value(value):
    return value._a if type(value) is ndarray else value


def _binary(name):
    def op(self, other):
        if isinstance(other, np.ndarray):
            _refuse(repr(type(other)))
        result = getattr(self._a, name)(_value(other))
        if result is self._a:  # in place (a += b): the same array, as on CuPy
            return self
        return NotImplemented if result is NotImplemented else _wrap(result, self._device)
    op.__name__ = name
    return op


def _unary(name):
    def op(self):
        return _wrap(getattr(self._a, name)(), self._device)
    op.__name__ = name
    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and",
              "or", "xor", "lshift", "rshift", "divmod"):
    for _form in ("__{}__", "__r{}__", "__i{}__"):
        if _form == "__i{}__" and _name == "divmod":
            continue
        setattr(ndarray, _form.format(_name), _binary(_form.format(_name)))
for _name in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
    setattr(ndarray, _name, _binary(_name))
for _name in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(ndarray, _name, _unary(_name))
ndarray.__hash__ = None  # type: ignore[assignment]


# ----------------------------------------------------------------------------- functions
def _call(function, args, kwargs):
    out = function(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
    given = kwargs.get("out")
    for a in args + (given if isinstance(given, tuple) else (given,)):
        if type(a) is ndarray and out is a._a:  # an input handed back (out=, a no-op
            return a                            # cast): CuPy gives back that array
    return _wrap(out)


# the non-ufunc functions CuPy's fusion tracer takes
_FUSABLE = ("where", "clip")


class _Function:
    def __init__(self, function):
        self._function = function
        self.__name__ = getattr(function, "__name__", "function")

    def __call__(self, *args, **kwargs):
        if _fusing[0] and not (isinstance(self._function, np.ufunc)
                               or self.__name__ in _FUSABLE):
            _traced(f"cupy.{self.__name__}()")
        return _call(self._function, args, kwargs)

    def __getattr__(self, name):  # ufunc methods: add.at, maximum.reduce, ...
        if _fusing[0]:
            _traced(f"cupy.{self.__name__}.{name}")
        return _Function(getattr(self._function, name))


class _Namespace:
    """A NumPy namespace seen as CuPy's: functions take and give stand-in arrays."""

    def __init__(self, module, overrides=None):
        self._module = module
        self._overrides = overrides or {}

    def __getattr__(self, name):
        if name in self._overrides:
            return self._overrides[name]
        obj = getattr(self._module, name)
        if obj is np.ndarray:
            return ndarray
        if isinstance(obj, types.ModuleType):
            return _Namespace(obj)
        if isinstance(obj, type) or not callable(obj):
            return obj  # dtypes, scalar types, constants
        return _Function(obj)


# ----------------------------------------------------------------------------- cupy.fuse
_FUSE_ARGUMENTS = (ndarray, np.generic, bool, int, float, complex, type(None))
VERSION = "14.0.0"  # what cupy.__version__ reads (13.6.0 under legacy_fuse_scalars)
_legacy = [False]


@contextlib.contextmanager
def legacy_fuse_scalars():
    """Within the block, the stand-in acts as CuPy before 14: ``cupy.fuse`` types a scalar
    argument (Python's or NumPy's) as a 64-bit array, so a float32 array times a Python
    float gives float64 (cupy/cupy#9400), and ``cupy.__version__`` reads 13.6.0."""
    _legacy[0] = True
    cupy._overrides["__version__"] = "13.6.0"
    try:
        yield
    finally:
        _legacy[0] = False
        cupy._overrides["__version__"] = VERSION


def _typed_scalar(value):
    """A scalar argument of a fused function as CuPy before 14 types it."""
    if isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, np.number):
        kind = value.dtype.kind
    elif isinstance(value, (int, float, complex)):
        kind = "i" if isinstance(value, int) else "f" if isinstance(value, float) else "c"
    else:
        return value
    wide = {"i": np.int64, "u": np.uint64, "f": np.float64, "c": np.complex128}[kind]
    return ndarray(np.asarray(value, wide), _current[0])


class Fusion:
    """What ``cupy.fuse`` makes: called with device arrays it runs the function on them as
    CuPy's tracer would see them (see the module's note); ``calls`` counts the calls."""

    def __init__(self, function, kernel_name=None):
        self.function = function
        self.name = kernel_name or function.__name__
        self.calls = 0
        FUSED.append(self)

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{self.name}() takes positional arguments only (a fused "
                            f"function), got {sorted(kwargs)}")
        if not all(isinstance(a, _FUSE_ARGUMENTS) for a in args):
            raise TypeError(f"Invalid argument type for '{self.name}': "
                            f"({', '.join(repr(type(a)) for a in args)})")
        self.calls += 1
        if not any(type(a) is ndarray for a in args):
            return self.function(*args)  # no device array: CuPy just calls it
        if _legacy[0]:
            args = tuple(_typed_scalar(a) for a in args)
        _fusing[0] += 1
        try:
            out = self.function(*args)
        finally:
            _fusing[0] -= 1
        results = out if isinstance(out, tuple) else (out,)
        if out is not None and not all(type(r) is ndarray for r in results):
            raise TypeError(f"Fusion function can't return "
                            f"{[type(r).__name__ for r in results]} ({self.name})")
        return out


FUSED: list = []  # every Fusion made, oldest first


def fuse(*args, kernel_name=None):
    """``cupy.fuse``, as a decorator with or without arguments."""
    if len(args) == 1 and callable(args[0]):
        return Fusion(args[0], kernel_name)
    return lambda function: Fusion(function, kernel_name)


def _to_device(value, dtype=None, copy=True, order="K", **_):
    if type(value) is ndarray:
        data = value._a if dtype is None else value._a.astype(dtype)
        data = np.array(data, copy=True) if copy and data is value._a else data
        return ndarray(data, _current[0])
    if isinstance(value, (list, tuple)) and any(type(v) is ndarray for v in value):
        value = type(value)(v.get() if type(v) is ndarray else v for v in value)
    return ndarray(np.array(value, dtype=dtype, copy=True), _current[0])


def _asarray(value, dtype=None, order=None, **_):
    if type(value) is ndarray and (dtype is None or value.dtype == np.dtype(dtype)) \
            and value._device == _current[0]:
        return value
    return _to_device(value, dtype)


def _asnumpy(value, stream=None, **_):
    return value.get() if type(value) is ndarray else np.asarray(value)


def _ascontiguousarray(value, dtype=None):
    out = np.ascontiguousarray(value._a if type(value) is ndarray else
                               _refuse(repr(type(value))), dtype=dtype)
    if out is value._a and value._device == _current[0]:  # already C-ordered: itself
        return value
    return ndarray(out, _current[0])


class _MemoryPool:
    def used_bytes(self):
        return 0

    def free_all_blocks(self):
        pass


class _RandomState:
    def __init__(self, seed=None):
        self._state = np.random.RandomState(seed % (2 ** 32) if seed is not None else None)

    def __getattr__(self, name):
        method = getattr(self._state, name)

        def draw(*args, dtype=None, **kwargs):  # parameters may be device arrays
            out = method(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
            if dtype is not None and isinstance(out, (np.ndarray, np.generic)):
                out = np.asarray(out).astype(dtype)
            return _wrap(out)
        return draw


class _Runtime:
    @staticmethod
    def getDeviceCount():
        return DEVICE_COUNT

    @staticmethod
    def getDevice():
        return _current[0]

    @staticmethod
    def setDevice(index):
        Device(index)  # validates
        _current[0] = int(index)

    @staticmethod
    def getDeviceProperties(index):
        return {"name": b"ember stand-in", "totalGlobalMem": 0}


class _Event:
    """Work on the stand-in runs at once: an event is reached as soon as it is recorded."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.done = True
        self.recorded = False

    def record(self, stream=None):
        self.recorded = True

    def synchronize(self):
        pass


class _Stream:
    _count = [0]

    def __init__(self, null=False, non_blocking=False, priority=0):
        _Stream._count[0] += 1
        self.ptr = 0 if null else _Stream._count[0]
        self.done = True
        self._previous = []

    def synchronize(self):
        pass

    def wait_event(self, event):
        pass

    def record(self, event=None):
        event = _Event() if event is None else event
        event.record(self)
        return event

    def use(self):
        _current_stream[0] = self
        return self

    def __enter__(self):
        self._previous.append(_current_stream[0])
        return self.use()

    def __exit__(self, *exc):
        _current_stream[0] = self._previous.pop()
        return False


_current_stream = [_Stream(null=True)]


def _elapsed_time(start, end) -> float:
    if not (start.recorded and end.recorded):
        raise RuntimeError("both events must be recorded")
    return 0.0


_cuda = types.SimpleNamespace(Device=Device, runtime=_Runtime(), Stream=_Stream, Event=_Event,
                              get_current_stream=lambda: _current_stream[0],
                              get_elapsed_time=_elapsed_time,
                              alloc_pinned_memory=lambda size: bytearray(size))

cupy = _Namespace(np, {
    "ndarray": ndarray, "asarray": _asarray, "array": _to_device, "asnumpy": _asnumpy,
    "ascontiguousarray": _ascontiguousarray, "cuda": _cuda, "fuse": fuse,
    "get_default_memory_pool": lambda: _MemoryPool(),
    "random": types.SimpleNamespace(RandomState=_RandomState),
    "__name__": "ember.backend.standin.cupy", "__version__": VERSION,
})

cupyx = types.SimpleNamespace(
    scatter_add=lambda a, i, v: np.add.at(a._a, _index(i), _value(v)),
    scatter_max=lambda a, i, v: np.maximum.at(a._a, _index(i), _value(v)),
    scatter_min=lambda a, i, v: np.minimum.at(a._a, _index(i), _value(v)),
    errstate=lambda **kwargs: contextlib.nullcontext(),
)


# the cupyx.scipy.special functions the ops use that CuPy has (it has no airy), over SciPy
_CUPYX_SPECIAL = ("j0", "j1", "y0", "y1", "k0", "k0e", "k1", "k1e")


def cupyx_special(name: str):
    if name not in _CUPYX_SPECIAL:
        return None
    import scipy.special

    return _Function(getattr(scipy.special, name))


def multiply_at(target, index, values) -> None:
    np.multiply.at(target._a, _index(index), _value(values))
