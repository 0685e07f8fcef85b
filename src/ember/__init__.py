"""ember: a small define-by-run autograd library with PyTorch's names and semantics,
NumPy on the CPU and CuPy on NVIDIA GPUs.

>>> import ember as torch
>>> x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)
>>> ((x + 2) ** 2 + 3).mean().backward()
>>> x.grad
tensor([2.0000, 2.6667, 3.3333])
"""
from __future__ import annotations

from math import e, inf, nan, pi

from . import (
    accelerator,
    amp,
    autograd,
    backends,
    cpu,
    cuda,
    distributed,
    distributions,
    fft,
    func,
    functional,
    linalg,
    masked,
    nn,
    ops,
    optim,
    quasirandom,
    random,
    return_types,
    signal,
    special,
    types,
    utils,
    viz,
)
from . import dtypes as _dtypes
from ._tensor_str import get_printoptions, set_printoptions
from .amp import GradScaler, autocast, get_autocast_dtype, is_autocast_enabled
from .amp.autocast_mode import (
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
    set_autocast_gpu_dtype,
)
from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled
from .autograd.anomaly import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from .backend.device import device
from .compiler import compile
from .creation import *  # noqa: F403
from .creation import asarray
from .dtypes import (
    bfloat16,
    bool,
    double,
    dtype,
    finfo,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_dtype,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .func import vmap
from .grad_mode import is_grad_enabled, is_inference_mode_enabled
from .legacy import *  # noqa: F403
from .memory import empty_permuted, empty_strided, frombuffer, to_dlpack
from .random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from .runtime import *  # noqa: F403
from .serialization import load, save
from .signal import windows
from .signal.window_functions import (
    bartlett_window,
    blackman_window,
    hamming_window,
    hann_window,
    kaiser_window,
)
from .streams import Event, Stream
from .tensor import Size, Tensor

__version__ = "0.1.0"


# PyTorch computes IEEE results (inf, nan) silently; NumPy warns on each. Silence those
# floating-point warnings where ember's own code raised them, and only there.
import warnings as _warnings

_warnings.filterwarnings(
    "ignore", message=r"(overflow|invalid value|divide by zero|underflow) encountered",
    category=RuntimeWarning, module=r"ember(\.|$)")

newaxis = None

# Every registered op in the ember namespace: ember.exp, ember.matmul, ...
globals().update(ops.NAMESPACES["ember"])


def result_type(tensor1, tensor2) -> dtype:
    """The dtype PyTorch's promotion gives an op over these operands."""
    return _dtypes.result_type(tensor1, tensor2)


def can_cast(from_: dtype, to: dtype) -> bool:
    return _dtypes.can_cast(from_, to)


def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


def is_inference(input: Tensor) -> bool:
    """Whether ``input`` was made under ``inference_mode`` (``Tensor.is_inference``)."""
    return input.is_inference()


def get_device(input: Tensor) -> int:
    """The GPU index of ``input``, or -1 on the CPU (``Tensor.get_device``)."""
    return input.get_device()

