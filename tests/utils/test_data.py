"""ember.utils.data: collate rules against PyTorch, samplers, datasets, random_split, and
the DataLoader with and without worker processes."""
from __future__ import annotations

import collections
import os
import time

import numpy as np
import pytest

import ember
from ember.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)
from tests.conftest import requires_torch

Point = collections.namedtuple("Point", ["x", "y"])


def _samples(lib):
    """Nested samples built the same way for ember and torch."""
    out = []
    for i in range(3):
        out.append((
            lib.tensor([float(i), 2.0 * i]),
            i,
            0.5 * i,
            i % 2 == 0,
            f"name{i}",
            {"array": np.arange(3, dtype=np.float32) + i, "ids": [i, i + 1],
             "nested": {"scalar": np.int16(i), "f64": np.float64(i) / 3}},
            Point(lib.tensor(i, dtype=lib.int32), [float(i)]),
            np.array([[i, i], [i, i]], dtype=np.int64),
        ))
    return out


def _compare(ours, theirs, path="batch"):
    import torch

    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, ember.Tensor), path
        assert ours.dtype.name == str(theirs.dtype).split(".")[1], path
        assert ours.shape == tuple(theirs.shape), path
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=path)
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs), path
        for key in theirs:
            _compare(ours[key], theirs[key], f"{path}[{key!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _compare(a, b, f"{path}[{i}]")
    else:
        assert ours == theirs and type(ours) is type(theirs), path


@requires_torch
def test_default_collate_matches_pytorch():
    import torch
    from torch.utils.data import default_collate as torch_collate

    _compare(default_collate(_samples(ember)), torch_collate(_samples(torch)))
    for batch in ([1.5, 2.5], [1, 2], [True, False], ["a", "b"], [np.float32(1.0)],
                  [{"a": (1, 2.0)}, {"a": (3, 4.0)}], [[[1], [2]], [[3], [4]]],
                  [np.zeros((2, 0))] * 2, [collections.OrderedDict(b=1, a=2)] * 2):
        _compare(default_collate(batch), torch_collate(batch))


@requires_torch
def test_default_convert_matches_pytorch():
    from torch.utils.data import default_convert as torch_convert

    data = {"a": np.arange(3), "b": (np.float32(2.0), [np.ones(2)]), "c": "text", "d": 3,
            "e": Point(np.int8(1), 2.0)}
    _compare(default_convert(data), torch_convert(data))


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="batch must contain tensors"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="batch must contain tensors"):
        default_collate([np.array(["a"]), np.array(["b"])])


class _Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return {"x": np.full((2,), i, dtype=np.float32), "y": i * i, "name": str(i)}


def _as_lists(batches):
    out = []
    for batch in batches:
        out.append({k: (v.tolist() if isinstance(v, ember.Tensor) else v)
                    for k, v in batch.items()})
    return out


@pytest.mark.parametrize("options", [
    dict(batch_size=4),
    dict(batch_size=3, drop_last=True, shuffle=True),
    dict(batch_size=None),
    dict(batch_size=5, prefetch_factor=1),
    dict(batch_sampler=[[3, 1], [0], [9, 8, 7]]),
])
def test_workers_yield_the_same_batches(options):
    dataset = _Squares(11)
    loaders = []
    for workers in (0, 2):
        kwargs = dict(options)
        if workers == 0:
            kwargs.pop("prefetch_factor", None)
        if kwargs.get("shuffle"):
            kwargs["generator"] = ember.Generator().manual_seed(7)
        loaders.append(DataLoader(dataset, num_workers=workers, **kwargs))
    plain, parallel = (_as_lists(loader) for loader in loaders)
    assert plain == parallel
    assert len(plain) == len(loaders[0]) == len(loaders[1])
    if options.get("batch_size") == 4:
        assert plain[0]["y"] == [0, 1, 4, 9] and plain[0]["name"] == ["0", "1", "2", "3"]
        assert plain[-1]["x"] == [[8.0, 8.0], [9.0, 9.0], [10.0, 10.0]]


def test_tensor_dataset_with_workers_keeps_dtypes():
    x = ember.arange(20, dtype=ember.float64).reshape(10, 2)
    y = ember.arange(10, dtype=ember.int32)
    dataset = TensorDataset(x, y)
    for workers in (0, 2):
        batches = list(DataLoader(dataset, batch_size=4, num_workers=workers))
        assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
        assert batches[0][0].dtype is ember.float64 and batches[0][1].dtype is ember.int32
        assert isinstance(batches[0], list)


def test_spawned_workers_receive_tensor_dataset():
    dataset = TensorDataset(ember.arange(6.0), ember.arange(6))
    loader = DataLoader(dataset, batch_size=2, num_workers=2, multiprocessing_context="spawn")
    assert [b[1].tolist() for b in loader] == [[0, 1], [2, 3], [4, 5]]


