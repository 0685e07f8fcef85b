"""Which GPUs a Timer waits for, and the CUDA start-up it times apart. Everything here goes
through ``ember.cuda`` and ``ember.backend``; no array library is imported."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ... import cuda as _ember_cuda
from ...backend import cuda as _backend_cuda
from ...backend import device as _device_type
from ...backend import parse_device
from ...tensor import Tensor


def cuda_indices(device, namespace: dict[str, Any]) -> tuple[int, ...]:
    """The CUDA device indices to synchronize around each timed block.

    An explicit ``device`` is checked (a CUDA device without a GPU raises, saying why).
    With ``device=None``: the GPUs that hold the tensors and modules in ``namespace``, and
    the current GPU whenever CUDA is available (the statement may launch work of its own),
    as PyTorch's Timer waits for the current accelerator.
    """
    if device is not None:
        try:
            wanted = _device_type(device) if not isinstance(device, _device_type) else device
            resolved = parse_device(wanted)
        except (RuntimeError, TypeError, ValueError) as error:
            raise type(error)(f"Timer(device={device!r}): {error}") from None
        return () if resolved.type == "cpu" else (resolved.index,)
    if not _ember_cuda.is_available():
        return ()
    found = {_ember_cuda.current_device()}
    for value in namespace.values():
        found.update(_tensor_indices(value))
    return tuple(sorted(found))


def _tensor_indices(value) -> set[int]:
    """CUDA indices of a tensor, a module's parameters and buffers, or the tensors in a
    list, tuple or dict (one level deep)."""
    from ...nn import Module

    if isinstance(value, Tensor):
        items = [value]
    elif isinstance(value, Module):
        items = [*value.parameters(), *value.buffers()]
    elif isinstance(value, (list, tuple)):
        items = [v for v in value if isinstance(v, Tensor)]
    elif isinstance(value, dict):
        items = [v for v in value.values() if isinstance(v, Tensor)]
    else:
        return set()
    return {t.device.index for t in items if t.device.type == "cuda"}


def synchronizer(indices: tuple[int, ...]) -> Callable[[], None]:
    """A function that waits for every GPU in ``indices`` (a no-op for none)."""
    if not indices:
        return _nothing_to_wait_for

    def synchronize() -> None:
        for index in indices:
            _ember_cuda.synchronize(index)

    return synchronize


def _nothing_to_wait_for() -> None:
    return None


def create_contexts(indices: tuple[int, ...], clock: Callable[[], float] = time.perf_counter
                    ) -> float | None:
    """Create the CUDA context of each GPU in ``indices`` that lacks one, and return the
    seconds that took (None when every context existed already or there are no GPUs).
    Where the driver can't tell whether a context exists, the creation call is timed
    anyway: on an existing context it costs microseconds."""
    spent, created = 0.0, False
    for index in indices:
        if _backend_cuda.has_context(index) is True:
            continue
        start = clock()
        _backend_cuda.create_context(index)
        spent += clock() - start
        created = True
    return spent if created else None


def device_name(indices: tuple[int, ...]) -> str:
    return ",".join(f"cuda:{index}" for index in indices) if indices else "cpu"
