"""Cases where ember used to stop or differ from PyTorch (issue 12): each against torch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember

from ..conftest import outcome

torch = pytest.importorskip("torch")


def _same(ours, theirs):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def _both(function):
    return function(ember), function(torch)


def _raises_same(function):
    with pytest.raises(Exception) as theirs:
        function(torch)
    with pytest.raises(type(theirs.value)):
        function(ember)


@pytest.mark.parametrize("index", [range(2), (slice(None), range(1, 4, 2)), [[0, 1], [2, 0]],
                                   ([0, 1], [2, 3]), [[0, 2], slice(1, None)]],
                         ids=["range", "range in tuple", "list of lists", "tuple of lists",
                              "list with a slice"])
def test_indexing_forms(index):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _same(*_both(lambda lib: lib.arange(12).reshape(3, 4)[index]))


def test_setitem_with_range():
    def run(lib):
        m = lib.arange(12).reshape(3, 4)
        m[range(2)] = 0
        return m
    _same(*_both(run))


@pytest.mark.parametrize("a, b", [(1.0, 0.0), (1, 0), (True, False), (2, 0.5)])
def test_where_two_numbers(a, b):
    _same(*_both(lambda lib: lib.where(lib.tensor([True, False, True]), a, b)))


@pytest.mark.parametrize("dtype", ["int64", "uint8", "int32"])
def test_max_pool2d_integers(dtype):
    _same(*_both(lambda lib: lib.nn.functional.max_pool2d(
        lib.arange(32).reshape(1, 2, 4, 4).to(getattr(lib, dtype)).flip(-1), 2)))


def test_max_pool1d_integers_raise_as_torch():
    _raises_same(lambda lib: lib.nn.functional.max_pool1d(lib.arange(8).reshape(1, 1, 8), 2))


@pytest.mark.parametrize("mode, pad", [("reflect", (-1, 2)), ("replicate", (2, -2)),
                                       ("reflect", (-1, 1, 1, -2)),
                                       ("replicate", (-1, 0, 2, -1))])
def test_negative_padding(mode, pad):
    def run(lib):
        shape = (2, 4, 5) if len(pad) == 2 else (1, 2, 4, 5)
        x = lib.arange(40.0).reshape(shape).requires_grad_(True)
        out = lib.nn.functional.pad(x, pad, mode=mode)
        (out * lib.arange(float(out.numel())).reshape(out.shape)).sum().backward()
        return out.detach(), x.grad
    (ours, our_grad), (theirs, their_grad) = _both(run)
    _same(ours, theirs)
    _same(our_grad, their_grad)


@pytest.mark.parametrize("source, target, shape", [
    ("float32", "int32", (2, 3)), ("float32", "uint8", (2, 3)), ("float32", "float16", (2, 3)),
    ("float32", "float64", (2, 4)), ("uint8", "bool", (4,)), ("int64", "float64", ())])
def test_view_dtype(source, target, shape):
    def run(lib):
        x = lib.arange(float(np.prod(shape) or 1)).reshape(shape).to(getattr(lib, source))
        return x.view(getattr(lib, target))
    _same(*_both(run))


def test_view_dtype_shares_memory_and_has_no_grad():
    x = ember.ones(2, 4, requires_grad=True)
    y = x.detach().view(ember.int32)
    y[0, 0] = 0
    assert x[0, 0].item() == 0.0 and not x.view(ember.int16).requires_grad


@pytest.mark.parametrize("make", [
    lambda lib: lib.ones(2, 3).view(lib.float64),          # size(-1) not divisible
    lambda lib: lib.ones(4, 2).t().view(lib.float64),      # last dim strided
    lambda lib: lib.ones(()).view(lib.float16)])            # 0-d to another size
def test_view_dtype_errors(make):
    _raises_same(make)


@pytest.mark.parametrize("kwargs", [{"scale_factor": 2}, {"size": (3, 11)},
                                    {"size": (8, 4), "align_corners": True}])
def test_bilinear_uint8_within_one(kwargs):
    image = np.random.default_rng(0).integers(0, 256, size=(1, 2, 5, 7), dtype=np.uint8)
    ours, theirs = _both(lambda lib: lib.nn.functional.interpolate(
        lib.tensor(image), mode="bilinear", **kwargs))
    assert ours.dtype is ember.uint8
    difference = np.abs(ours.numpy().astype(int) - theirs.numpy().astype(int))
    assert difference.max() <= 1  # PyTorch's uint8 kernel uses fixed-point weights


@pytest.mark.parametrize("base, exponent", [(0.0, 2.0), (0.0, 0.5), (0.0, 0.0), (0.0, 3.0),
                                            (0.0, -1.0), (-1.0, 0.5), (0.0, 1.5)])
def test_pow_gradient_at_edges(base, exponent):
    def run(lib):
        x = lib.tensor([base], requires_grad=True)
        (x ** exponent).sum().backward()
        return x.grad
    _same(*_both(run))


@pytest.mark.parametrize("exponents", [[2.0, 0.5, 0.0], [-1.0, 1.0, 3.0]])
def test_pow_exponent_gradient_at_zero_base(exponents):
    def run(lib):
        e = lib.tensor(exponents, requires_grad=True)
        (0.0 ** e).sum().backward()
        return e.grad
    _same(*_both(run))


@pytest.mark.parametrize("call", [
    lambda lib: lib.div(lib.ones(2), 2, rounding_mode="typo"),
    lambda lib: lib.linspace(0, 1, -1),
    lambda lib: lib.linspace(0, 1, 2.5),
    lambda lib: lib.linspace(lib.tensor([0.0, 1.0]), 1, 3),
    lambda lib: lib.logspace(0, 1, -2),
    lambda lib: lib.logcumsumexp(lib.tensor([1, 2]), 0)],
    ids=["div typo", "linspace negative", "linspace float steps", "linspace 1-d start",
         "logspace negative", "logcumsumexp integers"])
def test_bad_arguments_raise_torch_types(call):
    _raises_same(call)


def test_einsum_ellipsis_and_squeeze_dims():
    a, b = np.ones((2, 3, 4)), np.ones((2, 4, 5))
    for equation, operands in (("...ij,...jk->...ik", (a, b)), ("i...->...", (a,)),
                               ("b...,b...->b", (a, a))):
        _same(*_both(lambda lib: lib.einsum(equation, *(lib.tensor(o) for o in operands))))
    _same(*_both(lambda lib: lib.ones(1, 3, 1).squeeze((0, 2))))
    names = _both(lambda lib: lib.ones(1, 3, 1, requires_grad=True).squeeze((0, 2)).grad_fn)
    assert names[0].name() == names[1].name() == "SqueezeBackward2"


def test_copysign_signs_and_gradient():
    def run(lib):
        x = lib.tensor([-1.5, 0.0, 2.0, -0.0, 3.0], requires_grad=True)
        out = lib.copysign(x, lib.tensor([1.0, -1.0, -1.0, 1.0, -0.0]))
        out.sum().backward()
        return out.detach(), x.grad
    (ours, our_grad), (theirs, their_grad) = _both(run)
    np.testing.assert_array_equal(np.signbit(ours.numpy()), np.signbit(theirs.numpy()))
    _same(ours, theirs)
    _same(our_grad, their_grad)


def test_logcumsumexp_extremes():
    values = [[0.0, 1.0, -np.inf], [2.0, 3.0, 4.0], [-1000.0, 0.0, 1000.0]]
    ours, theirs = _both(lambda lib: lib.logcumsumexp(lib.tensor(values), dim=1))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_unsafe_chunk_names():
    ours, theirs = _both(lambda lib: lib.unsafe_chunk(lib.ones(2, 6, requires_grad=True), 3, 1))
    assert [p.grad_fn.name() for p in ours] == [p.grad_fn.name() for p in theirs]


@pytest.mark.parametrize("loss", ["binary_cross_entropy", "binary_cross_entropy_with_logits"])
def test_bce_weight_larger_than_input_raises(loss):
    _raises_same(lambda lib: getattr(lib.nn.functional, loss)(
        lib.full((3,), 0.5), lib.ones(3), weight=lib.ones(2, 3)))


def test_nll_weight_with_grad_raises():
    weight = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for 'weight'"):
        ember.nn.functional.nll_loss(ember.zeros(2, 3, requires_grad=True),
                                     ember.tensor([0, 2]), weight=weight)


# outcomes compared with torch: the value (repr, so NaN == NaN), or the exception's type
OUTCOME_CASES = {
    "maximum: shapes that don't broadcast": lambda T: T.maximum(T.ones(2), T.ones(3)),
    "max(other) that doesn't broadcast": lambda T: T.ones(2).max(T.ones(3, 3)),
    "fmin that doesn't broadcast": lambda T: T.fmin(T.ones(2), T.ones(3)),
    "conv2d with a 0 kernel": lambda T: T.nn.functional.conv2d(T.ones(1, 3, 8, 8),
                                                               T.ones(8, 3, 0, 2)),
    "conv1d with a 0 kernel": lambda T: T.nn.functional.conv1d(T.ones(1, 3, 8),
                                                               T.ones(8, 3, 0)),
    "arange: int dtype, step truncated to 0": lambda T: T.arange(0, 1, 0.1, dtype=T.int64),
    "arange: int64 from floats": lambda T: T.arange(-2.5, 3, 1.7, dtype=T.int64),
    "arange: int64 counting down": lambda T: T.arange(5.5, 0, -1.5, dtype=T.int64),
    "arange: int32 counts in doubles": lambda T: T.arange(0, 5, 1.5, dtype=T.int32),
    "arange: bool": lambda T: T.arange(0, 5, dtype=T.bool),
    "arange: to infinity": lambda T: T.arange(float("inf")),
    "arange: step 0": lambda T: T.arange(0, 5, 0),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", list(OUTCOME_CASES))
def test_outcome_as_torch(case):
    call = OUTCOME_CASES[case]
    assert outcome(call, ember, False) == outcome(call, torch, False)


# gradients at the edges of an op's domain, compared with torch
GRADIENT_CASES = {
    "median(): ties share": (lambda T, x: x.median(), [0.0, 0.0, 1.0, 1.0, 5.0]),
    "median(): the NaNs share": (lambda T, x: x.median(), [float("nan"), 1.0, float("nan")]),
    "nanmedian(): ties share": (lambda T, x: x.nanmedian(), [float("nan"), 1.0, 2.0, 1.0]),
    "logit outside [0, 1]": (lambda T, x: T.logit(x).sum(), [-0.5, 0.0, 0.3, 1.0, 1.5]),
    "cross_entropy, every target ignored": (
        lambda T, x: T.nn.functional.cross_entropy(x.reshape(2, 2), T.tensor([-100, -100])),
        [1.0, 2.0, 3.0, 4.0]),
    "cross_entropy, the counted target weighs 0": (
        lambda T, x: T.nn.functional.cross_entropy(x.reshape(2, 2), T.tensor([0, -100]),
                                                   weight=T.tensor([0.0, 1.0])),
        [1.0, 2.0, 3.0, 4.0]),
    "cross_entropy, one target ignored": (
        lambda T, x: T.nn.functional.cross_entropy(x.reshape(2, 2), T.tensor([1, -100])),
        [1.0, 2.0, 3.0, 4.0]),
}


@pytest.mark.parametrize("case", list(GRADIENT_CASES))
def test_gradient_as_torch(case):
    loss, values = GRADIENT_CASES[case]
    texts = []
    for lib in (ember, torch):
        x = lib.tensor(values, requires_grad=True)
        out = loss(lib, x)
        out.backward()
        texts.append((repr(out.item()), str(x.grad).replace("torch.", "ember.")))
    assert texts[0] == texts[1]


@pytest.mark.parametrize("make", [lambda T: T.rand(2, dtype=T.long),
                                  lambda T: T.randn(2, dtype=T.int32),
                                  lambda T: T.rand(2, dtype=T.bool)])
def test_random_floats_in_integer_dtypes_refused_as_torch(make):
    with pytest.raises(NotImplementedError) as theirs:
        make(torch)
    with pytest.raises(NotImplementedError) as ours:
        make(ember)
    assert str(theirs.value) in str(ours.value)
