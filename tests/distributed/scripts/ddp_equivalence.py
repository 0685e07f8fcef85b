"""Run under mpiexec -n N (N dividing 16): DistributedDataParallel for 10 steps against one
model trained in this same process on the whole global batch, in float64. Each variant
(argv[1:]) must end with parameters equal to the single-process ones to 1e-12, and
identical on every rank."""
import sys

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi", timeout=60)
rank, size = dist.get_rank(), dist.get_world_size()
GLOBAL_BATCH, STEPS = 16, 10
local = GLOBAL_BATCH // size


class Net(nn.Module):
    """Three layers; ``extra`` is used only when ``use_extra`` (for unused-parameter runs)."""

    def __init__(self):
        super().__init__()
        self.first = nn.Linear(5, 16)
        self.second = nn.Linear(16, 16)
        self.head = nn.Linear(16, 3)
        self.extra = nn.Linear(16, 3)
        self.use_extra = True

    def forward(self, x):
        h = self.second(self.first(x).tanh()).tanh()
        out = self.head(h)
        return out + self.extra(h) if self.use_extra else out


def build():
    ember.manual_seed(0)
    return Net().double()


def batches():
    rng = np.random.default_rng(1)
    for _ in range(STEPS):
        yield (ember.tensor(rng.normal(size=(GLOBAL_BATCH, 5))),
               ember.tensor(rng.integers(0, 3, GLOBAL_BATCH)))


def train_reference(variant):
    model = build()
    model.use_extra = variant != "unused"
    optimizer = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches():
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return model


def train_ddp(variant):
    model = build()
    if rank != 0:  # DDP must start every rank from rank 0's parameters
        with ember.no_grad():
            for p in model.parameters():
                p.add_(ember.randn(p.shape, dtype=p.dtype))
    options = {"buckets": {"bucket_cap_mb": 0.0005},      # ~500 bytes: several buckets
               "unused": {"find_unused_parameters": True},
               "view": {"gradient_as_bucket_view": True, "bucket_cap_mb": 0.001}}
    ddp = DDP(model, **options.get(variant, {}))
    model.use_extra = variant != "unused"
    optimizer = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches():
        mine = slice(rank * local, (rank + 1) * local)
        optimizer.zero_grad(set_to_none=variant != "view")
        if variant == "no_sync":  # two micro-batches: accumulate, then average
            half = local // 2
            xs, ys = x[mine], y[mine]
            with ddp.no_sync():
                (nn.functional.cross_entropy(ddp(xs[:half]), ys[:half]) / 2).backward()
            (nn.functional.cross_entropy(ddp(xs[half:]), ys[half:]) / 2).backward()
        else:
            nn.functional.cross_entropy(ddp(x[mine]), y[mine]).backward()
        optimizer.step()
    return ddp


def compare(variant):
    reference = train_reference(variant)
    ddp = train_ddp(variant)
    assert list(ddp.state_dict())[0].startswith("module."), list(ddp.state_dict())
    if variant == "view":  # each .grad lives inside its bucket's flat buffer
        flats = [b.flat for b in ddp._reducer.buckets]
        for p in ddp.parameters():
            assert any(np.shares_memory(p.grad._data, f) for f in flats)
    worst = 0.0
    for (name, p), q in zip(ddp.module.named_parameters(), reference.parameters()):
        scale = max(1.0, float(q.abs().max()))
        worst = max(worst, float((p - q).abs().max()) / scale)
        everyone = [ember.zeros_like(p) for _ in range(size)]
        dist.all_gather(everyone, p.detach())
        for r, other in enumerate(everyone):
            if not ember.equal(other, p.detach()):
                raise SystemExit(f"{variant}: {name} differs between rank {rank} and {r}")
    if worst > 1e-12:
        raise SystemExit(f"{variant}: rank {rank}: DDP differs from one process by {worst:.3g}")
    return worst


for variant in sys.argv[1:] or ["default"]:
    worst = compare(variant)
    if rank == 0:
        print(f"{variant}: {size} ranks match one process (max relative difference "
              f"{worst:.1e})", flush=True)
dist.destroy_process_group()
