"""Process-wide switches: threads, determinism, matmul precision, warnings, the default
tensor type, memory formats and layouts, autocast and anomaly state, Stream/Event and
ember.accelerator."""
from __future__ import annotations

import pickle
import warnings

import pytest

import ember
from ember import runtime

from ..conftest import requires_torch


@pytest.fixture
def restore_runtime():
    saved = dict(vars(runtime._state))
    yield
    for key in ("deterministic", "warn_only", "matmul_precision", "warn_always",
                "interop_threads"):
        setattr(runtime._state, key, saved.get(key, getattr(runtime._State, key)))


def test_exceptions_subclass_runtime_error():
    assert issubclass(ember.OutOfMemoryError, RuntimeError)
    assert issubclass(ember.AcceleratorError, RuntimeError)


def test_num_threads_limits_blas():
    pytest.importorskip("threadpoolctl", reason="threadpoolctl is not installed")
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        assert ember.get_num_threads() == 1
        ember.init_num_threads()
        assert ember.get_num_threads() == 1
    finally:
        ember.set_num_threads(before)


@pytest.mark.parametrize("bad, kind", [(0, "positive integer"), (-2, "positive integer"),
                                       (2.0, "expects an int")])
def test_num_threads_errors(bad, kind):
    with pytest.raises(RuntimeError, match=kind):
        ember.set_num_threads(bad)
    with pytest.raises(RuntimeError, match=kind):
        ember.set_num_interop_threads(bad)


def test_interop_threads_set_once(restore_runtime):
    runtime._state.interop_threads = None
    assert ember.get_num_interop_threads() == 1
    ember.set_num_interop_threads(3)
    assert ember.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        ember.set_num_interop_threads(2)


