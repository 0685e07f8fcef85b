"""Graph nodes. Every op is a ``Function`` subclass whose instance is both the ``ctx`` its
forward and backward share and the ``grad_fn`` node of its outputs.

Two kinds of forward exist, one node type:
- ember's own ops (``Op``) compute on raw arrays (NumPy or CuPy, via ``ctx.xp``) and
  ``save_for_backward`` those arrays; ``apply`` maps each saved array back to the input
  or output tensor it came from, so backward sees tensors still linked into the graph
  and gradients of gradients work.
- user Functions (``ember.autograd.Function``) get and return Tensors, as in PyTorch.

A backward formula is written once, against ``ctx.math`` (see ``backward_math``): the
engine hands it raw arrays and ``ArrayMath`` when no graph of the backward is needed, and
Tensors and ``TENSOR_MATH`` under ``create_graph=True``. ``saved_tensors`` gives arrays or
Tensors to match. User Functions always get Tensors.
"""
from __future__ import annotations

import threading
import weakref
from threading import get_ident as _get_ident
from typing import Any

import numpy as _np

from .. import backend, grad_mode
from ..backend import CPU
from ..backend.cpu import number_array
from ..detours import DETOURS as _DETOURS
from ..hooks import RemovableHandle
from ..tensor import (
    UNWRITTEN,
    UNWRITTEN_INFERENCE,
    UNWRITTEN_NO_GRAD,
    Tensor,
    VersionCounter,
    bump_version,
    counter_of,
)
from ..tracing import state as _trace_state
from . import anomaly as _anomaly
from .backward_math import TENSOR_MATH, array_math

_state = grad_mode._state
_NO_GRAD = [(False,) * n for n in range(16)]
_ndarray = _np.ndarray
_new = object.__new__
_NUMPY_MATH = array_math(_np)

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class _SavedOutput:
    """An output saved by its own node. Holding the tensor would make a cycle (tensor ->
    grad_fn -> tensor), so keep its parts and rebuild a tensor linked to the node on use."""

    __slots__ = ("data", "version_counter", "version", "output_nr", "requires_grad")

    def __init__(self, tensor):
        self.data = tensor._data
        self.version_counter = counter_of(tensor)
        self.version = self.version_counter.value
        self.output_nr = tensor._output_nr
        self.requires_grad = tensor._requires_grad


class _OwnOutput(VersionCounter):
    """A fresh output saved by its own node (exp's, tanh's): the output's version counter,
    holding its array as well, so that saving it makes one object, not a counter and a
    ``_SavedOutput``. It reads as a ``_SavedOutput`` of output 0 saved at version 0."""

    __slots__ = ("data",)
    data: Any
    version = 0
    output_nr = 0
    requires_grad = True

    @property
    def version_counter(self):
        return self


_SAVED_OUTPUTS = (_SavedOutput, _OwnOutput)

# output_nr tuples of edges that all point at output 0 (the common case), shared
_ZEROS = tuple((0,) * n for n in range(16))


class _SavedHooks(threading.local):
    """The ``saved_tensors_hooks`` in effect on this thread (innermost last)."""

    def __init__(self) -> None:
        self.stack: list = []
        self.disabled_message: str | None = None


saved_hooks = _SavedHooks()


class _Packed:
    """A saved tensor handed to a pack hook; backward gets ``unpack_hook(packed)``, put
    back where the saved tensor was in the graph (as PyTorch does), so gradients of
    gradients flow to the same nodes."""

    __slots__ = ("packed", "unpack_hook", "output_nr", "grad_fn", "accumulator")

    def __init__(self, tensor, hooks, output_nr) -> None:
        pack_hook, self.unpack_hook = hooks
        self.output_nr = output_nr  # set for a node's own output (its grad_fn is the node)
        self.grad_fn = self.accumulator = None
        if output_nr is None and tensor._requires_grad:
            if tensor.grad_fn is not None:
                self.grad_fn, self.output_nr = tensor.grad_fn, tensor._output_nr
            else:
                self.accumulator = accumulator_of(tensor)
        self.packed = pack_hook(tensor)

    def unpack(self, node):
        tensor = self.unpack_hook(self.packed)
        if not isinstance(tensor, Tensor):
            raise TypeError("saved_tensors_hooks: the unpack hook must return a Tensor, got "
                            f"{type(tensor).__name__}")
        if node.math.arrays:
            return tensor
        linked = Tensor._make(tensor._data, tensor._device, False)
        if self.accumulator is not None:
            linked._requires_grad = True
            linked._accumulator = weakref.ref(self.accumulator)
        elif self.output_nr is not None:
            linked._requires_grad = True
            linked.grad_fn = self.grad_fn if self.grad_fn is not None else node
            linked._output_nr = self.output_nr
        return linked


class Node:
    """What the engine needs of a graph node: edges, a backward, hooks, a name.

    Edges are kept flat, one entry per forward argument: ``_next`` holds the node each
    gradient flows to (None where none flows) and ``_nrs`` which output of that node it is.
    Flat tuples keep the objects per node few, which keeps Python's cyclic garbage collector
    cheap on graphs of many small nodes."""

    _next: tuple = ()
    _nrs: tuple = ()
    _num_outputs = 1
    _custom = False
    _hooked = False  # set once any hook is registered
    # True where the backward formula runs on arrays when no graph of the backward is
    # recorded (written against ``ctx.math``); False: it always gets Tensors (user
    # Functions, and formulas written with Tensor methods).
    array_backward = True
    # The engine's plain case, in one read: one output, an array backward, no hooks. True
    # for ember's ops (set per class below); False for a node with hooks or several
    # outputs, for AccumulateGrad and for user Functions.
    _plain = False

    @property
    def next_functions(self) -> tuple:
        """((node, output_nr) or (None, 0)) for each tensor input, as in PyTorch."""
        return tuple(edge if edge is not None else (None, 0) for edge in self._tensor_edges())

    @property
    def _edges(self) -> tuple:
        """(node, output_nr) or None per forward argument."""
        return tuple(None if node is None else (node, nr)
                     for node, nr in zip(self._next, self._nrs))

    def _tensor_edges(self):
        return self._edges

    def name(self) -> str:
        return type(self).__name__

    @property
    def metadata(self) -> dict:
        """A dict for the user's own notes on this node, as in PyTorch."""
        return self.__dict__.setdefault("_metadata", {})

    def register_hook(self, hook):
        """``hook(grad_inputs, grad_outputs)`` runs after this node's backward; it may
        return replacement grad_inputs."""
        hooks = self.__dict__.setdefault("_post_hooks", [])
        hooks.append(hook)
        self._hooked = True
        self._plain = False
        return RemovableHandle(hooks, hook)

    def register_prehook(self, hook):
        """``hook(grad_outputs)`` runs before this node's backward; it may return
        replacement grad_outputs."""
        hooks = self.__dict__.setdefault("_pre_hooks", [])
        hooks.append(hook)
        self._hooked = True
        self._plain = False
        return RemovableHandle(hooks, hook)

    def _register_tensor_hook(self, output_nr: int, hook):
        hooks = self.__dict__.setdefault("_tensor_hooks", {}).setdefault(output_nr, [])
        if hooks and getattr(hooks[-1], "_ember_retain", False):
            hooks.insert(len(hooks) - 1, hook)  # retain_grad sees the gradient all hooks made
        else:
            hooks.append(hook)
        self._hooked = True
        self._plain = False
        return RemovableHandle(hooks, hook)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    def __init__(self, variable):
        self.variable = variable

    def _release(self) -> None:
        pass


