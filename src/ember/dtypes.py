"""ember's dtypes and PyTorch's type-promotion rules.

A dtype wraps a NumPy dtype (CuPy uses the same ones). Promotion follows PyTorch, not
NumPy: an integer meeting a float gives that float (NumPy would widen to float64), and
Python scalars are "weak": they only raise the category (bool < int < float), never the
width, so ``float16_tensor + 2.5`` stays float16 and ``int_tensor * 2.5`` is float32.
"""
from __future__ import annotations

import builtins

import numpy as np

__all__ = [
    "dtype", "float16", "bfloat16", "float32", "float64", "half", "float", "double",
    "int8", "int16", "int32", "int64", "short", "int", "long", "uint8", "bool", "uint16",
    "uint32", "uint64",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast",
]


_SCALAR_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                 "int32": "Int", "int64": "Long", "float16": "Half", "float32": "Float",
                 "float64": "Double", "bfloat16": "BFloat16", "uint16": "UInt16",
                 "uint32": "UInt32", "uint64": "UInt64"}


class dtype:
    """A tensor element type, e.g. ``ember.float32``."""

    __slots__ = ("name", "numpy", "is_floating_point", "is_signed", "itemsize", "_category",
                 "scalar_name")

    def __init__(self, name: str, numpy_dtype, category: int):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.is_floating_point = category == 2
        self.is_signed = self.numpy.kind in "if" or category == 2  # (bfloat16's kind is "V")
        self.itemsize = self.numpy.itemsize
        self._category = category  # 0 bool, 1 integer, 2 floating point
        # PyTorch's scalar-type name, as its messages say it ("Float", "Long"): the one table
        self.scalar_name = _SCALAR_NAMES.get(name, name)

    @property
    def is_complex(self) -> bool:
        return False

    def to_real(self) -> "dtype":
        return self

    def __repr__(self) -> str:
        return "ember." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


def _by_name(name: str) -> dtype:
    return _NAMES[name]


float16 = half = dtype("float16", np.float16, 2)
float32 = float = dtype("float32", np.float32, 2)
float64 = double = dtype("float64", np.float64, 2)
int8 = dtype("int8", np.int8, 1)
int16 = short = dtype("int16", np.int16, 1)
int32 = int = dtype("int32", np.int32, 1)
int64 = long = dtype("int64", np.int64, 1)
uint8 = dtype("uint8", np.uint8, 1)
bool = dtype("bool", np.bool_, 0)



class _LazyDtype(dtype):
    """bfloat16, whose NumPy type comes from the ml_dtypes extra. Importing ml_dtypes takes
    most of a second, so it happens on the dtype's first use (``.numpy``); the object then
    becomes a plain dtype, the same object, at no further cost. Without ml_dtypes, naming
    the dtype works and using it raises ImportError naming the package."""

    __slots__ = ()

    def __init__(self, name: str, itemsize: int):
        self.name = name
        self.is_floating_point = True
        self.is_signed = True
        self.itemsize = itemsize
        self._category = 2
        self.scalar_name = _SCALAR_NAMES[name]

    @property  # type: ignore[override]
    def numpy(self):
        _load_bfloat16()
        return self.numpy


def ml_dtypes():
    """The ml_dtypes module (bfloat16's NumPy type), imported on first use; ember.bfloat16
    is ready from then on (arrays of that type may appear once the module is loaded)."""
    try:
        import ml_dtypes as module
    except ImportError:  # depends on the environment
        raise ImportError("ember.bfloat16 needs the 'ml_dtypes' package: pip install "
                          "ml_dtypes") from None
    if type(bfloat16) is _LazyDtype:
        numpy_type = np.dtype(module.bfloat16)
        bfloat16.__class__ = dtype  # (the layouts are the same: no slots of its own)
        bfloat16.numpy = numpy_type
        _FROM_NUMPY[numpy_type] = bfloat16
    return module


def _load_bfloat16() -> None:
    ml_dtypes()


bfloat16: dtype = _LazyDtype("bfloat16", 2)

