"""Shared pieces of the example programs: command-line device choice, a progress bar that
falls back to plain lines, the train/evaluate loops, and loss/accuracy plots."""
from __future__ import annotations

import argparse
import sys
import time

import ember


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--device", default="cuda" if ember.cuda.is_available() else "cpu",
                   help="cpu or cuda (default: cuda when available)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plot", default=None, help="where to save the loss/accuracy plot (PNG)")
    return p


def progress(iterable, total: int, description: str):
    """tqdm's bar on a terminal when tqdm is installed; otherwise a few plain lines."""
    if sys.stderr.isatty():
        try:
            from tqdm import tqdm

            return tqdm(iterable, total=total, desc=description, leave=False)
        except ImportError:
            pass
    return _plain_progress(iterable, total, description)


def _plain_progress(iterable, total, description):
    step = max(1, total // 4)
    for i, item in enumerate(iterable, 1):
        yield item
        if i % step == 0 or i == total:
            print(f"  {description}: {i}/{total}", flush=True)


def train_epoch(model, loader, loss_fn, optimizer, device, description="train") -> float:
    """One pass over ``loader``; returns the mean loss."""
    model.train()
    total, count = 0.0, 0
    for x, y in progress(loader, len(loader), description):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(y)
        count += len(y)
    return total / count


@ember.no_grad()
def evaluate(model, loader, device) -> float:
    """Accuracy of ``model`` on ``loader``."""
    model.eval()
    correct, count = 0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        correct += (model(x).argmax(dim=1) == y).sum().item()
        count += len(y)
    return correct / count


class History:
    """Per-epoch losses and accuracies of one or more models, for printing and plotting."""

    def __init__(self):
        self.rows: dict[str, list[tuple[int, float, float]]] = {}
        self.start = time.perf_counter()

    def add(self, name: str, epoch: int, loss: float, accuracy: float) -> None:
        self.rows.setdefault(name, []).append((epoch, loss, accuracy))
        print(f"{name} epoch {epoch}: loss {loss:.4f}, test accuracy {accuracy:.2%} "
              f"({time.perf_counter() - self.start:.1f} s)", flush=True)

    def add_loss(self, name: str, step: int, loss: float, held_out: float) -> None:
        """Record a training loss and a held-out loss (for models without an accuracy)."""
        self.rows.setdefault(name, []).append((step, loss, held_out))
        print(f"{name} step {step}: training loss {loss:.4f}, held-out loss {held_out:.4f} "
              f"({time.perf_counter() - self.start:.1f} s)", flush=True)

    def plot_losses(self, path: str | None, title: str, x_label: str = "step") -> None:
        """One panel: training and held-out loss of each model against ``x_label``."""
        plt = _pyplot() if path else None
        if plt is None:
            return
        figure, axes = plt.subplots(figsize=(6, 3.5))
        for name, rows in self.rows.items():
            steps = [r[0] for r in rows]
            axes.plot(steps, [r[1] for r in rows], marker="o", label=f"{name} training")
            axes.plot(steps, [r[2] for r in rows], marker="s", label=f"{name} held-out")
        axes.set(xlabel=x_label, ylabel="cross-entropy (nats/char)", title=f"{title}: loss")
        axes.legend()
        figure.tight_layout()
        figure.savefig(path, dpi=100)
        plt.close(figure)
        print(f"plot saved to {path}")

    def plot(self, path: str | None, title: str) -> None:
        plt = _pyplot() if path else None
        if plt is None:
            return
        figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
        for name, rows in self.rows.items():
            epochs = [r[0] for r in rows]
            left.plot(epochs, [r[1] for r in rows], marker="o", label=name)
            right.plot(epochs, [100 * r[2] for r in rows], marker="o", label=name)
        left.set(xlabel="epoch", ylabel="training loss", title=f"{title}: loss")
        right.set(xlabel="epoch", ylabel="test accuracy (%)", title=f"{title}: accuracy")
        left.legend()
        right.legend()
        figure.tight_layout()
        figure.savefig(path, dpi=100)
        plt.close(figure)
        print(f"plot saved to {path}")


def _pyplot():
    """matplotlib.pyplot with the file-only Agg backend, or None (with a note) without it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install 'ember[examples]'): no plot")
        return None
    return plt
