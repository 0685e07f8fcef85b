"""empty_strided/empty_permuted/frombuffer/to_dlpack, Tensor.new, storage_offset,
is_inference, grad_dtype and post-accumulate-grad hooks, resize_, as_strided views."""
from __future__ import annotations

import array
import warnings

import numpy as np
import pytest

import ember

from ..conftest import requires_torch


def test_empty_strided_and_permuted():
    x = ember.empty_strided((2, 3), (1, 2), dtype=ember.float64)
    assert x.shape == (2, 3) and x.stride() == (1, 2) and x.dtype is ember.float64
    assert ember.empty_strided((0, 3), (3, 1)).numel() == 0
    assert ember.empty_strided((2,), (1,), requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="must match dimensionality of strides"):
        ember.empty_strided((2, 3), (1,))
    with pytest.raises(RuntimeError, match="overflowed"):
        ember.empty_strided((2, 3), (1, -2))
    y = ember.empty_permuted((2, 3, 4), (0, 2, 1))
    assert y.shape == (2, 3, 4) and y.stride() == (12, 1, 3)
    with pytest.raises(RuntimeError, match="does not match the length of the physical"):
        ember.empty_permuted((2, 3, 4), (0, 2))
    with pytest.raises(RuntimeError, match="Duplicate dim not allowed"):
        ember.empty_permuted((2, 3, 4), (0, 2, 2))
    z = ember.zeros(2, dtype=ember.int32).new_empty_strided((2, 2), (1, 2))
    assert z.dtype is ember.int32 and z.stride() == (1, 2)


def test_frombuffer_shares_memory():
    raw = bytearray(b"\x01\x00\x02\x00\x03\x00")
    t = ember.frombuffer(raw, dtype=ember.int16)
    assert t.tolist() == [1, 2, 3]
    t[0] = 9
    assert raw[0] == 9
    assert ember.frombuffer(raw, dtype=ember.int16, count=2, offset=2).tolist() == [2, 3]
    assert ember.frombuffer(array.array("f", [1.5, 2.5]), dtype=ember.float32).tolist() == \
        [1.5, 2.5]
    with pytest.raises(ValueError, match="multiple of element size"):
        ember.frombuffer(raw, dtype=ember.int32)
    with pytest.raises(ValueError, match="must not be greater than actual buffer length"):
        ember.frombuffer(raw, dtype=ember.int16, count=5)
    with pytest.raises(ValueError, match="offset \\(7 bytes\\) must be non-negative"):
        ember.frombuffer(raw, dtype=ember.int16, offset=7)
    with pytest.raises(ValueError, match="must not be 0"):
        ember.frombuffer(bytearray(), dtype=ember.int16)


def test_to_dlpack_round_trip():
    x = ember.arange(4.0)
    back = ember.from_dlpack(np.from_dlpack(x))
    assert back.tolist() == [0.0, 1.0, 2.0, 3.0]
    capsule = ember.to_dlpack(x)
    assert type(capsule).__name__ == "PyCapsule"
    shared = ember.from_dlpack(capsule)  # a bare capsule works too, once
    assert shared.data_ptr() == x.data_ptr()
    with pytest.raises(RuntimeError, match="already consumed"):
        ember.from_dlpack(capsule)
    with pytest.raises(RuntimeError, match="require gradient"):
        ember.to_dlpack(ember.ones(2, requires_grad=True))


@requires_torch
def test_to_dlpack_into_torch():
    import torch

    x = ember.arange(3.0)
    assert torch.from_dlpack(ember.to_dlpack(x)).tolist() == [0.0, 1.0, 2.0]
    back = ember.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(3)))
    assert back.tolist() == [0, 1, 2] and back.dtype is ember.int64


