"""``ember.distributed``: collectives across processes, PyTorch's API over MPI and NCCL.

Launch one process per rank with ``mpiexec -n 4 python train.py`` (or
``python -m ember.distributed.run -n 4 train.py``), then in each::

    import ember.distributed as dist
    dist.init_process_group("mpi")          # CPU tensors; "nccl" for CUDA tensors
    t = ember.tensor([float(dist.get_rank())])
    dist.all_reduce(t)                      # in place: 0 + 1 + 2 + 3 on every rank
    dist.destroy_process_group()

A rank that fails, leaves early, or lets a collective wait past ``timeout`` ends the whole
job with a message naming the ranks involved: a distributed job never hangs silently.
"""
from __future__ import annotations

import atexit
import sys

import numpy as np

from .. import backend
from ..tensor import Tensor, bump_version
from ._group import (
    NOT_INITIALIZED,
    DistBackendError,
    ProcessGroup,
    ReduceOp,
    Work,
    as_reduce_op,
    default_pg_timeout,
    timeout_seconds,
)

__all__ = ["init_process_group", "destroy_process_group", "is_available", "is_initialized",
           "is_mpi_available", "is_nccl_available", "get_rank", "get_world_size",
           "get_backend", "barrier", "all_reduce", "broadcast", "all_gather", "reduce_scatter",
           "ReduceOp", "Work", "ProcessGroup", "DistBackendError", "default_pg_timeout",
           "Backend"]


class Backend:
    """The backend names ``init_process_group`` takes."""

    MPI = "mpi"
    NCCL = "nccl"
    GLOO = "gloo"  # accepted for PyTorch programs: runs on the 'mpi' backend


_default: ProcessGroup | None = None
_previous_excepthook = None


def is_available() -> bool:
    """ember.distributed is always built in (its backends need extras: mpi4py, CuPy)."""
    return True


def is_mpi_available() -> bool:
    """True when mpi4py is installed (the 'mpi' backend)."""
    from ._mpi import mpi_available

    return mpi_available()


def is_nccl_available() -> bool:
    """True when CuPy with NCCL and a GPU are there (the 'nccl' backend)."""
    try:
        backend.cuda.nccl()
    except (ImportError, RuntimeError):
        return False
    return True


def is_initialized() -> bool:
    """True between init_process_group and destroy_process_group."""
    return _default is not None


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout=None, world_size: int | None = -1, rank: int | None = -1,
                       store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Join this process to the job's default process group.

    - ``backend``: ``'mpi'`` (CPU tensors, through mpi4py; the default), or ``'nccl'``
      (CUDA tensors, through CuPy's NCCL; one GPU per rank, ``device_id`` or the rank's
      local index picks it). ``'gloo'`` is taken as ``'mpi'``.
    - The ranks meet through mpiexec, which also gives each its ``rank`` and
      ``world_size``; when given they must agree with it. The 'nccl' backend can meet
      without MPI through ``init_method='file:///shared/path'`` with both given.
    - ``timeout`` (a timedelta or seconds; default 30 minutes): how long any collective may
      wait before the job ends with an error that says which rank was where.

    >>> dist.init_process_group("mpi")                   # doctest: +SKIP
    >>> dist.get_rank(), dist.get_world_size()           # doctest: +SKIP
    (0, 2)
    """
    global _default
    if _default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise ValueError("ember.distributed has no stores: the ranks meet through mpiexec "
                         "(or init_method='file://...' for 'nccl'); pass store=None")
    seconds = timeout_seconds(timeout)
    rank = None if rank is None or rank == -1 else _non_negative(rank, "rank")
    world_size = None if world_size is None or world_size == -1 else \
        _non_negative(world_size, "world_size")
    if rank is not None and world_size is not None and rank >= world_size:
        raise ValueError(f"rank {rank} is not below world_size {world_size}")
    name = (backend or Backend.MPI).lower() if isinstance(backend, (str, type(None))) else None
    if name in (Backend.MPI, Backend.GLOO):
        if init_method not in (None, "env://"):
            raise ValueError(f"the 'mpi' backend's ranks meet through mpiexec; init_method "
                             f"{init_method!r} is not used (leave it None)")
        from ._mpi import MpiGroup
        from ._nccl import _check_matches

        group = MpiGroup(seconds)
        _check_matches(rank, world_size, group.rank(), group.size())
    elif name == Backend.NCCL:
        from ._nccl import NcclGroup

        group = NcclGroup(seconds, init_method, rank, world_size, device_id)
    else:
        raise ValueError(f"Invalid backend: {backend!r}. ember.distributed has 'mpi' (CPU "
                         "tensors over mpi4py) and 'nccl' (CUDA tensors over CuPy's NCCL)")
    _default = group
    _install_failure_handlers(group)
    from .run import record_rank

    record_rank(group.rank())


def destroy_process_group(group=None) -> None:
    """Leave the default process group (every rank should call it at the end)."""
    global _default
    target = _resolve(group, "destroy_process_group")
    target.destroy()
    _default = None
    _remove_failure_handlers()


def get_rank(group=None) -> int:
    """This process's rank, 0 .. world_size - 1."""
    return _resolve(group, "get_rank").rank()


