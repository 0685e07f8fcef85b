"""Which dtypes each op accepts, refuses and returns, against PyTorch: bool and integer
inputs of math that has no bool (or integer) kernel, 16-bit floats where PyTorch computes in
float32 or float64 only, and the result dtypes of integer inputs. Each case runs on ember
and on torch; the outcomes must agree (see tests/ops/oracle.py). A second test sweeps every
registered op that takes one tensor over bool, integer and 16-bit inputs."""
from __future__ import annotations

import pytest

import ember
from ember.ops import OPS
from tests.conftest import requires_torch
from tests.ops.maker import Maker
from tests.ops.oracle import outcome, same, table_tests
from tests.ops.oracle import raises as _raises

BOOL = "not implemented for 'Bool'"
HALF = "not implemented for 'Half'"


def bools(T, *shape):
    return T.ones(*shape, dtype=T.bool)


def mask(T):
    return T.tensor([True, False, True])


def int8s(T):
    return T.tensor([1, -2, 3], dtype=T.int8)


def uint8s(T):
    return T.tensor([1, 2, 3], dtype=T.uint8)


def ints(T, *shape, dtype=None):
    return T.ones(*shape, dtype=dtype or T.int16)


def halves(T, *shape):
    return T.ones(*shape).half()


def special_values(T):
    return T.tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.5]).bfloat16()


