"""``python -m ember``: the tour. Runs the autograd tutorial live (its printed values are
PyTorch's, character for character), draws its graph, steps through its backward pass,
logs it for TensorBoard, times matrix products honestly and trains a small network on the
digits data. Everything it writes goes into one folder (``--out``), named at the end.

    python -m ember [--device cpu|cuda] [--out ember-tour] [--epochs 4]
"""
from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path


def heading(text: str) -> None:
    print(f"\n== {text} " + "=" * max(0, 84 - len(text)))


def tutorial_graph(out: Path, writer) -> None:
    import ember as torch

    heading("1. The graph of y = mean((x + 2) ** 2 + 3)")
    x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)
    print("X", x)
    a = x + 2
    b = a ** 2
    c = b + 3
    y = c.mean()
    print("Y", y)
    names = dict(x=x, a=a, b=b, c=c, y=y)
    writer.add_graph(y, params=names)

    heading("2. The backward pass, step by step (ember.autograd.explain)")
    steps = torch.autograd.explain(y, params=names)
    print(steps)
    (out / "tutorial_backward.txt").write_text(str(steps) + "\n", encoding="utf-8")
    (out / "tutorial_backward.html").write_text(steps._repr_html_() + "\n", encoding="utf-8")
    y.backward()
    print(x.grad)
    picture = torch.viz.graph(y, params=names).render(out / "tutorial_graph.svg")
    print(f"graph picture: {picture}")


def accumulation() -> None:
    import ember as torch

    heading("3. Gradients accumulate; zero_() resets them")
    x = torch.tensor(3., requires_grad=True)
    for epoch in range(2):
        y = 3 * x ** 2 + 4 * x + 2
        y.backward()
        print(f"without zero_(), epoch {epoch}:", x.grad)
    x.grad.zero_()
    for epoch in range(3):
        y = 3 * x ** 2 + 4 * x + 2
        y.backward()
        print(x.grad)
        x.grad.zero_()
    x.requires_grad_(False)
    print("after requires_grad_(False):", x.requires_grad, 3 * x ** 2 + 4 * x + 2)


def chain_rule(out: Path) -> None:
    import ember as torch

    heading("4. The chain rule: y = 2x + 3, z = y ** 2, out = z.mean()")
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = 2 * x + 3
    z = y ** 2
    mean = z.mean()
    print(y)
    print(z)
    print(mean)
    mean.backward()
    print(x.grad, "= d(out)/dx = 2 * 2y / 3")
    picture = torch.viz.graph(mean, params=dict(x=x, y=y, z=z, out=mean))
    print(f"graph picture: {picture.render(out / 'chain_rule_graph.svg')}")


def device_idiom(device: str) -> None:
    import ember as torch

    heading("5. The device idiom")
    gpu_avail = torch.cuda.is_available()
    print(f">>> torch.cuda.is_available() -> {gpu_avail}; --device {device}")
    x = torch.ones(3).to(torch.device(device))
    print(x)


def timing(device: str) -> None:
    from ember.utils.benchmark import matmul_sweep

    heading("6. CPU against GPU matrix products, timed honestly (ember.utils.benchmark)")
    devices = ["cpu"] + ([device] if device != "cpu" else [])
    sweep = matmul_sweep(sizes=[64, 256, 512], devices=devices, min_run_time=0.05)
    if device == "cpu":
        print("CPU only here (--device cpu): no GPU was timed.")
    print(sweep.report(), end="")


def progress(iterable, total: int, description: str):
    """tqdm's bar when tqdm is installed; otherwise a plain line per quarter."""
    try:
        from tqdm import tqdm
    except ImportError:
        return _plain_progress(iterable, total, description)
    return tqdm(iterable, total=total, desc=description, leave=False, file=sys.stderr)


