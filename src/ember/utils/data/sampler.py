"""Samplers: the order in which a DataLoader visits a map-style dataset's indices."""
from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from ...tensor import Tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


def _random_seed(generator=None) -> int:
    """``empty((), dtype=int64).random_()``: one seed drawn from ``generator`` (or the
    default generator), as PyTorch's samplers and DataLoader draw theirs."""
    from ... import dtypes
    from ...creation import empty

    return int(empty((), dtype=dtypes.int64).random_(generator=generator).item())


def _own_generator(generator):
    """``generator``, or as PyTorch's RandomSampler does without one: a fresh Generator
    seeded by a draw from the default generator."""
    if generator is not None:
        return generator
    from ...random import Generator

    return Generator().manual_seed(_random_seed())


def _randperm(n: int, generator) -> list:
    from ...creation import randperm

    return randperm(n, generator=generator).tolist()


class Sampler:
    """Base class: an iterable of indices (or of lists of indices, for batch samplers)."""

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices, or with ``replacement=True`` ``num_samples``
    independent uniform draws. Without replacement, ``num_samples`` larger than the dataset
    chains several permutations."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if not isinstance(self.num_samples, int) or isinstance(self.num_samples, bool) \
                or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        from ...creation import randint

        n = len(self.data_source)
        generator = _own_generator(self.generator)
        if self.replacement:  # in blocks of 32, as PyTorch draws them
            for _ in range(self.num_samples // 32):
                yield from randint(0, n, (32,), generator=generator).tolist()
            yield from randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from _randperm(n, generator)
        yield from _randperm(n, generator)[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _randperm(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probability proportional to ``weights`` (with
    replacement by default; without it, ``num_samples`` can't exceed the number of
    non-zero weights)."""

    def __init__(self, weights, num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) \
                or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        array = np.asarray(weights.detach()._host() if isinstance(weights, Tensor) else weights,
                           dtype=np.float64)
        if array.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(array.shape)}")
        if (array < 0).any() or not np.isfinite(array).all() or array.sum() <= 0:
            raise RuntimeError("WeightedRandomSampler: weights must be finite, non-negative and "
                               "not all zero")
        if not replacement and num_samples > int((array > 0).sum()):
            raise RuntimeError("WeightedRandomSampler: cannot draw num_samples="
                               f"{num_samples} without replacement from "
                               f"{int((array > 0).sum())} non-zero weights")
        from ...creation import tensor

        self.weights = tensor(array, dtype=None)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        from ...ops.sampling import multinomial

        yield from multinomial(self.weights, self.num_samples, self.replacement,
                               generator=self.generator).tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler``; the last, shorter list is kept
    unless ``drop_last``.

    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
