"""``python -m ember.utils.benchmark matmul``: where does the GPU start to beat the CPU?

    python -m ember.utils.benchmark matmul                    # 64 .. 4096, every device
    python -m ember.utils.benchmark matmul --sizes 256,1024 --include-transfer
    python -m ember.utils.benchmark matmul --dtype float64 --threads 1 --device cpu
"""
from __future__ import annotations

import argparse
import sys


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        sizes = []
    if not sizes or any(size < 1 for size in sizes):
        raise argparse.ArgumentTypeError(
            f"expected positive integers separated by commas (like 64,256,1024), got {text!r}")
    return sizes


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not value > 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return value
    return parse


def main(argv: list[str] | None = None) -> int:
    from .sweep import matmul_sweep

    parser = argparse.ArgumentParser(
        prog="python -m ember.utils.benchmark",
        description="Honest CPU-against-GPU timings with ember's Timer.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    matmul = commands.add_parser(
        "matmul", help="time square matrix products on every device",
        description="Time n x n @ n x n on the CPU and on every GPU, and say from which n "
                    "the GPU wins. The GPU is waited for around each timed block; the "
                    "first product and the CUDA context are timed apart.")
    matmul.add_argument("--sizes", type=_sizes, default=None,
                        help="comma-separated n (default: 64,128,...,4096, or up to 2048 "
                             "when only the CPU is timed)")
    matmul.add_argument("--device", action="append", dest="devices", metavar="DEVICE",
                        help="a device to time (cpu, cuda, cuda:1); repeat it for several "
                             "(default: the CPU and every GPU)")
    matmul.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    matmul.add_argument("--include-transfer", action="store_true",
                        help="also time each GPU with the host-device copies included")
    matmul.add_argument("--min-run-time", type=_positive(float), default=0.2,
                        metavar="SECONDS", help="measuring time per size and device "
                                                "(default: %(default)s)")
    matmul.add_argument("--threads", type=_positive(int), default=None,
                        help="BLAS threads on the CPU (default: BLAS's own count)")
    matmul.add_argument("--compare", action="store_true",
                        help="also print the medians as a torch.utils.benchmark Compare table")
    matmul.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)

    import ember

    progress = None if args.quiet else (lambda text: print(text, file=sys.stderr, flush=True))
    try:
        sweep = matmul_sweep(sizes=args.sizes, devices=args.devices,
                             dtype=getattr(ember, args.dtype),
                             include_transfer=args.include_transfer,
                             min_run_time=args.min_run_time, num_threads=args.threads,
                             progress=progress)
    except (RuntimeError, ImportError) as error:
        parser.exit(2, f"{parser.prog} matmul: error: {error}\n")
    print(sweep.report(), end="")
    if args.compare:
        print()
        sweep.compare().print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
