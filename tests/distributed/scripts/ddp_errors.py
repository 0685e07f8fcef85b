"""Run under mpiexec -n 2: DistributedDataParallel's checks raise the same error on every
rank, and buffers follow rank 0."""
import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi", timeout=60)
rank, size = dist.get_rank(), dist.get_world_size()


def raises(kind, text, call):
    try:
        call()
    except kind as error:
        assert text in str(error), (text, str(error))
        return
    raise SystemExit(f"rank {rank}: expected {kind.__name__} with {text!r}")


# Ranks that built different models are told so (all of them, before any training).
raises(RuntimeError, "has another shape or dtype on rank(s)",
       lambda: DDP(nn.Linear(3, 2 + rank)))
raises(RuntimeError, "built different models",
       lambda: DDP(nn.Sequential(*[nn.Linear(2, 2) for _ in range(rank + 1)])))
raises(RuntimeError, "doesn't have any parameter that requires a gradient",
       lambda: DDP(nn.Linear(2, 2).requires_grad_(False)))
raises(ValueError, "device_ids", lambda: DDP(nn.Linear(2, 2), device_ids=[0]))
raises(ValueError, "bucket_cap_mb", lambda: DDP(nn.Linear(2, 2), bucket_cap_mb=0))
raises(TypeError, "wraps an ember.nn.Module", lambda: DDP(lambda x: x))


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = nn.Linear(2, 2)

    def forward(self, x):
        return self.a(x)        # b never takes part


# Without find_unused_parameters, an unused parameter is reported at the next forward.
model = DDP(TwoHeads())
model(ember.ones(1, 2)).sum().backward()
raises(RuntimeError, "b.weight", lambda: model(ember.ones(1, 2)))

# A second backward through the same synchronized graph is refused.
model = DDP(nn.Linear(2, 1))
out = model(ember.ones(3, 2)).sum()
out.backward(retain_graph=True)
raises(RuntimeError, "ready only once", lambda: out.backward())

# Parameters and buffers start as rank 0's; buffers are re-sent before each forward.
ember.manual_seed(rank)
net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
with ember.no_grad():
    net[1].running_mean.fill_(float(rank))
model = DDP(net)
weights = [ember.zeros(3, 2) for _ in range(size)]
dist.all_gather(weights, net[0].weight.detach())
assert all(ember.equal(w, weights[0]) for w in weights)
assert net[1].running_mean.tolist() == [0.0, 0.0, 0.0]
seen = []
net.register_forward_pre_hook(lambda m, args: seen.append(m[1].running_mean.clone()))
for step in range(2):
    x = ember.tensor(np.random.default_rng(rank + 10 * step).normal(size=(4, 2)))
    model(x.float()).sum().backward()
means = [ember.zeros(3) for _ in range(size)]
dist.all_gather(means, seen[1])
assert all(ember.equal(m, means[0]) for m in means), "buffers were not re-sent from rank 0"
dist.all_gather(means, net[1].running_mean)  # updated by each rank's own batch
assert not ember.equal(means[0], means[1])

# no_sync leaves gradients local.
model = DDP(nn.Linear(2, 1, bias=False))
with model.no_sync():
    model(ember.full((1, 2), float(rank + 1))).sum().backward()
assert model.module.weight.grad.tolist() == [[rank + 1.0, rank + 1.0]]
model(ember.zeros(1, 2)).sum().backward()   # synchronized: the average of the sums
expected = sum(r + 1.0 for r in range(size)) / size
assert model.module.weight.grad.tolist() == [[expected, expected]]

dist.destroy_process_group()
print(f"rank {rank}: ddp checks ok", flush=True)
