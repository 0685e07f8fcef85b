"""Dtype and value checks PyTorch performs (or promotions it makes) in reductions, losses,
linear layers, normalization and attention: each case runs on ember and on torch and the
outcomes must agree (result dtype, shape and values, or the exception type and a
distinctive part of the message)."""
from __future__ import annotations

import math

from tests.ops.oracle import raises as _raises
from tests.ops.oracle import table_tests


def ones23(T):
    return T.ones(2, 3)


def half(T):
    return T.full((2,), 0.5)


def labels(T):
    return T.tensor([0, 1])


def probs(T):
    return T.full((2, 3), 1 / 3)


# (name, case, expectation): expectation None compares results, else _raises(...)
CASES = [
    # ---- reductions over dim=()
    ("any dim=()", lambda T: ones23(T).any(dim=()), None),
    ("all dim=()", lambda T: ones23(T).all(dim=()), None),
    ("any dim=[] keepdim", lambda T: T.tensor([[0, 2], [3, 0]]).any(dim=[], keepdim=True), None),
    ("all dim=() uint8", lambda T: T.tensor([[0, 2], [3, 0]], dtype=T.uint8).all(dim=()), None),
    ("any dim=() empty", lambda T: T.ones(0, 3).any(dim=()), None),
    ("logsumexp dim=()", lambda T: T.logsumexp(ones23(T), dim=()),
     _raises("doesn't match the broadcast shape [1, 1]")),
    # ---- linear layers
    ("linear double bias", lambda T: T.nn.functional.linear(
        ones23(T), T.ones(4, 3), T.ones(4).double()), _raises("same dtype")),
    ("linear 3-D double bias", lambda T: T.nn.functional.linear(
        T.ones(2, 2, 3), T.ones(4, 3), T.ones(4).double()), _raises("same dtype")),
    ("linear int with float bias", lambda T: T.nn.functional.linear(
        T.ones(2, 3, dtype=T.int64), T.ones(4, 3, dtype=T.int64), T.ones(4)),
     _raises("same dtype")),
    ("bilinear double weight", lambda T: T.nn.functional.bilinear(
        ones23(T), T.ones(2, 2), T.ones(4, 3, 2).double()), _raises("same dtype")),
    ("bilinear double input2", lambda T: T.nn.functional.bilinear(
        ones23(T), T.ones(2, 2).double(), T.ones(4, 3, 2)), _raises("same dtype")),
    ("bilinear double bias", lambda T: T.nn.functional.bilinear(
        ones23(T), T.ones(2, 2), T.ones(4, 3, 2), T.ones(4).double()), _raises("same dtype")),
    # ---- normalization
    ("batch_norm double running stats", lambda T: T.nn.functional.batch_norm(
        ones23(T), T.zeros(3).double(), T.ones(3).double()), _raises("mixed dtype")),
    ("batch_norm double running stats, training", lambda T: T.nn.functional.batch_norm(
        ones23(T), T.zeros(3).double(), T.ones(3).double(), training=True),
     _raises("mixed dtype")),
    ("batch_norm double input", lambda T: T.nn.functional.batch_norm(
        ones23(T).double(), T.zeros(3), T.ones(3)), _raises("mixed dtype")),
    ("batch_norm half input, half stats, float weight", lambda T: T.nn.functional.batch_norm(
        T.ones(2, 3).half(), T.zeros(3).half(), T.ones(3).half(), T.ones(3)),
     _raises("mixed dtype")),
    ("layer_norm double weight", lambda T: T.nn.functional.layer_norm(
        ones23(T), (3,), T.ones(3).double()), _raises("mixed dtype")),
    ("rms_norm double weight", lambda T: T.nn.functional.rms_norm(
        T.tensor([[1.0, 2.0, 4.0]]), (3,), T.ones(3).double()), None),
    # ---- binary cross-entropy
    ("bce double target", lambda T: T.nn.functional.binary_cross_entropy(
        half(T), T.ones(2).double()), _raises("Found dtype Double but expected Float")),
    ("bce int64 target", lambda T: T.nn.functional.binary_cross_entropy(
        half(T), T.ones(2, dtype=T.int64)), _raises("Found dtype Long but expected Float")),
    ("bce double input", lambda T: T.nn.functional.binary_cross_entropy(
        half(T).double(), T.ones(2)), _raises("Found dtype Float but expected Double")),
    ("bce int input", lambda T: T.nn.functional.binary_cross_entropy(
        T.tensor([0]), T.tensor([1])), _raises("not implemented for 'Long'")),
    ("bce target above 1", lambda T: T.nn.functional.binary_cross_entropy(
        T.tensor([0.5]), T.tensor([1.5])),
     _raises("all elements of target should be between 0 and 1")),
    ("bce NaN target", lambda T: T.nn.functional.binary_cross_entropy(
        T.tensor([0.5]), T.tensor([math.nan])),
     _raises("all elements of target should be between 0 and 1")),
    ("bce NaN input", lambda T: T.nn.functional.binary_cross_entropy(
        T.tensor([math.nan]), T.tensor([1.0])),
     _raises("all elements of input should be between 0 and 1")),
    ("bce with logits int target", lambda T: T.nn.functional.binary_cross_entropy_with_logits(
        T.ones(2), T.tensor([1, 0])), _raises("can't be cast to the desired output type Long")),
    ("bce with logits bool target",
     lambda T: T.nn.functional.binary_cross_entropy_with_logits(
         T.ones(2), T.tensor([True, False])), _raises()),
    ("bce with logits double target",
     lambda T: T.nn.functional.binary_cross_entropy_with_logits(
         T.tensor([0.5, -1.0]), T.tensor([1.0, 0.0]).double()), None),
    ("bce with logits double target, none",
     lambda T: T.nn.functional.binary_cross_entropy_with_logits(
         T.tensor([0.5, -1.0]), T.tensor([1.0, 0.0]).double(), reduction="none"), None),
    ("bce with logits double input, float target",
     lambda T: T.nn.functional.binary_cross_entropy_with_logits(
         T.tensor([0.5, -1.0]).double(), T.tensor([1.0, 0.0])), None),
    ("bce with logits double target and pos_weight",
     lambda T: T.nn.functional.binary_cross_entropy_with_logits(
         T.tensor([0.5, -1.0]), T.tensor([1.0, 0.0]).double(),
         pos_weight=T.tensor([2.0, 3.0]).double()), None),
    # ---- class-index losses
    ("nll_loss double weight", lambda T: T.nn.functional.nll_loss(
        T.zeros(2, 3), labels(T), weight=T.ones(3).double()),
     _raises("expected scalar type Float but found Double")),
    ("nll_loss double input, float weight", lambda T: T.nn.functional.nll_loss(
        T.zeros(2, 3).double(), labels(T), weight=T.ones(3)),
     _raises("expected scalar type Double but found Float")),
    ("nll_loss int64 input", lambda T: T.nn.functional.nll_loss(
        T.zeros(2, 3, dtype=T.int64), labels(T)), _raises("not implemented for 'Long'")),
    ("cross_entropy int64 weight", lambda T: T.nn.functional.cross_entropy(
        T.zeros(2, 3), labels(T), weight=T.ones(3, dtype=T.int64)),
     _raises("expected scalar type Float but found Long")),
    ("cross_entropy double weight, smoothing", lambda T: T.nn.functional.cross_entropy(
        T.zeros(2, 3), labels(T), weight=T.ones(3).double(), label_smoothing=0.1),
     _raises("expected scalar type Float but found Double")),
    ("cross_entropy int64 input", lambda T: T.nn.functional.cross_entropy(
        T.zeros(2, 3, dtype=T.int64), labels(T)), _raises("not implemented for 'Long'")),
    ("cross_entropy double probabilities", lambda T: T.nn.functional.cross_entropy(
        T.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]]), probs(T).double()), None),
    ("cross_entropy double probabilities, smoothing, none",
     lambda T: T.nn.functional.cross_entropy(
         T.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]]), probs(T).double(),
         label_smoothing=0.2, reduction="none"), None),
    ("cross_entropy probabilities, double weight", lambda T: T.nn.functional.cross_entropy(
        T.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]]), probs(T),
        weight=T.tensor([1.0, 2.0, 0.5]).double()), None),
    ("multi_margin_loss float target", lambda T: T.nn.functional.multi_margin_loss(
        T.zeros(2, 3), T.tensor([0.0, 1.0])),
     _raises("expected scalar type Long but found Float")),
    ("multi_margin_loss double weight", lambda T: T.nn.functional.multi_margin_loss(
        T.zeros(2, 3), labels(T), weight=T.ones(3).double()),
     _raises("expected scalar type Float but found Double")),
    ("multi_margin_loss int64 input", lambda T: T.nn.functional.multi_margin_loss(
        T.zeros(2, 3, dtype=T.int64), labels(T)), _raises("not implemented for 'Long'")),
    ("linear_cross_entropy double bias", lambda T: T.nn.functional.linear_cross_entropy(
        ones23(T), T.zeros(4, 3), T.tensor([0, 3]), linear_bias=T.zeros(4).double()),
     _raises("same dtype")),
    ("linear_cross_entropy double class weight",
     lambda T: T.nn.functional.linear_cross_entropy(
         ones23(T), T.zeros(4, 3), T.tensor([0, 3]), weight=T.ones(4).double()),
     _raises("expected scalar type Float but found Double")),
    # ---- attention
    ("attention int64 mask", lambda T: T.nn.functional.scaled_dot_product_attention(
        T.ones(1, 2, 3, 4), T.ones(1, 2, 3, 4), T.ones(1, 2, 3, 4),
        attn_mask=T.ones(3, 3, dtype=T.int64)),
     _raises("Expected attn_mask dtype to be bool or float or to match query dtype")),
    ("attention double mask, 3-D", lambda T: T.nn.functional.scaled_dot_product_attention(
        T.ones(2, 3, 4), T.ones(2, 3, 4), T.ones(2, 3, 4), attn_mask=T.ones(3, 3).double()),
     _raises("Expected attn_mask dtype to be bool or float or to match query dtype")),
    ("attention double value", lambda T: T.nn.functional.scaled_dot_product_attention(
        T.ones(2, 3, 4), T.ones(2, 3, 4), T.ones(2, 3, 4).double()),
     _raises("Expected query, key, and value to have the same dtype")),
    # ---- prelu and pdist (checks in ops/activations.py and ops/composites.py)
    ("prelu double weight", lambda T: T.nn.functional.prelu(
        ones23(T), T.ones(1).double()), _raises("Type promoting not supported")),
    ("pdist negative p", lambda T: T.nn.functional.pdist(T.ones(3, 2), p=-1),
     _raises("pdist only supports non-negative p values")),
    # ---- alpha of add and sub: checked against the operands' dtype, never promoting it
    ("add integral alpha", lambda T: T.ones(3, dtype=T.int64).add(
        T.ones(3, dtype=T.int64), alpha=0.5), _raises("argument alpha must not be a floating")),
    ("sub integral alpha", lambda T: T.sub(T.ones(3, dtype=T.int64), 1, alpha=2.0),
     _raises("argument alpha must not be a floating")),
    ("add_ integral alpha", lambda T: T.ones(3, dtype=T.int64).add_(2, alpha=0.5),
     _raises("argument alpha must not be a floating")),
    ("rsub integral alpha", lambda T: T.rsub(T.ones(3, dtype=T.int64), 1, alpha=0.5),
     _raises("argument alpha must not be a floating")),
    ("add bool alpha to floats", lambda T: T.ones(3).add(T.ones(3), alpha=True),
     _raises("Boolean alpha only supported for Boolean results")),
    ("add complex alpha to floats", lambda T: T.ones(3).add(T.ones(3), alpha=1j),
     _raises("alpha must not be a complex number")),
    ("add bools, alpha 2", lambda T: T.ones(3, dtype=T.bool).add(
        T.tensor([True, False, True]), alpha=2), None),
    ("add bools, alpha False", lambda T: T.zeros(3, dtype=T.bool).add(
        T.ones(3, dtype=T.bool), alpha=False), None),
    ("add ints, 0-d int tensor alpha", lambda T: T.ones(3, dtype=T.int64).add(
        T.ones(3, dtype=T.int64), alpha=T.tensor(3)), None),
    ("add int tensor and float, alpha 2", lambda T: T.ones(3, dtype=T.int64).add(1.5, alpha=2),
     None),
    ("add half and int tensor, float alpha", lambda T: T.ones(2).half().add(
        T.ones(2, dtype=T.int64), alpha=0.5), None),
    ("sub double alpha", lambda T: T.ones(2).double().sub(T.ones(2).double(), alpha=0.25),
     None),
]

