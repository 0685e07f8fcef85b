"""ember: a small define-by-run autograd library with PyTorch's names and semantics,
NumPy on the CPU and CuPy on NVIDIA GPUs.

>>> import ember as torch
>>> x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)
>>> ((x + 2) ** 2 + 3).mean().backward()
>>> x.grad
tensor([2.0000, 2.6667, 3.3333])
"""
from __future__ import annotations

from . import dtypes as _dtypes
from .dtypes import (bool, double, dtype, float, float16, float32, float64,  # noqa: A004
                     get_default_dtype, half, int, int8, int16, int32, int64, long,
                     promote_types, set_default_dtype, short, uint8)
from .backend.device import device
from .tensor import Size, Tensor
from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled
from .grad_mode import is_grad_enabled, is_inference_mode_enabled
from . import autograd, cuda, ops, random
from . import linalg, special, nn, optim, utils  # noqa: E402
from . import viz  # noqa: E402
from . import distributions  # noqa: E402
from . import distributed  # noqa: E402
from .serialization import save, load
from .random import Generator, initial_seed, manual_seed, seed, get_rng_state, set_rng_state
from .random import default_generator
from .dtypes import finfo, iinfo
from .creation import *  # noqa: F401,F403
from .creation import asarray  # noqa: F401
from ._tensor_str import set_printoptions, get_printoptions

__version__ = "0.1.0"

# PyTorch computes IEEE results (inf, nan) silently; NumPy warns on each. Silence those
# floating-point warnings where ember's own code raised them, and only there.
import warnings as _warnings  # noqa: E402

_warnings.filterwarnings(
    "ignore", message=r"(overflow|invalid value|divide by zero|underflow) encountered",
    category=RuntimeWarning, module=r"ember(\.|$)")

# Every registered op in the ember namespace: ember.exp, ember.matmul, ...
globals().update(ops.NAMESPACES["ember"])


def result_type(tensor1, tensor2) -> dtype:
    """The dtype PyTorch's promotion gives an op over these operands."""
    return _dtypes.result_type(tensor1, tensor2)


def can_cast(from_: dtype, to: dtype) -> bool:  # noqa: A002
    return _dtypes.can_cast(from_, to)


def is_floating_point(input: Tensor) -> bool:  # noqa: A002
    return input.is_floating_point()


def get_default_device() -> device:
    return device("cpu")
