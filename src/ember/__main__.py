"""``python -m ember``: the tour. Runs the autograd tutorial live, then shows the device."""
from __future__ import annotations


def main() -> None:
    import ember as torch

    print("ember tour: the autograd tutorial, run by ember (import ember as torch)\n")
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


if __name__ == "__main__":
    main()
