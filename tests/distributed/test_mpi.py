"""ember.distributed over MPI: scripts run on 1, 2 and 4 ranks in subprocesses (mpiexec from
the mpich wheel). Skipped, with the reason, when mpi4py or mpiexec is missing."""
from __future__ import annotations

import sys
import time

import pytest

from .launch import output, run_ranks

# Each test starts 2-4 MPI processes with timeouts: keep them on one worker, so two such
# jobs never compete for the two cores.
pytestmark = pytest.mark.xdist_group("mpi")


@pytest.mark.parametrize("ranks", [2, 4])
def test_every_collective_and_op(ranks):
    result = run_ranks(ranks, "collectives.py", str(ranks))
    assert result.returncode == 0, output(result)
    assert result.stdout.count("collectives ok") == ranks


def test_one_process_without_mpiexec_is_a_world_of_one():
    import os
    import subprocess

    from .launch import SCRIPTS, environment, mpiexec

    mpiexec()
    result = subprocess.run([sys.executable, os.path.join(SCRIPTS, "collectives.py"), "1"],
                            env=environment(), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, output(result)
    assert "rank 0 of 1: collectives ok" in result.stdout


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_ddp_equals_one_process_on_the_global_batch(ranks):
    # float64, 10 SGD steps; several buckets, gradient accumulation with no_sync, unused
    # parameters and gradients as bucket views each checked to 1e-12, and every rank's
    # parameters identical.
    variants = ["default", "buckets", "no_sync", "unused", "view"]
    result = run_ranks(ranks, "ddp_equivalence.py", *variants)
    assert result.returncode == 0, output(result)
    for variant in variants:
        assert f"{variant}: {ranks} ranks match one process" in result.stdout, output(result)


def test_ddp_checks_and_buffers():
    result = run_ranks(2, "ddp_errors.py")
    assert result.returncode == 0, output(result)
    assert result.stdout.count("ddp checks ok") == 2


def test_launcher_runs_a_script_and_passes_its_status_on():
    result = run_ranks(3, "collectives.py", "3", launcher="run")
    assert result.returncode == 0, output(result)
    assert result.stdout.count("collectives ok") == 3


# ---------------------------------------------------------------------- failures end the job
def _ends_with_error(mode, *args, launcher="mpiexec", within=60):
    start = time.monotonic()
    result = run_ranks(2, "failures.py", mode, *args, timeout=within, launcher=launcher)
    elapsed = time.monotonic() - start
    assert result.returncode != 0, output(result)
    assert "went unnoticed" not in result.stdout, output(result)
    return result, elapsed


def test_a_killed_rank_ends_the_job_naming_the_rank():
    # Rank 1 dies by SIGKILL while rank 0 waits in an all_reduce with a 30 s timeout: the
    # job ends long before that, and the launcher names the rank mpiexec reports by pid.
    result, elapsed = _ends_with_error("kill", "30", launcher="run")
    # mpiexec reports one dead process by pid; under load that can be the rank it stopped
    # after rank 1 died, so the launcher's line names whichever rank mpiexec reported
    assert "SIGKILL" in result.stderr or "Killed (signal 9)" in result.stdout, output(result)
    assert elapsed < 30, elapsed


def test_an_uncaught_exception_ends_the_job():
    result, elapsed = _ends_with_error("raise", "30")
    # the rank's own traceback always shows; ember's line naming the rank comes when its
    # exception hook is in place before the error (not when the rank fails that early)
    # (mpiexec may end the job while the rest of the traceback is still on its way: its
    # first line shows in any case)
    assert result.returncode != 0, output(result)
    assert "Traceback (most recent call last)" in result.stderr, output(result)
    assert elapsed < 30, elapsed


def test_a_rank_that_leaves_early_is_named_by_the_waiting_rank():
    result, elapsed = _ends_with_error("exit", "30")
    assert "rank 1 left the process group" in result.stderr, output(result)
    assert "rank 0 waits in all_reduce (its collective #2)" in result.stderr
    assert elapsed < 30, elapsed


def test_a_hung_rank_times_out_with_where_everyone_was():
    result, _ = _ends_with_error("hang", "1")
    assert "rank 0 waited 1 s in all_reduce (its collective #2)" in result.stderr, output(result)
    assert "rank 1 did not answer" in result.stderr


def test_ranks_calling_different_collectives_are_told():
    result, _ = _ends_with_error("mismatch", "1")
    assert "ranks disagree on the order" in result.stderr, output(result)


@pytest.mark.parametrize("gpus", ["one-gpu", "two-gpus"])
def test_nccl_ranks_meet_through_mpi(gpus):
    # With ember.backend.cuda's GPU calls stood in by NumPy: rank 0's NCCL id reaches every
    # rank, each rank takes its own GPU, and two ranks on one GPU are refused clearly.
    result = run_ranks(2, "nccl_bootstrap.py", gpus)
    assert result.returncode == 0, output(result)
    expected = "refused:" if gpus == "one-gpu" else "nccl bootstrap ok"
    assert result.stdout.count(expected) == 2, output(result)
