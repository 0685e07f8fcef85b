"""DistributedSampler: PyTorch's split and padding, shuffles shared by every rank."""
from __future__ import annotations

import pytest

import ember
from ember.utils.data import DataLoader, DistributedSampler, TensorDataset


@pytest.mark.parametrize("length", [1, 3, 7, 10, 16])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("drop_last", [False, True])
def test_unshuffled_split_matches_pytorch(length, replicas, drop_last):
    torch_data = pytest.importorskip("torch.utils.data")
    for rank in range(replicas):
        ours = DistributedSampler(range(length), replicas, rank, shuffle=False,
                                  drop_last=drop_last)
        theirs = torch_data.DistributedSampler(range(length), replicas, rank, shuffle=False,
                                               drop_last=drop_last)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs) and ours.total_size == theirs.total_size


@pytest.mark.parametrize("length, replicas", [(10, 4), (12, 3), (5, 8)])
def test_shuffled_ranks_share_one_permutation(length, replicas):
    shares = [list(DistributedSampler(range(length), replicas, r, seed=7))
              for r in range(replicas)]
    assert len({len(s) for s in shares}) == 1
    interleaved = [shares[r][i] for i in range(len(shares[0])) for r in range(replicas)]
    head = interleaved[:length]
    assert sorted(head) == list(range(length))        # one permutation, split by rank
    assert interleaved[length:] == head[:len(interleaved) - length]  # padded with its start


def test_set_epoch_reshuffles_the_same_way_on_every_rank():
    a = DistributedSampler(range(100), 2, 0, seed=3)
    b = DistributedSampler(range(100), 2, 0, seed=3)
    first = list(a)
    assert first == list(a) == list(b)                 # repeatable within an epoch
    a.set_epoch(1)
    b.set_epoch(1)
    assert list(a) == list(b) != first
    assert list(DistributedSampler(range(100), 2, 0, seed=4)) != first


def test_drop_last_shuffled_drops_the_tail():
    shares = [set(DistributedSampler(range(10), 4, r, drop_last=True)) for r in range(4)]
    assert all(len(s) == 2 for s in shares)
    assert len(set().union(*shares)) == 8              # disjoint, two left out


def test_errors_match_pytorch():
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval "
                                         r"\[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        DistributedSampler(range(4), num_replicas=2, rank=-1)
    with pytest.raises(ValueError, match="num_replicas"):
        DistributedSampler(range(4), num_replicas=0, rank=0)


def test_feeds_a_dataloader():
    data = TensorDataset(ember.arange(10.0), ember.arange(10))
    sampler = DistributedSampler(data, num_replicas=3, rank=1, shuffle=False)
    labels = [y.tolist() for _, y in DataLoader(data, batch_size=2, sampler=sampler)]
    assert labels == [[1, 4], [7, 0]]                  # 10 padded to 12: index 0 again
