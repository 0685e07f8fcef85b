"""``make``: builds sample inputs for the op table on one device and dtype, reproducibly."""
from __future__ import annotations

import zlib

import numpy as np

import ember


class Maker:
    """``make(shape, low=-2, high=2, requires_grad=True)`` makes a floating tensor;
    ``make.int`` / ``make.bool`` / ``make.index`` make the others."""

    def __init__(self, device: str, dtype, seed_text: str):
        self.device = device
        self.dtype = dtype
        self.rng = np.random.default_rng(zlib.crc32(seed_text.encode()))

    def _tensor(self, array, requires_grad=False):
        return ember.tensor(array, device=self.device).requires_grad_(requires_grad)

    def __call__(self, shape, low=-2.0, high=2.0, requires_grad=True, dtype=None):
        values = self.rng.uniform(low, high, size=shape)
        d = dtype or self.dtype
        t = ember.tensor(values, dtype=d, device=self.device)
        return t.requires_grad_(requires_grad and t.is_floating_point())

    def int(self, shape, low=0, high=5, dtype=None):
        values = self.rng.integers(low, high, size=shape)
        return ember.tensor(values, dtype=dtype or ember.int64, device=self.device)

    def bool(self, shape):
        return ember.tensor(self.rng.random(size=shape) < 0.5, device=self.device)

    def index(self, shape, high):
        """int64 indices in [0, high)."""
        return self.int(shape, 0, high)

    def positive_definite(self, n, batch=()):
        a = self.rng.standard_normal(batch + (n, n))
        matrix = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
        return ember.tensor(matrix, dtype=self.dtype, device=self.device).requires_grad_(True)

    def numpy(self, shape, low=-2.0, high=2.0):
        return self.rng.uniform(low, high, size=shape)
