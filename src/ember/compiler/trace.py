"""``ember.compile``: record the array work of one call, then replay it without Tensors.

The first call with a new signature (shapes, dtypes, devices, grad mode, Python values)
runs eagerly while a tracer records every op's forward on arrays, the backward plan the
engine would follow, and the optimizer calls. ``lower`` turns the record into one generated
function of NumPy calls; later calls with the same signature call it, with no Tensor, no
graph node and no dispatch in between. (GPU traces, and ops the lowering refuses, replay
each op's own ``forward`` and ``backward`` on raw arrays, in the recorded order.)
Anything the record cannot reproduce (a tensor's value read into Python, an in-place op,
hooks, a draw from the random generator outside an op) marks the signature unsafe, and it
runs eagerly.
"""
from __future__ import annotations

import functools
import sys
import threading
from collections import OrderedDict

import numpy as np

from .. import backend, creation, dtypes, grad_mode, random, tracing
from ..autograd import anomaly as _anomaly
from ..autograd.anomaly import is_anomaly_enabled
from ..autograd.backward_math import array_math
from ..autograd.engine import accumulate_grad as _accumulate
from ..autograd.engine import dependencies
from ..autograd.function import NOTHING_SAVED, AccumulateGrad, accumulator_of
from ..tensor import Tensor, bump_version
from .graphs import GraphReplay, refusal
from .lower import ShapeChanged, lower

_state = grad_mode._state
_trace_state = tracing.state
_SCALARS = (bool, int, float, complex, str, bytes, type(None))
_FORWARD, _BACKWARD, _CALL, _COPY = 0, 1, 2, 3
_ARRAYS = (np.ndarray, np.generic)
_FACTORIES = creation.__file__
_MADE_OUTSIDE = ("a tensor made in the call outside the recorded ops (its values would be "
                 "the traced call's)")


