"""Run under mpiexec -n N: every collective and op against values each rank can compute
alone. Exits non-zero (with the failing check) when one disagrees."""
import sys

import numpy as np

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp

dist.init_process_group("mpi", timeout=60)
rank, size = dist.get_rank(), dist.get_world_size()
assert dist.is_initialized() and dist.get_backend() == "mpi"
expected_size = int(sys.argv[1]) if len(sys.argv) > 1 else size
assert size == expected_size, (size, expected_size)
ranks = np.arange(size, dtype=np.float64)


def values(r):
    return np.array([[r + 1.0, -2.0 * r], [0.5 * r, 3.0]])


def check(name, tensor, expected):
    got = tensor.numpy() if isinstance(tensor, ember.Tensor) else tensor
    if not np.array_equal(got, expected):
        raise SystemExit(f"rank {rank}: {name}: got {got!r}, expected {expected!r}")


every = [values(r) for r in range(size)]
for op, combine in [(ReduceOp.SUM, np.sum), (ReduceOp.PRODUCT, np.prod),
                    (ReduceOp.MAX, np.max), (ReduceOp.MIN, np.min)]:
    t = ember.tensor(values(rank), dtype=ember.float64)
    assert dist.all_reduce(t, op=op) is None
    check(f"all_reduce {op}", t, combine(np.stack(every), axis=0))

t = ember.tensor(values(rank), dtype=ember.float64)
dist.all_reduce(t, op=ReduceOp.AVG)
check("all_reduce AVG", t, np.stack(every).sum(0) / size)

# A transposed (non-contiguous) view: written back through the view into its base.
base = ember.tensor(values(rank), dtype=ember.float64)
view = base.t()
dist.all_reduce(view)
check("all_reduce of a view", base, np.stack(every).sum(0))

t = ember.tensor([rank, 10 * rank], dtype=ember.int64)
dist.all_reduce(t)
check("int64 sum", t, np.array([ranks.sum(), 10 * ranks.sum()], dtype=np.int64))
t = ember.tensor([rank | 4, 1 << rank], dtype=ember.int32)
dist.all_reduce(t, op=ReduceOp.BOR)
check("int32 BOR", t, np.array([np.bitwise_or.reduce(np.arange(size) | 4),
                                 sum(1 << r for r in range(size))], dtype=np.int32))
t = ember.tensor([rank == 0, True, False])
dist.all_reduce(t)
check("bool sum is or", t, np.array([True, True, False]))
t = ember.tensor([rank + 0.5], dtype=ember.float16)
dist.all_reduce(t)
check("float16 sum", t, np.array([ranks.sum() + 0.5 * size], dtype=np.float16))
t = ember.tensor(float(rank))
dist.all_reduce(t, op=ReduceOp.MAX)
check("0-d max", t, np.array(size - 1.0, dtype=np.float32))

# A tensor that requires grad keeps working, and its version moves on (in place).
w = ember.ones(3, requires_grad=True)
before = w._version
with ember.no_grad():
    dist.all_reduce(w)
assert w._version > before and w.requires_grad
check("requires_grad tensor", w.detach(), np.full(3, float(size), dtype=np.float32))

for src in range(size):
    t = ember.tensor(values(rank), dtype=ember.float64)
    dist.broadcast(t, src=src)
    check(f"broadcast from {src}", t, values(src))
t = ember.arange(6.0).reshape(2, 3).t() * (rank + 1)   # non-contiguous broadcast target
dist.broadcast(t, src=0)
check("broadcast into a view", t, np.arange(6.0, dtype=np.float32).reshape(2, 3).T)

gathered = [ember.zeros(2, 2, dtype=ember.float64) for _ in range(size)]
dist.all_gather(gathered, ember.tensor(values(rank), dtype=ember.float64))
for r in range(size):
    check(f"all_gather[{r}]", gathered[r], values(r))
labels = [ember.zeros(3, dtype=ember.int64) for _ in range(size)]
dist.all_gather(labels, ember.tensor([rank, rank, rank]))
check("all_gather int64", ember.stack(labels), np.repeat(np.arange(size), 3).reshape(size, 3))

inputs = [ember.tensor(values(rank) * (r + 1), dtype=ember.float64) for r in range(size)]
out = ember.zeros(2, 2, dtype=ember.float64)
dist.reduce_scatter(out, inputs)
check("reduce_scatter", out, np.stack(every).sum(0) * (rank + 1))
out = ember.zeros(2, 2, dtype=ember.float64)
dist.reduce_scatter(out, inputs, op=ReduceOp.MAX)
check("reduce_scatter MAX", out, np.stack(every).max(0) * (rank + 1))

t = ember.full((1000,), float(rank))
work = dist.all_reduce(t, async_op=True)
assert isinstance(work, dist.Work)
assert work.wait() is True and work.is_completed()
check("async all_reduce", t, np.full(1000, ranks.sum(), dtype=np.float32))
dist.barrier()
work = dist.barrier(async_op=True)
work.wait()

# Bad calls raise on every rank alike (before any message is sent).
errors = [
    (lambda: dist.all_reduce(ember.ones(2, dtype=ember.int64), op=ReduceOp.AVG), ValueError,
     "AVG needs a floating-point"),
    (lambda: dist.all_reduce(ember.ones(2), op=ReduceOp.BAND), ValueError, "bitwise"),
    (lambda: dist.all_reduce(ember.ones(2), op="sideways"), ValueError, "ReduceOp"),
    (lambda: dist.all_reduce([1.0]), TypeError, "ember.Tensor"),
    (lambda: dist.broadcast(ember.ones(2), src=size), ValueError, "not a rank"),
    (lambda: dist.broadcast(ember.ones(2)), ValueError, "src="),
    (lambda: dist.all_gather([ember.ones(2)] * (size + 1), ember.ones(2)), ValueError,
     "one tensor per rank"),
    (lambda: dist.all_gather([ember.ones(3)] * size, ember.ones(2)), ValueError,
     "every tensor must be"),
    (lambda: dist.reduce_scatter(ember.ones(2), [ember.ones(2, dtype=ember.float64)] * size),
     ValueError, "every tensor must be"),
    (lambda: dist.init_process_group("mpi"), ValueError, "twice"),
]
for call, kind, text in errors:
    try:
        call()
    except kind as error:
        assert text in str(error), (text, str(error))
    else:
        raise SystemExit(f"rank {rank}: expected {kind.__name__} containing {text!r}")

dist.destroy_process_group()
assert not dist.is_initialized()
# A second group after the first is gone works too.
dist.init_process_group("gloo")
t = ember.ones(1)
dist.all_reduce(t)
check("second group", t, np.array([float(size)], dtype=np.float32))
dist.destroy_process_group()
print(f"rank {rank} of {size}: collectives ok", flush=True)
