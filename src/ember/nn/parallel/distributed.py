"""DistributedDataParallel: one model replica per process, gradients averaged in buckets while
backward still runs."""
from __future__ import annotations

import contextlib

import numpy as np

from ... import backend
from ...autograd import grad_mode
from ...autograd.function import AccumulateGrad
from ...tensor import Tensor, bump_version
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024  # a small first bucket starts communicating early


class DistributedDataParallel(Module):
    """Data-parallel training across processes, as PyTorch's DDP: every rank holds a replica
    of ``module`` and works on its own share of the batch; after ``backward()`` each
    parameter's ``.grad`` is the average over the ranks, so every replica takes the same
    optimizer step and training matches one process on the whole batch.

    - At construction the ranks check that they built the same parameters, and rank 0's
      parameters and buffers are copied to every rank.
    - Gradients are averaged in buckets of about ``bucket_cap_mb`` (default 25) MiB, in
      reverse order of ``module.parameters()`` (roughly the order backward produces them).
      A gradient hook on each parameter notes when its gradient is ready; a full bucket
      starts a non-blocking all-reduce at once, overlapping with the rest of backward, and
      the last gradient waits for them all.
    - ``with model.no_sync():`` forwards and backwards only accumulate local gradients
      (gradient accumulation); the next synchronized backward averages the sum.
    - ``find_unused_parameters=True`` allows forwards that leave some parameters unused
      (found by walking the graph from the outputs); without it, every parameter that
      requires grad must receive a gradient in each synchronized backward, or the next
      forward raises. ``static_graph=True`` is accepted and takes the same safe path.
    - ``broadcast_buffers`` (default True) copies rank 0's buffers (BatchNorm statistics)
      to every rank before each synchronized forward.
    - ``gradient_as_bucket_view=True`` makes each ``.grad`` a view into its bucket, which
      saves a copy of the gradients' memory.
    - ``module`` is the wrapped model; ``state_dict()`` keys start with ``'module.'``.

    >>> model = DistributedDataParallel(nn.Linear(10, 2))          # doctest: +SKIP
    >>> loss_fn(model(x_local), y_local).backward()                 # doctest: +SKIP
    >>> optimizer.step()     # the same step on every rank          # doctest: +SKIP
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 init_sync: bool = True):
        super().__init__()
        from ... import distributed as dist

        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps an ember.nn.Module, got "
                            f"{type(module).__name__}")
        group = dist._resolve(process_group, "DistributedDataParallel")
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        devices = {p.device for p in module.parameters()} | {b.device for b in module.buffers()}
        if len(devices) > 1:
            raise ValueError("DistributedDataParallel: the module's parameters and buffers are "
                             f"on several devices ({sorted(str(d) for d in devices)}); put the "
                             "whole module on one device")
        device = devices.pop()
        self.device = device
        self.device_ids = _check_device_ids(device_ids, output_device, device)
        self.output_device = output_device
        self.dim = dim
        self.module = module
        self.process_group = group
        self.broadcast_buffers = bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.static_graph = bool(static_graph)
        self.gradient_as_bucket_view = bool(gradient_as_bucket_view)
        cap = 25 if bucket_cap_mb is None else bucket_cap_mb
        if not isinstance(cap, (int, float)) or isinstance(cap, bool) or cap <= 0:
            raise ValueError(f"bucket_cap_mb must be a positive number, got {bucket_cap_mb!r}")
        self.bucket_bytes_cap = int(cap * 1024 * 1024)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        _verify_same_parameters(group, named)
        if init_sync:
            states = [p for p in module.parameters()] + [b for b in module.buffers()]
            _broadcast_coalesced(group, states, self.bucket_bytes_cap)
        self._reducer = _Reducer(named, group, self.bucket_bytes_cap,
                                 self.gradient_as_bucket_view)

    # ------------------------------------------------------------------ forward
    def forward(self, *inputs, **kwargs):
        reducer = self._reducer
        recording = grad_mode.is_grad_enabled()
        sync = recording and self.require_backward_grad_sync
        if recording:
            reducer.check_finished()
        if sync and self.broadcast_buffers:
            buffers = list(self.module.buffers())
            if buffers:
                _broadcast_coalesced(self.process_group, buffers, self.bucket_bytes_cap)
        if self.device_ids:
            inputs, kwargs = _to_device((inputs, kwargs), self.device)
        output = self.module(*inputs, **kwargs)
        if sync:
            unused = self.find_unused_parameters or self.static_graph
            reducer.prepare(output if unused else None)
        else:
            reducer.disarm()
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Inside, backward passes accumulate gradients locally without averaging them."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def extra_repr(self) -> str:
        return ""


# ---------------------------------------------------------------------------- reducer
class _Bucket:
    __slots__ = ("params", "names", "offsets", "flat", "ready", "pending", "work")

    def __init__(self):
        self.params, self.names, self.offsets = [], [], [0]
        self.flat = None
        self.ready = []
        self.pending = 0
        self.work = None

    def nbytes(self) -> int:
        return self.offsets[-1] * (self.params[0]._data.itemsize if self.params else 0)


class _Reducer:
    """Buckets of parameters, the hooks that fill them, and the all-reduces that average them."""

    def __init__(self, named, group, cap_bytes: int, as_view: bool):
        self.group = group
        self.as_view = as_view
        self.buckets = _make_buckets(named, cap_bytes)
        self.where = {}
        for b, bucket in enumerate(self.buckets):
            for i, p in enumerate(bucket.params):
                self.where[id(p)] = (b, i)
                p.register_hook(self._hook_for(p))
        self.armed = False
        self.finished = False  # this iteration's gradients are averaged
        self.next_launch = 0
        self.used_locally = None  # with find_unused_parameters: which parameters took part

    # ------------------------------------------------------------------ per iteration
    def check_finished(self) -> None:
        """PyTorch's check: a reduction that started in the last backward must have ended."""
        if not self.armed:
            return
        started = any(any(b.ready) for b in self.buckets)
        if started:
            missing = [name for b in self.buckets for name, r in zip(b.names, b.ready) if not r]
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss: "
                f"{', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}. Pass "
                "find_unused_parameters=True to DistributedDataParallel, or make sure every "
                "output of forward takes part in computing the loss.")

    def prepare(self, outputs) -> None:
        for bucket in self.buckets:
            bucket.ready = [False] * len(bucket.params)
            bucket.pending = len(bucket.params)
            bucket.work = None
        self.next_launch = 0
        self.armed = True
        self.finished = False
        self.used_locally = None
        if outputs is not None:
            used = _parameters_reached(outputs)
            self.used_locally = used
            for bucket in self.buckets:
                for i, p in enumerate(bucket.params):
                    if id(p) not in used:
                        bucket.ready[i] = True
                        bucket.pending -= 1
            if all(b.pending == 0 for b in self.buckets):
                # Nothing of this rank's will fire a hook; the others may still need us.
                self._launch_ready(None, None)
                self._finish(None, None)

    def disarm(self) -> None:
        self.armed = self.finished = False

    def _name_of(self, param) -> str:
        b, i = self.where[id(param)]
        return self.buckets[b].names[i]

    # ------------------------------------------------------------------ hooks
    def _hook_for(self, param):
        def hook(grad):
            if self.armed:
                return self._ready(param, grad)
            if self.finished:
                raise RuntimeError(
                    "Expected to mark a variable ready only once: parameter "
                    f"'{self._name_of(param)}' got a gradient after this iteration's gradients "
                    "were already averaged (a second backward through the same graph?); it "
                    "would stay unsynchronized. Run the forward again, or do extra backward "
                    "passes inside no_sync().")
            return None
        return hook

    def _ready(self, param, grad):
        b, i = self.where[id(param)]
        bucket = self.buckets[b]
        if bucket.ready[i]:
            raise RuntimeError(
                f"Expected to mark a variable ready only once: parameter "
                f"'{bucket.names[i]}' received a second gradient in one synchronized backward "
                "(a second backward through the same graph, or reentrant checkpointing). Use "
                "no_sync() for extra backward passes.")
        bucket.ready[i] = True
        bucket.pending -= 1
        launched = self.next_launch
        if bucket.pending == 0:
            self._launch_ready(param, grad)
        for other in self.buckets[:self.next_launch]:  # let MPI move the transfers along
            if other.work is not None:
                other.work.is_completed()
        if self.next_launch == len(self.buckets):
            return self._finish(param, grad)
        if self.as_view and launched <= b < self.next_launch:
            # This gradient is already in the bucket being reduced; the engine must not add
            # it again into a .grad that is a view of that bucket: it stores this instead.
            param._grad = None
            start, end = bucket.offsets[i], bucket.offsets[i + 1]
            return Tensor._make(bucket.flat[start:end].reshape(param._data.shape),
                                param.device, False)
        return None

    def _launch_ready(self, current, grad) -> None:
        """Start the all-reduce of each complete bucket, in bucket order (every rank must
        start them in the same order)."""
        from ...distributed._arrays import all_reduce_average

        while self.next_launch < len(self.buckets) and \
                self.buckets[self.next_launch].pending == 0:
            bucket = self.buckets[self.next_launch]
            self._fill(bucket, current, grad)
            bucket.work = all_reduce_average(self.group, bucket.flat)
            self.next_launch += 1

    def _fill(self, bucket, current, grad) -> None:
        first = bucket.params[0]
        xp = backend.xp_for_device(first.device)
        with _on(first.device):
            if bucket.flat is None:
                bucket.flat = xp.zeros(bucket.offsets[-1], dtype=first._data.dtype)
            flat = bucket.flat
            for p, start, end in zip(bucket.params, bucket.offsets, bucket.offsets[1:]):
                target = flat[start:end].reshape(p._data.shape)
                own = p._grad._data if p._grad is not None else None
                if p is current:
                    if own is None:
                        target[...] = grad._data
                    else:
                        xp.add(own, grad._data, out=target)
                elif own is None:
                    target[...] = 0
                elif not (self.as_view and _is_view_of(own, flat)):
                    target[...] = own

    def _finish(self, current, grad):
        """Wait for every bucket, then give each parameter its averaged gradient. Returns
        the tensor the engine stores as ``current``'s gradient."""
        for bucket in self.buckets:
            bucket.work.wait()
        self.armed = False
        self.finished = True
        used_anywhere = self._used_anywhere()
        result = None
        for bucket in self.buckets:
            for p, start, end in zip(bucket.params, bucket.offsets, bucket.offsets[1:]):
                if used_anywhere is not None and id(p) not in used_anywhere:
                    continue  # no rank used it: its .grad stays as it was, as in PyTorch
                averaged = bucket.flat[start:end].reshape(p._data.shape)
                if not self.as_view:
                    averaged = averaged.copy()
                if p is current:
                    p._grad = None  # the engine stores what the hook returns
                    result = Tensor._make(averaged, p.device, False)
                elif p._grad is not None and not self.as_view:
                    p._grad._data[...] = averaged
                    bump_version(p._grad)
                else:
                    p._grad = Tensor._make(averaged, p.device, False)
        return result

    def _used_anywhere(self):
        """With unused-parameter detection: the parameters some rank used (one MAX
        all-reduce of a usage map), else None (all were used)."""
        if self.used_locally is None:
            return None
        from ...distributed._arrays import all_reduce_max

        order = [p for b in self.buckets for p in b.params]
        usage = np.array([id(p) in self.used_locally for p in order], dtype=np.uint8)
        usage = all_reduce_max(self.group, usage)
        return {id(p) for p, used in zip(order, usage) if used}


