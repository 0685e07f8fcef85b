"""Spatial transformers, fractional max pooling, multi_head_attention_forward,
linear_cross_entropy, nn.grad, nn.attention and CrossMapLRN2d: behaviour the op table does
not reach (PyTorch's random draws, warnings, errors, the modules, docstring examples)."""
from __future__ import annotations

import doctest
import importlib
import itertools
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ..conftest import requires_torch


def _torch():
    return pytest.importorskip("torch")


def _pair(array, requires_grad=False):
    torch = _torch()
    array = np.asarray(array, dtype=np.float64)
    return (ember.tensor(array).requires_grad_(requires_grad),
            torch.tensor(array).requires_grad_(requires_grad))


# ----------------------------------------------------------------------------- grid_sample
@requires_torch
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_gradients_far_outside_and_on_pixels_match_torch(padding):
    torch = _torch()
    x, tx = _pair(np.random.randn(1, 2, 4, 5), requires_grad=True)
    # far outside (clipped: no grid gradient), exactly on pixel centres, and inside
    points = np.array([[[[-3.0, 0.2], [2.5, -2.5], [0.0, 0.0], [0.25, -0.5]]]])
    g, tg = _pair(points, requires_grad=True)
    for mode in ("bilinear", "bicubic"):
        out = F.grid_sample(x, g, mode, padding, align_corners=True)
        theirs = torch.nn.functional.grid_sample(tx, tg, mode, padding, align_corners=True)
        up = np.random.randn(*theirs.shape)
        ours_grads = ember.autograd.grad(out, (x, g), ember.tensor(up))
        their_grads = torch.autograd.grad(theirs, (tx, tg), torch.tensor(up))
        np.testing.assert_allclose(out.detach().numpy(), theirs.detach().numpy(), atol=1e-12)
        for a, b in zip(ours_grads, their_grads):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-10)


@requires_torch
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_grid_sample_nan_and_inf_positions_read_like_torch():
    torch = _torch()
    x, tx = _pair(np.random.randn(1, 1, 3, 3))
    points = np.array([[[[np.nan, 0.0], [np.inf, 0.5], [-np.inf, -np.inf]]]])
    for mode, padding in itertools.product(("bilinear", "nearest"),
                                           ("zeros", "border", "reflection")):
        ours = F.grid_sample(x, ember.tensor(points), mode, padding, False)
        theirs = torch.nn.functional.grid_sample(tx, torch.tensor(points), mode, padding, False)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12, equal_nan=True)


