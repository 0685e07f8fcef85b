"""Dense float32 matrix products, 1024 and 2048 square: GFLOP/s of ember (``a @ b`` on
tensors) against NumPy's own sgemm on the same arrays (the bound ember's CPU path can
reach), and PyTorch's, interleaved in the same run.

    python bench/matmul.py [--repeats 7] [--threads 1]
"""
from __future__ import annotations

import _harness as h


def main() -> None:
    args = h.parser(__doc__.splitlines()[0], repeats=7).parse_args()
    np, libs = h.load(args)
    rng = np.random.default_rng(0)
    # on the CPU the bound is NumPy's own sgemm; on a GPU, PyTorch's
    baseline = "numpy" if args.device == "cpu" else "torch"
    cases: dict = {"ember": {}, "numpy": {}} if baseline == "numpy" else {"ember": {}}
    if "torch" in libs:
        cases["torch"] = {}
    for n in (1024, 2048):
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        flops = 2.0 * n ** 3 / 1e9
        inner = 4 if n == 1024 else 1
        operands = {"numpy": (a, b)}
        for name, lib in libs.items():
            operands[name] = (lib.tensor(a, device=args.device), lib.tensor(b, device=args.device))
        for name, (x, y) in operands.items():
            if name in cases:
                cases[name][f"matmul {n}"] = h.Case(lambda x=x, y=y: x @ y, kind="rate",
                                                    work=flops, unit="GFLOP", inner=inner)
    rows = h.main("matmul", "float32 square products, GFLOP/s", args, cases,
                  sync=h.sync_for(libs, args.device), baseline=baseline)
    return rows


if __name__ == "__main__":
    main()
