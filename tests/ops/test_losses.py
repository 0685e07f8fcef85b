"""Edge cases of the losses in ember/ops/losses.py: stability at extreme inputs, PyTorch's
conventions (ignore_index, weighted means, label smoothing, clamped logs, CTC), errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ..conftest import requires_torch


def _torch():
    return pytest.importorskip("torch")


def _pair(array, requires_grad=True, device="cpu"):
    torch = _torch()
    array = np.asarray(array, dtype=np.float64)
    return (ember.tensor(array, device=device).requires_grad_(requires_grad),
            torch.tensor(array).requires_grad_(requires_grad))


def _close(ours, theirs, atol=1e-10, rtol=1e-7):
    np.testing.assert_allclose(np.asarray(ours.detach().cpu().numpy(), dtype=np.float64),
                               theirs.detach().numpy(), atol=atol, rtol=rtol)


def _check(name, ember_args, torch_args, kwargs=None, atol=1e-10):
    """Value and input gradients of F.<name> against PyTorch."""
    torch = _torch()
    kwargs = kwargs or {}
    out = getattr(F, name)(*ember_args, **kwargs)
    t_out = getattr(torch.nn.functional, name)(*torch_args, **kwargs)
    _close(out, t_out, atol=atol)
    leaves = [a for a in ember_args if isinstance(a, ember.Tensor) and a.requires_grad]
    t_leaves = [a for a in torch_args if isinstance(a, torch.Tensor) and a.requires_grad]
    if leaves:
        upstream = np.random.default_rng(0).standard_normal(tuple(out.shape))
        grads = ember.autograd.grad(out, leaves, ember.tensor(upstream, dtype=out.dtype))
        t_grads = torch.autograd.grad(t_out, t_leaves, torch.tensor(upstream, dtype=t_out.dtype))
        for g, tg in zip(grads, t_grads):
            _close(g, tg, atol=atol)
    return out


# ----------------------------------------------------------------------------- cross-entropy
def test_cross_entropy_is_finite_at_huge_logits(device):
    x = ember.tensor([[1e4, -1e4, 0.0], [-1e4, 1e4, 5e3]], device=device, requires_grad=True)
    target = ember.tensor([1, 1], device=device)
    loss = F.cross_entropy(x, target)
    assert np.isfinite(loss.item())
    np.testing.assert_allclose(loss.item(), 1e4, rtol=1e-6)   # (2e4 + 0) / 2
    loss.backward()
    assert np.isfinite(x.grad.cpu().numpy()).all()


@requires_torch
def test_cross_entropy_large_logits_match_pytorch():
    logits = np.array([[1e4, -1e4, 3.0], [2.0, 1e4 + 1, 1e4]])
    x, tx = _pair(logits)
    torch = _torch()
    _check("cross_entropy", (x, ember.tensor([2, 1])), (tx, torch.tensor([2, 1])))


def test_ignore_index_is_excluded_from_the_mean():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((4, 3))
    target = [0, -100, 2, -100]
    loss = F.cross_entropy(ember.tensor(logits), ember.tensor(target)).item()
    log_probs = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    expected = -(log_probs[0, 0] + log_probs[2, 2]) / 2
    np.testing.assert_allclose(loss, expected, rtol=1e-6)
    weighted = F.cross_entropy(ember.tensor(logits), ember.tensor([1, 1, 2, 0]), ignore_index=1,
                               weight=ember.tensor([1.0, 5.0, 2.0], dtype=ember.float64))
    expected = -(2 * log_probs[2, 2] + 1 * log_probs[3, 0]) / 3
    np.testing.assert_allclose(weighted.item(), expected, rtol=1e-6)


@pytest.mark.filterwarnings("ignore:invalid value encountered")  # NumPy's 0 / 0
def test_cross_entropy_with_every_target_ignored_is_nan_like_pytorch():
    loss = F.cross_entropy(ember.randn(3, 4), ember.tensor([-100, -100, -100]))
    assert math.isnan(loss.item())


@requires_torch
@pytest.mark.parametrize("kwargs", [
    {"label_smoothing": 0.1},
    {"label_smoothing": 0.25, "ignore_index": 1},
    {"label_smoothing": 0.3, "weight": [0.5, 2.0, 1.0, 3.0]},
    {"label_smoothing": 0.3, "weight": [0.5, 2.0, 1.0, 3.0], "ignore_index": 0,
     "reduction": "sum"},
    {"label_smoothing": 0.2, "reduction": "none", "ignore_index": 3},
])
def test_label_smoothing_matches_pytorch(kwargs):
    torch = _torch()
    rng = np.random.default_rng(2)
    x, tx = _pair(rng.standard_normal((5, 4, 2)))          # spatial (N, C, d1)
    target = [[0, 1], [1, 3], [2, 2], [3, 0], [1, 1]]
    ours, theirs = dict(kwargs), dict(kwargs)
    if "weight" in kwargs:
        ours["weight"] = ember.tensor(kwargs["weight"], dtype=ember.float64)
        theirs["weight"] = torch.tensor(kwargs["weight"], dtype=torch.float64)
    out = F.cross_entropy(x, ember.tensor(target), **ours)
    t_out = torch.nn.functional.cross_entropy(tx, torch.tensor(target), **theirs)
    _close(out, t_out)
    upstream = np.random.default_rng(3).standard_normal(tuple(out.shape))
    (grad,) = ember.autograd.grad(out, x, ember.tensor(upstream))
    (t_grad,) = torch.autograd.grad(t_out, tx, torch.tensor(upstream))
    _close(grad, t_grad)


@requires_torch
def test_label_smoothing_with_probability_targets_matches_pytorch():
    _torch()
    rng = np.random.default_rng(4)
    x, tx = _pair(rng.standard_normal((3, 5)))
    probs = rng.dirichlet(np.ones(5), size=3)
    p, tp = _pair(probs)
    _check("cross_entropy", (x, p), (tx, tp), {"label_smoothing": 0.15})


def test_cross_entropy_errors():
    x = ember.randn(3, 4)
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                                         r"batch_size \(4\)\."):
        F.cross_entropy(x, ember.tensor([0, 1, 2, 3]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got "
                                           "Int"):
        F.cross_entropy(x, ember.tensor([0, 1, 2], dtype=ember.int32))
    with pytest.raises(RuntimeError, match="Long or Byte, but got Float"):
        F.cross_entropy(x, ember.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(IndexError, match=r"Target 7 is out of bounds.*\[0, 4\).*4 classes"):
        F.cross_entropy(x, ember.tensor([0, 7, 2]))
    with pytest.raises(IndexError, match="Target -3"):
        F.nll_loss(x, ember.tensor([0, -3, 2]))
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        F.cross_entropy(x, ember.tensor([0, 1, 2]), reduction="avg")
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.mse_loss(x, x, reduction="foo")
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(x, ember.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="Expected floating point type for target with "
                                           "class probabilities"):
        F.cross_entropy(x, ember.ones(3, 4, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        F.cross_entropy(x, ember.tensor([0, 1, 2]), weight=ember.ones(3))


def test_legacy_size_average_and_reduce_flags():
    x, y = ember.randn(3, 4), ember.randn(3, 4)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        summed = F.mse_loss(x, y, size_average=False)
    np.testing.assert_allclose(summed.item(), ((x - y) ** 2).sum().item(), rtol=1e-6)
    with pytest.warns(UserWarning):
        assert F.l1_loss(x, y, reduce=False).shape == (3, 4)


def test_mse_loss_warns_when_target_broadcasts():
    with pytest.warns(UserWarning, match="different to the input size"):
        out = F.mse_loss(ember.randn(3, 1), ember.randn(3))
    assert out.shape == ()


# ----------------------------------------------------------------------------- binary
@requires_torch
def test_bce_with_logits_is_stable_at_100(device):
    torch = _torch()
    values = np.array([100.0, -100.0, 100.0, -100.0, 0.0])
    targets = np.array([1.0, 0.0, 0.0, 1.0, 0.5])
    x, tx = _pair(values)
    t, tt = _pair(targets, requires_grad=False)
    out = _check("binary_cross_entropy_with_logits", (x, t), (tx, tt),
                 {"reduction": "none"})
    np.testing.assert_allclose(out.detach().numpy(), [0, 0, 100, 100, math.log(2)],
                               atol=1e-12)
    pos = ember.tensor([3.0], dtype=ember.float64)
    out = F.binary_cross_entropy_with_logits(x, t, pos_weight=pos, reduction="none")
    t_out = torch.nn.functional.binary_cross_entropy_with_logits(
        tx, tt, pos_weight=torch.tensor([3.0], dtype=torch.float64), reduction="none")
    _close(out, t_out)
    xf = ember.tensor(values, dtype=ember.float32, device=device)
    assert np.isfinite(F.binary_cross_entropy_with_logits(
        xf, ember.tensor(targets, dtype=ember.float32, device=device)).item())


@requires_torch
def test_bce_clamps_its_logs_at_minus_100_like_pytorch():
    probabilities = np.array([0.0, 1.0, 0.0, 1.0, 1e-50, 0.3])
    targets = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.2])
    x, tx = _pair(probabilities)
    t, tt = _pair(targets, requires_grad=False)
    out = _check("binary_cross_entropy", (x, t), (tx, tt), {"reduction": "none"}, atol=1e-6)
    np.testing.assert_allclose(out.detach().numpy()[:2], [100, 100])


def test_bce_errors():
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(ember.tensor([0.5, 1.5]), ember.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="Using a target size"):
        F.binary_cross_entropy(ember.tensor([[0.5, 0.5]]), ember.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"Target size \(.*\) must be the same as input size"):
        F.binary_cross_entropy_with_logits(ember.randn(3), ember.randn(3, 1))


# ----------------------------------------------------------------------------- others
def test_kl_div_batchmean_and_the_mean_warning():
    log_q = F.log_softmax(ember.randn(4, 3, dtype=ember.float64), 1)
    p = F.softmax(ember.randn(4, 3, dtype=ember.float64), 1)
    batchmean = F.kl_div(log_q, p, reduction="batchmean").item()
    expected = (p * (p.log() - log_q)).sum().item() / 4
    np.testing.assert_allclose(batchmean, expected, rtol=1e-10)
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(log_q, p)
    zero = F.kl_div(log_q, ember.zeros(4, 3, dtype=ember.float64), reduction="sum")
    assert zero.item() == 0.0
    assert F.kl_div(log_q, p.log(), reduction="batchmean", log_target=True).item() == \
        pytest.approx(batchmean)


@requires_torch
def test_gaussian_nll_clamps_var_and_passes_the_gradient_through():
    x, tx = _pair([0.5, -1.0, 2.0])
    y, ty = _pair([0.0, 0.0, 1.0], requires_grad=False)
    var, tvar = _pair([1e-9, 0.5, 2.0])
    _check("gaussian_nll_loss", (x, y, var), (tx, ty, tvar), {"full": True})
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(x, y, ember.tensor([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="incorrect size"):
        F.gaussian_nll_loss(x, y, ember.ones(2))


@requires_torch
def test_triplet_swap_and_multilabel_margin_match_pytorch():
    torch = _torch()
    rng = np.random.default_rng(5)
    a, ta = _pair(rng.standard_normal((4, 3)))
    p, tp = _pair(rng.standard_normal((4, 3)))
    n, tn = _pair(rng.standard_normal((4, 3)))
    _check("triplet_margin_loss", (a, p, n), (ta, tp, tn), {"swap": True, "p": 3})
    x, tx = _pair(rng.standard_normal((3, 5)))
    target = [[3, 0, -1, 1, 1], [4, 4, 1, -1, -1], [-1, 2, 2, 2, 2]]  # repeats, early stop
    _check("multilabel_margin_loss", (x, ember.tensor(target)), (tx, torch.tensor(target)),
           {"reduction": "none"})


# ----------------------------------------------------------------------------- CTC
def _ctc_case(rng, steps=12, batch=3, classes=5):
    logits = rng.standard_normal((steps, batch, classes))
    targets = [[1, 2, 2, 0], [3, 1, 0, 0], [4, 4, 4, 1]]
    return logits, targets, [12, 9, 10], [3, 2, 4]


@requires_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_matches_pytorch_through_log_softmax(reduction):
    # Through log_softmax (how CTC is used) PyTorch's gradient and the derivative agree.
    torch = _torch()
    logits, targets, lengths, target_lengths = _ctc_case(np.random.default_rng(6))
    targets = [[t if t != 0 else 1 for t in row] for row in targets]  # blank is 0
    x, tx = _pair(logits)
    out = F.ctc_loss(F.log_softmax(x, 2), ember.tensor(targets), lengths, target_lengths,
                     reduction=reduction)
    t_out = torch.nn.functional.ctc_loss(tx.log_softmax(2), torch.tensor(targets),
                                         lengths, target_lengths, reduction=reduction)
    _close(out, t_out, atol=1e-9)
    upstream = np.random.default_rng(7).standard_normal(tuple(out.shape))
    (grad,) = ember.autograd.grad(out, x, ember.tensor(upstream))
    (t_grad,) = torch.autograd.grad(t_out, tx, torch.tensor(upstream))
    _close(grad, t_grad, atol=1e-9)


@requires_torch
def test_ctc_blank_not_zero_and_concatenated_targets():
    torch = _torch()
    rng = np.random.default_rng(8)
    x, tx = _pair(rng.standard_normal((7, 2, 4)))
    flat = [0, 1, 1, 2]                       # blank is 3
    out = F.ctc_loss(F.log_softmax(x, 2), ember.tensor(flat), (7, 6), (3, 1), blank=3,
                     reduction="none")
    t_out = torch.nn.functional.ctc_loss(tx.log_softmax(2), torch.tensor(flat), (7, 6), (3, 1),
                                         blank=3, reduction="none")
    _close(out, t_out, atol=1e-9)


@requires_torch
def test_ctc_impossible_alignment_and_zero_infinity():
    torch = _torch()
    x, tx = _pair(np.random.default_rng(9).standard_normal((3, 2, 3)))
    targets = [[1, 1, 1], [2, 0, 0]]          # 1,1,1 needs 5 frames; only 3
    out = F.ctc_loss(F.log_softmax(x, 2), ember.tensor(targets), (3, 3), (3, 1),
                     reduction="none")
    assert math.isinf(out.detach().numpy()[0])
    zeroed = F.ctc_loss(F.log_softmax(x, 2), ember.tensor(targets), (3, 3), (3, 1),
                        reduction="none", zero_infinity=True)
    t_zeroed = torch.nn.functional.ctc_loss(tx.log_softmax(2), torch.tensor(targets), (3, 3),
                                            (3, 1), reduction="none", zero_infinity=True)
    _close(zeroed, t_zeroed)
    zeroed.sum().backward()
    t_zeroed.sum().backward()
    _close(x.grad, tx.grad)


def test_ctc_double_backward_raises_and_lengths_are_checked():
    lp = F.log_softmax(ember.randn(4, 1, 3, dtype=ember.float64), 2).detach().requires_grad_()
    loss = F.ctc_loss(lp, ember.tensor([[1, 2]]), [4], [2])
    (grad,) = ember.autograd.grad(loss, lp, create_graph=True)
    with pytest.raises(RuntimeError, match="double backward"):
        grad.sum().backward()
    with pytest.raises(RuntimeError, match="input_lengths to have value at most 4"):
        F.ctc_loss(lp, ember.tensor([[1, 2]]), [5], [2])
    with pytest.raises(RuntimeError, match="differ from blank"):
        F.ctc_loss(lp, ember.tensor([[0, 2]]), [4], [2])


def test_cross_entropy_fast_path_matches_the_general_one():
    # (N, C) logits with index targets take one fused node; it must agree with the
    # composed log_softmax + nll_loss path, ignore_index and double backward included
    F = ember.nn.functional
    x = ember.randn(6, 4, dtype=ember.float64, requires_grad=True)
    t = ember.tensor([0, 3, -100, 1, 2, 3])
    for reduction in ("mean", "sum"):
        fused = F.cross_entropy(x, t, reduction=reduction)
        composed = F.nll_loss(F.log_softmax(x, 1), t, reduction=reduction)
        assert fused.grad_fn.name() == "NllLossBackward0"
        assert abs(fused.item() - composed.item()) < 1e-12
        (g1,) = ember.autograd.grad(fused, x, create_graph=True)
        (g2,) = ember.autograd.grad(composed, x, create_graph=True)
        assert np.allclose(g1.detach().numpy(), g2.detach().numpy(), atol=1e-12)
        (h1,) = ember.autograd.grad((g1 * g1).sum(), x)
        (h2,) = ember.autograd.grad((g2 * g2).sum(), x)
        assert np.allclose(h1.numpy(), h2.numpy(), atol=1e-12)
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(x, ember.tensor([0, 1, 2, 3, 7, 0]))