# (name, case, expectation): expectation None compares results, else _raises(fragment)
CASES = [
    # ---- nn functions and searches (ops/neural.py, ops/scatter.py)
    ("sdpa bool", lambda T: T.nn.functional.scaled_dot_product_attention(
        mask(T)[None, :, None], mask(T)[None, :, None], mask(T)[None, :, None]),
     _raises("expected scalar type Float but found Bool")),
    ("pairwise_distance int", lambda T: T.nn.functional.pairwise_distance(
        T.tensor([[1, 2]]), T.tensor([[3, 5]])), None),
    ("softmax int", lambda T: T.softmax(T.tensor([1, 2]), 0), _raises("not implemented")),
    ("log_softmax bool", lambda T: T.log_softmax(mask(T), 0), _raises("not implemented")),
    ("searchsorted bool", lambda T: T.searchsorted(mask(T), mask(T)),
     _raises("not implemented for 'Bool'")),
    ("bucketize bool", lambda T: T.bucketize(mask(T), T.tensor([False, True])),
     _raises("not implemented for 'Bool'")),
    # ---- a float fill must fit the integer dtype's range itself (no wrapping)
    ("full uint8 -1.5", lambda T: T.full((2,), -1.5, dtype=T.uint8), _raises("overflow")),
    ("fill_ uint8 -0.5", lambda T: T.zeros(2, dtype=T.uint8).fill_(-0.5), _raises("overflow")),
    ("index_fill_ uint8 -1.5", lambda T: T.zeros(2, dtype=T.uint8).index_fill_(
        0, T.tensor([0]), -1.5), _raises("overflow")),
    ("full int8 127.5", lambda T: T.full((1,), 127.5, dtype=T.int8), _raises("overflow")),
    # ---- unary math without a bool kernel (ops/unary.py)
    ("abs bool", lambda T: T.abs(mask(T)), _raises(BOOL)),
    ("abs operator bool", lambda T: abs(mask(T)), _raises(BOOL)),
    ("round bool", lambda T: T.round(mask(T)), _raises(BOOL)),
    ("round int decimals", lambda T: T.round(T.tensor([12, 17]), decimals=-1),
     _raises("not implemented for 'Long'")),
    ("floor bool", lambda T: T.floor(mask(T)), _raises(BOOL)),
    ("ceil bool", lambda T: mask(T).ceil(), _raises(BOOL)),
    ("trunc bool", lambda T: T.trunc(mask(T)), _raises(BOOL)),
    ("ndtri half", lambda T: T.special.ndtri(T.full((2,), 0.5).half()), _raises(HALF)),
    ("log_ndtr bfloat16", lambda T: T.special.log_ndtr(T.ones(2).bfloat16()),
     _raises("not implemented for 'BFloat16'")),
    ("nan_to_num bfloat16", lambda T: T.nan_to_num(special_values(T)), None),
    ("nan_to_num bfloat16 values", lambda T: special_values(T).nan_to_num(1.0, 2.0, -2.0), None),
    # ---- float checks on bfloat16 (ops/comparison.py)
    ("isnan bfloat16", lambda T: T.isnan(special_values(T)), None),
    ("isinf bfloat16", lambda T: special_values(T).isinf(), None),
    ("isfinite bfloat16", lambda T: T.isfinite(special_values(T)), None),
    # ---- integer arithmetic of two bools (ops/arithmetic.py)
    ("pow bools", lambda T: T.pow(mask(T), mask(T)), _raises("not implemented for 'Bool'")),
    ("pow True ** bools", lambda T: True ** mask(T), _raises(BOOL)),
    ("floor_divide bools", lambda T: bools(T, 3) // bools(T, 3), _raises(BOOL)),
    ("div floor bools", lambda T: T.div(bools(T, 3), True, rounding_mode="floor"),
     _raises(BOOL)),
    ("div trunc bools", lambda T: T.div(bools(T, 3), bools(T, 3), rounding_mode="trunc"),
     _raises(BOOL)),
    ("remainder bool and True", lambda T: T.remainder(bools(T, 3), True), _raises(BOOL)),
    ("fmod bools", lambda T: T.fmod(bools(T, 3), bools(T, 3)), _raises(BOOL)),
    ("ldexp bools", lambda T: T.ldexp(mask(T), mask(T)), None),
    ("frac int", lambda T: T.frac(T.tensor([3, -4])), _raises("not implemented for 'Long'")),
    ("lerp int", lambda T: T.lerp(T.tensor([1]), T.tensor([3]), 0.5),
     _raises("not implemented for 'Long'")),
    ("hypot int", lambda T: T.hypot(T.tensor([3]), T.tensor([4])),
     _raises("not implemented for 'Long'")),
    ("logaddexp bool", lambda T: T.logaddexp(mask(T), mask(T)), _raises(BOOL)),
    ("gcd float", lambda T: T.gcd(T.ones(2), T.ones(2)), _raises("not implemented for 'Float'")),
    ("lcm bool", lambda T: T.lcm(mask(T), mask(T)), _raises(BOOL)),
    ("bitwise_and float", lambda T: T.bitwise_and(T.ones(2), T.ones(2)),
     _raises("not implemented for 'Float'")),
    ("| of int and float", lambda T: T.tensor([1, 2]) | 2.5,
     _raises("not implemented for 'Float'")),
    ("ldexp int, bool exponent", lambda T: T.ldexp(T.tensor([1, 2, 3]), mask(T)), None),
    # ---- fill values cast to an integer dtype (ops/comparison.py, composites.py)
    ("masked_fill uint8 negative float", lambda T: uint8s(T).masked_fill(mask(T), -1.5),
     _raises("without overflow")),
    ("masked_fill uint8 -0.5", lambda T: uint8s(T).masked_fill(mask(T), -0.5),
     _raises("without overflow")),
    # ---- matrix products without a bool kernel (ops/products.py, matrices.py)
    ("matmul bools", lambda T: bools(T, 2, 3) @ bools(T, 3, 2), _raises(BOOL)),
    ("matmul bool vectors", lambda T: T.matmul(bools(T, 3), bools(T, 3)), _raises(BOOL)),
    ("mm bools", lambda T: T.mm(bools(T, 2, 3), bools(T, 3, 2)), _raises(BOOL)),
    ("bmm bools", lambda T: T.bmm(bools(T, 1, 2, 3), bools(T, 1, 3, 2)), _raises(BOOL)),
    ("mv bools", lambda T: T.mv(bools(T, 2, 3), bools(T, 3)), _raises(BOOL)),
    ("dot bools", lambda T: T.dot(mask(T), mask(T)), _raises(BOOL)),
    ("dot empty bools", lambda T: T.dot(bools(T, 0), bools(T, 0)), _raises(BOOL)),
    ("vdot bools", lambda T: T.vdot(mask(T), mask(T)), _raises(BOOL)),
    ("addmm bools", lambda T: T.addmm(bools(T, 2, 2), bools(T, 2, 2), bools(T, 2, 2)),
     _raises(BOOL)),
    ("addmv bools", lambda T: T.addmv(bools(T, 2), bools(T, 2, 2), bools(T, 2)), _raises(BOOL)),
    ("baddbmm bools", lambda T: T.baddbmm(bools(T, 1, 2, 2), bools(T, 1, 2, 2),
                                          bools(T, 1, 2, 2)), _raises(BOOL)),
    ("addbmm bools", lambda T: T.addbmm(bools(T, 2, 2), bools(T, 1, 2, 2), bools(T, 1, 2, 2)),
     _raises(BOOL)),
    ("tensordot bools", lambda T: T.tensordot(bools(T, 3, 3), bools(T, 3, 3)), _raises(BOOL)),
    ("tensordot bools dims=0", lambda T: T.tensordot(bools(T, 3), bools(T, 3), dims=0),
     _raises(BOOL)),
    ("inner bools", lambda T: T.inner(bools(T, 3), bools(T, 3)), _raises(BOOL)),
    ("multi_dot bools", lambda T: T.linalg.multi_dot([bools(T, 3, 3), bools(T, 3, 3)]),
     _raises(BOOL)),
    ("chain_matmul bools", lambda T: T.chain_matmul(bools(T, 3, 3), bools(T, 3, 3)),
     _raises(BOOL)),
    ("matrix_power bool", lambda T: T.linalg.matrix_power(bools(T, 3, 3), 2), _raises(BOOL)),
    ("linear bools", lambda T: T.nn.functional.linear(bools(T, 3, 3), bools(T, 3, 3)),
     _raises(BOOL)),
    ("trace bool", lambda T: T.trace(bools(T, 2, 2)), _raises(BOOL)),
    ("cross bools", lambda T: T.cross(bools(T, 3), bools(T, 3), dim=0), _raises(BOOL)),
    ("linalg.cross bools", lambda T: T.linalg.cross(bools(T, 2, 3), bools(T, 2, 3)),
     _raises(BOOL)),
    ("vecdot int", lambda T: T.linalg.vecdot(ints(T, 3), ints(T, 3)),
     _raises("Expected a floating point or complex tensor as input. Got Short")),
    ("vecdot bool", lambda T: T.linalg.vecdot(mask(T), mask(T)),
     _raises("Expected a floating point or complex tensor as input. Got Bool")),
    # einsum: a label summed in one operand is a sum (int64), a contraction a bmm
    ("einsum bool contraction", lambda T: T.einsum("ij,jk->ik", bools(T, 2, 3), bools(T, 3, 2)),
     _raises(BOOL)),
    ("einsum bool dot", lambda T: T.einsum("i,i->", mask(T), mask(T)), _raises(BOOL)),
    ("einsum bool sum", lambda T: T.einsum("ij->j", bools(T, 3, 3)), None),
    ("einsum bool summed apart", lambda T: T.einsum("ij,k->ik", bools(T, 2, 3), mask(T)), None),
    ("einsum int8 sum", lambda T: T.einsum("ij->", ints(T, 2, 3, dtype=T.int8)), None),
    ("einsum int8 trace", lambda T: T.einsum("ii", ints(T, 3, 3, dtype=T.int8)), None),
    ("einsum int8 summed and contracted", lambda T: T.einsum(
        "ij,jk->i", ints(T, 2, 3, dtype=T.int8), ints(T, 3, 4, dtype=T.int8)),
     _raises("expected scalar type Char but found Long")),
    # beta and alpha cast to the input's dtype
    ("addmm int, beta 0.5", lambda T: T.addmm(ints(T, 2, 2), ints(T, 2, 2), ints(T, 2, 2),
                                              beta=0.5), None),
    ("addmm int64, alpha -1.5", lambda T: T.addmm(
        ints(T, 2, 2, dtype=T.int64), ints(T, 2, 2, dtype=T.int64),
        ints(T, 2, 2, dtype=T.int64), alpha=-1.5), None),
    ("addmv int, alpha 0.5", lambda T: T.addmv(ints(T, 2), ints(T, 2, 2), ints(T, 2),
                                               alpha=0.5), None),
    ("baddbmm int, beta 0.5", lambda T: T.baddbmm(ints(T, 1, 2, 2), ints(T, 1, 2, 2),
                                                  ints(T, 1, 2, 2), beta=0.5), None),
    ("addbmm int64, beta 0.5", lambda T: T.addbmm(
        ints(T, 2, 2, dtype=T.int64), ints(T, 1, 2, 2, dtype=T.int64),
        ints(T, 1, 2, 2, dtype=T.int64), beta=0.5), None),
    ("addbmm int16", lambda T: T.addbmm(ints(T, 2, 2), ints(T, 2, 2, 2), ints(T, 2, 2, 2)),
     None),
    ("addmm uint8, alpha -2.0", lambda T: T.addmm(
        ints(T, 2, 2, dtype=T.uint8), ints(T, 2, 2, dtype=T.uint8),
        ints(T, 2, 2, dtype=T.uint8), alpha=-2.0), _raises("without overflow")),
    ("addmm float, beta True", lambda T: T.addmm(T.ones(2, 2), T.ones(2, 2), T.ones(2, 2),
                                                 beta=True), None),
    ("addmm int, alpha True", lambda T: T.addmm(ints(T, 2, 2), ints(T, 2, 2), ints(T, 2, 2),
                                                alpha=True), None),
    ("addr int, beta 2.0", lambda T: T.addr(ints(T, 2, 2), ints(T, 2), ints(T, 2), beta=2.0),
     _raises("must not be a floating point number")),
    ("addr bools, beta 2", lambda T: T.addr(bools(T, 2, 2), mask(T)[:2], mask(T)[1:], beta=2),
     None),
    ("addr float, beta True", lambda T: T.addr(T.ones(2, 2), T.ones(2), T.ones(2), beta=True),
     _raises("Boolean beta only supported for Boolean results")),
    # ---- reductions that refuse bool or integer samples (ops/reductions.py)
    ("cov bool", lambda T: T.cov(bools(T, 2, 3)), _raises("bool dtype is not supported")),
    ("corrcoef bool", lambda T: T.corrcoef(bools(T, 2, 3)),
     _raises("bool dtype is not supported")),
    ("trapezoid bool", lambda T: T.trapezoid(mask(T)), _raises("received a bool input")),
    ("trapezoid bool x", lambda T: T.trapezoid(T.ones(3), mask(T)),
     _raises("received a bool input")),
    ("cumulative_trapezoid bool", lambda T: T.cumulative_trapezoid(mask(T)),
     _raises("received a bool input")),
    ("gradient bool", lambda T: T.gradient(mask(T)), _raises("with two bool tensors")),
    ("gradient uint8", lambda T: T.gradient(uint8s(T)),
     _raises("torch.gradient does not support uint8 input.")),
    ("histogram int", lambda T: T.histogram(T.tensor([1, 2, 3]), bins=3),
     _raises("not implemented for 'Long'")),
    ("histogram int, tensor bins", lambda T: T.histogram(T.tensor([1, 2, 3]), T.tensor([0, 2])),
     _raises("not implemented for 'Long'")),
    ("histogram half", lambda T: T.histogram(halves(T, 3), bins=3), _raises(HALF)),
    ("histogram bins of another dtype", lambda T: T.histogram(T.ones(3), T.tensor([0.0, 2.0])
                                                              .double()),
     _raises("input tensor and bins tensors should have the same dtype")),
    ("histogramdd bool", lambda T: T.histogramdd(bools(T, 3, 2), bins=[2, 2]), _raises(BOOL)),
    ("histogramdd half", lambda T: T.histogramdd(halves(T, 3, 2), bins=[2, 2]),
     _raises(HALF)),
    # ---- order statistics (ops/sorting.py)
    ("median bool", lambda T: T.median(mask(T)), _raises(BOOL)),
    ("nanmedian bool dim", lambda T: mask(T).nanmedian(0), _raises(BOOL)),
    ("kthvalue bool", lambda T: T.kthvalue(mask(T), 1), _raises(BOOL)),
    ("mode bool", lambda T: T.mode(T.tensor([[True, False, False], [True, True, False]]), 1),
     None),
    ("quantile half", lambda T: T.quantile(halves(T, 3), 0.5),
     _raises("input tensor must be either float or double dtype")),
    ("nanquantile bfloat16", lambda T: T.nanquantile(T.ones(3).bfloat16(), 0.5),
     _raises("input tensor must be either float or double dtype")),
    # ---- special functions PyTorch computes in float32 and float64 only (ops/special.py)
    ("mvlgamma bool", lambda T: T.mvlgamma(mask(T), 1), _raises("may not be a boolean tensor")),
    ("bessel_j0 half", lambda T: T.special.bessel_j0(halves(T, 2)), _raises(HALF)),
    ("modified_bessel_i0 bfloat16", lambda T: T.special.modified_bessel_i0(T.ones(2).bfloat16()),
     _raises("not implemented for 'BFloat16'")),
    ("spherical_bessel_j0 half", lambda T: T.special.spherical_bessel_j0(halves(T, 2)),
     _raises(HALF)),
    ("erfcx half", lambda T: T.special.erfcx(halves(T, 2)), _raises(HALF)),
    ("zeta half", lambda T: T.special.zeta(halves(T, 2), 1.0), _raises(HALF)),
    ("chebyshev_polynomial_t half", lambda T: T.special.chebyshev_polynomial_t(halves(T, 2), 3),
     _raises(HALF)),
    ("shifted_chebyshev_polynomial_u half", lambda T: T.special.shifted_chebyshev_polynomial_u(
        halves(T, 2), T.tensor([1, 2])), _raises(HALF)),
    ("hermite_polynomial_h bfloat16", lambda T: T.special.hermite_polynomial_h(
        T.ones(2).bfloat16(), 2), _raises("not implemented for 'BFloat16'")),
    # ---- composites (ops/composites.py)
    ("addcmul bools", lambda T: T.addcmul(mask(T), mask(T), mask(T)), _raises(BOOL)),
    ("addcmul int8, value 0.5", lambda T: T.addcmul(int8s(T), int8s(T), int8s(T), value=0.5),
     None),
    ("addcmul int8, value -1.5", lambda T: T.addcmul(int8s(T), int8s(T), int8s(T), value=-1.5),
     None),
    ("addcmul uint8, value -0.5", lambda T: T.addcmul(uint8s(T), uint8s(T), uint8s(T),
                                                      value=-0.5), _raises("without overflow")),
    ("vander int8", lambda T: T.linalg.vander(int8s(T)), None),
    ("vander uint8", lambda T: T.linalg.vander(uint8s(T)), None),
    ("vander bool", lambda T: T.linalg.vander(mask(T)),
     _raises("supports floating point, complex, and integer tensors, but got Bool")),
    ("vander half", lambda T: T.linalg.vander(halves(T, 3)),
     _raises("supports floating point, complex, and integer tensors, but got Half")),
    ("pdist half", lambda T: T.nn.functional.pdist(halves(T, 3, 2)), _raises(HALF)),
    # ---- activations on integers (ops/activations.py)
    ("hardtanh int8", lambda T: T.nn.functional.hardtanh(int8s(T)), None),
    ("hardtanh int8, float bounds", lambda T: T.nn.functional.hardtanh(int8s(T), -1.5, 2.5),
     None),
    ("hardtanh int64 in place", lambda T: T.nn.functional.hardtanh(
        T.tensor([5, -7]), inplace=True), None),
    ("hardtanh uint8", lambda T: T.nn.functional.hardtanh(uint8s(T)),
     _raises("cannot do hardtanh on an unsigned type with negative limits")),
    ("hardtanh bool", lambda T: T.nn.functional.hardtanh(mask(T)),
     _raises("Bool inputs not supported for hardtanh")),
    ("relu6 uint8", lambda T: T.nn.functional.relu6(T.tensor([1, 254, 3], dtype=T.uint8)), None),
    ("relu6 int8", lambda T: T.nn.functional.relu6(int8s(T)), None),
    ("relu6 bool", lambda T: T.nn.functional.relu6(mask(T)),
     _raises("Bool inputs not supported for hardtanh")),
    ("threshold int8", lambda T: T.nn.functional.threshold(int8s(T), 1, 20), None),
    ("threshold int8, float numbers", lambda T: T.nn.functional.threshold(int8s(T), -0.5, 2.5),
     None),
    ("threshold uint8, wrapped value", lambda T: T.nn.functional.threshold(uint8s(T), 1, -20),
     None),
    ("threshold uint8, negative float", lambda T: T.threshold(uint8s(T), 1, -2.0),
     _raises("without overflow")),
    ("tanhshrink int8", lambda T: T.nn.functional.tanhshrink(int8s(T)), None),
    ("tanhshrink bool", lambda T: T.nn.functional.tanhshrink(mask(T)),
     _raises("with a bool tensor is not supported")),
    ("softsign int8", lambda T: T.nn.functional.softsign(int8s(T)), None),
    ("softsign uint8 255", lambda T: T.nn.functional.softsign(T.tensor([255, 1], dtype=T.uint8)),
     None),
    ("softsign bool", lambda T: T.nn.functional.softsign(mask(T)), _raises(BOOL)),
    ("threshold bool", lambda T: T.nn.functional.threshold(mask(T), 0.5, 0), _raises(BOOL)),
    ("elu int", lambda T: T.nn.functional.elu(int8s(T)), _raises("not implemented for 'Char'")),
    # ---- losses (ops/losses.py)
    ("l1_loss int, mean", lambda T: T.nn.functional.l1_loss(int8s(T), int8s(T)),
     _raises("could not infer output dtype")),
    ("mse_loss int", lambda T: T.nn.functional.mse_loss(int8s(T), int8s(T)),
     _raises("not implemented for 'Char'")),
    ("huber_loss bool", lambda T: T.nn.functional.huber_loss(mask(T), mask(T)), _raises(BOOL)),
    ("smooth_l1_loss int64", lambda T: T.nn.functional.smooth_l1_loss(
        T.tensor([1, 2]), T.tensor([0, 2])), _raises("not implemented for 'Long'")),
    ("l1_loss int, none", lambda T: T.nn.functional.l1_loss(uint8s(T), uint8s(T).flip(0),
                                                            reduction="none"), None),
    ("l1_loss int, sum", lambda T: T.nn.functional.l1_loss(int8s(T), int8s(T).flip(0),
                                                           reduction="sum"), None),
    ("l1_loss int, float target", lambda T: T.nn.functional.l1_loss(int8s(T), T.ones(3)), None),
    ("poisson_nll_loss int", lambda T: T.nn.functional.poisson_nll_loss(int8s(T), uint8s(T)),
     None),
    ("poisson_nll_loss int, rates", lambda T: T.nn.functional.poisson_nll_loss(
        uint8s(T), uint8s(T), log_input=False, reduction="none"), None),
    ("kl_div int", lambda T: T.nn.functional.kl_div(int8s(T), int8s(T), reduction="sum"),
     _raises("kl_div: Integral inputs not supported")),
    ("hinge_embedding_loss int8, none", lambda T: T.nn.functional.hinge_embedding_loss(
        int8s(T), T.tensor([1, -1, -1]), margin=1.5, reduction="none"), None),
    ("hinge_embedding_loss uint8, sum", lambda T: T.nn.functional.hinge_embedding_loss(
        uint8s(T), T.tensor([1, -1, -1]), reduction="sum"), None),
    ("hinge_embedding_loss int, mean", lambda T: T.nn.functional.hinge_embedding_loss(
        int8s(T), T.tensor([1, -1, -1])), _raises("could not infer output dtype")),
    ("margin_ranking_loss int", lambda T: T.nn.functional.margin_ranking_loss(
        int8s(T), int8s(T).flip(0), T.tensor([1, -1, 1]), reduction="none"), None),
    ("cosine_embedding_loss int", lambda T: T.nn.functional.cosine_embedding_loss(
        ints(T, 2, 2), ints(T, 2, 2), T.tensor([1, -1])), None),
    ("cosine_embedding_loss bool", lambda T: T.nn.functional.cosine_embedding_loss(
        bools(T, 2, 2), bools(T, 2, 2), T.tensor([1, -1])), None),
    ("multilabel_soft_margin_loss int", lambda T: T.nn.functional.multilabel_soft_margin_loss(
        ints(T, 2, 2), ints(T, 2, 2)), _raises("not implemented for 'Short'")),
    ("multilabel_margin_loss int", lambda T: T.nn.functional.multilabel_margin_loss(
        ints(T, 2, 2), T.tensor([[0, -1], [1, -1]])), _raises("not implemented for 'Short'")),
    ("ctc_loss int", lambda T: T.nn.functional.ctc_loss(
        ints(T, 4, 1, 3, dtype=T.int64), T.tensor([[1, 2]]), [4], [2]),
     _raises("not implemented for 'Long'")),
    ("ctc_loss half", lambda T: T.nn.functional.ctc_loss(
        halves(T, 4, 1, 3).log_softmax(2), T.tensor([[1, 2]]), [4], [2]), _raises(HALF)),
]

# Behaviour ember already matched: it guards what the checks above must leave alone.
GUARDS = [
    ("searchsorted float sequence, bool values", lambda T: T.searchsorted(
        T.tensor([0.0, 1.0]), T.tensor([True])), None),
    ("full uint8 -1 wraps", lambda T: T.full((2,), -1, dtype=T.uint8), None),
    ("full uint8 -255 wraps", lambda T: T.full((1,), -255, dtype=T.uint8), None),
    ("full int8 -0.5 truncates", lambda T: T.full((1,), -0.5, dtype=T.int8), None),
    ("abs int8", lambda T: T.abs(int8s(T)), None),
    ("sign bool", lambda T: T.sign(mask(T)), None),
    ("neg bool", lambda T: -mask(T), _raises("Negation, the `-` operator, on a bool tensor")),
    ("floor int64", lambda T: T.floor(T.tensor([3, -4])), None),
    ("round int", lambda T: T.round(T.tensor([3, -4])), None),
    ("nan_to_num int", lambda T: T.nan_to_num(T.tensor([3, -4])), None),
    ("isnan int", lambda T: T.isnan(int8s(T)), None),
    ("isinf half", lambda T: T.isinf(T.tensor([1.0, float("inf")]).half()), None),
    ("ndtri float32", lambda T: T.special.ndtri(T.tensor([0.25, 0.5])), None),
    ("pow bool ** True", lambda T: mask(T) ** True, None),
    ("pow bool ** int", lambda T: T.pow(mask(T), T.tensor([1, 2, 3])), None),
    ("pow 2 ** bool", lambda T: 2 ** mask(T), None),
    ("floor_divide int by bool", lambda T: T.tensor([4, 5]) // T.tensor([True, True]), None),
    ("remainder bool by int", lambda T: T.remainder(mask(T), 2), None),
    ("ldexp float, bool exponent", lambda T: T.ldexp(T.ones(3), mask(T)),
     _raises("ldexp_cpu_exp")),
    ("masked_fill uint8 -1", lambda T: uint8s(T).masked_fill(mask(T), -1), None),
    ("masked_fill int8 1.5", lambda T: int8s(T).masked_fill(mask(T), 1.5), None),
    ("masked_fill uint8 256", lambda T: uint8s(T).masked_fill(mask(T), 256),
     _raises("without overflow")),
    ("matmul int8", lambda T: T.matmul(ints(T, 2, 2, dtype=T.int8), ints(T, 2, 2, dtype=T.int8)),
     None),
    ("matmul half", lambda T: T.matmul(halves(T, 2, 2), halves(T, 2, 2)), None),
    ("mm empty bools", lambda T: T.mm(bools(T, 2, 0), bools(T, 0, 3)), None),
    ("matmul empty batch of bools", lambda T: bools(T, 0, 2, 2) @ bools(T, 2, 2), None),
    ("outer bools", lambda T: T.outer(mask(T), mask(T)), None),
    ("kron bools", lambda T: T.kron(mask(T), mask(T)), None),
    ("matrix_power bool n=1", lambda T: T.linalg.matrix_power(bools(T, 2, 2), 1), None),
    ("matrix_power bool n=0", lambda T: T.linalg.matrix_power(bools(T, 2, 2), 0), None),
    ("chain_matmul one bool matrix", lambda T: T.chain_matmul(bools(T, 2, 2)), None),
    ("einsum bool outer", lambda T: T.einsum("i,j->ij", mask(T), mask(T)), None),
    ("einsum bool diagonal", lambda T: T.einsum("ii->i", bools(T, 3, 3)), None),
    ("einsum int8 contraction", lambda T: T.einsum("ij,jk->ik", ints(T, 2, 3, dtype=T.int8),
                                                   ints(T, 3, 2, dtype=T.int8)), None),
    ("einsum int64 summed and contracted", lambda T: T.einsum(
        "ij,jk->i", ints(T, 2, 3, dtype=T.int64), ints(T, 3, 4, dtype=T.int64)), None),
    ("addmm int16 and int64", lambda T: T.addmm(ints(T, 2, 2), ints(T, 2, 2, dtype=T.int64),
                                                ints(T, 2, 2, dtype=T.int64)), _raises()),
    ("addr bools", lambda T: T.addr(bools(T, 2, 2), mask(T)[:2], mask(T)[1:]), None),
    ("trace uint8", lambda T: T.trace(ints(T, 2, 2, dtype=T.uint8)), None),
    ("vecdot half", lambda T: T.linalg.vecdot(halves(T, 3), halves(T, 3)), None),
    ("cross int8", lambda T: T.cross(int8s(T), int8s(T).flip(0), dim=0), None),
    ("cov int", lambda T: T.cov(T.tensor([[1, 2, 4], [0, 3, 3]])), None),
    ("trapezoid int", lambda T: T.trapezoid(T.tensor([1, 3, 4])), None),
    ("gradient int8", lambda T: T.gradient(int8s(T)), None),
    ("histogram half with a range", lambda T: T.histogram(
        T.tensor([0.1, 0.6, 0.7]).half(), bins=2, range=(0.0, 1.0)), None),
    ("histogram half, half bins", lambda T: T.histogram(
        T.tensor([0.1, 0.6, 0.7]).half(), T.tensor([0.0, 0.5, 1.0]).half()), None),
    ("histc half", lambda T: T.histc(T.tensor([0.1, 0.6, 0.7]).half(), bins=2, min=0, max=1),
     None),
    ("topk bool", lambda T: T.topk(mask(T), 1), _raises("does not support bool")),
    ("argmax bool", lambda T: T.argmax(mask(T)), _raises("does not support bool input")),
    ("mode int", lambda T: T.mode(T.tensor([2, 1, 2, 3])), None),
    ("quantile int", lambda T: T.quantile(T.tensor([1, 2]), 0.5),
     _raises("input tensor must be either float or double dtype")),
    ("mvlgamma int", lambda T: T.mvlgamma(T.tensor([2, 3]), 1), None),
    ("i0 half", lambda T: T.special.i0(T.tensor([0.5, 1.0]).half()), None),
    ("chebyshev_polynomial_t int", lambda T: T.special.chebyshev_polynomial_t(
        T.tensor([1, 2], dtype=T.int16), 3), None),
    ("addcmul uint8, value -1", lambda T: T.addcmul(uint8s(T), uint8s(T), uint8s(T), value=-1),
     None),
    ("addcmul int8 and uint8", lambda T: T.addcmul(int8s(T), uint8s(T), uint8s(T), value=2),
     None),
    ("addcmul floats, value True", lambda T: T.addcmul(T.ones(2), T.ones(2), T.ones(2),
                                                       value=True), None),
    ("addcdiv int", lambda T: T.addcdiv(int8s(T), int8s(T), int8s(T)),
     _raises("Integer division with addcdiv is no longer supported")),
    ("vander float32", lambda T: T.linalg.vander(T.tensor([1.0, 2.0])), None),
    ("relu bool", lambda T: T.relu(mask(T)), _raises()),
    ("mse_loss half", lambda T: T.nn.functional.mse_loss(halves(T, 2), halves(T, 2)), None),
    ("bce int input", lambda T: T.nn.functional.binary_cross_entropy(
        T.tensor([0]), T.tensor([1])), _raises("not implemented for 'Long'")),
]


test_matches_torch, test_still_matches_torch = table_tests(CASES, GUARDS)


# ----------------------------------------------------------------------------- the sweep
# Every registered op whose first sample is one floating tensor, called on the same values in
# each of these dtypes: ember must accept and refuse what PyTorch does (the exception type),
# and give its result dtype (and, for bool and integer inputs, its values).
SWEEP_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16")


def _unary_ops():
    names = []
    for name, info in sorted(OPS.items()):
        if info.samples is None or info.torch is None:
            continue
        sample = info.samples(Maker("cpu", ember.float64, name))[0]
        if len(sample.args) == 1 and not sample.kwargs and \
                isinstance(sample.args[0], ember.Tensor) and sample.args[0].is_floating_point():
            names.append(name)
    return names


# Differences not yet fixed, with their reasons (strict: a fix must remove its entry).
KNOWN = {
    "geqrf": "ops/factorizations.py raises RuntimeError where PyTorch's kernel raises "
             "NotImplementedError",
    "lu": "ops/factorizations.py: RuntimeError for PyTorch's NotImplementedError",
    "linalg.lu": "ops/factorizations.py: RuntimeError for PyTorch's NotImplementedError",
    "linalg.lu_factor": "ops/factorizations.py: RuntimeError for NotImplementedError",
    "linalg.lu_factor_ex": "ops/factorizations.py: RuntimeError for NotImplementedError",
    "linalg.qr": "16-bit floats: RuntimeError for PyTorch's NotImplementedError",
    "qr": "16-bit floats: RuntimeError for PyTorch's NotImplementedError",
    "linalg.svd": "16-bit floats: RuntimeError for PyTorch's NotImplementedError",
    "linalg.svdvals": "16-bit floats: RuntimeError for PyTorch's NotImplementedError",
    "svd": "16-bit floats: RuntimeError for PyTorch's NotImplementedError",
    "linalg.cond": "16-bit floats: RuntimeError for PyTorch's NotImplementedError",
    "nn.functional.instance_norm": "ops/normalization.py checks the dtype before the shape",
}


def _sweep_case(info, dtype_name):
    def case(T):
        x = T.tensor([[-3, -1, 0, 1], [2, 3, 5, 7]])
        if dtype_name == "bool":
            x = x > 0
        elif dtype_name == "uint8":
            x = x.abs().to(T.uint8)
        else:
            x = x.to(getattr(T, dtype_name))
        if T.__name__ == "torch":
            from tests.ops.test_op_table import _torch_function
            return _torch_function(info, T)(x)
        return info.function(x)
    return case


def _sweep_params():
    return [pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN[name], strict=True))
            if name in KNOWN else name for name in _unary_ops()]


