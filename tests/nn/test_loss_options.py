"""Loss functions and loss modules across their options equal PyTorch's: values, dtypes,
input (and target) gradients in float64, the exception type for bad arguments, and the
warnings given on the way."""
from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest

import ember

from .compare import Const, as_input, rand

torch = pytest.importorskip("torch")


def _run(T, f, inputs):
    """(outcome, the categories of the warnings given); outcome: the exception type, or
    (value, dtype name, the input gradients)."""
    args = [as_input(T, x) for x in inputs]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = f(T, *args)
            grads = None
            if out.requires_grad:
                up = np.random.default_rng(1).standard_normal(tuple(out.shape))
                (out * T.tensor(up)).sum().backward()
                grads = [a.grad.numpy().copy() if a.grad is not None else None
                         for a in args if isinstance(a, (T.Tensor,)) and a.requires_grad]
            result = (out.detach().numpy().copy(), str(out.dtype).split(".")[-1], grads)
        except Exception as error:  # (the type is what is compared)
            result = type(error)
    return result, Counter(w.category.__name__ for w in caught)


def check(f, inputs, atol=1e-10, rtol=1e-8, ignore=()):
    """``ignore``: warning categories not compared."""
    t_out, t_warn = _run(torch, f, inputs)
    e_out, e_warn = _run(ember, f, inputs)
    for category in ignore:
        t_warn.pop(category, None)
        e_warn.pop(category, None)
    assert e_warn == t_warn, f"warnings: ember {dict(e_warn)}, torch {dict(t_warn)}"
    if isinstance(t_out, type):
        assert e_out is t_out, f"ember gave {e_out}, torch raised {t_out.__name__}"
        return
    assert not isinstance(e_out, type), f"ember raised {e_out.__name__}, torch did not"
    (t_val, t_dtype, t_grads), (e_val, e_dtype, e_grads) = t_out, e_out
    assert e_dtype == t_dtype
    assert e_val.shape == t_val.shape
    np.testing.assert_allclose(e_val, t_val, atol=atol, rtol=rtol, equal_nan=True)
    assert (e_grads is None) == (t_grads is None)
    for e_g, t_g in zip(e_grads or [], t_grads or []):
        np.testing.assert_allclose(e_g, t_g, atol=atol, rtol=rtol, equal_nan=True)


def F(T):
    return T.nn.functional


def _log_softmax(T, x):
    return F(T).log_softmax(x, -1)


X34, Y34 = rand(3, 4), rand(3, 4, seed=1)
P34 = rand(3, 4, seed=2, low=0.05, high=0.95)
T34 = rand(3, 4, seed=3, low=0.0, high=1.0)
W4 = rand(4, seed=4, low=0.5, high=2.0)
IDX3 = np.array([0, 3, 1])
EDGES = np.array([0.0, 1.0, 0.0, 1.0, 0.5, 1e-50])
EDGE_TARGETS = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 1.0])
LOGITS = np.random.default_rng(5).standard_normal((6, 3, 4))
LABELS = np.array([[1, 2, 2], [1, 1, 1], [2, 1, 1]])
KL_TARGET = T34.copy()
KL_TARGET[0, 0] = 0.0

