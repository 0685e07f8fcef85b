"""Training-step throughput of a small CNN: conv3x3(32)-ReLU-maxpool-conv3x3(64)-ReLU-
maxpool-linear(10) on 1x28x28 inputs, batch 64, cross-entropy, SGD with momentum; also
one conv2d forward+backward (64x32x28x28, 32->32, 3x3, padding 1). ember and PyTorch in
the same run, on the same data.

    python bench/cnn_train.py [--repeats 7] [--threads 1] [--device cuda]
"""
from __future__ import annotations

import _harness as h


def model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64 * 7 * 7, 10))


def conv_case(lib, x, w, b, device):
    tx = lib.tensor(x, device=device, requires_grad=True)
    tw = lib.tensor(w, device=device, requires_grad=True)
    tb = lib.tensor(b, device=device, requires_grad=True)

    def step():
        tx.grad = tw.grad = tb.grad = None
        lib.nn.functional.conv2d(tx, tw, tb, padding=1).sum().backward()

    return h.Case(step, inner=2)


def main() -> None:
    args = h.parser(__doc__.splitlines()[0], repeats=7).parse_args()
    np, libs = h.load(args)
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((64, 1, 28, 28)).astype(np.float32),
                rng.integers(0, 10, 64)) for _ in range(8)]
    x = rng.standard_normal((64, 32, 28, 28)).astype(np.float32)
    w = (rng.standard_normal((32, 32, 3, 3)) / 17).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    cases = {}
    for name, lib in libs.items():
        lib.manual_seed(0)
        cases[name] = {"cnn_train": h.training(lib, model(lib), lib.nn.CrossEntropyLoss(),
                                               batches, args.device),
                       "conv2d fwd+bwd": conv_case(lib, x, w, b, args.device)}
    h.main("cnn_train", "conv32-pool-conv64-pool-linear on 1x28x28, batch 64, SGD momentum",
           args, cases, sync=h.sync_for(libs, args.device))


if __name__ == "__main__":
    main()