def accumulator_of(tensor) -> AccumulateGrad:
    """A leaf's AccumulateGrad node, made once and kept while the graph holds it."""
    ref = tensor._accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._accumulator = weakref.ref(node)
    return node


def edge_of(tensor):
    """Where a gradient for ``tensor`` flows: (node, output_nr), or None."""
    if tensor.grad_fn is not None:
        return (tensor.grad_fn, tensor._output_nr)
    if tensor._requires_grad:
        return (accumulator_of(tensor), 0)
    return None


class _Freed(tuple):
    """The type of ``FREED``."""

    __slots__ = ()


# ``node._saved`` once backward has released it: empty like a node that saved nothing, but
# told apart from one (one store in the engine marks the node, and one read checks it).
FREED = _Freed()


class FunctionCtx(Node):
    """The ``ctx`` API: saving tensors, needs_input_grad, non-differentiable outputs."""

    # Flat pairs (value, version): a Tensor and its version when saved; or, with None, a
    # _SavedOutput (it keeps its own version), a constant array, or None.
    _saved: Any = ()
    _to_save = ()
    _materialize_grads = True
    _non_differentiable: tuple = ()
    _dirty = ()
    # The namespace backward computes with; the engine sets ArrayMath for array backward.
    math = TENSOR_MATH

    def save_for_backward(self, *values) -> None:
        """Keep tensors (or, in ember's own ops, arrays) for backward."""
        self._to_save = values

    def mark_non_differentiable(self, *values) -> None:
        """These outputs get no gradient (indices, masks); ``requires_grad`` is False."""
        self._non_differentiable = tuple(id(v) for v in values)

    def mark_dirty(self, *tensors) -> None:
        """Declare inputs the forward changed in place (user Functions)."""
        self._dirty = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs without a gradient."""
        self._materialize_grads = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        """The saved values, checked against in-place changes: arrays when backward runs
        on arrays, Tensors (linked into the graph) otherwise."""
        saved = self._saved
        if self.math.arrays:  # (FREED is empty: it falls through to _saved_arrays)
            if saved is NOTHING_SAVED:  # a product with a number
                return _TWO_NONES
            n = len(saved)
            if n == 2:  # one value, the common case
                item, version = saved
                if version is None:
                    if type(item) is _OwnOutput and item.value == 0:  # exp's, tanh's output
                        return (item.data,)
                elif item._version_counter.value == version:
                    return (item._data,)
                if type(item) is _SavedOutput and item.version_counter.value == item.version:
                    return (item.data,)
            elif n == 4:  # two inputs (a product of two tensors)
                a, version_a, b, version_b = saved
                if version_a is not None and version_b is not None and \
                        a._version_counter.value == version_a and \
                        b._version_counter.value == version_b:
                    return (a._data, b._data)
            elif n == 6 and saved[2] is None and saved[4] is None:
                item, version = saved[0], saved[1]  # one input, then two Nones (x ** 2)
                if version is not None and item._version_counter.value == version:
                    return (item._data, None, None)
            return _saved_arrays(self)
        return self.saved_as_tensors()

    saved_variables = saved_tensors

    def saved_as_tensors(self) -> tuple:
        """The saved values as Tensors linked into the graph, whichever way backward runs
        (what ``saved_tensors`` gives under ``create_graph=True``; ember.viz reads them)."""
        saved = self._saved
        if saved is FREED:
            raise _freed_error(self)
        out = []
        for i in range(0, len(saved), 2):
            item = saved[i]
            version = saved[i + 1]
            if version is not None and item._version_counter.value == version:
                out.append(item)  # an unchanged input: the common case
            else:
                out.append(_unpack(self, item, version))
        return tuple(out)

    def _release(self) -> None:
        self._saved = FREED


def _freed_error(node) -> RuntimeError:
    return RuntimeError(f"{SECOND_BACKWARD} (The saved values freed were those of "
                        f"{node.name()}.)")


def _saved_arrays(node) -> tuple:
    saved = node._saved
    if saved is FREED:
        raise _freed_error(node)
    out = []
    for i in range(0, len(saved), 2):
        item = saved[i]
        version = saved[i + 1]
        if version is not None:  # a Tensor
            if item._version_counter.value != version:
                _unpack(node, item, version)  # raises, naming the op and the versions
            out.append(item._data)
        elif type(item) in _SAVED_OUTPUTS:
            if item.version_counter.value != item.version:
                _unpack(node, item, None)
            out.append(item.data)
        elif type(item) is _Packed:
            out.append(item.unpack(node)._data)
        else:  # None, or a constant array made by forward
            out.append(item)
    return tuple(out)


def _unpack(node, item, version):
    if item is None:
        return None
    if type(item) is _Packed:
        return item.unpack(node)
    if type(item) in _SAVED_OUTPUTS:
        if item.version_counter.value != item.version:
            _raise_modified(node, item.data.shape, item.data.dtype, item.output_nr,
                            item.version_counter.value, item.version)
        tensor = Tensor._make(item.data, node._device, item.requires_grad)
        tensor._version_counter = item.version_counter
        if item.requires_grad:
            tensor.grad_fn = node
            tensor._output_nr = item.output_nr
        return tensor
    if version is None:  # a constant array made by forward
        return Tensor._make(item, node._device, False)
    tensor = item
    if tensor._version_counter.value != version:
        _raise_modified(node, tensor.shape, tensor.dtype, None,
                        tensor._version_counter.value, version, tensor)
    return tensor


def _raise_modified(node, shape, dtype, output_nr, now, expected, tensor=None):
    where = f"output {output_nr} of {node.name()}" if output_nr is not None else (
        f"output {tensor._output_nr} of {tensor.grad_fn.name()}" if tensor is not None
        and tensor.grad_fn is not None else "a leaf tensor")
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{getattr(dtype, 'name', dtype)} {list(shape)}], which is {where}, "
        f"is at version {now}; expected version {expected} instead. Hint: the backward of "
        f"{node.name()} needs the value from before the in-place change; use an out-of-place "
        "op (x = x.add(1) rather than x.add_(1)) or .clone() the tensor first."
    )


def _check_devices(op_name: str, tensors) -> object:
    """The common device of an op's tensors; 0-d CPU tensors may join a CUDA op."""
    device = None
    for t in tensors:
        d = t._device
        if d is device or (d is CPU and t._data.ndim == 0 and device is not None):
            continue
        if device is None or (device is CPU and d is not CPU and _only_scalars(tensors, d)):
            device = d
            continue
        if d == device:
            continue
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            f"{device} and {d}! (in {op_name}; move them with .to(device) first)"
        )
    return device