# (id, inputs, f(lib, *tensors))
CASES = [
    # --- values and gradients
    # BCE's target gradient is PyTorch's unclamped -logit(x): infinite at x = 0 and 1
    ("bce-edges-target-grad-none", [EDGES, EDGE_TARGETS],
     lambda T, x, t: F(T).binary_cross_entropy(x, t, reduction="none")),
    ("bce-edges-target-grad-mean", [EDGES, EDGE_TARGETS],
     lambda T, x, t: F(T).binary_cross_entropy(x, t)),
    # kl_div is xlogy(t, t) - t x: NaN gradient at t = 0, NaN value for t < 0
    # (xlogy's backward warns of its log(0) and 0 / 0)
    ("kl_div-target-grad-at-zero", [X34, KL_TARGET],
     lambda T, x, t: F(T).kl_div(x, t, reduction="sum"), ("RuntimeWarning",)),
    ("kl_div-negative-target", [X34, Y34], lambda T, x, t: F(T).kl_div(x, t, reduction="sum"),
     ("RuntimeWarning",)),
    # an impossible alignment: NaN gradient inside the input length, 0 after it
    ("ctc-infinite-sum", [LOGITS, Const(LABELS), Const(np.array([6, 2, 1])),
                          Const(np.array([3, 2, 2]))],
     lambda T, x, y, i, t: F(T).ctc_loss(_log_softmax(T, x), y, i, t, reduction="sum")),
    ("ctc-unbatched-2d-target", [LOGITS[:, 0], Const(np.array([[1, 2]])), Const(np.array(6)),
                                 Const(np.array(2))],
     lambda T, x, y, i, t: F(T).ctc_loss(_log_softmax(T, x), y, i, t)),
    ("ctc-float-targets", [LOGITS, Const(LABELS.astype(np.float64)),
                           Const(np.array([6, 6, 5])), Const(np.array([3, 2, 1]))],
     lambda T, x, y, i, t: F(T).ctc_loss(_log_softmax(T, x), y, i, t)),
    # the legacy flags take precedence over reduction='batchmean'
    ("KLDivLoss-batchmean-size_average", [X34, T34],
     lambda T, x, t: T.nn.KLDivLoss(size_average=False, reduction="batchmean")(x, t)),
    ("KLDivLoss-batchmean-reduce", [X34, T34],
     lambda T, x, t: T.nn.KLDivLoss(reduce=False, reduction="batchmean")(x, t)),
    # an integer input meets a float target in the target's dtype
    ("mse-int-input", [Const(np.array([1, 2, 3])), Const(np.array([0.5, 1.0, 4.0]))],
     lambda T, x, t: F(T).mse_loss(x, t)),
    ("smooth_l1-int-input-float32", [Const(np.array([1, 2, 3])),
                                     Const(np.array([0.5, 1.0, 4.0], dtype=np.float32))],
     lambda T, x, t: F(T).smooth_l1_loss(x, t)),
    # a label_smoothing <= 0 is ignored, not refused
    ("cross_entropy-negative-smoothing", [X34, Const(IDX3)],
     lambda T, x, t: F(T).cross_entropy(x, t, label_smoothing=-0.1)),
    ("cross_entropy-negative-smoothing-probs", [X34, Const(T34)],
     lambda T, x, t: F(T).cross_entropy(x, t, label_smoothing=-0.5)),
    # --- exception types
    ("l1-bool-target", [X34, Const(X34 > 0)], lambda T, x, t: F(T).l1_loss(x, t)),
    ("soft_margin-bool-target", [X34, Const(X34 > 0)],
     lambda T, x, t: F(T).soft_margin_loss(x, t)),
    ("soft_margin-target-requires-grad", [X34, np.sign(Y34)],
     lambda T, x, t: F(T).soft_margin_loss(x, t)),
    ("bce-weight-requires-grad", [P34, Const(T34), W4],
     lambda T, x, t, w: F(T).binary_cross_entropy(x, t, weight=w)),
    ("bce_with_logits-weight-requires-grad", [X34, Const(T34), W4],
     lambda T, x, t, w: F(T).binary_cross_entropy_with_logits(x, t, weight=w)),
    ("bce_with_logits-pos_weight-requires-grad", [X34, Const(T34), W4],
     lambda T, x, t, p: F(T).binary_cross_entropy_with_logits(x, t, pos_weight=p)),
    ("cross_entropy-0d-input", [rand(), Const(np.array(0))],
     lambda T, x, t: F(T).cross_entropy(x, t)),
    ("cross_entropy-probs-ignore_index", [X34, Const(T34)],
     lambda T, x, t: F(T).cross_entropy(x, t, ignore_index=1)),
    ("cross_entropy-uint8-spatial", [rand(2, 4, 3), Const(np.array([[0, 1, 3], [2, 2, 0]],
                                                                    dtype=np.uint8))],
     lambda T, x, t: F(T).cross_entropy(x, t)),
    ("nll-uint8-4d", [rand(2, 4, 3, 2), Const(np.zeros((2, 3, 2), dtype=np.uint8))],
     lambda T, x, t: F(T).nll_loss(x, t)),
    ("multi_margin-target-out-of-range", [X34, Const(np.array([0, 4, 1]))],
     lambda T, x, t: F(T).multi_margin_loss(x, t)),
    ("multi_margin-2d-weight", [X34, Const(IDX3), Const(np.ones((1, 4)))],
     lambda T, x, t, w: F(T).multi_margin_loss(x, t, weight=w)),
    ("multilabel_margin-out-of-range", [X34[:, :3], Const(np.array([[3, -1, 0]] * 3))],
     lambda T, x, t: F(T).multilabel_margin_loss(x, t)),
    ("multilabel_margin-below-minus-one", [X34[:, :3], Const(np.array([[-2, 1, 0]] * 3))],
     lambda T, x, t: F(T).multilabel_margin_loss(x, t)),
    ("huber-int-input-float-target", [Const(np.array([1, 2, 3])), Const(np.ones(3))],
     lambda T, x, t: F(T).huber_loss(x, t)),
    # --- warnings
    # the size-mismatch warning comes before the broadcast error
    ("triplet-distance-margin-0", [X34, X34, X34],
     lambda T, a, p, n: F(T).triplet_margin_with_distance_loss(a, p, n, margin=0)),
    ("mse-mismatch-warns-then-raises", [X34, rand(3)], lambda T, x, t: F(T).mse_loss(x, t)),
    ("l1-mismatch-warns-then-raises", [X34, rand(3)], lambda T, x, t: F(T).l1_loss(x, t)),
    ("smooth_l1-mismatch-warns-then-raises", [X34, rand(3)],
     lambda T, x, t: F(T).smooth_l1_loss(x, t)),
    ("huber-mismatch-warns-then-raises", [X34, rand(3)],
     lambda T, x, t: F(T).huber_loss(x, t)),
    ("NLLLoss2d-deprecated", [rand(2, 4, 3, 3), Const(np.zeros((2, 3, 3), dtype=np.int64))],
     lambda T, x, t: T.nn.NLLLoss2d()(x, t)),
    # kl_div's 'mean' warning comes before the refusal of integers, and not for legacy flags
    ("kl_div-int-input", [Const(np.array([1, 2])), Const(np.array([0.5, 0.5]))],
     lambda T, x, t: F(T).kl_div(x, t)),
    ("kl_div-legacy-mean-one-warning", [X34, T34],
     lambda T, x, t: F(T).kl_div(x, t, size_average=True, reduce=True)),
    # NaN without a RuntimeWarning when nothing is counted
    ("cross_entropy-smoothing-all-ignored", [X34, Const(np.full(3, 2))],
     lambda T, x, t: F(T).cross_entropy(x, t, ignore_index=2, label_smoothing=0.1)),
    ("cross_entropy-smoothing-weight-all-ignored", [X34, Const(np.full(3, 2)), Const(W4)],
     lambda T, x, t, w: F(T).cross_entropy(x, t, weight=w, ignore_index=2,
                                           label_smoothing=0.1)),
    ("l1-empty-mean", [rand(0, 3), rand(0, 3, seed=1)], lambda T, x, t: F(T).l1_loss(x, t)),
    # --- guards: options that already matched
    ("cross_entropy-spatial-weight-ignore-smoothing",
     [rand(2, 4, 3, 2), Const(np.array([[[0, 1], [3, 1], [2, 1]], [[1, 1], [0, 2], [3, 3]]])),
      Const(W4)],
     lambda T, x, t, w: F(T).cross_entropy(x, t, weight=w, ignore_index=1,
                                           label_smoothing=0.3)),
    ("cross_entropy-probs-weight-smoothing-none", [rand(2, 4, 3), rand(2, 4, 3, low=0, high=1),
                                                   Const(W4)],
     lambda T, x, t, w: F(T).cross_entropy(x, t, weight=w, label_smoothing=0.2,
                                           reduction="none")),
    ("nll-all-ignored-mean", [X34, Const(np.full(3, 1)), Const(W4)],
     lambda T, x, t, w: F(T).nll_loss(x, t, weight=w, ignore_index=1)),
    ("nll-unbatched-legacy", [rand(4), Const(np.array(2))],
     lambda T, x, t: F(T).nll_loss(x, t, size_average=False)),
    ("bce-edges-input-grad", [EDGES, Const(EDGE_TARGETS), Const(np.full(6, 0.5))],
     lambda T, x, t, w: F(T).binary_cross_entropy(x, t, weight=w, reduction="sum")),
    ("bce_with_logits-pos_weight-broadcast", [rand(2, 3, 4), rand(2, 3, 4, low=0, high=1),
                                              Const(rand(3, 1, low=0.5, high=2))],
     lambda T, x, t, p: F(T).binary_cross_entropy_with_logits(x, t, pos_weight=p)),
    ("gaussian_nll-var-broadcast-full", [X34, Y34, rand(3, 1, low=0.1, high=2)],
     lambda T, x, t, v: F(T).gaussian_nll_loss(x, t, v, full=True, eps=0.5)),
    ("poisson_nll-rates-full", [P34, Const(rand(3, 4, low=0, high=4))],
     lambda T, x, t: F(T).poisson_nll_loss(x, t, log_input=False, full=True,
                                           reduction="sum")),
    ("smooth_l1-beta0", [X34, Y34], lambda T, x, t: F(T).smooth_l1_loss(x, t, beta=0.0)),
    ("multi_margin-p2-weight", [X34, Const(IDX3), Const(W4)],
     lambda T, x, t, w: F(T).multi_margin_loss(x, t, p=2, margin=0.5, weight=w)),
    ("triplet-p1-swap", [X34, Y34, rand(3, 4, seed=9)],
     lambda T, a, p, n: F(T).triplet_margin_loss(a, p, n, margin=0.5, p=1, swap=True,
                                                 reduction="none")),
    ("ctc-concatenated-zero_infinity", [LOGITS, Const(np.array([1, 2, 2, 1, 1, 2])),
                                        Const(np.array([6, 2, 5])),
                                        Const(np.array([3, 2, 1]))],
     lambda T, x, y, i, t: F(T).ctc_loss(_log_softmax(T, x), y, i, t, blank=3,
                                         zero_infinity=True)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_loss_option_matches_torch(case):
    _, inputs, f, *ignore = case
    check(f, inputs, ignore=ignore[0] if ignore else ())


def test_float32_input_keeps_its_dtype_for_huber_and_soft_margin():
    # these kernels write into a tensor like the input: a float64 target doesn't widen it
    x, t = rand(3, 4).astype(np.float32), rand(3, 4, seed=1)
    for name in ("huber_loss", "soft_margin_loss"):
        ours = getattr(ember.nn.functional, name)(ember.tensor(x), ember.tensor(t))
        theirs = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(t))
        assert ours.dtype is ember.float32
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
