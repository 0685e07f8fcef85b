"""Max pooling over windows that tile the input (the one-argmax route) against the general
per-offset scan: same indices and flags, with ties, NaN and windows of only -inf."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.ops import pooling as P


def _scan(monkeypatch, x, geo):
    with monkeypatch.context() as patch:
        patch.setattr(P, "_tiles", lambda geo: False)
        return P._max_pool_indices(np, x, geo)


@pytest.mark.parametrize("shape, kernel", [((2, 3, 8), (2,)), ((2, 3, 6, 4), (2, 2)),
                                           ((1, 2, 6, 6), (3, 2)), ((1, 1, 4, 4, 6), (2, 2, 3))])
def test_tiled_matches_scan(monkeypatch, shape, kernel):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, shape).astype(np.float32)  # many ties
    flat = x.reshape(-1)
    flat[::7] = np.nan
    flat[1::11] = -np.inf
    x[..., :kernel[-1]] = -np.inf  # whole windows of -inf
    n = len(kernel)
    geo = P._pool_geometry("max_pool", shape[-n:], kernel, None, 0, 1, False, n, "kernel")
    assert P._tiles(geo)
    indices, empty = P._max_pool_indices(np, x, geo)
    expected, expected_empty = _scan(monkeypatch, x, geo)
    np.testing.assert_array_equal(indices, expected)
    # a window of only -inf is flagged by the scan; its index and value are the same here
    plane = x.reshape(x.shape[:x.ndim - n] + (-1,))
    np.testing.assert_array_equal(np.take_along_axis(plane, indices.reshape(
        indices.shape[:indices.ndim - n] + (-1,)), -1), np.take_along_axis(
        plane, expected.reshape(expected.shape[:expected.ndim - n] + (-1,)), -1))
    assert not empty.any() and expected_empty.any()


def test_overlapping_and_padded_windows_do_not_tile():
    assert not P._tiles(P._pool_geometry("m", (6, 6), 2, 1, 0, 1, False, 2, "k"))
    assert not P._tiles(P._pool_geometry("m", (6, 6), 2, None, 1, 1, False, 2, "k"))
    assert not P._tiles(P._pool_geometry("m", (7, 6), 2, None, 0, 1, True, 2, "k"))


def test_tiled_gradient_goes_to_first_maximum():
    x = ember.tensor([[[[1.0, 3.0, 2.0, 2.0], [3.0, 0.0, 2.0, 1.0]]]], requires_grad=True)
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    assert idx.tolist() == [[[[1, 2]]]]
    y.sum().backward()
    assert x.grad.tolist() == [[[[0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]]
