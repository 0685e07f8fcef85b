"""ember.utils.data against PyTorch: exception types users catch, worker error text, and
start-method validation at construction."""
from __future__ import annotations

import pytest

import ember
from ember.utils import data as ED
from tests.conftest import requires_torch

# (name, call(lib, data_module)) for constructions PyTorch refuses.
REFUSED = [
    ("tensor_dataset_size_mismatch",
     lambda L, D: D.TensorDataset(L.zeros(3), L.zeros(4))),
    ("tensor_dataset_0d", lambda L, D: D.TensorDataset(L.tensor(1.0))),
    ("concat_dataset_empty", lambda L, D: D.ConcatDataset([])),
    ("chain_of_map_dataset", lambda L, D: list(D.ChainDataset([D.TensorDataset(L.zeros(2))]))),
]


def _raised(call, lib, data):
    with pytest.raises(Exception) as info:
        call(lib, data)
    return info.value


@requires_torch
@pytest.mark.parametrize("name,call", REFUSED, ids=[r[0] for r in REFUSED])
def test_refusals_raise_torch_exception_type(name, call):
    import torch
    import torch.utils.data as TD

    expected = type(_raised(call, torch, TD))
    assert isinstance(_raised(call, ember, ED), expected)


@pytest.mark.parametrize("name,call", REFUSED, ids=[r[0] for r in REFUSED])
def test_refusals_keep_their_old_type(name, call):
    # code catching what ember raised before keeps working
    old = TypeError if name.startswith("chain") else ValueError
    assert isinstance(_raised(call, ember, ED), old)


@requires_torch
def test_subset_list_index_uses_dataset_list_indexing():
    import torch
    import torch.utils.data as TD

    def batch(L, D):
        ds = D.TensorDataset(L.arange(10), L.arange(10) * 2)
        x, y = D.Subset(ds, [7, 1, 4])[[0, 2]]
        return x.tolist(), y.tolist()

    assert batch(ember, ED) == batch(torch, TD) == ([7, 4], [14, 8])


class _MissingKey(ED.Dataset):
    def __getitem__(self, index):
        raise KeyError("sample gone")

    def __len__(self):
        return 2


def test_worker_key_error_message_reads_as_text():
    loader = ED.DataLoader(_MissingKey(), num_workers=1)
    with pytest.raises(KeyError) as info:
        next(iter(loader))
    text = str(info.value)
    # str(KeyError(s)) is repr(s) unless the message says otherwise: no quotes, real newlines
    assert text.startswith("Caught KeyError in DataLoader worker process 0.\nOriginal ")
    assert "\\n" not in text
    assert "KeyError: 'sample gone'" in text


def test_bad_start_method_refused_at_construction():
    with pytest.raises(ValueError, match="multiprocessing_context option should specify a "
                                         "valid start method.*'bogus'"):
        ED.DataLoader(range(4), num_workers=1, multiprocessing_context="bogus")


def test_start_method_ignored_without_workers():
    # PyTorch only checks it when workers will start
    assert len(list(ED.DataLoader(range(2), multiprocessing_context="bogus"))) == 2


@requires_torch
def test_seeded_streams_match_torch():
    import torch
    import torch.utils.data as TD

    def stream(L, D):
        L.manual_seed(5)
        ds = D.TensorDataset(L.arange(10))
        out = [b[0].tolist() for b in D.DataLoader(ds, batch_size=4, shuffle=True)]
        out += [s.indices for s in D.random_split(range(10), [0.3, 0.7])]
        out.append(list(D.WeightedRandomSampler([0.1, 0.9, 0.4, 0.0, 2.0], 8)))
        out.append(list(D.RandomSampler(range(7), replacement=True, num_samples=40)))
        sampler = D.DistributedSampler(range(10), num_replicas=3, rank=1, seed=4)
        sampler.set_epoch(2)
        out.append(list(sampler))
        out.append(L.rand(2).tolist())
        return out

    assert stream(ember, ED) == stream(torch, TD)
