"""Shape-op edge cases the op table can't see: which results are views (shared memory and
version counter) and which are copies, in-place changes through views, F.pad's modes
against PyTorch, split arithmetic, and PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ..conftest import requires_torch


def _close(ours, theirs):
    if isinstance(ours, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _close(a, b)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy())


def _flat(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


VIEWS = {
    "view": lambda x: x.view(6, 4),
    "reshape": lambda x: x.reshape(-1),
    "flatten": lambda x: x.flatten(1),
    "unflatten": lambda x: x.unflatten(2, (2, 2)),
    "view_as": lambda x: x.view_as(ember.zeros(4, 6)),
    "reshape_as": lambda x: x.reshape_as(ember.zeros(24)),
    "transpose": lambda x: x.transpose(0, 2),
    "swapaxes": lambda x: ember.swapaxes(x, 0, 1),
    "permute": lambda x: x.permute(2, 0, 1),
    "movedim": lambda x: ember.movedim(x, 0, -1),
    "moveaxis": lambda x: x.moveaxis((0, 1), (1, 0)),
    "T-like mT": lambda x: x.mT,
    "squeeze": lambda x: x[:, :1].squeeze(1),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "expand": lambda x: x[:1].expand(3, 3, 4),
    "expand_as": lambda x: x[:, :1].expand_as(x),
    "broadcast_to": lambda x: ember.broadcast_to(x, (2, 2, 3, 4)),
    "broadcast_tensors": lambda x: ember.broadcast_tensors(x, ember.zeros(2, 1, 1, 1))[0],
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(2, -1),
    "getitem": lambda x: x[1, ::2, None],
    "split": lambda x: x.split(1, dim=1),
    "split sizes": lambda x: ember.split(x, [1, 3], dim=-1),
    "chunk": lambda x: x.chunk(2, 2),
    "tensor_split": lambda x: x.tensor_split([1, 2], dim=1),
    "hsplit": lambda x: x.hsplit(3),
    "unbind": lambda x: x.unbind(1),
    "meshgrid": lambda x: ember.meshgrid(x[0, 0], x[1, 1], indexing="xy"),
    "atleast_3d": lambda x: ember.atleast_3d(x),
    "atleast_2d of 1-D": lambda x: ember.atleast_2d(x[0, 0]),
}

COPIES = {
    "flip": lambda x: x.flip(0),
    "fliplr": lambda x: ember.fliplr(x),
    "roll": lambda x: x.roll(1, 0),
    "rot90 k=2": lambda x: x.rot90(2),
    "repeat": lambda x: x.repeat(1, 1, 1),
    "tile": lambda x: x.tile((1,)),
    "repeat_interleave": lambda x: x.repeat_interleave(1, dim=0),
    "cat": lambda x: ember.cat([x]),
    "stack": lambda x: ember.stack([x]),
    "hstack": lambda x: ember.hstack([x]),
    "pad": lambda x: F.pad(x, (0, 0)),
    "pad reflect": lambda x: F.pad(x, (1, 1), mode="reflect"),
    "clone": lambda x: x.clone(),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_memory_and_version_counter(name):
    x = ember.arange(24.).reshape(2, 3, 4)
    outs = _flat(VIEWS[name](x))
    before = [o.tolist() for o in outs]
    x.add_(100)
    for out, old in zip(outs, before):
        assert out._version == x._version, name
        assert np.allclose(np.array(out.tolist()), np.array(old) + 100), name


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copies_do_not_share_memory(name):
    x = ember.arange(24.).reshape(2, 3, 4)
    outs = _flat(COPIES[name](x))
    before = [o.tolist() for o in outs]
    x.add_(100)
    for out, old in zip(outs, before):
        assert out.tolist() == old, name


def test_in_place_change_through_a_view_changes_the_base():
    x = ember.zeros(2, 3)
    x.view(6)[4] = 7.0
    x.t()[0].fill_(1.0)
    x.unbind(0)[1].mul_(2)
    assert x.tolist() == [[1.0, 0.0, 0.0], [2.0, 14.0, 0.0]]


def test_backward_raises_after_an_in_place_change_to_a_saved_view():
    x = ember.randn(2, 3, requires_grad=True)
    y = x * 2
    view = y.transpose(0, 1)
    out = view.sin()            # saves the view
    y.add_(1)                   # changes the view's memory through the base
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_in_place_on_a_split_piece_reaches_the_base_gradient():
    x = ember.arange(4., requires_grad=True)
    y = x.clone()
    first, _ = y.split(2)
    first.mul_(3)
    (y * y).sum().backward()
    assert y.tolist() == [0.0, 3.0, 2.0, 3.0]
    assert x.grad.tolist() == [0.0, 18.0, 4.0, 6.0]


def test_expanded_views_are_read_only():
    x = ember.zeros(3, 1)
    with pytest.raises(RuntimeError, match="refers to a single memory location"):
        x.expand(3, 4).fill_(1.0)
    with pytest.raises(RuntimeError, match="refers to a single memory location"):
        x.expand(3, 4)[0, 0] = 1.0
    with pytest.raises(RuntimeError, match="refers to a single memory location"):
        ember.meshgrid(ember.zeros(2), ember.zeros(3), indexing="ij")[0].add_(1)
    x.expand(3, 1).add_(1)  # no dim repeats memory: allowed
    assert x.tolist() == [[1.0], [1.0], [1.0]]


@requires_torch
@pytest.mark.parametrize("shapes", [((3, 1), (2, 1, 4)), ((), (2,), (3, 1)), ((2, 3), (3,)),
                                    ((2, 3), (2, 3)), ((4,),), ((1, 4), (3, 1))])
def test_broadcast_tensors_are_expanded_views_as_in_pytorch(shapes):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    ours = [ember.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    got, expected = ember.broadcast_tensors(*ours), torch.broadcast_tensors(*theirs)
    upstream = rng.standard_normal(tuple(expected[0].shape))
    sum(((o * ember.tensor(upstream)).sum() * (i + 1) for i, o in enumerate(got))).backward()
    sum(((o * torch.tensor(upstream)).sum() * (i + 1) for i, o in enumerate(expected))
        ).backward()
    for x, y, a, b in zip(got, expected, ours, theirs):
        assert tuple(x.shape) == tuple(y.shape)
        assert (x is a) == (y is b)
        assert (x._base is a) == (y._base is b)
        assert (x.grad_fn is None) == (y.grad_fn is None)
        if y.grad_fn is not None:
            assert x.grad_fn.name() == y.grad_fn.name()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())
    # without grad: writes through an expanded view raise as PyTorch's do; the inputs'
    # in-place changes show through their views, with one version counter
    plain = [ember.tensor(a) for a in arrays]
    plain_torch = [torch.tensor(a) for a in arrays]
    views = ember.broadcast_tensors(*plain)
    torch_views = torch.broadcast_tensors(*plain_torch)
    for x, y, a in zip(views, torch_views, plain):
        try:
            y.add_(1.0)
            torch_raised = False
        except RuntimeError:
            torch_raised = True
        if torch_raised:
            with pytest.raises(RuntimeError, match="single memory location"):
                x.add_(1.0)
        else:
            x.add_(1.0)
        a.mul_(2.0)
        assert x._version == a._version
        np.testing.assert_allclose(x.numpy(), np.broadcast_to(a.numpy(), x.shape))


# ----------------------------------------------------------------------------- F.pad
PADS = [
    ((2, 3, 5), (1, 2), "constant"),
    ((2, 3, 5), (-1, 2, 1, -2), "constant"),
    ((1, 2, 3, 4), (1, 1, 0, 0, 2, 0), "constant"),
    ((2, 5), (4, -2), "reflect"),
    ((1, 2, 4, 5), (3, 1, 2, -1), "reflect"),
    ((1, 1, 3, 3, 3), (2, 1, 0, 2, 1, 1), "reflect"),
    ((2, 3, 4), (5, 0), "replicate"),
    ((2, 3, 4), (-2, 3, 2, -1), "replicate"),
    ((1, 2, 2, 2, 3), (1, 1, 2, 0, 0, 2), "replicate"),
    ((2, 6), (-2, 1), "circular"),
    ((1, 3, 4), (3, -1, 2, 3), "circular"),
    ((1, 1, 2, 3, 4), (1, 2, 3, 0, 1, 1), "circular"),
]


@requires_torch
@pytest.mark.parametrize("shape,pad,mode", PADS, ids=[f"{m}-{p}" for _, p, m in PADS])
def test_pad_modes_match_torch(shape, pad, mode):
    torch = pytest.importorskip("torch")
    array = np.random.default_rng(len(pad)).standard_normal(shape)
    x = ember.tensor(array, requires_grad=True)
    tx = torch.tensor(array, requires_grad=True)
    kwargs = {"value": -0.5} if mode == "constant" else {}
    y = F.pad(x, pad, mode=mode, **kwargs)
    ty = torch.nn.functional.pad(tx, pad, mode=mode, **kwargs)
    _close(y, ty)
    upstream = np.random.default_rng(7).standard_normal(tuple(ty.shape))
    y.backward(ember.tensor(upstream))
    ty.backward(torch.tensor(upstream))
    _close(x.grad, tx.grad)


def test_pad_gradients_of_gradients():
    x = ember.randn(1, 2, 4, dtype=ember.float64, requires_grad=True)
    for mode in ("reflect", "replicate", "circular"):
        assert ember.autograd.gradgradcheck(lambda t: F.pad(t, (2, 1), mode=mode) ** 2, (x,))


def test_pad_errors_match_torch():
    x = ember.zeros(1, 2, 3)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal"):
        F.pad(x, (1,) * 8)
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding"):
        F.pad(x, (3, 0), mode="reflect")
    with pytest.raises(RuntimeError, match="wrapping around more than once"):
        F.pad(x, (4, 0), mode="circular")
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D"):
        F.pad(ember.zeros(3), (1, 1), mode="replicate")
    with pytest.raises(RuntimeError, match="doesn't take in value argument"):
        F.pad(x, (1, 1), mode="reflect", value=2.0)
    with pytest.raises(RuntimeError, match="negative output size"):
        F.pad(x, (-2, -2))
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode"):
        F.pad(x, (1, 1), mode="mirror")


# ----------------------------------------------------------------------------- splits
@requires_torch
@pytest.mark.parametrize("size", [0, 1, 5, 6, 7])
def test_split_chunk_tensor_split_sizes_match_torch(size):
    torch = pytest.importorskip("torch")
    x, tx = ember.arange(float(size)), torch.arange(float(size))
    for n in (1, 2, 3, 4):
        _close(x.split(n), tx.split(n))
        _close(x.chunk(n), tx.chunk(n))
        _close(x.tensor_split(n), tx.tensor_split(n))
    for points in ([2], [1, 4], [4, 1], [0, 9], [-2, 3]):
        _close(x.tensor_split(points), tx.tensor_split(points))
        _close(x.tensor_split(ember.tensor(points)), tx.tensor_split(torch.tensor(points)))


def test_overlapping_tensor_split_pieces_add_their_gradients():
    x = ember.arange(5., requires_grad=True)
    pieces = x.tensor_split([4, 1])         # x[:4], x[4:1] (empty), x[1:]
    assert [p.tolist() for p in pieces] == [[0.0, 1.0, 2.0, 3.0], [], [1.0, 2.0, 3.0, 4.0]]
    sum(p.sum() for p in pieces).backward()
    assert x.grad.tolist() == [1.0, 2.0, 2.0, 2.0, 1.0]


def test_split_errors():
    x = ember.zeros(4, 2)
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly "
                                           "to 4"):
        x.split([1, 2])
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0"):
        x.chunk(0)
    with pytest.raises(RuntimeError, match="not divisible by the split_size 3"):
        x.hsplit(3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unbind(2)


# ----------------------------------------------------------------------------- the others
@requires_torch
def test_repeat_interleave_forms_match_torch():
    torch = pytest.importorskip("torch")
    array = np.arange(6.0).reshape(2, 3)
    x, tx = ember.tensor(array), torch.tensor(array)
    _close(x.repeat_interleave(2), tx.repeat_interleave(2))
    _close(x.repeat_interleave(ember.tensor([2, 0]), dim=0),
           tx.repeat_interleave(torch.tensor([2, 0]), dim=0))
    _close(x.repeat_interleave(ember.tensor(3), dim=1), tx.repeat_interleave(torch.tensor(3),
                                                                             dim=1))
    _close(ember.repeat_interleave(ember.tensor([1, 0, 3])),
           torch.repeat_interleave(torch.tensor([1, 0, 3])))
    with pytest.raises(RuntimeError, match="repeats must have the same size"):
        x.repeat_interleave(ember.tensor([1, 2, 3]), dim=0)


@requires_torch
def test_rot90_roll_movedim_flip_match_torch():
    torch = pytest.importorskip("torch")
    array = np.arange(24.0).reshape(2, 3, 4)
    x, tx = ember.tensor(array), torch.tensor(array)
    for k in range(-5, 6):
        _close(x.rot90(k, (1, 2)), tx.rot90(k, (1, 2)))
    _close(x.roll(5), tx.roll(5))
    _close(x.roll((1, -7), (2, 0)), tx.roll((1, -7), (2, 0)))
    _close(ember.movedim(x, (0, 2), (2, 1)), torch.movedim(tx, (0, 2), (2, 1)))
    _close(x.flip(0, 2), tx.flip(0, 2))
    _close(ember.flipud(x), torch.flipud(tx))
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        x.roll((1, 2), 0)
    with pytest.raises(RuntimeError, match="expected rotation dims to be different"):
        x.rot90(1, (1, 1))
    with pytest.raises(RuntimeError, match="repeated dim"):
        ember.movedim(x, (0, 0), (1, 2))


@requires_torch
def test_stacks_atleast_meshgrid_match_torch():
    torch = pytest.importorskip("torch")
    a, ta = ember.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    b, tb = ember.tensor(5.0), torch.tensor(5.0)
    m, tm = ember.ones(2, 2), torch.ones(2, 2)
    for name in ("hstack", "vstack", "dstack", "column_stack", "row_stack"):
        args = [a, a] if name != "column_stack" else [a, m]
        targs = [ta, ta] if name != "column_stack" else [ta, tm]
        _close(getattr(ember, name)(args), getattr(torch, name)(targs))
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        _close(getattr(ember, name)(b), getattr(torch, name)(tb))
        _close(getattr(ember, name)(a, m), getattr(torch, name)(ta, tm))
        _close(getattr(ember, name)([a, b]), getattr(torch, name)([ta, tb]))
    c, tc = ember.arange(3.0), torch.arange(3.0)
    for indexing in ("ij", "xy"):
        _close(ember.meshgrid(a, c, b, indexing=indexing),
               torch.meshgrid(ta, tc, tb, indexing=indexing))
    with pytest.warns(UserWarning, match="indexing argument"):
        ember.meshgrid(a, c)


def test_unflatten_and_view_errors():
    x = ember.zeros(2, 6)
    assert x.unflatten(1, (3, -1)).shape == (2, 3, 2)
    with pytest.raises(RuntimeError, match="don't multiply up to the size of dim 1"):
        x.unflatten(1, (4, 2))
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.t().view(12)
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims"):
        x.repeat(2)
    assert x.t().reshape(12).shape == (12,)  # reshape copies where view can't


def test_size_arguments_by_keyword_as_in_torch():
    x = ember.arange(6.).reshape(2, 3)
    assert ember.reshape(x, shape=(3, 2)).shape == (3, 2)
    assert x.view(size=(6,)).shape == (6,)
    assert ember.permute(x, dims=(1, 0)).shape == (3, 2)
    assert ember.flip(x, dims=[0]).tolist() == [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
    assert x.expand(size=(2, 2, 3)).shape == (2, 2, 3)
    assert x.repeat(repeats=(2, 1)).shape == (4, 3)
    with pytest.raises(TypeError, match="multiple values for argument 'dims'"):
        x.permute(1, 0, dims=(1, 0))


def test_broadcast_shapes():
    assert ember.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert ember.broadcast_shapes(4, (2, 1)) == (2, 4)
    with pytest.raises(RuntimeError, match="Shape mismatch"):
        ember.broadcast_shapes((2,), (3,))


@requires_torch
def test_unfold_is_a_sliding_window_view_with_summed_gradients():
    torch = pytest.importorskip("torch")
    array = np.arange(14.0).reshape(2, 7)
    x, tx = ember.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)
    y, ty = x.unfold(1, 3, 2), tx.unfold(1, 3, 2)
    _close(y, ty)
    upstream = np.random.default_rng(3).standard_normal(tuple(ty.shape))
    y.backward(ember.tensor(upstream))
    ty.backward(torch.tensor(upstream))
    _close(x.grad, tx.grad)
    base = ember.arange(6.)
    windows = base.unfold(0, 2, 2)          # no overlap: writable, a view
    windows[1, 0] = 50.0
    assert base[2].item() == 50.0 and windows._version == base._version
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 6"):
        base.unfold(0, 7, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        base.unfold(0, 2, 0)
    z = ember.randn(5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t: t.unfold(0, 3, 1) ** 2, (z,))


@requires_torch
def test_in_place_view_ops_match_torch():
    torch = pytest.importorskip("torch")
    array = np.random.default_rng(5).standard_normal((3, 1))
    x, tx = ember.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.squeeze_()
    outs = []
    for base, lib in ((x, ember), (tx, torch)):
        y = base * 2
        assert y.squeeze_(1) is y and y._version == 1
        y.unsqueeze_(0).t_()
        y.transpose_(0, 1)
        (y * lib.arange(3.0, dtype=y.dtype)[:, None]).sum().backward()
        outs.append(y)
    _close(outs[0], outs[1])
    _close(x.grad, tx.grad)
    v = ember.zeros(2, 3)
    row = v[0]
    row.unsqueeze_(0)
    row.fill_(4.0)                       # still a view of v
    assert row.shape == (1, 3) and v[0].tolist() == [4.0, 4.0, 4.0]


def test_pad_crops_and_empty_results_follow_torch():
    x = ember.arange(8.).reshape(4, 2)
    with pytest.raises(RuntimeError, match="crops more than the size 2"):
        F.pad(x, (3, -3))                       # the crop alone exceeds the dim
    assert F.pad(x[None], (-1, -1), mode="circular").shape == (1, 4, 0)
    with pytest.raises(RuntimeError, match="too small for mode replicate"):
        F.pad(x[None], (-3, 1), mode="replicate")
    with pytest.raises(RuntimeError, match="wrapping around more than once"):
        F.pad(x[None], (2, -2), mode="circular")  # nothing left to wrap around


@requires_torch
def test_cat_keeps_legacy_empty_tensors_in_promotion_and_the_graph():
    import torch

    for lib in (ember, torch):
        assert lib.cat([lib.tensor([]), lib.tensor([1, 2])]).dtype is lib.float32
        assert lib.cat([lib.tensor([1, 2]), lib.tensor([], dtype=lib.float64)]).dtype is \
            lib.float64
    grads = []
    for lib in (ember, torch):
        empty = lib.tensor([], requires_grad=True)
        x = lib.ones(2, 3, requires_grad=True)
        y = lib.cat([x, empty, x * 2], 1)
        assert tuple(y.shape) == (2, 6)
        (y * lib.arange(6.0)).sum().backward()
        grads.append((empty.grad, x.grad))
    assert grads[0][0].shape == (0,) and grads[0][0].dtype is ember.float32
    _close(grads[0][1], grads[1][1])


def test_cat_and_stack_refuse_empty_lists_and_zero_dim_tensors_as_torch():
    with pytest.raises(ValueError, match=r"cat\(\): expected a non-empty list of Tensors"):
        ember.cat([])
    for op in ("stack", "hstack", "vstack", "dstack", "column_stack"):
        with pytest.raises(RuntimeError, match=f"{op} expects a non-empty TensorList"):
            getattr(ember, op)([])
    with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 1\)"):
        ember.cat([ember.tensor([]), ember.tensor(2.0)])
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension "
                                           "0. Expected size 3 but got size 2 for tensor "
                                           "number 2"):
        ember.cat([ember.ones(1, 3), ember.tensor([]), ember.ones(1, 2)])
