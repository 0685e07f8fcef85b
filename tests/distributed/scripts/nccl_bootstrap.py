"""Run under mpiexec -n 2 on a CPU machine: the 'nccl' backend's meeting through MPI, with
ember.backend.cuda's GPU calls replaced by NumPy stand-ins (tests/distributed/fake_nccl.py).
argv[1]: 'one-gpu' (both ranks would share a GPU: refused) or 'two-gpus'."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import fake_nccl

import ember.distributed as dist
from ember import backend
from ember.backend import cuda

devices = 1 if sys.argv[1] == "one-gpu" else 2
fake_nccl.install(setattr, cuda, backend, devices=devices)
try:
    dist.init_process_group("nccl", timeout=30)
except RuntimeError as error:
    assert devices == 1 and "NCCL needs one GPU per rank" in str(error), error
    print("refused:", error, flush=True)
    sys.exit(0)
group = dist.default_group()
rank = dist.get_rank()
assert devices == 2 and group.backend == "nccl" and group.device.index == rank
assert group._comm.unique_id == bytes(range(128))  # rank 0's id reached every rank
assert group._comm.index == rank and group._health is not None
import numpy as np  # noqa: E402

a = np.full(3, float(rank + 1))
group.all_reduce(a, dist.ReduceOp.AVG).wait()
assert (a == rank + 1).all()
group.barrier().wait()
dist.destroy_process_group()
print(f"rank {rank}: nccl bootstrap ok", flush=True)