def test_grid_sample_warns_without_align_corners_and_checks_arguments():
    x, grid = ember.randn(1, 1, 3, 3), ember.zeros(1, 2, 2, 2)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, grid)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.grid_sample(x, grid, align_corners=False)
    with pytest.raises(ValueError, match="expected mode"):
        F.grid_sample(x, grid, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode"):
        F.grid_sample(x, grid, padding_mode="wrap", align_corners=False)
    with pytest.raises(RuntimeError, match="size 2 in last dimension"):
        F.grid_sample(x, ember.zeros(1, 2, 2, 3), align_corners=False)
    with pytest.raises(RuntimeError, match="same batch size"):
        F.grid_sample(x, ember.zeros(2, 2, 2, 2), align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D"):
        F.grid_sample(ember.randn(1, 1, 2, 2, 2), ember.zeros(1, 1, 1, 1, 3), mode="bicubic",
                      align_corners=False)
    with pytest.raises(RuntimeError, match="same dtype"):
        F.grid_sample(x, ember.zeros(1, 2, 2, 2, dtype=ember.float64), align_corners=False)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_empty_batch_and_grid(mode):
    out = F.grid_sample(ember.randn(0, 2, 3, 3), ember.zeros(0, 2, 2, 2), mode,
                        align_corners=False)
    assert out.shape == (0, 2, 2, 2)
    out = F.grid_sample(ember.randn(1, 2, 3, 3), ember.zeros(1, 0, 2, 2), mode,
                        align_corners=False)
    assert out.shape == (1, 2, 0, 2)


def test_affine_grid_errors_and_identity_round_trip():
    theta = ember.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    image = ember.randn(1, 3, 4, 5)
    grid = F.affine_grid(theta, image.shape, align_corners=False)
    back = F.grid_sample(image, grid, align_corners=False)
    np.testing.assert_allclose(back.numpy(), image.numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="floating point type"):
        F.affine_grid(theta.long(), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(ember.zeros(1, 3, 4), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(NotImplementedError, match="4D and 5D sizes"):
        F.affine_grid(theta, (1, 1, 2), align_corners=False)
    with pytest.raises(ValueError, match="positive output size"):
        F.affine_grid(theta, (1, 1, 0, 2), align_corners=False)
    with pytest.warns(UserWarning, match="unit-size grids"):
        F.affine_grid(theta, (1, 1, 1, 2), align_corners=True)


# ----------------------------------------------------------------------------- fractional
@requires_torch
@pytest.mark.parametrize("n", [2, 3])
def test_fractional_max_pool_draws_its_samples_as_torch_does(n):
    torch = _torch()
    shape = (2, 3) + (8,) * n
    x, tx = _pair(np.random.randn(*shape))
    ember.manual_seed(11)
    torch.manual_seed(11)
    ours = getattr(F, f"fractional_max_pool{n}d")(x, 2, output_ratio=(0.5,) * n,
                                                   return_indices=True)
    theirs = getattr(torch.nn.functional, f"fractional_max_pool{n}d")(
        tx, 2, output_ratio=(0.5,) * n, return_indices=True)
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy())


@requires_torch
def test_fractional_max_pool_prefers_nan_like_torch():
    torch = _torch()
    array = np.random.randn(1, 1, 6, 6)
    array[0, 0, 1, 1] = array[0, 0, 1, 2] = np.nan
    u = np.full((1, 1, 2), 0.3)
    ours = F.fractional_max_pool2d(ember.tensor(array), 3, output_size=3,
                                   return_indices=True, _random_samples=ember.tensor(u))
    theirs = torch.nn.functional.fractional_max_pool2d(
        torch.tensor(array), 3, output_size=3, return_indices=True,
        _random_samples=torch.tensor(u))
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())


@pytest.mark.parametrize("call,error,text", [
    (lambda x: F.fractional_max_pool2d(x, 3), ValueError, "either an output_size"),
    (lambda x: F.fractional_max_pool2d(x, 3, output_size=5), RuntimeError,
     "pool height 3 too large relative to input height 6"),
    (lambda x: F.fractional_max_pool2d(x, 2, output_size=3,
                                       _random_samples=ember.rand(2, 3, 3)),
     RuntimeError, "size\\(2\\) equals to 2"),
    (lambda x: F.fractional_max_pool2d(x, 2, output_size=3,
                                       _random_samples=ember.rand(1, 3, 2)),
     RuntimeError, "no less then input batch size"),
    (lambda x: F.fractional_max_pool2d(x, 2, output_size=3,
                                       _random_samples=ember.rand(2, 3, 2).double()),
     RuntimeError, "same dtype as input"),
    (lambda x: F.fractional_max_pool2d(x, 0, output_size=3), RuntimeError, "greater than zero"),
    (lambda x: F.fractional_max_pool2d(x.long(), 2, output_size=3), NotImplementedError,
     "not implemented for 'int64'"),
    (lambda x: F.fractional_max_pool3d(ember.randn(1, 1, 6, 6, 6), 2, output_size=5),
     RuntimeError, "pool time 2 too large"),
])
def test_fractional_max_pool_errors(call, error, text):
    with pytest.raises(error, match=text):
        call(ember.randn(2, 3, 6, 7))


def test_fractional_max_pool_empty_shapes():
    assert F.fractional_max_pool2d(ember.randn(2, 3, 6, 7), 2, output_size=0).shape == \
        (2, 3, 0, 0)
    assert F.fractional_max_pool2d(ember.randn(0, 3, 6, 7), 2, output_size=3).shape == \
        (0, 3, 3, 3)
    assert F.fractional_max_pool3d(ember.randn(0, 1, 5, 5, 5), 2, output_size=2).shape == \
        (0, 1, 2, 2, 2)


def test_fractional_max_pool_node_is_the_pooling_for_any_rank():
    for shape in ((1, 2, 5, 5), (2, 5, 5)):
        x = ember.randn(*shape, requires_grad=True)
        out = F.fractional_max_pool2d(x, 2, output_size=3)
        assert out.grad_fn.name() == "FractionalMaxPool2DBackward0"


def test_fractional_max_pool_modules():
    pool = ember.nn.FractionalMaxPool2d(2, output_size=3, return_indices=True)
    values, indices = pool(ember.randn(2, 3, 7, 7))
    assert values.shape == (2, 3, 3, 3) and indices.dtype == ember.int64
    assert repr(pool) == "FractionalMaxPool2d()"
    fixed = ember.nn.FractionalMaxPool3d(2, output_ratio=0.5,
                                         _random_samples=ember.rand(1, 2, 3))
    x = ember.randn(1, 2, 6, 6, 6)
    assert ember.equal(fixed(x), fixed(x))  # fixed samples: the same windows every call
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        ember.nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="either an output size, or a pooling ratio"):
        ember.nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        ember.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)


