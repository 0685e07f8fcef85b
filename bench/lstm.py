"""One LSTM layer (input 256, hidden 256), sequence 64, batch 32, forward and backward;
ember and PyTorch in the same run, on the same data.

    python bench/lstm.py [--repeats 7] [--threads 1] [--device cuda]
"""
from __future__ import annotations

import _harness as h

HIDDEN, SEQ, BATCH = 256, 64, 32


def case_for(lib, x, device):
    lstm = lib.nn.LSTM(HIDDEN, HIDDEN).to(device)
    inputs = lib.tensor(x, device=device, requires_grad=True)

    def step():
        lstm.zero_grad()
        inputs.grad = None
        output, _ = lstm(inputs)
        output.sum().backward()

    return {"lstm fwd+bwd": h.Case(step)}


def main() -> None:
    args = h.parser(__doc__.splitlines()[0], repeats=7).parse_args()
    np, libs = h.load(args)
    x = np.random.default_rng(0).standard_normal((SEQ, BATCH, HIDDEN)).astype(np.float32)
    cases = {name: case_for(lib, x, args.device) for name, lib in libs.items()}
    h.main("lstm", f"one layer, hidden {HIDDEN}, sequence {SEQ}, batch {BATCH}, "
           "forward+backward", args, cases, sync=h.sync_for(libs, args.device))


if __name__ == "__main__":
    main()
