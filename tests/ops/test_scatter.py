"""Gather/scatter edge cases beyond the op table: repeated indices, every scatter_reduce
mode with and without self (ties, zeros), in-place forms, index validation, and the
integer-valued searches against PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import ember

from ..conftest import requires_torch


def _pair(values, requires_grad=True, dtype="float64"):
    torch = pytest.importorskip("torch")
    array = np.array(values, dtype=dtype)
    return (ember.tensor(array).requires_grad_(requires_grad),
            torch.tensor(array).requires_grad_(requires_grad))


def _index(values):
    torch = pytest.importorskip("torch")
    return ember.tensor(values), torch.tensor(values)


def _close(ours, theirs, **kwargs):
    if isinstance(ours, tuple):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _close(a, b, **kwargs)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **kwargs)


RNG = np.random.default_rng(0)


# ----------------------------------------------------------------------------- gradients
def test_gather_and_index_select_accumulate_repeated_indices():
    x = ember.zeros(3, 2, requires_grad=True)
    ember.gather(x, 0, ember.tensor([[2, 2], [2, 0]])).sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0], [0.0, 0.0], [2.0, 1.0]]
    x.grad = None
    x.index_select(0, ember.tensor([1, 1, 1, 0])).sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0], [3.0, 3.0], [0.0, 0.0]]
    x.grad = None
    ember.take(x, ember.tensor([5, -1, 0])).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0], [0.0, 0.0], [0.0, 2.0]]


@pytest.mark.parametrize("op", ["gather", "index_select", "take", "index_add", "scatter_add"])
def test_gather_like_ops_have_double_backward(op):
    x = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    s = ember.randn(3, 3, dtype=ember.float64, requires_grad=True)
    index = ember.tensor([[3, 3, 0], [1, 3, 3], [0, 0, 0]])
    function = {
        "gather": lambda a, b: ember.gather(a, 0, index) * b,
        "index_select": lambda a, b: a.index_select(0, ember.tensor([3, 0, 3])) * b,
        "take": lambda a, b: ember.take(a, index) * b,
        "index_add": lambda a, b: a.index_add(0, ember.tensor([2, 2, 0]), b * b),
        "scatter_add": lambda a, b: ember.scatter_add(a, 0, index, b * b),
    }[op]
    assert ember.autograd.gradcheck(function, (x, s))
    assert ember.autograd.gradgradcheck(function, (x, s))


@requires_torch
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_matches_torch_with_ties(reduce, include_self):
    torch = pytest.importorskip("torch")
    # ties: value 1.0 appears in self and src at the same target, zeros for prod
    values = np.array([[1.0, -2.0, 0.5], [3.0, 1.0, 0.0], [2.0, 2.0, -1.0]])
    if not include_self and reduce in ("amax", "amin"):
        # PyTorch lets an excluded self value that equals the result take a share of the
        # gradient (the shares then add up to less than the gradient); ember does not.
        values += -10.0 if reduce == "amax" else 10.0
    x, tx = _pair(values)
    s, ts = _pair([[1.0, 4.0, 0.5], [3.0, 0.0, 2.0], [-1.0, 1.0, 3.0], [2.5, -3.0, 0.5]])
    i, ti = _index([[0, 2, 0], [1, 2, 1], [0, 2, 1], [0, 0, 1]])
    y = ember.scatter_reduce(x, 0, i, s, reduce, include_self=include_self)
    ty = torch.scatter_reduce(tx, 0, ti, ts, reduce, include_self=include_self)
    _close(y, ty)
    upstream = RNG.standard_normal((3, 3))
    y.backward(ember.tensor(upstream))
    ty.backward(torch.tensor(upstream))
    _close(x.grad, tx.grad, atol=1e-12)
    _close(s.grad, ts.grad, atol=1e-12)


def test_scatter_reduce_amax_shares_add_up_to_the_gradient():
    x = ember.tensor([0.5, 7.0], requires_grad=True)
    s = ember.tensor([0.5, 0.5, 0.25], requires_grad=True)
    y = ember.scatter_reduce(x, 0, ember.tensor([0, 0, 0]), s, "amax", include_self=False)
    assert y.tolist() == [0.5, 7.0]
    y.backward(ember.tensor([1.0, 1.0]))
    assert x.grad.tolist() == [0.0, 1.0]
    assert s.grad.tolist() == [0.5, 0.5, 0.0]


def test_scatter_reduce_prod_double_backward_without_zeros():
    x = ember.rand(3, 2, dtype=ember.float64).add(0.5).requires_grad_()
    s = ember.rand(4, 2, dtype=ember.float64).add(0.5).requires_grad_()
    index = ember.tensor([[0, 1], [0, 1], [2, 1], [0, 0]])
    for include_self in (True, False):
        function = lambda a, b: ember.scatter_reduce(a, 0, index, b, "prod",  # noqa: E731
                                                     include_self=include_self)
        assert ember.autograd.gradgradcheck(function, (x, s))


@requires_torch
def test_scatter_reduce_integers_and_mean_floor():
    torch = pytest.importorskip("torch")
    x, tx = _pair([5, 7, -3], requires_grad=False, dtype="int64")
    s, ts = _pair([2, 4, 9, -8], requires_grad=False, dtype="int64")
    i, ti = _index([0, 0, 2, 2])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        _close(ember.scatter_reduce(x, 0, i, s, reduce),
               torch.scatter_reduce(tx, 0, ti, ts, reduce))


@requires_torch
@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce_matches_torch_values(reduce):
    pytest.importorskip("torch")
    x, tx = _pair(RNG.standard_normal((3, 4)), requires_grad=False)
    s, ts = _pair(RNG.standard_normal((2, 4)), requires_grad=False)
    i, ti = _index([[0, 1, 2, 0], [0, 1, 1, 0]])
    _close(x.scatter(0, i, s, reduce=reduce), tx.scatter(0, ti, ts, reduce=reduce))
    _close(x.scatter(0, i, 1.5, reduce=reduce), tx.scatter(0, ti, 1.5, reduce=reduce))


@requires_torch
def test_scatter_with_src_larger_than_index():
    torch = pytest.importorskip("torch")
    x, tx = _pair(RNG.standard_normal((3, 4)), requires_grad=False)
    s, ts = _pair(RNG.standard_normal((3, 5)))
    i, ti = _index([[1, 0, 2], [0, 2, 1]])
    _close(ember.scatter(x, 0, i, s), torch.scatter(tx, 0, ti, ts))
    _close(ember.scatter_add(x, 1, i, s), torch.scatter_add(tx, 1, ti, ts))
    # the gradient of src is zero outside the block the index addresses
    ember.scatter(x, 0, i, s).sum().backward()
    expected = np.zeros((3, 5))
    expected[:2, :3] = 1.0
    assert np.array_equal(s.grad.numpy(), expected)
    s64 = ember.randn(3, 5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.scatter_add(x, 1, i, t), (s64,))


# ----------------------------------------------------------------------------- in place
@requires_torch
@pytest.mark.parametrize("name", ["scatter_", "scatter_value", "scatter_add_",
                                  "scatter_reduce_", "index_add_", "index_copy_",
                                  "index_fill_", "index_put_", "index_put_accumulate",
                                  "masked_scatter_"])
def test_in_place_forms_match_torch_and_keep_the_graph(name):
    torch = pytest.importorskip("torch")
    x, tx = _pair(RNG.standard_normal((3, 4)))
    s, ts = _pair(RNG.standard_normal((2, 4)))
    i, ti = _index([[2, 0, 1, 0], [0, 1, 2, 1]])
    v, tv = _index([2, 0])
    mask, tmask = _index([True, False, False, True])

    def run(lib, base, src, index, vector, m):
        y = base * 1
        if name == "scatter_":
            y.scatter_(0, index, src)
        elif name == "scatter_value":
            y.scatter_(1, index, -2.0)
        elif name == "scatter_add_":
            y.scatter_add_(0, index, src)
        elif name == "scatter_reduce_":
            y.scatter_reduce_(0, index, src, "amax", include_self=False)
        elif name == "index_add_":
            y.index_add_(0, vector, src, alpha=-0.5)
        elif name == "index_copy_":
            y.index_copy_(0, vector, src)
        elif name == "index_fill_":
            y.index_fill_(1, vector, 3.0)
        elif name == "index_put_":
            y.index_put_((vector, vector), src[0, :2])
        elif name == "index_put_accumulate":
            y.index_put_((lib.tensor([1, 1, 1]),), src[:1].expand(3, 4), accumulate=True)
        elif name == "masked_scatter_":
            y.masked_scatter_(m, src)
        (y * y).sum().backward()
        return y

    y = run(ember, x, s, i, v, mask)
    ty = run(torch, tx, ts, ti, tv, tmask)
    _close(y, ty)
    _close(x.grad, tx.grad)
    _close(s.grad if s.grad is not None else ember.zeros(2, 4, dtype=ember.float64),
           ts.grad if ts.grad is not None else torch.zeros(2, 4, dtype=torch.float64))


def test_index_put_accumulate_adds_every_repeat():
    x = ember.zeros(3)
    x.index_put_((ember.tensor([0, 2, 0, 0]),), ember.tensor(1.0), accumulate=True)
    assert x.tolist() == [3.0, 0.0, 1.0]


# ----------------------------------------------------------------------------- errors
def test_index_validation_names_dim_and_size():
    x = ember.zeros(3, 4)
    # PyTorch: RuntimeError for gather/scatter, IndexError for the index_* ops
    with pytest.raises(RuntimeError, match=r"gather\(\): index 3 is out of bounds for dimension 0 "
                                         r"with size 3"):
        ember.gather(x, 0, ember.tensor([[0, 3]]))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 4"):
        x.scatter(1, ember.tensor([[-1]]), 0.0)
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x.index_select(1, ember.tensor([4]))
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x.index_add(0, ember.tensor([3]), ember.zeros(1, 4))
    with pytest.raises(IndexError, match="tried to access index 12 on a tensor of 12 elements"):
        ember.take(x, ember.tensor([12]))


def test_wrong_index_dtypes_raise_pytorchs_errors():
    x = ember.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"gather\(\): Expected dtype int64 or int32 for "
                                           r"index, but got float32"):
        ember.gather(x, 0, ember.tensor([[0.0]]))
    with pytest.raises(RuntimeError, match=r"scatter\(\): Expected dtype int64 or int32 for "
                                           r"index, but got int16"):
        x.scatter(0, ember.tensor([[0]], dtype=ember.int16), 1.0)
    with pytest.raises(RuntimeError, match=r"index_select\(\): Expected dtype int64 or int32"):
        x.index_select(0, ember.tensor([0.0]))
    with pytest.raises(RuntimeError, match="take\\(\\): Expected a long tensor for index"):
        ember.take(x, ember.tensor([0], dtype=ember.int32))
    with pytest.raises(RuntimeError, match="expected BoolTensor for mask"):
        x.masked_select(ember.tensor([1, 0, 1, 0]))
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of dims"
                                           "|same number of dimensions"):
        ember.gather(x, 0, ember.tensor([0]))
    with pytest.raises(RuntimeError, match="Size does not match at dimension 1"):
        ember.gather(x, 0, ember.tensor([[0, 0, 0, 0, 0]]))
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        x.scatter(0, ember.tensor([[0]]), ember.ones(1, 1, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean"):
        x.scatter_reduce(0, ember.tensor([[0]]), ember.ones(1, 1), "max")
    with pytest.raises(RuntimeError, match="at least as many elements"):
        x.masked_scatter(ember.ones(3, 4, dtype=ember.bool), ember.ones(5))


def test_index_copy_and_index_fill_index_dtypes_follow_torch():
    x = ember.zeros(3, 2)
    for index in (ember.tensor([0.0]), ember.tensor([0], dtype=ember.int32)):
        with pytest.raises(RuntimeError, match=r"index_copy\(\): Expected dtype int64 for index"):
            x.index_copy(0, index, ember.ones(1, 2))
    # PyTorch raises IndexError here, and takes neither int32 nor bool
    for index in (ember.tensor([0.0]), ember.tensor([0], dtype=ember.int32),
                  ember.tensor([True])):
        with pytest.raises(IndexError, match=r"index_fill\(\): Expected dtype int64 for index"):
            x.index_fill(0, index, 1.0)
        with pytest.raises(IndexError, match=r"index_fill\(\): Expected dtype int64"):
            x.clone().index_fill_(0, index, 1.0)


@requires_torch
def test_numbers_that_overflow_an_integer_tensor_raise():
    torch = pytest.importorskip("torch")
    x, index = ember.tensor([5, 1], dtype=ember.int8), ember.tensor([0])
    overflow = "value cannot be converted to type int8_t without overflow"
    for attempt in (lambda: x.index_fill(0, index, 1000),
                    lambda: x.index_fill(0, index, ember.tensor(1000)),
                    lambda: x.clone().index_fill_(0, index, -129),
                    lambda: x.scatter(0, index, value=1000),
                    lambda: x.clone().scatter_(0, index, 1000.0)):
        with pytest.raises(RuntimeError, match=overflow):
            attempt()
    # unsigned dtypes take the negatives of their range, wrapped
    u, tu = ember.tensor([5, 1], dtype=ember.uint8), torch.tensor([5, 1], dtype=torch.uint8)
    assert u.index_fill(0, index, -1).tolist() == tu.index_fill(0, torch.tensor([0]), -1).tolist()
    assert u.scatter(0, index, -1).tolist() == tu.scatter(0, torch.tensor([0]), -1).tolist()
    assert x.index_fill(0, index, 1.7).tolist() == [1, 1]


@requires_torch
@pytest.mark.parametrize("shape, index", [((3,), 1), ((), 0), ((), [0, 0])])
def test_gather_takes_the_index_shape_with_0d_tensors(shape, index):
    x, tx = _pair(np.arange(1.0, 1.0 + np.prod(shape, dtype=int)).reshape(shape))
    i, ti = _index(index)
    y, ty = x.gather(0, i), tx.gather(0, ti)
    _close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    _close(x.grad, tx.grad)


@requires_torch
@pytest.mark.parametrize("op", ["scatter", "scatter_add", "scatter_reduce"])
def test_scatter_with_a_0d_index_reads_the_first_src_element(op):
    torch = pytest.importorskip("torch")
    src, tsrc = _pair([5.0, 6.0])
    extra = ("prod",) if op == "scatter_reduce" else ()
    y = getattr(ember.ones(3, dtype=ember.float64), op)(0, ember.tensor(1), src, *extra)
    ty = getattr(torch.ones(3, dtype=torch.float64), op)(0, torch.tensor(1), tsrc, *extra)
    _close(y, ty)
    (y * ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)).sum().backward()
    assert src.grad.tolist() == [2.0, 0.0]  # (PyTorch's backward fails on this shape)
    with pytest.raises(RuntimeError, match="Size does not match at dimension 0"):
        getattr(ember.ones(3), op)(0, ember.tensor(1), ember.ones(0), *extra)


@requires_torch
@pytest.mark.parametrize("op", ["gather", "scatter", "scatter_value", "scatter_add",
                                "scatter_reduce"])
def test_int32_index_is_accepted_where_torch_accepts_it(op):
    torch = pytest.importorskip("torch")
    x, tx = _pair(RNG.standard_normal((2, 3)))
    s, ts = _pair(RNG.standard_normal((2, 3)))
    values = [[0, 1, 0], [1, 1, 0]]
    i, ti = ember.tensor(values, dtype=ember.int32), torch.tensor(values, dtype=torch.int32)
    run = {
        "gather": lambda a, b, k: a.gather(1, k) * b,
        "scatter": lambda a, b, k: a.scatter(0, k, b),
        "scatter_value": lambda a, b, k: a.scatter(0, k, 2.5) * b,
        "scatter_add": lambda a, b, k: a.scatter_add(0, k, b),
        "scatter_reduce": lambda a, b, k: a.scatter_reduce(0, k, b, "amax"),
    }[op]
    y, ty = run(x, s, i), run(tx, ts, ti)
    _close(y, ty)
    w = RNG.standard_normal((2, 3))
    (y * ember.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    _close(x.grad, tx.grad)
    _close(s.grad, ts.grad)
    with pytest.raises(RuntimeError, match="Expected dtype int64 or int32 for index"):
        run(x, s, i.to(ember.int16))


def test_index_put_shape_mismatch_names_both_shapes():
    x = ember.zeros(3, 3)
    for accumulate in (False, True):
        with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[2, 2\] "
                                               r"cannot be broadcast to indexing result of "
                                               r"shape \[2, 3\]"):
            x.index_put_((ember.tensor([0, 1]),), ember.ones(2, 2), accumulate=accumulate)


# ----------------------------------------------------------------------------- searches
@requires_torch
@pytest.mark.parametrize("kwargs", [{}, {"return_inverse": True}, {"return_counts": True},
                                    {"return_inverse": True, "return_counts": True, "dim": 0},
                                    {"return_counts": True, "dim": 1}, {"sorted": False}])
def test_unique_matches_torch(kwargs):
    torch = pytest.importorskip("torch")
    x, tx = _pair([[1, 2, 1], [0, 5, 0], [1, 2, 1], [0, 5, 0]], requires_grad=False,
                  dtype="int64")
    _close(ember.unique(x, **kwargs), torch.unique(tx, **kwargs))
    if "sorted" not in kwargs:
        _close(ember.unique_consecutive(x, **kwargs), torch.unique_consecutive(tx, **kwargs))


@requires_torch
def test_unique_of_floats_has_no_gradient_and_keeps_dtype():
    x = ember.tensor([2.0, 1.0, 2.0], requires_grad=True)
    values, counts = ember.unique(x, return_counts=True)
    assert not values.requires_grad and values.dtype is ember.float32
    assert values.tolist() == [1.0, 2.0] and counts.tolist() == [1, 2]


@requires_torch
def test_bincount_histc_searchsorted_bucketize_match_torch():
    torch = pytest.importorskip("torch")
    x, tx = _index([3, 0, 3, 3, 7])
    w, tw = _pair([0.5, 1.0, 2.0, -1.0, 4.0], requires_grad=False, dtype="float32")
    _close(ember.bincount(x), torch.bincount(tx))
    _close(ember.bincount(x, w, minlength=10), torch.bincount(tx, tw, minlength=10))
    _close(x.bincount(ember.tensor([1, 2, 3, 4, 5])), tx.bincount(torch.tensor([1, 2, 3, 4, 5])))
    data, tdata = _pair(RNG.uniform(-3, 3, size=40), requires_grad=False)
    _close(ember.histc(data, bins=7), torch.histc(tdata, bins=7))
    _close(ember.histc(data, bins=5, min=-1, max=2), torch.histc(tdata, bins=5, min=-1, max=2))
    constant, tconstant = _pair([2.0, 2.0, 2.0], requires_grad=False)
    _close(ember.histc(constant, bins=4), torch.histc(tconstant, bins=4))
    seq, tseq = _pair([[0.0, 1.0, 1.0, 3.0], [-5.0, -2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0]],
                      requires_grad=False)
    v, tv = _pair([[1.0, 3.5, -1.0], [2.0, -9.0, 0.0], [1.0, 0.0, 2.0]], requires_grad=False)
    for right in (False, True):
        _close(ember.searchsorted(seq, v, right=right), torch.searchsorted(tseq, tv, right=right))
        _close(ember.bucketize(v, seq[0], right=right), torch.bucketize(tv, tseq[0], right=right))
    unsorted, tunsorted = _pair([3.0, -1.0, 2.0, 0.0], requires_grad=False)
    sorter = ember.tensor([1, 3, 2, 0])
    _close(ember.searchsorted(unsorted, v[0], sorter=sorter),
           torch.searchsorted(tunsorted, tv[0], sorter=torch.tensor(sorter.numpy())))
    _close(ember.searchsorted(seq[0], 1.0, side="right", out_int32=True),
           torch.searchsorted(tseq[0], 1.0, side="right", out_int32=True))
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        ember.searchsorted(seq, v, side="left", right=True)
    with pytest.raises(RuntimeError, match="boundaries tensor must be 1 dimension"):
        ember.bucketize(v, seq)
    with pytest.raises(RuntimeError, match="1-d non-negative integral"):
        ember.bincount(ember.tensor([1, -1]))


@requires_torch
def test_nonzero_and_argwhere_shapes():
    torch = pytest.importorskip("torch")
    for values in ([[0.0, 2.0], [3.0, 0.0]], 5.0, 0.0, [[0, 0]]):
        x, tx = _pair(values, requires_grad=False)
        _close(x.nonzero(), tx.nonzero())
        _close(ember.argwhere(x), torch.argwhere(tx))
        _close(x.nonzero(as_tuple=True), tx.nonzero(as_tuple=True))


@requires_torch
def test_masked_select_and_take_along_dim_broadcast():
    torch = pytest.importorskip("torch")
    x, tx = _pair(RNG.standard_normal((3, 1)))
    m, tm = _index([[True, False, True, True], [False, False, True, False],
                    [True, True, False, False]])
    y, ty = ember.masked_select(x, m), torch.masked_select(tx, tm)
    _close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    _close(x.grad, tx.grad)
    a, ta = _pair(RNG.standard_normal((2, 1, 4)))
    i, ti = _index([[[0], [3], [1]]])
    _close(ember.take_along_dim(a, i, 2), torch.take_along_dim(ta, ti, 2))


@requires_torch
@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce_matches_torch(reduce):
    pytest.importorskip("torch")
    x, tx = _pair([[1.0, 0.0, 2.0], [3.0, -1.0, 0.5], [2.0, 2.0, 2.0]])
    s, ts = _pair([[2.0, 0.0, 2.0], [3.0, 1.0, -0.5]])
    i, ti = _index([2, 2])
    for include_self in (True, False):
        y = x.index_reduce(0, i, s, reduce, include_self=include_self)
        ty = tx.index_reduce(0, ti, ts, reduce, include_self=include_self)
        _close(y, ty)
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax"):
        x.index_reduce(0, i, s, "sum")


@requires_torch
def test_put_and_the_scatter_forms_of_setitem():
    torch = pytest.importorskip("torch")
    x, tx = _pair(RNG.standard_normal((2, 3)))
    s, ts = _pair([1.0, 2.0, 3.0])
    i, ti = _index([5, -6, 5])
    y, ty = x.put(i, s, accumulate=True), tx.put(ti, ts, accumulate=True)
    _close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    _close(s.grad, ts.grad)
    with pytest.raises(IndexError, match="tried to access index 6 on a tensor of 6 elements"):
        x.put(ember.tensor([6]), ember.ones(1, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="same number of elements"):
        x.put(ember.tensor([0, 1]), ember.ones(1, dtype=ember.float64))
    _close(ember.select_scatter(x, s, 0, 1), torch.select_scatter(tx, ts, 0, 1))
    _close(ember.slice_scatter(x, s[:2].reshape(2, 1), 1, 1, None, 2),
           torch.slice_scatter(tx, ts[:2].reshape(2, 1), 1, 1, None, 2))
    with pytest.raises(RuntimeError, match="expected src to have a size equal to the slice"):
        ember.select_scatter(x, s, 1, 0)
