"""Every op of the op table under ember.compile: a replay (lowered, and op by op) gives the
outputs and gradients of eager, bit for bit, on new values of the same shapes; or the trace
runs eagerly."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.ops import OPS

from .ops.maker import Maker

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"),  # the samples' domains
              pytest.mark.filterwarnings("ignore::UserWarning")]  # deprecated aliases
TABLE = [name for name, info in sorted(OPS.items()) if info.samples is not None]


def _tensors(value):
    if isinstance(value, ember.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    return []


def _copy(value):
    if isinstance(value, ember.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, (tuple, list)):
        return type(value)(_copy(v) for v in value)
    return value


def _step(function, kwargs):
    def step(*args):
        out = function(*args, **kwargs)
        floats = [t for t in _tensors(out) if t.is_floating_point() and t.requires_grad]
        if floats:
            sum((t.sum() for t in floats), ember.zeros(())).backward()
        return out
    return step


def _same(a, b) -> bool:
    if (a is None) != (b is None):
        return False
    if a is None:
        return True
    a, b = a.detach().numpy(), b.detach().numpy()
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(
        a, b, equal_nan=a.dtype.kind in "fc")


@pytest.mark.parametrize("lower", [True, False], ids=["lowered", "op by op"])
@pytest.mark.parametrize("name", TABLE)
def test_op_replays_bit_for_bit(name, lower):
    info = OPS[name]
    first = info.samples(Maker("cpu", ember.float32, name + " first"))
    second = info.samples(Maker("cpu", ember.float32, name + " second"))
    for a, b in zip(first, second):
        step = _step(info.function, a.kwargs)
        traced, replayed = _copy(a.args), _copy(b.args)
        try:
            step(*_copy(a.args))
            want_args = _copy(b.args)
            want = step(*want_args)
        except Exception:
            continue
        compiled = ember.compile(step, options={"lower": lower})
        compiled(*traced)
        got = compiled(*replayed)
        if compiled.stats["replays"] == 0:
            continue  # the trace runs eagerly
        pairs = list(zip(_tensors(want), _tensors(got)))
        pairs += [(x.grad, y.grad) for x, y in zip(_tensors(want_args), _tensors(replayed))]
        assert all(_same(x, y) for x, y in pairs), (name, a.name, compiled.lowered())
