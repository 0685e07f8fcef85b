"""Train an MLP and a small CNN on scikit-learn's handwritten digits (8x8 images, shipped
offline inside scikit-learn) with ember, on the CPU or a GPU.

    python examples/train_digits.py [--device cuda] [--epochs 30] [--plot digits.png]

Both models reach at least 97% test accuracy.
"""
from __future__ import annotations

import numpy as np
from _common import History, evaluate, parser, train_epoch

import ember
from ember import nn
from ember.utils.data import DataLoader, TensorDataset


def load_digits(seed: int):
    """(train_x, train_y, test_x, test_y): a stratified 80/20 split, pixels scaled to [0, 1]."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        raise SystemExit("this example needs scikit-learn: pip install 'ember[examples]'")
    digits = sklearn_digits()
    images = (digits.images / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    train, test = [], []
    for label in range(10):
        idx = rng.permutation(np.flatnonzero(labels == label))
        cut = int(round(0.8 * len(idx)))
        train += idx[:cut].tolist()
        test += idx[cut:].tolist()
    train, test = np.array(train), np.array(test)
    return images[train], labels[train], images[test], labels[test]


def mlp() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 256), nn.ReLU(), nn.Dropout(0.2),
                         nn.Linear(256, 10))


def cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 32 x 4 x 4
        nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))


def run(device: str = "cpu", epochs: int = 30, seed: int = 0, plot: str | None = None,
        batch_size: int = 32) -> dict[str, float]:
    """Train both models; returns their final test accuracies."""
    ember.manual_seed(seed)
    train_x, train_y, test_x, test_y = load_digits(seed)
    train_set = TensorDataset(ember.tensor(train_x).unsqueeze(1), ember.tensor(train_y))
    test_set = TensorDataset(ember.tensor(test_x).unsqueeze(1), ember.tensor(test_y))
    generator = ember.Generator().manual_seed(seed)
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True,
                              generator=generator)
    test_loader = DataLoader(test_set, batch_size=256)
    history = History()
    accuracies = {}
    for name, model in (("MLP", mlp()), ("CNN", cnn())):
        model = model.to(device)
        optimizer = ember.optim.Adam(model.parameters(), lr=2e-3)
        scheduler = ember.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
        loss_fn = nn.CrossEntropyLoss()
        for epoch in range(1, epochs + 1):
            loss = train_epoch(model, train_loader, loss_fn, optimizer, device, name)
            scheduler.step()
            accuracy = evaluate(model, test_loader, device)
            history.add(name, epoch, loss, accuracy)
        accuracies[name] = accuracy
    history.plot(plot, "digits")
    return accuracies


def main() -> None:
    args = parser(__doc__.splitlines()[0])
    args.add_argument("--epochs", type=int, default=30)
    options = args.parse_args()
    accuracies = run(options.device, options.epochs, options.seed, options.plot)
    for name, accuracy in accuracies.items():
        print(f"{name}: final test accuracy {accuracy:.2%}")


if __name__ == "__main__":
    main()
