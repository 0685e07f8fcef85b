"""The foundation tutorial, run by ember, must print what PyTorch prints, character for
character (the expected text below is PyTorch's output)."""
from __future__ import annotations

import contextlib
import io
import subprocess
import sys

import ember as torch

EXPECTED = """\
X tensor([1., 2., 3.], requires_grad=True)
Y tensor(19.6667, grad_fn=<MeanBackward0>)
tensor([2.0000, 2.6667, 3.3333])
tensor(22.)
tensor(22.)
tensor(22.)
tensor([1., 1., 1.])
"""


def tutorial() -> None:
    x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)
    print("X", x)
    a = x + 2
    b = a ** 2
    c = b + 3
    y = c.mean()
    print("Y", y)
    y.backward()
    print(x.grad)

    x = torch.tensor(3., requires_grad=True)
    for epoch in range(3):
        y = 3 * x ** 2 + 4 * x + 2
        y.backward()
        print(x.grad)
        x.grad.zero_()
    x.requires_grad_(False)

    gpu_avail = torch.cuda.is_available()
    device = torch.device("cuda") if gpu_avail else torch.device("cpu")
    x = torch.ones(3).to(device)
    print(x)


def test_tutorial_prints_what_pytorch_prints():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        tutorial()
    expected = EXPECTED
    if torch.cuda.is_available():
        expected = expected.replace("tensor([1., 1., 1.])",
                                    "tensor([1., 1., 1.], device='cuda:0')")
    assert out.getvalue() == expected


def test_without_zero_grad_gradients_accumulate():
    x = torch.tensor(3., requires_grad=True)
    seen = []
    for _ in range(3):
        y = 3 * x ** 2 + 4 * x + 2
        y.backward()
        seen.append(repr(x.grad))
    assert seen == ["tensor(22.)", "tensor(44.)", "tensor(66.)"]


def test_same_text_as_pytorch_when_installed():
    torch_module = __import__("pytest").importorskip("torch")
    del torch_module
    script = (
        "import contextlib, io, sys\n"
        "sys.path.insert(0, %r)\n"
        "import torch, test_tutorial as t\n"
        "t.torch = torch\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    t.tutorial()\n"
        "sys.stdout.write(buf.getvalue())\n"
    ) % (__import__("os").path.dirname(__file__),)
    theirs = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True).stdout
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        tutorial()
    assert out.getvalue() == theirs


def test_python_m_ember_runs_the_tour(tmp_path):
    result = subprocess.run([sys.executable, "-m", "ember", "--out", str(tmp_path / "tour"),
                             "--epochs", "1"], capture_output=True, text=True, check=True)
    assert "X tensor([1., 2., 3.], requires_grad=True)" in result.stdout
    assert "tensor([2.0000, 2.6667, 3.3333])" in result.stdout
    assert "order 3: 6" in result.stdout and "AccumulateGrad" in result.stdout
    assert f"Everything is in {tmp_path / 'tour'}" in result.stdout
