"""``ember.quasirandom.SobolEngine``: Sobol' low-discrepancy sequences, the same points as
``torch.quasirandom.SobolEngine``.

Points come from the Gray-code construction over the direction numbers of Joe and Kuo
(2008): each new point is the previous one XOR one direction number per dimension. The
direction numbers of the first 1111 dimensions ship with ember; higher dimensions (up to
21201) read Joe and Kuo's full table from SciPy (``pip install scipy``).

>>> import ember
>>> engine = ember.quasirandom.SobolEngine(dimension=3)
>>> engine.draw(4)
tensor([[0.0000, 0.0000, 0.0000],
        [0.5000, 0.5000, 0.5000],
        [0.7500, 0.2500, 0.2500],
        [0.2500, 0.7500, 0.7500]])
"""
from __future__ import annotations

import functools
import os

import numpy as np

from . import dtypes, random
from .creation import randint, tensor
from .tensor import Tensor

__all__ = ["SobolEngine"]

_SHIPPED = 1111


@functools.lru_cache(maxsize=None)
def _shipped():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                        "sobol_directions.npz")
    with np.load(path) as table:
        poly, values = table["poly"].astype(np.int64), table["m"].astype(np.int64)
    degrees = [max(int(p).bit_length() - 1, 1) for p in poly]
    starts = np.concatenate([[0], np.cumsum(degrees)])
    return poly, [values[starts[i]:starts[i + 1]] for i in range(len(poly))]


@functools.lru_cache(maxsize=None)
def _full():
    try:
        from importlib import resources

        import scipy.stats  # noqa: F401  (the table ships inside SciPy)
    except ImportError:
        raise ImportError("SobolEngine with more than 1111 dimensions needs Joe and Kuo's "
                          "full direction-number table from SciPy: pip install scipy") from None
    path = resources.files("scipy.stats") / "_sobol_direction_numbers.npz"
    with resources.as_file(path) as file, np.load(file) as table:
        poly, vinit = table["poly"].astype(np.int64), table["vinit"].astype(np.int64)
    return poly, [vinit[i] for i in range(len(poly))]


def _directions(dimension: int, bits: int) -> np.ndarray:
    """(dimension, bits) int64 direction numbers, already shifted to ``bits`` bits."""
    poly, initial = _shipped() if dimension <= _SHIPPED else _full()
    state = np.zeros((dimension, bits), dtype=np.int64)
    state[0] = 1
    for d in range(1, dimension):
        p = int(poly[d])
        degree = p.bit_length() - 1
        m = [int(v) for v in initial[d][:degree]]
        for j in range(degree, bits):
            # m_j = m_{j-s} ^ (m_{j-s} << s) ^ sum_k a_k (m_{j-k} << k), a_k = bit s-k of p
            value = m[j - degree] ^ (m[j - degree] << degree)
            for k in range(1, degree):
                if (p >> (degree - k)) & 1:
                    value ^= m[j - k] << k
            m.append(value)
        state[d] = m[:bits]
    shifts = np.arange(bits - 1, -1, -1, dtype=np.int64)
    return state << shifts


def _lowest_zero_bit(n: int) -> int:
    return ((~n) & (n + 1)).bit_length() - 1


