"""``default_collate`` (a list of samples -> one batch) and ``default_convert`` (NumPy ->
tensors without batching), with PyTorch's rules."""
from __future__ import annotations

import collections.abc

import numpy as np

from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
          "found {}")


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _rebuild_mapping(elem, values: dict):
    try:
        return type(elem)(values)
    except TypeError:  # a mapping type that can't be built from a dict
        return values


def default_convert(data):
    """NumPy arrays and NumPy scalars to tensors, recursively through dicts, named tuples,
    tuples and lists; everything else unchanged (arrays of strings or objects too).
    The DataLoader uses it when automatic batching is off (``batch_size=None``)."""
    from ...creation import as_tensor

    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        if data.dtype.kind in "USOV":
            return data
        return as_tensor(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return as_tensor(np.asarray(data))  # a 0-d array keeps the scalar's dtype
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(v) for k, v in data.items()})
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted = [default_convert(d) for d in data]
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    return data


def default_collate(batch):
    """Merge a list of samples into a batch, as PyTorch does:

    - tensors -> ``ember.stack(batch)`` (a new first dimension);
    - NumPy arrays -> tensors, then stacked; NumPy scalars -> a 1-d tensor;
    - Python floats -> float64 tensor, ints -> int64, bools -> bool;
    - strings and bytes -> the batch unchanged (a list, or a tuple inside a sequence);
    - dicts -> a dict of collated values per key; named tuples -> the same named tuple of
      collated fields; tuples -> a list of collated positions; lists -> the same (all
      samples must have equal length).

    >>> default_collate([(ember.tensor([1.0]), 0), (ember.tensor([2.0]), 1)])
    [tensor([[1.],
            [2.]]), tensor([0, 1])]
    """
    from ... import stack
    from ...creation import as_tensor, tensor

    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "USOV":
            raise TypeError(_ERROR.format(elem.dtype))
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        if isinstance(elem, (np.str_, np.bytes_)):
            return batch
        if elem.dtype.kind in "OV":
            raise TypeError(_ERROR.format(elem.dtype))
        return as_tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return tensor(list(batch))
    if isinstance(elem, float):
        from ... import float64

        return tensor(list(batch), dtype=float64)
    if isinstance(elem, int):
        return tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: default_collate([d[key] for d in batch])
                                       for key in elem})
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [default_collate(samples) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return transposed
        try:
            return type(elem)(transposed)
        except TypeError:
            return transposed
    raise TypeError(_ERROR.format(type(elem)))
