"""Per-op overhead: a chain of 101 small ops (20 x [+ c, * 0.5, ** 2, exp, tanh], then sum)
on a (16,) float32 tensor, without grad and forward+backward, and the whole small call
``(x * 0.5).sum().backward()``; ember and PyTorch interleaved in the same run.

    python bench/ops_overhead.py [--repeats 15] [--threads 1] [--device cuda]

Times are per call (the chain cases per op: divide by 101 is done for you in µs/op)."""
from __future__ import annotations

import _harness as h

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


def cases_for(lib, device):
    x = (lib.ones(16, device=device) * 0.1).requires_grad_(True)

    def forward():
        with lib.no_grad():
            chain(x)

    def both():
        chain(x).backward()

    def small():
        (x * 0.5).sum().backward()

    return {"chain no_grad (per op)": h.Case(forward, work=OPS_PER_CHAIN, unit="ops",
                                            inner=20),
            "chain fwd+bwd (per op)": h.Case(both, work=OPS_PER_CHAIN, unit="ops", inner=10),
            "(x * 0.5).sum().backward()": h.Case(small, inner=100)}


def main() -> None:
    args = h.parser(__doc__.splitlines()[0], repeats=15).parse_args()
    _, libs = h.load(args)
    cases = {name: cases_for(lib, args.device) for name, lib in libs.items()}
    h.main("ops_overhead", "101-op chains on (16,) float32 and a small whole call", args,
           cases, sync=h.sync_for(libs, args.device))


if __name__ == "__main__":
    main()
