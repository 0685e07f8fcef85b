"""``ember.backends``: what PyTorch's device-selection code asks of ``torch.backends``,
answered for ember's own backends (NumPy on the CPU, CuPy on NVIDIA GPUs).

The common idiom runs unchanged and picks what ember can use:

>>> import ember
>>> device = ("cuda" if ember.cuda.is_available() else
...           "mps" if ember.backends.mps.is_available() else "cpu")
>>> device in ("cuda", "cpu")
True
>>> ember.backends.mps.is_available()  # ember has no Metal backend
False

ember does not call cuDNN: its GPU convolutions are CuPy matrix products. So
``cudnn.is_available()`` is False, and the switches scripts set
(``cudnn.benchmark``, ``cudnn.deterministic``, ``cuda.matmul.allow_tf32``) are kept
but change nothing: there is no algorithm search to turn on, ember's kernels give the same
result on every run, and its float32 products never use TF32.
"""
from __future__ import annotations

import importlib.util
from types import SimpleNamespace

__all__ = ["mps", "cuda", "cudnn"]


def _false() -> bool:
    return False


def _cupy_installed() -> bool:
    return importlib.util.find_spec("cupy") is not None


# Apple's Metal backend: ember has none.
mps = SimpleNamespace(is_available=_false, is_built=_false)

# cuda.is_built(): whether ember's CUDA backend (CuPy) is installed; whether a GPU is there
# too is ember.cuda.is_available().
cuda = SimpleNamespace(is_built=_cupy_installed,
                       matmul=SimpleNamespace(allow_tf32=False,
                                              allow_fp16_reduced_precision_reduction=True))

cudnn = SimpleNamespace(is_available=_false, enabled=True, benchmark=False,
                        deterministic=False, allow_tf32=True,
                        version=lambda: None)
