"""The DataLoader: batches from a dataset, in the main process or in worker processes."""
from __future__ import annotations

import itertools
import multiprocessing
import pickle
import queue
import time

from . import _worker
from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

get_worker_info = _worker.get_worker_info


class _InfiniteConstantSampler(Sampler):
    """For iterable datasets: the 'indices' are placeholders; the dataset decides."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over a dataset in batches.

    - ``batch_size`` samples per batch (None: no batching, each sample converted with
      ``default_convert``); ``drop_last`` drops a final short batch.
    - ``shuffle=True`` visits a map-style dataset in a random order (a RandomSampler drawing
      from ``generator``, or from ``ember.manual_seed``'s generator); ``sampler`` or
      ``batch_sampler`` choose the order yourself.
    - ``collate_fn`` merges samples into a batch (``default_collate``: tensors stacked,
      numbers to tensors, dicts/tuples/lists recursively).
    - ``num_workers > 0`` loads batches in that many worker processes
      (``multiprocessing_context`` or the platform's default start method), each keeping
      ``prefetch_factor`` (default 2) batches in flight. Batches come back in the sampler's
      order (unless ``in_order=False``), so they equal the ``num_workers=0`` batches.
      Workers are seeded ``base_seed + worker_id`` (ember, NumPy's global RNG and Python's
      ``random``); ``worker_init_fn(worker_id)`` runs in each worker first. Workers never
      touch the GPU: they send NumPy arrays, and the main process makes the tensors.
      ``persistent_workers`` keeps the workers between epochs; ``timeout`` (seconds, 0 =
      wait forever) bounds the wait for one batch.
    - ``pin_memory=True`` puts the batches' tensors in page-locked host memory when CUDA is
      available, which makes ``batch.to('cuda')`` faster; without CUDA it changes nothing.

    ``len(loader)`` is the number of batches (for an IterableDataset: derived from the
    dataset's ``__len__`` when it has one).

    >>> ds = TensorDataset(ember.arange(5.0), ember.arange(5))
    >>> batches = [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
    >>> len(batches), batches[-1]
    (3, [4])
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if num_workers > 0 and isinstance(multiprocessing_context, str):
            methods = multiprocessing.get_all_start_methods()
            if multiprocessing_context not in methods:
                raise ValueError("multiprocessing_context option should specify a valid start "
                                 f"method in {methods!r}, but got "
                                 f"multiprocessing_context={multiprocessing_context!r}")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)

        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._iterator = None

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIterator(self)
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _MultiProcessIterator(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _MultiProcessIterator(self)

    def _fetcher(self):
        fetcher_class = _worker.IterableFetcher if self._iterable else _worker.MapFetcher
        return fetcher_class(self.dataset, self._auto_collation, self.collate_fn,
                             self.drop_last)


def _pin(data):
    """The batch with its tensors in pinned memory, where CUDA is available."""
    from ...backend import cuda

    if not cuda.is_available():
        return data
    return _worker.unpack(_worker.pack(data), pin=True)


def _base_seed(loader: DataLoader) -> int:
    """Drawn by every iterator, with or without workers, so both consume the generator
    alike and a seeded shuffle gives the same batches whatever num_workers is."""
    from .sampler import _random_seed

    return _random_seed(loader.generator)


class _SingleProcessIterator:
    def __init__(self, loader: DataLoader):
        self._loader = loader
        self._base_seed = _base_seed(loader)
        self._sampler_iter = iter(loader._index_sampler)
        self._fetcher = loader._fetcher()
        self._pin = loader.pin_memory

    def __iter__(self):
        return self

    def __next__(self):
        index = next(self._sampler_iter)
        data = self._fetcher.fetch(index)  # StopIteration ends an iterable dataset
        return _pin(data) if self._pin else data

    def __len__(self) -> int:
        return len(self._loader)


class _MultiProcessIterator:
    """Worker processes fed round-robin with sampler indices; results reordered into the
    sampler's order (unless in_order=False)."""

    def __init__(self, loader: DataLoader):
        context = loader.multiprocessing_context
        if context is None:
            context = multiprocessing.get_context()
        elif isinstance(context, str):
            context = multiprocessing.get_context(context)
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor * loader.num_workers
        self._timeout = loader.timeout
        self._pin = loader.pin_memory
        self._in_order = loader.in_order
        self._persistent = loader.persistent_workers
        self._epoch = 0
        self._closed = False
        base_seed = _base_seed(loader)
        self._done_event = context.Event()
        self._data_queue = context.Queue()
        self._index_queues = []
        self._workers = []
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()
            process = context.Process(
                target=_worker.worker_loop,
                args=(loader._iterable, loader.dataset, index_queue, self._data_queue,
                      self._done_event, loader._auto_collation, loader.collate_fn,
                      loader.drop_last, base_seed, loader.worker_init_fn, worker_id,
                      self._num_workers),
                daemon=True)
            process.start()
            self._index_queues.append(index_queue)
            self._workers.append(process)
        self._reset(loader, first=True)

    def _reset(self, loader: DataLoader, first: bool = False) -> None:
        if not first:
            # Persistent workers keep their seeds, but draw as a fresh iterator would, so
            # that later epochs shuffle exactly as with num_workers=0.
            _base_seed(loader)
        self._loader = loader
        self._epoch += 1
        self._sampler_iter = iter(loader._index_sampler)
        self._send_index = 0
        self._receive_index = 0
        self._tasks = {}  # task index -> [worker id] or [worker id, data]
        self._outstanding = 0
        self._active = [True] * self._num_workers
        self._cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch):
            self._put_task()

    def _put_task(self) -> None:
        if self._outstanding >= self._prefetch:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._cycle)
            if self._active[worker_id]:
                break
        else:
            return
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        self._index_queues[worker_id].put((self._epoch, self._send_index, index))
        self._tasks[self._send_index] = [worker_id]
        self._outstanding += 1
        self._send_index += 1

    def _get(self):
        """The next (task index, result) of this epoch from any worker."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _worker.STATUS_CHECK_INTERVAL
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            try:
                epoch, task_index, payload = self._data_queue.get(timeout=wait)
            except queue.Empty:
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(map(str, dead))}) "
                                       "exited unexpectedly") from None
                continue
            if epoch == self._epoch:
                return task_index, pickle.loads(payload)

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def __next__(self):
        while True:
            while self._receive_index < self._send_index:
                info = self._tasks.get(self._receive_index)
                if info is not None and (len(info) == 2 or self._active[info[0]]):
                    break
                self._tasks.pop(self._receive_index, None)
                self._receive_index += 1
            else:
                if not self._persistent:
                    self._shutdown()
                raise StopIteration
            info = self._tasks[self._receive_index]
            if len(info) == 2:
                del self._tasks[self._receive_index]
                self._receive_index += 1
                return self._finish(info[1])
            task_index, data = self._get()
            self._outstanding -= 1
            if isinstance(data, _worker.IterableEnd):
                self._active[data.worker_id] = False
                self._tasks.pop(task_index, None)
                self._put_task()
                continue
            if task_index == self._receive_index:
                del self._tasks[task_index]
                self._receive_index += 1
                return self._finish(data)
            if not self._in_order:
                self._tasks.pop(task_index, None)
                return self._finish(data)
            self._tasks[task_index].append(data)

    def _finish(self, data):
        self._put_task()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        from ...backend import cuda

        return _worker.unpack(data, pin=self._pin and cuda.is_available())

    def _shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._done_event.set()
        for index_queue in self._index_queues:
            try:
                index_queue.put(None)
            except (OSError, ValueError):
                pass
        for process in self._workers:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join(timeout=5)
        for q in self._index_queues + [self._data_queue]:
            q.cancel_join_thread()
            q.close()

    def __del__(self):
        if getattr(self, "_workers", None) is not None:
            try:
                self._shutdown()
            except Exception:  # at interpreter exit, queues and modules may be gone already
                pass
