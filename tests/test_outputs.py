"""out=, size=, set_default_device and the legacy typed constructors."""
import inspect
import warnings

import numpy as np
import pytest

import ember


def test_out_writes_and_returns_out():
    z = ember.empty(3)
    r = ember.add(ember.ones(3), 2, out=z)
    assert r is z and z.tolist() == [3.0, 3.0, 3.0]
    c = ember.empty(2, 2)
    assert ember.matmul(ember.eye(2), ember.full((2, 2), 2.0), out=c) is c
    assert c.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert ember.linalg.matmul(ember.eye(2), ember.eye(2), out=c) is c
    assert ember.special.expit(ember.zeros(1), out=ember.empty(1)).item() == 0.5


def test_out_bumps_version_and_shares_memory():
    z = ember.zeros(2)
    view = z[:]
    before = z._version
    ember.mul(ember.ones(2), 3, out=z)
    assert z._version > before and view.tolist() == [3.0, 3.0]


def test_out_resizes_with_pytorch_warning():
    z = ember.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.exp(ember.zeros(2, 2), out=z)      # empty: resized silently
    assert z.shape == (2, 2)
    with pytest.warns(UserWarning, match="was resized"):
        ember.exp(ember.zeros(3), out=z)
    assert z.tolist() == [1.0, 1.0, 1.0]


def test_out_tuple_results():
    v, i = ember.empty(0), ember.empty(0, dtype=ember.long)
    r = ember.max(ember.tensor([[1.0, 3.0], [4.0, 2.0]]), 1, out=(v, i))
    assert r.values is v and r.indices is i and i.tolist() == [1, 0]
    with pytest.raises(TypeError, match="tuple of 2"):
        ember.sort(ember.ones(2), out=ember.empty(2))


def test_out_errors():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.exp(x, out=ember.empty(2))
    with ember.no_grad():
        ember.exp(x, out=ember.empty(2))          # allowed outside autograd
    with pytest.raises(RuntimeError, match="can't be cast"):
        ember.exp(ember.ones(2), out=ember.empty(2, dtype=ember.long))
    with pytest.raises(TypeError, match="must be Tensor"):
        ember.exp(ember.ones(2), out=[0.0, 0.0])
    # int results go into a float out (a safe cast), as in PyTorch
    z = ember.empty(2)
    ember.add(ember.tensor([1, 2]), 1, out=z)
    assert z.dtype == ember.float32 and z.tolist() == [2.0, 3.0]


def test_out_in_signatures_not_in_methods():
    assert "out" in inspect.signature(ember.exp).parameters
    assert "out" in inspect.signature(ember.arange).parameters
    with pytest.raises(TypeError):
        ember.ones(2).exp(out=ember.empty(2))        # methods have no out=, as in PyTorch
    # nn.functional functions exported into ember stay the very same object
    assert ember.conv2d is ember.nn.functional.conv2d


def test_factories_out():
    z = ember.empty(0)
    assert ember.arange(4, out=z) is z and z.tolist() == [0.0, 1.0, 2.0, 3.0]
    o = ember.empty(0, dtype=ember.long)
    ember.zeros(2, 3, out=o)
    assert o.shape == (2, 3) and o.dtype == ember.long
    assert ember.randperm(3, out=ember.empty(0, dtype=ember.long)).sort().values.tolist() \
        == [0, 1, 2]


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_keyword(name):
    f = getattr(ember, name)
    assert f(size=(2, 3)).shape == (2, 3)
    assert f(size=[4], dtype=ember.float64).dtype == ember.float64
    assert f(2, 3).shape == f((2, 3)).shape == (2, 3)
    with pytest.raises(TypeError, match="invalid combination"):
        f(2, size=(3,))


def test_size_keyword_generator():
    g = ember.Generator().manual_seed(3)
    a = ember.randn(size=(3,), generator=g)
    g.manual_seed(3)
    assert ember.equal(a, ember.randn(3, generator=g))


def test_like_generator():
    g = ember.Generator().manual_seed(1)
    a = ember.rand_like(ember.zeros(4), generator=g)
    g.manual_seed(1)
    assert ember.equal(a, ember.rand_like(ember.zeros(4), generator=g))
    g.manual_seed(1)
    b = ember.randint_like(ember.zeros(4), 10, generator=g)
    g.manual_seed(1)
    assert ember.equal(b, ember.randint_like(ember.zeros(4), 10, generator=g))


