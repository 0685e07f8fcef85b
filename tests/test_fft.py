"""ember.fft: frequency grids and shifts, against PyTorch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="PyTorch is the oracle")


@pytest.mark.parametrize("n", [0, 1, 4, 5])
@pytest.mark.parametrize("d", [1.0, 0.25])
def test_frequencies_match_pytorch(n, d):
    for name in ("fftfreq", "rfftfreq"):
        ours = getattr(ember.fft, name)(n, d).numpy()
        theirs = getattr(torch.fft, name)(n, d).numpy()
        np.testing.assert_allclose(ours, theirs, equal_nan=True)
        assert str(ours.dtype) == str(theirs.dtype)


def test_frequency_keywords_and_errors():
    f = ember.fft.fftfreq(4, dtype=ember.float64, requires_grad=True)
    assert f.dtype == ember.float64 and f.requires_grad and f.is_leaf
    out = ember.empty(0)
    assert ember.fft.rfftfreq(4, out=out) is out and out.shape == (3,)
    with pytest.raises(TypeError, match="must be int"):
        ember.fft.fftfreq(2.5)
    with pytest.raises(RuntimeError, match="non-negative"):
        ember.fft.rfftfreq(-1)


@pytest.mark.parametrize("dim", [None, 0, (0, 1), -1])
def test_shifts_match_pytorch(dim):
    x = np.arange(30.0).reshape(5, 6)
    for name in ("fftshift", "ifftshift"):
        ours = getattr(ember.fft, name)(ember.tensor(x), dim=dim).numpy()
        theirs = getattr(torch.fft, name)(torch.tensor(x), dim=dim).numpy()
        np.testing.assert_array_equal(ours, theirs)
    t = ember.tensor(x)
    assert ember.equal(ember.fft.ifftshift(ember.fft.fftshift(t)), t)
