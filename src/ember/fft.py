"""``ember.fft``: the real-valued parts of ``torch.fft`` (frequency grids and shifts).

The transforms themselves produce complex tensors, which ember does not have.

>>> import ember
>>> ember.fft.fftfreq(4)
tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
>>> ember.fft.fftshift(ember.arange(5))
tensor([3, 4, 0, 1, 2])
"""
import operator as _operator

from . import creation as _creation
from . import dtypes as _dtypes
from .ops import NAMESPACES as _NAMESPACES

globals().update(_NAMESPACES["fft"])


def _check_n(n, what):
    try:
        n = _operator.index(n)
    except TypeError:
        raise TypeError(f"{what}(): argument 'n' must be int, not {type(n).__name__}") from None
    if n < 0:
        raise RuntimeError(f"{what}(): n must be non-negative, got {n}")
    return n


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    n = _check_n(n, "fft.fftfreq")
    k = _creation.arange(n, dtype=dtype, device=device)
    k = k.to(_dtypes.get_default_dtype()) if not k.dtype.is_floating_point else k
    freq = ((k + n // 2) % max(n, 1) - n // 2) / (d * n) if n else k
    return _finish(freq, out, requires_grad, "fft.fftfreq")


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """The sample frequencies of an ``n``-point real FFT: ``[0, 1, ..., n // 2] / (d * n)``."""
    n = _check_n(n, "fft.rfftfreq")
    k = _creation.arange(n // 2 + 1, dtype=dtype, device=device)
    k = k.to(_dtypes.get_default_dtype()) if not k.dtype.is_floating_point else k
    return _finish(k / (d * n), out, requires_grad, "fft.rfftfreq")   # n = 0: [nan]


def _finish(freq, out, requires_grad, what):
    from .outputs import write_out

    if requires_grad:
        freq = freq.detach().requires_grad_(True)
    return freq if out is None else write_out(what, out, freq)
