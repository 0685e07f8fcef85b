"""The 'nccl' backend: collectives on CUDA arrays through CuPy's NCCL binding (all CuPy calls
live in ember.backend.cuda).

The ranks meet through MPI when mpi4py is there (launched with mpiexec): rank 0's NCCL id
travels by MPI, and MPI carries the notices that end a job instead of letting it hang.
Without MPI, ``init_method='file:///path'`` with ``rank`` and ``world_size`` hands the id
over through a file on a shared filesystem.
"""
from __future__ import annotations

import os
import socket
import time

from .. import backend
from ..backend import cuda
from . import _health
from ._group import ProcessGroup, ReduceOp, Work, poll_until


def _require_cuda() -> None:
    if not cuda.is_available():
        reason = cuda._reason
        if "not installed" in reason:
            raise ImportError(f"init_process_group('nccl') needs CuPy and a GPU: {reason}")
        raise RuntimeError(f"init_process_group('nccl') needs a GPU: {reason}")
    cuda.nccl()  # ImportError naming the package when CuPy has no NCCL


class NcclGroup(ProcessGroup):
    backend = "nccl"
    device_type = "cuda"

    def __init__(self, timeout: float, init_method, rank, world_size, device_id):
        _require_cuda()
        self._mpi = None
        self._health = None
        if init_method is not None and init_method.startswith("file://"):
            if rank is None or world_size is None:
                raise ValueError("init_method='file://...' needs rank= and world_size= (or "
                                 "launch with mpiexec, which provides them)")
            super().__init__(rank, world_size, timeout)
            index = self._device_index(device_id, local_rank=_local_rank_from_env(rank))
            unique_id = _file_rendezvous(init_method[len("file://"):], rank, timeout)
        elif init_method in (None, "env://"):
            from ._mpi import MpiGroup, mpi_available

            if not mpi_available():
                raise ValueError(
                    "the 'nccl' backend needs a way for the ranks to meet: launch with mpiexec "
                    "(pip install 'ember[distributed]' for mpi4py and mpich), or pass "
                    "init_method='file:///shared/path' with rank= and world_size=")
            self._mpi = MpiGroup(timeout)
            super().__init__(self._mpi.rank(), self._mpi.size(), timeout)
            try:
                index, unique_id = self._meet_through_mpi(rank, world_size, device_id)
            except BaseException:
                self._mpi.free()
                raise
            self._health = self._mpi._health
        else:
            raise ValueError(f"the 'nccl' backend takes init_method=None (ranks meet through "
                             f"mpiexec) or 'file:///shared/path', not {init_method!r}")
        self.device = backend.parse_device(f"cuda:{index}")
        cuda.set_device(index)
        self._comm = cuda.nccl_communicator(self._size, unique_id, self._rank, index)
        if init_method is not None and init_method.startswith("file://") and self._rank == 0:
            _remove_quietly(init_method[len("file://"):])  # every rank has joined by now

    def _meet_through_mpi(self, rank, world_size, device_id):
        """(GPU index, NCCL id): each rank's GPU by its rank on the machine, rank 0's id."""
        _check_matches(rank, world_size, self._rank, self._size)
        local = self._mpi._comm.Split_type(self._mpi._MPI.COMM_TYPE_SHARED)
        index = self._device_index(device_id, local_rank=local.Get_rank())
        local.Free()
        self._check_one_rank_per_gpu(index)
        unique_id = cuda.nccl_unique_id() if self._rank == 0 else None
        return index, self._mpi._comm.bcast(unique_id, root=0)

    def _device_index(self, device_id, local_rank: int) -> int:
        count = cuda.device_count()
        if device_id is None:
            return local_rank % count
        index = device_id if isinstance(device_id, int) else backend.device(device_id).index
        if index is None or not 0 <= index < count:
            raise ValueError(f"device_id={device_id!r} is not one of the {count} GPU(s)")
        return index

    def _check_one_rank_per_gpu(self, index: int) -> None:
        me = (socket.gethostname(), cuda.pci_bus_id(index))
        everyone = self._mpi._comm.allgather(me)
        for other, placed in enumerate(everyone):
            if other != self._rank and placed == me:
                raise RuntimeError(
                    f"ranks {min(other, self._rank)} and {max(other, self._rank)} would both "
                    f"use cuda:{index} on {me[0]}, and NCCL needs one GPU per rank: launch at "
                    f"most {cuda.device_count()} rank(s) per machine, or use the 'mpi' "
                    "backend")

    # ------------------------------------------------------------------ collectives
    def _launch(self, name: str, run, finish=None) -> Work:
        seq = self.next_seq()
        index = self.device.index
        with cuda.device_guard(index):
            run()
            event = cuda.record_event()
        if finish is not None:
            then = finish

            def finish():
                with cuda.device_guard(index):  # on the group's GPU, whichever is current
                    then()
        return Work(self, name, seq, lambda: cuda.event_done(event), finish)

    def all_reduce(self, array, op: ReduceOp) -> Work:
        name = _nccl_op(op, array.dtype)
        return self._launch("all_reduce", lambda: cuda.nccl_all_reduce(self._comm, array, name),
                            self._average(array) if op is ReduceOp.AVG else None)

    def broadcast(self, array, src: int) -> Work:
        return self._launch("broadcast", lambda: cuda.nccl_broadcast(self._comm, array, src))

    def all_gather(self, output, input) -> Work:
        return self._launch("all_gather",
                            lambda: cuda.nccl_all_gather(self._comm, output, input))

    def reduce_scatter(self, output, input, op: ReduceOp) -> Work:
        name = _nccl_op(op, input.dtype)
        return self._launch("reduce_scatter",
                            lambda: cuda.nccl_reduce_scatter(self._comm, output, input, name),
                            self._average(output) if op is ReduceOp.AVG else None)

    def _average(self, array):
        """AVG is NCCL's sum divided by the world size once the sum is there."""
        def divide():
            array[...] /= self._size
        return divide

    def barrier(self) -> Work:
        # NCCL has no barrier: an all-reduce of one byte, as PyTorch does.
        xp = backend.xp_for_device(self.device)
        with cuda.device_guard(self.device.index):
            token = xp.zeros(1, dtype=xp.uint8)
        return self._launch("barrier",
                            lambda: cuda.nccl_all_reduce(self._comm, token, "max"))

    # ------------------------------------------------------------------ waiting, failing
    def wait_for(self, poll, op_name: str, seq: int, timeout: float) -> None:
        checked = [time.monotonic()]

        def poll_and_check():
            if poll():
                return True
            now = time.monotonic()
            if now - checked[0] > 0.1:
                checked[0] = now
                try:
                    cuda.nccl_check(self._comm)
                except RuntimeError as error:
                    self.abort(f"{op_name} (collective #{seq}) failed: {error}.")
            return False

        if self._health is not None:
            from ._mpi import wait_health

            wait_health(self._health, poll_and_check, op_name, seq, timeout, self.abort)
        elif not poll_until(poll_and_check, time.monotonic() + timeout):
            self.abort(f"rank {self._rank} waited {timeout:g} s in {op_name} (its collective "
                       f"#{seq}) without it finishing (timeout).")

    def abort(self, message: str, code: int = 1) -> None:
        try:
            cuda.nccl_abort(self._comm)  # frees the GPU from kernels that would never end
        except Exception:
            pass
        if self._mpi is not None:
            self._mpi.abort(message, code)
        _health.report(self._rank, self._size, message + " Ending this process.")
        os._exit(code)

    def announce_leaving(self) -> None:
        if self._mpi is not None:
            self._mpi._seq = self._seq
            self._mpi.announce_leaving()

    def destroy(self) -> None:
        cuda.nccl_destroy(self._comm)
        if self._mpi is not None:
            self._mpi._seq = self._seq
            self._mpi.destroy()