def _only_scalars(tensors, gpu_device) -> bool:
    # CPU so far came only from 0-d tensors, which may follow a CUDA tensor.
    return all(t._device is not CPU or t._data.ndim == 0 for t in tensors)


class Function(FunctionCtx):
    """Base of every op. Subclasses define ``forward(ctx, ...)`` and ``backward(ctx, ...)``
    as static methods and are called through ``apply``.

    ``backward`` gets one gradient per output and returns one gradient (or None) per
    positional argument of ``forward``.
    """

    # ember's own ops compute on arrays; user Functions (ember.autograd.Function) on Tensors.
    _array_forward = True
    array_backward = False
    # Outputs that are views of input 0 share its memory and version counter.
    is_view = False
    # The PyTorch node name, e.g. 'AddBackward0'; defaults to '<Class>Backward0'.
    node_name = None
    # False for ops whose outputs never carry gradients (comparisons, floor_divide).
    differentiable = True
    # The public name, for error messages ('add'); set by the registry.
    op_name = None
    # Binary arithmetic whose Python-number second operand PyTorch takes as a (wrapped)
    # tensor input: ``next_functions`` lists an edge (None, 0) for it.
    number_operands = False
    # A view op whose result is always a view even when NumPy reports no base.
    always_view = False
    # Set in forward when outputs land on another device (``to``).
    out_device = None
    # The array module forward computes with; NumPy unless the op runs on a GPU.
    xp = _np
    # True while the op is being recorded for backward: forward may skip saving otherwise.
    _recording = False
    # The device the op ran on, and per argument True/False (a tensor that needs / does not
    # need a gradient) or None (not a tensor); the fast lane leaves both at these defaults
    # (its ops run on the CPU, and ``needs_input_grad`` is the same list).
    _device = CPU
    _needs = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._plain = cls.array_backward
        # The namespace backward computes with: for an op with array formulas NumPy's, so
        # the engine sets nothing on a CPU node (it sets CuPy's on a GPU node and
        # TENSOR_MATH under create_graph=True, and removes what it set afterwards).
        if "math" not in cls.__dict__:  # (a class may name its own, as the compiler's do)
            cls.math = _NUMPY_MATH if cls.array_backward else TENSOR_MATH

    def name(self) -> str:
        return self.node_name or type(self).__name__ + "Backward0"

    def _tensor_edges(self):
        needs = self._needs if self._needs is not None else self.needs_input_grad
        if self.number_operands and len(needs) == 2 and needs[0] is not None:
            return list(self._edges)  # ``x * 2``: PyTorch's wrapped number has an edge
        return [edge for edge, need in zip(self._edges, needs) if need is not None]

    @classmethod
    def apply(cls, *args, **kwargs):
        tracer = _trace_state.tracer
        if tracer is not None and tracer.thread == _get_ident():  # ember.compile records
            return tracer.record_apply(cls, args, kwargs)
        n = len(args)
        first = args[0] if n else None
        if isinstance(first, Tensor) and first._device is CPU and cls._array_forward:
            # The common cases, without the argument loop: one CPU tensor (and maybe a
            # Python number), or two CPU tensors.
            if n == 1 or n == 2 and type(args[1]) in _PLAIN:
                return _apply_one(cls, first, args, kwargs)
            if n == 2 and isinstance(args[1], Tensor) and args[1]._device is CPU:
                return _apply_two(cls, first, args[1], kwargs)
        # One pass over the arguments: arrays for forward, the device, and (when recording)
        # the graph edges and needs_input_grad.
        ctx = object.__new__(cls)
        arrays = []
        device = None
        if cls.differentiable and _state.enabled:
            nexts = []
            nrs = []
            needs = []  # True/False per tensor argument, None for other arguments
            cut = None
            for a in args:
                if isinstance(a, Tensor):
                    if a._device is not device:
                        if device is not None:
                            return _apply_across_devices(cls, ctx, args, kwargs)
                        device = a._device
                    arrays.append(a._data)
                    if a._requires_grad:
                        grad_fn = a.grad_fn
                        if grad_fn is not None:
                            nexts.append(grad_fn)
                            nrs.append(a._output_nr)
                        else:
                            nexts.append(accumulator_of(a))
                            nrs.append(0)
                        needs.append(True)
                    else:
                        nexts.append(None)
                        nrs.append(0)
                        needs.append(False)
                        if a._cut is not None or a._version_counter.no_grad:
                            cut = a._cut or "no_grad"
                else:
                    arrays.append(a)
                    nexts.append(None)
                    nrs.append(0)
                    needs.append(None)
            if True in needs:
                ctx._next = tuple(nexts)
                ctx._nrs = _flat_nrs(nrs)
                ctx._needs = needs
                ctx.needs_input_grad = needs if cls._array_forward else tuple(
                    n is True for n in needs)
                requires_grad = True
            else:
                requires_grad = False
                if cut is not None:  # computed from a detached / no_grad tensor: say so
                    ctx.needs_input_grad = _NO_GRAD[len(args)] if len(args) < 16 else \
                        (False,) * len(args)
                    return _inherit_cut(cut, _run_forward(cls, ctx, args, arrays, kwargs,
                                                          device, False))
        else:
            for a in args:
                if isinstance(a, Tensor):
                    if a._device is not device:
                        if device is not None:
                            return _apply_across_devices(cls, ctx, args, kwargs)
                        device = a._device
                    arrays.append(a._data)
                else:
                    arrays.append(a)
            requires_grad = False
        if device is None:
            raise TypeError(f"{cls.__name__}.apply needs at least one Tensor argument")
        if not requires_grad:
            ctx.needs_input_grad = _NO_GRAD[len(args)] if len(args) < 16 else \
                (False,) * len(args)
        if device is not CPU or not cls._array_forward or _anomaly._flag.enabled:
            return _run_forward(cls, ctx, args, arrays, kwargs, device, requires_grad)
        # The common case, inline: a CPU op on arrays (ctx.xp is NumPy by default).
        if requires_grad:
            ctx._device = device
            ctx._recording = True
        result = cls.forward(ctx, *arrays, **kwargs)
        if type(result) is tuple or cls.is_view or ctx.out_device is not None:
            ctx._device = device
            return _wrap_outputs(cls, ctx, args, arrays, result, requires_grad)
        original = result
        if type(result) is not _ndarray:
            result = _np.asarray(result)
        out = Tensor._make(result, device, False)
        if requires_grad and result.dtype.kind in "fV" and id(result) not in \
                ctx._non_differentiable:
            out._requires_grad = True
            out.grad_fn = ctx
            if ctx._to_save:
                ctx._saved = _resolve_saved(ctx._to_save, arrays, args, (original,), (out,))
                ctx._to_save = ()
        return out

    def _run_backward(self, grads):
        """Called by the engine with one gradient per output."""
        if self._num_outputs > 1 and self._materialize_grads:
            grads = _materialize(self, grads)
        result = type(self).backward(self, *grads)
        if type(result) is not tuple:
            result = (result,)
        if len(result) != len(self._next):
            result = _fit_gradients(self, result)
        return result


