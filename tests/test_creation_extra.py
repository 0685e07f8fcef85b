"""Tensor.new_* factories, pin_memory/share_memory_, and ember.finfo/iinfo."""
import numpy as np
import pytest

import ember
from tests.conftest import requires_torch


# ----------------------------------------------------------------------------- new_*
@pytest.mark.parametrize("dtype", [ember.float64, ember.int32, ember.bool])
def test_new_factories_inherit_dtype_and_device(device, dtype):
    source = ember.zeros(5, dtype=dtype, device=device)
    for made, value in ((source.new_zeros(2, 3), 0), (source.new_ones((2, 3)), 1),
                        (source.new_full((2, 3), 1), 1), (source.new_empty([2, 3]), None)):
        assert made.shape == (2, 3)
        assert made.dtype is dtype and made.device == source.device
        assert not made.requires_grad and made.is_leaf
        if value is not None:
            assert np.all(made.cpu().numpy() == value)


def test_new_factories_overrides(device):
    source = ember.zeros(2, dtype=ember.float16, device=device)
    z = source.new_zeros(4, dtype=ember.float64, requires_grad=True)
    assert z.dtype is ember.float64 and z.requires_grad and z.is_leaf
    assert source.new_ones(3, device="cpu").device == ember.device("cpu")
    # new_full takes the source's dtype, not the value's
    full = ember.zeros(1, dtype=ember.int64, device=device).new_full((2,), 7)
    assert full.dtype is ember.int64 and full.tolist() == [7, 7]
    assert source.new_empty(()).shape == ()
    assert source.new_zeros(0, 3).shape == (0, 3)


def test_new_factories_do_not_share_memory_or_graph():
    x = ember.ones(3, requires_grad=True)
    y = (x * 2).new_zeros(3)
    assert y.grad_fn is None and not y.requires_grad
    y.add_(1)
    assert x.tolist() == [1.0, 1.0, 1.0]


def test_new_factories_errors():
    source = ember.zeros(2)
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        source.new_zeros(2, -1)
    with pytest.raises(TypeError, match="must be tuple of ints"):
        source.new_ones("ab")
    with pytest.raises(TypeError, match="new_full\\(\\): argument 'size' must be a tuple"):
        source.new_full(None, 1.0)
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        ember.zeros(2, dtype=ember.int64).new_zeros(2, requires_grad=True)


# ----------------------------------------------------------------------------- memory
def test_pin_memory_is_a_copy_on_cpu():
    x = ember.arange(4.0)
    pinned = x.pin_memory()
    assert pinned is not x and ember.equal(pinned, x)
    assert pinned.dtype is x.dtype and pinned.device == x.device
    pinned.add_(1)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert not x.is_pinned() and not pinned.is_pinned()


def test_pin_memory_refuses_cuda_tensors():
    if not ember.cuda.is_available():
        pytest.skip("needs a GPU")
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        ember.zeros(2, device="cuda").pin_memory()


def test_share_memory_returns_self():
    x = ember.ones(3)
    assert x.share_memory_() is x
    assert not x.is_shared()


# ----------------------------------------------------------------------------- finfo/iinfo
FLOATS = ["float16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@requires_torch
@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_torch(name):
    import torch

    ours, theirs = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, field) == getattr(theirs, field), field
        assert type(getattr(ours, field)) is type(getattr(theirs, field)), field
    assert ours.dtype == theirs.dtype
    assert repr(ours) == repr(theirs)


@requires_torch
@pytest.mark.parametrize("name", INTS)
def test_iinfo_matches_torch(name):
    import torch

    ours, theirs = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
    for field in ("bits", "max", "min"):
        assert getattr(ours, field) == getattr(theirs, field), field
        assert type(getattr(ours, field)) is int
    assert ours.dtype == theirs.dtype
    assert repr(ours) == repr(theirs)


def test_finfo_values_without_torch():
    info = ember.finfo(ember.float32)
    assert info.bits == 32 and info.eps == 2.0 ** -23 and info.tiny == 2.0 ** -126
    assert info.max == float(np.finfo(np.float32).max) and info.min == -info.max
    assert ember.finfo().dtype == ember.get_default_dtype().name
    assert ember.finfo(float).dtype == "float64"  # Python float is a double, as in PyTorch
    assert ember.iinfo(ember.uint8).max == 255 and ember.iinfo(ember.int64).min == -2 ** 63
    assert ember.iinfo(int).dtype == "int64"
    assert ember.finfo(ember.float32) == ember.finfo(ember.float)


@pytest.mark.parametrize("call,match", [
    (lambda: ember.finfo(ember.int32),
     "ember.finfo\\(\\) requires a floating point input type. Use ember.iinfo"),
    (lambda: ember.finfo(ember.bool), "requires a floating point input type"),
    (lambda: ember.iinfo(ember.float32),
     "ember.iinfo\\(\\) requires an integer input type. Use ember.finfo"),
    (lambda: ember.iinfo(ember.bool), "ember.bool is not supported by ember.iinfo"),
    (lambda: ember.finfo("float32"), "argument 'type' \\(position 1\\) must be ember.dtype"),
    (lambda: ember.iinfo(np.int32), "must be ember.dtype"),
])
def test_info_type_errors(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@requires_torch
@pytest.mark.parametrize("start,end,steps", [(-3, 1, 7), (-3, 1, 1001), (-7.3, 12.9, 999),
                                             (1e-3, 5, 64), (0, 1, 11)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_linspace_values_bit_for_bit_as_torch(start, end, steps, dtype):
    import torch

    ours = ember.linspace(start, end, steps, dtype=getattr(ember, dtype)).numpy()
    theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
    np.testing.assert_array_equal(ours, theirs)
