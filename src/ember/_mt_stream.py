"""PyTorch's CPU random stream, reproduced: the mt19937 generator PyTorch seeds with
``manual_seed`` and the transformations its CPU kernels apply, in their order.

``TorchCompatibleGenerator`` holds the state exactly as PyTorch's CPU generator does (the
624-word Mersenne Twister state, its read position, the seed, and the cached second value
of the scalar normal sampler), and saves it in PyTorch's 5056-byte layout, so
``torch.set_rng_state`` accepts ember's state and ``set_state`` accepts PyTorch's.

The draw functions below return flat NumPy arrays of values in the order PyTorch fills a
tensor (its memory order: see ``fill_order``). What each consumes, and how:

==========================  ===========================================================
``uniform``                 float32 and float16: 24 bits of one 32-bit word; float64:
                            53 bits of a 64-bit draw (two words, the first one high).
                            ``u * (to - from) + from`` with one rounding (a fused
                            multiply-add), in float32 or float64; a value that rounds to
                            ``to`` in the tensor's dtype becomes ``from``.
``normal``                  contiguous tensors of 16 or more values: all uniforms first,
                            then Box-Muller on blocks of 16 (values ``i`` and ``i + 8``
                            of a block share a pair); when the size is not a multiple of
                            16, 16 fresh uniforms redo the last 16 values (float16 draws
                            uniforms for the whole blocks only, and computes in float32).
                            float32 uses the Cephes single-precision log/sin/cos.
                            Otherwise: the scalar sampler, two 53-bit uniforms per pair,
                            the pair's second value cached in the generator for the next
                            draw.
``random_from_to``          ``word % range + from``: one word for ranges below 2^28, a
                            64-bit draw above.
``random_full``             ``random_()``'s default range [0, 2^digits] per dtype.
``randperm``                Fisher-Yates, ``word % (n - i)`` for i = 0 .. n-2.
``bernoulli_scalar``        53-bit uniform < p (on Intel CPUs: one word seeds MKL's
                            MCG31 stream, whose uniforms are compared instead).
``bernoulli_tensor``        uniform < p[i]: 53 bits for float64 p, 24 for other dtypes.
``exponential``             ``-1/lambda * log1p(-u)``, u a 53-bit uniform.
``geometric``, ``cauchy``,  one 53-bit uniform each; ``log_normal`` uses the scalar
``log_normal``              normal sampler (and its cache).
``poisson``                 per rate, 53-bit uniforms until accepted: a product of
                            uniforms below rate 10, Hoermann's transformed rejection
                            (PTRS) from 10 on.
``multinomial``             without replacement (or one sample): exponential keys, the
                            largest ``w / key`` first; with replacement: a 53-bit
                            uniform per sample searched in the row's cumulative weights.
==========================  ===========================================================

The match is bit for bit with PyTorch's x86-64 AVX2 and AVX-512 kernels (which fuse
multiply-adds and use the Cephes Box-Muller for float32). Other builds (ARM) consume the
stream in the same way but may round float32 normals differently. PyTorch's x86 DEFAULT
kernels (``ATEN_CPU_CAPABILITY=default``, or CPUs without AVX2) round without fused
multiply-adds, which is not modelled.

>>> g = TorchCompatibleGenerator(0)
>>> uniform(g, 3, "float32").tolist()  # torch.manual_seed(0); torch.rand(3)
[0.49625658988952637, 0.7682217955589294, 0.08847743272781372]
"""
from __future__ import annotations

import math
import operator
from array import array

import numpy as np

from ._exact_float import fma32, fma64, libm, logf_cephes, sincosf_cephes

__all__ = [
    "DEFAULT_SEED",
    "STATE_SIZE",
    "TorchCompatibleGenerator",
    "bernoulli_scalar",
    "bernoulli_tensor",
    "cauchy",
    "exponential",
    "fill_order",
    "geometric",
    "log_normal",
    "multinomial",
    "normal",
    "poisson",
    "random_from_to",
    "random_full",
    "random_full_64_bits",
    "randperm",
    "uniform",
]

DEFAULT_SEED = 67280421310721  # what a new torch.Generator() starts from
_N = 624  # mt19937's state length, in 32-bit words
_UINT64 = 2 ** 64