# ----------------------------------------------------------------------------- CrossMapLRN2d
@requires_torch
@pytest.mark.parametrize("size,channels", [(3, 6), (4, 7), (5, 3), (1, 4)])
def test_cross_map_lrn_matches_torch(size, channels):
    torch = _torch()
    x, tx = _pair(np.random.randn(2, channels, 3, 2))
    ours = ember.nn.CrossMapLRN2d(size, 0.5, 0.75, 1.5)(x)
    theirs = torch.nn.CrossMapLRN2d(size, 0.5, 0.75, 1.5)(tx)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)
    assert repr(ember.nn.CrossMapLRN2d(size)) == repr(torch.nn.CrossMapLRN2d(size))


def test_cross_map_lrn_gradient_and_rank_check():
    x = ember.randn(1, 5, 2, 2, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(ember.nn.CrossMapLRN2d(3, 0.5, 0.75, 1.0), (x,))
    with pytest.raises(ValueError, match="Expected input to be 4D, got 3D"):
        ember.nn.CrossMapLRN2d(3)(ember.randn(2, 3, 4))


# ----------------------------------------------------------------------------- attention
@requires_torch
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_forward_self_attention_with_one_tensor_matches_torch(need_weights):
    torch = _torch()
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in [(3, 2, 4), (12, 4), (12,), (4, 4), (4,)]]
    ours = [ember.tensor(a).requires_grad_() for a in arrays]
    theirs = [torch.tensor(a).requires_grad_() for a in arrays]
    mask = np.array([[False, False, True], [False, False, False]])
    x, w, b, ow, ob = ours
    out, attn = F.multi_head_attention_forward(
        x, x, x, 4, 2, w, b, None, None, False, 0.0, ow, ob, key_padding_mask=ember.tensor(mask),
        need_weights=need_weights)
    tx, tw, tb, tow, tob = theirs
    t_out, t_attn = torch.nn.functional.multi_head_attention_forward(
        tx, tx, tx, 4, 2, tw, tb, None, None, False, 0.0, tow, tob,
        key_padding_mask=torch.tensor(mask), need_weights=need_weights)
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), atol=1e-10)
    assert (attn is None) == (t_attn is None)
    out.sum().backward()
    t_out.sum().backward()
    for a, b_ in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b_.grad.numpy(), atol=1e-10)


@requires_torch
def test_mha_forward_dropout_and_causal_match_torch():
    torch = _torch()
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in [(3, 2, 4), (12, 4), (12,), (4, 4), (4,)]]
    causal = np.triu(np.ones((3, 3), dtype=bool), 1)
    ember.manual_seed(4)
    torch.manual_seed(4)
    e = [ember.tensor(a) for a in arrays]
    t = [torch.tensor(a) for a in arrays]
    ours = F.multi_head_attention_forward(e[0], e[0], e[0], 4, 2, e[1], e[2], None, None,
                                          False, 0.3, e[3], e[4], attn_mask=ember.tensor(causal))
    theirs = torch.nn.functional.multi_head_attention_forward(
        t[0], t[0], t[0], 4, 2, t[1], t[2], None, None, False, 0.3, t[3], t[4],
        attn_mask=torch.tensor(causal))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-10)
    ours = F.multi_head_attention_forward(e[0], e[0], e[0], 4, 2, e[1], e[2], None, None,
                                          False, 0.0, e[3], e[4], need_weights=False,
                                          attn_mask=ember.tensor(causal), is_causal=True)
    theirs = torch.nn.functional.multi_head_attention_forward(
        t[0], t[0], t[0], 4, 2, t[1], t[2], None, None, False, 0.0, t[3], t[4],
        need_weights=False, attn_mask=torch.tensor(causal), is_causal=True)
    np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy(), atol=1e-10)


