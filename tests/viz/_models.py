"""A small ResNet-shaped model for the graph tests: a stem, two stages of residual blocks
(the second starts with a strided block with a 1x1 projection), pooling and a classifier."""
from __future__ import annotations

from ember import nn


class Block(nn.Module):
    def __init__(self, channels, stride=1, in_channels=None):
        super().__init__()
        in_channels = in_channels or channels
        self.conv1 = nn.Conv2d(in_channels, channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.down = None
        if stride != 1 or in_channels != channels:
            self.down = nn.Sequential(
                nn.Conv2d(in_channels, channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(channels))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + (x if self.down is None else self.down(x)))


class TinyResNet(nn.Module):
    def __init__(self, blocks=3):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(4), nn.ReLU())
        self.layer1 = nn.Sequential(*[Block(4) for _ in range(blocks)])
        self.layer2 = nn.Sequential(Block(8, 2, 4), *[Block(8) for _ in range(blocks - 1)])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(self.pool(x).flatten(1))