@requires_torch
@pytest.mark.parametrize("name", _sweep_params())
def test_unary_ops_take_the_dtypes_torch_takes(name):
    import torch

    info = OPS[name]
    for dtype_name in SWEEP_DTYPES:
        case = _sweep_case(info, dtype_name)
        ours, theirs = outcome(ember, case), outcome(torch, case)
        where = f"{name} on {dtype_name}"
        if isinstance(theirs, Exception) or isinstance(ours, Exception):
            assert type(ours) is type(theirs), f"{where}: ember {ours!r}, torch {theirs!r}"
            continue
        if dtype_name.startswith(("float", "bfloat")):  # rounding differs: dtypes only
            mine = ours if isinstance(ours, (tuple, list)) else [ours]
            want = theirs if isinstance(theirs, (tuple, list)) else [theirs]
            assert [str(t.dtype).split(".")[-1] for t in mine] == \
                [str(t.dtype).split(".")[-1] for t in want], where
            continue
        try:
            same(ours, theirs)
        except AssertionError as error:
            raise AssertionError(f"{where}: {error}") from None


def test_sweep_covers_the_unary_ops():
    names = _unary_ops()
    assert len(names) > 150 and "abs" in names and "nn.functional.relu6" in names
    assert set(KNOWN) <= set(names), set(KNOWN) - set(names)
