"""``ember.autograd.graph``: the graph's nodes and edges, and hooks on the backward pass.

>>> x = ember.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x * 2).sum()
>>> isinstance(y.grad_fn, ember.autograd.graph.Node)
True
>>> edge = ember.autograd.graph.get_gradient_edge(x)
>>> edge.node.name(), edge.output_nr
('AccumulateGrad', 0)
"""
from __future__ import annotations

import contextlib
import itertools
import threading
from typing import NamedTuple

import numpy as np

from .. import backend, detours
from ..tensor import Tensor, bump_version
from .function import Node, edge_of
from .function import saved_hooks as _hook_state

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "register_multi_grad_hook", "Node", "GradientEdge", "get_gradient_edge",
           "increment_version"]


class GradientEdge(NamedTuple):
    """Where a tensor's gradient enters the graph: ``node`` and the position
    ``output_nr`` among that node's outputs."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The gradient edge of ``tensor``: its ``grad_fn`` (its ``AccumulateGrad`` node for a
    leaf) and its output number there. ``autograd.grad`` and ``backward(inputs=...)``
    take it in place of the tensor.

    >>> x = ember.tensor([1.0], requires_grad=True)
    >>> get_gradient_edge(x * 3).node.name()
    'MulBackward0'
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that "
                           "does not require gradients")
    node, output_nr = edge_of(tensor)
    return GradientEdge(node, output_nr)


def tensors_for_edges(inputs, materialize_grads: bool = False):
    """``inputs`` of backward/grad with each GradientEdge replaced by a tensor the engine
    can target: the leaf of an AccumulateGrad edge, else a stand-in whose ``grad_fn``
    and output number are the edge's."""
    if inputs is None or not any(isinstance(i, GradientEdge) for i in inputs):
        return inputs
    if materialize_grads:
        raise RuntimeError("materialize_grads cannot be used when the given input is a "
                           "GradientEdge")
    tensors = []
    for item in inputs:
        if isinstance(item, GradientEdge):
            variable = getattr(item.node, "variable", None)
            if isinstance(variable, Tensor):
                item = variable
            else:
                stand_in = Tensor._make(np.empty((0,)), backend.CPU, True)
                stand_in.grad_fn = item.node
                stand_in._output_nr = item.output_nr
                item = stand_in
        tensors.append(item)
    return tuple(tensors)


def increment_version(tensor):
    """Mark ``tensor`` (or each tensor of an iterable) as changed in place, for changes
    made behind autograd's back (e.g. through ``.numpy()``): graphs that saved the old
    value then refuse to backward.

    >>> x = ember.tensor([1.0, 2.0])
    >>> before = x._version
    >>> increment_version(x)
    >>> x._version - before
    1
    """
    tensors = (tensor,) if isinstance(tensor, Tensor) else tuple(tensor)
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"increment_version expects Tensors, but got {type(t).__name__}")
        bump_version(t)


# ----------------------------------------------------------------- backward runs
class _Run:
    """One call of backward() or autograd.grad(): its id, roots and inputs."""

    _ids = itertools.count()

    def __init__(self, tensors, inputs):
        self.id = next(self._ids)
        self.tensors = tensors
        self.inputs = inputs
        self.executed = None  # nodes that will run, worked out when a hook first asks
        self.finish: list = []

    def will_execute(self, node) -> bool:
        if self.executed is None:
            self.executed = _nodes_to_run(self.tensors, self.inputs)
        return node in self.executed


