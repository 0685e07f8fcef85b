"""Shared timing for the workload scripts: ember and PyTorch in one process, on the same
data, interleaved (the order alternates every repeat), after a warm-up, several repeats;
each case reports the median and the interquartile spread of both libraries.

A workload script builds, for each library, a dict of cases (name -> Case) and calls
``main``; ``--json`` prints one line ``BENCH-JSON {...}`` that bench/run_all.py reads."""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

from _threads import limit_threads, torch_threads


@dataclass
class Case:
    """One timed step. ``work`` is what one call does (steps, ops, FLOPs) and ``unit`` its
    name: the report gives work per second for rates, milliseconds per call for times."""

    step: Callable[[], object]
    kind: str = "time"                      # "time" (lower is better) or "rate"
    work: float = 1.0
    unit: str = "steps"
    inner: int = 1                          # calls per timed sample
    extra: dict = field(default_factory=dict)
    # With --compile: given ember.compile, the step to time instead (None: compile(step)).
    # A step that picks its data itself passes the data as arguments to the compiled part,
    # so each replay reads the new data.
    compiled: Callable | None = None


EAGER = "ember eager"  # ember without compile, timed beside the compiled steps


def _quartiles(values):
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return q[0], statistics.median(values), q[2]


def time_cases(cases: dict, repeats: int, warmup: int, sync=lambda: None) -> dict:
    """cases: {library: {case: Case}}. Returns {case: {library: seconds per call list}}."""
    libraries = list(cases)
    names = list(cases[libraries[0]])
    samples: dict = {name: {lib: [] for lib in libraries} for name in names}
    for name in names:
        for lib in libraries:
            for _ in range(warmup):
                cases[lib][name].step()
            sync()
        for r in range(repeats):
            order = libraries if r % 2 == 0 else libraries[::-1]
            for lib in order:
                case = cases[lib][name]
                start = time.perf_counter()
                for _ in range(case.inner):
                    case.step()
                sync()
                samples[name][lib].append((time.perf_counter() - start) / case.inner)
    return samples


def summarize(cases: dict, samples: dict, baseline: str = "torch") -> list:
    rows = []
    libraries = list(cases)
    for name, by_lib in samples.items():
        row = {"case": name}
        for lib in libraries:
            case = cases[lib][name]
            q1, med, q3 = _quartiles(by_lib[lib])
            row[lib] = {"median_s": med, "spread": (q3 - q1) / med if med else 0.0,
                        "rate": case.work / med if med else 0.0, **case.extra}
            row["kind"], row["unit"] = case.kind, case.unit
        row["baseline"] = baseline
        for key, other in (("ratio", baseline), ("ratio_eager", EAGER)):
            if other in row:
                e, t = row["ember"], row[other]
                row[key] = (e["rate"] / t["rate"] if row["kind"] == "rate"
                            else e["median_s"] / t["median_s"])
        rows.append(row)
    return rows


def _figure(row, r) -> str:
    if row["kind"] == "rate":
        return f"{r['rate']:.4g} {row['unit']}/s"
    if row["unit"] != "steps":
        return f"{1e6 / r['rate']:.3g} µs/{row['unit'].rstrip('s')}"
    return f"{r['median_s'] * 1e3:.3g} ms"


def parser(description: str, repeats: int) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--threads", type=int, default=0,
                   help="BLAS and PyTorch threads (0 = their defaults)")
    p.add_argument("--repeats", type=int, default=repeats)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--device", default="cpu")
    p.add_argument("--json", action="store_true", help="print a BENCH-JSON line")
    p.add_argument("--compile", action="store_true",
                   help="time ember's steps through ember.compile (PyTorch stays eager)")
    p.add_argument("--against-eager", action="store_true",
                   help="with --compile (implied): also time ember eager in the same run, "
                        "interleaved, and report compiled / eager")
    p.add_argument("--mode", default=None,
                   help="with --compile: ember.compile's mode (reduce-overhead: CUDA graphs)")
    p.add_argument("--no-gc-freeze", action="store_true",
                   help="leave the import-time heap in the garbage collector's full passes")
    return p


def load(args):
    """Set the thread count (re-executing before NumPy loads), import the libraries."""
    limit_threads(args.threads)
    import numpy

    import ember
    libs = {"ember": ember}
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: ember's figures only", file=sys.stderr)
    else:
        torch_threads(torch, args.threads)
        libs["torch"] = torch
    if not args.no_gc_freeze:
        # What the imports left (PyTorch's objects are most of it) stays out of the cyclic
        # collector's full passes; the objects the workloads make are collected as usual.
        gc.collect()
        gc.freeze()
    return numpy, libs


def sync_for(libs, device):
    if device == "cpu":
        return lambda: None
    return lambda: [lib.cuda.synchronize() for lib in libs.values()]


def training(lib, model, loss_fn, batches, device="cpu", lr=0.01) -> Case:
    """One SGD-with-momentum training step per call, cycling through ``batches``."""
    model = model.to(device)
    optimizer = lib.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    data = [(lib.tensor(x, device=device), lib.tensor(y, device=device)) for x, y in batches]
    position = [0]

    def train(x, y):
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()

    def over_batches(train):
        def step():
            x, y = data[position[0] % len(data)]
            position[0] += 1
            train(x, y)
        return step

    return Case(over_batches(train), kind="rate", unit="steps", inner=5,
                compiled=lambda compile: over_batches(compile(train)))


def main(workload: str, description: str, args, cases: dict, extra: dict | None = None,
         sync=None, baseline: str = "torch"):
    """Time ``cases`` ({library: {case: Case}}), print a markdown table, and with --json the
    machine-readable line."""
    if getattr(args, "against_eager", False):
        args.compile = True
    if getattr(args, "compile", False) and "ember" in cases:
        import functools

        import ember

        compile = functools.partial(ember.compile, mode=getattr(args, "mode", None))
        eager = {}
        for name, case in cases["ember"].items():
            eager[name] = Case(case.step, case.kind, case.work, case.unit, case.inner,
                               case.extra)
            case.step = compile(case.step) if case.compiled is None else \
                case.compiled(compile)
        if getattr(args, "against_eager", False):
            cases = {"ember": cases["ember"], EAGER: eager,
                     **{k: v for k, v in cases.items() if k != "ember"}}
        workload += " (ember compiled" + (f", mode={args.mode})" if getattr(
            args, "mode", None) else ")")
    libs = list(cases)
    samples = time_cases(cases, args.repeats, args.warmup, sync or (lambda: None))
    rows = summarize(cases, samples, baseline)
    threads = args.threads or f"default ({os.cpu_count()} cores)"
    print(f"\n{workload}: {description}; device {args.device}, threads {threads}, "
          f"median of {args.repeats}\n")
    against = EAGER in libs
    print("| case | " + " | ".join(libs) + f" | ember / {baseline} |" +
          (" compiled / eager |" if against else ""))
    print("|---|" + "---|" * len(libs) + "---|" + ("---|" if against else ""))
    for row in rows:
        cells = []
        for lib in libs:
            r = row[lib]
            figure = _figure(row, r)
            cells.append(f"{figure} (±{r['spread'] * 50:.0f}%)")
        ratio = f"{row['ratio']:.2f}x" if "ratio" in row else "-"
        line = f"| {row['case']} | " + " | ".join(cells) + f" | {ratio} |"
        if against:
            line += f" {row['ratio_eager']:.2f}x |"
        print(line)
    if args.json:
        print("BENCH-JSON " + json.dumps({"workload": workload, "description": description,
                                          "threads": args.threads, "device": args.device,
                                          "rows": rows, "extra": extra or {}}))
    return rows
