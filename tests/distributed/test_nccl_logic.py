"""The 'nccl' backend's own logic on the CPU: ember.backend.cuda's NCCL calls replaced by
NumPy stand-ins (a world of two where the other rank holds the same values), so that the
process group's code runs here: rendezvous, op mapping, AVG, barrier, waiting and timeouts.
The real NCCL runs in test_nccl.py on a GPU machine."""
from __future__ import annotations

import types

import numpy as np
import pytest

from ember import backend
from ember.backend import cuda
from ember.distributed import ReduceOp, _nccl

from . import fake_nccl


@pytest.fixture
def fake_cuda(monkeypatch):
    return fake_nccl.install(monkeypatch.setattr, cuda, backend)


def make_group(tmp_path, timeout=5.0):
    return _nccl.NcclGroup(timeout, f"file://{tmp_path}/id", 0, 2, None)


def test_file_rendezvous_and_collectives(fake_cuda, tmp_path):
    group = make_group(tmp_path)
    assert (group.rank(), group.size(), str(group.device)) == (0, 2, "cuda:0")
    assert group._comm.unique_id == fake_cuda.ids[0]
    assert not (tmp_path / "id").exists()  # removed once every rank has joined
    a = np.array([1.0, 3.0])
    group.all_reduce(a, ReduceOp.AVG).wait()
    np.testing.assert_array_equal(a, [1.0, 3.0])     # (x + x) / 2
    flags = np.array([True, False])
    group.all_reduce(flags, ReduceOp.SUM).wait()
    out = np.empty(2)
    group.reduce_scatter(out, np.array([[1.0, 2.0], [5.0, 6.0]]), ReduceOp.AVG).wait()
    np.testing.assert_array_equal(out, [1.0, 2.0])
    gathered = np.empty((2, 3))
    group.all_gather(gathered, np.arange(3.0)).wait()
    group.broadcast(a, 1).wait()
    group.barrier().wait()
    assert group._comm.calls == [
        ("all_reduce", "sum", "<f8"), ("all_reduce", "max", "|b1"), ("reduce_scatter", "sum"),
        ("all_gather",), ("broadcast", 1), ("all_reduce", "max", "|u1")]
    assert group._seq == 6
    group.destroy()
    assert group._comm.destroyed


def test_ops_nccl_lacks_are_refused(fake_cuda, tmp_path):
    group = make_group(tmp_path)
    with pytest.raises(ValueError, match="does not support ReduceOp.BAND"):
        group.all_reduce(np.ones(2, dtype=np.int64), ReduceOp.BAND)
    with pytest.raises(ValueError, match="does not support ReduceOp.AVG on bool"):
        group.all_reduce(np.ones(2, dtype=bool), ReduceOp.AVG)


def test_a_collective_past_the_timeout_aborts(fake_cuda, tmp_path):
    group = make_group(tmp_path, timeout=0.05)
    fake_cuda.done = False
    messages = []

    def abort(message, code=1):
        messages.append(message)
        raise SystemExit(code)
    group.abort = abort
    work = group.all_reduce(np.ones(2), ReduceOp.SUM)
    with pytest.raises(SystemExit):
        work.wait()
    assert "waited 0.05 s in all_reduce (its collective #1)" in messages[0]


def test_rendezvous_arguments(fake_cuda, tmp_path):
    with pytest.raises(ValueError, match="needs rank= and world_size="):
        _nccl.NcclGroup(5.0, f"file://{tmp_path}/id", None, 2, None)
    with pytest.raises(ValueError, match="not 'tcp://host:1'"):
        _nccl.NcclGroup(5.0, "tcp://host:1", 0, 2, None)
    with pytest.raises(ValueError, match="device_id=3 is not one of the 1 GPU"):
        _nccl.NcclGroup(5.0, f"file://{tmp_path}/id", 0, 2, 3)
    with pytest.raises(RuntimeError, match="waited 0.05 s for rank 0 to write"):
        _nccl.NcclGroup(0.05, f"file://{tmp_path}/never", 1, 2, None)


def test_nccl_type_table():
    names = ["NCCL_INT8", "NCCL_UINT8", "NCCL_INT32", "NCCL_UINT32", "NCCL_INT64",
             "NCCL_UINT64", "NCCL_FLOAT16", "NCCL_FLOAT32", "NCCL_FLOAT64"]
    module = types.SimpleNamespace(**{n: i for i, n in enumerate(names)})
    assert cuda._nccl_type(module, np.dtype(np.float32)) == names.index("NCCL_FLOAT32")
    assert cuda._nccl_type(module, np.dtype(bool)) == names.index("NCCL_UINT8")
    assert cuda._nccl_type(module, np.dtype(np.int64)) == names.index("NCCL_INT64")
    with pytest.raises(TypeError, match="NCCL cannot reduce int16"):
        cuda._nccl_type(module, np.dtype(np.int16))
    with pytest.raises(ValueError, match="NCCL reductions"):
        cuda._nccl_op(types.SimpleNamespace(NCCL_SUM=0), "avg")