class _Held:
    """Records one call, and afterwards replays it."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()
        self.reason = None        # why this signature runs eagerly (None: replayable)
        self.nslots = 0
        self.slot_of = {}         # id(Tensor) -> slot, while recording
        self.array_slot = {}      # id(array) -> slot, to catch aliases made outside ops
        self.arrays = []          # the array each slot held while recording
        self.keep = []            # holds recorded objects so their ids stay unique
        self.inputs = []          # (slot, flat argument position)
        self.input_objects = []
        self.externals = []       # (slot, tensor, shape, dtype, requires_grad)
        self.layouts = []         # (tensor, strides) of the externals
        self.accumulated = set()  # leaves whose .grad the replay fills
        self.accumulated_args = set()  # ... and the positions of arguments among them
        self.flat_box = [None]    # the arguments of the op-level replay running now
        self.program = []
        self.nforward = 0
        self.ctx_index = {}       # id(node) -> forward index
        self.backward_seen = False
        self.output = None
        self.rng = None
        self.made = set()         # ids of the Tensors made while tracing (kept alive below)
        self.made_tensors = []
        self.lowered = None
        self.lowering_error = None  # why this record replays op by op, if lowering failed
        self.graphs = False       # mode="reduce-overhead": replay GPU ops as a CUDA graph
        self.gpu_draws = 0        # the GPU generators' draws when the trace began
        self.graph = None         # the GraphReplay, where the record can be captured
        self.graph_refusal = None  # why it cannot be
        self.lock = threading.Lock()  # op-level calls keep state between calls: one at once

    # ------------------------------------------------------------------ recording
    def unsafe(self, why: str) -> None:
        if self.reason is None:
            self.reason = why

    def _new_slot(self, tensor) -> int:
        slot = self.nslots
        self.nslots += 1
        self.slot_of[id(tensor)] = slot
        self.array_slot[id(tensor._data)] = slot
        self.arrays.append(tensor._data)
        self.keep.append(tensor)
        return slot

    def _slot(self, tensor) -> int:
        slot = self.slot_of.get(id(tensor))
        if slot is not None:
            if tensor._data is not self.arrays[slot]:
                self.unsafe("a tensor's data was replaced outside the recorded ops")
            return slot
        data = tensor._data
        slot = self.array_slot.get(id(data))
        if slot is not None:  # detach(), .data: another Tensor over a recorded array
            self.slot_of[id(tensor)] = slot
            self.keep.append(tensor)
            return slot
        base = getattr(data, "base", None)
        if base is not None and id(base) in self.array_slot:
            self.unsafe("a view was made outside the recorded ops")
        if id(tensor) in self.made:
            self.unsafe(_MADE_OUTSIDE)
        slot = self._new_slot(tensor)
        self.externals.append((slot, tensor, data.shape, data.dtype, tensor._requires_grad,
                               tensor._device))
        self.layouts.append((tensor, data.strides))
        return slot

    def _check_rng(self) -> None:
        state = _rng_state()
        if state != self.rng:
            self.unsafe("random numbers were drawn outside an op (a factory such as randn)")
            self.rng = state

    def record_apply(self, cls, args, kwargs):
        self._check_rng()
        if not cls._array_forward:
            self.unsafe(f"{cls.__name__} computes its forward on Tensors")
        spec = []
        device = None
        recording = cls.differentiable and _state.enabled
        needs = []
        for a in args:
            if isinstance(a, Tensor):
                spec.append((True, self._slot(a)))
                needs.append(a._requires_grad)
                if device is None:
                    device = a._device
                elif a._device != device:
                    self.unsafe(f"{cls.__name__} got tensors on several devices")
            else:
                if isinstance(a, _ARRAYS) or isinstance(a, (tuple, list)) and any(
                        isinstance(v, (Tensor,) + _ARRAYS) for v in a) or _holds_arrays(a):
                    self.unsafe(f"{cls.__name__} got an array computed outside the op "
                                "(it may hold values of this call's tensors)")
                spec.append((False, a))
                needs.append(None)
        if any(isinstance(v, Tensor) for v in kwargs.values()):
            self.unsafe(f"{cls.__name__} got a Tensor as a keyword argument")
        recording = recording and True in needs
        if not recording:
            needs = (False,) * len(args)
        tracing.set_tracer(None)
        try:
            out = cls.apply(*args, **kwargs)
        finally:
            tracing.set_tracer(self)
        self.rng = _rng_state()
        multi = type(out) is tuple
        outs = out if multi else (out,)
        slots = []
        for t in outs:
            if not isinstance(t, Tensor):
                self.unsafe(f"{cls.__name__} returned a {type(t).__name__}")
                return out
            slots.append(self._new_slot(t))
            node = t.grad_fn
            if node is not None:
                self.ctx_index[id(node)] = self.nforward
                self.keep.append(node)
        xp = backend.xp_for_device(device) if device is not None else np
        guard = None if device is None or device.type == "cpu" else device.index
        self.program.append((_FORWARD, _replay_class(cls, xp, recording, device), spec, kwargs,
                             tuple(slots) if multi else slots[0], multi, needs, xp, guard,
                             self.nforward))
        self.nforward += 1
        return out

    def record_backward(self, run, tensors, grad_tensors, retain_graph, create_graph,
                        inputs, accumulate, allow_unused, who):
        self._check_rng()
        plan = self._plan(tensors, grad_tensors, create_graph, inputs, accumulate)
        tracing.set_tracer(None)
        try:
            return run(tensors, grad_tensors, retain_graph, create_graph, inputs,
                       accumulate, allow_unused, who)
        finally:
            tracing.set_tracer(self)
            if plan is not None:
                self.program.append((_BACKWARD, plan))
                self.backward_seen = True

    def record_call(self, function, obj, args, kwargs):
        """Optimizer steps and zero_grad: replayed as calls (they work on arrays)."""
        self._check_rng()
        if kwargs.get("closure") is not None or any(callable(a) for a in args):
            self.unsafe("an optimizer step with a closure")
        self.program.append((_CALL, function, obj, args, kwargs))
        tracing.set_tracer(None)
        try:
            return function(obj, *args, **kwargs)
        finally:
            tracing.set_tracer(self)
            self.rng = _rng_state()

    def record_copy(self, target, source) -> None:
        """``target._data[...] = source._data`` (running statistics): replayed as that copy."""
        self.program.append((_COPY, self._slot(target), self._slot(source), target))

    def _plan(self, tensors, grad_tensors, create_graph, inputs, accumulate):
        if create_graph or inputs is not None or not accumulate:
            self.unsafe("autograd.grad, create_graph or inputs= in a backward")
            return None
        if is_anomaly_enabled():
            self.unsafe("anomaly detection is on")
            return None
        roots = []
        for t, g in zip(tensors, grad_tensors):
            if not isinstance(t, Tensor) or not t._requires_grad:
                return None  # the eager engine raises the error
            node = t.grad_fn if t.grad_fn is not None else accumulator_of(t)
            if g is None:
                grad = (False, (t._data.shape, t._data.dtype, backend.xp_of(t._data)))
            elif isinstance(g, Tensor) and g.dtype is t.dtype and g.shape == t.shape:
                grad = (True, self._slot(g))
            else:
                self.unsafe("a backward gradient that is not a Tensor of the output's dtype")
                return None
            roots.append((node, t._output_nr, grad))
        root_nodes = [n for n, _, _ in roots]
        deps = dependencies(root_nodes)
        buffers = {}

        def buffer(node, nr):
            key = (id(node), nr)
            slot = buffers.get(key)
            if slot is None:
                slot = buffers[key] = len(buffers)
            return slot

        root_plan = [(buffer(n, nr), g) for n, nr, g in roots]
        steps = []
        ready = [n for n in dict.fromkeys(root_nodes) if deps.get(n, 0) == 0]
        while ready:  # the engine's own order, so gradients are summed as it sums them
            node = ready.pop()
            if node._hooked:
                self.unsafe(f"a hook on {node.name()}")
            if type(node) is AccumulateGrad:
                variable = node.variable
                if variable._hooks or variable._post_accumulate_hooks or \
                        variable._grad_dtype is not None:
                    self.unsafe("a hook (or grad_dtype) on a leaf tensor")
                # an argument's .grad: each call's own argument (by its position)
                position = next((i for i, t in enumerate(self.input_objects)
                                 if t is variable), None)
                if position is None:
                    self.accumulated.add(variable)
                else:
                    self.accumulated_args.add(position)
                self.keep.append(variable)
                steps.append((True, buffer(node, 0), variable, position))
                continue
            index = self.ctx_index.get(id(node))
            if index is None:
                self.unsafe("the backward reaches a graph built before the compiled call")
                return None
            if not node.array_backward:
                self.unsafe(f"{node.name()} computes its backward on Tensors")
            n_out = node._num_outputs
            ins = [buffer(node, nr) for nr in range(n_out)]
            meta = node._output_meta if n_out > 1 and node._materialize_grads else None
            outs = []
            for edge in node._edges:
                if edge is None:
                    outs.append(None)
                    continue
                child, nr = edge
                outs.append(buffer(child, nr))
                deps[child] -= 1
                if deps[child] == 0:
                    ready.append(child)
            steps.append((False, index, ins, outs, meta, len(node._edges)))
        return (root_plan, steps, len(buffers))

    def finish(self, result, lowering: bool = True) -> None:
        """Check the record after the eager call and note how to rebuild its result."""
        for tensor in self.keep:
            if isinstance(tensor, Tensor):
                slot = self.slot_of.get(id(tensor))
                if slot is not None and tensor._data is not self.arrays[slot]:
                    self.unsafe("a tensor's data was replaced outside the recorded ops")
                    break
        self.output = self._template(result)
        self.build(lowering)
        self.slot_of = self.array_slot = self.arrays = None
        self.made = self.made_tensors = None
        self.keep = self.input_objects = None  # the traced call's graph is freed

    def _template(self, value):
        if isinstance(value, Tensor):
            slot = self.slot_of.get(id(value))
            if slot is None:  # detach() or .data of a recorded result: a new Tensor per call
                slot = self.array_slot.get(id(value._data))
                if slot is not None:
                    return ("t", slot, value._device)
                if id(value) in self.made:
                    self.unsafe(_MADE_OUTSIDE)
                return ("x", value)
            if any(slot == s for s, _, _, _, _, _ in self.externals):
                return ("x", value)
            for s, position in self.inputs:
                if s == slot and self.input_objects[position] is value:
                    return ("arg", position)
            if value._requires_grad and not self.backward_seen:
                self.unsafe("the result requires grad (its backward needs the graph): "
                            "compile the whole step, or call under no_grad")
            return ("t", slot, value._device)
        if isinstance(value, (tuple, list)) and type(value) in (tuple, list):
            return ("seq", type(value), [self._template(v) for v in value])
        if isinstance(value, dict):
            return ("dict", list(value), [self._template(v) for v in value.values()])
        if isinstance(value, _SCALARS):
            return ("c", value)
        self.unsafe(f"the function returned a {type(value).__name__}")
        return ("c", value)

    # ------------------------------------------------------------------ replaying
    def still_valid(self, flat) -> bool:
        """The tensors read from outside the call kept their shapes, dtypes, layouts (the
        generated code may rely on them) and flags; no leaf whose .grad the replay fills
        has a hook."""
        for (_, t, shape, dtype, rg, device), (_, strides) in zip(self.externals,
                                                                self.layouts):
            data = t._data
            if data.shape != shape or data.dtype != dtype or t._requires_grad != rg or \
                    data.strides != strides or t._device is not device and t._device != device:
                return False
        for v in self.accumulated if not self.accumulated_args else \
                list(self.accumulated) + [flat[i] for i in self.accumulated_args]:
            if v._hooks or v._post_accumulate_hooks or v._grad_dtype is not None or \
                    v._grad is not None and v._grad._requires_grad:
                return False
        return True

    def build(self, lowering: bool = True) -> None:
        """Turn the record into one generated function of NumPy calls (``lower``), or,
        where that cannot be done (a GPU trace), a flat list of op-level calls."""
        self.lowered = self.graph = None
        if self.graphs and self.reason is None:
            self.graph_refusal = refusal(self.program, backend.cuda.draw_count() !=
                                         self.gpu_draws)
        if lowering and self.reason is None:
            try:
                self.lowered = lower(self, _accumulate, _rebuild)
            except Exception as e:
                self.lowering_error = f"{type(e).__name__}: {e}"
            if self.lowered is not None:
                return  # (the program stays, for op-level calls should a shape change)
        if self.graphs and self.reason is None and self.graph_refusal is None:
            self.graph = GraphReplay(self, self.program[0][8])
        ctxs = {}
        calls = []
        for step in self.program:
            if step[0] == _FORWARD:
                call, ctx = _forward_call(*step[1:9])
                ctxs[step[9]] = ctx
                calls.append(call)
            elif step[0] == _BACKWARD:
                calls.append(_backward_call(step[1], ctxs, self.flat_box))
            elif step[0] == _COPY:
                calls.append(_copy_call(*step[1:]))
            else:
                calls.append(_python_call(*step[1:], self.externals))
        self.calls = calls
        self.program = None

    def replay(self, flat):
        lowered = self.lowered
        if lowered is not None:
            try:
                if not lowered.fallback:  # its variables are the call's own: threads at once
                    return lowered(flat)
                with self.lock:  # an op-level call keeps its ctx from forward to backward
                    return lowered(flat)
            except ShapeChanged:  # raised before anything changed state: op by op from now
                with self.lock:
                    if self.lowered is lowered:
                        self.lowered = None
                        self.build(lowering=False)
                raise
        if self.graph is not None:
            return self.graph(flat)
        return self.replay_calls(flat)

    def replay_calls(self, flat):
        """The op-level replay: each op's own forward and backward on raw arrays (each op
        keeps one ctx, and the backward reads the call's arguments from ``flat_box``, so
        one call runs at a time)."""
        env = [None] * self.nslots
        for slot, position in self.inputs:
            env[slot] = flat[position]._data
        for slot, t, _, _, _, _ in self.externals:
            env[slot] = t._data
        with self.lock:
            self.flat_box[0] = flat
            try:
                for call in self.calls:
                    call(env)
            finally:
                self.flat_box[0] = None
        return _rebuild(self.output, env, flat)

    def rebuild(self, env, flat):
        """The call's result, from the arrays in ``env``."""
        return _rebuild(self.output, env, flat)


