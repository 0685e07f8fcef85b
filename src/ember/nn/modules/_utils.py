"""Small helpers shared by the modules: turning an int into an n-tuple."""
from __future__ import annotations

import collections.abc
from itertools import repeat


def _ntuple(n: int):
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(repeat(x, n))
    return parse


_single = _ntuple(1)
_pair = _ntuple(2)
_triple = _ntuple(3)


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """(a, b) with n=2 -> (b, b, a, a): the per-dimension padding in F.pad's order."""
    return tuple(x for x in reversed(t) for _ in range(n))
