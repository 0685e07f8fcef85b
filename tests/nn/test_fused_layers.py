"""The fused layer ops (batch / group norm, resampling, pixel shuffle, trilinear, multi-margin
loss) beyond the op table: training steps against PyTorch, replay under ember.compile,
dtype rules, the adjoint of resampling, and errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

from ..conftest import requires_torch


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(
        lib.nn.Conv2d(2, 4, 3, padding=1), lib.nn.BatchNorm2d(4), lib.nn.ReLU(),
        lib.nn.Upsample(scale_factor=2, mode="bilinear"), lib.nn.GroupNorm(2, 4),
        lib.nn.PixelShuffle(2), lib.nn.InstanceNorm2d(1, affine=True),
        lib.nn.Flatten(), lib.nn.Linear(256, 3))


@requires_torch
def test_training_steps_match_torch():
    import torch

    rng = np.random.default_rng(0)
    nets = [_net(lib) for lib in (ember, torch)]
    for e, t in zip(nets[0].parameters(), nets[1].parameters()):
        e.data = ember.tensor(t.detach().numpy().copy())
    opts = [lib.optim.SGD(net.parameters(), lr=0.1) for lib, net in zip((ember, torch), nets)]
    for _ in range(3):
        x = rng.standard_normal((3, 2, 4, 4)).astype(np.float32)
        y = rng.integers(0, 3, 3)
        for lib, net, opt in zip((ember, torch), nets, opts):
            opt.zero_grad()
            lib.nn.functional.cross_entropy(net(lib.tensor(x)), lib.tensor(y)).backward()
            opt.step()
    for e, t in zip(nets[0].state_dict().values(), nets[1].state_dict().values()):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-4, atol=1e-5)


def test_compiled_training_step_matches_eager():
    rng = np.random.default_rng(1)
    models = [_net(ember), _net(ember)]

    def step_of(model):
        def step(x):
            model.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            return loss
        return step

    eager, compiled = step_of(models[0]), ember.compile(step_of(models[1]))
    for _ in range(3):
        x = ember.tensor(rng.standard_normal((3, 2, 4, 4)).astype(np.float32))
        np.testing.assert_allclose(eager(x).item(), compiled(x).item(), rtol=1e-5)
        for p, q in zip(models[0].parameters(), models[1].parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-6)
    assert compiled.stats["replays"] == 2
    for a, b in zip(models[0].buffers(), models[1].buffers()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)


def test_batch_norm_double_backward_in_eval_and_training():
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal((4, 2, 3)), requires_grad=True)
    w = ember.tensor(rng.uniform(0.5, 2, 2), requires_grad=True)
    for training in (True, False):
        def f(x, w, training=training):
            return F.batch_norm(x, ember.zeros(2, dtype=ember.float64),
                                ember.ones(2, dtype=ember.float64), w, None, training)
        assert ember.autograd.gradgradcheck(f, (x, w))


def test_half_input_with_float_parameters_stays_half():
    x = ember.randn(4, 4, 3).half()
    out = F.batch_norm(x, None, None, ember.ones(4), ember.zeros(4), training=True)
    assert out.dtype is ember.float16
    assert F.group_norm(x, 2, ember.ones(4), ember.zeros(4)).dtype is ember.float16


def test_mixed_parameter_dtype_raises():
    x = ember.randn(4, 3, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="mixed dtype"):
        F.batch_norm(x, None, None, ember.ones(3), None, training=True)
    with pytest.raises(RuntimeError, match="mixed dtype"):
        F.group_norm(x.reshape(2, 3, 2), 3, ember.ones(3))


def test_resampling_backward_is_the_adjoint():
    # <A x, g> == <x, A^T g> for every mode, including non-integer scales
    rng = np.random.default_rng(3)
    cases = [((1, 2, 4, 5, 3), dict(scale_factor=(0.7, 2.3, 2.3), mode="nearest")),
             ((2, 1, 5, 4), dict(scale_factor=1.7, mode="bicubic")),
             ((1, 2, 7), dict(size=3, mode="area")),
             ((1, 1, 3, 4), dict(size=(7, 2), mode="bilinear", align_corners=True)),
             ((1, 1, 3, 2), dict(size=(2, 1), mode="bilinear", antialias=True)),
             ((2, 1, 9, 5), dict(scale_factor=(0.4, 1.5), mode="lanczos", antialias=True))]
    for shape, kwargs in cases:
        x = ember.tensor(rng.standard_normal(shape), requires_grad=True)
        out = F.interpolate(x, **kwargs)
        g = ember.tensor(rng.standard_normal(tuple(out.shape)))
        out.backward(g)
        lhs = float((out.detach() * g).sum())
        rhs = float((x.detach() * x.grad).sum())
        assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs)), (shape, kwargs)


def test_pixel_shuffle_round_trip_and_double_backward():
    x = ember.randn(2, 8, 3, 2, dtype=ember.float64, requires_grad=True)
    assert ember.equal(F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2), x)
    (g,) = ember.autograd.grad(F.pixel_shuffle(x, 2).square().sum(), x, create_graph=True)
    assert g.grad_fn.name() == "PixelUnshuffleBackward0"
    np.testing.assert_allclose(g.detach().numpy(), 2 * x.detach().numpy())
    (gg,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), np.full(tuple(x.shape), 2.0))


def test_multi_margin_loss_errors():
    x = ember.randn(3, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for 'weight' is not implemented"):
        F.multi_margin_loss(x, ember.tensor([0, 1, 2]), weight=ember.ones(4, requires_grad=True))
    with pytest.raises(RuntimeError, match=r"inconsistent target size \[2\]"):
        F.multi_margin_loss(x, ember.tensor([0, 1]))
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        F.multi_margin_loss(x, ember.tensor([0, 1, 2]), p=3)
    loss = nn.MultiMarginLoss(p=2, reduction="none")(x[0], ember.tensor([1]))
    assert tuple(loss.shape) == (1,) and loss.grad_fn.name() == "MultiMarginLossBackward0"


@pytest.mark.parametrize("name", ["batch_norm", "group_norm", "interpolate", "pixel_shuffle",
                                  "pixel_unshuffle", "multi_margin_loss", "bilinear",
                                  "cosine_similarity", "pairwise_distance"])
def test_docstring_examples_run(name):
    import doctest

    function = getattr(F, name)
    test = doctest.DocTestParser().get_doctest(function.__doc__, {}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    result = runner.run(test)
    assert result.attempted > 0 and result.failed == 0


def test_antialias_argument_errors():
    x = ember.randn(1, 1, 4, 4)
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(x[0], scale_factor=0.5, mode="linear", antialias=True)
    with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
        F.interpolate(x, scale_factor=0.5, mode="lanczos")
    with pytest.raises(ValueError, match="does not support align_corners=True"):
        F.interpolate(x, scale_factor=0.5, mode="lanczos", align_corners=True, antialias=True)
    out = F.interpolate(x.requires_grad_(), size=(2, 3), mode="bicubic", antialias=True)
    assert out.grad_fn.name() == "UpsampleBicubic2DAaBackward0"


def test_eval_backward_uses_the_statistics_of_its_forward():
    # a training step between an evaluation forward and its backward moves the running
    # statistics; the gradient is still that of the computed output (PyTorch's reads the
    # moved statistics)
    bn = nn.BatchNorm1d(3)
    x = ember.arange(12.0).reshape(4, 3).requires_grad_()
    bn.eval()
    y = bn(x)
    (before,) = ember.autograd.grad(y.sum(), x, retain_graph=True)
    bn.train()
    bn(x * 3)
    (after,) = ember.autograd.grad(y.sum(), x)
    np.testing.assert_array_equal(before.numpy(), after.numpy())
    np.testing.assert_allclose(after.numpy(), np.full((4, 3), 1 / np.sqrt(1 + 1e-5)), rtol=1e-6)


def test_linear_weight_gradient_is_laid_out_like_the_weight():
    # nn.Linear multiplies by weight.T (column-major): its gradient is computed so that
    # it reaches .grad row-major like the weight, with no copy, and equals PyTorch's
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 20)).astype(np.float32)
    w = rng.standard_normal((16, 20)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    ours = [ember.tensor(a, requires_grad=True) for a in (x, w, b)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    (ember.nn.functional.linear(*ours) ** 2).sum().backward()
    (torch.nn.functional.linear(*theirs) ** 2).sum().backward()
    for o, t in zip(ours, theirs):
        assert o.grad._data.flags.c_contiguous
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5)
    # addmm itself, with a column-major mat2 and a column-major mat1
    m1 = ember.tensor(x.T.copy(), requires_grad=True)
    m2 = ember.tensor(w, requires_grad=True)
    ember.addmm(ember.tensor(b), m1.t(), m2.t()).sum().backward()
    tm1 = torch.tensor(x.T.copy(), requires_grad=True)
    tm2 = torch.tensor(w, requires_grad=True)
    torch.addmm(torch.tensor(b), tm1.t(), tm2.t()).sum().backward()
    np.testing.assert_allclose(m1.grad.numpy(), tm1.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(m2.grad.numpy(), tm2.grad.numpy(), rtol=1e-5)