# Cases ember already matched before these checks: they guard the behaviour kept (all-dims
# reductions over dim=(), 16-bit inputs with float32 statistics, -0.0 in BCE's range check).
GUARDS = [
    ("logsumexp dim=() keepdim", lambda T: T.logsumexp(ones23(T), dim=(), keepdim=True), None),
    ("logsumexp dim=() 0-d", lambda T: T.logsumexp(T.ones(()), dim=()), None),
    ("sum dim=()", lambda T: ones23(T).sum(dim=()), None),
    ("mean dim=()", lambda T: ones23(T).mean(dim=()), None),
    ("amax dim=()", lambda T: ones23(T).amax(dim=()), None),
    ("std dim=()", lambda T: T.tensor([[1.0, 2.0], [4.0, 8.0]]).std(dim=()), None),
    ("linear double weight", lambda T: T.nn.functional.linear(
        ones23(T), T.ones(4, 3).double()), _raises("same dtype")),
    ("batch_norm half input, float stats", lambda T: T.nn.functional.batch_norm(
        T.tensor([[1.0, 2.0], [3.0, 6.0]]).half(), T.zeros(2), T.ones(2)), None),
    ("group_norm double weight", lambda T: T.nn.functional.group_norm(
        T.ones(2, 4), 2, T.ones(4).double()), _raises("mixed dtype")),
    ("bce input checked before target", lambda T: T.nn.functional.binary_cross_entropy(
        T.tensor([1.5]), T.tensor([1.5])),
     _raises("all elements of input should be between 0 and 1")),
    ("bce -0 and 1", lambda T: T.nn.functional.binary_cross_entropy(
        T.tensor([-0.0, 1.0]), T.tensor([-0.0, 1.0])), None),
]


test_matches_torch, test_still_matches_torch = table_tests(CASES, GUARDS)