def get_world_size(group=None) -> int:
    """How many processes take part."""
    return _resolve(group, "get_world_size").size()


def get_backend(group=None) -> str:
    return _resolve(group, "get_backend").backend


# ------------------------------------------------------------------------- collectives
def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Combine ``tensor`` across all ranks, in place, so that every rank holds the result
    (``op``: ReduceOp.SUM, AVG, PRODUCT, MIN, MAX, or bitwise BAND/BOR/BXOR).

    >>> t = ember.tensor([1.0, 2.0]) * (dist.get_rank() + 1)   # doctest: +SKIP
    >>> dist.all_reduce(t)                                       # doctest: +SKIP
    >>> t                      # on 2 ranks: [1, 2] + [2, 4]      # doctest: +SKIP
    tensor([3., 6.])
    """
    g = _resolve(group, "all_reduce")
    op = as_reduce_op(op)
    _check_tensor(tensor, "all_reduce", "tensor", g)
    _check_op(op, tensor, "all_reduce")
    array, finish = _staged(tensor, g)
    return _run(g.all_reduce(array, op), finish, async_op)


def broadcast(tensor: Tensor, src: int | None = None, group=None, async_op: bool = False,
              group_src: int | None = None):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every other rank (in place)."""
    g = _resolve(group, "broadcast")
    src = group_src if src is None else src
    if src is None:
        raise ValueError("broadcast needs src= (the rank whose tensor is sent)")
    _check_rank(src, g, "broadcast", "src")
    _check_tensor(tensor, "broadcast", "tensor", g)
    array, finish = _staged(tensor, g)
    return _run(g.broadcast(array, src), finish, async_op)


def all_gather(tensor_list: list, tensor: Tensor, group=None, async_op: bool = False):
    """Fill ``tensor_list[r]`` with rank r's ``tensor`` on every rank."""
    g = _resolve(group, "all_gather")
    _check_tensor(tensor, "all_gather", "tensor", g)
    _check_list(tensor_list, tensor, g, "all_gather", "tensor_list")
    xp = backend.xp_for_device(_group_device(g, tensor))
    source = _source(tensor, g)
    with _on(g, tensor):
        gathered = xp.empty((g.size(),) + tuple(tensor.shape), dtype=source.dtype)

    def finish():
        for rank, out in enumerate(tensor_list):
            _write(out, gathered[rank])
    return _run(g.all_gather(gathered, source), finish, async_op)


