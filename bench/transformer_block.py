"""One transformer encoder layer (d_model 256, 8 heads, feed-forward 1024, dropout 0,
batch-first), sequence 128, batch 16, forward and backward; ember and PyTorch in the same
run, on the same data.

    python bench/transformer_block.py [--repeats 7] [--threads 1] [--device cuda]
"""
from __future__ import annotations

import _harness as h

D_MODEL, HEADS, SEQ, BATCH = 256, 8, 128, 16


def case_for(lib, x, device):
    layer = lib.nn.TransformerEncoderLayer(D_MODEL, HEADS, dim_feedforward=4 * D_MODEL,
                                           dropout=0.0, batch_first=True).to(device)
    inputs = lib.tensor(x, device=device, requires_grad=True)

    def step():
        layer.zero_grad()
        inputs.grad = None
        layer(inputs).sum().backward()

    return {"transformer_block fwd+bwd": h.Case(step)}


def main() -> None:
    args = h.parser(__doc__.splitlines()[0], repeats=7).parse_args()
    np, libs = h.load(args)
    x = np.random.default_rng(0).standard_normal((BATCH, SEQ, D_MODEL)).astype(np.float32)
    cases = {name: case_for(lib, x, args.device) for name, lib in libs.items()}
    h.main("transformer_block", f"encoder layer d_model {D_MODEL}, {HEADS} heads, sequence "
           f"{SEQ}, batch {BATCH}, forward+backward", args, cases,
           sync=h.sync_for(libs, args.device))


if __name__ == "__main__":
    main()