# PyTorch's CPU generator state (CPUGeneratorImplState): the legacy TH layout and the
# float normal cache, 5056 bytes with C alignment.
_STATE_DTYPE = np.dtype({
    "names": ["initial_seed", "left", "seeded", "next", "state", "normal_x", "normal_y",
              "normal_rho", "normal_is_valid", "next_float_normal_sample",
              "is_next_float_normal_sample_valid"],
    "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", _N), "<f8", "<f8", "<f8", "<i4", "<f4",
                "u1"],
    "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
    "itemsize": 5056})
STATE_SIZE = _STATE_DTYPE.itemsize


def _seed_words(seed32: int) -> np.ndarray:
    """mt19937's initialization of the state from a 32-bit seed (Knuth's multiplier)."""
    words = [seed32]
    last = seed32
    for i in range(1, _N):
        last = (1812433253 * (last ^ (last >> 30)) + i) & 0xFFFFFFFF
        words.append(last)
    return np.array(words, dtype=np.uint32)


def _temper(words: np.ndarray) -> np.ndarray:
    y = words.astype(np.uint32)
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    y ^= y >> np.uint32(18)
    return y


class TorchCompatibleGenerator:
    """The state of PyTorch's CPU generator: mt19937, seeded as ``torch.manual_seed``
    seeds it, read 32 or 64 bits at a time, plus the cached second normal of the scalar
    Box-Muller sampler.

    >>> g = TorchCompatibleGenerator(42)
    >>> g.random_uint32(2).tolist()
    [1608637542, 3421126067]
    >>> state = g.get_state()
    >>> a = g.random_uint64(1)
    >>> _ = g.set_state(state)
    >>> bool((g.random_uint64(1) == a).all())
    True
    """

    __slots__ = (
        "_bits",
        "_initial_seed",
        "_left",
        "_next",
        "_words",
        "next_double_normal",
        "next_float_normal",
    )

    def __init__(self, seed: int = DEFAULT_SEED):
        self._bits = np.random.MT19937(0)  # bulk output once past the current block
        self.manual_seed(seed)

    # ------------------------------------------------------------------ seed and state
    def manual_seed(self, seed) -> TorchCompatibleGenerator:
        """Seed as PyTorch does: the seed is kept as an unsigned 64-bit number (negative
        seeds wrap) and its low 32 bits initialize the Mersenne Twister."""
        seed = operator.index(seed)
        if not -(2 ** 63) <= seed < _UINT64:
            raise RuntimeError(f"manual_seed(): the seed must be within [-2^63, 2^64), "
                               f"got {seed}")
        self._initial_seed = seed % _UINT64
        self._words = _seed_words(self._initial_seed & 0xFFFFFFFF)
        self._left, self._next = 1, 0  # the first draw regenerates the block
        self.next_double_normal = None
        self.next_float_normal = None
        return self

    def initial_seed(self) -> int:
        return self._initial_seed

    def get_state(self) -> np.ndarray:
        """The state as PyTorch's 5056 bytes (``torch.get_rng_state()``'s layout)."""
        record = np.zeros((), dtype=_STATE_DTYPE)
        record["initial_seed"] = self._initial_seed
        record["left"], record["seeded"], record["next"] = self._left, 1, self._next
        record["state"] = self._words
        if self.next_double_normal is not None:
            record["normal_y"] = self.next_double_normal
            record["normal_is_valid"] = 1
        if self.next_float_normal is not None:
            record["next_float_normal_sample"] = self.next_float_normal
            record["is_next_float_normal_sample_valid"] = 1
        return np.frombuffer(record.tobytes(), dtype=np.uint8).copy()

    def set_state(self, state) -> TorchCompatibleGenerator:
        """Restore a state from ``get_state()`` or from ``torch.get_rng_state()`` (a uint8
        array or bytes of 5056 values)."""
        if isinstance(state, (bytes, bytearray, memoryview)):
            raw = bytes(state)
        else:
            array = np.asarray(state)
            if array.dtype != np.uint8:
                raise TypeError(f"RNG state must be a uint8 (byte) tensor, got dtype "
                                f"{array.dtype}")
            raw = array.tobytes()
        if len(raw) != STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but "
                               f"found the input RNG state size to be {len(raw)}")
        record = np.frombuffer(raw, dtype=_STATE_DTYPE)[0]
        left, nxt = int(record["left"]), int(record["next"])
        words = record["state"]
        if (int(record["seeded"]) != 1 or not 1 <= left <= _N or nxt > _N
                or bool((words > 0xFFFFFFFF).any())):
            raise RuntimeError("Invalid mt19937 state: the position (left, next) or the "
                               "words are out of range, or the state was never seeded")
        self._initial_seed = int(record["initial_seed"])
        self._words = words.astype(np.uint32)
        self._left, self._next = left, nxt
        self.next_double_normal = (float(record["normal_y"])
                                   if int(record["normal_is_valid"]) else None)
        self.next_float_normal = (float(record["next_float_normal_sample"])
                                  if int(record["is_next_float_normal_sample_valid"])
                                  else None)
        return self

    def clone(self) -> TorchCompatibleGenerator:
        twin = TorchCompatibleGenerator.__new__(TorchCompatibleGenerator)
        twin._bits = np.random.MT19937(0)
        twin._initial_seed, twin._words = self._initial_seed, self._words.copy()
        twin._left, twin._next = self._left, self._next
        twin.next_double_normal = self.next_double_normal
        twin.next_float_normal = self.next_float_normal
        return twin

    # --------------------------------------------------------------------- raw output
    def random_uint32(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit outputs (what PyTorch's ``random()`` returns)."""
        n = operator.index(n)
        if n < 0:
            raise ValueError(f"random_uint32(): n must be non-negative, got {n}")
        out = np.empty(n, dtype=np.uint32)
        # words left in the current block before PyTorch regenerates it
        ready = min(n, self._left - 1, _N - self._next)
        if ready > 0:
            out[:ready] = _temper(self._words[self._next:self._next + ready])
            self._next += ready
            self._left -= ready
        rest = n - ready
        if rest:
            # past the block: NumPy's MT19937 twists the same way; pos=624 asks it to
            # regenerate before its first output, as PyTorch does here
            self._bits.state = {"bit_generator": "MT19937",
                                "state": {"key": self._words, "pos": _N}}
            out[ready:] = self._bits.random_raw(rest)
            inner = self._bits.state["state"]
            self._words = np.asarray(inner["key"], dtype=np.uint32).copy()
            self._next = int(inner["pos"])
            self._left = _N + 1 - self._next
        return out

    def random_uint64(self, n: int) -> np.ndarray:
        """The next ``n`` 64-bit draws, each two 32-bit outputs, the first the high half
        (what PyTorch's ``random64()`` returns)."""
        words = self.random_uint32(2 * operator.index(n)).astype(np.uint64)
        return (words[0::2] << np.uint64(32)) | words[1::2]


# ----------------------------------------------------------------------------- helpers
_FLOAT_DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64}
_MANTISSA_DIGITS = {np.float16: 11, np.float32: 24, np.float64: 53}


def _float_dtype(dtype, op: str):
    key = np.dtype(dtype).name
    if key not in _FLOAT_DTYPES:
        raise TypeError(f"{op}: expected a floating-point dtype (float16, float32, float64),"
                        f" got {key}")
    return _FLOAT_DTYPES[key]


def _count(n, op: str) -> int:
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"{op}: the number of values must be non-negative, got {n}")
    return n


