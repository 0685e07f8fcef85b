"""Autocast against PyTorch's CPU autocast in bfloat16: every op in the table, on its
float32 samples, gives outputs of the same dtypes as torch.autocast('cpu', bfloat16)."""
from __future__ import annotations

import pytest

import ember
from ember.ops import OPS

from ..ops.maker import Maker
from ..ops.test_op_table import _flatten, _to_torch, _torch_function

torch = pytest.importorskip("torch")
pytest.importorskip("ml_dtypes", reason="bfloat16 needs the ml_dtypes extra")

NAMES = sorted(n for n, info in OPS.items() if info.samples is not None and info.torch)


def _dtypes(output):
    return [str(o.dtype).split(".")[-1] for o in _flatten(output)
            if isinstance(o, (ember.Tensor, torch.Tensor))]


def _run_both(name, dtype):
    info = OPS[name]
    samples = info.samples(Maker("cpu", ember.float32, name))
    results = []
    for sample in samples:
        args, kwargs = sample.args, sample.kwargs
        if dtype is not ember.float32:
            args, kwargs = _cast((args, kwargs), dtype)
        t_args, t_kwargs = _to_torch_cast(args, dtype), _to_torch_cast(kwargs, dtype)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            try:
                theirs = _dtypes(_torch_function(info, torch)(*t_args, **t_kwargs))
            except Exception:  # PyTorch has no kernel for this input: nothing to compare
                continue
        with ember.autocast("cpu", dtype=ember.bfloat16):
            try:
                ours = _dtypes(info.function(*args, **kwargs))
            except RuntimeError as error:
                if "Low precision dtypes not supported" in str(error):
                    continue  # ember refuses bfloat16 here with a clear error
                raise
        results.append((sample.name, ours, theirs))
    return results


def _cast(value, dtype):
    if isinstance(value, ember.Tensor):
        return value.detach().to(dtype) if value.dtype is ember.float32 else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value


def _to_torch_cast(value, dtype):
    """ember -> torch, where bfloat16 tensors travel as float32 and are cast back."""
    if isinstance(value, ember.Tensor) and value.dtype is ember.bfloat16:
        return _to_torch(value.float(), torch).to(torch.bfloat16)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_torch_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _to_torch_cast(v, dtype) for k, v in value.items()}
    return _to_torch(value, torch)


# PyTorch's einsum multiplies and sums a pair whose labels broadcast from size 1 instead of
# calling bmm; ember does not follow its pairing plan. PyTorch's LSTM with projections keeps
# the cell state in float32 and the rest in bfloat16; ember's fused layer uses one dtype.
KNOWN = {("einsum", "size-1 broadcast"), ("lstm", "proj_size")}


@pytest.mark.parametrize("name", NAMES)
def test_float32_inputs_get_torch_dtypes(name):
    for sample_name, ours, theirs in _run_both(name, ember.float32):
        if (name, sample_name) not in KNOWN:
            assert ours == theirs, f"{name} [{sample_name}]: {ours} vs PyTorch {theirs}"


@pytest.mark.parametrize("name", NAMES)
def test_bfloat16_inputs_get_torch_dtypes(name):
    """bfloat16 inputs: float32-list ops widen them, the others keep bfloat16."""
    for sample_name, ours, theirs in _run_both(name, ember.bfloat16):
        if (name, sample_name) not in KNOWN:
            assert ours == theirs, f"{name} [{sample_name}]: {ours} vs PyTorch {theirs}"