def test_default_device():
    assert ember.get_default_device() == ember.device("cpu")
    try:
        ember.set_default_device("cpu")
        assert ember.zeros(1).device == ember.device("cpu")
        assert ember.tensor([1.0]).device == ember.device("cpu")
    finally:
        ember.set_default_device(None)
    assert ember.get_default_device() == ember.device("cpu")
    with pytest.raises(RuntimeError):
        ember.set_default_device("tpu")


def test_asarray_copy_and_requires_grad():
    a = np.zeros(2, dtype=np.float32)
    shared, copied = ember.asarray(a), ember.asarray(a, copy=True)
    a[0] = 5
    assert shared.tolist() == [5.0, 0.0] and copied.tolist() == [0.0, 0.0]
    assert ember.asarray(a, copy=False).tolist() == [5.0, 0.0]
    with pytest.raises(ValueError, match="copy=False"):
        ember.asarray([1, 2], copy=False)
    t = ember.ones(2)
    g = ember.asarray(t, requires_grad=True)
    assert g.requires_grad and not t.requires_grad


def test_from_dlpack_device_and_copy():
    a = np.ones(2)
    assert ember.from_dlpack(a, device="cpu").device == ember.device("cpu")
    c = ember.from_dlpack(a, copy=True)
    a[0] = 3
    assert c.tolist() == [1.0, 1.0]


def test_legacy_constructors():
    assert ember.FloatTensor(2, 3).shape == (2, 3)
    assert ember.FloatTensor(2, 3).dtype == ember.float32
    assert ember.LongTensor([1, 2]).tolist() == [1, 2]
    assert ember.LongTensor([1, 2]).dtype == ember.int64
    assert ember.DoubleTensor([[1.5]]).dtype == ember.float64
    assert ember.BoolTensor([True]).dtype == ember.bool
    assert ember.ByteTensor(3).dtype == ember.uint8
    assert ember.FloatTensor().shape == (0,)
    assert isinstance(ember.zeros(2), ember.FloatTensor)
    assert not isinstance(ember.zeros(2), ember.LongTensor)
    assert isinstance(ember.tensor([1]), ember.LongTensor)
    t = ember.ones(2)
    assert ember.FloatTensor(t) is t
    with pytest.raises(TypeError, match="expected"):
        ember.LongTensor(t)
    with pytest.raises(TypeError, match="invalid combination"):
        ember.FloatTensor(2, "a")


def test_functional_inplace_forms():
    x = ember.tensor([0.0, 1.0])
    assert ember.exp_(x) is x and x.tolist()[0] == 1.0
    assert ember.zero_(x) is x and x.tolist() == [0.0, 0.0]
    with pytest.raises(TypeError, match="must be Tensor"):
        ember.exp_([1.0])


def test_inplace_comparisons_and_aliases():
    x = ember.tensor([1.0, -2.0, 3.0])
    y = x.clone()
    assert y.lt_(0) is y and y.tolist() == [0.0, 1.0, 0.0] and y.dtype == ember.float32
    assert x.clone().greater_equal_(1).tolist() == [1.0, 0.0, 1.0]
    assert x.divide(2).tolist() == [0.5, -1.0, 1.5]
    assert x.multiply(2).tolist() == x.subtract(-x).tolist()
    assert ember.sgn(x).tolist() == [1.0, -1.0, 1.0] and x.clone().sgn_().tolist()[1] == -1.0
    with pytest.raises(RuntimeError, match="bool tensor"):
        ember.positive(ember.tensor([True]))
    with pytest.raises(RuntimeError, match="Integer division"):
        ember.addcdiv(x, ember.tensor([1, 2, 3]), ember.tensor([1, 1, 1]))
    with pytest.raises(RuntimeError, match="last dimension must match"):
        ember.inner(ember.ones(2, 3), ember.ones(2, 4))
    with pytest.raises(RuntimeError, match="matrices"):
        ember.adjoint(ember.ones(3))


def test_constants():
    import math
    assert ember.pi == math.pi and ember.e == math.e and ember.inf == math.inf
    assert math.isnan(ember.nan) and ember.newaxis is None
