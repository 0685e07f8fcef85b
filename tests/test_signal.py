"""Window functions: ember.signal.windows and the torch-level ember.*_window factories,
against PyTorch, with their errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.signal.windows as W

from .conftest import requires_torch

_WINDOWS = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
            "general_hamming", "hamming", "hann", "kaiser", "nuttall"]
_EXTRA = {"general_cosine": {"a": [0.4, 0.5, 0.1]}, "general_hamming": {"alpha": 0.6},
          "kaiser": {"beta": 4.0}, "gaussian": {"std": 1.7}, "exponential": {"tau": 2.0}}


@requires_torch
@pytest.mark.parametrize("name", _WINDOWS)
@pytest.mark.parametrize("sym", [True, False])
def test_windows_match_torch(name, sym):
    import torch

    for M in (0, 1, 2, 5, 8):
        for dtype in ("float32", "float64"):
            kwargs = _EXTRA.get(name, {})
            ours = getattr(W, name)(M, sym=sym, dtype=getattr(ember, dtype), **kwargs)
            theirs = getattr(torch.signal.windows, name)(M, sym=sym,
                                                         dtype=getattr(torch, dtype), **kwargs)
            assert ours.dtype.name == dtype and tuple(ours.shape) == (M,)
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-6)


@requires_torch
@pytest.mark.parametrize("name,args", [("bartlett_window", ()), ("blackman_window", ()),
                                       ("hann_window", ()), ("hamming_window", (0.6, 0.3)),
                                       ("kaiser_window", (5.0,))])
def test_torch_level_windows_match_torch(name, args):
    import torch

    for n in (0, 1, 2, 7):
        for periodic in (True, False):
            ours = getattr(ember, name)(n, periodic, *args, dtype=ember.float64)
            theirs = getattr(torch, name)(n, periodic, *args, dtype=torch.float64)
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)
    assert getattr(ember, name)(4).dtype == ember.get_default_dtype()


def test_window_options():
    w = W.hann(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    assert ember.windows is W and ember.signal.windows is W
    assert ember.hann_window(3, dtype=ember.float16).dtype == ember.float16


@pytest.mark.parametrize("call,error,text", [
    (lambda: W.hann(-1), ValueError, "non-negative window length"),
    (lambda: W.hann(3, dtype=ember.int64), ValueError, "float32 or float64"),
    (lambda: W.kaiser(3, beta=-1.0), ValueError, "beta must be non-negative"),
    (lambda: W.exponential(3, center=1.0), ValueError, "Center must be None"),
    (lambda: W.exponential(3, tau=0.0), ValueError, "Tau must be positive"),
    (lambda: W.gaussian(3, std=0.0), ValueError, "Standard deviation must be positive"),
    (lambda: W.general_cosine(3, a=3), TypeError, "list/tuple"),
    (lambda: W.hann(3, layout="sparse"), ValueError, "strided"),
    (lambda: ember.hann_window(-2), RuntimeError, "non-negative window_length"),
    (lambda: ember.hann_window(3, dtype=ember.int64), RuntimeError, "floating point"),
])
def test_window_errors(call, error, text):
    with pytest.raises(error, match=text):
        call()
