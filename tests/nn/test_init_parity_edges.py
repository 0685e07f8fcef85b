"""Edges where nn.init and the factories must behave as PyTorch does: trunc_normal_ with
an empty or reversed interval, the initializers on integer and bool tensors (PyTorch's
NotImplementedError, its message first), and the size-taking factories called without a
size. Each case runs on ember and on torch; the outcomes (values and dtype, or the
exception type and the message up to its first colon) must agree."""
from __future__ import annotations

import warnings

import pytest

import ember
from tests.conftest import outcome, requires_torch

try:
    import torch
except ImportError:  # the cases skip without PyTorch
    torch = None

pytestmark = requires_torch


def _then_rand(fill):
    """The fill's outcome, then three draws: the generator must be left where PyTorch
    leaves it."""
    def call(T):
        T.manual_seed(0)
        try:
            filled = fill(T).tolist()
        except Exception as error:  # the exception is part of the outcome compared
            filled = (type(error).__name__, str(error).split(":")[0])
        return T.tensor([float(v) for v in T.rand(3).tolist()]), filled
    return call


INIT_CASES = [
    # ---- trunc_normal_: an empty or reversed interval
    ("trunc_normal_ a > b", lambda T: T.nn.init.trunc_normal_(T.empty(3), a=2, b=1)),
    ("trunc_normal_ a > b, floats", lambda T: T.nn.init.trunc_normal_(T.empty(3), a=2.5,
                                                                        b=1.0)),
    ("trunc_normal_ a > b, far mean", lambda T: T.nn.init.trunc_normal_(T.empty(4), a=5, b=1,
                                                                          mean=10)),
    ("trunc_normal_ a == b", lambda T: T.nn.init.trunc_normal_(T.empty(4), a=1, b=1)),
    ("trunc_normal_ a == b, float64", lambda T: T.nn.init.trunc_normal_(
        T.empty(4, dtype=T.float64), a=-1.5, b=-1.5, mean=0.3, std=2)),
    ("trunc_normal_ empty", lambda T: T.nn.init.trunc_normal_(T.empty(0))),
    # ---- integer and bool tensors
    ("uniform_ int64", lambda T: T.nn.init.uniform_(T.empty(3, dtype=T.int64))),
    ("uniform_ empty int64", lambda T: T.nn.init.uniform_(T.empty(0, dtype=T.int64))),
    ("uniform_ int64, a > b", lambda T: T.nn.init.uniform_(T.empty(3, dtype=T.int64), 2, 1)),
    ("uniform_ bool", lambda T: T.nn.init.uniform_(T.empty(3, dtype=T.bool))),
    ("normal_ int64", lambda T: T.nn.init.normal_(T.empty(3, dtype=T.int64))),
    ("normal_ int32", lambda T: T.nn.init.normal_(T.empty(3, dtype=T.int32))),
    ("normal_ empty int64", lambda T: T.nn.init.normal_(T.empty(0, dtype=T.int64))),
    ("normal_ int64, std < 0", lambda T: T.nn.init.normal_(T.empty(3, dtype=T.int64), 0, -1)),
    ("normal_ float, std < 0", lambda T: T.nn.init.normal_(T.empty(3), 0, -1)),
    ("xavier_uniform_ int64", lambda T: T.nn.init.xavier_uniform_(
        T.empty(3, 4, dtype=T.int64))),
    ("xavier_normal_ int64", lambda T: T.nn.init.xavier_normal_(T.empty(3, 4, dtype=T.int64))),
    ("kaiming_uniform_ int64", lambda T: T.nn.init.kaiming_uniform_(
        T.empty(3, 4, dtype=T.int64))),
    ("kaiming_normal_ uint8", lambda T: T.nn.init.kaiming_normal_(
        T.empty(3, 4, dtype=T.uint8))),
    ("orthogonal_ int64", lambda T: T.nn.init.orthogonal_(T.empty(3, 4, dtype=T.int64))),
    ("orthogonal_ empty int64", lambda T: T.nn.init.orthogonal_(T.empty(0, 4, dtype=T.int64))),
    ("sparse_ int64", lambda T: T.nn.init.sparse_(T.empty(3, 4, dtype=T.int64), 0.5)),
    ("sparse_ empty int64", lambda T: T.nn.init.sparse_(T.empty(0, 3, dtype=T.int64), 0.5)),
    ("trunc_normal_ int64", lambda T: T.nn.init.trunc_normal_(T.empty(3, dtype=T.int64))),
    ("trunc_normal_ int64, narrow", lambda T: T.nn.init.trunc_normal_(
        T.empty(3, dtype=T.int64), a=3, b=4)),
    ("trunc_normal_ int64, a > b", lambda T: T.nn.init.trunc_normal_(
        T.empty(3, dtype=T.int64), a=2, b=1)),
    ("trunc_normal_ bool", lambda T: T.nn.init.trunc_normal_(T.empty(3, dtype=T.bool))),
    ("trunc_normal_ empty int64", lambda T: T.nn.init.trunc_normal_(
        T.empty(0, dtype=T.int64))),
    ("trunc_normal_ uint8, negative bound", lambda T: T.nn.init.trunc_normal_(
        T.empty(3, dtype=T.uint8))),
    ("trunc_normal_ int8, bounds overflow", lambda T: T.nn.init.trunc_normal_(
        T.empty(3, dtype=T.int8), a=-200, b=300)),
    ("trunc_normal_ int16, bounds fit", lambda T: T.nn.init.trunc_normal_(
        T.empty(3, dtype=T.int16), a=-200, b=300)),
]