def _nccl_op(op: ReduceOp, dtype) -> str:
    if dtype.kind == "b":  # bools travel as bytes: a sum is a logical or
        table = {ReduceOp.SUM: "max", ReduceOp.MAX: "max", ReduceOp.PRODUCT: "min",
                 ReduceOp.MIN: "min"}
    else:
        table = {ReduceOp.SUM: "sum", ReduceOp.AVG: "sum", ReduceOp.PRODUCT: "prod",
                 ReduceOp.MIN: "min", ReduceOp.MAX: "max"}
    if op not in table:
        raise ValueError(f"the 'nccl' backend does not support ReduceOp.{op.name} on {dtype} "
                         "tensors")
    return table[op]


def _check_matches(rank, world_size, actual_rank: int, actual_size: int) -> None:
    if rank is not None and rank != actual_rank:
        raise ValueError(f"rank={rank} was given, but mpiexec started this process as rank "
                         f"{actual_rank} of {actual_size}")
    if world_size is not None and world_size != actual_size:
        raise ValueError(f"world_size={world_size} was given, but mpiexec started "
                         f"{actual_size} process(es) (mpiexec -n {world_size} ...)")


def _local_rank_from_env(rank: int) -> int:
    for name in ("LOCAL_RANK", "MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return rank


def _file_rendezvous(path: str, rank: int, timeout: float) -> bytes:
    """Rank 0 writes the NCCL id to ``path`` (atomically); the others wait for it."""
    if rank == 0:
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w") as file:
            file.write(cuda.nccl_unique_id().hex())
        os.replace(temporary, path)
    found = poll_until(lambda: os.path.exists(path), time.monotonic() + timeout)
    if not found:
        raise RuntimeError(f"rank {rank} waited {timeout:g} s for rank 0 to write {path} "
                           "(init_method='file://...'); did rank 0 start?")
    with open(path) as file:
        return bytes.fromhex(file.read().strip())


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