class _Stream(IterableDataset):
    """0..n-1, split between workers by get_worker_info()."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


def test_iterable_dataset_in_workers():
    single = [b.tolist() for b in DataLoader(_Stream(10), batch_size=3)]
    assert single == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    multi = [b.tolist() for b in DataLoader(_Stream(10), batch_size=2, num_workers=2)]
    # worker 0 has 0,2,4,6,8 and worker 1 has 1,3,5,7,9; batches alternate between them
    assert multi == [[0, 2], [1, 3], [4, 6], [5, 7], [8], [9]]
    assert len(DataLoader(_Stream(10), batch_size=3)) == 4
    assert len(DataLoader(_Stream(10), batch_size=3, drop_last=True)) == 3
    unbatched = [int(v) for v in DataLoader(_Stream(5), batch_size=None, num_workers=2)]
    assert sorted(unbatched) == [0, 1, 2, 3, 4]
    chained = [int(v) for v in DataLoader(_Stream(2) + _Stream(3), batch_size=None)]
    assert chained == [0, 1, 0, 1, 2]


def _seed_of_worker(_):
    info = get_worker_info()
    return {"id": info.id, "seed": info.seed, "numpy": float(np.random.random()),
            "ember": ember.rand(1).item(), "pid": os.getpid()}


class _WorkerReport(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return _seed_of_worker(i)


def test_worker_seeds_differ_and_init_fn_runs():
    def init(worker_id):
        np.random.seed(1000 + worker_id)

    reports = list(DataLoader(_WorkerReport(), batch_size=None, num_workers=2,
                              worker_init_fn=init, generator=ember.Generator().manual_seed(3)))
    by_worker = {r["id"]: r for r in reports}
    assert set(by_worker) == {0, 1}
    assert by_worker[1]["seed"] == by_worker[0]["seed"] + 1
    assert by_worker[0]["ember"] != by_worker[1]["ember"]
    assert by_worker[0]["pid"] != os.getpid()
    assert reports[0]["id"] == 0  # sample 0 went to worker 0, whose init_fn reseeded NumPy
    assert reports[0]["numpy"] == np.random.RandomState(1000).random_sample()


def test_persistent_workers_survive_epochs():
    loader = DataLoader(_WorkerReport(), batch_size=2, num_workers=2, persistent_workers=True)
    first = [b["pid"].tolist() for b in loader]
    second = [b["pid"].tolist() for b in loader]
    assert first == second  # the same worker processes served both epochs
    third = list(DataLoader(_Stream(6), batch_size=2, num_workers=2, persistent_workers=True))
    assert len(third) == 4
    stream = DataLoader(_Stream(6), batch_size=2, num_workers=2, persistent_workers=True)
    epochs = [[b.tolist() for b in stream] for _ in range(2)]
    assert epochs[0] == epochs[1] == [[0, 2], [1, 3], [4], [5]]
    partial = iter(stream)
    next(partial)  # abandon an epoch half-way: the next one still starts from the beginning
    assert [b.tolist() for b in stream] == epochs[0]


class _Broken(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise KeyError(f"sample {i} is missing")
        return i


def test_worker_exception_is_reraised_with_its_type():
    with pytest.raises(KeyError, match="worker process") as info:
        list(DataLoader(_Broken(), batch_size=2, num_workers=2))
    assert "sample 5 is missing" in str(info.value)
    with pytest.raises(KeyError, match="sample 5 is missing"):
        list(DataLoader(_Broken(), batch_size=2))


class _Slow(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            time.sleep(120)  # far longer than the timeout; the test ends the worker
        return i


def test_timeout():
    loader = DataLoader(_Slow(), batch_size=1, num_workers=1, timeout=3)
    it = iter(loader)
    assert next(it).tolist() == [0]
    assert next(it).tolist() == [1]
    with pytest.raises(RuntimeError, match="timed out after 3 seconds"):
        next(it)
    it._workers[0].terminate()
    it._shutdown()


class _Tensors(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return ember.full((2,), float(i))


def test_pin_memory_is_harmless_on_cpu():
    batches = list(DataLoader(_Tensors(), batch_size=2, pin_memory=True))
    assert batches[0].tolist() == [[0, 0], [1, 1]]
    batches = list(DataLoader(_Tensors(), batch_size=2, num_workers=1, pin_memory=True))
    assert batches[0].tolist() == [[0, 0], [1, 1]]


@pytest.mark.parametrize("kwargs,message", [
    (dict(num_workers=-1), "num_workers option should be non-negative"),
    (dict(timeout=-1), "timeout option should be non-negative"),
    (dict(prefetch_factor=2), "prefetch_factor option could only be specified"),
    (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
    (dict(shuffle=True, sampler=[0, 1]), "mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually exclusive"),
    (dict(batch_size=None, drop_last=True), "batch_size=None option disables auto-batching"),
    (dict(batch_size=0), "batch_size should be a positive integer value"),
])
def test_dataloader_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DataLoader(_Squares(3), **kwargs)


def test_iterable_dataset_refuses_sampling_options():
    with pytest.raises(ValueError, match="expected unspecified shuffle"):
        DataLoader(_Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler"):
        DataLoader(_Stream(3), sampler=[0])


def test_shuffle_is_seeded_by_manual_seed_and_generator():
    def order(**kwargs):
        return [b.tolist() for b in DataLoader(range(10), batch_size=10, shuffle=True,
                                               **kwargs)][0]

    ember.manual_seed(5)
    a = order()
    ember.manual_seed(5)
    assert order() == a
    assert sorted(a) == list(range(10))
    assert order(generator=ember.Generator().manual_seed(1)) == order(
        generator=ember.Generator().manual_seed(1))


def test_samplers():
    g = ember.Generator().manual_seed(0)
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    perm = list(RandomSampler(range(6), generator=g))
    assert sorted(perm) == list(range(6))
    more = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert len(more) == 10 and sorted(more[:4]) == [0, 1, 2, 3]
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=50, generator=g))
    assert len(drawn) == 50 and set(drawn) <= {0, 1, 2}
    subset = list(SubsetRandomSampler([10, 20, 30], generator=g))
    assert sorted(subset) == [10, 20, 30]
    weighted = list(WeightedRandomSampler([0.0, 1.0, 3.0], 200, generator=g))
    assert 0 not in weighted and weighted.count(2) > weighted.count(1)
    unique = list(WeightedRandomSampler(ember.tensor([1.0, 0.0, 1.0, 1.0]), 3,
                                        replacement=False, generator=g))
    assert sorted(unique) == [0, 2, 3]
    assert list(BatchSampler(range(5), 2, drop_last=True)) == [[0, 1], [2, 3]]
    assert len(BatchSampler(range(5), 2, drop_last=False)) == 3
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(RuntimeError, match="without replacement"):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)
    with pytest.raises(ValueError, match="drop_last should be a boolean"):
        BatchSampler(range(3), 2, drop_last=None)


def test_datasets():
    x, y = ember.arange(6.0).reshape(3, 2), ember.tensor([7, 8, 9])
    ds = TensorDataset(x, y)
    assert len(ds) == 3 and ds[1][0].tolist() == [2.0, 3.0] and ds[1][1].item() == 8
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(x, ember.tensor([1, 2]))
    both = ds + TensorDataset(ember.zeros(2, 2), ember.tensor([0, 0]))
    assert isinstance(both, ConcatDataset) and len(both) == 5
    assert both[3][1].item() == 0 and both[-3][1].item() == 9
    with pytest.raises(IndexError):
        both[5]
    sub = Subset(ds, [2, 0])
    assert len(sub) == 2 and sub[0][1].item() == 9
    stacked = StackDataset(a=range(3), b=range(10, 13))
    assert stacked[1] == {"a": 1, "b": 11}
    assert isinstance(_Stream(2) + _Stream(1), ChainDataset)


@requires_torch
def test_random_split_sizes_match_pytorch():
    import torch

    for n, fractions in ((10, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]), (7, [0.2, 0.2, 0.6]),
                         (5, [0.1, 0.9])):
        ours = [len(s) for s in random_split(range(n), fractions)]
        theirs = [len(s) for s in torch.utils.data.random_split(range(n), fractions)]
        assert ours == theirs


def test_random_split():
    parts = random_split(range(10), [3, 7], generator=ember.Generator().manual_seed(0))
    again = random_split(range(10), [3, 7], generator=ember.Generator().manual_seed(0))
    assert [list(p) for p in parts] == [list(p) for p in again]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(10), [3, 3])


class _Dies(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            os._exit(1)  # a worker killed (e.g. by the OOM killer) mid-epoch
        return i


def test_dead_worker_is_reported():
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(DataLoader(_Dies(), batch_size=1, num_workers=2))


def test_abandoned_iterator_stops_its_workers():
    import gc

    iterator = iter(DataLoader(_Squares(50), batch_size=2, num_workers=2))
    next(iterator)
    workers = list(iterator._workers)
    assert all(w.is_alive() for w in workers)
    del iterator
    gc.collect()
    for worker in workers:
        worker.join(timeout=30)
    assert not any(w.is_alive() for w in workers)


class _SlowFirst(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 0:
            time.sleep(1.0)
        return i


def test_in_order_false_yields_every_batch_once():
    batches = [int(b) for b in DataLoader(_SlowFirst(), batch_size=None, num_workers=2,
                                            in_order=False)]
    assert sorted(batches) == list(range(6))
    ordered = [int(b) for b in DataLoader(_SlowFirst(), batch_size=None, num_workers=2)]
    assert ordered == list(range(6))


def test_persistent_workers_shuffle_like_the_main_process_every_epoch():
    def epochs(**kwargs):
        loader = DataLoader(range(12), batch_size=4, shuffle=True,
                            generator=ember.Generator().manual_seed(11), **kwargs)
        return [[b.tolist() for b in loader] for _ in range(3)]

    plain = epochs()
    assert plain[0] != plain[1]
    assert epochs(num_workers=2, persistent_workers=True) == plain
    assert epochs(num_workers=2) == plain
