"""Activation checkpointing on a deep chain: peak memory and time of one forward+backward,
plain and with ``checkpoint_sequential`` (ember on the CPU).

    python bench/checkpoint_memory.py [--layers 64] [--width 256] [--batch 1024]
                                      [--segments 8] [--repeats 5] [--threads N]

The deep chain is ``layers`` blocks of Linear(width, width) + Tanh. Peak memory is what
tracemalloc sees NumPy allocate during the step (parameters and .grad buffers exist
before it);
time is the median of ``repeats`` steps, measured apart from the memory runs.
Prints a markdown table.
"""
from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc

from _threads import limit_threads


def deep_chain(ember, layers: int, width: int):
    blocks = []
    for _ in range(layers):
        blocks += [ember.nn.Linear(width, width), ember.nn.Tanh()]
    return ember.nn.Sequential(*blocks)


def step(ember, model, x, segments: int | None) -> None:
    from ember.utils.checkpoint import checkpoint_sequential

    model.zero_grad(set_to_none=False)  # .grad kept: the step allocates activations only
    out = model(x) if segments is None else checkpoint_sequential(model, segments, x)
    out.sum().backward()


def peak_bytes(ember, model, x, segments) -> int:
    step(ember, model, x, segments)  # warm-up: .grad buffers exist from here on
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    step(ember, model, x, segments)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def seconds(ember, model, x, segments, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step(ember, model, x, segments)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(layers=64, width=256, batch=1024, segments=8, repeats=5, time_it=True) -> dict:
    import ember

    ember.manual_seed(0)
    model = deep_chain(ember, layers, width)
    x = ember.randn(batch, width, requires_grad=True)
    result = {}
    for name, segs in (("plain", None), ("checkpointed", segments)):
        result[name] = {"peak": peak_bytes(ember, model, x, segs)}
        if time_it:
            result[name]["seconds"] = seconds(ember, model, x, segs, repeats)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=64)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--segments", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    options = parser.parse_args()
    limit_threads(options.threads)
    result = measure(options.layers, options.width, options.batch, options.segments,
                     options.repeats)
    plain, checked = result["plain"], result["checkpointed"]
    print(f"deep chain: {options.layers} x (Linear({options.width}, {options.width}) + Tanh), "
          f"batch {options.batch}, float32; checkpoint_sequential with {options.segments} "
          "segments\n")
    print("| run | peak memory | time per step |")
    print("|---|---|---|")
    for name, row in result.items():
        print(f"| {name} | {row['peak'] / 2 ** 20:.1f} MiB | {row['seconds'] * 1e3:.1f} ms |")
    print(f"| ratio | {plain['peak'] / checked['peak']:.2f}x less | "
          f"{checked['seconds'] / plain['seconds']:.2f}x the time |")


if __name__ == "__main__":
    main()
