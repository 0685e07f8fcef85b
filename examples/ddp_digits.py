"""Data-parallel training of the digits MLP (examples/train_digits.py) on several processes
with DistributedDataParallel: each rank trains on its share of every batch, gradients are
averaged across ranks, and all replicas stay identical.

    mpiexec -n 2 python examples/ddp_digits.py [--epochs 20] [--batch-size 32]
    python -m ember.distributed.run -n 2 examples/ddp_digits.py
    mpiexec -n 2 python examples/ddp_digits.py --device cuda     # NCCL, one GPU per rank

Rank 0 prints the loss (averaged over ranks) and test accuracy each epoch; the MLP reaches
at least 97% test accuracy.
"""
from __future__ import annotations

from _common import evaluate, parser
from train_digits import load_digits, mlp

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel
from ember.utils.data import DataLoader, DistributedSampler, TensorDataset


def run(epochs: int = 20, batch_size: int = 32, seed: int = 0, device: str = "cpu"):
    """Train on every rank; returns (this rank, the final test accuracy), the accuracy
    being the same on every rank."""
    dist.init_process_group("nccl" if device == "cuda" else "mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if device == "cuda":
        device = f"cuda:{ember.cuda.current_device()}"  # the GPU the 'nccl' backend chose
    train_x, train_y, test_x, test_y = load_digits(seed)
    train_set = TensorDataset(ember.tensor(train_x).unsqueeze(1), ember.tensor(train_y))
    test_set = TensorDataset(ember.tensor(test_x).unsqueeze(1), ember.tensor(test_y))
    sampler = DistributedSampler(train_set, shuffle=True, seed=seed)  # this rank's share
    loader = DataLoader(train_set, batch_size=batch_size, sampler=sampler)
    test_loader = DataLoader(test_set, batch_size=256)

    ember.manual_seed(seed)
    model = DistributedDataParallel(mlp().to(device))  # rank 0's weights on every rank
    ember.manual_seed(seed + rank)                     # but each rank its own dropout masks
    # The global batch is world x batch_size: scale the learning rate with it.
    optimizer = ember.optim.Adam(model.parameters(), lr=2e-3 * world)
    scheduler = ember.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    loss_fn = nn.CrossEntropyLoss()
    accuracy = 0.0
    for epoch in range(1, epochs + 1):
        sampler.set_epoch(epoch)  # a new shuffle, the same on every rank
        model.train()
        total = ember.zeros(2, dtype=ember.float64, device=device)  # loss sum, samples
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()             # gradients averaged across ranks here
            optimizer.step()
            total += ember.tensor([loss.item() * len(y), len(y)], dtype=ember.float64,
                                  device=device)
        scheduler.step()
        dist.all_reduce(total)
        accuracy = evaluate(model.module, test_loader, device)
        if rank == 0:
            print(f"epoch {epoch}: loss {total[0].item() / total[1].item():.4f} over "
                  f"{world} ranks, test accuracy {accuracy:.2%}", flush=True)
    _check_replicas_agree(model.module, device)
    dist.destroy_process_group()
    return rank, accuracy


def _check_replicas_agree(model, device) -> None:
    """Every rank must end with rank 0's parameters: DDP keeps the replicas in step."""
    for name, p in model.named_parameters():
        reference = p.detach().clone()
        dist.broadcast(reference, src=0)
        if not ember.equal(reference, p.detach()):
            raise RuntimeError(f"rank {dist.get_rank()}: {name} drifted from rank 0's")


def main() -> None:
    args = parser(__doc__.splitlines()[0])
    args.add_argument("--epochs", type=int, default=20)
    args.add_argument("--batch-size", type=int, default=32, help="per rank")
    options = args.parse_args()
    device = "cuda" if options.device.startswith("cuda") else "cpu"
    rank, accuracy = run(options.epochs, options.batch_size, options.seed, device)
    print(f"rank {rank}: final test accuracy {accuracy:.2%}", flush=True)


if __name__ == "__main__":
    main()
