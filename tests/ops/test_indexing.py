"""Indexing edge cases the op table can't see: PyTorch's placement of advanced-index dims,
differentiable ``__setitem__`` (broadcast values, masks, values that need gradients,
through views), repeated indices, bounds and dtype errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember

from ..conftest import requires_torch


def _pair(shape, requires_grad=True, seed=0):
    torch = pytest.importorskip("torch")
    array = np.random.default_rng(seed).standard_normal(shape)
    return (ember.tensor(array).requires_grad_(requires_grad),
            torch.tensor(array).requires_grad_(requires_grad))


def _both(item):
    """An index item as ember's and torch's (lists stay lists, arrays become tensors)."""
    torch = pytest.importorskip("torch")
    if isinstance(item, np.ndarray):
        return ember.tensor(item), torch.tensor(item)
    return item, item


# ----------------------------------------------------------------------------- getitem
INDICES = [
    (slice(None), [0, 2], [1, 3]),
    ([0, 2], slice(None), [1, 3]),
    (None, np.array([1]), slice(None), np.array([[0], [2]])),
    (Ellipsis, [0, 1]),
    (np.array([True, False, True]),),
    (1, slice(None), [0, 4]),
    ([2, 0], 1, [4, 4]),
    (slice(None), 1, [0, 0, 3]),
    (np.array([[True, False, True, True]] * 3), [1, 1, 0, 2, 3, 4, 0, 1, 2]),
    (0, np.array([True, False, True, False]), slice(1, None)),
    ([[0, 1], [2, 2]], None, slice(None, None, 2)),
    (slice(None), np.array([3, -1, 0, 3]), None, 2),
]


@requires_torch
@pytest.mark.parametrize("index", INDICES, ids=[str(i) for i in range(len(INDICES))])
def test_advanced_getitem_matches_torch_values_and_gradients(index):
    x, tx = _pair((3, 4, 5))
    ours_index, theirs_index = zip(*(_both(i) for i in index))
    y, ty = x[tuple(ours_index)], tx[tuple(theirs_index)]
    assert tuple(y.shape) == tuple(ty.shape)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    upstream = np.random.default_rng(1).standard_normal(tuple(y.shape))
    y.backward(ember.tensor(upstream))
    ty.backward(__import__("torch").tensor(upstream))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def test_repeated_indices_accumulate_in_the_gradient():
    x = ember.zeros(4, requires_grad=True)
    x[ember.tensor([1, 1, 3, 1])].sum().backward()
    assert x.grad.tolist() == [0.0, 3.0, 0.0, 1.0]
    x.grad = None
    x[[0, 0], ].sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 0.0, 0.0]


def test_advanced_index_double_backward_with_repeats():
    x = ember.randn(5, 2, dtype=ember.float64, requires_grad=True)
    index = ember.tensor([4, 0, 4, 4])
    assert ember.autograd.gradgradcheck(lambda t: t[index] ** 2, (x,))


def test_basic_indexing_is_a_view_advanced_a_copy():
    x = ember.arange(12.).reshape(3, 4)
    row = x[1]
    picked = x[[1]]
    x[1, 0] = 100.0
    assert row[0].item() == 100.0 and picked[0, 0].item() == 4.0
    assert row._version == x._version


# ----------------------------------------------------------------------------- errors
def test_out_of_range_indices_name_the_dim_and_size():
    x = ember.zeros(3, 4)
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x[:, 4]
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[ember.tensor([0, 5])]
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 1 with size 4"):
        x[..., [-5]]
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 1 with size 4"):
        x[..., 7]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="out of bounds for dimension 0"):
        x[[3]] = 1.0


def test_wrong_index_types_raise_pytorchs_errors():
    x = ember.zeros(3, 4)
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or "
                                         "bool tensors"):
        x[ember.tensor([0.0, 1.0])]
    with pytest.raises(IndexError, match="only integers, slices"):
        x[1.5]
    with pytest.raises(IndexError, match="only integers, slices"):
        x[[0.5, 1.0]]
    with pytest.raises(IndexError, match=r"The shape of the mask \[2\] at index 0 does not match"):
        x[ember.tensor([True, False])]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]


def test_index_tensor_dtypes_follow_torch():
    x = ember.arange(9.).reshape(3, 3)
    for dtype in (ember.int8, ember.int16):
        index = ember.tensor([0, 1], dtype=dtype)
        for attempt in (lambda: x[index], lambda: x[:, index],
                        lambda: x.__setitem__(index, 1.0),
                        lambda: x.clone().index_put_((index,), ember.tensor(1.0)),
                        lambda: x.index_put((index[0],), ember.tensor(1.0))):
            with pytest.raises(IndexError, match="tensors used as indices must be long, int, "
                                                 "byte or bool tensors"):
                attempt()
        # a 0-d integer tensor of any dtype indexes as a Python int
        assert x[index[1]].tolist() == [3.0, 4.0, 5.0]
        assert x[0, index[1]].item() == 1.0
    assert x[ember.tensor([2, 0], dtype=ember.int32)].tolist() == [[6.0, 7.0, 8.0],
                                                                  [0.0, 1.0, 2.0]]
    # uint8 is a (deprecated) mask, even 0-d
    with pytest.warns(UserWarning, match="indexing with dtype uint8 is now deprecated"):
        assert x[ember.tensor([1, 0, 1], dtype=ember.uint8)].tolist() == [[0.0, 1.0, 2.0],
                                                                         [6.0, 7.0, 8.0]]
    with pytest.warns(UserWarning, match="deprecated"):
        assert tuple(x[ember.tensor(0, dtype=ember.uint8)].shape) == (0, 3, 3)


# ----------------------------------------------------------------------------- setitem
BASIC_MISMATCH = "The expanded size of the tensor ({}) must match the existing size ({}) at " \
                 "non-singleton dimension {}.  Target sizes: {}.  Tensor sizes: {}"
ADVANCED_MISMATCH = "shape mismatch: value tensor of shape {} cannot be broadcast to indexing " \
                    "result of shape {}"
MISMATCHES = [  # (index, value shape, PyTorch's message)
    (0, (2,), BASIC_MISMATCH.format(3, 2, 0, [3], [2])),
    (slice(None), (3, 4), BASIC_MISMATCH.format(3, 4, 1, [3, 3], [3, 4])),
    (0, (4,), BASIC_MISMATCH.format(3, 4, 0, [3], [4])),
    (0, (1, 1, 4), BASIC_MISMATCH.format(3, 4, 0, [3], [4])),
    ((0, slice(None)), (2,), BASIC_MISMATCH.format(3, 2, 0, [3], [2])),
    ((Ellipsis, 0), (2,), BASIC_MISMATCH.format(3, 2, 0, [3], [2])),
    ((0, 0), (2,), "expand([2], size=[]): the number of sizes provided (0) must be greater or "
                   "equal to the number of dimensions in the tensor (1)"),
    ([0, 1], (3, 2), ADVANCED_MISMATCH.format([3, 2], [2, 3])),
    ("mask", (5,), ADVANCED_MISMATCH.format([5], [2])),
]


@pytest.mark.parametrize("index, shape, message", MISMATCHES,
                         ids=[str(i) for i in range(len(MISMATCHES))])
@pytest.mark.parametrize("grad", [False, True])
def test_setitem_shape_mismatch_raises_pytorchs_error(index, shape, message, grad):
    x = ember.zeros(3, 3, requires_grad=grad) * 1
    if index == "mask":
        index = ember.tensor([[True, False, False], [False, True, False], [False] * 3])
    value = ember.ones(*shape, requires_grad=grad)
    with pytest.raises(RuntimeError) as info:
        x[index] = value
    assert str(info.value) == message
    assert x.tolist() == [[0.0] * 3] * 3


@requires_torch
@pytest.mark.parametrize("index, shape, message", MISMATCHES,
                         ids=[str(i) for i in range(len(MISMATCHES))])
def test_setitem_shape_mismatch_messages_are_torchs(index, shape, message):
    torch = pytest.importorskip("torch")
    x = torch.zeros(3, 3)
    if index == "mask":
        index = torch.tensor([[True, False, False], [False, True, False], [False] * 3])
    with pytest.raises(RuntimeError) as info:
        x[index] = torch.ones(*shape)
    assert str(info.value).replace("torch.FloatTensor{[2]}", "[2]") == message


def test_setitem_of_a_list_that_does_not_fit_is_a_type_error():
    x = ember.zeros(3, 3)
    with pytest.raises(TypeError, match=r"can't assign a list of shape \[2\] to an indexed "
                                        r"region of shape \[3\]"):
        x[0] = [1, 2]  # PyTorch takes no list at all: TypeError
    x[0] = [1, 2, 3]
    assert x[0].tolist() == [1.0, 2.0, 3.0]


@requires_torch
def test_setitem_integer_overflow_raises_and_unsigned_wraps_negatives():
    torch = pytest.importorskip("torch")
    for index in (0, slice(None), [0], ember.tensor([True, False])):
        x = ember.tensor([5, 1], dtype=ember.int8)
        with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t "
                                               "without overflow"):
            x[index] = 1000
        assert x.tolist() == [5, 1]
    x, tx = ember.tensor([5, 1], dtype=ember.uint8), torch.tensor([5, 1], dtype=torch.uint8)
    x[0], tx[0] = -1, -1
    assert x.tolist() == tx.tolist() == [255, 1]
    with pytest.raises(RuntimeError, match="uint8_t without overflow"):
        x[1] = -300
    with pytest.raises(RuntimeError, match="int8_t without overflow"):
        ember.tensor([5, 1], dtype=ember.int8)[0] = float("nan")


def test_setitem_of_a_clone_gives_the_value_a_gradient():
    x = ember.randn(3, 4, requires_grad=True)
    w = ember.randn(4, requires_grad=True)
    y = x.clone()
    y[0] = w * 2
    y.sum().backward()
    assert w.grad.tolist() == [2.0] * 4
    assert x.grad.tolist() == [[0.0] * 4, [1.0] * 4, [1.0] * 4]


@requires_torch
@pytest.mark.parametrize("case", ["broadcast", "mask", "mask scalar tensor", "advanced",
                                  "leading ones", "slice step", "mixed int and list"])
def test_setitem_values_and_gradients_match_torch(case):
    torch = pytest.importorskip("torch")
    x, tx = _pair((4, 3), seed=2)
    mask = np.array([[True, False, True], [False, False, True], [True, True, False],
                     [False, True, False]])
    index, value_shape = {
        "broadcast": ((slice(1, 3),), (3,)),
        "mask": ((mask,), (int(mask.sum()),)),
        "mask scalar tensor": ((mask,), ()),
        "advanced": (([3, 0], [2, 2]), (2,)),
        "leading ones": ((0,), (1, 3)),
        "slice step": ((slice(None, None, 2), slice(1, None)), (2, 1)),
        "mixed int and list": ((slice(None), 1), (4,)),
    }[case]
    v, tv = _pair(value_shape, seed=3)
    ours_index = tuple(ember.tensor(i) if isinstance(i, np.ndarray) else i for i in index)
    theirs_index = tuple(torch.tensor(i) if isinstance(i, np.ndarray) else i for i in index)
    y, ty = x * 1, tx * 1
    y[ours_index] = v
    ty[theirs_index] = tv
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(v.grad.numpy(), tv.grad.numpy())


@requires_torch
def test_setitem_through_views_updates_the_base_gradient():
    pytest.importorskip("torch")
    x, tx = _pair((4, 3), seed=4)
    w, tw = _pair((3,), seed=5)
    outs = []
    for base, value in ((x, w), (tx, tw)):
        y = base * 2
        view = y[1:]           # a view of y
        view[0] = value * 3    # writes y[1]
        t = y.t()              # a transposed view
        t[2, 0] = value[0]     # writes y[0, 2]
        (y ** 2).sum().backward()
        outs.append(y)
    np.testing.assert_allclose(outs[0].detach().numpy(), outs[1].detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())


def test_setitem_through_a_reshaped_view_reaches_the_base():
    x = ember.zeros(6, requires_grad=True)
    w = ember.ones(2, requires_grad=True)
    y = x.clone()
    grid = y.view(2, 3)
    grid[:, 1] = w * 5
    assert y.tolist() == [0.0, 5.0, 0.0, 0.0, 5.0, 0.0]
    (y * ember.arange(6.)).sum().backward()
    assert w.grad.tolist() == [5.0, 20.0]
    assert x.grad.tolist() == [0.0, 0.0, 2.0, 3.0, 0.0, 5.0]


def test_setitem_on_a_leaf_that_requires_grad_raises():
    x = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[0] = 1.0
    with ember.no_grad():
        x[0] = 1.0
    assert x.tolist() == [1.0, 0.0, 0.0]


def test_setitem_without_grad_bumps_the_version_and_checks_shapes():
    x = ember.zeros(2, 3)
    before = x._version
    x[:, 1] = ember.tensor([1.0, 2.0])
    assert x._version == before + 1 and x[:, 1].tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="must match the existing size"):
        x[0] = ember.ones(4)


def test_in_place_on_a_saved_view_makes_backward_raise():
    x = ember.randn(4, requires_grad=True)
    y = x * 1
    view = y.view(2, 2)
    z = view * view           # saves the view
    view.mul_(2)              # same memory, same version counter
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_value_that_needs_grad_makes_a_plain_tensor_part_of_the_graph():
    y = ember.zeros(3)
    w = ember.tensor(2.0, requires_grad=True)
    y[1] = w
    assert y.requires_grad and y.grad_fn is not None
    (y * 3).sum().backward()
    assert w.grad.item() == 3.0


@pytest.mark.parametrize("case", ["flat", "arrays", "negative", "axis", "axis many repeats",
                                  "one dim", "mixed"])
def test_scatter_add_routes_match_unbuffered_add(case):
    from ember.ops.indexing import scatter_add

    rng = np.random.default_rng(0)
    shape = (3, 4, 5)
    index = {
        "flat": rng.integers(0, 60, (7, 2)),
        "arrays": (rng.integers(0, 3, (6, 1)), rng.integers(0, 4, (1, 2)),
                   rng.integers(0, 5, (6, 2))),
        "negative": (np.array([-1, 2, -3, -1]), np.array([0, -4, 3, 0]),
                     np.array([-5, 4, 4, -5])),
        "axis": (slice(None), slice(None), np.array([4, 0, 4, 4, 1, 0])),
        "axis many repeats": (slice(None), np.zeros(40, dtype=np.int64)),
        "one dim": (np.array([2, 0, 2]),),
        "mixed": (np.array([2, 0, 2]), slice(None), np.array([1, 1, 3])),
    }[case]
    source = np.zeros(shape)
    values = rng.standard_normal(source[index].shape if type(index) is tuple
                                 else index.shape)
    expected = source.copy()
    np.add.at(expected.reshape(-1) if type(index) is not tuple else expected, index, values)
    out = source.copy()
    scatter_add(out, index, values)
    np.testing.assert_allclose(out, expected)