def test_deterministic_modes(restore_runtime):
    ember.use_deterministic_algorithms(True)
    assert ember.are_deterministic_algorithms_enabled()
    assert not ember.is_deterministic_algorithms_warn_only_enabled()
    assert ember.get_deterministic_debug_mode() == 2
    ember.set_deterministic_debug_mode("warn")
    assert ember.get_deterministic_debug_mode() == 1
    assert ember.is_deterministic_algorithms_warn_only_enabled()
    ember.set_deterministic_debug_mode(0)
    assert not ember.are_deterministic_algorithms_enabled()
    with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`"):
        ember.set_deterministic_debug_mode("bad")
    with pytest.raises(RuntimeError, match="expected 0, 1, or 2, but got 5"):
        ember.set_deterministic_debug_mode(5)
    with pytest.raises(TypeError, match="must be bool"):
        ember.use_deterministic_algorithms(1)


def test_matmul_precision(restore_runtime):
    assert ember.get_float32_matmul_precision() == "highest"
    ember.set_float32_matmul_precision("medium")
    assert ember.get_float32_matmul_precision() == "medium"
    with pytest.warns(UserWarning, match="has no effect"):
        ember.set_float32_matmul_precision("fast")
    assert ember.get_float32_matmul_precision() == "medium"


def test_flush_denormal_and_warn_always(restore_runtime):
    assert ember.set_flush_denormal(True) is False
    assert not ember.is_warn_always_enabled()
    ember.set_warn_always(True)
    assert ember.is_warn_always_enabled()


def test_set_default_tensor_type():
    try:
        with pytest.warns(UserWarning, match="deprecated"):
            ember.set_default_tensor_type(ember.DoubleTensor)
        assert ember.tensor([1.5]).dtype is ember.float64
        with pytest.warns(UserWarning):
            ember.set_default_tensor_type("torch.FloatTensor")
        assert ember.get_default_dtype() is ember.float32
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(TypeError, match="only floating-point types"):
                ember.set_default_tensor_type(ember.LongTensor)
            with pytest.raises(TypeError, match="invalid type"):
                ember.set_default_tensor_type("torch.Foo")
    finally:
        ember.set_default_dtype(ember.float32)


def test_memory_formats_and_layout():
    assert repr(ember.channels_last) == "ember.channels_last"
    assert ember.legacy_contiguous_format is ember.contiguous_format
    assert isinstance(ember.preserve_format, ember.memory_format)
    assert ember.zeros(2).layout is ember.strided
    assert isinstance(ember.strided, ember.layout)
    assert pickle.loads(pickle.dumps(ember.channels_last_3d)) is ember.channels_last_3d
    assert ember.zeros(1, 2, 2, 2).to(memory_format=ember.channels_last).shape == (1, 2, 2, 2)


def test_bfloat16_tensor_type():
    t = ember.BFloat16Tensor([1.5])
    assert t.dtype is ember.bfloat16
    assert isinstance(t, ember.BFloat16Tensor)


def test_grad_scaler_alias():
    assert ember.GradScaler is ember.amp.GradScaler


def test_autocast_state_functions():
    assert not ember.is_autocast_enabled("cpu")
    ember.set_autocast_enabled("cpu", True)
    try:
        assert ember.is_autocast_enabled("cpu")
        assert (ember.randn(2, 2) @ ember.randn(2, 2)).dtype is ember.bfloat16
        ember.set_autocast_dtype("cpu", ember.float16)
        assert ember.get_autocast_dtype("cpu") is ember.float16
        assert (ember.randn(2, 2) @ ember.randn(2, 2)).dtype is ember.float16
    finally:
        ember.set_autocast_enabled("cpu", False)
        ember.set_autocast_dtype("cpu", ember.bfloat16)
    assert (ember.randn(2, 2) @ ember.randn(2, 2)).dtype is ember.float32
    with pytest.raises(TypeError, match="dtype"):
        ember.set_autocast_dtype("cpu", "float16")


def test_autocast_region_uses_set_dtype_and_restores():
    ember.set_autocast_dtype("cpu", ember.float16)
    try:
        with ember.autocast("cpu"):
            assert ember.get_autocast_dtype("cpu") is ember.float16
        with ember.autocast("cpu", dtype=ember.bfloat16):
            assert ember.get_autocast_dtype("cpu") is ember.bfloat16
        assert ember.get_autocast_dtype("cpu") is ember.float16
    finally:
        ember.set_autocast_dtype("cpu", ember.bfloat16)


def test_autocast_cache_and_nesting():
    assert ember.is_autocast_cache_enabled()
    ember.set_autocast_cache_enabled(False)
    assert not ember.is_autocast_cache_enabled()
    ember.set_autocast_cache_enabled(True)
    depth = ember.autocast_increment_nesting()
    assert ember.autocast_decrement_nesting() == depth - 1
    w = ember.randn(2, 2, requires_grad=True)
    with ember.autocast("cpu"):
        w @ w
        from ember.amp import autocast_mode

        assert autocast_mode._LOCAL.cache
        ember.clear_autocast_cache()
        assert not autocast_mode._LOCAL.cache


def test_deprecated_autocast_names_warn():
    with pytest.warns(DeprecationWarning, match="get_autocast_dtype\\('cpu'\\)"):
        assert ember.get_autocast_cpu_dtype() is ember.bfloat16
    with pytest.warns(DeprecationWarning):
        assert ember.get_autocast_gpu_dtype() is ember.float16
    with pytest.warns(DeprecationWarning):
        assert not ember.is_autocast_cpu_enabled()


def test_anomaly_switches():
    assert not ember.is_anomaly_enabled()
    ember.set_anomaly_enabled(True, check_nan=False)
    try:
        assert ember.is_anomaly_enabled() and not ember.is_anomaly_check_nan_enabled()
        x = ember.tensor([0.0], requires_grad=True)
        ember.sqrt(x).sum().backward()  # inf gradient, but NaN checks are off
        ember.set_anomaly_enabled(True)
        x.grad = None
        with pytest.raises(RuntimeError, match="returned nan or inf"):
            ember.sqrt(x).sum().backward()
    finally:
        ember.set_anomaly_enabled(False)
    assert ember.is_anomaly_check_nan_enabled()


def test_cpu_stream_and_event():
    s = ember.Stream("cpu")
    assert s.query() and s.device_index == -1 and s.stream_id == 0
    assert repr(s) == "ember.Stream device_type=cpu, device_index=-1, stream_id=0"
    s.synchronize()
    s.wait_stream(ember.Stream("cpu"))
    assert s == ember.Stream("cpu")
    with s:
        pass
    e = ember.Event("cpu")
    assert e.query()
    with pytest.raises(RuntimeError, match="cpu backend doesn't support events"):
        e.record()
    with pytest.raises(RuntimeError, match="cpu backend doesn't support events"):
        s.record_event()
    with pytest.raises(ValueError, match="enable_timing=True"):
        e.elapsed_time(ember.Event("cpu", enable_timing=True))


@pytest.mark.cuda
@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a GPU")
def test_cuda_stream_event_timing():
    s = ember.Stream("cuda")
    start, end = ember.Event("cuda", enable_timing=True), ember.Event("cuda", enable_timing=True)
    with s:
        start.record(s)
        x = ember.randn(256, 256, device="cuda")
        (x @ x).sum()
        end.record(s)
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0
    other = ember.Stream("cuda")
    other.wait_stream(s)
    other.wait_event(end)
    assert ember.accelerator.current_stream().device.type == "cuda"
    ember.accelerator.set_stream(s)
    ember.accelerator.set_stream(ember.accelerator.current_stream())
    ember.accelerator.synchronize()


def test_accelerator_without_gpu():
    if ember.cuda.is_available():
        assert ember.accelerator.current_accelerator() == ember.device("cuda")
        assert ember.accelerator.device_count() >= 1
        return
    assert ember.accelerator.current_accelerator() is None
    assert not ember.accelerator.is_available() and ember.accelerator.device_count() == 0
    with pytest.raises(RuntimeError, match="none is available"):
        ember.accelerator.current_device_index()
    with pytest.raises(RuntimeError, match="none is available"):
        ember.accelerator.synchronize()
    ember.accelerator.empty_cache()  # nothing to free: no error
    with ember.accelerator.device_index(None):
        pass


@requires_torch
def test_names_match_torch():
    import torch

    for name in ("set_num_interop_threads", "use_deterministic_algorithms",
                 "set_deterministic_debug_mode", "set_float32_matmul_precision",
                 "set_flush_denormal", "is_inference", "get_device", "frombuffer",
                 "empty_strided", "empty_permuted", "to_dlpack", "vmap", "binomial"):
        assert hasattr(torch, name) and hasattr(ember, name)
    assert set(ember.accelerator.__all__) <= set(dir(torch.accelerator))
