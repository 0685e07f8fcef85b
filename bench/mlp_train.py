"""Training-step throughput: an MLP 784-512-512-10 (ReLU), cross-entropy, SGD with
momentum, batch 128, on random data; ember and PyTorch in the same run.

    python bench/mlp_train.py [--steps 200] [--device cpu] [--threads N] [--compile]

Prints a markdown table of steps per second and the ember/PyTorch ratio. ``--compile``
adds ember's step under ``ember.compile`` and its ratio to ember eager.
"""
from __future__ import annotations

import argparse
import statistics
import time

from _threads import limit_threads, torch_threads


def build(lib, device):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10)).to(device)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return model, nn.CrossEntropyLoss(), optimizer


def steps_per_second(lib, device: str, steps: int, batches, compiled: bool = False) -> float:
    """Median training steps per second over 5 timed rounds, after a warm-up."""
    model, loss_fn, optimizer = build(lib, device)
    data = [(lib.tensor(x, device=device), lib.tensor(y, device=device)) for x, y in batches]
    sync = (lambda: lib.cuda.synchronize()) if device != "cpu" else (lambda: None)

    def step(x, y):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()

    if compiled:
        step = lib.compile(step)
    for x, y in data[:10]:  # warm-up: allocator, caches, first-call costs
        step(x, y)
    sync()
    rates = []
    for _ in range(5):
        start = time.perf_counter()
        for i in range(steps // 5):
            step(*data[i % len(data)])
        sync()
        rates.append((steps // 5) / (time.perf_counter() - start))
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0,
                        help="BLAS and PyTorch threads (0 = their defaults)")
    parser.add_argument("--compile", action="store_true",
                        help="also time ember's step under ember.compile")
    args = parser.parse_args()
    limit_threads(args.threads)

    import numpy as np

    import ember

    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((128, 784)).astype(np.float32),
                rng.integers(0, 10, 128)) for _ in range(20)]
    results = {"ember": steps_per_second(ember, args.device, args.steps, batches)}
    if args.compile:
        results["ember (compile)"] = steps_per_second(ember, args.device, args.steps, batches,
                                                      compiled=True)
    try:
        import torch

        torch_threads(torch, args.threads)
        results["PyTorch " + torch.__version__.split("+")[0]] = steps_per_second(
            torch, args.device, args.steps, batches)
    except ImportError:
        print("PyTorch is not installed: ember's figure only")
    threads = args.threads or "default"
    print(f"\nMLP 784-512-512-10, batch 128, SGD momentum 0.9, device {args.device}, "
          f"{threads} threads, median of 5 x {args.steps // 5} steps\n")
    print("| library | steps/s |")
    print("|---|---|")
    for name, rate in results.items():
        print(f"| {name} | {rate:.1f} |")
    names = list(results)
    torch_name = next((n for n in names if n.startswith("PyTorch")), None)
    if torch_name is not None:
        print(f"| ratio ember/PyTorch | {results['ember'] / results[torch_name]:.2f} |")
        if args.compile:
            print(f"| ratio ember (compile)/PyTorch | "
                  f"{results['ember (compile)'] / results[torch_name]:.2f} |")
    if args.compile:
        print(f"| ratio ember (compile)/ember | "
              f"{results['ember (compile)'] / results['ember']:.2f} |")


if __name__ == "__main__":
    main()
