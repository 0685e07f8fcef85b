"""CUDA graphs for ``ember.compile(mode="reduce-overhead")``: a replay of GPU ops launched
as one captured graph instead of one kernel launch (and one Python call) per op.

A captured graph reads and writes fixed addresses, so the replay keeps its own input
buffers: each call copies the arguments into them, launches the graph, and copies the
results out (a caller never gets memory the next launch overwrites). Only what a graph can
redo exactly is captured: forward ops on one GPU, no random draws (a graph would repeat the
same numbers), no backward or optimizer step (their Python-side state, such as ``.grad``
and step counts, would not follow). Everything else replays op by op, as without the mode.
"""
from __future__ import annotations

import threading

from .. import backend

WARMUP = 1  # op-by-op replays before the capture (CuPy compiles its kernels on first use)


def refusal(program, draws_during_trace: bool) -> str | None:
    """Why a recorded program cannot be captured as a CUDA graph (None: it can)."""
    if not program:
        return "it runs no op"
    if any(step[0] != 0 for step in program):  # 0: a forward step (trace._FORWARD)
        return ("it runs a backward, an optimizer step or a copy, whose Python-side state "
                "(.grad, step counts) a graph would not update")
    guards = {step[8] for step in program}
    if None in guards:
        return "it runs ops on the CPU"
    if len(guards) != 1:
        return "it runs ops on several GPUs"
    if draws_during_trace:
        return "it draws random numbers on the GPU (a graph would replay the same numbers)"
    if not backend.cuda.graphs_supported():
        return "CUDA graphs are not available here (no usable GPU, or a ROCm build of CuPy)"
    return None


class GraphReplay:
    """The replay of one cached signature through a captured CUDA graph."""

    def __init__(self, held, index: int):
        self.held = held
        self.index = index
        self.runs = 0
        self.launches = 0
        self.graph = None
        self.failed = None  # why capturing failed (then the signature replays op by op)
        self._lock = threading.Lock()
        self._env: list = []
        self._static: list = []   # (argument position, buffer the graph reads it from)
        self._bound: list = []    # (tensor, array) the graph reads from outside the call
        self._out_slots = _result_slots(held.output)

    def state(self) -> dict:
        return {"captured": self.graph is not None, "launches": self.launches,
                "failed": self.failed}

    def __call__(self, flat):
        held = self.held
        if self.failed is not None or self.runs < WARMUP:
            self.runs += 1
            return held.replay_calls(flat)
        with self._lock:
            if self.graph is not None and any(t._data is not a for t, a in self._bound):
                self.graph = None  # a parameter's data was replaced: capture again
            if self.graph is None:
                try:
                    self._capture(flat)
                except Exception as error:  # a host sync, an unsupported call...
                    self.failed = f"{type(error).__name__}: {error}"
                    self.graph = None
                    self._env = self._static = self._bound = []
                    return held.replay_calls(flat)
            with backend.cuda.device_guard(self.index):
                for position, buffer in self._static:
                    buffer[...] = flat[position]._data
                self.graph.launch()
                env = list(self._env)
                for slot in self._out_slots:
                    if env[slot] is not None:
                        env[slot] = env[slot].copy()
            self.launches += 1
        return held.rebuild(env, flat)

    def _capture(self, flat) -> None:
        held = self.held
        env = [None] * held.nslots
        static = []
        with backend.cuda.device_guard(self.index):
            for slot, position in held.inputs:
                if env[slot] is None:
                    buffer = flat[position]._data.copy()
                    env[slot] = buffer
                    static.append((position, buffer))
        bound = []
        for slot, t, _, _, _, _ in held.externals:
            env[slot] = t._data
            bound.append((t, t._data))
        calls = held.calls

        def run(env):
            for call in calls:
                call(env)
        graph = backend.cuda.CapturedGraph(run, env, self.index)
        self._env, self._static, self._bound = env, static, bound
        self.graph = graph


def _result_slots(template) -> list:
    """The env slots a result template reads (those results are copied out per launch)."""
    slots, stack = [], [template]
    while stack:
        t = stack.pop()
        kind = t[0]
        if kind == "t":
            slots.append(t[1])
        elif kind == "seq" or kind == "dict":
            stack.extend(t[2])
    return slots
