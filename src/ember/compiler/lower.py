"""Lowering a record to one straight-line Python function of NumPy calls.

A trace (``trace._Held``) holds, per op, its class and arguments; replaying it op by op
still runs each op's Python (``forward``, ``save_for_backward``, ``backward``). Lowering runs
each op's own ``forward`` and each node's ``backward`` once more on recording arrays
(``record``), and writes what they did with NumPy as one function. An op that refuses
keeps an op-level call of its own ``forward``/``backward`` in that function, and the
others stay lowered.

So each op's forward and backward stay written once, in ``ember.ops``; the generated code is
what those methods did with the arrays, in the order they did it.
"""
from __future__ import annotations

import re
import warnings

import numpy as np

from .. import random
from ..tensor import bump_version
from .record import Lowering, _Rec, _Refuse

_FORWARD, _BACKWARD, _CALL, _COPY = 0, 1, 2, 3
_MAX_PASSES = 64
_NAME = re.compile(r"\b[vg]\d+\b")

# ---------------------------------------------------------------------- op-level calls
def _fallback_forward(rcls, spec, kwargs, multi, needs):
    """An op whose forward could not be lowered: its own forward, called on the arrays."""
    ctx = object.__new__(rcls)
    ctx.needs_input_grad = needs
    forward, ndarray, asarray = rcls.forward, np.ndarray, np.asarray
    template = [v for _, v in spec]
    positions = [i for i, (is_slot, _) in enumerate(spec) if is_slot]

    expected = []  # [(shape, dtype)] per output, once recorded: the lowered code after it
    #                relies on them

    def call(*arrays):
        args = list(template)
        for i, a in zip(positions, arrays):
            args[i] = a
        r = forward(ctx, *args, **kwargs)
        if multi:
            r = tuple(x if type(x) is ndarray else asarray(x) for x in r)
            if expected and [(x.shape, x.dtype) for x in r] != expected:
                raise ShapeChanged(rcls.__name__)
            return r
        r = r if type(r) is ndarray else asarray(r)
        if expected and (r.shape, r.dtype) != expected[0]:
            raise ShapeChanged(rcls.__name__)
        return r
    call.expected = expected
    return call, ctx


class ShapeChanged(Exception):
    """An op-level call in a lowered replay gave another shape or dtype than recorded."""


def _fallback_backward(ctx, meta, n_results):
    backward = type(ctx).backward

    def call(*grads):
        if meta is not None:
            grads = [g if g is not None else np.zeros(m[0], m[1].numpy)
                     for g, m in zip(grads, meta)]
        r = backward(ctx, *grads)
        if type(r) is not tuple:
            r = (r,)
        return tuple(r) + (None,) * (n_results - len(r))
    return call


def _owner_id(g):
    base = getattr(g, "base", None)
    return id(base if base is not None else g)


def _copy(target, source, tensor):
    target[...] = source
    bump_version(tensor)


# ---------------------------------------------------------------------- the pass
def lower(held, accumulate, rebuild):
    """The generated replay function of ``held`` (a finished record), or None where it
    cannot be lowered at all (a GPU trace); ops that refuse stay op-level calls."""
    for step in held.program:
        if step[0] == _FORWARD and (step[7] is not np or step[8] is not None):
            return None
        if step[0] == _BACKWARD and any(not given and spec[2] is not np
                                        for _, (given, spec) in step[1][0]):
            return None
    fallback = {}
    classes = {step[9]: step[1] for step in held.program if step[0] == _FORWARD}
    state = random.default_generator.get_state()
    try:
        with warnings.catch_warnings():  # eager already warned about these values
            warnings.simplefilter("ignore")
            for _ in range(_MAX_PASSES):
                low = Lowering()
                refused = _one_pass(held, low, fallback, accumulate, rebuild)
                if refused is None:
                    break
                # a backward refused: that op, and (so that a pass is not needed per op)
                # the other ops of its class, run op-level in the next pass
                index, why, shape = refused
                cls = classes[index]
                for i, c in classes.items():
                    if c is cls and i not in fallback:
                        fallback[i] = (why if i == index else
                                       f"another {cls.__name__}'s backward refused: {why}",
                                       shape)
            else:
                return None
    finally:
        random.default_generator.set_state(state)
    names = {step[9]: step[1].__name__ for step in held.program if step[0] == _FORWARD}
    source = "def _replay(flat):\n" + "".join(f"    {line}\n" for line in _freeing(low))
    namespace = dict(low.names)
    exec(compile(source, "<ember.compile replay>", "exec"), namespace)
    replay = namespace["_replay"]
    replay.source = source
    replay.lowered = sum(1 for s in held.program if s[0] == _FORWARD) - len(fallback)
    replay.fallback = [(names[i], fallback[i][0]) for i in sorted(fallback)]
    return replay


