"""Run under mpiexec -n 2: rank 1 goes wrong in the way argv[1] names while rank 0 waits in an
all_reduce. The job must end with an error naming rank 1 (never hang)."""
import os
import signal
import sys
import time

import ember
import ember.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=float(sys.argv[2]) if len(sys.argv) > 2 else 60)
t = ember.ones(4)
dist.all_reduce(t)                 # collective #1, on every rank
if dist.get_rank() == 1:
    if mode == "raise":
        raise ValueError("rank 1 broke on purpose")
    if mode == "exit":
        sys.exit(0)                # leaves without calling the next all_reduce
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "hang":
        time.sleep(600)            # alive, but never reaches the collective
    if mode == "mismatch":
        dist.broadcast(t, src=0)   # a different collective than rank 0's
dist.all_reduce(t)                 # collective #2: rank 1 never joins it
print("rank", dist.get_rank(), "finished: the failure went unnoticed", flush=True)