def _forward_call(rcls, spec, kwargs, out, multi, needs, xp, guard):
    """One op's forward on the slots' arrays. The ctx is made once and reused by every
    replay: forward rewrites what it keeps on it each call."""
    ctx = object.__new__(rcls)
    ctx.needs_input_grad = needs
    forward = rcls.forward
    ndarray, asarray = xp.ndarray, xp.asarray
    slots = [(i, v) for i, (is_slot, v) in enumerate(spec) if is_slot]
    plain = guard is None and not kwargs and not multi
    if plain and len(spec) == 1 and spec[0][0]:
        a = spec[0][1]

        def call(env):
            r = forward(ctx, env[a])
            env[out] = r if type(r) is ndarray else asarray(r)
        return call, ctx
    if plain and len(spec) == 2 and spec[0][0]:
        a, b = spec[0][1], spec[1][1]
        if spec[1][0]:
            def call(env):
                r = forward(ctx, env[a], env[b])
                env[out] = r if type(r) is ndarray else asarray(r)
        else:
            def call(env):
                r = forward(ctx, env[a], b)
                env[out] = r if type(r) is ndarray else asarray(r)
        return call, ctx
    template = [v for _, v in spec]

    def call(env):
        arrays = list(template)
        for i, slot in slots:
            arrays[i] = env[slot]
        if guard is None:
            result = forward(ctx, *arrays, **kwargs)
        else:
            with backend.cuda.device_guard(guard):
                result = forward(ctx, *arrays, **kwargs)
        if multi:
            for slot, r in zip(out, result):
                env[slot] = r if type(r) is ndarray else asarray(r)
        else:
            env[out] = result if type(result) is ndarray else asarray(result)
    return call, ctx