def _nodes_to_run(tensors, inputs) -> set:
    """The nodes the engine runs for these roots: all reachable ones, or with ``inputs``
    those from which an input's node can be reached (walked without recursion)."""
    roots = [edge_of(t)[0] for t in tensors if isinstance(t, Tensor) and t.requires_grad]
    reached = set(roots)
    parents: dict = {}
    stack = list(reached)
    while stack:
        node = stack.pop()
        for edge in node._edges:
            if edge is None:
                continue
            child = edge[0]
            parents.setdefault(child, []).append(node)
            if child not in reached:
                reached.add(child)
                stack.append(child)
    if inputs is None:
        return reached
    targets = [edge_of(t)[0] for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    needed = {n for n in targets if n in reached}
    stack = list(needed)
    while stack:
        for parent in parents.get(stack.pop(), ()):
            if parent not in needed:
                needed.add(parent)
                stack.append(parent)
    return needed


class _Runs(threading.local):
    def __init__(self):
        self.stack: list = []


_runs = _Runs()
# Passes are bracketed only once a multi-gradient hook exists: plain backward calls skip it.
_bracket_runs = [False]


def begin_run(tensors, inputs=None):
    """Start bracketing one backward pass (``ember.autograd.backward`` and ``grad`` call
    it), so multi-gradient hooks can tell passes apart; None while no such hook exists."""
    if not _bracket_runs[0]:
        return None
    run = _Run(tuple(tensors), None if inputs is None else tuple(inputs))
    _runs.stack.append(run)
    return run


def end_run(run, completed: bool = True) -> None:
    """End the pass ``begin_run`` started; its hooks finish only if it completed."""
    if run is None:
        return
    _runs.stack.pop()
    if completed:
        for callback in run.finish:
            callback()


@contextlib.contextmanager
def backward_run(tensors, inputs=None):
    """``begin_run`` / ``end_run`` as a context manager."""
    run = begin_run(tensors, inputs)
    try:
        yield run
    except BaseException:
        end_run(run, completed=False)
        raise
    end_run(run)


def _current_run() -> _Run:
    if not _runs.stack:
        raise AssertionError("expected this hook to be called inside a backward call")
    return _runs.stack[-1]


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> _Handles:
    """Call ``fn`` once per backward pass for a group of tensors.

    ``mode="all"``: ``fn(grads)`` after the gradients of all the tensors this pass
    computes, with ``None`` for the tensors it does not reach. ``mode="any"``:
    ``fn(grad)`` with the first of their gradients the pass computes. Returns a handle
    whose ``remove()`` removes the hook.

    >>> a = ember.tensor(1.0, requires_grad=True)
    >>> b = ember.tensor(2.0, requires_grad=True)
    >>> seen = []
    >>> handle = register_multi_grad_hook((a, b), lambda grads: seen.append(grads))
    >>> (a * 3).backward()
    >>> seen
    [(tensor(3.), None)]
    """
    modes = ("all", "any")
    if mode not in modes:
        raise ValueError(f"Expects mode to be one of {modes} but got {mode}")
    _bracket_runs[0] = True
    tensors = tuple(tensors)
    nodes = [edge_of(t)[0] if t.requires_grad else None for t in tensors]
    lock = threading.Lock()
    pending: dict = {}  # run id -> gradients so far (all) / whether it fired (any)

    def hook_for(index: int):
        def hook(grad):
            run = _current_run()
            with lock:
                if mode == "any":
                    if run.id in pending:
                        return None
                    pending[run.id] = True
                    run.finish.append(lambda: pending.pop(run.id, None))
                    call = (grad,)
                else:
                    grads = pending.get(run.id)
                    if grads is None:
                        grads = pending[run.id] = [None] * len(tensors)
                        expected = sum(1 for n in nodes if n is not None
                                       and run.will_execute(n))
                        run.finish.append(lambda: finish(run.id))
                        grads.append(expected)  # the count rides at the end
                    grads[index] = grad
                    grads[-1] -= 1
                    if grads[-1] > 0:
                        return None
                    del pending[run.id]
                    call = (tuple(grads[:-1]),)
            fn(*call)
            return None

        return hook

    def finish(run_id):
        # a pass that ended before every expected gradient arrived (a node computed no
        # gradient for its tensor): report what it has
        grads = pending.pop(run_id, None)
        if grads is not None:
            fn(tuple(grads[:-1]))

    handles = [t.register_hook(hook_for(i)) for i, t in enumerate(tensors)]
    return _Handles(handles)


class _Handles:
    """One handle for the hooks of a multi-gradient hook."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.remove()


# ----------------------------------------------------------------- saved tensors hooks
def current_saved_tensors_hooks():
    """The innermost ``(pack_hook, unpack_hook)`` pair, or None: what a node saving a
    tensor for backward calls (``pack_hook(tensor)`` when saving, ``unpack_hook(packed)``
    when backward reads it)."""
    return _hook_state.stack[-1] if _hook_state.stack else None


class saved_tensors_hooks:
    """Context manager: a pair of hooks for the tensors the forward saves for backward,
    ``pack_hook(tensor) -> packed`` when saving and ``unpack_hook(packed) -> tensor``
    when backward reads it (``unpack_hook(pack_hook(t))`` must equal ``t`` in value,
    shape, dtype and device).

    Inside ``disable_saved_tensors_hooks(message)`` entering raises
    ``RuntimeError(message)``.

    >>> x = ember.tensor([1.0, 2.0], requires_grad=True)
    >>> packed = []
    >>> def pack(t):
    ...     packed.append(t.shape)
    ...     return t
    >>> with ember.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    ...     y = (x * x).sum()
    >>> y.backward()
    >>> packed, x.grad
    ([ember.Size([2]), ember.Size([2])], tensor([2., 4.]))
    """

    def __init__(self, pack_hook, unpack_hook) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _hook_state.disabled_message is not None:
            raise RuntimeError(_hook_state.disabled_message)
        _hook_state.stack.append((self.pack_hook, self.unpack_hook))
        detours.enter()  # the fast lane saves without hooks: send ops to apply

    def __exit__(self, *exc_info) -> None:
        _hook_state.stack.pop()
        detours.leave()


class save_on_cpu(saved_tensors_hooks):
    """Context manager: tensors saved for backward are kept on the CPU and moved back to
    their device when backward needs them (trading transfers for accelerator memory)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor):
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        self.pin_memory = pin_memory
        self.device_type = device_type
        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Context manager: entering ``saved_tensors_hooks`` (or ``save_on_cpu``) inside it
    raises ``RuntimeError(error_message)``; for features that cannot work with them.

    >>> with disable_saved_tensors_hooks("no hooks here"):
    ...     try:
    ...         with save_on_cpu():
    ...             pass
    ...     except RuntimeError as error:
    ...         print(error)
    no hooks here
    """
    if _hook_state.stack:  # hooks already on would still pack inside: refused, as in PyTorch
        raise RuntimeError(error_message)
    previous = _hook_state.disabled_message
    _hook_state.disabled_message = error_message
    try:
        yield
    finally:
        _hook_state.disabled_message = previous
