"""The 'nccl' backend on a GPU machine (skipped without one): tests/distributed/nccl_smoke.py
on one rank per GPU, and the clear refusal of two ranks on one GPU."""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

import ember

from .launch import ROOT, output, run_ranks

SMOKE = os.path.join(ROOT, "tests", "distributed", "nccl_smoke.py")
pytestmark = pytest.mark.cuda


def _need_nccl():
    if not ember.cuda.is_available():
        pytest.skip("no GPU: the 'nccl' backend needs one")
    if not ember.distributed.is_nccl_available():
        pytest.skip("CuPy has no NCCL here: pip install nvidia-nccl-cu12")


def _have_mpi() -> bool:
    return importlib.util.find_spec("mpi4py") is not None


def test_nccl_smoke_on_cuda(tmp_path):
    _need_nccl()
    ranks = min(2, ember.cuda.device_count())
    if _have_mpi():
        result = run_ranks(ranks, SMOKE, timeout=300)
        assert result.returncode == 0, output(result)
    else:  # no MPI: one rank, meeting through a file
        import subprocess

        from .launch import environment

        result = subprocess.run([sys.executable, SMOKE, "--init", f"file://{tmp_path}/id",
                                 "--rank", "0", "--world-size", "1"], env=environment(),
                                capture_output=True, text=True, timeout=300)
        ranks = 1
        assert result.returncode == 0, output(result)
    assert result.stdout.count("nccl smoke:") == ranks, output(result)
    print(result.stdout)


def test_two_ranks_on_one_cuda_gpu_are_refused_clearly():
    _need_nccl()
    if ember.cuda.device_count() > 1:
        pytest.skip("several GPUs: each rank gets its own")
    if not _have_mpi():
        pytest.skip("mpi4py is not installed: pip install 'ember[distributed]'")
    result = run_ranks(2, SMOKE, timeout=300)
    assert result.returncode != 0
    assert "NCCL needs one GPU per rank" in result.stderr, output(result)
