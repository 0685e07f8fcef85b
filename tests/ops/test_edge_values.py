"""Edge values PyTorch handles in a particular way (integer powers with negative exponents,
NaN and infinity in reductions and sorting ops, negative indices, empty and 0-d inputs):
each case runs on ember and on torch and the outcomes must agree (result dtypes, shapes and
values, or the exception type and a distinctive part of the message)."""
from __future__ import annotations

import math

from tests.ops.oracle import raises as _raises
from tests.ops.oracle import table_tests

NAN, INF = math.nan, math.inf


def _inplace_pow(T, dtype, exponent):
    x = T.tensor([5, 1], dtype=dtype)
    x.pow_(exponent)
    return x


INT_DTYPES = ("uint8", "int8", "int16", "int32", "int64")
NEG_POW = "Integers to negative integer powers are not allowed."

# (name, case, expectation): expectation None compares results, else _raises(...)
CASES = [
    # ---- integer tensors to negative number powers
    *[(f"{d} ** -1", lambda T, d=d: T.tensor([5, 1], dtype=getattr(T, d)) ** -1,
       _raises(NEG_POW)) for d in INT_DTYPES],
    *[(f"pow({d}, -2)", lambda T, d=d: T.pow(T.tensor([5, 1], dtype=getattr(T, d)), -2),
       _raises(NEG_POW)) for d in INT_DTYPES],
    *[(f"{d}.pow_(-1)", lambda T, d=d: _inplace_pow(T, getattr(T, d), -1),
       _raises(NEG_POW)) for d in INT_DTYPES],
    ("int ** 0", lambda T: T.tensor([5, 0]) ** 0, None),
    # ---- integer tensors to negative tensor powers
    ("int ** negative tensor", lambda T: T.tensor([2, 1, -1]) ** T.tensor([-1, -2, -3]), None),
    ("int ** negative tensor, base 0", lambda T: T.tensor([0, 0, 3, -3, -1])
     ** T.tensor([-1, 0, -2, -1, -2]), None),
    ("int8 ** negative tensor", lambda T: T.tensor([2, -1, 1, 0], dtype=T.int8)
     ** T.tensor([-1, -1, -5, 2], dtype=T.int8), None),
    ("int ** mixed tensor", lambda T: T.tensor([2, 3, -1]) ** T.tensor([3, -1, -4]), None),
    ("number ** negative tensor", lambda T: 2 ** T.tensor([-1, 3]), None),
    ("1 ** negative tensor", lambda T: 1 ** T.tensor([-1, 3]), None),
    ("-1 ** negative tensor", lambda T: (-1) ** T.tensor([-1, -2, 3]), None),
    ("pow(number, negative tensor)", lambda T: T.pow(3, T.tensor([-2, 2])), None),
    ("int pow_ negative tensor", lambda T: T.tensor([2, 1, -1]).pow_(T.tensor([-1, -2, -3])),
     None),
    # ---- ldexp keeps a low-precision float exponent's dtype
    ("ldexp int, float16", lambda T: T.ldexp(T.tensor([1]), T.tensor([2.], dtype=T.float16)),
     None),
    ("ldexp int, bfloat16", lambda T: T.ldexp(T.tensor([1]),
                                              T.tensor([2.], dtype=T.bfloat16)), None),
    ("ldexp bool, float16", lambda T: T.ldexp(T.tensor([True]),
                                              T.tensor([2.], dtype=T.float16)), None),
    ("ldexp float16, bool", lambda T: T.ldexp(T.tensor([1.5], dtype=T.float16),
                                              T.tensor([True])),
     _raises("not implemented for 'Bool'")),
    ("ldexp float16, int", lambda T: T.ldexp(T.tensor([1.5], dtype=T.float16),
                                             T.tensor([3])), None),
    ("ldexp int, int", lambda T: T.ldexp(T.tensor([1]), T.tensor([3])), None),
    # ---- NaN and infinity
    ("unique nans", lambda T: T.tensor([1., NAN, NAN]).unique(), None),
    ("unique nans counts", lambda T: T.tensor([1., NAN, 1., NAN]).unique(
        return_counts=True, return_inverse=True), None),
    ("unique nans unsorted", lambda T: T.tensor([NAN, 2., NAN, 1.]).unique(sorted=False),
     None),
    ("softmax inf", lambda T: T.tensor([INF, 1.]).softmax(0), None),
    ("log_softmax inf", lambda T: T.tensor([INF, 1.]).log_softmax(0), None),
    ("softmax -inf", lambda T: T.tensor([-INF, 1.]).softmax(0), None),
    ("log_softmax -inf", lambda T: T.tensor([-INF, 1.]).log_softmax(0), None),
    ("softmax all -inf", lambda T: T.tensor([-INF, -INF]).softmax(0), None),
    ("trapezoid inf", lambda T: T.trapezoid(T.tensor([[INF, 1.]])), None),
    ("trapezoid inf, -inf", lambda T: T.trapezoid(T.tensor([INF, -INF, 1.])), None),
    ("trapezoid x", lambda T: T.trapezoid(T.tensor([INF, 1.]), T.tensor([0., 2.])), None),
    ("cumulative_trapezoid inf", lambda T: T.cumulative_trapezoid(T.tensor([[INF, 1., 2.]])),
     None),
    ("histc nan", lambda T: T.histc(T.tensor([1., NAN])), _raises("is not finite")),
    ("histc inf", lambda T: T.histc(T.tensor([1., INF])), _raises("is not finite")),
    ("histc -inf", lambda T: T.histc(T.tensor([-INF, 1.])), _raises("is not finite")),
    ("histc nan in range", lambda T: T.histc(T.tensor([1., NAN]), bins=2, min=0, max=2),
     None),
    # ---- negative indices
    ("index_fill -1", lambda T: T.tensor([1, 2]).index_fill(0, T.tensor([-1]), 0), None),
    ("index_fill_ -1", lambda T: T.tensor([[1, 2], [3, 4]]).index_fill_(
        1, T.tensor([-2]), 7), None),
    ("index_fill -3", lambda T: T.tensor([1, 2]).index_fill(0, T.tensor([-3]), 0), _raises()),
    ("index_select -1", lambda T: T.tensor([1, 2]).index_select(0, T.tensor([-1])),
     _raises()),
    # ---- exceptions torch raises
    ("unique dim 0-d", lambda T: T.tensor(1.).unique(dim=0), _raises()),
    ("unique_consecutive dim 0-d", lambda T: T.tensor(1.).unique_consecutive(dim=0),
     _raises()),
    ("kthvalue empty dim", lambda T: T.ones(2, 0).kthvalue(1, dim=1), _raises()),
    ("vector_norm inf empty", lambda T: T.linalg.vector_norm(T.ones(0), ord=INF), _raises()),
    ("vector_norm -inf empty", lambda T: T.linalg.vector_norm(T.ones(0), ord=-INF),
     _raises()),
    ("prod 0-d dim=1", lambda T: T.tensor(2.5).prod(dim=1), _raises("Dimension out of range")),
    ("prod 0-d dim=0", lambda T: T.tensor(2.5).prod(dim=0), None),
    ("prod 0-d dim=-1", lambda T: T.tensor(2.5).prod(dim=-1), None),
    # ---- results torch returns
    ("topk 0-d k=0", lambda T: T.tensor(1.).topk(0), None),
    ("topk 0-d k=1", lambda T: T.tensor(1.).topk(1), None),
    ("unique_consecutive dim empty", lambda T: T.ones(0, 3).unique_consecutive(dim=0), None),
    ("unique_consecutive dim empty counts", lambda T: T.ones(0, 3).unique_consecutive(
        dim=0, return_counts=True, return_inverse=True), None),
    ("unique_consecutive dim 1 empty", lambda T: T.ones(0, 3).unique_consecutive(dim=1),
     _raises("There are 0 sized dimensions")),
]


# cases ember already matched before these fixes: kept so they stay matched
_GUARD_NAMES = {
    *(f"{d} ** -1" for d in INT_DTYPES[1:]), *(f"pow({d}, -2)" for d in INT_DTYPES[1:]),
    *(f"{d}.pow_(-1)" for d in INT_DTYPES[1:]), "int ** 0", "ldexp float16, int",
    "ldexp int, int", "softmax -inf", "log_softmax -inf", "softmax all -inf",
    "trapezoid inf, -inf", "trapezoid x", "cumulative_trapezoid inf", "histc nan in range",
    "index_fill -3", "index_select -1", "prod 0-d dim=0", "prod 0-d dim=-1", "topk 0-d k=1",
}
GUARDS = [c for c in CASES if c[0] in _GUARD_NAMES]
CASES = [c for c in CASES if c[0] not in _GUARD_NAMES]


test_matches_torch, test_still_matches_torch = table_tests(CASES, GUARDS)
