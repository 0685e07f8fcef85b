"""Never a silent hang: notices between ranks on a private MPI communicator.

A rank that leaves (exits, or calls destroy_process_group) tells the others how many
collectives it had started; a rank waiting in a later one then knows it will never finish and
ends the job, naming the rank that left. A rank whose collective passes the timeout asks the
others where they are (only ranks that are themselves waiting in a collective can answer)
and ends the job with what it learned. Messages are four int64: kind, sequence number, the
collective's code, and a spare.
"""
from __future__ import annotations

import sys
import time

import numpy as np

LEFT, QUERY, STATUS = 1, 2, 3
OPS = ("all_reduce", "broadcast", "all_gather", "reduce_scatter", "barrier", "init")


def op_code(name: str) -> int:
    return OPS.index(name) if name in OPS else len(OPS)


def op_name(code: int) -> str:
    return OPS[code] if 0 <= code < len(OPS) else "a collective"


class Health:
    """The notices of one process group. ``abort(message)`` ends the whole job."""

    def __init__(self, MPI, comm, abort):
        self._MPI = MPI
        self._comm = comm
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self._abort = abort
        self._status = MPI.Status()
        self._sends = []          # requests (and their buffers) still in flight
        self.left = {}            # rank -> collectives it had started when it left
        self.answers = {}         # rank -> (seq, op code) from replies to our query
        self.waiting = None       # (seq, op name) while this rank waits in a collective
        self._closed = False

    # ------------------------------------------------------------------ messages
    def _send(self, kind: int, dest: int, seq: int = 0, code: int = 0) -> None:
        message = np.array([kind, seq, code, 0], dtype=np.int64)
        self._sends.append((self._comm.Isend(message, dest=dest, tag=kind), message))

    def _drain_sends(self) -> None:
        if self._sends:
            self._sends = [(r, m) for r, m in self._sends if not r.Test()]

    def serve(self) -> None:
        """Handle every message that has arrived (answer queries, record departures)."""
        comm, status = self._comm, self._status
        while comm.Iprobe(source=self._MPI.ANY_SOURCE, tag=self._MPI.ANY_TAG, status=status):
            message = np.empty(4, dtype=np.int64)
            source = status.Get_source()
            comm.Recv(message, source=source, tag=status.Get_tag())
            kind, seq, code = int(message[0]), int(message[1]), int(message[2])
            if kind == LEFT:
                self.left[source] = seq
            elif kind == QUERY and self.waiting is not None:
                self._send(STATUS, source, self.waiting[0], op_code(self.waiting[1]))
            elif kind == STATUS:
                self.answers[source] = (seq, code)
        self._drain_sends()

    # ------------------------------------------------------------------ checks
    def check_left(self, seq: int, name: str) -> None:
        """End the job when a rank that left never started collective ``seq``."""
        for rank, started in self.left.items():
            if started < seq:
                self._abort(
                    f"rank {rank} left the process group (it exited or called "
                    f"destroy_process_group) after {started} collective(s), but rank "
                    f"{self._rank} waits in {name} (its collective #{seq}), which rank {rank} "
                    "never called. Every rank must call the same collectives in the same "
                    "order.")

    def diagnose(self, seq: int, name: str, timeout: float, grace: float) -> str:
        """Ask every other rank where it is; the message for the timeout."""
        self.answers = {}
        for rank in range(self._size):
            if rank != self._rank and rank not in self.left:
                self._send(QUERY, rank)
        deadline = time.monotonic() + grace
        expected = self._size - 1 - len(self.left)
        while len(self.answers) < expected and time.monotonic() < deadline:
            self.serve()
            time.sleep(1e-3)
        lines = [f"rank {self._rank} waited {timeout:g} s in {name} (its collective #{seq}) "
                 "without it finishing (timeout)."]
        for rank in range(self._size):
            if rank == self._rank:
                continue
            if rank in self.left:
                lines.append(f"rank {rank} left the process group after {self.left[rank]} "
                             "collective(s).")
            elif rank in self.answers:
                other_seq, code = self.answers[rank]
                other = op_name(code)
                note = "" if (other_seq, other) == (seq, name) else \
                    " (a different collective: ranks disagree on the order)"
                lines.append(f"rank {rank} is waiting in {other} (its collective "
                             f"#{other_seq}){note}.")
            else:
                lines.append(f"rank {rank} did not answer: it is not inside a collective "
                             "(still computing, stuck, or dead).")
        lines.append("Every rank must call the same collectives in the same order; raise the "
                     "limit with init_process_group(timeout=...) if a rank needs longer.")
        return " ".join(lines)

    # ------------------------------------------------------------------ leaving
    def announce_leaving(self, started: int) -> None:
        """Tell the other ranks this one is leaving after ``started`` collectives."""
        if self._closed:
            return
        self._closed = True
        for rank in range(self._size):
            if rank != self._rank:
                self._send(LEFT, rank, started)
        deadline = time.monotonic() + 1.0
        while self._sends and time.monotonic() < deadline:
            self._drain_sends()
            time.sleep(1e-4)


def report(rank: int, size: int, message: str) -> None:
    """Write a fatal message where the user will see it, before the job ends."""
    sys.stdout.flush()
    sys.stderr.write(f"\nember.distributed: rank {rank} of {size}: {message}\n")
    sys.stderr.flush()