# ---------------------------------------------------------------------------- helpers
def _make_buckets(named, cap_bytes: int) -> list:
    """Parameters in reverse registration order, split by (device, dtype) and by size: the
    first bucket holds at most 1 MiB, the others ``cap_bytes``."""
    open_buckets = {}
    buckets = []
    for name, p in reversed(named):
        key = (str(p.device), p._data.dtype)
        bucket = open_buckets.get(key)
        limit = _FIRST_BUCKET_BYTES if not buckets or bucket is buckets[0] else cap_bytes
        if bucket is not None and bucket.params and \
                bucket.nbytes() + p._data.nbytes > min(limit, cap_bytes):
            bucket = None
        if bucket is None:
            bucket = open_buckets[key] = _Bucket()
            buckets.append(bucket)
        bucket.params.append(p)
        bucket.names.append(name)
        bucket.offsets.append(bucket.offsets[-1] + p._data.size)
    return buckets


def _parameters_reached(outputs) -> set:
    """ids of the leaf tensors the autograd graph of ``outputs`` reaches (walked without
    recursion: graphs can be very deep)."""
    roots = [t.grad_fn for t in _tensors_in(outputs) if t.grad_fn is not None]
    found = {id(t) for t in _tensors_in(outputs) if t.grad_fn is None and t.requires_grad}
    seen = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is AccumulateGrad:
            found.add(id(node.variable))
            continue
        for edge in node._edges:
            if edge is not None:
                stack.append(edge[0])
    return found


