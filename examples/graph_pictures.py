"""Pictures of autograd graphs and the backward pass step by step: the tutorial's
y = mean((x + 2) ** 2 + 3), then a small ResNet drawn three ways (every node; one box per
block, repeated blocks merged; one box per stage).

    python examples/graph_pictures.py [--out graph_pictures] [--format svg]

Writes SVG (or PNG/PDF) through Graphviz; without Graphviz it writes the DOT text instead
(.dot files, which `dot -Tsvg` turns into pictures later) and says so.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import ember
from ember import nn


class Block(nn.Module):
    """conv-BN-ReLU-conv-BN plus the identity (or a strided 1x1 projection), then ReLU."""

    def __init__(self, channels: int, stride: int = 1, in_channels: int | None = None):
        super().__init__()
        in_channels = in_channels or channels
        self.conv1 = nn.Conv2d(in_channels, channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()
        self.shortcut = None
        if stride != 1 or in_channels != channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(channels))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + (x if self.shortcut is None else self.shortcut(x)))


class SmallResNet(nn.Module):
    """A ResNet-18-shaped network, narrow: a stem, three stages of three blocks, a head."""

    def __init__(self, blocks: int = 3, widths=(4, 8, 16), classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, padding=1, bias=False),
                                  nn.BatchNorm2d(widths[0]), nn.ReLU())
        stages, channels = [], widths[0]
        for i, width in enumerate(widths):
            stride = 1 if i == 0 else 2
            stage = [Block(width, stride, channels)] + [Block(width) for _ in range(blocks - 1)]
            stages.append(nn.Sequential(*stage))
            channels = width
        self.layer1, self.layer2, self.layer3 = stages
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        x = self.layer3(self.layer2(self.layer1(self.stem(x))))
        return self.fc(self.pool(x).flatten(1))


def tutorial_pictures(out: Path, fmt: str) -> dict:
    x = ember.arange(1, 4, dtype=ember.float32, requires_grad=True)
    a = x + 2
    b = a ** 2
    c = b + 3
    y = c.mean()
    steps = ember.autograd.explain(y, params=dict(x=x, a=a, b=b, c=c, y=y))
    (out / "tutorial_backward.txt").write_text(str(steps) + "\n")
    (out / "tutorial_backward.html").write_text(steps._repr_html_() + "\n")
    y.backward()
    picture = ember.viz.graph(y, params=dict(x=x, a=a, b=b, c=c, y=y))
    return {"tutorial graph": picture.render(out / f"tutorial_graph.{fmt}"),
            "tutorial backward (text)": out / "tutorial_backward.txt",
            "tutorial backward (HTML)": out / "tutorial_backward.html"}


def resnet_pictures(out: Path, fmt: str) -> dict:
    ember.manual_seed(0)
    model = SmallResNet()
    with ember.viz.record(model):
        loss = model(ember.randn(2, 3, 16, 16)).sum()
    loss.backward()
    return {
        "ResNet, every node": ember.viz.graph(loss, collapse_repeats=False, max_nodes=None)
        .render(out / f"resnet_full.{fmt}"),
        "ResNet, one box per block": ember.viz.graph(loss, max_depth=1)
        .render(out / f"resnet_blocks.{fmt}"),
        "ResNet, one box per stage": ember.viz.graph(loss, max_depth=0)
        .render(out / f"resnet_stages.{fmt}"),
    }


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="graph_pictures", help="output folder")
    p.add_argument("--format", default="svg", choices=("svg", "png", "pdf"))
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = {**tutorial_pictures(out, args.format), **resnet_pictures(out, args.format)}
    print(open(out / "tutorial_backward.txt").read())
    for what, path in written.items():
        print(f"{what:28s} {path}")
    return written


if __name__ == "__main__":
    main()