# PyTorch's "limited support" unsigned dtypes: tensors can hold them, but they promote
# only with themselves and floating-point dtypes (ALL lists the fully supported ones)
uint16 = dtype("uint16", np.uint16, 1)
uint32 = dtype("uint32", np.uint32, 1)
uint64 = dtype("uint64", np.uint64, 1)
LIMITED = (uint16, uint32, uint64)

ALL = (bool, uint8, int8, int16, int32, int64, float16, float32, float64)
_NAMES = {d.name: d for d in ALL + LIMITED + (bfloat16,)}
_FROM_NUMPY = {d.numpy: d for d in ALL + LIMITED}  # (bfloat16's joins when it loads)
_default_float = float32


def from_numpy(np_dtype) -> dtype:
    """The ember dtype of a NumPy dtype; a clear TypeError for ones ember lacks."""
    try:
        return _FROM_NUMPY[np_dtype]
    except KeyError:
        pass
    np_dtype = np.dtype(np_dtype)
    found = _FROM_NUMPY.get(np_dtype)
    if found is not None:
        return found
    if np_dtype.name == "bfloat16" and type(bfloat16) is _LazyDtype:
        _load_bfloat16()  # an array of ml_dtypes' bfloat16 before ember used the dtype
        if _FROM_NUMPY.get(np_dtype) is bfloat16:
            return bfloat16
    raise TypeError(
        f"can't convert NumPy arrays of dtype {np_dtype}; ember supports "
        + ", ".join(d.name for d in ALL) + " and bfloat16"
    )


def to_dtype(value) -> dtype:
    """Accept an ember dtype, a NumPy dtype, a name or a Python type."""
    if isinstance(value, dtype):
        return value
    if value is builtins.float:  # Python's float is a double, whatever the default dtype
        return float64
    if value is builtins.int:
        return int64
    if value is builtins.bool:
        return bool
    if isinstance(value, str):
        found = _NAMES.get(value.replace("torch.", "").replace("ember.", ""))
        if found is not None:
            return found
    try:
        return from_numpy(np.dtype(value))
    except TypeError as error:
        raise TypeError(f"{value!r} is not an ember dtype") from error