def _tensors_in(value) -> list:
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            found.append(item)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


def _to_device(value, device):
    """Tensors anywhere in nested tuples/lists/dicts moved to ``device``."""
    if isinstance(value, Tensor):
        return value.to(device)
    if isinstance(value, tuple):
        return tuple(_to_device(v, device) for v in value)
    if isinstance(value, list):
        return [_to_device(v, device) for v in value]
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    return value


def _is_view_of(array, flat) -> bool:
    base = array.base
    return base is flat or (base is not None and base.base is flat)


def _on(device):
    if device.type == "cuda":
        return backend.cuda.device_guard(device.index)
    return contextlib.nullcontext()


def _check_device_ids(device_ids, output_device, device):
    if device.type == "cpu":
        if device_ids or output_device is not None:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device GPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters on "
                f"{device}.")
        return None
    if device_ids is None:
        return None
    ids = [backend.device(d if not isinstance(d, int) else f"cuda:{d}") for d in device_ids]
    if len(ids) != 1 or ids[0].index != device.index:
        raise ValueError(f"DistributedDataParallel: device_ids must name the one GPU the "
                         f"module is on ([{device.index}]), got {device_ids}")
    return [device.index]


def _verify_same_parameters(group, named) -> None:
    """Every rank must have built the same parameters (count, shapes, dtypes)."""
    from ...distributed._arrays import all_gather_array

    rows = np.array([[p.dim(), p.numel(), _dtype_code(p), hash(tuple(p.shape)) % (2 ** 62)]
                     for _, p in named], dtype=np.int64)
    counts = all_gather_array(group, np.array([len(named)], dtype=np.int64)).reshape(-1)
    if (counts != counts[0]).any():
        listing = ", ".join(f"rank {r}: {int(c)}" for r, c in enumerate(counts))
        raise RuntimeError("DistributedDataParallel: the ranks built different models: "
                           f"parameters that require grad per rank: {listing}. Every rank "
                           "must build the same model.")
    everyone = all_gather_array(group, rows)
    for i, (name, p) in enumerate(named):
        differing = [r for r in range(group.size()) if (everyone[r, i] != rows[i]).any()]
        if differing:
            raise RuntimeError(
                f"DistributedDataParallel: parameter '{name}' ({p.dtype} {list(p.shape)} on "
                f"rank {group.rank()}) has another shape or dtype on rank(s) {differing}. "
                "Every rank must build the same model.")


