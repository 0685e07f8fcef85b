"""Forward+backward of the fused layer nodes: BatchNorm2d (64 channels, 32x64x16x16),
GroupNorm (8 groups, same input), bilinear x2 upsampling (8x16x32x32), PixelShuffle(2),
and a training step of a small CNN with batch norm (conv-BN-ReLU x2, pool, linear) on
3x32x32 inputs, batch 32. ember and PyTorch in the same run, on the same data.

    python bench/norm_layers.py [--repeats 7] [--threads 1] [--device cuda]
"""
from __future__ import annotations

import _harness as h


def model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32),
                         nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


def layer_case(lib, layer, x, device):
    layer = layer.to(device)
    tx = lib.tensor(x, device=device, requires_grad=True)

    def step():
        tx.grad = None
        layer(tx).sum().backward()

    return h.Case(step, inner=5)


def main() -> None:
    args = h.parser(__doc__.splitlines()[0], repeats=7).parse_args()
    np, libs = h.load(args)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64, 16, 16)).astype(np.float32)
    image = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)
    batches = [(rng.standard_normal((32, 3, 32, 32)).astype(np.float32),
                rng.integers(0, 10, 32)) for _ in range(4)]
    cases = {}
    for name, lib in libs.items():
        lib.manual_seed(0)
        nn = lib.nn
        cases[name] = {
            "BatchNorm2d fwd+bwd": layer_case(lib, nn.BatchNorm2d(64), x, args.device),
            "GroupNorm fwd+bwd": layer_case(lib, nn.GroupNorm(8, 64), x, args.device),
            "Upsample bilinear x2 fwd+bwd": layer_case(
                lib, nn.Upsample(scale_factor=2, mode="bilinear"), image, args.device),
            "PixelShuffle(2) fwd+bwd": layer_case(lib, nn.PixelShuffle(2), x, args.device),
            "BN CNN train": h.training(lib, model(lib), nn.CrossEntropyLoss(), batches,
                                       args.device),
        }
    h.main("norm_layers", "batch/group norm, upsampling, pixel shuffle; a BN CNN step",
           args, cases, sync=h.sync_for(libs, args.device))


if __name__ == "__main__":
    main()