def _copy_call(target, source, tensor):
    def call(env):
        env[target][...] = env[source]
        bump_version(tensor)
    return call


def _python_call(function, obj, args, kwargs, externals):
    def call(env):
        function(obj, *args, **kwargs)
        for slot, t, _, _, _, _ in externals:  # an optimizer may rebind a parameter's data
            env[slot] = t._data
    return call


def _rebuild(template, env, flat):
    kind = template[0]
    if kind == "arg":
        return flat[template[1]]
    if kind == "t":
        return Tensor._make(env[template[1]], template[2], False)
    if kind == "x" or kind == "c":
        return template[1]
    if kind == "seq":
        return template[1](_rebuild(t, env, flat) for t in template[2])
    return dict(zip(template[1], (_rebuild(t, env, flat) for t in template[2])))


def _backward_call(plan, ctxs, flat_box):
    """The engine's walk, unrolled: each node's backward on the gradient buffers, in the
    order the engine ran them, summing into the buffers as the engine sums."""
    root_plan, steps, nbuffers = plan
    bound = []
    for step in steps:
        if step[0]:
            bound.append(step)
        else:
            _, index, ins, outs, meta, n_edges = step
            ctx = ctxs[index]
            pairs = [(b, i) for i, b in enumerate(outs) if b is not None]
            bound.append((False, ctx, type(ctx).backward, ins, pairs, meta))

    def call(env):
        buffers = [None] * nbuffers
        stored = set()
        for slot, (given, spec) in root_plan:
            if given:
                g = env[spec]
                stored.add(id(_owner(g)))
            else:
                shape, dtype, xp = spec
                g = xp.ones(shape, dtype)
            current = buffers[slot]
            buffers[slot] = g if current is None else current + g
        for step in bound:
            if step[0]:
                g = buffers[step[1]]
                if g is not None:
                    _accumulate(step[2] if step[3] is None else flat_box[0][step[3]], g,
                                stored)
                continue
            _, ctx, backward, ins, pairs, meta = step
            if len(ins) == 1:
                g = buffers[ins[0]]
                if g is None:
                    continue
                results = backward(ctx, g)
            else:
                grads = [buffers[b] for b in ins]
                if all(g is None for g in grads):
                    continue
                if meta is not None:
                    grads = [g if g is not None else ctx.xp.zeros(m[0], m[1].numpy)
                             for g, m in zip(grads, meta)]
                results = backward(ctx, *grads)
            if type(results) is not tuple:
                results = (results,)
            for b, i in pairs:
                g = results[i]
                if g is not None:
                    current = buffers[b]
                    buffers[b] = g if current is None else current + g
    return call


