"""Per-op overhead: a chain of 100 small elementwise ops, forward and backward, timed for
ember and PyTorch in the same run (CPU; CUDA too where available).

    python bench/ops_overhead.py [--size 16] [--repeats 200] [--device cpu] [--threads N]
                                 [--compile]

The chain is 20 repeats of ``[+ c, * 0.5, ** 2, exp, tanh]`` on a float32 tensor, then
``sum()``: additions are cheap everywhere, so the chain carries ops whose backward needs
saved values (mul by a constant, pow, exp, tanh). Also timed: the whole call
``(x * 0.5).sum().backward()``, where fixed per-call costs dominate. Prints markdown tables
of microseconds per op and the ember/PyTorch ratios; timings interleave the libraries.
``--compile`` times ember's calls under ``ember.compile`` against PyTorch eager.
"""
from __future__ import annotations

import argparse
import statistics
import time

from _threads import limit_threads, torch_threads

REPEATS_PER_CHAIN = 20
OPS_PER_CHAIN = REPEATS_PER_CHAIN * 5 + 1  # the sum included


def chain(x):
    y = x
    for _ in range(REPEATS_PER_CHAIN):
        y = y + 0.25
        y = y * 0.5
        y = y ** 2
        y = y.exp()
        y = y.tanh()
    return y.sum()


def small_call(x):
    (x * 0.5).sum().backward()


def _time(fn, repeats: int, sync) -> list:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        samples.append(time.perf_counter() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=16, help="elements per tensor")
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0,
                        help="BLAS and PyTorch threads (0 = their defaults)")
    parser.add_argument("--compile", action="store_true",
                        help="time ember under ember.compile (PyTorch stays eager)")
    args = parser.parse_args()
    limit_threads(args.threads)

    import ember

    libraries = [("ember (compile)" if args.compile else "ember", ember)]
    try:
        import torch

        torch_threads(torch, args.threads)
        libraries.append(("PyTorch " + torch.__version__.split("+")[0], torch))
    except ImportError:
        print("PyTorch is not installed: ember's figures only")

    work = {}
    for name, lib in libraries:
        x = lib.ones(args.size, device=args.device) * 0.1
        x.requires_grad_(True)
        sync = (lambda lib=lib: lib.cuda.synchronize()) if args.device != "cpu" else (
            lambda: None)

        def forward(lib=lib, x=x):
            with lib.no_grad():
                chain(x)

        def both(x=x):
            chain(x).backward()

        work[name] = {"forward (no_grad)": forward, "forward+backward": both,
                      "(x * 0.5).sum().backward()": lambda x=x: small_call(x), "sync": sync}
        if args.compile and lib is ember:
            for kind in ("forward (no_grad)", "forward+backward", "(x * 0.5).sum().backward()"):
                work[name][kind] = ember.compile(work[name][kind])
    kinds = ["forward (no_grad)", "forward+backward", "(x * 0.5).sum().backward()"]
    samples = {(name, kind): [] for name in work for kind in kinds}
    for _ in range(20):  # warm-up
        for name in work:
            for kind in kinds:
                work[name][kind]()
    rounds = 10
    for _ in range(rounds):  # interleaved, so drifts of the machine hit both alike
        for name in work:
            for kind in kinds:
                samples[(name, kind)] += _time(work[name][kind], args.repeats // rounds,
                                               work[name]["sync"])
    per = {key: statistics.median(v) * 1e6 for key, v in samples.items()}
    print(f"\nchain of {OPS_PER_CHAIN} ops (20 x [+ c, * 0.5, ** 2, exp, tanh], sum) on "
          f"{args.size} float32 elements, device {args.device}, "
          f"{args.threads or 'default'} threads, median of {args.repeats} runs\n")
    print("| library | forward no_grad µs/op | forward+backward µs/op | "
          "(x*0.5).sum().backward() µs |")
    print("|---|---|---|---|")
    for name in work:
        print(f"| {name} | {per[(name, kinds[0])] / OPS_PER_CHAIN:.2f} | "
              f"{per[(name, kinds[1])] / OPS_PER_CHAIN:.2f} | {per[(name, kinds[2])]:.1f} |")
    if len(work) == 2:
        e, t = list(work)
        ratios = [per[(e, k)] / per[(t, k)] for k in kinds]
        print(f"| ratio ember/PyTorch | {ratios[0]:.2f} | {ratios[1]:.2f} | {ratios[2]:.2f} |")


if __name__ == "__main__":
    main()
