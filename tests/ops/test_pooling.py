"""Pooling edge cases beyond the op table: indices and ties against PyTorch, NaN, larger
shapes for every mode, interpolate's index rules, error messages."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ..conftest import requires_torch


def _pair(rng, shape):
    import torch

    x = rng.standard_normal(shape)
    return (ember.tensor(x, dtype=ember.float64).requires_grad_(),
            torch.tensor(x, requires_grad=True))


def _check(out, tout, ex, tx, rng):
    import torch

    outs = out if isinstance(out, tuple) else (out,)
    touts = tout if isinstance(tout, tuple) else (tout,)
    for o, t in zip(outs, touts):
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), atol=1e-10)
    upstream = rng.standard_normal(tuple(outs[0].shape))
    outs[0].backward(ember.tensor(upstream))
    touts[0].backward(torch.tensor(upstream))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-10)


@requires_torch
@pytest.mark.parametrize("n,kwargs", [
    (1, dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)),
    (2, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (2, dict(kernel_size=(2, 3), stride=1, dilation=(2, 1))),
    (2, dict(kernel_size=2, stride=(1, 2), padding=1)),
    (3, dict(kernel_size=2, stride=1, padding=1, ceil_mode=True))])
def test_max_pool_values_indices_gradients(n, kwargs):
    import torch

    rng = np.random.default_rng(n)
    ex, tx = _pair(rng, (2, 3) + (9, 8, 7)[:n])
    out = getattr(F, f"max_pool{n}d")(ex, return_indices=True, **kwargs)
    tout = getattr(torch.nn.functional, f"max_pool{n}d")(tx, return_indices=True, **kwargs)
    _check(out, tout, ex, tx, rng)


@requires_torch
def test_max_pool_ties_send_the_gradient_to_the_first_maximum():
    import torch

    x = np.array([[[[1.0, 1.0, 0.0], [1.0, 1.0, 2.0], [0.0, 2.0, 2.0]]]])
    ex = ember.tensor(x).requires_grad_()
    tx = torch.tensor(x, requires_grad=True)
    out, idx = F.max_pool2d(ex, 2, stride=1, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool2d(tx, 2, stride=1, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())


def test_max_pool_propagates_nan():
    x = ember.tensor([[[1.0, float("nan"), 3.0, 0.5]]])
    out = F.max_pool1d(x, 2)
    assert np.isnan(out.numpy()[0, 0, 0]) and out.numpy()[0, 0, 1] == 3.0


@requires_torch
@pytest.mark.parametrize("n,kwargs", [
    (1, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    (2, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (2, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    (2, dict(kernel_size=(2, 4), stride=(3, 1), padding=(1, 2), divisor_override=3)),
    (3, dict(kernel_size=2, stride=2, padding=1, ceil_mode=True, count_include_pad=False))])
def test_avg_pool_matches_torch(n, kwargs):
    import torch

    rng = np.random.default_rng(10 + n)
    ex, tx = _pair(rng, (2, 2) + (9, 8, 7)[:n])
    _check(getattr(F, f"avg_pool{n}d")(ex, **kwargs),
           getattr(torch.nn.functional, f"avg_pool{n}d")(tx, **kwargs), ex, tx, rng)


@requires_torch
@pytest.mark.parametrize("name,shape,size", [
    ("adaptive_avg_pool1d", (2, 3, 10), 4), ("adaptive_avg_pool2d", (1, 2, 7, 9), (3, 5)),
    ("adaptive_avg_pool2d", (1, 2, 4, 6), (8, 7)), ("adaptive_avg_pool3d", (1, 1, 5, 4, 6),
                                                     (2, 3, 4)),
    ("adaptive_max_pool2d", (2, 2, 7, 9), (3, 5)), ("adaptive_max_pool2d", (1, 1, 3, 3), 5),
    ("adaptive_max_pool1d", (2, 3, 11), 4)])
def test_adaptive_pools_match_torch(name, shape, size):
    import torch

    rng = np.random.default_rng(len(shape))
    ex, tx = _pair(rng, shape)
    kwargs = dict(return_indices=True) if "max" in name else {}
    _check(getattr(F, name)(ex, size, **kwargs),
           getattr(torch.nn.functional, name)(tx, size, **kwargs), ex, tx, rng)


@requires_torch
@pytest.mark.parametrize("shape,kwargs", [
    ((1, 2, 5), dict(size=3)), ((1, 2, 3), dict(size=7)), ((1, 1, 5, 4), dict(scale_factor=0.6)),
    ((1, 1, 5, 7), dict(scale_factor=(1.7, 0.4))), ((1, 1, 4, 5), dict(size=(9, 3))),
    ((1, 1, 5, 5), dict(scale_factor=0.6, recompute_scale_factor=True)),
    ((1, 1, 2, 3, 4), dict(size=(3, 5, 2))),
    ((1, 2, 5), dict(size=3, mode="nearest-exact")),
    ((2, 1, 5), dict(scale_factor=2.5, mode="linear")),
    ((2, 1, 5), dict(size=3, mode="linear", align_corners=True)),
    ((1, 2, 4, 5), dict(size=(7, 3), mode="bilinear")),
    ((1, 2, 4, 5), dict(scale_factor=(1.5, 0.5), mode="bilinear", align_corners=True)),
    ((1, 1, 4, 5), dict(size=(9, 2), mode="bicubic")),
    ((1, 1, 4, 5), dict(scale_factor=1.3, mode="bicubic", align_corners=True)),
    ((1, 1, 3, 4, 2), dict(size=(5, 2, 3), mode="trilinear")),
    ((1, 2, 7, 6), dict(size=(3, 4), mode="area"))])
def test_interpolate_matches_torch(shape, kwargs):
    import torch

    rng = np.random.default_rng(sum(shape))
    ex, tx = _pair(rng, shape)
    _check(F.interpolate(ex, **kwargs), torch.nn.functional.interpolate(tx, **kwargs), ex, tx,
           rng)


def test_interpolate_errors():
    x = ember.zeros(1, 1, 4, 4)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, size=3, align_corners=True)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D"):
        F.interpolate(x, size=3, mode="linear")


@requires_torch
def test_max_unpool_with_repeated_indices_matches_torch():
    import torch

    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 2, 5, 5))
    values, idx = F.max_pool2d(ember.tensor(x), 3, stride=1, return_indices=True)
    tvalues, tidx = torch.nn.functional.max_pool2d(torch.tensor(x), 3, stride=1,
                                                   return_indices=True)
    ev = values.detach().requires_grad_()
    tv = tvalues.detach().requires_grad_()
    out = F.max_unpool2d(ev, idx, 3, stride=1)
    tout = torch.nn.functional.max_unpool2d(tv, tidx, 3, stride=1)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy())
    upstream = rng.standard_normal(tuple(out.shape))
    out.backward(ember.tensor(upstream))
    tout.backward(torch.tensor(upstream))
    np.testing.assert_allclose(ev.grad.numpy(), tv.grad.numpy())


def test_pooling_errors():
    x = ember.zeros(1, 1, 4, 4)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel "
                                           "size, but got pad=2, kernel_size=3"):
        F.max_pool2d(x, 3, padding=2)
    with pytest.raises(RuntimeError, match="pad should be at most half of kernel size"):
        F.avg_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.max_pool2d(ember.zeros(1, 1, 2, 2), 3)
    with pytest.raises(RuntimeError, match=r"Expected 3D or 4D \(batch mode\) tensor"):
        F.max_pool2d(ember.zeros(4, 4), 2)
    with pytest.raises(RuntimeError, match="Found an invalid max index"):
        F.max_unpool2d(ember.zeros(1, 1, 2, 2), ember.tensor([[[[0, 1], [2, 99]]]]), 2)
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor, but "
                                           "input.size\\(-3\\)=5 is not divisible by 4"):
        F.pixel_shuffle(ember.zeros(1, 5, 2, 2), 2)
    with pytest.raises(RuntimeError, match="expects height to be divisible"):
        F.pixel_unshuffle(ember.zeros(1, 1, 3, 4), 2)


def test_pixel_shuffle_round_trip():
    x = ember.arange(2 * 8 * 2 * 3, dtype=ember.float64).reshape(2, 8, 2, 3)
    np.testing.assert_array_equal(F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2).numpy(),
                                  x.numpy())
    assert ember.pixel_shuffle is F.pixel_shuffle


def test_lp_pool_matches_sum_of_powers():
    rng = np.random.default_rng(6)
    x = rng.uniform(0.5, 2.0, (1, 1, 4, 4))
    out = F.lp_pool2d(ember.tensor(x), 3.0, 2).numpy()
    expected = (x ** 3).reshape(1, 1, 2, 2, 2, 2).sum(axis=(3, 5)) ** (1 / 3)
    np.testing.assert_allclose(out, expected)


def test_nearest_interpolate_keeps_integer_images():
    x = ember.arange(6, dtype=ember.uint8).reshape(1, 1, 6)
    out = F.interpolate(x, size=4)
    assert out.dtype is ember.uint8
    assert out.tolist() == [[[0, 1, 3, 4]]]
    with pytest.raises(NotImplementedError, match="needs a floating-point input"):
        F.interpolate(x, size=4, mode="linear")


def test_empty_batch_pools_and_backpropagates():
    x = ember.zeros(0, 2, 5, 5, requires_grad=True)
    for op in (lambda t: F.max_pool2d(t, 2), lambda t: F.avg_pool2d(t, 2, ceil_mode=True),
               lambda t: F.adaptive_max_pool2d(t, 3), lambda t: F.adaptive_avg_pool2d(t, 3),
               lambda t: F.interpolate(t, size=3, mode="bicubic")):
        x.grad = None
        out = op(x)
        assert out.shape[0] == 0
        out.sum().backward()
        assert tuple(x.grad.shape) == (0, 2, 5, 5)


@requires_torch
def test_max_pool_nan_and_minus_inf_follow_torch_scan():
    import torch

    x = np.array([[[[np.nan, 1.0, np.nan, -np.inf],
                    [2.0, np.nan, -np.inf, -np.inf],
                    [-np.inf, -np.inf, 0.5, 3.0],
                    [-np.inf, -np.inf, 3.0, 0.5]]]])
    for kwargs in (dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1),
                   dict(kernel_size=2, stride=1, dilation=2, ceil_mode=True)):
        out, idx = F.max_pool2d(ember.tensor(x), return_indices=True, **kwargs)
        tout, tidx = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True,
                                                    **kwargs)
        np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
        np.testing.assert_array_equal(out.numpy(), tout.numpy())


@requires_torch
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_random_pool_configurations_match_torch(kind):
    """Seeded fuzzing of max/avg pooling over dims, kernel, stride, padding, dilation,
    ceil_mode and count_include_pad: values, indices and gradients where PyTorch accepts
    the configuration, an error where it refuses."""
    import torch

    rng = np.random.default_rng(21 if kind == "max" else 22)
    checked = 0
    for _ in range(80):
        nd = int(rng.integers(1, 4))
        kernel = tuple(int(v) for v in rng.integers(1, 4, nd))
        stride = tuple(int(v) for v in rng.integers(1, 4, nd))
        padding = tuple(int(rng.integers(0, k // 2 + 1)) for k in kernel)
        size = tuple(int(v) for v in rng.integers(1, 7, nd))
        x = rng.standard_normal((2, 2) + size)
        kwargs = dict(kernel_size=kernel, stride=stride, padding=padding,
                      ceil_mode=bool(rng.integers(0, 2)))
        if kind == "max":
            kwargs.update(dilation=tuple(int(v) for v in rng.integers(1, 3, nd)),
                          return_indices=True)
        else:
            kwargs.update(count_include_pad=bool(rng.integers(0, 2)))
        name = f"{kind}_pool{nd}d"
        tx = torch.tensor(x, requires_grad=True)
        try:
            expected = getattr(torch.nn.functional, name)(tx, **kwargs)
        except RuntimeError:
            with pytest.raises(RuntimeError):
                getattr(F, name)(ember.tensor(x), **kwargs)
            continue
        ex = ember.tensor(x).requires_grad_()
        out = getattr(F, name)(ex, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        expected = expected if isinstance(expected, tuple) else (expected,)
        for o, e in zip(outs, expected):
            assert tuple(o.shape) == tuple(e.shape)
            np.testing.assert_allclose(o.detach().numpy(), e.detach().numpy(), atol=1e-12)
        upstream = rng.standard_normal(tuple(outs[0].shape))
        if kind == "max" and int(expected[1].max()) >= int(np.prod(size)):
            continue  # a window of only padding: PyTorch's backward writes past the plane
        (gx,) = torch.autograd.grad(expected[0], (tx,), torch.tensor(upstream))
        (ours,) = ember.autograd.grad(outs[0], (ex,), ember.tensor(upstream))
        np.testing.assert_allclose(ours.numpy(), gx.numpy(), atol=1e-12)
        checked += 1
    assert checked > 30


@requires_torch
def test_nearest_index_rules_match_torch_single_precision_and_2d_shortcuts():
    import torch

    cases = [((6,), (1.15,)), ((5, 2), (2.05, 1.48)), ((6, 1), (1.15, 1.0)),
             ((2, 3), (2.17, 1.2)), ((5, 5, 3), (0.54, 1.05, 1.32)), ((7,), (0.29,))]
    for shape, factors in cases:
        x = np.arange(float(np.prod(shape))).reshape((1, 1) + shape)
        for mode in ("nearest", "nearest-exact"):
            expected = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=factors,
                                                       mode=mode)
            out = F.interpolate(ember.tensor(x), scale_factor=factors, mode=mode)
            np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_zero_sized_outputs():
    x = ember.randn(1, 1, 4, 4, requires_grad=True)
    assert tuple(F.adaptive_avg_pool2d(x, (0, 2)).shape) == (1, 1, 0, 2)
    assert tuple(F.interpolate(x, size=(0, 3), mode="area").shape) == (1, 1, 0, 3)
    with pytest.raises(RuntimeError, match="Input and output sizes should be greater than 0"):
        F.interpolate(x, scale_factor=0.2)
