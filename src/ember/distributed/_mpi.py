"""The 'mpi' backend: collectives on host (NumPy) arrays through mpi4py.

Every collective is MPI's non-blocking form (Iallreduce, Ibcast, ...), polled until done,
so a wait can give up at the timeout and a rank can notice the others' notices meanwhile.
"""
from __future__ import annotations

import os
import time

import numpy as np

from . import _health
from ._group import ProcessGroup, ReduceOp, Work, poll_until

INSTALL = "pip install 'ember[distributed]' (or: pip install mpi4py mpich)"


def load_mpi():
    """mpi4py's MPI module (initializing MPI), or an ImportError that says what to install."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise ImportError(f"the 'mpi' backend needs mpi4py and an MPI library: {INSTALL}") \
            from error
    except (RuntimeError, OSError) as error:  # mpi4py present, no MPI library to load
        raise ImportError(f"mpi4py could not load an MPI library ({error}): {INSTALL}") \
            from error
    return MPI


def mpi_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


_MPI_TYPES = set("?bBhHiIlLqQefdFD")


def _mpi_op(MPI, op: ReduceOp, dtype: np.dtype):
    if dtype == np.bool_:  # PyTorch's rule for bool: a sum is a logical or
        table = {ReduceOp.SUM: MPI.LOR, ReduceOp.MAX: MPI.LOR, ReduceOp.BOR: MPI.LOR,
                 ReduceOp.PRODUCT: MPI.LAND, ReduceOp.MIN: MPI.LAND, ReduceOp.BAND: MPI.LAND,
                 ReduceOp.BXOR: MPI.LXOR}
    else:
        table = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
                 ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
                 ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}
    return table[op]


class MpiGroup(ProcessGroup):
    """All the processes mpiexec started (MPI_COMM_WORLD), on private communicators."""

    backend = "mpi"
    device_type = "cpu"

    def __init__(self, timeout: float):
        MPI = load_mpi()
        self._MPI = MPI
        world = MPI.COMM_WORLD
        super().__init__(world.Get_rank(), world.Get_size(), timeout)
        # Private copies of the world communicator: user MPI traffic never mixes with ours.
        # Idup, not Dup: a rank that never arrives must not hang the others silently.
        comm, first = world.Idup()
        control, second = world.Idup()
        deadline = time.monotonic() + timeout
        if not poll_until(lambda: MPI.Request.Testall([first, second]), deadline):
            self.abort(f"init_process_group waited {timeout:g} s for the other ranks to join; "
                       "some rank failed or never called it")
        self._comm = comm
        self._control = control
        self._health = _health.Health(MPI, control, self.abort) if self._size > 1 else None

    # ------------------------------------------------------------------ array collectives
    def _typed(self, array):
        """(MPI buffer, copy-back, array reduced into): the array itself for NumPy's own
        types (mpi4py picks MPI's type), a float32 copy for other floats (bfloat16)."""
        if array.dtype.char in _MPI_TYPES:
            return array, None, array
        if array.dtype.kind not in "fV":
            raise TypeError(f"the 'mpi' backend cannot reduce {array.dtype} arrays")
        staged = array.astype(np.float32)

        def copy_back():
            array[...] = staged.astype(array.dtype)
        return staged, copy_back, staged

    def _raw(self, array):
        return [array.reshape(-1).view(np.uint8), self._MPI.BYTE]

    def all_reduce(self, array, op: ReduceOp) -> Work:
        seq = self.next_seq()
        buffer, copy_back, target = self._typed(array)
        request = self._comm.Iallreduce(self._MPI.IN_PLACE, buffer,
                                        op=_mpi_op(self._MPI, op, array.dtype))
        return Work(self, "all_reduce", seq, request.Test,
                    _finisher(op, target, self._size, copy_back))

    def broadcast(self, array, src: int) -> Work:
        seq = self.next_seq()
        request = self._comm.Ibcast(self._raw(array), root=src)
        return Work(self, "broadcast", seq, request.Test)

    def all_gather(self, output, input) -> Work:
        seq = self.next_seq()
        request = self._comm.Iallgather(self._raw(input), self._raw(output))
        return Work(self, "all_gather", seq, request.Test)

    def reduce_scatter(self, output, input, op: ReduceOp) -> Work:
        seq = self.next_seq()
        send, _, _ = self._typed(input)
        receive, copy_back, target = self._typed(output)
        request = self._comm.Ireduce_scatter_block(send, receive,
                                                   op=_mpi_op(self._MPI, op, input.dtype))
        return Work(self, "reduce_scatter", seq, request.Test,
                    _finisher(op, target, self._size, copy_back))

    def barrier(self) -> Work:
        seq = self.next_seq()
        request = self._comm.Ibarrier()
        return Work(self, "barrier", seq, request.Test)

    # ------------------------------------------------------------------ waiting, failing
    def wait_for(self, poll, op_name: str, seq: int, timeout: float) -> None:
        health = self._health
        if health is None:  # one rank: nothing to wait for but MPI itself
            poll_until(poll, time.monotonic() + timeout)
            return
        wait_health(health, poll, op_name, seq, timeout, self.abort)

    def abort(self, message: str, code: int = 1) -> None:
        _health.report(self._rank, self._size, message + " Ending the job.")
        # mpiexec stops forwarding output once any rank aborts: give it a moment to pass
        # this message (and one another rank is writing at the same time) on
        time.sleep(0.25)
        try:
            self._MPI.COMM_WORLD.Abort(code)
        finally:  # MPI_Abort may return while mpiexec tears the job down: never go on
            os._exit(code)

    def announce_leaving(self) -> None:
        if self._health is not None:
            self._health.announce_leaving(self._seq)

    def destroy(self) -> None:
        self.announce_leaving()
        self.free()

    def free(self) -> None:
        """Release the communicators (after a failed setup: without notices)."""
        for comm in (self._comm, self._control):
            if comm != self._MPI.COMM_NULL:
                comm.Free()


def wait_health(health, poll, op_name, seq, timeout, abort) -> None:
    """Poll ``poll`` until done, serving notices every millisecond; end the job when a rank
    that left never called this collective, or when the timeout passes."""
    health.waiting = (seq, op_name)
    next_serve = [0.0]

    def idle():
        now = time.monotonic()
        if now >= next_serve[0]:
            next_serve[0] = now + 1e-3
            health.serve()
            health.check_left(seq, op_name)
    try:
        if not poll_until(poll, time.monotonic() + timeout, idle):
            abort(health.diagnose(seq, op_name, timeout, grace=min(2.0, max(0.5, timeout))))
    finally:
        health.waiting = None


def _finisher(op, target, size, copy_back):
    if op is not ReduceOp.AVG and copy_back is None:
        return None

    def finish():
        if op is ReduceOp.AVG:
            target[...] /= size
        if copy_back is not None:
            copy_back()
    return finish
