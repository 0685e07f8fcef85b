"""The comparison behind the torch-oracle tables of tests/ops (test_dtype_checks,
test_edge_values): each case is ``(name, case, expected)``, ``case(T)`` runs with T = ember
and T = torch, and ``expected`` is None (both return the same dtype, shape and values) or
``raises(fragment)`` (both raise the same exception type, their messages carrying
``fragment`` when given)."""
from __future__ import annotations

import warnings

import pytest

import ember
from tests.conftest import requires_torch


def raises(fragment=None):
    """Expect the same exception type on both sides; ``fragment``: a part of the message
    both carry."""
    return ("raises", fragment)


def ids(cases):
    return [getattr(c, "values", c)[0] for c in cases]


def outcome(lib, case):
    """What ``case(lib)`` returns, or the exception it raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return case(lib)
        except Exception as error:  # the outcome under test
            return error


def table_tests(cases, guards):
    """The two tests of a table: ``cases`` (each fails on the code before its fix) and
    ``guards`` (behaviour ember already matched, kept). Bind both in the test module:
    ``test_matches_torch, test_still_matches_torch = table_tests(CASES, GUARDS)``."""
    @requires_torch
    @pytest.mark.parametrize("name, case, expected", cases, ids=ids(cases))
    def test_matches_torch(name, case, expected):
        compare(case, expected)

    @requires_torch
    @pytest.mark.parametrize("name, case, expected", guards, ids=ids(guards))
    def test_still_matches_torch(name, case, expected):
        compare(case, expected)

    return test_matches_torch, test_still_matches_torch


def compare(case, expected) -> None:
    import torch

    ours, theirs = outcome(ember, case), outcome(torch, case)
    if expected is not None:
        assert isinstance(theirs, Exception), f"torch did not raise: {theirs!r}"
        fragment = expected[1]
        if fragment is not None:
            assert fragment in str(theirs), f"torch's message changed: {theirs}"
        assert isinstance(ours, Exception), f"ember returned {ours!r}; torch raised {theirs!r}"
        assert type(ours) is type(theirs), f"ember raised {ours!r}; torch raised {theirs!r}"
        if fragment is not None:
            assert fragment in str(ours), f"ember's message lacks {fragment!r}: {ours}"
        return
    assert not isinstance(theirs, Exception), f"torch raised {theirs!r}"
    assert not isinstance(ours, Exception), f"ember raised {ours!r}"
    same(ours, theirs)


def same(ours, theirs) -> None:
    """The same dtype, shape and values (NaN and infinities in the same places); tuples
    and named results element by element."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs), (ours, theirs)
        for mine, want in zip(ours, theirs):
            same(mine, want)
        return
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    mine, want = ours.tolist(), theirs.tolist()
    if ours.dtype.is_floating_point:
        a, b = ember.tensor(mine).double(), ember.tensor(want).double()
        assert a.allclose(b, rtol=1e-5, atol=1e-6, equal_nan=True), (mine, want)
        assert a.isnan().tolist() == b.isnan().tolist(), (mine, want)
    else:
        assert repr(mine) == repr(want)
