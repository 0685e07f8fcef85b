"""Tensor methods that make new tensors (``x.new_zeros(2, 3)``): ember.creation's
functions, bound through the registry like every other method."""
from __future__ import annotations

import numpy as np

from .. import creation, dtypes
from .registry import NAMESPACES, register_op

for _factory in (creation.new_tensor, creation.new_zeros, creation.new_ones,
                 creation.new_empty, creation.new_full, creation.pin_memory):
    register_op(_factory.__name__, methods=(_factory.__name__,), internal=True)(_factory)


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
          requires_grad=False, out=None):
    """Deprecated (as in PyTorch): values from ``start`` to ``end`` *inclusive* by
    ``step``, in the default float dtype unless ``dtype`` is given. Prefer ``arange``,
    whose end is exclusive.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    import math
    import warnings

    warnings.warn("ember.range is deprecated and will be removed in a future release "
                  "because its behavior is inconsistent with Python's range builtin. "
                  "Instead, use ember.arange, which produces values in [start, end).",
                  UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("range(): step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    count = math.floor((end - start) / step) + 1
    d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    # start + i * step in double, then cast (PyTorch's accumulate type)
    array = (start + np.arange(count, dtype=np.float64) * step).astype(d.numpy)
    result = creation.tensor(array, dtype=d, device=device, requires_grad=requires_grad)
    if out is not None:
        out.resize_(result.shape)
        out.copy_(result)
        return out
    return result


NAMESPACES["ember"]["range"] = range
