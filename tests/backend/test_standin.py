"""The strict CuPy stand-in (EMBER_TEST_STANDIN=1) behaves as CuPy does towards NumPy."""
import numpy as np
import pytest

from ember.backend import standin

cp = standin.cupy


def test_cuda_standin_refuses_implicit_conversion():
    a = cp.asarray(np.arange(3.0))
    for convert in (np.asarray, np.array, lambda x: np.concatenate([x, np.ones(1)])):
        with pytest.raises(TypeError):
            convert(a)
    # NumPy's functions dispatch to the device, as CuPy's __array_function__ does
    assert type(np.exp(a)) is cp.ndarray and type(np.concatenate([a, a])) is cp.ndarray
    assert np.shape(a) == (3,)
    np.testing.assert_array_equal(a.get(), [0.0, 1.0, 2.0])
    assert isinstance(a.get(), np.ndarray) and isinstance(cp.asnumpy(a), np.ndarray)


def test_cuda_standin_refuses_mixing_with_numpy():
    a = cp.ones(3)
    with pytest.raises(TypeError, match="NumPy array"):
        a + np.ones(3)
    with pytest.raises(TypeError):
        np.ones(3) * a
    with pytest.raises(TypeError, match="NumPy array"):
        cp.maximum(a, np.ones(3))
    assert (a + 1.5).get().tolist() == [2.5] * 3  # Python and NumPy scalars are fine
    assert (a * np.float32(2)).get().tolist() == [2.0] * 3


def test_cuda_standin_results_are_device_arrays_with_an_index():
    with cp.cuda.Device(1):
        a = cp.arange(4)
        total = cp.sum(a)
    assert a.device.id == 1 and type(total) is cp.ndarray and total.ndim == 0
    assert int(total) == 6 and cp.cuda.runtime.getDeviceCount() == standin.DEVICE_COUNT
    assert type(a[1:]) is cp.ndarray and a[1:].device.id == 1
    assert type(a.reshape(2, 2).T) is cp.ndarray
    with pytest.raises(RuntimeError, match="InvalidDevice"):
        cp.cuda.Device(standin.DEVICE_COUNT)


def test_cuda_standin_ufunc_methods_and_inplace():
    a = cp.zeros(3)
    cp.add.at(a, cp.asarray(np.array([0, 0, 2])), 1.0)
    a += 1
    assert a.get().tolist() == [3.0, 1.0, 2.0]
    a[cp.asarray(np.array([1]))] = 7.0
    assert a.get().tolist() == [3.0, 7.0, 2.0]


def test_cuda_standin_tensors_through_ember(monkeypatch):
    import ember
    from ember.backend import cuda

    if not cuda.STANDIN:
        pytest.skip("run with EMBER_TEST_STANDIN=1 (make test-standin)")
    x = ember.randn(3, 4, device="cuda:1", requires_grad=True)
    (x.exp() * 2).sum().backward()
    assert type(x._data) is cp.ndarray and x.grad.device == ember.device("cuda:1")
    with pytest.raises(TypeError):
        np.asarray(x._data)
    assert x.cpu().device.type == "cpu"


def test_cuda_standin_catches_an_op_that_leaks_numpy():
    import ember
    from ember.autograd.function import Function
    from ember.backend import cuda

    if not cuda.STANDIN:
        pytest.skip("run with EMBER_TEST_STANDIN=1 (make test-standin)")

    class HostRoundTrip(Function):  # the bug the stand-in exists to catch
        @staticmethod
        def forward(ctx, x):
            return ctx.xp.asarray(np.asarray(x) * 2)

    class HostConstant(Function):
        @staticmethod
        def forward(ctx, x):
            return x + np.arange(x.shape[-1])

    x = ember.randn(3, device="cuda")
    for leaky in (HostRoundTrip, HostConstant):
        with pytest.raises(TypeError):
            leaky.apply(x)
    assert HostRoundTrip.apply(ember.randn(3)).shape == (3,)  # fine on the CPU


def test_cuda_standin_hands_back_the_same_array_where_cupy_does():
    # ember tells a saved output from a constant by identity: a stand-in that wrapped the
    # same memory in a new object here cut double backward off (logcumsumexp's did)
    a, b = cp.ones(3), cp.ones(3)
    assert a.astype(a.dtype, copy=False) is a
    assert a.astype(np.float32) is not a
    assert cp.ascontiguousarray(a) is a and cp.ascontiguousarray(a[::2]) is not a
    assert cp.add(a, b, out=a) is a and np.add(a, b, out=a) is a
    assert np.add(a, b, out=(a,)) is a  # through __array_ufunc__, as NumPy code calls it
    c = a
    c += b
    assert c is a
    np.testing.assert_array_equal(a.get(), [5.0, 5.0, 5.0])