def _freeing(low) -> list:
    """The lines with ``del`` after the last use of each big variable."""
    last = {}
    for i, line in enumerate(low.lines):
        for name in _NAME.findall(line):
            if name in low.big:
                last[name] = i
    dels = {}
    for name, i in last.items():
        dels.setdefault(i, []).append(name)
    out = []
    for i, line in enumerate(low.lines):
        out.append(line)
        if i in dels and not line.startswith("return"):
            out.append("del " + ", ".join(sorted(dels[i])))
    return out


def _lowered_forward(low, rcls, args, kwargs, multi, needs):
    """Record one op's forward: (ctx, result, None), or (None, None, (why, shape-dependent))
    where it refuses."""
    ctx = object.__new__(rcls)
    ctx.needs_input_grad = needs
    ctx.xp, ctx.math = low.xp, low.math
    try:
        result = rcls.forward(ctx, *args, **kwargs)
        if low.refusal is not None:
            return None, None, (low.refusal, low.shape_dependent)
        if ctx.out_device is not None:
            return None, None, ("its outputs go to another device", False)
        if not all(type(r) is _Rec and r.__dict__.get("_low") is low
                   for r in (result if multi else (result,))):
            return None, None, ("it returned an array the record did not make", False)
    except _Refuse:
        return None, None, (low.refusal, low.shape_dependent)
    except Exception as e:
        return None, None, (f"{type(e).__name__}: {e}", False)
    return ctx, result, None


def _one_pass(held, low, fallback, accumulate, rebuild):
    """Record the whole program once. An op whose forward refuses runs op-level in this
    pass; one whose backward refuses is returned ((index, why, shape-dependent)), for
    another pass with it op-level. None when done."""
    env = {}
    for slot, position in held.inputs:
        env[slot] = low.wrap(held.arrays[slot], f"flat[{position}]._data")
    externals = [(slot, t) for slot, t, *_ in held.externals]
    for slot, t in externals:
        env[slot] = low.wrap(held.arrays[slot], f"{low.const(t)}._data")
    ctxs = {}
    tainted = set()  # slots computed by op-level calls whose shapes may change
    rerunnable = True  # nothing the replay did so far would change state if run again
    for step in held.program:
        kind = step[0]
        if kind == _FORWARD:
            _, rcls, spec, kwargs, out, multi, needs, _, _, index = step
            if index not in fallback and any(is_slot and v in tainted for is_slot, v in spec):
                # its input's shape may change from call to call: the lowered code would
                # keep the recorded shape, so this op runs op-level too
                fallback[index] = ("it reads the output of an op-level call", True)
            if index not in fallback:
                lines, as_array = len(low.lines), dict(low.as_array)
                args = [env[v] if is_slot else v for is_slot, v in spec]
                ctx, result, refused = _lowered_forward(low, rcls, args, kwargs, multi, needs)
                if refused is None:
                    why = low.verify(lines)
                    if why is not None:
                        refused = (why, False)
                if refused is None:
                    ctxs[index] = (True, ctx)
                else:  # forget its lines; it runs op-level, and the pass goes on
                    del low.lines[lines:]
                    low.as_array = as_array
                    low.refusal, low.shape_dependent = None, False
                    fallback[index] = refused
            if index in fallback:
                fn, ctx = _fallback_forward(rcls, spec, kwargs, multi, needs)
                ctxs[index] = (False, ctx)
                arrays = [env[v] for is_slot, v in spec if is_slot]
                code = f"{low.const(fn)}({', '.join(low.array(a) for a in arrays)})"
                real = fn(*(low.array_value(a) for a in arrays))
                result = low.result(real, code)
                if fallback[index][1] or not rerunnable:
                    tainted.update(out if multi else (out,))
                else:  # guarded: a new shape stops the replay, and the call runs eagerly
                    fn.expected.extend((r.shape, r.dtype) for r in (real if multi else (real,)))
            for slot, r in zip(out if multi else (out,), result if multi else (result,)):
                env[slot] = r
        elif kind == _BACKWARD:
            rerunnable = False
            refused = _backward(step[1], low, env, ctxs, accumulate)
            if refused is not None:
                return refused
        elif kind == _COPY:
            rerunnable = False
            _, target, source, tensor = step
            low.emit(f"{low.const(_copy)}({low.array(env[target])}, "
                     f"{low.array(env[source])}, {low.const(tensor)})")
        else:
            _, function, obj, args, kwargs = step
            if getattr(function, "__name__", "") != "zero_grad":  # zero_grad twice is once
                rerunnable = False
            low.emit(f"{low.const(function)}({low.const(obj)}, *{low.const(args)}, "
                     f"**{low.const(kwargs)})")
            for slot, t in externals:  # an optimizer may rebind a parameter's data
                env[slot] = low.wrap(t._data, f"{low.const(t)}._data")
    if held.output[0] == "c":  # a constant (None, a number): no Tensor to make
        low.emit(f"return {low.const(held.output[1])}")
        return None
    slots = {}
    _template_slots(held.output, slots)
    pairs = ", ".join(f"{slot}: {low.array(env[slot])}" for slot in slots)
    low.emit(f"return {low.const(rebuild)}({low.const(held.output)}, {{{pairs}}}, flat)")
    return None