def _owner(g):
    base = getattr(g, "base", None)
    return base if base is not None else g


_REPLAY_CLASSES: dict = {}


def _replayed_saved(ctx) -> tuple:
    """The replayed ctx's saved values: what forward kept, as it kept them (a forward that
    kept only numbers marks ``_saved`` itself, saving nothing)."""
    return (None, None) if ctx._saved is NOTHING_SAVED else ctx._to_save


def _replay_class(cls, xp, recording, device):
    """A subclass of the op whose ctx hands back the saved arrays as they are."""
    key = (cls, xp, recording, device)
    rcls = _REPLAY_CLASSES.get(key)
    if rcls is None:
        rcls = _REPLAY_CLASSES[key] = type(cls.__name__, (cls,), {
            "saved_tensors": property(_replayed_saved),
            "math": array_math(xp), "xp": xp, "_recording": recording, "_device": device,
            "__module__": cls.__module__})
    return rcls


def _holds_arrays(value) -> bool:
    """An object (not a number or a tuple) whose attributes hold arrays or tensors, such
    as an op's precomputed index plan: its values may come from this call's tensors."""
    attributes = getattr(value, "__dict__", None)
    if attributes is None or isinstance(value, type):
        return False
    return any(isinstance(v, (Tensor,) + _ARRAYS) for v in attributes.values())


