"""NumPy stand-ins for ember.backend.cuda's GPU and NCCL calls, so the 'nccl' process group's
own code runs on a CPU machine. Collectives act as in a world whose other ranks hold the
same values as this one (a sum doubles in a world of two)."""
from __future__ import annotations

import contextlib
import types

import numpy as np


class FakeCommunicator:
    def __init__(self, size, unique_id, rank, index):
        self.size, self.unique_id, self.rank, self.index = size, unique_id, rank, index
        self.calls = []
        self.aborted = self.destroyed = False


def install(setattr, cuda, backend, devices: int = 1, bus_ids=None):
    """Replace the calls with ``setattr(module, name, value)`` (monkeypatch.setattr in
    tests). Returns the state the fakes share (``done``: whether transfers finish)."""
    state = types.SimpleNamespace(done=True, ids=[])

    def all_reduce(comm, array, op):
        comm.calls.append(("all_reduce", op, array.dtype.str))
        if op == "sum":
            array *= comm.size

    def reduce_scatter(comm, output, input, op):
        comm.calls.append(("reduce_scatter", op))
        output[...] = input[comm.rank] * comm.size

    def all_gather(comm, output, input):
        comm.calls.append(("all_gather",))
        output.reshape(comm.size, -1)[...] = input.reshape(1, -1)

    def unique_id():
        state.ids.append(bytes(range(128)))
        return state.ids[-1]

    replacements = {
        "is_available": lambda: True, "nccl": lambda: None, "device_count": lambda: devices,
        "current_device": lambda: 0, "set_device": lambda index: None, "cupy": lambda: np,
        "device_guard": lambda index: contextlib.nullcontext(),
        "nccl_unique_id": unique_id, "nccl_communicator": FakeCommunicator,
        "nccl_all_reduce": all_reduce, "nccl_reduce_scatter": reduce_scatter,
        "nccl_all_gather": all_gather,
        "nccl_broadcast": lambda comm, array, root: comm.calls.append(("broadcast", root)),
        "record_event": lambda: object(), "event_done": lambda event: state.done,
        "nccl_check": lambda comm: None,
        "nccl_abort": lambda comm: setattr(comm, "aborted", True),
        "nccl_destroy": lambda comm: setattr(comm, "destroyed", True),
        "pci_bus_id": (lambda index: (bus_ids or {}).get(index, f"0000:{index:02x}:00.0")),
    }
    for name, value in replacements.items():
        setattr(cuda, name, value)
    setattr(backend, "_cuda_devices", {})
    return state