def _template_slots(template, slots):
    kind = template[0]
    if kind == "t":
        slots[template[1]] = True
    elif kind in ("seq", "dict"):
        for t in template[2]:
            _template_slots(t, slots)


def _backward(plan, low, env, ctxs, accumulate):
    root_plan, steps, nbuffers = plan
    buffers = [None] * nbuffers
    stored = f"stored{low.n}"
    low.n += 1
    low.emit(f"{stored} = set()")

    def add(slot, g):
        current = buffers[slot]
        buffers[slot] = g if current is None else current + g

    for slot, (given, spec) in root_plan:
        if given:
            g = env[spec]
            low.emit(f"{stored}.add({low.const(_owner_id)}({low.array(g)}))")
        else:
            shape, dtype, _ = spec
            ones = np.ones(shape, dtype)  # copied on each call: the gradient may be kept
            g = low.wrap(ones.copy(), f"{low.const(ones)}.copy()")
        add(slot, g)
    for step in steps:
        if step[0]:
            g = buffers[step[1]]
            if g is not None:
                leaf = low.const(step[2]) if step[3] is None else f"flat[{step[3]}]"
                low.emit(f"{low.const(accumulate)}({leaf}, {low.array(g)}, {stored})")
            continue
        _, index, ins, outs, meta, n_edges = step
        grads = [buffers[b] for b in ins]
        if all(g is None for g in grads):
            continue
        lowered, ctx = ctxs[index]
        if lowered:
            try:
                if meta is not None:
                    grads = [g if g is not None else
                             low.record(low.const(np.zeros), (m[0], m[1].numpy), {}, np.zeros)
                             for g, m in zip(grads, meta)]
                start = len(low.lines)
                results = type(ctx).backward(ctx, *grads)
                if type(results) is not tuple:
                    results = (results,)
                if low.refusal is not None:
                    return index, f"{low.refusal} (in backward)", False
                why = low.verify(start)
                if why is not None:
                    return index, f"{why} (in backward)", False
                if not all(r is None or type(r) is _Rec and r.__dict__.get("_low") is low
                           for r in results):
                    return (index, "its backward returned an array the record did not make",
                            False)
            except _Refuse:
                return index, f"{low.refusal} (in backward)", False
            except Exception as e:
                return index, f"{type(e).__name__} in backward: {e}", False
        else:
            fn = _fallback_backward(ctx, meta, n_edges)
            operands = ", ".join(low.array(g) if g is not None else "None" for g in grads)
            code = f"{low.const(fn)}({operands})"
            real = fn(*(low.array_value(g) if g is not None else None for g in grads))
            names = [f"g{low.n + i}" for i in range(len(real))]
            low.n += len(real)
            low.emit("".join(n + ", " for n in names) + f"= {code}")
            results = []
            for name, r in zip(names, real):
                if r is None:
                    results.append(None)
                    continue
                rec = low.wrap(r if type(r) is np.ndarray or isinstance(r, np.generic)
                               else np.asarray(r), name)
                if rec._v in low.big:
                    low.big.add(name)
                results.append(rec)
        for i, b in enumerate(outs):
            if b is not None and i < len(results) and results[i] is not None:
                add(b, results[i])
    return None
