"""The CPU backend: NumPy. Device-specific helpers that NumPy and CuPy spell differently."""
from __future__ import annotations

import numpy as np

xp = np

# NumPy's path for a Python number operand costs more than the op itself on a small array;
# a read-only 0-d array of the other operand's dtype gives the same result (the number
# takes the array's dtype either way). Zero is left out: 0.0 and -0.0 are one dict key.
_NUMBER_ARRAYS: dict = {np.dtype(np.float32): {}, np.dtype(np.float64): {}}


def number_array(value, like):
    """``value`` (a Python float or int) as a cached 0-d array of ``like``'s dtype where
    that gives the same result as the number itself; else ``value``."""
    if type(like) is not np.ndarray:
        return value
    try:
        return _NUMBER_ARRAYS[like.dtype][value]  # (a subscript: cheaper than two .get)
    except (KeyError, TypeError):  # not cached yet, a dtype without a cache, unhashable
        pass
    cache = _NUMBER_ARRAYS.get(like.dtype)
    if cache is None or type(value) is not float and type(value) is not int or \
            not (-1e38 < value < 1e38) or value == 0:  # overflow, NaN, signed zero
        return value
    if len(cache) >= 512:
        cache.clear()
    array = cache[value] = np.array(value, like.dtype)
    array.flags.writeable = False
    return array


def scatter_add(target, index, values) -> None:
    """``target[index] += values`` with repeated indices accumulated (unbuffered)."""
    np.add.at(target, index, values)


_SAME_SIZE_INT = {2: np.int16, 4: np.int32, 8: np.int64}
# below this many elements np.where's own loop is as fast
_SELECT_MIN_SIZE = 2048


def select_or_zero(condition, array, keep_where: bool):
    """``np.where(condition, array, 0)`` (or ``np.where(condition, 0, array)`` with
    ``keep_where`` False), exactly, for a bool condition and a float array; None when
    the case does not apply. np.where branches per element, which a random mask (relu's
    backward) makes about ten times slower than masking the bits: the condition widened
    to an all-ones or all-zeros integer of the float's size, ANDed with the float's bits,
    keeps the value (NaN and signed zeros included) or makes +0."""
    if type(condition) is not np.ndarray or type(array) is not np.ndarray or \
            condition.dtype != np.bool_ or array.dtype.kind not in "fV" or \
            condition.size < _SELECT_MIN_SIZE:
        return None
    bits = _SAME_SIZE_INT.get(array.dtype.itemsize)
    if bits is None:
        return None
    flags = condition.view(np.int8)
    # 1 -> -1 (all ones) to keep where True; 1 -> 0 and 0 -> -1 to keep where False
    mask = np.negative(flags, dtype=bits) if keep_where else np.subtract(flags, 1, dtype=bits)
    out = np.empty(np.broadcast_shapes(condition.shape, array.shape), array.dtype)
    np.bitwise_and(array.view(bits), mask, out=out.view(bits))
    return out


_STRIP_BYTES = 64       # one cache line of output per row
_STRIP_MIN_BYTES = 1 << 16  # below this NumPy's copy is as fast


def c_order(array):
    """``array.copy(order="C")``, the same bytes, faster for a large transposed matrix:
    NumPy's copy of one reads across rows and runs several times slower than memory
    allows; copying it in column strips one cache line wide (each strip reads whole
    source rows and writes one line per output row) is 2-10x faster. A transposed
    gradient becoming a row-major ``.grad`` is the common case."""
    if array.ndim != 2 or array.nbytes < _STRIP_MIN_BYTES or not array.flags.f_contiguous \
            or type(array) is not np.ndarray:
        return array.copy(order="C")
    out = np.empty(array.shape, array.dtype)
    width = max(1, _STRIP_BYTES // array.itemsize)
    for j in range(0, array.shape[1], width):
        out[:, j:j + width] = array[:, j:j + width]
    return out


def to_host(array):
    return array


def from_host(array, index=None):
    return array


def view_reshape(array, shape):
    """Reshape without copying; ValueError when the strides don't allow it."""
    return np.reshape(array, shape, copy=False)


def scatter_reduce(target, index, values, op: str) -> None:
    """``target[index] = op(target[index], values)`` with repeated indices all applied;
    op is one of 'add', 'multiply', 'maximum', 'minimum' (NumPy's unbuffered ufunc.at)."""
    getattr(np, op).at(target, index, values)


def as_strided(array, shape, strides, writeable: bool = True):
    """A view of ``array``'s memory with the given shape and byte strides. It is made over
    the array that owns the memory, so its ``base`` leads there (NumPy's own as_strided
    leaves a non-array wrapper as the base, which hides where the view starts)."""
    owner = _owner(array)
    offset = _address(array) - _address(owner)
    view = None
    if offset >= 0 and all(s >= 0 for s in strides) and (owner.flags.c_contiguous
                                                         or owner.flags.f_contiguous):
        try:
            view = np.ndarray(tuple(shape), array.dtype, buffer=owner, offset=offset,
                              strides=tuple(strides))
        except (TypeError, ValueError, BufferError):
            view = None
    if view is None:
        return np.lib.stride_tricks.as_strided(array, shape, strides, writeable=writeable)
    if view.flags.writeable and not (writeable and array.flags.writeable):
        view.flags.writeable = False
    return view


def writable(array):
    """``array``, or a writable array over its memory where only a read-only flag stood in
    the way (views of broadcast or overlapping views are flagged so); None when the array
    that owns the memory is itself read-only."""
    if array.flags.writeable:
        return array
    owner = _owner(array)
    if not owner.flags.writeable:
        return None
    try:
        return np.ndarray(array.shape, array.dtype, buffer=owner,
                          offset=_address(array) - _address(owner), strides=array.strides)
    except (TypeError, ValueError, BufferError):
        return None


def _address(array) -> int:
    return array.__array_interface__["data"][0]


def _owner(array):
    """The outermost array over ``array``'s memory: its chain of ``base`` arrays followed
    to the end, also through the wrapper NumPy's as_strided leaves as a base."""
    root = array
    while True:
        base = root.base
        if isinstance(base, np.ndarray):
            root = base
        elif (base is not None and hasattr(base, "__array_interface__")
              and isinstance(getattr(base, "base", None), np.ndarray)):
            root = base.base
        else:
            return root


def storage_offset(array) -> int:
    """Where ``array``'s first element sits in the memory it shares with its owner, in
    elements."""
    return (_address(array) - _address(_owner(array))) // array.itemsize


def scipy_special(name: str):
    """``scipy.special.<name>``; SciPy is an optional extra, so its absence is an
    ImportError that says how to install it."""
    try:
        import scipy.special
    except ImportError as error:
        raise ImportError(f"this special function needs SciPy (scipy.special.{name}): "
                          "pip install scipy, or pip install 'ember[special]'") from error
    return getattr(scipy.special, name)


def storage_of(array):
    """The 1-D array over the whole memory block ``array`` lives in, and ``array``'s first
    element's offset in it (in elements); None when the block isn't one dense run."""
    root = _owner(array)
    return _flat(root, array, _address(array) - _address(root))


def _flat(root, array, byte_offset: int):
    if root.dtype != array.dtype or not (root.flags.c_contiguous or root.flags.f_contiguous):
        return None
    flat = root.reshape(-1, order="A")
    return flat, byte_offset // array.itemsize
