"""ember.save / ember.load against PyTorch: dtypes and shapes survive a round trip, and
ember's files open in PyTorch's safetensors loader as the same tensors."""
from __future__ import annotations

import io

import pytest

import ember
from tests.conftest import requires_torch

pytest.importorskip("safetensors")


def _round_trip(obj):
    buffer = io.BytesIO()
    ember.save(obj, buffer)
    buffer.seek(0)
    return ember.load(buffer)


def _bfloat16():
    pytest.importorskip("ml_dtypes")
    return ember.bfloat16


# (name, make tensor) — each must come back with its dtype, shape and values.
CASES = [
    ("bfloat16", lambda: ember.tensor([1.5, -2.25, 3.0], dtype=_bfloat16())),
    ("bfloat16_0d", lambda: ember.tensor(3.0, dtype=_bfloat16())),
    ("float32_0d", lambda: ember.tensor(3.0)),
    ("int64_0d", lambda: ember.tensor(7)),
    ("bool_0d", lambda: ember.tensor(True)),
    ("bool", lambda: ember.tensor([True, False])),
    ("float16", lambda: ember.tensor([0.5, 1.0], dtype=ember.float16)),
    ("empty", lambda: ember.zeros(0, 3)),
    ("non_contiguous", lambda: ember.arange(6.0).reshape(2, 3).t()),
]


@pytest.mark.parametrize("name,make", CASES, ids=[c[0] for c in CASES])
def test_round_trip_keeps_dtype_shape_values(name, make):
    t = make()
    back = _round_trip({"t": t})["t"]
    assert back.dtype is t.dtype
    assert back.shape == t.shape
    assert back.tolist() == t.tolist()


@requires_torch
@pytest.mark.parametrize("name,make", CASES, ids=[c[0] for c in CASES])
def test_torch_load_file_sees_same_tensor(name, make):
    from safetensors.torch import load as torch_load

    t = make()
    buffer = io.BytesIO()
    ember.save({"t": t}, buffer)
    theirs = torch_load(buffer.getvalue())["t"]
    assert str(theirs.dtype).split(".")[-1] == t.dtype.name
    assert tuple(theirs.shape) == tuple(t.shape)
    assert theirs.tolist() == t.tolist()


@requires_torch
def test_state_dict_with_counter_loads_in_torch_unchanged():
    import torch
    from safetensors.torch import load as torch_load

    model = ember.nn.BatchNorm1d(3)
    buffer = io.BytesIO()
    ember.save(model.state_dict(), buffer)
    theirs = torch_load(buffer.getvalue())
    reference = torch.nn.BatchNorm1d(3).state_dict()
    assert {k: tuple(v.shape) for k, v in theirs.items()} == \
        {k: tuple(v.shape) for k, v in reference.items()}


@requires_torch
def test_plain_torch_bfloat16_file_keeps_bfloat16():
    # (as PyTorch's load_file gives it; widened to float32 only without ml_dtypes)
    import torch
    from safetensors.torch import save as torch_save

    pytest.importorskip("ml_dtypes")
    data = torch_save({"h": torch.tensor([1.5], dtype=torch.bfloat16)})
    back = ember.load(io.BytesIO(data))["h"]
    assert back.dtype is ember.bfloat16 and back.tolist() == [1.5]


def test_old_files_with_scalar_as_shape_1_still_load():
    import json

    import numpy as np
    from safetensors.numpy import save

    structure = {"version": 1, "object": {"dict": [["x", {"tensor": "x", "scalar": True}]]}}
    data = save({"x": np.array([2.0], dtype=np.float32)},
                metadata={"format": "pt", "ember": json.dumps(structure)})
    back = ember.load(io.BytesIO(data))["x"]
    assert back.shape == () and back.item() == 2.0