def _narrow(values: np.ndarray, kind) -> np.ndarray:
    """float64 results cast to the tensor's dtype as C++ casts them: a double becomes a
    half by way of float."""
    if kind is np.float16:
        return values.astype(np.float32).astype(np.float16)
    return values.astype(kind)


def fill_order(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` whose C order is its memory order: the order in which PyTorch
    fills a tensor in place (its iterator visits the smallest stride fastest). Writing
    ``fill_order(a)[...] = values.reshape(fill_order(a).shape)`` fills ``a`` as PyTorch
    would fill the same strided tensor."""
    strides = np.abs(np.asarray(array.strides, dtype=np.int64))
    axes = sorted(range(array.ndim), key=lambda axis: -strides[axis])
    return array.transpose(axes)


def _unit_float64(g: TorchCompatibleGenerator, n: int) -> np.ndarray:
    """53-bit uniforms in [0, 1): ``(r64 & (2^53 - 1)) * 2^-53``."""
    bits = g.random_uint64(n) & np.uint64((1 << 53) - 1)
    return bits.astype(np.float64) * 2.0 ** -53


def _unit_float32(g: TorchCompatibleGenerator, n: int) -> np.ndarray:
    """24-bit uniforms in [0, 1) from one word each: ``(word & (2^24 - 1)) * 2^-24``."""
    bits = g.random_uint32(n) & np.uint32((1 << 24) - 1)
    return bits.astype(np.float32) * np.float32(2.0 ** -24)


# ------------------------------------------------------------------------------ uniform
def _unit(g: TorchCompatibleGenerator, n: int, kind) -> np.ndarray:
    """The uniforms in [0, 1) behind float draws: 53 bits for float64, 24 bits (a float32
    value) for float32 and float16."""
    return _unit_float64(g, n) if kind is np.float64 else _unit_float32(g, n)


def uniform(g: TorchCompatibleGenerator, n: int, dtype, low=0.0, high=1.0) -> np.ndarray:
    """``n`` values of U[low, high) as ``Tensor.uniform_(low, high)`` / ``rand`` draw them:
    ``u * (high - low) + low`` rounded once, in float64 for float64 tensors and in float32
    otherwise (then rounded to the dtype); a value that rounds up to ``high`` becomes
    ``low``.

    >>> g = TorchCompatibleGenerator(0)
    >>> uniform(g, 2, "float64", -1.0, 1.0).tolist()  # torch: uniform_(-1, 1) in float64
    [0.9401060036131061, 0.4156397287995759]
    """
    n, kind = _count(n, "uniform"), _float_dtype(dtype, "uniform")
    low, high = float(low), float(high)
    u = _unit(g, n, kind)
    if kind is np.float64:
        values = u if (low, high) == (0.0, 1.0) else fma64(u, high - low, low)
    else:
        low32, high32 = np.float32(low), np.float32(high)
        values = u if (low32, high32) == (0, 1) else fma32(u, high32 - low32, low32)
        values = values.astype(kind)
    top, bottom = _narrow(np.float64(high), kind), _narrow(np.float64(low), kind)
    return np.where(values == top, bottom, values) if (values == top).any() else values


# ------------------------------------------------------------------------------- normal
def _scalar_normals(g: TorchCompatibleGenerator, n: int) -> np.ndarray:
    """``n`` standard normals from the scalar Box-Muller sampler: a cached value first,
    then pairs (r cos t, r sin t) with t = 2 pi u1, r = sqrt(-2 log1p(-u2)); an odd count
    leaves the last pair's sine in the cache."""
    out = np.empty(n, dtype=np.float64)
    start = 0
    if n and g.next_double_normal is not None:
        out[0] = g.next_double_normal
        g.next_double_normal = None
        start = 1
    pairs = (n - start + 1) // 2
    if pairs:
        u = _unit_float64(g, 2 * pairs)
        radius = np.sqrt(-2.0 * libm.log1p(-u[1::2]))
        theta = 2.0 * math.pi * u[0::2]
        both = np.empty(2 * pairs, dtype=np.float64)
        both[0::2] = radius * libm.cos(theta)
        both[1::2] = radius * libm.sin(theta)
        out[start:] = both[:n - start]
        if (n - start) % 2:
            g.next_double_normal = float(both[-1])
    return out


def _box_muller_16(u: np.ndarray, kind, mean, std) -> np.ndarray:
    """PyTorch's 16-wide Box-Muller on ``u`` (uniforms, a multiple of 16 long): in each
    block, value j (< 8) pairs with value j + 8 as u1 = 1 - u[j], u2 = u[j + 8]. ``kind``
    (float32 or float64) is the arithmetic's precision."""
    blocks = u.reshape(-1, 2, 8)
    out = np.empty_like(blocks)
    if kind is np.float32:
        radius = np.sqrt(np.float32(-2.0) * logf_cephes(np.float32(1) - blocks[:, 0]))
        sine, cosine = sincosf_cephes(np.float32(2.0 * math.pi) * blocks[:, 1])
        mean32, std32 = np.float32(mean), np.float32(std)
        out[:, 0] = fma32(radius * cosine, std32, mean32)
        out[:, 1] = fma32(radius * sine, std32, mean32)
    else:
        radius = np.sqrt(-2.0 * libm.log(1.0 - blocks[:, 0]))
        theta = 2.0 * math.pi * blocks[:, 1]
        out[:, 0] = fma64(radius * libm.cos(theta), std, mean)
        out[:, 1] = fma64(radius * libm.sin(theta), std, mean)
    return out.reshape(-1)


def normal(g: TorchCompatibleGenerator, n: int, dtype, mean=0.0, std=1.0,
           contiguous: bool = True) -> np.ndarray:
    """``n`` values of N(mean, std^2) as ``Tensor.normal_`` / ``randn`` draw them into a
    tensor of ``n`` values (``contiguous``: whether that tensor is contiguous, which
    decides between PyTorch's 16-wide and scalar paths).

    >>> g = TorchCompatibleGenerator(0)
    >>> [round(v, 6) for v in normal(g, 2, "float32").tolist()]  # torch.randn(2)
    [1.540996, -0.293429]
    """
    n, kind = _count(n, "normal"), _float_dtype(dtype, "normal")
    mean, std = float(mean), float(std)
    if n >= 16 and contiguous:
        whole = n - n % 16
        values = np.empty(n, dtype=kind)
        if kind is np.float16:
            # computed in float32 from raw 24-bit uniforms, drawn for whole blocks only
            values[:whole] = _box_muller_16(_unit_float32(g, whole), np.float32, mean, std)
            tail = _unit_float32(g, 16) if n % 16 else None
        else:
            # all n uniforms first, in the tensor's dtype
            values[:] = uniform(g, n, kind)
            values[:whole] = _box_muller_16(values[:whole], kind, mean, std)
            tail = uniform(g, 16, kind) if n % 16 else None
        if tail is not None:  # 16 fresh uniforms redo the last 16 values
            values[n - 16:] = _box_muller_16(tail, np.float32 if kind is np.float16 else kind,
                                             mean, std)
        return values
    z = fma64(_scalar_normals(g, n), std, mean)
    return _narrow(z, kind)


# ------------------------------------------------------------------------------ integers
_WIDE_RANGE = 1 << 28  # from this range on, PyTorch draws 64 bits per value


def random_from_to(g: TorchCompatibleGenerator, n: int, low: int, high: int,
                   dtype="int64") -> np.ndarray:
    """``n`` integers from [low, high) as ``randint`` / ``Tensor.random_(low, high)`` draw
    them: ``word % (high - low) + low``, with 64-bit words for ranges of 2^28 and more.
    Returned as int64 (or float64 for float dtypes), ready to cast to the tensor's dtype.
    For float16/float32 tensors the match holds for ranges within the dtype's exact
    integers (2^11, 2^24), where PyTorch also stops warning.

    >>> random_from_to(TorchCompatibleGenerator(3), 4, -5, 95).tolist()
    [81, 43, 32, 62]
    """
    n = _count(n, "random_from_to")
    low, high = operator.index(low), operator.index(high)
    span = high - low
    if not 0 < span <= _UINT64:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    words = g.random_uint64(n) if span >= _WIDE_RANGE else g.random_uint32(n).astype(
        np.uint64)
    offsets = words if span == _UINT64 else words % np.uint64(span)
    if np.dtype(dtype).kind == "f":
        return offsets.astype(np.float64) + float(low)
    # uint64 arithmetic wraps like PyTorch's int64 arithmetic does
    return (offsets + np.uint64(low % _UINT64)).view(np.int64)


def random_full(g: TorchCompatibleGenerator, n: int, dtype) -> np.ndarray:
    """``n`` values as ``Tensor.random_()`` draws them: [0, 2^63 - 1] for int64 (64-bit
    words), [0, max] for the narrower integers, [0, 2^digits] for floats, 0/1 for bool."""
    n = _count(n, "random_full")
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return (g.random_uint32(n) & np.uint32(1)).astype(np.bool_)
    if dt.kind == "f":
        digits = _MANTISSA_DIGITS[_float_dtype(dt, "random_full")]
        words = g.random_uint64(n) if digits == 53 else g.random_uint32(n).astype(np.uint64)
        return (words % np.uint64((1 << digits) + 1)).astype(dt)
    if dt.kind not in "iu":
        raise TypeError(f"random_full: unsupported dtype {dt}")
    top = int(np.iinfo(dt).max) + 1
    words = g.random_uint64(n) if dt.itemsize == 8 else g.random_uint32(n).astype(np.uint64)
    return (words % np.uint64(top)).astype(dt)


def random_full_64_bits(g: TorchCompatibleGenerator, n: int) -> np.ndarray:
    """``random_(-2**63, None)`` on int64: the 64-bit draws themselves."""
    return g.random_uint64(_count(n, "random_full_64_bits")).view(np.int64)


_RANDPERM_WIDE = (2 ** 32 - 1) // 20  # from this n on, PyTorch shuffles with 64-bit draws
_CHUNK = 1 << 20  # targets are computed vectorized a chunk at a time; the swaps are serial


def _int64_buffer(values: np.ndarray) -> array:
    buffer = array("q")
    buffer.frombytes(np.ascontiguousarray(values, dtype=np.int64).tobytes())
    return buffer


def randperm(g: TorchCompatibleGenerator, n: int) -> np.ndarray:
    """A permutation of 0 .. n-1 as ``torch.randperm(n)`` draws it (int64): Fisher-Yates
    swapping i with ``i + word % (n - i)`` for i = 0 .. n-2; from n = (2^32 - 1) // 20 on,
    the inside-out shuffle instead (value i goes to slot ``r64 % (i + 1)``, whose value
    moves to slot i).

    >>> randperm(TorchCompatibleGenerator(0), 5).tolist()
    [4, 0, 1, 3, 2]
    """
    n = _count(n, "randperm")
    if n < _RANDPERM_WIDE:
        perm = _int64_buffer(np.arange(n, dtype=np.int64))
        words = g.random_uint32(max(n - 1, 0))
        for start in range(0, n - 1, _CHUNK):
            steps = np.arange(start, min(start + _CHUNK, n - 1), dtype=np.int64)
            targets = steps + words[start:start + steps.size].astype(np.int64) % (n - steps)
            for i, j in zip(steps.tolist(), targets.tolist()):
                perm[i], perm[j] = perm[j], perm[i]
    else:
        perm = _int64_buffer(np.zeros(n, dtype=np.int64))
        words = g.random_uint64(n)
        for start in range(0, n, _CHUNK):
            steps = np.arange(start, min(start + _CHUNK, n), dtype=np.uint64)
            slots = words[start:start + steps.size] % (steps + np.uint64(1))
            for i, j in zip(steps.tolist(), slots.tolist()):
                perm[i] = perm[j]
                perm[j] = i
    return np.frombuffer(perm, dtype=np.int64).copy()


# ---------------------------------------------------------------------------- bernoulli
_MCG31_MODULUS, _MCG31_MULTIPLIER = 2 ** 31 - 1, 1132489760


def _mcg31_uniforms(seed: int, n: int) -> np.ndarray:
    """MKL's MCG31m1 stream (``VSL_BRNG_MCG31``): x0 = seed mod (2^31 - 1) (1 if that is
    0), x_i = 1132489760 x_(i-1) mod (2^31 - 1), u_i = x_i * (1 / (2^31 - 1))."""
    m = np.uint64(_MCG31_MODULUS)
    powers = np.empty(max(n, 1), dtype=np.uint64)  # a^i mod m, by doubling
    powers[0] = 1
    filled, step = 1, np.uint64(_MCG31_MULTIPLIER)
    while filled < n:
        count = min(filled, n - filled)
        powers[filled:filled + count] = powers[:count] * step % m
        step = step * step % m
        filled += count
    start = np.uint64(seed % _MCG31_MODULUS or 1)
    return (start * powers[:n] % m).astype(np.float64) * (1.0 / _MCG31_MODULUS)


def _cpu_is_intel() -> bool:
    """Whether PyTorch's MKL builds would take their MKL Bernoulli path here: they do on
    CPUs whose vendor is Intel."""
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return False
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("vendor_id"):
                    return "GenuineIntel" in line
    except OSError:
        pass
    return "intel" in platform.processor().lower()


BERNOULLI_SCALAR_METHOD = "mkl" if _cpu_is_intel() else "default"


def bernoulli_scalar(g: TorchCompatibleGenerator, n: int, p: float,
                     method: str | None = None) -> np.ndarray:
    """``n`` Bernoulli(p) draws as ``Tensor.bernoulli_(p)`` (and dropout, with p the keep
    probability) draw them. Returns booleans. ``method`` (default
    ``BERNOULLI_SCALAR_METHOD``, chosen like PyTorch by the CPU's vendor):

    - ``"default"``: a 53-bit uniform per value, below ``p``;
    - ``"mkl"``: what PyTorch's MKL builds do on Intel CPUs: one 32-bit word seeds an
      MKL MCG31 stream, whose uniforms below ``p`` are the ones.

    >>> bernoulli_scalar(TorchCompatibleGenerator(0), 6, 0.5, "default").tolist()
    [False, False, True, False, False, False]
    """
    n = _count(n, "bernoulli_scalar")
    method = BERNOULLI_SCALAR_METHOD if method is None else method
    if method == "default":
        return _unit_float64(g, n) < float(p)
    if method == "mkl":
        seed = int(g.random_uint32(1)[0])
        return _mcg31_uniforms(seed, n) < float(p)
    raise ValueError(f"bernoulli_scalar: method must be 'default' or 'mkl', got {method!r}")


def bernoulli_tensor(g: TorchCompatibleGenerator, probabilities: np.ndarray) -> np.ndarray:
    """One Bernoulli draw per probability (drawn in the array's C order; the result has
    its shape), as ``torch.bernoulli(p)`` / ``Tensor.bernoulli_(p_tensor)`` draw them:
    float64 probabilities compare a 53-bit uniform, all other dtypes a 24-bit one."""
    p = np.asarray(probabilities)
    flat = p.reshape(-1)
    if p.dtype == np.float64:
        return (_unit_float64(g, flat.size) < flat).reshape(p.shape)
    return (_unit_float32(g, flat.size) < flat.astype(np.float32)).reshape(p.shape)


# --------------------------------------------------------------- other distributions
def exponential(g: TorchCompatibleGenerator, n: int, dtype, lambd=1.0) -> np.ndarray:
    """``Tensor.exponential_(lambd)``: ``-1/lambd * log1p(-u)``."""
    n, kind = _count(n, "exponential"), _float_dtype(dtype, "exponential")
    u = _unit_float64(g, n)
    return _narrow((-1.0 / float(lambd)) * libm.log1p(-u), kind)


def geometric(g: TorchCompatibleGenerator, n: int, p: float, dtype="float32") -> np.ndarray:
    """``Tensor.geometric_(p)``: ``ceil(log(u) / log1p(-p))``, in ``dtype`` (any real
    dtype: the count is cast as C++ casts a double)."""
    u = _unit_float64(g, _count(n, "geometric"))
    with np.errstate(divide="ignore"):
        counts = np.ceil(libm.log(u) / math.log1p(-float(p)))
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return _narrow(counts, _float_dtype(dt, "geometric"))
    with np.errstate(invalid="ignore"):
        return counts.astype(dt)


def cauchy(g: TorchCompatibleGenerator, n: int, dtype, median=0.0, sigma=1.0) -> np.ndarray:
    """``Tensor.cauchy_(median, sigma)``: ``median + sigma * tan(pi * (u - 1/2))``."""
    n, kind = _count(n, "cauchy"), _float_dtype(dtype, "cauchy")
    u = _unit_float64(g, n)
    return _narrow(fma64(float(sigma), libm.tan(math.pi * (u - 0.5)), float(median)), kind)


def log_normal(g: TorchCompatibleGenerator, n: int, dtype, mean=1.0, std=2.0) -> np.ndarray:
    """``Tensor.log_normal_(mean, std)``: ``exp`` of the scalar normal sampler's values."""
    n, kind = _count(n, "log_normal"), _float_dtype(dtype, "log_normal")
    z = fma64(_scalar_normals(g, n), float(std), float(mean))
    return _narrow(libm.exp(z), kind)


def multinomial(g: TorchCompatibleGenerator, weights: np.ndarray, num_samples: int,
                replacement: bool) -> np.ndarray:
    """Category indices (int64, shape ``(rows, num_samples)``) drawn from each row of the
    2-d float ``weights`` as ``torch.multinomial`` draws them; the caller validates the
    weights. Without replacement, or for one sample, each row takes the categories with
    the largest ``w / q`` (q ~ Exp(1), one per weight, in the weights' dtype; equal keys
    in index order); with replacement, each sample is the first category whose normalized
    cumulative weight (summed in the weights' dtype) reaches a 53-bit uniform."""
    w = np.ascontiguousarray(weights)
    if w.ndim != 2:
        raise ValueError(f"multinomial: weights must be 2-d (rows, categories), got "
                         f"{w.ndim}-d")
    rows = w.shape[0]
    num_samples = operator.index(num_samples)
    if not replacement or num_samples == 1:
        q = exponential(g, w.size, w.dtype, 1.0).reshape(w.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = w / q
        if num_samples == 1:
            return np.argmax(keys, axis=1).reshape(rows, 1).astype(np.int64)
        order = np.argsort(-keys, axis=1, kind="stable")
        return order[:, :num_samples].astype(np.int64)
    cumulative = np.cumsum(w, axis=1, dtype=w.dtype)
    totals = cumulative[:, -1:]
    cumulative = np.where(totals > 0, cumulative / totals, cumulative).astype(w.dtype)
    cumulative[:, -1] = 1
    u = _unit_float64(g, rows * num_samples).reshape(rows, num_samples)
    out = np.empty((rows, num_samples), dtype=np.int64)
    for row in range(rows):
        out[row] = np.searchsorted(cumulative[row].astype(np.float64), u[row], side="left")
    return out


def _ptrs(u, lam: float) -> int:
    """Hoermann's transformed rejection with squeeze (1993) for rates of 10 and more."""
    slam, loglam = math.sqrt(lam), math.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    while True:
        centred, v = u() - 0.5, u()
        us = 0.5 - abs(centred)
        k = math.floor((2 * a / us + b) * centred + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return k
        if k < 0 or (us < 0.013 and v > us):
            continue
        if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                <= -lam + k * loglam - math.lgamma(k + 1.0)):
            return k


def poisson(g: TorchCompatibleGenerator, rates: np.ndarray) -> np.ndarray:
    """One Poisson count per rate (drawn in the array's C order; float64, the rates'
    shape) as ``torch.poisson`` draws them: each rate consumes 53-bit uniforms until one
    is accepted, multiplying uniforms while the product stays above ``exp(-rate)`` for
    rates below 10, and Hoermann's transformed rejection from 10 on; a zero rate draws
    nothing. The caller validates the rates (finite, non-negative).

    >>> poisson(TorchCompatibleGenerator(0), np.array([0.5, 4.0, 25.0])).tolist()  # torch
    [2.0, 5.0, 22.0]
    """
    lams = np.asarray(rates, dtype=np.float64)
    # uniforms come from a copy a chunk at a time; the generator then skips what was used
    ahead = g.clone()
    chunk: list = []
    position = used = 0

    def u() -> float:
        nonlocal chunk, position, used
        if position == len(chunk):
            chunk, position = _unit_float64(ahead, 1024).tolist(), 0
        position += 1
        used += 1
        return chunk[position - 1]

    out = np.empty(lams.size, dtype=np.float64)
    for i, lam in enumerate(lams.reshape(-1).tolist()):
        if lam >= 10:
            out[i] = _ptrs(u, lam)
        elif lam == 0:
            out[i] = 0
        else:
            threshold, count, product = math.exp(-lam), 0, 1.0
            while True:
                product *= u()
                if product <= threshold:
                    break
                count += 1
            out[i] = count
    g.random_uint64(used)
    return out.reshape(lams.shape)


def _stirling_tail(k: float) -> float:
    """log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2]: exact below 10, the
    series above."""
    if k <= 9:
        return (math.lgamma(k + 1) - (k + 0.5) * math.log(k + 1) + (k + 1)
                - 0.5 * math.log(2 * math.pi))
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _btrs(u, count: float, prob: float) -> float:
    """Hoermann's transformed rejection with squeeze for binomials (count * prob >= 10)."""
    stddev = math.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((count + 1) * prob)
    while True:
        centred = u() - 0.5
        v = u()
        us = 0.5 - abs(centred)
        k = math.floor((2 * a / us + b) * centred + c)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * math.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m) - _stirling_tail(k)
                 - _stirling_tail(count - k))
        if v <= bound:
            return k


def _inversion(u, count: float, prob: float) -> float:
    """Count the geometric waiting times that fit in ``count`` trials (count * prob < 10)."""
    log_q = math.log1p(-prob)
    total, successes = 0.0, 0
    while True:
        total += math.ceil(math.log(u()) / log_q)
        if total > count:
            return successes
        successes += 1


def binomial(g: TorchCompatibleGenerator, counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """One Binomial(count, prob) draw per element (C order, float64), as ``torch.binomial``
    draws them from 53-bit uniforms: waiting-time inversion while count * min(p, 1 - p) <
    10, transformed rejection beyond, by symmetry for p > 1/2."""
    ahead = g.clone()
    chunk: list = []
    position = used = 0

    def u() -> float:
        nonlocal chunk, position, used
        if position == len(chunk):
            chunk, position = _unit_float64(ahead, 1024).tolist(), 0
        position += 1
        used += 1
        return chunk[position - 1]

    flat_n = np.asarray(counts, np.float64).reshape(-1).tolist()
    flat_p = np.asarray(probs, np.float64).reshape(-1).tolist()
    out = np.empty(len(flat_n), dtype=np.float64)
    for i, (n, p) in enumerate(zip(flat_n, flat_p)):
        if n <= 0 or p <= 0:
            out[i] = 0
        elif p >= 1:
            out[i] = n
        elif p <= 0.5:
            out[i] = _btrs(u, n, p) if n * p >= 10 else _inversion(u, n, p)
        elif p > 0.5:
            q = 1 - p
            out[i] = n - (_btrs(u, n, q) if n * q >= 10 else _inversion(u, n, q))
        else:
            out[i] = math.nan
    g.random_uint64(used)
    return out.reshape(np.shape(counts))
