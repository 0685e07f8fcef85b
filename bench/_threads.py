"""Run a benchmark with a given number of BLAS/OpenMP threads. The thread count of NumPy's
BLAS is fixed when NumPy is imported, so the process re-executes itself with the variables
set before anything imports NumPy; PyTorch's own pool is set with set_num_threads."""
from __future__ import annotations

import os
import sys

VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def limit_threads(threads: int) -> None:
    """Make this process use ``threads`` BLAS/OpenMP threads (0 leaves the defaults).
    Call it first thing in main(), before NumPy is imported."""
    if not threads:
        return
    wanted = str(threads)
    if any(os.environ.get(v) != wanted for v in VARIABLES):
        env = dict(os.environ, **{v: wanted for v in VARIABLES})
        os.execve(sys.executable, [sys.executable] + sys.argv, env)


def torch_threads(torch, threads: int) -> None:
    if threads:
        torch.set_num_threads(threads)
