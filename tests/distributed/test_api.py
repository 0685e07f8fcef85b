"""ember.distributed in one process: the checks that come before any message is sent, the
messages when an extra is missing, and the launcher's pieces."""
from __future__ import annotations

import datetime
import sys

import pytest

import ember
import ember.distributed as dist
from ember import nn
from ember.distributed import ReduceOp
from ember.distributed import run as launcher
from ember.distributed._group import ProcessGroup, Work, timeout_seconds

NOT_INITIALIZED = "Default process group has not been initialized"


@pytest.mark.parametrize("call", [
    lambda: dist.get_rank(), lambda: dist.get_world_size(), lambda: dist.barrier(),
    lambda: dist.all_reduce(ember.ones(1)), lambda: dist.broadcast(ember.ones(1), 0),
    lambda: dist.destroy_process_group(),
    lambda: nn.parallel.DistributedDataParallel(nn.Linear(2, 2)),
    lambda: ember.utils.data.DistributedSampler(range(4)),
])
def test_calls_before_init_raise_like_pytorch(call):
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match=NOT_INITIALIZED):
        call()


def test_module_surface():
    assert dist.is_available()
    assert dist.Backend.MPI == "mpi" and dist.Backend.NCCL == "nccl"
    assert repr(ReduceOp.SUM) == "<ReduceOp.SUM: 0>" and ReduceOp.AVG.value == 1
    assert dist.default_pg_timeout == datetime.timedelta(minutes=30)
    assert isinstance(dist.is_mpi_available(), bool)
    assert isinstance(dist.is_nccl_available(), bool)
    assert nn.parallel.DataParallel is nn.DataParallel


@pytest.mark.parametrize("kwargs, kind, text", [
    ({"backend": "smoke-signals"}, ValueError, "Invalid backend: 'smoke-signals'"),
    ({"backend": "mpi", "init_method": "tcp://10.0.0.1:23456"}, ValueError, "mpiexec"),
    ({"backend": "mpi", "store": object()}, ValueError, "no stores"),
    ({"backend": "mpi", "rank": 2, "world_size": 2}, ValueError, "not below world_size"),
    ({"backend": "mpi", "rank": -3}, ValueError, "non-negative"),
    ({"backend": "mpi", "timeout": "soon"}, TypeError, "timedelta"),
    ({"backend": "mpi", "timeout": 0}, ValueError, "positive"),
])
def test_bad_arguments_raise_before_anything_starts(kwargs, kind, text):
    with pytest.raises(kind, match=text):
        dist.init_process_group(**kwargs)
    assert not dist.is_initialized()


def test_mpi_backend_without_mpi4py_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # makes `import mpi4py` fail
    with pytest.raises(ImportError, match=r"pip install 'ember\[distributed\]'"):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()


def test_nccl_backend_without_a_gpu_says_why():
    if ember.cuda.is_available():
        pytest.skip("a GPU is present: tests/distributed/test_nccl.py covers 'nccl'")
    with pytest.raises((ImportError, RuntimeError), match=r"init_process_group\('nccl'\)"):
        dist.init_process_group("nccl")
    assert not dist.is_initialized()


def test_timeouts_take_timedeltas_and_seconds():
    assert timeout_seconds(None) == 1800.0
    assert timeout_seconds(datetime.timedelta(seconds=90)) == 90.0
    assert timeout_seconds(2.5) == 2.5
    with pytest.raises(TypeError):
        timeout_seconds(True)


class _Clock(ProcessGroup):
    """A group whose transfers finish after a given number of polls."""

    backend = "test"

    def __init__(self):
        super().__init__(0, 1, timeout=5.0)
        self.waited = []

    def wait_for(self, poll, op_name, seq, timeout):
        while not poll():
            pass
        self.waited.append((op_name, seq, timeout))


def test_work_completes_once_and_runs_its_finish_once():
    group = _Clock()
    polls, finished = iter([False, False, True]), []
    work = Work(group, "all_reduce", group.next_seq(), lambda: next(polls, True),
                lambda: finished.append(1))
    assert not work.is_completed() and "in flight" in repr(work)
    assert work.wait() is True and work.wait() is True and work.is_completed()
    assert finished == [1] and group.waited == [("all_reduce", 1, 5.0)]
    assert "completed" in repr(work)


def test_launcher_arguments_and_messages(monkeypatch, tmp_path):
    options = launcher.parse(["-n", "3", "train.py", "--lr", "0.1"])
    assert (options.nproc, options.script, options.args) == (3, "train.py", ["--lr", "0.1"])
    with pytest.raises(SystemExit):
        launcher.parse(["-n", "0", "train.py"])
    assert launcher._describe(9) == "exit code 9 (killed by SIGKILL)"
    assert launcher._describe(137) == "exit code 9 (killed by SIGKILL)"
    assert launcher._describe(3).startswith("exit code 3")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("EMBER_MPIEXEC", raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    with pytest.raises(FileNotFoundError, match=r"pip install 'ember\[distributed\]'"):
        launcher.find_mpiexec()
    assert launcher.main(["-n", "2", "train.py"]) == 2


def test_launcher_maps_the_dead_pid_to_its_rank(monkeypatch, tmp_path):
    monkeypatch.setenv(launcher.RUN_DIR, str(tmp_path))
    launcher.record_rank(1)
    import os

    assert launcher._ranks_by_pid(str(tmp_path)) == {str(os.getpid()): 1}
