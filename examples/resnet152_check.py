"""The "152-layer" lesson: build a ResNet-152-shaped network with ember (bottleneck blocks
[3, 8, 36, 3]), run it forward and backward, and check the gradients of a few parameters
deep in the network against central finite differences.

    python examples/resnet152_check.py [--device cuda] [--samples 5] [--plot resnet.png]

Weighted layers: 1 stem conv + 50 bottleneck blocks x 3 convs + 1 fc = 152 (the 1x1
projection shortcuts, which ResNet's count leaves out, are reported separately). The widths
are narrow (bottleneck widths 2/2/4/4, expansion 4) and the input tiny (2x3x16x16) so that
the check runs in seconds, in float64 so that finite differences are accurate.

BatchNorm runs in training mode (batch statistics), which keeps activations normalized
through 50 residual blocks; the loss is then a deterministic function of the parameters
(the running-statistics updates do not feed back into training-mode outputs), so finite
differences apply. The loss is sum(model(x) * r) for a fixed random r. Exit status 1 when
an analytic gradient disagrees with its finite difference.

What it shows: at initialization the gradient reaching the stem is about a thousand times
larger than at the head (deep batch-normalized networks amplify gradients layer after
layer), and the loss has ReLU kinks close enough to the stem weights that a step of 1e-6
already crosses some of them: the finite differences then disagree by a few percent. So the
step is scaled per weight, h = 1e-6 / max(1, max |grad|) (about 2e-10 at the stem), which
stays inside one linear piece while float64 round-off in the loss (about 1e-15) stays far
below the change it measures.
"""
from __future__ import annotations

import sys
import time

import numpy as np
from _common import parser

import ember
from ember import nn

LAYERS = (3, 8, 36, 3)


