"""repr and str print what PyTorch prints."""
from __future__ import annotations

import numpy as np
import pytest

import ember

CASES = [
    ("tensor", ([1.0, 2.0, 3.0],), {}),
    ("tensor", ([1.5, -2.25, 3.0],), {}),
    ("tensor", (19.666666,), {}),
    ("tensor", ([1, 2, 3],), {}),
    ("tensor", ([True, False],), {}),
    ("tensor", ([1e-5, 1.0],), {}),
    ("tensor", ([1e10, 1.0],), {}),
    ("tensor", ([0.0, 0.0],), {}),
    ("tensor", ([float("nan"), float("inf"), -float("inf"), 1.0],), {}),
    ("tensor", ([1.0, 2.0],), {"dtype": "float64"}),
    ("tensor", ([1, 2],), {"dtype": "int32"}),
    ("tensor", ([1.0, 2.5],), {"dtype": "float16"}),
    ("tensor", ([[1.0, 2.0], [3.0, 4.0]],), {}),
    ("tensor", ([[[1, 2], [3, 4]], [[5, 6], [7, 8]]],), {}),
    ("zeros", ((0,),), {}),
    ("zeros", ((2, 0),), {}),
    ("zeros", ((0,),), {"dtype": "int32"}),
    ("arange", (2000.0,), {}),
    ("arange", (30.0,), {}),
    ("arange", (300.0,), {"dtype": "int64"}),
    ("ones", ((40, 40),), {}),
    ("linspace", (-1, 1, 25), {}),
]


@pytest.mark.parametrize("function,args,kwargs", CASES)
def test_repr_matches_torch(function, args, kwargs):
    torch = pytest.importorskip("torch")
    ours = getattr(ember, function)(*args, **{k: getattr(ember, v) for k, v in kwargs.items()})
    theirs = getattr(torch, function)(*args, **{k: getattr(torch, v) for k, v in kwargs.items()})
    assert repr(ours) == repr(theirs).replace("torch.", "ember.")


def test_repr_with_autograd_suffixes():
    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        x = lib.tensor([[0.1234567, 2.0]] * 3, requires_grad=True)
        y = (x * 2).sum(dim=1)
        lib.texts = (repr(x), repr(y), repr(y.mean()))
    assert ember.texts == tuple(t.replace("torch.", "ember.") for t in torch.texts)


def test_printoptions():
    ember.set_printoptions(precision=2)
    try:
        assert repr(ember.tensor([1.2345])) == "tensor([1.23])"
    finally:
        ember.set_printoptions(profile="default")
    assert repr(ember.tensor([1.2345])) == "tensor([1.2345])"


def test_str_equals_repr_and_numpy_values():
    x = ember.tensor(np.array([0.5, 0.25]))
    assert str(x) == repr(x) == "tensor([0.5000, 0.2500], dtype=ember.float64)"


INF, NAN = float("inf"), float("nan")
SCI_VALUES = [
    3.5, -2.0, [1e-5, 1.0], [-1.0, 2.0], [1.0, 100000.0], [1e10, -1.0], [1e-30, -1e30],
    [NAN, INF, -INF, 1.0], [INF, 0.0], [0.1, -0.25, 12345.678], [-1e-8, 1e-8],
    [[1.5, -2.25], [3.0, 1e-3]], [[[1.0, 2.0], [3.0, 4.0]], [[-5.0, 6.0], [7.0, 8e9]]],
]
SCI_CASES = ([(v, dtype, sci, 4) for v in SCI_VALUES for sci in (None, True, False)
              for dtype in ("float32", "float64", "float16", "bfloat16")] +
             [(v, "float32", sci, precision) for v in SCI_VALUES[2:8]
              for sci in (None, True, False) for precision in (2, 8)])


@pytest.mark.filterwarnings("ignore:overflow encountered")  # 1e10 etc. in float16
@pytest.mark.parametrize("values,dtype,sci_mode,precision", SCI_CASES)
def test_sci_mode_matches_torch(values, dtype, sci_mode, precision):
    torch = pytest.importorskip("torch")
    texts = []
    for lib in (ember, torch):
        lib.set_printoptions(sci_mode=sci_mode, precision=precision)
        try:
            texts.append(str(lib.tensor(values, dtype=getattr(lib, dtype))))
        finally:
            lib.set_printoptions(profile="default")
    assert texts[0] == texts[1].replace("torch.", "ember.")


@pytest.mark.parametrize("sci_mode", [None, True, False])
@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e9])
def test_sci_mode_summarized_matches_torch(sci_mode, scale):
    torch = pytest.importorskip("torch")
    values = (np.random.default_rng(0).standard_normal((30, 50)) * scale).tolist()
    texts = []
    for lib in (ember, torch):
        lib.set_printoptions(sci_mode=sci_mode, threshold=100)
        try:
            texts.append(str(lib.tensor(values)))
        finally:
            lib.set_printoptions(profile="default")
    assert texts[0] == texts[1]