def _rng_state():
    """The default CPU generator's state, to notice draws made during a trace."""
    return bytes(random.default_generator.get_state()._data)


# ---------------------------------------------------------------------- signatures
def _flatten(args, kwargs):
    """The tensors among the arguments (top level, and inside lists/tuples), and a
    hashable description of everything else."""
    flat, parts = [], []

    def one(value):
        if isinstance(value, Tensor):
            position = len(flat)
            first = next((i for i, t in enumerate(flat) if t is value), position)
            flat.append(value)
            data = value._data
            return ("T", data.shape, data.dtype, value._device, value._requires_grad, first,
                    data.strides)
        if isinstance(value, (list, tuple)):
            return (type(value).__name__,) + tuple(one(v) for v in value)
        if isinstance(value, _SCALARS):
            return ("V", type(value), value)
        return ("O", id(value))

    for a in args:
        parts.append(one(a))
    for k in sorted(kwargs):
        parts.append((k, one(kwargs[k])))
    return flat, tuple(parts)


def _value_reader(fn):
    """A function giving the scalar globals and closure values ``fn``'s own code reads
    (names it reads that are not globals are left out)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return tuple
    g = getattr(fn, "__globals__", {})
    names = tuple(n for n in code.co_names if n in g)  # (attribute names are not globals)
    cells = getattr(fn, "__closure__", None) or ()
    scalars, missing = _SCALARS, g.get

    def read():
        values = [(n, v) for n in names if (v := missing(n)) is not None and
                  isinstance(v, scalars)]
        for cell in cells:
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            if isinstance(v, scalars):
                values.append(v)
        return tuple(values)
    return read


class CompiledFunction:
    """A function (or module) whose calls replay a recorded trace; see ``ember.compile``."""

    def __init__(self, fn, cache_size: int = 8, fullgraph: bool = False, lowering: bool = True,
                 cuda_graphs: bool = False):
        self._fn = fn
        self.lowering = lowering
        self._graphs = cuda_graphs  # mode="reduce-overhead"
        self._cache: OrderedDict = OrderedDict()
        self.cache_size = cache_size
        self.fullgraph = fullgraph
        self.stats = {"traces": 0, "replays": 0, "eager": 0}
        self._module = None
        self._reader = (None, tuple)
        functools.update_wrapper(self, fn, updated=())

    def _signature(self, args, kwargs):
        flat, parts = _flatten(args, kwargs) if args or kwargs else ([], ())
        fn = self._fn
        if self._module is not None:
            fn = getattr(fn, "forward", fn)
            fn = getattr(fn, "__func__", fn)
        reader = self._reader
        if reader[0] is not fn:
            reader = self._reader = (fn, _value_reader(fn))
        key = (_state.enabled, _anomaly._flag.enabled, dtypes._default_float, parts,
               reader[1]())
        if self._module is not None:
            module = self._module
            key += (tuple(m.training for m in module.modules()),
                    tuple(map(id, module.parameters())), tuple(map(id, module.buffers())))
        return flat, key

    def __call__(self, *args, **kwargs):
        tracer = _trace_state.tracer
        if tracer is not None and tracer.thread == threading.get_ident():
            return self._fn(*args, **kwargs)  # inside another compiled call: inline
        flat, key = self._signature(args, kwargs)
        held = self._cache.get(key)
        if held is not None:
            try:
                self._cache.move_to_end(key)
            except KeyError:  # another thread's trace pushed it out just now
                pass
            if held.reason is not None:
                self.stats["eager"] += 1
                return self._fn(*args, **kwargs)
            if held.still_valid(flat):
                try:
                    result = held.replay(flat)
                except ShapeChanged:
                    self.stats["eager"] += 1
                    return self._fn(*args, **kwargs)
                self.stats["replays"] += 1
                return result
            self._cache.pop(key, None)
        return self._trace(key, flat, args, kwargs)

    def _trace(self, key, flat, args, kwargs):
        if tracing.state.tracer is not None:  # another thread is tracing: run eagerly
            self.stats["eager"] += 1
            return self._fn(*args, **kwargs)
        held = _Held()
        held.graphs = self._graphs
        held.gpu_draws = backend.cuda.draw_count()
        held.input_objects = flat
        for position, t in enumerate(flat):
            slot = held.slot_of.get(id(t))
            if slot is None:
                slot = held._new_slot(t)
            held.inputs.append((slot, position))
        held.rng = _rng_state()
        made, made_tensors, make = held.made, held.made_tensors, Tensor._make

        def tagged(data, device, requires_grad=False):
            t = make(data, device, requires_grad)
            # factories (ember.zeros, ember.tensor of Python values...) make constants the
            # signature guards; any other tensor made outside an op holds this call's values
            if sys._getframe(1).f_code.co_filename != _FACTORIES:
                made.add(id(t))
                made_tensors.append(t)
            return t

        tracing.set_tracer(held)
        Tensor._make = staticmethod(tagged)  # (restored below: only while this call runs)
        try:
            result = self._fn(*args, **kwargs)
            held._check_rng()
        finally:
            Tensor._make = staticmethod(make)
            tracing.set_tracer(None)
        held.finish(result, self.lowering)
        self.stats["traces"] += 1
        self._cache[key] = held
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        if held.reason is not None and self.fullgraph:
            raise RuntimeError(f"ember.compile(fullgraph=True): cannot replay this call: "
                               f"{held.reason}")
        return result

    def explain(self) -> list:
        """Why each cached signature runs eagerly (None where it replays)."""
        return [held.reason for held in self._cache.values()]

    def lowered(self) -> list:
        """Per cached signature: None where it runs eagerly or op by op, else a dict with
        how many ops were lowered to NumPy calls and which kept an op-level call."""
        out = []
        for held in self._cache.values():
            fn = held.lowered if held.reason is None else None
            out.append(None if fn is None else {"lowered": fn.lowered,
                                                 "fallback": list(fn.fallback)})
        return out

    def cuda_graphs(self) -> list:
        """Per cached signature, under ``mode="reduce-overhead"``: None where it runs
        eagerly; else a dict saying whether it replays as a captured CUDA graph
        ("captured", "launches"), or why not ("refused": why it cannot be captured,
        "failed": why capturing raised)."""
        out = []
        for held in self._cache.values():
            if held.reason is not None:
                out.append(None)
            elif held.graph is not None:
                out.append(dict(held.graph.state(), refused=None))
            else:
                out.append({"captured": False, "launches": 0, "failed": None,
                            "refused": held.graph_refusal or "mode='reduce-overhead' is off"})
        return out

    def cache_len(self) -> int:
        """How many signatures are cached (at most ``cache_size``)."""
        return len(self._cache)


class CompiledModule(CompiledFunction):
    """``ember.compile(module)``: calls replay; attributes are the module's."""

    def __init__(self, module, cache_size: int = 8, fullgraph: bool = False,
                 lowering: bool = True, cuda_graphs: bool = False):
        CompiledFunction.__init__(self, module, cache_size, fullgraph, lowering, cuda_graphs)
        self._module = module

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._module, name)


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend=None, mode=None,
            options=None, disable: bool = False, cache_size: int = 8):
    """Trace a function or an ``nn.Module`` once per signature and replay the trace.

    The first call with given argument shapes, dtypes, devices, grad mode and Python values
    runs eagerly and is recorded; later calls with the same signature replay the recorded
    array operations (forward, backward and optimizer steps) without making Tensors or
    graph nodes. A call that reads a tensor's value into Python (``.item()``, ``bool()``,
    ``.tolist()``), runs an in-place op, uses hooks or draws random numbers outside an op
    is not replayed: that signature always runs eagerly. ``fullgraph=True`` raises instead.
    ``mode="reduce-overhead"`` (or ``"max-autotune"``, as in PyTorch) replays GPU calls
    that can be captured (forward ops on one GPU, no random draws, no backward or optimizer
    step) as one CUDA graph launch; ``cuda_graphs()`` says which were captured. ``dynamic``
    and ``backend`` are accepted for PyTorch code and change nothing;
    ``options={"lower": False}`` replays op by op instead of through the generated NumPy
    function (see docs/compile.md, "How a replay runs"). Up to ``cache_size`` signatures
    are kept (least recently used go first).

    Example::

        >>> import ember
        >>> w = ember.ones(3, requires_grad=True)
        >>> opt = ember.optim.SGD([w], lr=0.1)
        >>> @ember.compile
        ... def step(x):
        ...     opt.zero_grad()
        ...     loss = (w * x).sum()
        ...     loss.backward()
        ...     opt.step()
        ...     return loss
        >>> for _ in range(3):
        ...     loss = step(ember.ones(3))
        >>> w
        tensor([0.7000, 0.7000, 0.7000], requires_grad=True)
    """
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                  mode=mode, options=options, disable=disable,
                                  cache_size=cache_size)
    if not callable(model):
        raise TypeError(f"compile(): expected a function or an nn.Module, got "
                        f"{type(model).__name__}")
    if not isinstance(cache_size, int) or isinstance(cache_size, bool) or cache_size < 1:
        raise ValueError(f"compile(): cache_size must be a positive int, got {cache_size!r}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"compile(): options must be a dict, got {type(options).__name__}")
    lowering = (options or {}).get("lower", True)
    if not isinstance(lowering, bool):
        raise TypeError(f"compile(): options['lower'] must be a bool, got {lowering!r}")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    graphs = mode in ("reduce-overhead", "max-autotune")  # PyTorch's CUDA-graph modes
    if disable:
        return model
    from ..nn import Module

    if isinstance(model, Module):
        return CompiledModule(model, cache_size, fullgraph, lowering, graphs)
    return CompiledFunction(model, cache_size, fullgraph, lowering, graphs)


_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
