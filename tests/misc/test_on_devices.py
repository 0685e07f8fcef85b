"""The misc features on every available device (CUDA included where there is one)."""
from __future__ import annotations

import numpy as np
import pytest

import ember


def test_memory_views_on_device(device):
    x = ember.arange(10.0, device=device)
    assert x.view(2, 5)[1, 2:].storage_offset() == 7
    view = x.as_strided((2, 2), (1, 2), 1)
    assert view.device == x.device and view.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    view[0, 0] = -1.0
    assert x[1].item() == -1.0
    s = ember.empty_strided((2, 3), (1, 2), device=device)
    assert s.device.type == device and s.stride() == (1, 2)
    assert ember.empty_permuted((2, 3), (1, 0), device=device).stride() == (1, 2)
    y = ember.arange(6.0, device=device)
    y.resize_(2, 2)
    assert y.tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_as_strided_gradient_on_device(device):
    x = ember.arange(6.0, device=device, requires_grad=True)
    (x * 1)[2:].as_strided((2, 2), (1, 1)).pow(2).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 4.0, 12.0, 8.0, 0.0]


def test_ops_on_device(device):
    a = ember.tensor([1.5, -2.0, 0.0], device=device)
    mantissa, exponent = ember.frexp(a)
    assert exponent.device == a.device and exponent.tolist() == [1, 2, 0]
    assert ember.isin(ember.tensor([1, 2, 3], device=device),
                      ember.tensor([2], device=device)).tolist() == [False, True, False]
    assert ember.zeros(2, 2, device=device).fill_diagonal_(1.0).tolist() == [[1, 0], [0, 1]]
    hist = ember.histogram(ember.tensor([0.0, 1.0, 1.0], device=device), bins=2)
    assert hist.hist.device == a.device and hist.hist.tolist() == [1.0, 2.0]
    assert ember.gradient(ember.tensor([1.0, 4.0, 9.0], device=device))[0].tolist() == \
        [3.0, 4.0, 5.0]
    rows, cols = ember.unravel_index(ember.tensor([4], device=device), (2, 3))
    assert (rows.item(), cols.item()) == (1, 1)


def test_transforms_masked_windows_on_device(device):
    x = ember.tensor([1.0, 2.0], device=device)
    assert ember.func.grad(lambda t: (t ** 2).sum())(x).tolist() == [2.0, 4.0]
    assert ember.func.vmap(ember.sum)(ember.ones(3, 2, device=device)).tolist() == [2.0] * 3
    keep = ember.tensor([True, False], device=device)
    assert ember.masked.sum(x, mask=keep).item() == 1.0
    window = ember.signal.windows.hann(3, device=device)
    assert window.device == x.device and window.tolist() == [0.0, 1.0, 0.0]


def test_binomial_on_device(device):
    count = ember.full((50,), 20.0, device=device)
    draw = ember.binomial(count, ember.full((50,), 0.25, device=device))
    assert draw.device == count.device
    values = np.asarray(draw.tolist())
    assert ((values >= 0) & (values <= 20)).all() and 2 < values.mean() < 8


@pytest.mark.parametrize("kind", ["stream", "event"])
def test_stream_objects_on_device(device, kind):
    if kind == "stream":
        s = ember.Stream(device)
        with s:
            ember.ones(2, device=device) * 2
        s.synchronize()
        assert s.query()
    elif device == "cuda":
        start = ember.Event(device, enable_timing=True)
        end = ember.Event(device, enable_timing=True)
        start.record()
        end.record()
        end.synchronize()
        assert end.query() and start.elapsed_time(end) >= 0.0
    else:
        with pytest.raises(RuntimeError, match="doesn't support events"):
            ember.Event(device).record()
