"""ember.signal.windows against torch.signal.windows."""
from __future__ import annotations

import numpy as np
import pytest

import ember

from ..conftest import requires_torch

W = ember.signal.windows


@requires_torch
@pytest.mark.parametrize("name", W.__all__)
def test_windows_match_torch(name):
    import torch

    extra = {"a": [0.4, 0.3, 0.3]} if name == "general_cosine" else {}
    for M in (0, 1, 2, 5, 8):
        for sym in (True, False):
            for ours, theirs in ((ember.float32, torch.float32), (ember.float64, torch.float64)):
                got = getattr(W, name)(M, sym=sym, dtype=ours, **extra)
                want = getattr(torch.signal.windows, name)(M, sym=sym, dtype=theirs, **extra)
                assert got.dtype is ours and tuple(got.shape) == tuple(want.shape)
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


@requires_torch
def test_window_parameters_match_torch():
    import torch

    T = torch.signal.windows
    pairs = [(W.gaussian(7, std=2.5), T.gaussian(7, std=2.5)),
             (W.kaiser(6, beta=3.0), T.kaiser(6, beta=3.0)),
             (W.exponential(6, center=1.0, tau=2.0, sym=False),
              T.exponential(6, center=1.0, tau=2.0, sym=False)),
             (W.general_hamming(5, alpha=0.6), T.general_hamming(5, alpha=0.6))]
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)


def test_window_errors():
    assert ember.windows is W
    with pytest.raises(ValueError, match="non-negative window length, got M=-1"):
        W.hann(-1)
    with pytest.raises(ValueError, match="float32 or float64"):
        W.hann(3, dtype=ember.int64)
    with pytest.raises(ValueError, match="Center must be None for symmetric windows"):
        W.exponential(5, center=1.0)
    with pytest.raises(ValueError, match="Standard deviation must be positive"):
        W.gaussian(5, std=0.0)
    assert W.hann(4, requires_grad=True).requires_grad