def test_mha_forward_errors():
    x, w, b = ember.randn(3, 2, 4), ember.randn(12, 4), ember.zeros(12)
    args = (None, None, False, 0.0, ember.eye(4), None)
    with pytest.raises(AssertionError, match="expecting embedding dimension of 8"):
        F.multi_head_attention_forward(x, x, x, 8, 2, w, b, *args)
    with pytest.raises(AssertionError, match="not divisible by num_heads 3"):
        F.multi_head_attention_forward(x, x, x, 4, 3, w, b, *args)
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        F.multi_head_attention_forward(x, x, x, 4, 2, w, b, *args, is_causal=True)
    with pytest.raises(RuntimeError, match="shape of the 2D attn_mask"):
        F.multi_head_attention_forward(x, x, x, 4, 2, w, b, *args, attn_mask=ember.zeros(2, 2))
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D"):
        F.multi_head_attention_forward(x, x[0], x[0], 4, 2, w, b, *args)


def test_sdpa_kernel_keeps_and_restores_the_selection():
    from ember.nn.attention import SDPBackend, current_backends, sdpa_kernel

    everything = current_backends()
    with sdpa_kernel(SDPBackend.MATH):
        assert current_backends() == [SDPBackend.MATH]
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION],
                         set_priority=True):
            assert current_backends()[0] == SDPBackend.CUDNN_ATTENTION
        assert current_backends() == [SDPBackend.MATH]
    assert current_backends() == everything
    with pytest.raises(AssertionError, match="instance of SDPBackend"):
        with sdpa_kernel("math"):
            pass
    assert repr(SDPBackend.MATH) == "<SDPBackend.MATH: 0>" and int(SDPBackend.ERROR) == -1


# ----------------------------------------------------------------------------- linear CE
@requires_torch
def test_linear_cross_entropy_module_matches_torch():
    torch = _torch()
    ember.manual_seed(0)
    ours = ember.nn.LinearCrossEntropyLoss(5, 4, out_features=(3,), bias=True,
                                           label_smoothing=0.1)
    theirs = torch.nn.LinearCrossEntropyLoss(5, 4, out_features=(3,), bias=True,
                                             label_smoothing=0.1).double()
    with torch.no_grad():
        theirs.linear.weight.copy_(torch.tensor(ours.linear.weight.detach().numpy()))
        theirs.linear.bias.copy_(torch.tensor(ours.linear.bias.detach().numpy()))
    x, tx = _pair(np.random.randn(2, 5))
    target = np.random.randint(0, 4, (2, 3))
    a = ours.double()(x, ember.tensor(target))
    b = theirs(tx, torch.tensor(target))
    np.testing.assert_allclose(a.item(), b.item(), rtol=1e-10)
    a.backward()
    b.backward()
    np.testing.assert_allclose(ours.linear.weight.grad.numpy(),
                               theirs.linear.weight.grad.numpy(), atol=1e-10)
    assert repr(ember.nn.LinearCrossEntropyLoss(5, 10, out_features=(4, 3))) == \
        repr(torch.nn.LinearCrossEntropyLoss(5, 10, out_features=(4, 3)))


