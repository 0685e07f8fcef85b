"""conv2d forward + backward, ember against PyTorch on the CPU, in the same run.

A batch of 64 x 32 x 28 x 28 (float32) through a 32 -> 32, 3x3, padding 1 convolution with
bias; each iteration runs the forward, sums the output and runs backward for the input,
weight and bias gradients. Prints milliseconds per iteration and the ratio as a markdown
table row, once with the default thread count and once with one BLAS / PyTorch thread
(set before NumPy is imported, in a subprocess).

    .venv/bin/python bench/conv2d.py            # both rows
    .venv/bin/python bench/conv2d.py --iterations 20
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

SHAPE = dict(batch=64, channels=32, out_channels=32, size=28, kernel=3, padding=1)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def _time(step, iterations: int, warmup: int = 2) -> float:
    """Median milliseconds per call (robust to a noisy shared machine)."""
    for _ in range(warmup):
        step()
    samples = []
    for _ in range(iterations):
        start = time.perf_counter()
        step()
        samples.append(time.perf_counter() - start)
    samples.sort()
    return samples[len(samples) // 2] * 1000.0


def measure(iterations: int, threads: int | None) -> tuple[float, float]:
    import numpy as np
    import torch

    import ember

    if threads is not None:
        torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    b, c, o, s, k, p = (SHAPE[key] for key in
                        ("batch", "channels", "out_channels", "size", "kernel", "padding"))
    x = rng.standard_normal((b, c, s, s)).astype(np.float32)
    w = (rng.standard_normal((o, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)

    ex = ember.tensor(x, requires_grad=True)
    ew = ember.tensor(w, requires_grad=True)
    eb = ember.tensor(bias, requires_grad=True)

    def ember_step():
        ex.grad = ew.grad = eb.grad = None
        ember.nn.functional.conv2d(ex, ew, eb, padding=p).sum().backward()

    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    tb = torch.tensor(bias, requires_grad=True)

    def torch_step():
        tx.grad = tw.grad = tb.grad = None
        torch.nn.functional.conv2d(tx, tw, tb, padding=p).sum().backward()

    ember_step()
    torch_step()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy(), rtol=1e-3, atol=1e-2)
    return _time(ember_step, iterations), _time(torch_step, iterations)


def row(label: str, ember_ms: float, torch_ms: float) -> str:
    return (f"| conv2d fwd+bwd 64x32x28x28, 32->32 3x3 pad 1 | {label} | {ember_ms:.1f} | "
            f"{torch_ms:.1f} | {ember_ms / torch_ms:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--threads", type=int, default=None,
                        help="run one measurement with this many threads (used internally)")
    args = parser.parse_args()
    if args.threads is not None:
        ember_ms, torch_ms = measure(args.iterations, args.threads)
        print(f"{ember_ms} {torch_ms}")
        return

    print("| benchmark | threads | ember (ms/iter) | PyTorch (ms/iter) | ember / PyTorch |")
    print("|---|---|---|---|---|")
    ember_ms, torch_ms = measure(args.iterations, None)
    print(row(f"default ({os.cpu_count()} cores)", ember_ms, torch_ms), flush=True)
    environment = dict(os.environ, **{name: "1" for name in THREAD_VARIABLES})
    result = subprocess.run([sys.executable, __file__, "--iterations", str(args.iterations),
                             "--threads", "1"], env=environment, capture_output=True,
                            text=True, check=True)
    ember_ms, torch_ms = (float(v) for v in result.stdout.split()[-2:])
    print(row("1", ember_ms, torch_ms))


if __name__ == "__main__":
    main()
