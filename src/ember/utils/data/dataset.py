"""Datasets: map-style (``__getitem__`` + ``__len__``) and iterable (``__iter__``), and
the ways to combine and split them."""
from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Sequence

import numpy as np

from ...tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]


class _DatasetValueError(ValueError, AssertionError):
    """PyTorch asserts these checks: both ``except ValueError`` and ``except
    AssertionError`` catch it."""


class _NoSampleDimension(ValueError, IndexError):
    """A 0-d tensor in a TensorDataset (PyTorch raises IndexError from ``size(0)``)."""


class _ChainTypeError(TypeError, AssertionError):
    """PyTorch asserts this check; ``except TypeError`` keeps working too."""


class Dataset:
    """A map-style dataset: ``dataset[i]`` is sample ``i``; subclasses define
    ``__getitem__`` and usually ``__len__``. ``a + b`` concatenates."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read as a stream: subclasses define ``__iter__``. With worker processes,
    every worker iterates its own copy; use ``ember.utils.data.get_worker_info()`` inside
    ``__iter__`` to give each worker a different share."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __add__(self, other: "Dataset") -> "ChainDataset":
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the rows of tensors that share their first dimension:
    ``dataset[i] == (t[i] for t in tensors)``.

    >>> ds = TensorDataset(ember.arange(6.0).reshape(3, 2), ember.tensor([0, 1, 0]))
    >>> ds[1]
    (tensor([2., 3.]), tensor(1))
    """

    def __init__(self, *tensors: Tensor) -> None:
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset expects tensors, got {type(t).__name__}")
        if tensors and any(t.dim() == 0 for t in tensors):
            raise _NoSampleDimension("TensorDataset: every tensor needs a first (sample) "
                                     "dimension; got a 0-d tensor")
        if any(t.size(0) != tensors[0].size(0) for t in tensors):
            raise _DatasetValueError("Size mismatch between tensors: TensorDataset needs the same "
                                     f"first dimension, got {[t.size(0) for t in tensors]}")
        self.tensors = tuple(tensors)

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0) if self.tensors else 0

    # Worker processes started with 'spawn' receive the dataset pickled. ember tensors refuse
    # pickling (files must never carry pickles); between our own processes the NumPy arrays
    # travel instead, and become CPU tensors again on arrival (workers never touch a GPU).
    def __getstate__(self):
        return {"arrays": [(t._host(), t.requires_grad) for t in self.tensors]}

    def __setstate__(self, state):
        from ... import backend

        self.tensors = tuple(Tensor._make(array, backend.CPU, False).requires_grad_(grad)
                             for array, grad in state["arrays"])


class StackDataset(Dataset):
    """Samples are tuples (or dicts) of the samples of several datasets of equal length:
    ``StackDataset(images, labels)[i] == (images[i], labels[i])``."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        datasets = args or tuple(kwargs.values())
        if not datasets:
            raise ValueError("At least one dataset should be passed")
        length = len(datasets[0])
        if any(length != len(d) for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self._length = length
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """The samples of several map-style datasets one after the other."""

    @staticmethod
    def cumsum(sequence) -> list[int]:
        total, result = 0, []
        for d in sequence:
            total += len(d)
            result.append(total)
        return result

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise _DatasetValueError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise ValueError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index = len(self) + index
        which = bisect.bisect_right(self.cumulative_sizes, index)
        if which >= len(self.datasets):
            raise IndexError(f"index {index} is out of range for a ConcatDataset of length "
                             f"{len(self)}")
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][index - start]


class ChainDataset(IterableDataset):
    """The samples of several iterable datasets, one stream after the other."""

    def __init__(self, datasets) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise _ChainTypeError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):  # the dataset's own list indexing, as PyTorch
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list[int]) -> list:
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems is not None:
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths, generator=None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random subsets of the given ``lengths``, or of
    the given fractions of its length (they must sum to 1; the remainder of the rounding
    down goes one by one to the first subsets).

    >>> train, test = random_split(range(10), [0.8, 0.2], ember.Generator().manual_seed(0))
    >>> len(train), len(test)
    (8, 2)
    """
    from ...creation import randperm
    from ...random import default_generator

    lengths = list(lengths)
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, fraction in enumerate(lengths):
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(math.floor(n * fraction)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              "empty dataset.", UserWarning, stacklevel=2)
        lengths = sizes
    if any(not float(length).is_integer() or length < 0 for length in lengths):
        raise ValueError(f"random_split: lengths must be non-negative integers or fractions "
                         f"summing to 1, got {lengths}")
    lengths = [int(length) for length in lengths]
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset! "
                         f"(sum {sum(lengths)}, dataset length {n})")
    order = randperm(n, generator=generator or default_generator).tolist()
    offsets = np.cumsum([0] + lengths)
    return [Subset(dataset, order[offsets[i]:offsets[i + 1]]) for i in range(len(lengths))]