def test_tensor_new():
    base = ember.zeros(1, dtype=ember.float64)
    assert base.new([1, 2]).dtype is ember.float64
    assert base.new(2, 3).shape == (2, 3)
    assert base.new(ember.Size([2, 3])).shape == (2, 3)
    assert base.new().shape == (0,)
    assert base.new((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, as in PyTorch
    same = ember.ones(2, dtype=ember.float64)
    assert base.new(same) is same
    with pytest.raises(TypeError, match="expected ember.float64"):
        base.new(ember.ones(2))


def test_storage_offset_name_layout_get_device():
    x = ember.arange(10.0)
    assert x.storage_offset() == 0
    assert x[3:].storage_offset() == 3
    assert x.view(2, 5)[1, 2:].storage_offset() == 7
    assert x.name is None
    assert ember.get_device(x) == -1 == x.get_device()


def test_is_inference():
    with ember.inference_mode():
        x = ember.ones(2)
        view = x[:1]
    with ember.no_grad():
        y = ember.ones(2)
    assert x.is_inference() and view.is_inference() and ember.is_inference(x)
    assert not y.is_inference() and not ember.ones(2).is_inference()
    assert not (x * 2).is_inference()  # made outside the mode


def test_post_accumulate_grad_hook():
    w = ember.ones(2, requires_grad=True)
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
    (w * 2).sum().backward()
    assert len(seen) == 1 and seen[0].tolist() == [2.0, 2.0]
    (w * 3).sum().backward()
    assert seen[1].tolist() == [5.0, 5.0]  # after accumulation
    ember.autograd.grad((w * 2).sum(), w)  # grad() does not accumulate: no call
    assert len(seen) == 2
    handle.remove()
    (w * 2).sum().backward()
    assert len(seen) == 2
    with pytest.raises(RuntimeError, match="non-leaf"):
        (w * 2).register_post_accumulate_grad_hook(print)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ember.ones(2).register_post_accumulate_grad_hook(print)


def test_post_accumulate_hook_steps_optimizer_in_backward():
    model = ember.nn.Linear(3, 1)
    optimizers = {p: ember.optim.SGD([p], lr=0.1) for p in model.parameters()}

    def step(p):
        optimizers[p].step()
        optimizers[p].zero_grad()

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step)
    before = model.weight.detach().clone()
    model(ember.ones(4, 3)).sum().backward()
    assert model.weight.grad is None
    assert not ember.equal(before, model.weight.detach())


def test_post_accumulate_hook_skipped_when_backward_fails():
    w = ember.ones(2, requires_grad=True)
    calls = []
    w.register_post_accumulate_grad_hook(calls.append)

    def boom(grad):
        raise ValueError("stop")

    w.register_hook(boom)
    with pytest.raises(ValueError, match="stop"):
        (w * 2).sum().backward()
    assert calls == []


def test_grad_dtype():
    x = ember.ones(2, requires_grad=True)
    assert x.grad_dtype is ember.float32
    x.grad_dtype = ember.float64
    (x * 3).sum().backward()
    assert x.grad.dtype is ember.float64 and x.grad.tolist() == [3.0, 3.0]
    (x * 3).sum().backward()
    assert x.grad.dtype is ember.float64 and x.grad.tolist() == [6.0, 6.0]
    x.grad_dtype = None
    assert x.grad_dtype is None
    with pytest.raises(RuntimeError, match="only be accessed on leaf"):
        (x * 2).grad_dtype
    with pytest.raises(RuntimeError, match="only be set on leaf"):
        (x * 2).grad_dtype = ember.float16
    with pytest.raises(TypeError, match="ember.dtype or None"):
        x.grad_dtype = "float64"


def test_resize_family():
    x = ember.arange(6.0)
    x.resize_(2, 2)
    assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    x.resize_(2, 3)  # the memory block still holds the old elements
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    version = x._version
    x.resize_(4, 4)
    assert x.shape == (4, 4) and x[0].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert x._version > version
    y = ember.zeros(3)
    assert y.resize_as_(ember.zeros(1, 3)).shape == (1, 3)
    assert ember.resize_as_(ember.zeros(2), ember.zeros(2, 1)).shape == (2, 1)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        ember.ones(2, requires_grad=True).resize_(3)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        assert ember.arange(6.0).resize(2, 3).shape == (2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="keeps the number of elements"):
            ember.arange(6.0).resize(4)
        assert ember.arange(4.0).resize_as(ember.zeros(2, 2)).shape == (2, 2)


def test_as_strided_views_share_memory():
    x = ember.arange(6.0)
    view = x.as_strided((2, 2), (1, 2))
    assert view.tolist() == [[0.0, 2.0], [1.0, 3.0]]
    view[0, 0] = 10.0
    assert x[0].item() == 10.0
    assert x[2:].as_strided((2,), (1,)).tolist() == [2.0, 3.0]  # default: its own offset
    assert x[2:].as_strided((2,), (1,), 0).tolist() == [10.0, 1.0]  # the block's start
    y = ember.arange(4.0)
    y.as_strided_((2,), (2,))
    assert y.tolist() == [0.0, 2.0]
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        ember.arange(4.0).as_strided((3,), (2,))
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        ember.arange(4.0).as_strided((2, 2), (1,))
    with pytest.raises(RuntimeError, match="Negative strides"):
        ember.arange(4.0).as_strided((2,), (-1,))


def test_as_strided_gradient_of_an_expanded_input():
    # an input that repeats memory: each slot's gradient is shared by its copies
    base = ember.tensor([1.0, 2.0], requires_grad=True)
    wide = base.expand(3, 2)
    out = wide.as_strided((2,), (1,))
    out.sum().backward()
    assert base.grad.tolist() == [1.0, 1.0]