def get_default_dtype() -> dtype:
    """The dtype of new floating-point tensors (float32 unless changed)."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Set the dtype of new floating-point tensors; only float32 and float64 make sense."""
    global _default_float
    d = to_dtype(d)
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float = d


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` cast to safely, by PyTorch's table."""
    if a is b:
        return a
    if (a in LIMITED or b in LIMITED) and a._category != 2 and b._category != 2:
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {a.scalar_name} and {b.scalar_name}")
    if {a.name, b.name} == {"bfloat16", "float16"}:
        return float32  # neither holds the other: float32 holds both
    if a._category != b._category:
        high, low = (a, b) if a._category > b._category else (b, a)
        if high._category == 2 or low._category == 0:
            return high  # int + float -> that float; bool + x -> x
    return _FROM_NUMPY[np.promote_types(a.numpy, b.numpy)]


def scalar_dtype(value) -> dtype:
    """The dtype a Python scalar takes when it stands alone."""
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, builtins.int):
        return int64
    return _default_float


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # PyTorch's combine_categories: a lower-priority operand only matters if its category
    # is above the higher-priority operand's.
    if higher is None:
        return lower
    if lower is None or higher._category == 2:
        return higher
    if higher._category == 0 or lower._category == 2:
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> dtype:
    """The dtype of an op over tensors and Python scalars, as PyTorch computes it.

    Priority: tensors with dimensions, then 0-d tensors, then Python scalars.
    """
    dim_result = zero_result = scalar_result = None
    for op in operands:
        d = getattr(op, "dtype", None)
        if isinstance(d, dtype):
            if op.ndim:
                dim_result = d if dim_result is None else promote_types(dim_result, d)
            else:
                zero_result = d if zero_result is None else promote_types(zero_result, d)
        elif op is not None:
            s = scalar_dtype(op)
            scalar_result = s if scalar_result is None else promote_types(scalar_result, s)
    return _combine(dim_result, _combine(zero_result, scalar_result))


def can_cast(from_: dtype, to: dtype) -> builtins.bool:
    """PyTorch's same-kind rule: no float to int, no number to bool."""
    return from_._category <= to._category


class finfo:
    """Machine limits of a floating-point dtype (PyTorch's ``torch.finfo``): ``bits``,
    ``eps`` (1.0's distance to the next value), ``max``, ``min`` (= -max), ``tiny`` and
    ``smallest_normal`` (smallest positive normal number), ``resolution`` (10^-precision
    decimal digits) and ``dtype`` (the name). ``finfo()`` describes the default dtype.

    >>> ember.finfo(ember.float32).eps
    1.1920928955078125e-07
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                 "dtype")

    def __init__(self, type=None):
        d = _default_float if type is None else _info_dtype(type, "finfo")
        if not d.is_floating_point:
            raise TypeError("ember.finfo() requires a floating point input type. Use "
                            "ember.iinfo to handle 'ember.finfo'")
        # NumPy has no finfo for ml_dtypes' bfloat16 (d.numpy raises when it is missing)
        info = np.finfo(d.numpy) if d is not bfloat16 else ml_dtypes().finfo(d.numpy)
        self.bits = builtins.int(info.bits)
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = 10.0 ** -builtins.int(info.precision)
        self.dtype = d.name

    def __eq__(self, other) -> builtins.bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> builtins.int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype (PyTorch's ``torch.iinfo``): ``bits``, ``max``, ``min``
    (Python ints) and ``dtype`` (the name).

    >>> ember.iinfo(ember.uint8).max
    255
    """

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):
        d = _info_dtype(type, "iinfo")
        if d is bool:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        if d.is_floating_point:
            raise TypeError("ember.iinfo() requires an integer input type. Use ember.finfo "
                            "to handle 'ember.iinfo'")
        info = np.iinfo(d.numpy)
        self.bits = builtins.int(info.bits)
        self.max = builtins.int(info.max)
        self.min = builtins.int(info.min)
        self.dtype = d.name

    def __eq__(self, other) -> builtins.bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> builtins.int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def _info_dtype(value, what: str) -> dtype:
    """finfo/iinfo take an ember dtype (or Python's float/int/bool, as PyTorch does)."""
    if isinstance(value, dtype) or value in (builtins.float, builtins.int, builtins.bool):
        return to_dtype(value)
    raise TypeError(f"{what}(): argument 'type' (position 1) must be ember.dtype, not "
                    f"{builtins.type(value).__name__}")


def checked_number(value, dtype):
    """A Python number for an integer tensor where PyTorch checks that it fits (fill
    values, clamp bounds, pow's exponent; arithmetic wraps instead, ``wrap_int``): an error
    beyond the dtype's range, and for NaN or infinity. An unsigned dtype also takes the
    negative ints of its range, wrapped as in C (-1 is 255 in uint8), but no negative
    floats. Other dtypes take the
    number as it is."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu" or isinstance(value, builtins.bool) or \
            not isinstance(value, (builtins.int, builtins.float)):
        return value
    info = np.iinfo(dtype)
    # (a float must lie in the range itself: -0.5 does not fit uint8, 127.5 not int8)
    low = -info.max if dtype.kind == "u" and isinstance(value, builtins.int) else info.min
    if not (low <= value <= info.max):  # (False for NaN)
        if isinstance(value, builtins.int) and not -2 ** 63 <= value < 2 ** 64:
            raise OverflowError("int too big to convert")
        name = "int" if dtype.itemsize == 4 else dtype.name + "_t"  # PyTorch's C type names
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    return value if value >= info.min else wrap_int(builtins.int(value), dtype)


def wrap_int(value: int, dtype) -> int:
    """A Python int operand as PyTorch casts it to an integer tensor's dtype: wrapped modulo
    2**bits (``uint8_tensor + -1`` adds 255), where NumPy would refuse it. Beyond 64 bits
    it is an error, as in PyTorch."""
    info = np.iinfo(dtype)
    if info.min <= value <= info.max:
        return value
    if not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("int too big to convert")
    bits = info.bits
    value %= 2 ** bits
    return value - 2 ** bits if info.min < 0 and value > info.max else value
