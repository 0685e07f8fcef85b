"""Devices: parsing, equality, repr; CUDA availability is cheap and never raises; ops with
tensors on two devices raise naming both (checked with tensors labelled as CUDA)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import ember
from ember.tensor import Tensor


def test_device_parsing_and_repr():
    assert repr(ember.device("cpu")) == "device(type='cpu')"
    assert repr(ember.device("cuda:1")) == "device(type='cuda', index=1)"
    assert repr(ember.device("cuda")) == "device(type='cuda')"
    assert str(ember.device("cuda", 0)) == "cuda:0"
    assert ember.device("cuda:0") == ember.device("cuda", 0) == "cuda:0"
    assert ember.device("cuda") != ember.device("cuda:0")
    assert ember.device(1) == ember.device("cuda:1")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        ember.device("tpu")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        ember.device("cuda:x")


def test_cuda_queries_never_raise():
    assert ember.cuda.is_available() in (True, False)
    assert ember.cuda.device_count() >= 0


def test_is_available_does_not_import_cupy_without_a_driver():
    code = ("import sys, ember; ember.cuda.is_available(); "
            "print('cupy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    if not ember.cuda.is_available():
        from ember.backend import cuda as backend_cuda

        if not backend_cuda._driver_present():
            assert out == "False"


@pytest.mark.skipif(ember.cuda.is_available(), reason="checks the no-GPU message")
def test_asking_for_cuda_without_gpu_says_why():
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        ember.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        ember.ones(2).cuda()


def _labelled_cuda(array):
    # A CPU array labelled as living on cuda:0: enough to reach the device check, which
    # runs before any array is touched.
    return Tensor._make(array, ember.device("cuda", 0))


def test_mixed_devices_raise_naming_both_devices_and_the_op():
    cpu = ember.ones(3)
    gpu = _labelled_cuda(np.ones(3, np.float32))
    with pytest.raises(RuntimeError, match=r"cuda:0 and cpu.*Add|cpu and cuda:0.*Add"):
        gpu + cpu
    with pytest.raises(RuntimeError, match="two devices"):
        ember.matmul(cpu, gpu)


@pytest.mark.parametrize("device", ["cpu"] + (["cuda"] if ember.cuda.is_available() else []))
def test_creation_on_device_and_moves(device):
    x = ember.ones(3, device=device)
    assert x.device.type == device
    y = x.to("cpu")
    assert y.device.type == "cpu" and y.tolist() == [1.0, 1.0, 1.0]
    if device == "cuda":
        assert repr(x) == "tensor([1., 1., 1.], device='cuda:0')"
        z = x + ember.tensor(2.0)  # a 0-d CPU tensor may join a CUDA op
        assert z.device == x.device
        w = ember.ones(3, requires_grad=True)
        w.cuda().sum().backward()
        assert w.grad.device.type == "cpu"
