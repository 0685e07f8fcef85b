"""Scalar graphs: 100 scalar leaves and 5,000 terms ``y = y + a_i * b_i`` (a_i, b_i drawn
from the leaves), built and backpropagated, for ember and PyTorch in the same run.

    python bench/scalar_graph.py [--terms 5000] [--repeats 20] [--threads N] [--compile]

Every node holds one number, so this measures the graph machinery alone: node creation,
the engine's ordering and gradient routing. Prints milliseconds per build+backward and
the ember/PyTorch ratio. ``--compile`` times ember's call under ``ember.compile``
(recorded once, then replayed) against PyTorch eager.
"""
from __future__ import annotations

import argparse
import random
import statistics
import time

from _threads import limit_threads, torch_threads

LEAVES = 100


def build_and_backward(lib, leaves, pairs):
    y = leaves[0] * 0.0
    for i, j in pairs:
        y = y + leaves[i] * leaves[j]
    y.backward()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--terms", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--threads", type=int, default=0)
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

    rng = random.Random(0)
    values = [rng.uniform(-1, 1) for _ in range(LEAVES)]
    pairs = [(rng.randrange(LEAVES), rng.randrange(LEAVES)) for _ in range(args.terms)]
    leaves = {name: [lib.tensor(v, requires_grad=True) for v in values]
              for name, lib in libraries}
    samples = {name: [] for name, _ in libraries}
    work = {name: (lambda lib=lib, name=name: build_and_backward(lib, leaves[name], pairs))
            for name, lib in libraries}
    if args.compile:
        name = libraries[0][0]
        work[name] = ember.compile(work[name])
    for _ in range(2):  # warm-up
        for name, lib in libraries:
            work[name]()
    for _ in range(args.repeats):
        for name, lib in libraries:
            for leaf in leaves[name]:
                leaf.grad = None
            start = time.perf_counter()
            work[name]()
            samples[name].append(time.perf_counter() - start)
    # the gradients must agree, or the timing means nothing
    if len(libraries) == 2:
        (e, _), (t, _) = libraries
        for a, b in zip(leaves[e], leaves[t]):
            assert abs(a.grad.item() - b.grad.item()) <= 1e-4 * (1 + abs(b.grad.item()))
    print(f"\n{LEAVES} scalar leaves, {args.terms} terms y = y + a_i * b_i, build + backward, "
          f"{args.threads or 'default'} threads, median of {args.repeats} runs\n")
    print("| library | ms per build+backward | spread (IQR) ms |")
    print("|---|---|---|")
    med = {}
    for name in samples:
        s = sorted(samples[name])
        med[name] = statistics.median(s) * 1e3
        q1, q3 = s[len(s) // 4] * 1e3, s[(3 * len(s)) // 4] * 1e3
        print(f"| {name} | {med[name]:.1f} | {q3 - q1:.2f} |")
    if len(med) == 2:
        a, b = med.values()
        print(f"| ratio ember/PyTorch | {a / b:.2f} | |")


if __name__ == "__main__":
    main()
