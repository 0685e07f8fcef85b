"""What runs inside a DataLoader worker process, and what travels between processes.

Workers never make CUDA tensors and never send ember Tensors: each batch is pickled with
its tensors replaced by their NumPy arrays (``_ArrayPayload``), and the main process turns
them back into tensors. Pickle here only carries data between our own processes; files
never hold pickles (see ``ember.save``).
"""
from __future__ import annotations

import collections.abc
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ...tensor import Tensor

# How often a waiting worker or main process checks that the other side is still alive.
STATUS_CHECK_INTERVAL = 1.0

_worker_info = None


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: its ``id`` (0-based), the
    ``num_workers``, its random ``seed`` (``base_seed + id``; ember, NumPy's global and
    Python's ``random`` are seeded with it) and its copy of the ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info() -> WorkerInfo | None:
    """Inside a DataLoader worker process, its WorkerInfo; in the main process, None.
    An IterableDataset uses it to give each worker its own share of the stream."""
    return _worker_info


class _ArrayPayload:
    """A tensor on its way between processes: its host array and requires_grad flag."""

    __slots__ = ("array", "requires_grad")

    def __init__(self, array, requires_grad: bool):
        self.array = array
        self.requires_grad = requires_grad

    def __getstate__(self):
        return (self.array, self.requires_grad)

    def __setstate__(self, state):
        self.array, self.requires_grad = state


def _map_structure(data, leaf):
    """Apply ``leaf`` to the tensors/payloads inside dicts, named tuples, tuples, lists."""
    if isinstance(data, (Tensor, _ArrayPayload)):
        return leaf(data)
    if isinstance(data, collections.abc.Mapping):
        mapped = {k: _map_structure(v, leaf) for k, v in data.items()}
        try:
            return type(data)(mapped)
        except TypeError:
            return mapped
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_map_structure(v, leaf) for v in data))
    if isinstance(data, (tuple, list)):
        mapped = [_map_structure(v, leaf) for v in data]
        try:
            return type(data)(mapped)
        except TypeError:
            return mapped
    return data


def pack(data):
    """Tensors -> _ArrayPayload (host arrays)."""
    return _map_structure(data, lambda t: _ArrayPayload(t.detach()._host(), t.requires_grad))


def unpack(data, pin: bool):
    """_ArrayPayload -> CPU tensors (in pinned host memory when ``pin``)."""
    from ... import backend

    def make(payload):
        array = payload.array
        if pin:
            array = _pinned_copy(array)
        t = Tensor._make(array, backend.CPU, False)
        if payload.requires_grad:
            t.requires_grad_(True)
        return t

    return _map_structure(data, make)


def _forbid_cuda(worker_id: int) -> None:
    from ...backend import cuda

    cuda.forbid(
        f"DataLoader worker process {worker_id} tried to use CUDA. Workers can't: a forked "
        "process can't re-initialize CUDA. Return CPU tensors from the Dataset and move each "
        "batch in the training loop (batch.to('cuda')); pin_memory=True speeds that copy")


def _pinned_copy(array):
    from ...backend import cuda

    return cuda.pinned_copy(array)


class _KeyErrorMessage(str):
    """A KeyError argument whose repr is the text itself, so the traceback reads."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception raised in a worker, re-raised in the main process with the worker's
    traceback in its message."""

    def __init__(self, where: str):
        exc_type, exc, tb = sys.exc_info()
        self.exc_type = exc_type
        self.where = where
        self.message = "".join(traceback.format_exception(exc_type, exc, tb))

    def reraise(self):
        message = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.message}"
        if self.exc_type is KeyError:  # KeyError's str() is the repr of its argument
            message = _KeyErrorMessage(message)
        try:
            exception = self.exc_type(message)
        except Exception:  # an exception type that wants other arguments
            raise RuntimeError(message) from None
        raise exception


@dataclass(frozen=True)
class IterableEnd:
    """Sent by a worker whose IterableDataset iterator is exhausted."""

    worker_id: int


class MapFetcher:
    """Samples of a map-style dataset at the given index (or list of indices), collated."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if getitems else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class IterableFetcher:
    """The next sample (or the next ``len(index)`` samples) of an iterable dataset."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool):
        self.iterator = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.iterator))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.iterator)
        return self.collate_fn(data)


def seed_everything(seed: int) -> None:
    """Seed ember's generators, NumPy's global generator and Python's ``random``."""
    from ... import random as ember_random

    random.seed(seed)
    np.random.seed(seed % 2 ** 32)
    ember_random.manual_seed(seed)


def worker_loop(iterable: bool, dataset, index_queue, data_queue, done_event,
                auto_collation: bool, collate_fn, drop_last: bool, base_seed: int, init_fn,
                worker_id: int, num_workers: int) -> None:
    """The body of a worker process: take (epoch, task index, sampler indices) from
    ``index_queue``, put (epoch, task index, pickled packed batch) on ``data_queue``, until
    it receives None, the main process dies, or ``done_event`` is set."""
    global _worker_info
    parent = os.getppid()
    seed = base_seed + worker_id
    seed_everything(seed)
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    _forbid_cuda(worker_id)
    fetcher_class = IterableFetcher if iterable else MapFetcher
    where = f"in DataLoader worker process {worker_id}"
    init_error = None
    fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = fetcher_class(dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        init_error = ExceptionWrapper(where)
    current_epoch = None
    try:
        while True:
            try:
                task = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent or done_event.is_set():
                    break
                continue
            if task is None:
                break
            epoch, task_index, index = task
            if current_epoch is None:
                current_epoch = epoch
            elif epoch != current_epoch:  # persistent workers: a new epoch starts afresh
                current_epoch = epoch
                if init_error is None:
                    try:
                        fetcher = fetcher_class(dataset, auto_collation, collate_fn, drop_last)
                    except Exception:
                        init_error = ExceptionWrapper(where)
            if init_error is not None:
                result, init_error = init_error, None
            else:
                try:
                    result = pack(fetcher.fetch(index))
                except StopIteration:
                    result = IterableEnd(worker_id)
                except Exception:
                    result = ExceptionWrapper(where)
            try:
                payload = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:
                payload = pickle.dumps(ExceptionWrapper(where + " (sending its batch)"))
            data_queue.put((epoch, task_index, payload))
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