@pytest.mark.parametrize("name,fill", INIT_CASES, ids=[c[0] for c in INIT_CASES])
def test_init_matches_pytorch(name, fill):
    call = _then_rand(fill)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # trunc_normal_'s "mean is more than 2 std"
        ours, theirs = call(ember), call(torch)
    assert ours[1] == theirs[1]
    assert ours[0].tolist() == theirs[0].tolist()


def test_trunc_normal_reversed_interval_is_a_runtime_error():
    for T in (ember, torch):
        with pytest.raises(RuntimeError, match=r"found from=2 > to=1"):
            T.nn.init.trunc_normal_(T.empty(3), a=2, b=1)


def test_init_on_integers_is_not_implemented():
    for T in (ember, torch):
        with pytest.raises(NotImplementedError, match="^\"normal_kernel_cpu\" not implemented "
                                                      "for 'Long'"):
            T.nn.init.normal_(T.empty(3, dtype=T.int64))
        with pytest.raises(NotImplementedError, match="^\"check_uniform_bounds\" not "
                                                      "implemented for 'Long'"):
            T.nn.init.uniform_(T.empty(3, dtype=T.int64))


# ---------------------------------------------------------------- the factories
FACTORY_CASES = [
    ("empty()", lambda T: T.empty()),
    ("zeros()", lambda T: T.zeros()),
    ("ones()", lambda T: T.ones()),
    ("rand()", lambda T: T.rand()),
    ("randn()", lambda T: T.randn()),
    ("full()", lambda T: T.full()),
    ("full(fill_value=1)", lambda T: T.full(fill_value=1)),
    ("empty(dtype=)", lambda T: T.empty(dtype=T.float64)),
    ("zeros(dtype=)", lambda T: T.zeros(dtype=T.float64)),
    ("ones(requires_grad=)", lambda T: T.ones(requires_grad=True)),
    ("rand(generator=None)", lambda T: T.rand(generator=None)),
    ("randn(dtype=)", lambda T: T.randn(dtype=T.float64)),
    ("empty(size=None)", lambda T: T.empty(size=None)),
    # a 0-d tensor needs its empty size spelled out
    ("zeros(())", lambda T: T.zeros(())),
    ("ones([])", lambda T: T.ones([])),
    ("zeros(size=())", lambda T: T.zeros(size=())),
    ("empty(()).shape", lambda T: T.tensor(list(T.empty(()).shape))),
    ("full((), 2.5)", lambda T: T.full((), 2.5)),
    # layers whose parameters have an empty shape still build
    ("LayerNorm(()) weight", lambda T: T.tensor(list(T.nn.LayerNorm(()).weight.shape))),
    ("RMSNorm(()) weight", lambda T: T.tensor(list(T.nn.RMSNorm(()).weight.shape))),
]


@pytest.mark.parametrize("name,call", FACTORY_CASES, ids=[c[0] for c in FACTORY_CASES])
def test_factory_without_size_matches_pytorch(name, call):
    ours, theirs = outcome(call, ember, message=False), outcome(call, torch, message=False)
    assert ours == theirs


@pytest.mark.parametrize("name", ["empty", "zeros", "ones", "rand", "randn"])
def test_factory_without_size_message(name):
    for T in (ember, torch):
        with pytest.raises(TypeError, match=f'{name}\\(\\) missing 1 required positional '
                                            'arguments: "size"'):
            getattr(T, name)(dtype=T.float32)
