"""Starting the scripts in tests/distributed/scripts on N ranks, for the tests."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "tests", "distributed", "scripts")


def mpiexec() -> str:
    """The mpiexec to use, or skip the test (with the reason) when MPI is not installed."""
    import importlib.util

    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("mpi4py is not installed: pip install 'ember[distributed]'")
    from ember.distributed.run import find_mpiexec

    try:
        return find_mpiexec()
    except FileNotFoundError as error:
        pytest.skip(str(error))


def environment() -> dict:
    env = dict(os.environ)
    src = os.path.join(ROOT, "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"  # several ranks share the cores
    return env


def run_ranks(n: int, script: str, *args, timeout: float = 120, launcher: str = "mpiexec"):
    """Run ``script`` on ``n`` ranks; returns the CompletedProcess (never hangs the suite).
    A launch that fails without a word (mpiexec now and then can't start its processes
    while an earlier job's are still going away) is tried twice more, after a pause: no
    rank ran, so there is nothing of ember's to judge."""
    for pause in (0.5, 2.0):
        result = _run_ranks(n, script, *args, timeout=timeout, launcher=launcher)
        if result.returncode == 0 or result.stdout.strip() or result.stderr.strip():
            return result
        time.sleep(pause)
    return _run_ranks(n, script, *args, timeout=timeout, launcher=launcher)


def _run_ranks(n: int, script: str, *args, timeout: float, launcher: str):
    path = script if os.path.isabs(script) else os.path.join(SCRIPTS, script)
    if launcher == "mpiexec":
        command = [mpiexec(), "-n", str(n), sys.executable, path, *args]
    else:
        mpiexec()  # skip without MPI
        command = [sys.executable, "-m", "ember.distributed.run", "-n", str(n), path, *args]
    # A session of its own, so that a hang is ended with every rank, not just mpiexec.
    process = subprocess.Popen(command, env=environment(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=ROOT,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"{' '.join(command)} still ran after {timeout} s (a hang):\n"
                    f"{stdout}\n{stderr}")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def output(result) -> str:
    return f"exit status {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