_PLAIN = (float, int, bool)


def _flat_nrs(nrs) -> tuple:
    """The output_nr tuple, shared when every edge points at output 0."""
    n = len(nrs)
    return _ZEROS[n] if n < 16 and not any(nrs) else tuple(nrs)


def _link_first(ctx, tensor, tail) -> None:
    """The edges of a recorded op whose only graph input is its first argument (``tail``:
    None for each further argument)."""
    grad_fn = tensor.grad_fn
    if grad_fn is None:
        ctx._next = (accumulator_of(tensor),) + tail
        ctx._nrs = _ZEROS[1 + len(tail)]
    else:
        ctx._next = (grad_fn,) + tail
        nr = tensor._output_nr
        ctx._nrs = (nr,) + _ZEROS[len(tail)] if nr else _ZEROS[1 + len(tail)]


def _link_two(ctx, a, need_a, b, need_b) -> None:
    """The edges of a recorded op on two arguments, ``need_*``: that one requires grad."""
    next_a = next_b = None
    nr_a = nr_b = 0
    if need_a:
        next_a = a.grad_fn
        if next_a is None:  # a leaf: its node, made once (accumulator_of's lookup, inlined)
            ref = a._accumulator
            next_a = ref() if ref is not None else None
            if next_a is None:
                next_a = accumulator_of(a)
        else:
            nr_a = a._output_nr
    if need_b:
        next_b = b.grad_fn
        if next_b is None:
            ref = b._accumulator
            next_b = ref() if ref is not None else None
            if next_b is None:
                next_b = accumulator_of(b)
        else:
            nr_b = b._output_nr
    ctx._next = (next_a, next_b)
    ctx._nrs = (nr_a, nr_b) if nr_a or nr_b else _ZEROS[2]


_TAILS = ((), (None,), (None, None), (None, None, None))


def _apply_one(cls, tensor, args, kwargs):
    ctx = _new(cls)
    recording = tensor._requires_grad and cls.differentiable and _state.enabled
    if recording:
        _link_first(ctx, tensor, _TAILS[len(args) - 1])
        ctx.needs_input_grad = _NEEDS_FIRST[len(args) - 1]
        ctx._recording = True
    else:
        ctx.needs_input_grad = _NO_GRAD[len(args)]
        if _state.enabled and (tensor._cut is not None or tensor._version_counter.no_grad):
            arrays = [tensor._data] + list(args[1:])
            return _inherit_cut(tensor._cut or "no_grad",
                                _run_forward(cls, ctx, args, arrays, kwargs, CPU, False))
    if _anomaly._flag.enabled:
        arrays = [tensor._data] + list(args[1:])
        return _run_forward(cls, ctx, args, arrays, kwargs, CPU, recording)
    data = tensor._data
    result = cls.forward(ctx, data, *args[1:], **kwargs) if len(args) == 1 or kwargs else \
        cls.forward(ctx, data, args[1])
    if type(result) is tuple or cls.is_view or ctx.out_device is not None:
        ctx._device = CPU
        return _wrap_outputs(cls, ctx, args, [data] + list(args[1:]), result, recording)
    original = result
    if type(result) is not _ndarray:
        result = _np.asarray(result)
    out = Tensor._make(result, CPU, False)
    if recording and result.dtype.kind in "fV" and id(result) not in ctx._non_differentiable:
        out._requires_grad = True
        out.grad_fn = ctx
        if ctx._to_save:
            ctx._saved = _resolve_saved_one(ctx._to_save, data, tensor, original, out)
            ctx._to_save = ()
    return out


# needs_input_grad of a recorded op whose only tensor is its first argument
_NEEDS_FIRST = ((True,), (True, None))
# ... of a recorded op on two tensors, by which of them require grad
_NEEDS_BOTH, _NEEDS_A, _NEEDS_SECOND = (True, True), (True, False), (False, True)
_NEEDS_TWO = {(True, True): _NEEDS_BOTH, (True, False): _NEEDS_A, (False, True): _NEEDS_SECOND}


