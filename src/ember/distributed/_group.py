"""What every backend shares: reduction ops, the Work handle of a collective, timeouts, and
the checks on the tensors handed to a collective."""
from __future__ import annotations

import datetime
import enum
import time

__all__ = ["ReduceOp", "Work", "ProcessGroup", "DistBackendError", "default_pg_timeout"]

default_pg_timeout = datetime.timedelta(minutes=30)

NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                   "init_process_group.")


class DistBackendError(RuntimeError):
    """A collective failed inside the communication library (MPI or NCCL)."""


class ReduceOp(enum.Enum):
    """How ``all_reduce`` and ``reduce_scatter`` combine the ranks' values.

    AVG is the sum divided by the world size (floating-point tensors only); BAND, BOR and
    BXOR are bitwise (integer and bool tensors; the 'mpi' backend only).
    """

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7

    def __repr__(self) -> str:
        return f"<ReduceOp.{self.name}: {self.value}>"


def as_reduce_op(op) -> ReduceOp:
    if isinstance(op, ReduceOp):
        return op
    if isinstance(op, str) and op.upper() in ReduceOp.__members__:
        return ReduceOp[op.upper()]
    raise ValueError(f"op must be an ember.distributed.ReduceOp (SUM, AVG, PRODUCT, MIN, MAX, "
                     f"BAND, BOR, BXOR), got {op!r}")


def timeout_seconds(timeout) -> float:
    """A timeout given as a timedelta or a number of seconds, checked to be positive."""
    if timeout is None:
        return default_pg_timeout.total_seconds()
    if isinstance(timeout, datetime.timedelta):
        seconds = timeout.total_seconds()
    elif isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        seconds = float(timeout)
    else:
        raise TypeError(f"timeout must be a datetime.timedelta or a number of seconds, got "
                        f"{type(timeout).__name__}")
    if not seconds > 0:
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    return seconds


class Work:
    """The handle of a collective started with ``async_op=True``: ``wait()`` blocks until it
    is done (or ends the job when it passes the process group's timeout).

    >>> work = dist.all_reduce(t, async_op=True)   # doctest: +SKIP
    >>> work.wait()                                 # doctest: +SKIP
    True
    """

    def __init__(self, group, op_name: str, seq: int, poll, finish=None):
        self._group = group
        self._op_name = op_name
        self._seq = seq
        self._poll = poll        # () -> bool: True once the transfer has finished
        self._finish = finish    # runs once after completion (copy back, divide for AVG)
        self._done = False

    def is_completed(self) -> bool:
        """True when the collective has finished (never blocks)."""
        if not self._done and self._poll():
            self._complete()
        return self._done

    def wait(self, timeout=None) -> bool:
        """Block until the collective is done; past the timeout, end the job with an error
        that says which ranks were where."""
        if not self._done:
            limit = self._group.timeout if timeout is None else timeout_seconds(timeout)
            self._group.wait_for(self._poll, self._op_name, self._seq, limit)
            self._complete()
        return True

    def _complete(self) -> None:
        self._done = True
        finish, self._finish = self._finish, None
        if finish is not None:
            finish()

    def __repr__(self) -> str:
        state = "completed" if self._done else "in flight"
        return f"<Work {self._op_name} #{self._seq} ({state})>"


class ProcessGroup:
    """The ranks that take part in collectives, and the library that carries them.

    Backends implement the array-level collectives (in place on C-contiguous arrays of the
    group's device) and ``wait_for``; each collective call gets the next sequence number,
    the same on every rank when every rank calls the same collectives in the same order.
    """

    backend = ""

    def __init__(self, rank: int, size: int, timeout: float):
        self._rank = rank
        self._size = size
        self.timeout = timeout
        self._seq = 0

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    # Backends fill these in.
    def all_reduce(self, array, op: ReduceOp) -> Work:
        raise NotImplementedError

    def broadcast(self, array, src: int) -> Work:
        raise NotImplementedError

    def all_gather(self, output, input) -> Work:
        raise NotImplementedError

    def reduce_scatter(self, output, input, op: ReduceOp) -> Work:
        raise NotImplementedError

    def barrier(self) -> Work:
        raise NotImplementedError

    def wait_for(self, poll, op_name: str, seq: int, timeout: float) -> None:
        raise NotImplementedError

    def destroy(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<ProcessGroup {self.backend} rank {self._rank} of {self._size}>"


def poll_until(poll, deadline: float, on_idle=None) -> bool:
    """Call ``poll`` until it answers True (then True) or ``deadline`` passes (then False).
    Spins briefly, then sleeps in growing steps up to a millisecond so that waiting ranks
    leave the cores to the ranks still computing. ``on_idle()`` runs between polls."""
    pause = 0.0
    spins = 0
    while True:
        if poll():
            return True
        if on_idle is not None:
            on_idle()
        if time.monotonic() > deadline:
            return False
        spins += 1
        if spins > 200:
            pause = min(1e-3, pause * 2 if pause else 2e-5)
            time.sleep(pause)