def reduce_scatter(output: Tensor, input_list: list, op=ReduceOp.SUM, group=None,
                   async_op: bool = False):
    """Reduce ``input_list[r]`` across ranks into ``output`` on rank r."""
    g = _resolve(group, "reduce_scatter")
    op = as_reduce_op(op)
    _check_tensor(output, "reduce_scatter", "output", g)
    _check_list(input_list, output, g, "reduce_scatter", "input_list")
    _check_op(op, output, "reduce_scatter")
    xp = backend.xp_for_device(_group_device(g, output))
    with _on(g, output):
        stacked = xp.stack([_source(t, g) for t in input_list])
        result = xp.empty(tuple(output.shape), dtype=stacked.dtype)
    return _run(g.reduce_scatter(result, stacked, op), lambda: _write(output, result),
                async_op)


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Wait until every rank has reached this barrier."""
    g = _resolve(group, "barrier")
    return _run(g.barrier(), None, async_op)


# ------------------------------------------------------------------------- helpers
def _resolve(group, who: str) -> ProcessGroup:
    if group is not None and not isinstance(group, ProcessGroup):
        raise TypeError(f"{who}: group must be a ProcessGroup or None, got "
                        f"{type(group).__name__}")
    target = group or _default
    if target is None:
        raise ValueError(NOT_INITIALIZED)
    return target


def default_group() -> ProcessGroup:
    return _resolve(None, "default_group")


def _non_negative(value, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    return value


def _check_rank(rank, group, who: str, name: str) -> None:
    if not isinstance(rank, int) or isinstance(rank, bool) or not 0 <= rank < group.size():
        raise ValueError(f"{who}: {name}={rank!r} is not a rank of this group "
                         f"(0 .. {group.size() - 1})")


def _check_tensor(tensor, who: str, name: str, group) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{who}: {name} must be an ember.Tensor, got {type(tensor).__name__}")
    device = tensor.device
    if group.device_type == "cuda":
        if device != group.device:
            raise ValueError(f"{who}: the 'nccl' backend of this rank works on {group.device}, "
                             f"but {name} is on {device} (move it with .to('{group.device}'))")


def _check_list(tensors, like: Tensor, group, who: str, name: str) -> None:
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{who}: {name} must be a list of tensors, got {type(tensors).__name__}")
    if len(tensors) != group.size():
        raise ValueError(f"{who}: {name} has {len(tensors)} tensor(s), but the group has "
                         f"{group.size()} rank(s): one tensor per rank is needed")
    for i, t in enumerate(tensors):
        _check_tensor(t, who, f"{name}[{i}]", group)
        if t.shape != like.shape or t.dtype is not like.dtype:
            raise ValueError(f"{who}: {name}[{i}] is {t.dtype} {list(t.shape)}, but every "
                             f"tensor must be {like.dtype} {list(like.shape)} like the other "
                             "argument")


def _check_op(op: ReduceOp, tensor: Tensor, who: str) -> None:
    kind = tensor._data.dtype.kind
    if op is ReduceOp.AVG and not tensor.is_floating_point():
        raise ValueError(f"{who}: ReduceOp.AVG needs a floating-point tensor, got "
                         f"{tensor.dtype} (use SUM and divide)")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and kind not in "iub":
        raise ValueError(f"{who}: ReduceOp.{op.name} is bitwise: it needs an integer or bool "
                         f"tensor, got {tensor.dtype}")
    if tensor.is_complex() and op not in (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.PRODUCT):
        raise ValueError(f"{who}: ReduceOp.{op.name} does not order complex numbers")


def _group_device(group, tensor: Tensor):
    return group.device if group.device_type == "cuda" else backend.CPU


def _on(group, tensor):
    import contextlib

    if group.device_type == "cuda":
        return backend.cuda.device_guard(group.device.index)
    return contextlib.nullcontext()


def _staged(tensor: Tensor, group):
    """(array for the backend, write-back): the tensor's own memory when it is contiguous
    and on the backend's device; otherwise a contiguous copy, written back when done."""
    data = tensor._data
    device = tensor.device
    if group.device_type == "cpu" and device.type != "cpu":
        host = np.ascontiguousarray(backend.move(data, device, backend.CPU))
        return host, lambda: _write(tensor, host)
    if data.flags.c_contiguous:
        bump_version(tensor)
        return data, None
    xp = backend.xp_for_device(device)
    with _on(group, tensor):
        copy = xp.ascontiguousarray(data)
    return copy, lambda: _write(tensor, copy)


def _source(tensor: Tensor, group):
    """The tensor's values as a contiguous array on the backend's device (read only)."""
    data = tensor._data
    if group.device_type == "cpu" and tensor.device.type != "cpu":
        return np.ascontiguousarray(backend.move(data, tensor.device, backend.CPU))
    if data.flags.c_contiguous:
        return data
    with _on(group, tensor):
        return backend.xp_for_device(tensor.device).ascontiguousarray(data)


def _write(tensor: Tensor, array) -> None:
    """Copy ``array`` into ``tensor``'s memory (from the host when the tensor is on a GPU)."""
    device = tensor.device
    if device.type != "cpu" and isinstance(array, np.ndarray):
        array = backend.move(array, backend.CPU, device)
    tensor._data[...] = array
    bump_version(tensor)


def _run(work: Work, finish, async_op: bool):
    if finish is not None:
        previous = work._finish

        def both():
            if previous is not None:
                previous()
            finish()
        work._finish = both
    if async_op:
        return work
    work.wait()
    return None


# ------------------------------------------------------------------------- failures
def _install_failure_handlers(group: ProcessGroup) -> None:
    """An uncaught exception on one rank ends the whole job (instead of leaving the other
    ranks waiting for it); a rank that exits tells the others."""
    global _previous_excepthook
    if group.size() == 1 or _previous_excepthook is not None:
        return
    _previous_excepthook = sys.excepthook

    def excepthook(kind, value, traceback):
        _previous_excepthook(kind, value, traceback)
        current = _default
        if current is not None:
            current.abort(f"uncaught {kind.__name__}: {value}.")

    sys.excepthook = excepthook
    atexit.register(_announce_exit)


def _remove_failure_handlers() -> None:
    global _previous_excepthook
    if _previous_excepthook is not None:
        sys.excepthook = _previous_excepthook
        _previous_excepthook = None
        atexit.unregister(_announce_exit)


def _announce_exit() -> None:
    if _default is not None:
        _default.announce_leaving()