def _dtype_code(p) -> int:
    return "?bBhHiIlLqQefdgFDG".find(p._data.dtype.char) + 1 or 100 + p._data.dtype.itemsize


def _broadcast_coalesced(group, tensors, cap_bytes: int) -> None:
    """Copy rank 0's values of ``tensors`` to every rank, a few large messages at a time."""
    from ...distributed._arrays import broadcast_array

    by_kind = {}
    for t in tensors:
        by_kind.setdefault((str(t.device), t._data.dtype), []).append(t)
    for chunk in _chunks(by_kind.values(), cap_bytes):
        first = chunk[0]
        xp = backend.xp_for_device(first.device)
        with _on(first.device):
            flat = xp.concatenate([t._data.reshape(-1) for t in chunk])
        flat = broadcast_array(group, flat, 0)
        with _on(first.device):
            start = 0
            for t in chunk:
                t._data[...] = flat[start:start + t._data.size].reshape(t._data.shape)
                bump_version(t)
                start += t._data.size


def _chunks(groups, cap_bytes: int):
    for tensors in groups:
        chunk, size = [], 0
        for t in tensors:
            if chunk and size + t._data.nbytes > cap_bytes:
                yield chunk
                chunk, size = [], 0
            chunk.append(t)
            size += t._data.nbytes
        if chunk:
            yield chunk
