"""Per-op overhead: a chain of 100 small elementwise ops, forward and backward, timed for
ember and PyTorch in the same run (CPU; CUDA too where available).

    python bench/ops_overhead.py [--size 10] [--repeats 200] [--device cpu]

Prints a markdown table of microseconds per op and the ember/PyTorch ratio.
"""
from __future__ import annotations

import argparse
import statistics
import time

from _threads import limit_threads, torch_threads

OPS_PER_CHAIN = 100


def chain(lib, x):
    y = x
    for i in range(OPS_PER_CHAIN // 4):
        y = y * 1.0001
        y = y + 0.5
        y = y.tanh()
        y = y - 0.25
    return y.sum()


def measure(lib, size: int, repeats: int, device: str, backward: bool):
    """Median microseconds per op over ``repeats`` chains (after warm-up)."""
    x = lib.ones(size, device=device, requires_grad=True)
    sync = (lambda: lib.cuda.synchronize()) if device != "cpu" else (lambda: None)
    for _ in range(20):
        out = chain(lib, x)
        if backward:
            out.backward()
    sync()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = chain(lib, x)
        if backward:
            out.backward()
        sync()
        samples.append((time.perf_counter() - start) / (OPS_PER_CHAIN + 1) * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10, help="elements per tensor")
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0,
                        help="BLAS and PyTorch threads (0 = their defaults)")
    args = parser.parse_args()
    limit_threads(args.threads)

    import ember

    libraries = [("ember", ember)]
    try:
        import torch

        torch_threads(torch, args.threads)
        libraries.append(("PyTorch " + torch.__version__.split("+")[0], torch))
    except ImportError:
        print("PyTorch is not installed: ember's figures only")

    rows = {}
    for name, lib in libraries:
        rows[name] = (measure(lib, args.size, args.repeats, args.device, False),
                      measure(lib, args.size, args.repeats, args.device, True))
    print(f"\nchain of {OPS_PER_CHAIN} elementwise ops on {args.size} elements, device "
          f"{args.device}, {args.threads or 'default'} threads, median of {args.repeats} runs "
          "(µs per op)\n")
    print("| library | forward µs/op | forward+backward µs/op |")
    print("|---|---|---|")
    for name, (forward, total) in rows.items():
        print(f"| {name} | {forward:.2f} | {total:.2f} |")
    if len(rows) == 2:
        (_, (ef, et)), (_, (tf, tt)) = rows.items()
        print(f"| ratio ember/PyTorch | {ef / tf:.2f} | {et / tt:.2f} |")


if __name__ == "__main__":
    main()
