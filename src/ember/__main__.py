"""``python -m ember``: the tour. Runs the autograd tutorial live (its output is PyTorch's,
character for character), then shows a few things ember does beyond it."""
from __future__ import annotations

import io
import textwrap


def tutorial() -> None:
    import ember as torch

    print(">>> x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)")
    x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)
    print("X", x)
    a = x + 2
    b = a ** 2
    c = b + 3
    y = c.mean()
    print("Y", y)
    y.backward()
    print(x.grad)
    print()
    print(">>> y = 3 * x ** 2 + 4 * x + 2, three times, zeroing the gradient each time")
    x = torch.tensor(3., requires_grad=True)
    for epoch in range(3):
        y = 3 * x ** 2 + 4 * x + 2
        y.backward()
        print(x.grad)
        x.grad.zero_()
    x.requires_grad_(False)
    print()
    gpu_avail = torch.cuda.is_available()
    device = torch.device("cuda") if gpu_avail else torch.device("cpu")
    print(f">>> torch.cuda.is_available() -> {gpu_avail}; using {device!r}")
    x = torch.ones(3).to(device)
    print(x)


def beyond() -> None:
    import ember

    print("\nThe graph behind y = ((x + 2) ** 2).sum(), walked from its grad_fn:")
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = ((x + 2) ** 2).sum()
    node, depth = y.grad_fn, 0
    while node is not None:
        print("  " * depth + node.name())
        node = next((n for n, _ in node.next_functions if n is not None), None)
        depth += 1

    print("\nGradients of gradients: d/dx, d2/dx2, d3/dx3 of x ** 3 at x = 2:")
    x = ember.tensor(2.0, requires_grad=True)
    out = x ** 3
    for order in (1, 2, 3):
        (out,) = ember.autograd.grad(out, x, create_graph=order < 3)
        print(f"  order {order}: {out.item():g}")

    print("\nAn error that says what to do (a second backward through a freed graph):")
    y = (x * x).exp()
    y.backward()
    try:
        y.backward()
    except RuntimeError as error:
        print(textwrap.fill(f"RuntimeError: {error}", width=88, initial_indent="  ",
                            subsequent_indent="  "))

    print("\nA model trained with nn and optim (y = 3x - 1 from noisy samples):")
    ember.manual_seed(0)
    inputs = ember.linspace(-1, 1, 64).unsqueeze(1)
    targets = 3 * inputs - 1 + 0.05 * ember.randn(64, 1)
    model = ember.nn.Linear(1, 1)
    optimizer = ember.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    for step in range(60):
        optimizer.zero_grad()
        loss = ember.nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
    print(f"  weight {model.weight.item():.3f}, bias {model.bias.item():.3f}, "
          f"loss {loss.item():.4f}")

    buffer = io.BytesIO()
    ember.save(model.state_dict(), buffer)
    buffer.seek(0)
    restored = ember.nn.Linear(1, 1)
    restored.load_state_dict(ember.load(buffer))
    print(f"  saved and loaded back (safetensors, {buffer.getbuffer().nbytes} bytes): "
          f"weight {restored.weight.item():.3f}")
    print("\nMore: README.md, docs/ (ops, autograd, devices, saving, examples, benchmarks).")


def main() -> None:
    print("ember tour: the autograd tutorial, run by ember (import ember as torch)\n")
    tutorial()
    beyond()


if __name__ == "__main__":
    main()