def _apply_two(cls, a, b, kwargs):
    ctx = _new(cls)
    need_a, need_b = a._requires_grad, b._requires_grad
    recording = (need_a or need_b) and cls.differentiable and _state.enabled
    if recording:
        _link_two(ctx, a, need_a, b, need_b)
        ctx.needs_input_grad = _NEEDS_TWO[(need_a, need_b)]
        ctx._recording = True
    else:
        ctx.needs_input_grad = _NO_GRAD[2]
    if _anomaly._flag.enabled:
        return _run_forward(cls, ctx, (a, b), [a._data, b._data], kwargs, CPU, recording)
    x, y = a._data, b._data
    result = cls.forward(ctx, x, y, **kwargs) if kwargs else cls.forward(ctx, x, y)
    if type(result) is tuple or cls.is_view or ctx.out_device is not None:
        ctx._device = CPU
        return _wrap_outputs(cls, ctx, (a, b), [x, y], result, recording)
    original = result
    if type(result) is not _ndarray:
        result = _np.asarray(result)
    out = Tensor._make(result, CPU, False)
    if recording and result.dtype.kind in "fV" and id(result) not in ctx._non_differentiable:
        out._requires_grad = True
        out.grad_fn = ctx
        if ctx._to_save:
            ctx._saved = _resolve_saved_two(ctx._to_save, x, y, a, b, original, out)
            ctx._to_save = ()
    return out


# ----------------------------------------------------------------------------- the fast lane
# An op's Tensor methods and operators can skip the public function's argument handling and
# ``apply``'s generality when the call is the plain case: CPU float tensors, no autocast,
# no anomaly mode, no ember.compile recording, no saved-tensor hooks. The lane then does
# exactly what ``apply`` would (the op's own ``forward``, the same node, edges and saved
# values) in one frame; anything else goes to the op's public function, unchanged.
_MISSING = object()


def fast_lane(kind: str, cls, slow, kernel=None):
    """The op's method for the plain case, falling back to ``slow`` (its public function).

    kind 'unary': ``slow(input)`` is ``cls.apply(input)`` for a float CPU tensor;
    'binary': ``slow(input, other)`` is ``cls.apply(input, other)`` when input is a float
    CPU tensor and other a Python float/int or a CPU tensor of the same dtype;
    'reflected': the swapped operator, ``slow(self, number)`` (``__rmul__``: ``2 * x``) is
    ``cls.apply(number, self)`` for a float CPU tensor and a Python float/int;
    'reduction': ``slow(input)`` is ``cls.apply(input, all_dims, False, input's dtype)``
    for a float CPU tensor (sum, mean).

    kernel (unary and binary): the NumPy function whose result the op's forward returns,
    given the forward's arrays (a Python float operand as ``number_array``, as the forwards
    take it). A call that records nothing then runs it directly: the forward's frame and
    its saving, which only a recorded call needs, cost as much as the ufunc itself on a
    small array. tests/autograd/test_fast_lane.py checks each kernel against the forward."""
    if cls.is_view:
        raise ValueError(f"fast_lane: {cls.__name__} makes views; apply links them")
    if kernel is not None and kind not in ("unary", "binary"):
        raise ValueError(f"fast_lane: a kernel is for unary and binary ops, not {kind!r}")
    if kind == "unary" or kind == "reduction":
        return _fast_unary(cls, slow, kind == "reduction", kernel)
    if kind == "binary":
        return _fast_binary(cls, slow, kernel)
    if kind == "reflected":
        return _fast_reflected(cls, slow)
    raise ValueError(f"fast_lane: unknown kind {kind!r}")


def _lane_out(result, grad_fn):
    """A lane op's output tensor with grad mode on: linked to ``grad_fn`` when the op was
    recorded (a lane's op maps float inputs to a float output and marks nothing
    non-differentiable, so that output always requires grad;
    tests/autograd/test_fast_lane.py checks each op against apply), else a plain tensor."""
    if type(result) is not _ndarray:
        result = _np.asarray(result)
    out = _new(Tensor)
    out._data = result
    out._device = CPU
    out._requires_grad = grad_fn is not None
    out.grad_fn = grad_fn
    out._version_counter = UNWRITTEN
    return out


def _idle_out(result):
    """A lane op's output under no_grad or inference mode (with that mode's counter, as
    ``Tensor._make``)."""
    if type(result) is not _ndarray:
        result = _np.asarray(result)
    out = _new(Tensor)
    out._data = result
    out._device = CPU
    out._requires_grad = False
    out.grad_fn = None
    out._version_counter = UNWRITTEN_INFERENCE if _state.inference else UNWRITTEN_NO_GRAD
    return out


def _idle_kernel(cls, needs, reduction=False):
    """For an op without a NumPy kernel: its forward on one shared ctx per op, never a
    graph node, so that a call recording nothing makes none. (Such a forward only writes
    to its ctx; what it keeps for backward is dropped after each call.)"""
    forward = cls.forward
    ctx = _new(cls)
    ctx.needs_input_grad = needs

    def reduction_kernel(data):
        result = forward(ctx, data, _ALL_DIMS[data.ndim], False, data.dtype)
        ctx._to_save = ()
        return result

    def unary_kernel(data):
        result = forward(ctx, data)
        ctx._to_save = ()
        return result

    def binary_kernel(data, other):
        result = forward(ctx, data, other)
        ctx._to_save = ()
        return result

    if reduction:
        return reduction_kernel
    return unary_kernel if len(needs) == 1 else binary_kernel


_ALL_DIMS = tuple(tuple(range(n)) for n in range(33))


