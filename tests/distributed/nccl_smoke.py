"""The 'nccl' backend on a GPU machine: every collective on CUDA tensors, and DDP against one
process, on each rank. Launch one rank per GPU:

    mpiexec -n 2 python tests/distributed/nccl_smoke.py
    python tests/distributed/nccl_smoke.py --init file:///tmp/nccl-id --rank 0 --world-size 1

Prints one 'nccl smoke: ... ok' line per rank; exits non-zero on the first failed check.
"""
import argparse

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.distributed import ReduceOp
from ember.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--init", default=None)
parser.add_argument("--rank", type=int, default=None)
parser.add_argument("--world-size", type=int, default=None)
options = parser.parse_args()
dist.init_process_group("nccl", init_method=options.init, rank=options.rank,
                        world_size=options.world_size, timeout=120)
rank, size = dist.get_rank(), dist.get_world_size()
device = f"cuda:{ember.cuda.current_device()}"
total = sum(range(size))


def check(name, tensor, expected):
    assert tensor.device.type == "cuda", (name, tensor.device)
    got = tensor.cpu().numpy()
    if not np.allclose(got, expected, rtol=1e-6, atol=0):
        raise SystemExit(f"rank {rank}: {name}: got {got}, expected {expected}")


t = ember.full((3,), float(rank), device=device)
dist.all_reduce(t)
check("all_reduce SUM", t, [total] * 3)
t = ember.full((3,), float(rank), device=device)
dist.all_reduce(t, op=ReduceOp.AVG)
check("all_reduce AVG", t, [total / size] * 3)
t = ember.full((2, 2), float(rank), device=device, dtype=ember.float64).t()  # a view
dist.all_reduce(t, op=ReduceOp.MAX)
check("all_reduce MAX of a view", t, np.full((2, 2), size - 1.0))
t = ember.tensor([rank, 1], device=device)
dist.all_reduce(t)
check("int64 SUM", t, [total, size])
t = ember.tensor([rank == 0, False], device=device)
dist.all_reduce(t)
check("bool SUM is or", t, [True, False])
t = ember.full((4,), float(rank), device=device, dtype=ember.float16)
dist.all_reduce(t)
check("float16 SUM", t, [total] * 4)
for src in range(size):
    t = ember.full((5,), float(rank), device=device)
    dist.broadcast(t, src=src)
    check(f"broadcast from {src}", t, [src] * 5)
gathered = [ember.zeros(2, device=device) for _ in range(size)]
dist.all_gather(gathered, ember.full((2,), float(rank), device=device))
check("all_gather", ember.stack(gathered), np.repeat(np.arange(size), 2).reshape(size, 2))
out = ember.zeros(3, device=device)
dist.reduce_scatter(out, [ember.full((3,), float(rank + r), device=device)
                          for r in range(size)])
check("reduce_scatter", out, [total + size * rank] * 3)
work = dist.all_reduce(ember.ones(1 << 20, device=device), async_op=True)
work.wait()
dist.barrier()
try:
    dist.all_reduce(ember.ones(2))
except ValueError as error:
    assert "works on cuda" in str(error)
else:
    raise SystemExit("a CPU tensor on the 'nccl' backend must raise")

# DDP on the GPU against one process on the whole batch (float64, 5 steps).
def build():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 4)).double().to(device)


rng = np.random.default_rng(0)
data = [(ember.tensor(rng.normal(size=(8 * size, 6)), device=device),
         ember.tensor(rng.integers(0, 4, 8 * size), device=device)) for _ in range(5)]
reference, model = build(), DDP(build(), device_ids=[ember.cuda.current_device()],
                                bucket_cap_mb=0.001)
for net, share in ((reference, slice(None)), (model, slice(8 * rank, 8 * rank + 8))):
    optimizer = ember.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for x, y in data:
        optimizer.zero_grad()
        nn.functional.cross_entropy(net(x[share]), y[share]).backward()
        optimizer.step()
for p, q in zip(model.module.parameters(), reference.parameters()):
    worst = float((p - q).abs().max().cpu())
    if worst > 1e-10:
        raise SystemExit(f"rank {rank}: DDP on NCCL differs from one process by {worst:.3g}")
dist.destroy_process_group()
print(f"nccl smoke: rank {rank} of {size} on {device} ok", flush=True)