class Bottleneck(nn.Module):
    """1x1 reduce -> 3x3 (carries the stride) -> 1x1 expand, each with BatchNorm, plus the
    identity (or a 1x1 projection when the shape changes), then ReLU."""

    expansion = 4

    def __init__(self, in_channels: int, width: int, stride: int = 1):
        super().__init__()
        out = width * self.expansion
        self.conv1 = nn.Conv2d(in_channels, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.relu = nn.ReLU()
        self.shortcut = None
        if stride != 1 or in_channels != out:
            self.shortcut = nn.Sequential(nn.Conv2d(in_channels, out, 1, stride=stride,
                                                    bias=False), nn.BatchNorm2d(out))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        identity = x if self.shortcut is None else self.shortcut(x)
        return self.relu(y + identity)


class ResNet(nn.Module):
    """Stem (3x3 conv, BN, ReLU) -> four stages of bottlenecks (strides 1, 2, 2, 2) ->
    global average pool -> fc."""

    def __init__(self, layers=LAYERS, widths=(2, 2, 4, 4), stem: int = 8,
                 num_classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, stem, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(stem), nn.ReLU())
        stages, channels = [], stem
        for i, (blocks, width) in enumerate(zip(layers, widths)):
            stage = []
            for b in range(blocks):
                stage.append(Bottleneck(channels, width, 2 if (b == 0 and i > 0) else 1))
                channels = width * Bottleneck.expansion
            stages.append(nn.Sequential(*stage))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(channels, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.pool(x).flatten(1))


def count_layers(model: nn.Module) -> tuple[int, int]:
    """(weighted layers on the main path, projection shortcuts): Conv2d and Linear modules,
    with the convs inside shortcuts counted apart as ResNet's 152 leaves them out."""
    main = shortcut = 0
    for name, module in model.named_modules():
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            if ".shortcut." in f".{name}.":
                shortcut += 1
            else:
                main += 1
    return main, shortcut


def check(device: str = "cpu", samples: int = 5, seed: int = 0, eps: float = 1e-6,
          rtol: float = 1e-4, atol: float = 1e-7, batch: int = 2, size: int = 16,
          layers=LAYERS, verbose: bool = True, train_mode: bool = True) -> dict:
    """Build, forward, backward, then compare ``samples`` gradient elements of the stem conv,
    a middle block's 3x3 conv and the fc against central differences
    (f(w + h) - f(w - h)) / (2 h), h = eps / max(1, max |grad of that weight|). Returns the counts,
the comparisons and
    ``ok``: every |analytic - numeric| <= atol + rtol * |numeric|."""
    if samples < 1:
        raise SystemExit(f"--samples must be at least 1, got {samples}")
    if not eps > 0:
        raise SystemExit(f"--eps must be positive, got {eps}")
    say = print if verbose else (lambda *a, **k: None)
    ember.manual_seed(seed)
    model = ResNet(layers).to(device=device, dtype=ember.float64)
    model.train(train_mode)
    main, shortcut = count_layers(model)
    parameters = sum(p.numel() for p in model.parameters())
    say(f"weighted layers counted from the model: {main} (stem conv + {main - 2} block convs "
        f"+ fc), plus {shortcut} projection shortcuts; {parameters} parameters")
    x = ember.randn(batch, 3, size, size, dtype=ember.float64, device=device)
    r = ember.randn(batch, 10, dtype=ember.float64, device=device)

    def loss_value() -> float:
        with ember.no_grad():
            return (model(x) * r).sum().item()

    start = time.perf_counter()
    loss = (model(x) * r).sum()
    loss.backward()
    say(f"forward + backward through {main} layers: {time.perf_counter() - start:.2f} s, "
        f"loss {loss.item():.6f}")
    middle = len(model.layer3) // 2
    targets = [("stem conv (layer 1)", model.stem[0].weight),
               (f"layer3[{middle}].conv2 (middle block)", model.layer3[middle].conv2.weight),
               ("fc (layer 152)", model.fc.weight)]
    rng = np.random.default_rng(seed)
    results, worst, ok = [], 0.0, True
    for label, weight in targets:
        flat = weight.detach().reshape(-1)   # a view: writing it perturbs the weight
        grad = weight.grad.reshape(-1)
        picks = rng.choice(flat.numel(), size=min(samples, flat.numel()), replace=False)
        step = eps / max(1.0, grad.abs().max().item())
        say(f"{label}: weight {tuple(weight.shape)}, max |grad| "
            f"{grad.abs().max().item():.3g}, step {step:.2g}")
        for i in picks.tolist():
            original = flat[i].item()
            with ember.no_grad():
                flat[i] = original + step
                plus = loss_value()
                flat[i] = original - step
                minus = loss_value()
                flat[i] = original
            numeric = (plus - minus) / (2 * step)
            analytic = grad[i].item()
            error = abs(analytic - numeric)
            relative = error / max(abs(analytic), abs(numeric), 1e-12)
            good = error <= atol + rtol * abs(numeric)
            ok &= good
            worst = max(worst, relative)
            results.append((label, i, analytic, numeric, relative, good))
            say(f"  [{i:4d}] analytic {analytic: .10e}  numeric {numeric: .10e}  "
                f"relative error {relative:.2e}{'' if good else '  MISMATCH'}")
    say(f"max relative error {worst:.2e} over {len(results)} elements: "
        f"{'OK' if ok else 'FAILED'} (tolerance |a - n| <= {atol:g} + {rtol:g} |n|)")
    return {"layers": main, "shortcuts": shortcut, "results": results,
            "max_relative_error": worst, "ok": ok}


def main() -> None:
    args = parser(__doc__.splitlines()[0])
    args.add_argument("--samples", type=int, default=5,
                      help="gradient elements checked per parameter")
    args.add_argument("--eps", type=float, default=1e-6,
                      help="finite-difference step, divided by max(1, max |grad|) per weight")
    options = args.parse_args()
    start = time.perf_counter()
    result = check(options.device, options.samples, options.seed, options.eps)
    print(f"total {time.perf_counter() - start:.1f} s")
    if options.plot:
        _plot(result, options.plot)
    sys.exit(0 if result["ok"] and result["layers"] == 152 else 1)


def _plot(result: dict, path: str) -> None:
    """Left: backward against finite difference on symmetric-log axes (the diagonal is
    agreement). Right: each element's relative error, log scale."""
    from _common import _pyplot

    plt = _pyplot()
    if plt is None:
        return
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8))
    labels = list(dict.fromkeys(r[0] for r in result["results"]))
    position = 0
    for label in labels:
        rows = [r for r in result["results"] if r[0] == label]
        left.scatter([r[3] for r in rows], [r[2] for r in rows], label=label, s=20)
        right.bar(range(position, position + len(rows)),
                  [max(r[4], 1e-16) for r in rows], label=label)
        position += len(rows) + 1
    values = [v for r in result["results"] for v in r[2:4]]
    low, high = min(values), max(values)
    left.plot([low, high], [low, high], color="grey", lw=0.8)
    left.set_xscale("symlog", linthresh=1e-2)
    left.set_yscale("symlog", linthresh=1e-2)
    left.set(xlabel="finite difference", ylabel="backward", title="ResNet-152 gradients")
    left.legend(fontsize=7)
    right.set_yscale("log")
    right.set_xticks([])
    right.set(ylabel="relative error", xlabel="checked elements",
              title=f"max relative error {result['max_relative_error']:.1e}")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    print(f"plot saved to {path}")


if __name__ == "__main__":
    main()
