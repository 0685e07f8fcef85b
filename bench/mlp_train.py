"""Training-step throughput: an MLP 784-512-512-10 (ReLU), cross-entropy, SGD with
momentum 0.9, batch 128, on random data; ember and PyTorch in the same run.

    python bench/mlp_train.py [--repeats 7] [--threads 1] [--device cuda]
"""
from __future__ import annotations

import _harness as h


def model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def main() -> None:
    args = h.parser(__doc__.splitlines()[0], repeats=7).parse_args()
    np, libs = h.load(args)
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((128, 784)).astype(np.float32),
                rng.integers(0, 10, 128)) for _ in range(8)]
    cases = {}
    for name, lib in libs.items():
        lib.manual_seed(0)
        cases[name] = {"mlp_train": h.training(lib, model(lib), lib.nn.CrossEntropyLoss(),
                                               batches, args.device)}
    h.main("mlp_train", "784-512-512-10 ReLU, cross-entropy, SGD momentum, batch 128", args,
           cases, sync=h.sync_for(libs, args.device))


if __name__ == "__main__":
    main()
