"""Shared fixtures: the devices to test on (CUDA wherever CuPy sees a GPU), and PyTorch
as an optional oracle."""
from __future__ import annotations

import numpy as np
import pytest

import ember

from .skip_summary import pytest_terminal_summary  # noqa: F401  (the closing summary)

DEVICES = ["cpu"] + (["cuda"] if ember.cuda.is_available() else [])

try:
    import torch  # noqa: F401

    HAVE_TORCH = True
except ImportError:  # the oracle tests skip cleanly without PyTorch
    HAVE_TORCH = False

requires_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")


def outcome(call, lib, message: bool = True):
    """What ``call(lib)`` gives, to compare ember with torch: the values (their repr, so
    NaN equals NaN) and the dtype's name, or the exception's type (and, with ``message``,
    its message up to the first colon)."""
    try:
        result = call(lib)
    except Exception as error:  # the exception is the outcome compared
        name = type(error).__name__
        return (name, str(error).split(":")[0]) if message else name
    return repr(result.tolist()), str(result.dtype).split(".")[-1]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture(autouse=True)
def _seed():
    ember.manual_seed(0)
    np.random.seed(0)
    yield