class SobolEngine:
    """A generator of Sobol' points in [0, 1)^dimension.

    dimension: 1 to 21201; scramble: apply a random linear matrix scramble and digital
    shift (drawn from a generator seeded with ``seed``, or the global one), as PyTorch.

    >>> import ember
    >>> engine = ember.quasirandom.SobolEngine(2, scramble=True, seed=0)
    >>> engine.draw(2).shape
    ember.Size([2, 2])
    """

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is "
                             f"[1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self._state = _directions(dimension, self.MAXBIT)
        if scramble:
            self._scramble()
        else:
            self._shift = np.zeros(dimension, dtype=np.int64)
        self._quasi = self._shift.copy()
        # the first point, divided in the default float dtype of the moment, as PyTorch
        default = dtypes.get_default_dtype().numpy
        self._first_point = self._shift.astype(default) / default.type(2 ** self.MAXBIT)
        self.num_generated = 0

    @property
    def sobolstate(self) -> Tensor:
        """The (dimension, MAXBIT) direction numbers in use."""
        return tensor(self._state)

    @property
    def shift(self) -> Tensor:
        return tensor(self._shift)

    @property
    def quasi(self) -> Tensor:
        """The integer state: the last point drawn, times 2**MAXBIT."""
        return tensor(self._quasi)

    def _scramble(self) -> None:
        generator = None
        if self.seed is not None:
            generator = random.Generator()
            generator.manual_seed(self.seed)
        bits = self.MAXBIT
        shift_bits = randint(2, (self.dimension, bits), generator=generator).numpy()
        self._shift = shift_bits.astype(np.int64) @ (np.int64(1) << np.arange(bits))
        lower = np.tril(randint(2, (self.dimension, bits, bits), generator=generator).numpy())
        diagonal = np.arange(bits)
        lower[:, diagonal, diagonal] = 1  # an invertible scramble: ones on the diagonal
        # each direction number v becomes L v over GF(2), bit k of v counted from the top
        columns = (self._state[:, :, None] >> np.arange(bits - 1, -1, -1)) & 1
        product = np.einsum("dpk,djk->djp", lower.astype(np.int64), columns) & 1
        self._state = (product << np.arange(bits - 1, -1, -1)).sum(-1)

    def _advance(self, count: int, first_index: int, dtype) -> np.ndarray:
        out = np.empty((count, self.dimension), dtype=np.int64)
        quasi = self._quasi
        for i in range(count):
            quasi = quasi ^ self._state[:, _lowest_zero_bit(first_index + i)]
            out[i] = quasi
        self._quasi = quasi
        return out

    def draw(self, n: int = 1, out: Tensor | None = None, dtype=None) -> Tensor:
        """The next ``n`` points, shape (n, dimension), in ``dtype`` (the default float
        dtype by default)."""
        d = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
        if n < 0:
            raise RuntimeError(f"draw(): n must be non-negative, got {n}")
        if self.num_generated == 0:
            rest = self._advance(n - 1, 0, d) if n > 1 else np.empty((0, self.dimension),
                                                                   np.int64)
            values = (rest * 2.0 ** -self.MAXBIT).astype(d.numpy)
            values = np.concatenate([self._first_point[None, :].astype(d.numpy), values])[:n]
        else:
            points = self._advance(n, self.num_generated - 1, d)
            values = (points * 2.0 ** -self.MAXBIT).astype(d.numpy)
        self.num_generated += n
        result = tensor(values, dtype=d)
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m: int, out: Tensor | None = None, dtype=None) -> Tensor:
        """The next ``2**m`` points; the total drawn must stay a power of 2 (Sobol' points
        are balanced only in such blocks)."""
        n = 2 ** m
        total = self.num_generated + n
        if total & (total - 1):
            raise ValueError(
                "The balance properties of Sobol' points require n to be a power of 2. "
                f"{self.num_generated} points have been previously generated, then: "
                f"n={self.num_generated}+2**{m}={total}. If you still want to do this, "
                "please use 'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self) -> "SobolEngine":
        """Back to the first point."""
        self._quasi = self._shift.copy()
        self.num_generated = 0
        return self

    def fast_forward(self, n: int) -> "SobolEngine":
        """Skip ``n`` points, as if they had been drawn."""
        if self.num_generated == 0:
            self._advance(n - 1, 0, None) if n > 1 else None
        else:
            self._advance(n, self.num_generated - 1, None)
        self.num_generated += n
        return self

    def __repr__(self) -> str:
        parts = [f"dimension={self.dimension}"]
        if self.scramble:
            parts.append("scramble=True")
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return f"SobolEngine({', '.join(parts)})"