def _plain_progress(iterable, total, description):
    step = max(1, total // 4)
    for i, item in enumerate(iterable, 1):
        yield item
        if i % step == 0 or i == total:
            print(f"  {description}: {i}/{total}", file=sys.stderr, flush=True)


def digits(device: str, epochs: int, out: Path, writer) -> float | None:
    import numpy as np

    import ember
    from ember import nn
    from ember.utils.data import DataLoader, TensorDataset

    heading("7. A small network trained on the digits data")
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        print("skipped: the digits data comes with scikit-learn (pip install scikit-learn)")
        return None
    data = load_digits()
    images = (data.data / 16.0).astype(np.float32)
    labels = data.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(labels))
    train, test = order[:1400], order[1400:]
    ember.manual_seed(0)
    loader = DataLoader(TensorDataset(ember.tensor(images[train]), ember.tensor(labels[train])),
                        batch_size=32, shuffle=True, generator=ember.Generator().manual_seed(0))
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
    optimizer = ember.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    test_x = ember.tensor(images[test]).to(device)
    test_y = ember.tensor(labels[test]).to(device)
    step = 0
    for epoch in range(1, epochs + 1):
        model.train()
        for x, y in progress(loader, len(loader), f"epoch {epoch}/{epochs}"):
            optimizer.zero_grad()
            loss = loss_fn(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
            writer.add_scalar("digits/loss", loss.item(), step)
            step += 1
        model.eval()
        with ember.no_grad():
            accuracy = (model(test_x).argmax(1) == test_y).float().mean().item()
        writer.add_scalar("digits/test_accuracy", accuracy, epoch)
        print(f"epoch {epoch}: loss {loss.item():.4f}, test accuracy {accuracy:.1%}")
    print(f"test accuracy after {epochs} epochs: {accuracy:.1%} "
          f"({len(test)} held-out digits)")

    path = out / "digits_mlp.safetensors"
    ember.save(model.state_dict(), path)
    restored = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    restored.load_state_dict(ember.load(path))
    print(f"saved and loaded back: {path}")
    return accuracy


def beyond() -> None:
    import ember

    heading("8. Beyond the tutorial")
    print("Gradients of gradients: d/dx, d2/dx2, d3/dx3 of x ** 3 at x = 2:")
    x = ember.tensor(2.0, requires_grad=True)
    out = x ** 3
    for order in (1, 2, 3):
        (out,) = ember.autograd.grad(out, x, create_graph=order < 3)
        print(f"  order {order}: {out.item():g}")

    print("An error that says what to do (a second backward through a freed graph):")
    y = (x * x).exp()
    y.backward()
    try:
        y.backward()
    except RuntimeError as error:
        print(textwrap.fill(f"RuntimeError: {error}", width=88, initial_indent="  ",
                            subsequent_indent="  "))
    print("More: README.md, docs/tutorial.md, examples/tutorial.ipynb.")


def main(argv: list[str] | None = None) -> Path:
    import ember

    p = argparse.ArgumentParser(prog="python -m ember", description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if ember.cuda.is_available() else "cpu",
                   help="cpu or cuda (default: cuda when available)")
    p.add_argument("--out", default="ember-tour", help="output folder (default: %(default)s)")
    p.add_argument("--epochs", type=int, default=4, help="digits training epochs")
    args = p.parse_args(argv)
    try:
        device = str(ember.device(args.device))
    except (RuntimeError, ValueError) as error:
        p.error(f"--device: {error}")
    if device.startswith("cuda") and not ember.cuda.is_available():
        p.error(f"--device {device}: no GPU is available here (use --device cpu)")
    if args.epochs < 1:
        p.error(f"--epochs must be at least 1, got {args.epochs}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    logdir = out / "runs"

    from ember.utils.tensorboard import SummaryWriter

    print("ember tour: the autograd tutorial, run by ember (import ember as torch)")
    with SummaryWriter(logdir) as writer:
        tutorial_graph(out, writer)
        accumulation()
        chain_rule(out)
        device_idiom(device)
        timing(device)
        digits(device, args.epochs, out, writer)
    beyond()
    heading("Written")
    for path in sorted(out.iterdir()):
        print(f"  {path}")
    print(f"See the graph and the training curves: tensorboard --logdir {logdir}")
    print(f"Everything is in {out}")
    return out


if __name__ == "__main__":
    main()