def _fast_unary(cls, slow, reduction, kernel):
    forward = cls.forward
    needs = (True, None, None, None) if reduction else _NEEDS_FIRST[0]
    tail = (None, None, None) if reduction else ()
    nrs, tail_nrs = _ZEROS[1 + len(tail)], _ZEROS[len(tail)]
    if kernel is None:
        kernel = _idle_kernel(cls, _NO_GRAD[len(needs)], reduction)

    def lane(input=_MISSING, /, *args, **kwargs):
        if type(input) is Tensor and not args and not kwargs and input._device is CPU and \
                not _DETOURS.count:
            data = input._data
            if data.dtype.kind in "fV" and (not reduction or data.ndim <= 32):
                if not _state.enabled:
                    return _idle_out(kernel(data))
                if input._requires_grad:
                    # (_link_first and _lane_out, inlined: the lane is the hot path)
                    ctx = _new(cls)
                    grad_fn = input.grad_fn
                    if grad_fn is None:
                        ctx._next = (accumulator_of(input),) + tail
                        ctx._nrs = nrs
                    else:
                        ctx._next = (grad_fn,) + tail
                        nr = input._output_nr
                        ctx._nrs = (nr,) + tail_nrs if nr else nrs
                    ctx.needs_input_grad = needs
                    ctx._recording = True
                    original = forward(ctx, data, _ALL_DIMS[data.ndim], False, data.dtype) \
                        if reduction else forward(ctx, data)
                    result = original if type(original) is _ndarray else _np.asarray(original)
                    out = _new(Tensor)
                    out._data = result
                    out._device = CPU
                    out._requires_grad = True
                    out.grad_fn = ctx
                    out._version_counter = UNWRITTEN
                    saved = ctx._to_save
                    if saved:
                        ctx._saved = _resolve_saved_one(saved, data, input, original, out)
                        ctx._to_save = ()
                    return out
                elif input._cut is None and not input._version_counter.no_grad:
                    return _lane_out(kernel(data), None)
        if input is _MISSING:
            return slow(*args, **kwargs)
        return slow(input, *args, **kwargs)

    return lane


def _fast_binary(cls, slow, kernel):
    forward = cls.forward
    needs_first = _NEEDS_FIRST[1]
    if kernel is None:
        kernel = _idle_kernel(cls, _NO_GRAD[2])

    def lane(input=_MISSING, other=_MISSING, /, *args, **kwargs):
        if type(input) is Tensor and not args and not kwargs and input._device is CPU and \
                not _DETOURS.count:
            data = input._data
            kind = type(other)
            if kind is Tensor:
                y = other._data
                plain = y.dtype is data.dtype and other._device is CPU and \
                    data.dtype.kind in "fV"
                need_b = other._requires_grad
            else:
                y = other
                plain = (kind is float or kind is int) and data.dtype.kind in "fV"
                need_b = False
            if plain:
                need_a = input._requires_grad
                if not _state.enabled:
                    try:
                        return _idle_out(kernel(data, number_array(y, data) if kind is float
                                                else y))
                    except ValueError:  # no broadcast: the public function says so
                        return slow(input, other)
                if need_a or need_b:
                    ctx = _new(cls)
                    if kind is Tensor:
                        _link_two(ctx, input, need_a, other, need_b)
                        ctx.needs_input_grad = _NEEDS_SECOND if not need_a else \
                            _NEEDS_BOTH if need_b else _NEEDS_A
                    else:  # (_link_first, inlined: tensor and number is the hot path)
                        grad_fn = input.grad_fn
                        if grad_fn is None:
                            ctx._next = (accumulator_of(input), None)
                            ctx._nrs = _ZEROS[2]
                        else:
                            ctx._next = (grad_fn, None)
                            nr = input._output_nr
                            ctx._nrs = (nr, 0) if nr else _ZEROS[2]
                        ctx.needs_input_grad = needs_first
                    ctx._recording = True
                    try:
                        original = forward(ctx, data, y)
                    except ValueError:
                        return slow(input, other)
                    result = original if type(original) is _ndarray else _np.asarray(original)
                    out = _new(Tensor)  # (_lane_out, inlined)
                    out._data = result
                    out._device = CPU
                    out._requires_grad = True
                    out.grad_fn = ctx
                    out._version_counter = UNWRITTEN
                    saved = ctx._to_save
                    if saved:
                        ctx._saved = _resolve_saved_two(
                            saved, data, y, input, other, original, out) if \
                            kind is Tensor else _resolve_saved_one(
                                saved, data, input, original, out)
                        ctx._to_save = ()
                    return out
                elif input._cut is None and not input._version_counter.no_grad and (
                        kind is not Tensor or other._cut is None and
                        not other._version_counter.no_grad):
                    try:
                        return _lane_out(kernel(data, number_array(y, data) if kind is float
                                                else y), None)
                    except ValueError:
                        return slow(input, other)
        given = tuple(a for a in (input, other) if a is not _MISSING)
        return slow(*given, *args, **kwargs)

    return lane


def _fast_reflected(cls, slow):
    """``number <op> tensor`` (``2 * x``, ``1 - x``): ``cls.apply(number, tensor)``."""
    forward = cls.forward
    needs = (None, True)
    kernel = _idle_kernel(cls, _NO_GRAD[2])

    def lane(self, other):
        kind = type(other)
        if (kind is float or kind is int) and type(self) is Tensor and \
                self._device is CPU and not _DETOURS.count:
            data = self._data
            if data.dtype.kind in "fV":
                if not _state.enabled:
                    return _idle_out(kernel(other, data))
                if self._requires_grad:
                    ctx = _new(cls)
                    _link_two(ctx, other, False, self, True)
                    ctx.needs_input_grad = needs
                    ctx._recording = True
                    original = forward(ctx, other, data)
                    out = _lane_out(original, ctx)
                    saved = ctx._to_save
                    if saved:
                        ctx._saved = _resolve_saved(saved, (other, data), (other, self),
                                                    (original,), (out,))
                        ctx._to_save = ()
                    return out
                elif self._cut is None and not self._version_counter.no_grad:
                    return _lane_out(kernel(other, data), None)
        return slow(self, other)

    return lane


def _inherit_cut(cut, result):
    """Results of an op on a detached or no_grad tensor remember why they have no graph."""
    for out in result if type(result) is tuple else (result,):
        if type(out) is Tensor and not out._requires_grad:
            out._cut = cut
    return result


def _fit_gradients(node, result):
    edges = len(node._next)
    if len(result) > edges and all(r is None for r in result[edges:]):
        return result[:edges]
    raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                       f"(expected {edges}, got {len(result)})")