def test_linear_cross_entropy_options_and_errors():
    Options = ember.nn.LinearCrossEntropyOptions
    x, w, t = ember.randn(4, 3), ember.randn(5, 3), ember.tensor([0, 1, 2, 3])
    plain = F.linear_cross_entropy(x, w, t)
    chunked = F.linear_cross_entropy(x, w, t, options=Options(batch_chunk_size=2,
                                                              chunking_method=None))
    assert ember.allclose(plain, chunked)
    for kwargs, text in (({"chunking_method": "foo"}, "invalid chunking_method"),
                         ({"chunking_method": "aspect_ratio:0"}, "invalid chunking_method"),
                         ({"acc_policy": "fast"}, "invalid acc_policy"),
                         ({"batch_chunk_size": 0}, "positive int or None"),
                         ({"acc_dtype": ember.int64}, "acc_dtype must be one of")):
        with pytest.raises(ValueError, match=text):
            Options(**kwargs)
    with pytest.raises(TypeError, match="LinearCrossEntropyOptions"):
        F.linear_cross_entropy(x, w, t, options={"batch_chunk_size": 2})
    with pytest.raises(RuntimeError, match="dimensionality 1 or 2"):
        F.linear_cross_entropy(ember.randn(2, 2, 3), w, t)
    with pytest.raises(RuntimeError, match="in_features"):
        F.linear_cross_entropy(x, ember.randn(5, 2), t)
    with pytest.raises(RuntimeError, match="linear_bias shape"):
        F.linear_cross_entropy(x, w, t, linear_bias=ember.zeros(4))
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified"):
        F.linear_cross_entropy(x, w, ember.rand(4, 5), ignore_index=1)
    with pytest.raises(RuntimeError, match="requires batched input"):
        F.linear_cross_entropy(ember.randn(3), ember.randn(5, 2, 3), ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="expected weight shape"):
        ember.nn.LinearCrossEntropyLoss(3, 5, weight=ember.ones(4))
    with pytest.raises(RuntimeError, match="label_smoothing"):
        ember.nn.LinearCrossEntropyLoss(3, 5, label_smoothing=1.5)


# ----------------------------------------------------------------------------- nn.grad
@requires_torch
@pytest.mark.parametrize("n", [1, 2, 3])
def test_nn_grad_matches_torch(n):
    torch = _torch()
    x, tx = _pair(np.random.randn(2, 4, *(6,) * n))
    w, tw = _pair(np.random.randn(6, 2, *(3,) * n))
    kwargs = {"stride": 2, "padding": 1, "dilation": 1, "groups": 2}
    go_shape = getattr(torch.nn.functional, f"conv{n}d")(tx, tw, **kwargs).shape
    go, tgo = _pair(np.random.randn(*go_shape))
    ours = getattr(ember.nn.grad, f"conv{n}d_input")(x.shape, w, go, **kwargs)
    theirs = getattr(torch.nn.grad, f"conv{n}d_input")(tx.shape, tw, tgo, **kwargs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-10)
    ours = getattr(ember.nn.grad, f"conv{n}d_weight")(x, w.shape, go, **kwargs)
    theirs = getattr(torch.nn.grad, f"conv{n}d_weight")(tx, tw.shape, tgo, **kwargs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-10)


def test_nn_grad_records_a_graph_and_checks_shapes():
    w = ember.randn(3, 2, 3, dtype=ember.float64, requires_grad=True)
    go = ember.randn(1, 3, 3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda w, go: ember.nn.grad.conv1d_input((1, 2, 5), w, go), (w, go))
    with ember.no_grad():
        assert not ember.nn.grad.conv1d_input((1, 2, 5), w, go).requires_grad
    with pytest.raises(RuntimeError, match="grad_output has shape"):
        ember.nn.grad.conv1d_input((1, 2, 6), w, go)
    with pytest.raises(ValueError, match="must have 3 entries"):
        ember.nn.grad.conv1d_weight(ember.randn(1, 2, 5), (3, 2), go)


@pytest.mark.parametrize("module", [
    "ember.ops.grid_sampling", "ember.ops.fractional_pooling", "ember.ops.multihead",
    "ember.ops.linear_cross_entropy", "ember.ops.aten_forms", "ember.nn.grad",
    "ember.nn.attention", "ember.nn.modules.fractional_pooling",
    "ember.nn.modules.cross_map_lrn", "ember.nn.modules.linear_cross_entropy",
    "ember.signal", "ember.signal.windows", "ember.signal.window_functions"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_cross_map_lrn2d_is_one_node_with_derivatives_of_every_order():
    x = ember.randn(2, 6, 2, 2, dtype=ember.float64, requires_grad=True)
    layer = ember.nn.CrossMapLRN2d(5, alpha=0.5, beta=0.75, k=1.0)
    assert layer(x).grad_fn.name() == "CrossMapLRN2dBackward"
    assert ember.autograd.gradcheck(layer, (x,))
    assert ember.autograd.gradgradcheck(layer, (x,))
