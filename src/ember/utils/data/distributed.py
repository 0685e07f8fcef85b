"""DistributedSampler: each rank's share of a dataset's indices, for DataLoader(sampler=...)."""
from __future__ import annotations

import math

from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of rank ``rank`` out of ``num_replicas`` (default: the process group's
    rank and world size), as PyTorch's: every rank draws the same permutation (seeded with
    ``seed + epoch``; call ``set_epoch`` at the start of each epoch for a new one) and takes
    every ``num_replicas``-th index from position ``rank``. So that all ranks get the same
    number of samples, the list is padded with its own first indices (or, with
    ``drop_last=True``, cut to a multiple of ``num_replicas``).

    >>> list(DistributedSampler(range(10), num_replicas=4, rank=3, shuffle=False))
    [3, 7, 1]
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist

            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if not isinstance(num_replicas, int) or isinstance(num_replicas, bool) or \
                num_replicas < 1:
            raise ValueError(f"num_replicas should be a positive integer, got {num_replicas!r}")
        if not isinstance(rank, int) or isinstance(rank, bool) or \
                not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        length = len(dataset)
        if drop_last and length % num_replicas != 0:
            self.num_samples = math.ceil((length - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(length / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        length = len(self.dataset)
        if self.shuffle:
            from ...creation import randperm
            from ...random import Generator

            generator = Generator().manual_seed(self.seed + self.epoch)
            indices = randperm(length, generator=generator).tolist()
        else:
            indices = list(range(length))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Shuffle differently in this epoch (the same way on every rank)."""
        self.epoch = epoch