def _apply_across_devices(cls, ctx, args, kwargs):
    """The slow path: tensors on several devices (0-d CPU tensors may join a CUDA op)."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    device = _check_devices(cls.op_name or cls.__name__, tensors)
    arrays = [_on(a, device) if isinstance(a, Tensor) else a for a in args]
    requires_grad = cls.differentiable and _state.enabled and any(
        t._requires_grad for t in tensors)
    needs = [(a._requires_grad and requires_grad) if isinstance(a, Tensor) else None
             for a in args]
    if requires_grad:
        ctx._next, ctx._nrs = _edges(args)
        ctx._needs = needs
    ctx.needs_input_grad = needs if cls._array_forward else tuple(n is True for n in needs)
    return _run_forward(cls, ctx, args, arrays, kwargs, device, requires_grad)


def _run_forward(cls, ctx, args, arrays, kwargs, device, requires_grad):
    ctx._device = device
    ctx._recording = requires_grad
    if _anomaly._flag.enabled:
        _anomaly.record_stack(ctx)
    if not cls._array_forward:
        ctx.xp = backend.xp_for_device(device)
        tensors = [a for a in args if isinstance(a, Tensor)]
        return _apply_tensor_forward(cls, ctx, args, kwargs, tensors, requires_grad)
    if device is CPU:
        ctx.xp = _np
        result = cls.forward(ctx, *arrays, **kwargs)
    else:
        ctx.xp = backend.xp_for_device(device)
        with backend.cuda.device_guard(device.index):
            result = cls.forward(ctx, *arrays, **kwargs)
    return _wrap_outputs(cls, ctx, args, arrays, result, requires_grad)


def _on(tensor, device):
    if tensor._device is device:
        return tensor._data
    return backend.move(tensor._data, tensor._device, device)


def _materialize(node, grads, arrays: bool = False):
    """Zeros for the outputs that got no gradient (arrays, or Tensors)."""
    if all(g is not None for g in grads):  # (``None in`` would compare arrays)
        return grads
    out = list(grads)
    for i, g in enumerate(out):
        if g is None:
            shape, dt = node._output_meta[i]
            if dt is None:  # a non-tensor output of a user Function gets None
                continue
            if node._device is CPU:
                zeros = _np.zeros(shape, dt.numpy)
            else:
                with backend.cuda.device_guard(node._device.index):
                    zeros = node.xp.zeros(shape, dt.numpy)
            out[i] = zeros if arrays else Tensor._make(zeros, node._device, False)
    return out


def _wrap_outputs(cls, ctx, args, arrays, result, requires_grad):
    out_device = ctx.out_device
    device = out_device or ctx._device
    xp = ctx.xp if out_device is None else backend.xp_for_device(device)
    ndarray = xp.ndarray
    make = Tensor._make
    non_diff = ctx._non_differentiable
    if type(result) is not tuple:  # the common case: one output
        original = result  # NumPy gives scalars for 0-d results; forward may have saved one
        if type(result) is not ndarray:
            result = xp.asarray(result)
        differentiable = requires_grad and result.dtype.kind in "fV" and id(result) not in non_diff
        out = make(result, device, differentiable)
        if differentiable:
            out.grad_fn = ctx
        if cls.is_view:
            _link_view(cls, args, out, args[0])
        if requires_grad and ctx._to_save:
            ctx._saved = _resolve_saved(ctx._to_save, arrays, args, (original,), (out,))
            ctx._to_save = ()
        return out
    wrapped = []
    outputs = []
    for nr, array in enumerate(result):
        outputs.append(array)
        if type(array) is not ndarray:
            array = xp.asarray(array)
        differentiable = requires_grad and array.dtype.kind in "fV" and id(array) not in non_diff
        t = make(array, device, differentiable)
        if differentiable:
            t.grad_fn = ctx
            t._output_nr = nr
        wrapped.append(t)
    if cls.is_view:
        _link_view(cls, args, wrapped, args[0])
    if requires_grad:
        ctx._num_outputs = len(outputs)
        if len(outputs) != 1:
            ctx._plain = False
        ctx._output_meta = [(t._data.shape, t.dtype) for t in wrapped]
        if ctx._to_save:
            ctx._saved = _resolve_saved(ctx._to_save, arrays, args, outputs, wrapped)
            ctx._to_save = ()
    return tuple(wrapped)


def _edges(args):
    """(_next, _nrs) for the arguments of an op."""
    nexts, nrs = [], []
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad:
            if a.grad_fn is not None:
                nexts.append(a.grad_fn)
                nrs.append(a._output_nr)
            else:
                nexts.append(accumulator_of(a))
                nrs.append(0)
        else:
            nexts.append(None)
            nrs.append(0)
    return tuple(nexts), _flat_nrs(nrs)


INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd (it was made under "
    "ember.inference_mode()); make a clone to get a normal tensor and use that instead, or "
    "create it under ember.no_grad().")


def _version_to_save(tensor):
    """The version a saved tensor is checked against in backward; inference tensors keep no
    version, so they cannot be saved (as in PyTorch)."""
    counter = tensor._version_counter
    if counter.inference:
        raise RuntimeError(INFERENCE_SAVED)
    return counter.value


def _resolve_saved(values, arrays, args, outputs, wrapped):
    """Flat (value, version) pairs for what forward saved (see ``FunctionCtx._saved``)."""
    hooks = saved_hooks.stack[-1] if saved_hooks.stack else None
    saved = []
    for v in values:
        if v is None:
            saved += (None, None)
            continue
        for a, arg in zip(arrays, args):
            if v is a and isinstance(arg, Tensor):
                if hooks is not None:
                    saved += (_Packed(arg, hooks, None), None)
                else:
                    saved += (arg, _version_to_save(arg))
                break
        else:
            for nr, (out, t) in enumerate(zip(outputs, wrapped)):
                if v is out:
                    if hooks is not None:
                        saved += (_Packed(t, hooks, nr), None)
                    else:
                        saved += (_SavedOutput(t), None)
                    break
            else:  # an array made inside forward (a mask, indices): a constant
                if isinstance(v, Tensor):
                    saved += (v, _version_to_save(v))
                else:
                    saved += (v, None)
    return tuple(saved)


# ``_saved`` of a node on two operands that keeps neither (a product with a number: the
# number is all its backward needs); a forward may set it itself, skipping the saving
NOTHING_SAVED = (None, None, None, None)
_TWO_NONES = (None, None)


def _resolve_saved_one(values, data, tensor, original, out):
    """``_resolve_saved`` for an op with one tensor argument and one output."""
    if _DETOURS.count and saved_hooks.stack:  # (hooks count as a detour: one cheap read)
        return _resolve_saved(values, (data,), (tensor,), (original,), (out,))
    if len(values) == 1:
        v = values[0]
        if v is data:
            counter = tensor._version_counter
            if counter.inference:
                raise RuntimeError(INFERENCE_SAVED)
            return (tensor, counter.value)
        if v is original:  # the new output: saved as its own counter
            saved = _new(_OwnOutput)  # (without an __init__ call)
            saved.value = 0
            saved.data = out._data
            # (out is this call's new tensor, seen by no other thread: no lock needed)
            out._version_counter = saved
            return (saved, None)
    elif len(values) == 2 and values[0] is None and values[1] is None:
        return NOTHING_SAVED  # a product with a number: the number is all backward needs
    elif len(values) == 3 and values[0] is data and values[1] is None and values[2] is None:
        counter = tensor._version_counter  # tensor ** number: the base alone
        if counter.inference:
            raise RuntimeError(INFERENCE_SAVED)
        return (tensor, counter.value, None, None, None, None)
    saved = []
    for v in values:
        if v is data:
            saved += (tensor, _version_to_save(tensor))
        elif v is None:
            saved += (None, None)
        elif v is original:
            saved += (_SavedOutput(out), None)
        elif isinstance(v, Tensor):
            saved += (v, _version_to_save(v))
        else:  # an array made inside forward: a constant
            saved += (v, None)
    return tuple(saved)


def _resolve_saved_two(values, x, y, a, b, original, out):
    """``_resolve_saved`` for an op with two tensor arguments and one output."""
    if len(values) == 2 and values[0] is x and values[1] is y and \
            not (_DETOURS.count and saved_hooks.stack):
        counter_a, counter_b = a._version_counter, b._version_counter
        if counter_a.inference or counter_b.inference:
            raise RuntimeError(INFERENCE_SAVED)
        return (a, counter_a.value, b, counter_b.value)
    return _resolve_saved(values, (x, y), (a, b), (original,), (out,))


def _link_view(cls, args, outputs, base_input):
    """Views share the base's memory and version counter, and remember how to redo the view
    from the base (for in-place changes through the view)."""
    base = base_input._base if base_input._base is not None else base_input
    chain = base_input._view_chain if base_input._base is not None else ()
    for i, t in enumerate(outputs if isinstance(outputs, list) else [outputs]):
        if t._data.base is None and not cls.always_view:
            continue  # NumPy had to copy (e.g. reshape of a non-contiguous array)
        t._base = base
        t._version_counter = counter_of(base)
        t._view_chain = chain + ((cls, args[1:], i if isinstance(outputs, list) else None),)
        if not _state.enabled:
            if base_input._requires_grad:
                # as in PyTorch: a view made under no_grad of a tensor that requires grad
                # does too (a leaf), so an in-place change of it with grad mode on is refused
                t._requires_grad = True
        elif base.grad_fn is not None or not base._requires_grad:
            # an in-place change of the base (or of another of its views) must reach this
            # view's graph too (apply_inplace replays it); a leaf that requires grad takes
            # no in-place change with grad mode on, so its views need no such care
            views = base._views
            if views is None:
                views = base._views = weakref.WeakSet()
            views.add(t)


def _apply_tensor_forward(cls, ctx, args, kwargs, tensors, requires_grad):
    """User Functions: forward gets Tensors under no_grad and returns Tensors."""

    with grad_mode.no_grad():
        result = cls.forward(ctx, *args, **kwargs)
    multiple = isinstance(result, tuple)
    outputs = result if multiple else (result,)
    non_diff = ctx._non_differentiable
    dirty = {id(t) for t in ctx._dirty}
    input_ids = {id(t) for t in tensors}
    # before the outputs take ctx as grad_fn: a dirty input must point at its old node
    edges = _edges(args) if requires_grad else None
    wrapped = []
    for nr, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            wrapped.append(out)
            continue
        if id(out) in input_ids and id(out) not in dirty:
            out = out.detach()  # returning an input as-is: a new tensor, as PyTorch does (view)
        elif id(out) in dirty:
            bump_version(out)
        differentiable = requires_grad and out.dtype.is_floating_point and id(out) not in non_diff
        out._requires_grad = differentiable
        if differentiable:
            out.grad_fn = ctx
            out._output_nr = nr
        wrapped.append(out)
    if requires_grad:
        ctx._next, ctx._nrs = edges
        ctx._input_meta = [(a.shape, a.dtype) if isinstance(a, Tensor) else None for a in args]
        ctx._num_outputs = len(outputs)
        if len(outputs) != 1:
            ctx._plain = False
        ctx._output_meta = [(o._data.shape, o.dtype) if isinstance(o, Tensor) else ((), None)
                            for o in wrapped]
        hooks = saved_hooks.stack[-1] if saved_hooks.stack else None
        saved = []
        for i, v in enumerate(ctx._to_save):
            if v is None:
                saved += (None, None)
            elif not isinstance(v, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(v).__name__} (keep non-tensors as "
                                "attributes on ctx, e.g. ctx.k = k)")
            elif any(v is o for o in wrapped) and v.grad_fn is ctx:
                saved += (_Packed(v, hooks, v._output_nr) if hooks is not None
                          else _SavedOutput(v), None)
            elif hooks is not None:
                saved += (_Packed(v, hooks, None), None)
            else:
                saved += (v, _version_to_save(v))
        ctx._saved = tuple(saved)
    ctx._to_save = ()
    return tuple(wrapped) if multiple else wrapped[0]


def once_differentiable(backward):
    """Mark a backward as not differentiable itself: it runs under no_grad, and a double
    backward through it raises."""
    import functools

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with grad_mode.no_grad():
            results = backward(ctx, *grads)
        tracked = [g for g in grads if g is not None and g._requires_grad]
        if grad_mode.is_grad_enabled() and tracked:
            results = _OnceGuard.wrap(ctx, results, tracked)
        return results
    return wrapper


class _OnceGuard(Function):
    """Stands in front of the gradients of a once_differentiable backward; its own
    backward raises."""

    _array_forward = True

    @classmethod
    def wrap(cls, ctx, results, tracked):
        single = not isinstance(results, tuple)
        results = (results,) if single else results
        guarded = tuple(cls.apply(r, ctx.name(), *tracked) if r is not None else None
                        for r in results)
        return guarded[0] if single else guarded

    @staticmethod
    def forward(ctx, x, name, *tracked):
        ctx.origin = name
        return x

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(f"trying to differentiate twice a function that was marked with "
                           f"@once_differentiable ({ctx.origin})")
