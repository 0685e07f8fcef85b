"""Views made before an in-place change of their base, or of another view of the same
base, read the new values; their gradients must go through the change too (PyTorch
regenerates such a view's grad_fn). Each case runs on ember and on torch."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import ember
from tests.conftest import requires_torch


def _leaf(T):
    return T.arange(1.0, 7.0, dtype=T.float64).requires_grad_()


def strided_view_then_base_scaled(T):
    x = _leaf(T)
    y = x * 1
    v = y[::2]
    y.mul_(2)
    v.sum().backward()
    return [x.grad]


def reshaped_view_then_base_scaled(T):
    x = _leaf(T)
    y = x * 1
    v = y.view(2, 3)
    y.mul_(3)
    (v * v).sum().backward()
    return [x.grad]


def unsqueezed_view_then_exp_(T):
    x = _leaf(T)
    y = x * 1
    v = y.unsqueeze(0)
    y.exp_()
    v.sum().backward()
    return [x.grad]


def sibling_view_written(T):
    x = _leaf(T)
    y = x * 1
    a, b = y[:4], y[2:]
    a.mul_(10)
    b.sum().backward()
    return [x.grad]


def base_written_by_setitem(T):
    x = _leaf(T)
    s = T.tensor(5.0, dtype=T.float64, requires_grad=True)
    y = x * 1
    v = y[:3]
    y[1] = s * 1
    (v * T.tensor([1.0, 8.0, 1.0], dtype=T.float64)).sum().backward()
    return [x.grad, s.grad]


def base_without_grad_receives_one(T):
    s = T.tensor(5.0, dtype=T.float64, requires_grad=True)
    y = T.zeros(3, dtype=T.float64)
    v = y[:2]
    y[1] = s
    (v * 3).sum().backward()
    return [s.grad, T.tensor(v.requires_grad)]


def view_of_a_view(T):
    x = _leaf(T)
    y = x * 1
    w = y[::2][1:]
    y.add_(x * x)
    w.sum().backward()
    return [x.grad]


def view_written_twice(T):
    x = _leaf(T)
    y = x * 1
    v = y.reshape(3, 2)
    y[1:].mul_(2)
    y[:2].add_(x[:2])
    (v ** 2).sum().backward()
    return [x.grad]


CASES = [strided_view_then_base_scaled, reshaped_view_then_base_scaled,
         unsqueezed_view_then_exp_, sibling_view_written, base_written_by_setitem,
         base_without_grad_receives_one, view_of_a_view, view_written_twice]


@requires_torch
@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_gradients_match_torch(case):
    import torch

    ours, theirs = case(ember), case(torch)
    assert len(ours) == len(theirs)
    for mine, want in zip(ours, theirs):
        np.testing.assert_allclose(mine.detach().numpy(), want.detach().numpy(), rtol=1e-12)


def test_views_are_not_kept_alive_by_their_base():
    y = ember.arange(6.0).requires_grad_() * 1
    for _ in range(100):
        y[1:].sum()
    gc.collect()
    assert len(y._views) == 0
