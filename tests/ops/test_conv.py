"""Convolution edge cases beyond the op table: PyTorch's error messages, larger random
shapes against PyTorch, double backward structure, unfold/fold identities."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ..conftest import requires_torch


def _t(array, requires_grad=True):
    return ember.tensor(array, dtype=ember.float64).requires_grad_(requires_grad)


def test_channel_mismatch_message_names_shapes():
    x = ember.zeros(1, 4, 5, 5)
    w = ember.zeros(3, 3, 3, 3)
    with pytest.raises(RuntimeError, match=r"Given groups=1, weight of size \[3, 3, 3, 3\], "
                       r"expected input\[1, 4, 5, 5\] to have 3 channels, but got 4 channels "
                       r"instead"):
        F.conv2d(x, w)


def test_argument_errors():
    x = ember.zeros(1, 4, 5, 5)
    with pytest.raises(RuntimeError, match="expected weight to be divisible by 3"):
        F.conv2d(x, ember.zeros(4, 2, 3, 3), groups=3)
    with pytest.raises(RuntimeError, match="expected bias to be 1-dimensional with 3 elements"):
        F.conv2d(x, ember.zeros(3, 4, 3, 3), ember.zeros(2))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input"):
        F.conv2d(x, ember.zeros(3, 4, 6, 6))
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        F.conv2d(x, ember.zeros(3, 4, 3, 3), stride=2, padding="same")
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        F.conv2d(x, ember.zeros(3, 4, 3, 3), padding="full")
    with pytest.raises(RuntimeError, match="negative padding is not supported"):
        F.conv2d(x, ember.zeros(3, 4, 3, 3), padding=-1)
    with pytest.raises(RuntimeError, match="non-positive stride is not supported"):
        F.conv2d(x, ember.zeros(3, 4, 3, 3), stride=0)
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input "
                       r"to conv2d, but got input of size: \[5, 5\]"):
        F.conv2d(ember.zeros(5, 5), ember.zeros(3, 4, 3, 3))
    with pytest.raises(RuntimeError, match="Input type \\(float64\\) and weight type "
                                           "\\(float32\\) should be the same"):
        F.conv2d(x.double(), ember.zeros(3, 4, 3, 3))
    with pytest.raises(RuntimeError, match="floating-point input"):
        F.conv2d(ember.zeros(1, 4, 5, 5, dtype=ember.int64),
                 ember.zeros(3, 4, 3, 3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride "
                                           "or dilation"):
        F.conv_transpose2d(x, ember.zeros(4, 2, 3, 3), output_padding=1)
    with pytest.raises(RuntimeError, match="Given transposed=1, weight of size"):
        F.conv_transpose2d(x, ember.zeros(3, 2, 3, 3))


def test_exported_in_ember_namespace():
    assert ember.conv2d is F.conv2d
    assert ember.conv_transpose1d is F.conv_transpose1d


@requires_torch
@pytest.mark.parametrize("n,stride,padding,dilation,groups", [
    (1, 2, 1, 1, 1), (1, 1, "same", 3, 2), (2, (2, 1), (1, 2), (1, 2), 1),
    (2, 1, "same", 2, 3), (2, 3, 0, 1, 3), (3, (1, 2, 1), 1, 1, 1)])
def test_conv_matches_torch_on_larger_inputs(n, stride, padding, dilation, groups):
    import torch

    rng = np.random.default_rng(0)
    spatial = (9, 8, 7)[:n]
    kernel = (3, 2, 3)[:n]
    x = rng.standard_normal((3, 6) + spatial)
    w = rng.standard_normal((6, 6 // groups) + kernel)
    b = rng.standard_normal(6)
    name = f"conv{n}d"
    ex, ew, eb = _t(x), _t(w), _t(b)
    out = getattr(F, name)(ex, ew, eb, stride=stride, padding=padding, dilation=dilation,
                           groups=groups)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    tout = getattr(torch.nn.functional, name)(tx, tw, tb, stride=stride, padding=padding,
                                              dilation=dilation, groups=groups)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-10)
    upstream = rng.standard_normal(tuple(out.shape))
    out.backward(ember.tensor(upstream))
    tout.backward(torch.tensor(upstream))
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=1e-9)


@requires_torch
@pytest.mark.parametrize("n,stride,padding,output_padding,dilation,groups", [
    (1, 3, 1, 2, 1, 1), (2, (2, 3), (1, 0), (1, 2), 1, 2), (2, 1, 2, 1, 2, 1),
    (3, 2, 1, 1, 1, 1)])
def test_conv_transpose_matches_torch(n, stride, padding, output_padding, dilation, groups):
    import torch

    rng = np.random.default_rng(1)
    spatial = (5, 4, 3)[:n]
    kernel = (3, 3, 2)[:n]
    x = rng.standard_normal((2, 4) + spatial)
    w = rng.standard_normal((4, 6 // groups) + kernel)
    b = rng.standard_normal(6)
    name = f"conv_transpose{n}d"
    ex, ew, eb = _t(x), _t(w), _t(b)
    out = getattr(F, name)(ex, ew, eb, stride, padding, output_padding, groups, dilation)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    tout = getattr(torch.nn.functional, name)(tx, tw, tb, stride, padding, output_padding,
                                              groups, dilation)
    assert tuple(out.shape) == tuple(tout.shape)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-10)
    upstream = rng.standard_normal(tuple(out.shape))
    out.backward(ember.tensor(upstream))
    tout.backward(torch.tensor(upstream))
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=1e-9)


def test_backward_is_a_transposed_convolution_and_twice_differentiable():
    rng = np.random.default_rng(2)
    x = _t(rng.standard_normal((1, 2, 5, 5)))
    w = _t(rng.standard_normal((3, 2, 3, 3)))
    y = F.conv2d(x, w, padding=1)
    (gx, gw) = ember.autograd.grad(y.sum(), (x, w), create_graph=True)
    assert gx.grad_fn.name() == "ConvolutionBackward0"
    assert gx.requires_grad and gw.requires_grad
    # d/dw of sum(grad_x * c) is again a convolution-shaped gradient
    (ggw,) = ember.autograd.grad((gx * gx).sum(), (w,))
    assert tuple(ggw.shape) == (3, 2, 3, 3)
    assert ember.autograd.gradgradcheck(lambda a, b: F.conv2d(a, b, stride=2, padding=1),
                                        (x, w))


def test_non_contiguous_input():
    rng = np.random.default_rng(3)
    base = rng.standard_normal((1, 2, 6, 5))
    w = rng.standard_normal((2, 2, 2, 2))
    transposed = _t(base.transpose(0, 1, 3, 2).copy(), False)
    view = _t(base, False).transpose(2, 3)
    np.testing.assert_allclose(F.conv2d(view, _t(w, False)).numpy(),
                               F.conv2d(transposed, _t(w, False)).numpy())


def test_fold_of_unfold_counts_overlaps():
    x = ember.ones(1, 2, 4, 5, dtype=ember.float64)
    cols = F.unfold(x, (2, 3), padding=1, stride=(1, 2))
    back = F.fold(cols, (4, 5), (2, 3), padding=1, stride=(1, 2))
    counts = F.fold(F.unfold(ember.ones(1, 1, 4, 5, dtype=ember.float64), (2, 3), padding=1,
                             stride=(1, 2)), (4, 5), (2, 3), padding=1, stride=(1, 2))
    np.testing.assert_allclose(back.numpy(), np.broadcast_to(counts.numpy(), (1, 2, 4, 5)))


def test_conv_equals_unfold_matmul():
    rng = np.random.default_rng(4)
    x = _t(rng.standard_normal((2, 3, 5, 6)), False)
    w = _t(rng.standard_normal((4, 3, 2, 3)), False)
    cols = F.unfold(x, (2, 3), dilation=(2, 1), stride=(1, 2))
    expected = (w.reshape(4, -1) @ cols).reshape(2, 4, 3, 2)
    np.testing.assert_allclose(F.conv2d(x, w, dilation=(2, 1), stride=(1, 2)).numpy(),
                               expected.numpy(), atol=1e-12)


def test_fold_errors():
    with pytest.raises(RuntimeError, match="calculated number of sliding blocks 3 \\* 3 = 9"):
        F.fold(ember.zeros(1, 4, 8), (4, 4), 2)
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"):
        F.fold(ember.zeros(1, 5, 9), (4, 4), 2)
    with pytest.raises(RuntimeError, match="Only 3D or 4D input"):
        F.unfold(ember.zeros(4, 4), 2)


def test_all_kernel_offsets_reach_every_pixel_in_conv_transpose():
    # conv_transpose of a delta spreads the kernel at stride positions
    y = ember.zeros(1, 1, 2, 2, dtype=ember.float64)
    y._data[0, 0, 1, 1] = 1.0
    w = ember.tensor(np.arange(9.0).reshape(1, 1, 3, 3))
    out = F.conv_transpose2d(y, w, stride=2).numpy()[0, 0]
    expected = np.zeros((5, 5))
    expected[2:5, 2:5] = np.arange(9.0).reshape(3, 3)
    np.testing.assert_allclose(out, expected)


def test_empty_batch_convolution_and_gradients():
    x = ember.zeros(0, 2, 5, 5, requires_grad=True)
    w = ember.ones(3, 2, 3, 3, requires_grad=True)
    out = F.conv2d(x, w, padding=1)
    assert tuple(out.shape) == (0, 3, 5, 5)
    out.sum().backward()
    assert tuple(x.grad.shape) == (0, 2, 5, 5)
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros((3, 2, 3, 3)))


@requires_torch
@pytest.mark.parametrize("transposed", [False, True])
def test_random_configurations_match_torch(transposed):
    """Seeded fuzzing over dims, groups, kernel, stride, padding, dilation (and
    output_padding): values and both gradients, configurations PyTorch accepts."""
    import torch

    rng = np.random.default_rng(11 + transposed)
    checked = 0
    for _ in range(60):
        nd = int(rng.integers(1, 4))
        groups = int(rng.choice([1, 2]))
        cin, cout = groups * int(rng.integers(1, 3)), groups * int(rng.integers(1, 3))
        kernel, stride, dilation = (tuple(int(v) for v in rng.integers(1, 4 if i == 0 else 3,
                                                                          nd)) for i in range(3))
        padding = tuple(int(v) for v in rng.integers(0, 3, nd))
        size = tuple(int(v) for v in rng.integers(1, 6, nd))
        x = rng.standard_normal((2, cin) + size)
        if transposed:
            output_padding = tuple(int(rng.integers(0, max(s, d))) for s, d in
                                   zip(stride, dilation))
            w = rng.standard_normal((cin, cout // groups) + kernel)
            args = (None, stride, padding, output_padding, groups, dilation)
            name = f"conv_transpose{nd}d"
        else:
            w = rng.standard_normal((cout, cin // groups) + kernel)
            args = (None, stride, padding, dilation, groups)
            name = f"conv{nd}d"
        tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
        try:
            expected = getattr(torch.nn.functional, name)(tx, tw, *args)
        except RuntimeError:
            with pytest.raises(RuntimeError):
                getattr(F, name)(_t(x), _t(w), *args)
            continue
        ex, ew = _t(x), _t(w)
        out = getattr(F, name)(ex, ew, *args)
        assert tuple(out.shape) == tuple(expected.shape)
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-9)
        upstream = rng.standard_normal(tuple(out.shape))
        gx, gw = torch.autograd.grad(expected, (tx, tw), torch.tensor(upstream))
        ours = ember.autograd.grad(out, (ex, ew), ember.tensor(upstream))
        np.testing.assert_allclose(ours[0].numpy(), gx.numpy(), atol=1e-9)
        np.testing.assert_allclose(ours[1].numpy(), gw.numpy(), atol=1e-9)
        checked += 1
    assert checked > 20


def test_conv_weight_gradient_twice_with_retain_graph():
    # the forward keeps its im2col matrix for the first weight gradient only
    x = ember.randn(2, 3, 5, 5, dtype=ember.float64, requires_grad=True)
    w = ember.randn(4, 3, 3, 3, dtype=ember.float64, requires_grad=True)
    y = ember.nn.functional.conv2d(x, w, padding=1).sum()
    (first,) = ember.autograd.grad(y, w, retain_graph=True)
    (second,) = ember.autograd.grad(y, w)
    assert first.tolist() == second.tolist()
