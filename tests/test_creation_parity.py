"""Tensor creation against PyTorch: ``tensor``/``as_tensor``/``from_numpy`` dtype
inference and errors, the filled and range factories, the random factories' argument
handling (and, seeded, their values) and the default dtype's reach. Each case runs on
ember and on torch (see tests/ops/oracle.py)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.conftest import requires_torch
from tests.ops.oracle import raises, table_tests


def seeded(case):
    def run(T):
        T.manual_seed(0)
        return case(T)
    return run


def in_double(case):
    """``case`` with float64 as the default dtype."""
    def run(T):
        before = T.get_default_dtype()
        T.set_default_dtype(T.float64)
        try:
            return case(T)
        finally:
            T.set_default_dtype(before)
    return run


def shared(T, make):
    """Whether writing through the tensor ``make`` builds from an array changes it."""
    a = np.zeros(2)
    make(T, a)[0] = 5
    return T.tensor([a[0] == 5])


def bits(T, t):
    """A float64 tensor's bit patterns, so that values must match exactly."""
    return t.view(T.int64)


CASES = [
    # NumPy scalars, arrays and tensors inside lists: their dtypes promote
    ("np float16 and int8", lambda T: T.tensor([np.float16(1), np.int8(2)]), None),
    ("np float64 and int", lambda T: T.tensor([np.float64(1.5), 2]), None),
    ("np int32 alone", lambda T: T.tensor([np.int32(1)]), None),
    ("np int8 and bool", lambda T: T.tensor([np.int8(1), True]), None),
    ("np arrays", lambda T: T.tensor([np.array([1., 2.]), np.array([3., 4.])]), None),
    ("np int32 array", lambda T: T.tensor([np.array([1, 2], dtype=np.int32)]), None),
    ("0-d float64 tensors", lambda T: T.tensor([T.tensor(1, dtype=T.float64), T.tensor(2)]),
     None),
    ("one-element tensors", lambda T: T.tensor([T.ones(1), T.ones(1, 1)]), None),
    ("list of tensors", lambda T: T.tensor([T.ones(2), T.ones(2)]),
     raises("only one element tensors can be converted to Python scalars")),
    # ragged and odd data
    ("ragged", lambda T: T.tensor([[1, 2], [3]]),
     raises("expected sequence of length 2 at dim 1 (got 1)")),
    ("number among sequences", lambda T: T.tensor([[1, 2], 3]), raises("not a sequence")),
    ("str in list", lambda T: T.tensor(["a"]), raises("too many dimensions 'str'")),
    ("None", lambda T: T.tensor(None), raises("Could not infer dtype of NoneType")),
    # NumPy arrays
    ("as_tensor big-endian", lambda T: T.as_tensor(np.ones(2, ">f4")),
     raises("byte order different from the native byte order")),
    ("from_numpy big-endian", lambda T: T.from_numpy(np.ones(2, ">f4")),
     raises("byte order different from the native byte order")),
    # factories
    ("arange too big", lambda T: T.arange(0, 2 ** 62),
     raises("Storage size calculation overflowed")),
    ("full int size", lambda T: T.full(2, 3.5), raises("must be tuple of ints, not int")),
    ("full NumPy int", lambda T: T.full((2,), np.int32(3)), None),
    ("eye negative n", lambda T: T.eye(-1), raises("n must be greater or equal to 0")),
    ("eye negative m", lambda T: T.eye(2, -1), raises("m must be greater or equal to 0")),
    ("logspace float64 exact", lambda T: bits(T, T.logspace(0, 1, 5, dtype=T.float64)), None),
    # randint
    ("randint high keyword", seeded(lambda T: T.randint(high=10, size=(5,))), None),
    ("randint float bounds", seeded(lambda T: T.randint(0.5, 10.5, (3,))),
     raises("randint() received an invalid combination of arguments")),
    ("randint float high", seeded(lambda T: T.randint(10.0, (3,))), raises("not float")),
    ("randint past uint8", seeded(lambda T: T.randint(0, 300, (3,), dtype=T.uint8)),
     raises("to - 1 is out of bounds for unsigned char")),
    ("randint below uint8", seeded(lambda T: T.randint(-1, 5, (3,), dtype=T.uint8)),
     raises("from is out of bounds for unsigned char")),
    ("randint past bool", seeded(lambda T: T.randint(0, 3, (3,), dtype=T.bool)),
     raises("to - 1 is out of bounds for bool")),
    ("randint past int32", seeded(lambda T: T.randint(0, 2 ** 31 + 1, (2,), dtype=T.int32)),
     raises("to - 1 is out of bounds for int")),
]

GUARDS = [
    ("np float16 and float", lambda T: T.tensor([np.float16(1), 2.5]), None),
    ("0-d int32 and int", lambda T: T.tensor([T.tensor(1, dtype=T.int32), 2]), None),
    ("full NumPy float16", lambda T: T.full((2,), np.float16(3)), None),
    ("logspace float64 base 2 exact",
     lambda T: bits(T, T.logspace(-3, 7, 11, base=2, dtype=T.float64)), None),
    ("logspace default double exact", in_double(lambda T: bits(T, T.logspace(-2, 2, 9))), None),
    ("bool int float", lambda T: T.tensor([True, 2, 3.5]), None),
    ("bool and ints", lambda T: T.tensor([[True, 2], [3, 4]]), None),
    ("int past uint64", lambda T: T.tensor([2 ** 64]), raises()),
    ("empty", lambda T: T.tensor([]), None),
    ("empty nested", lambda T: T.tensor([[]]), None),
    ("two empty", lambda T: T.tensor([[], []]), None),
    ("str", lambda T: T.tensor("abc"), raises("invalid data type 'str'")),
    ("300 into uint8", lambda T: T.tensor([300], dtype=T.uint8), raises()),
    ("200 into int8", lambda T: T.tensor([200], dtype=T.int8), raises()),
    ("3.5 into int64", lambda T: T.tensor(3.5, dtype=T.int64), None),
    ("negative floats into int64", lambda T: T.tensor([-3.5, 2.7], dtype=T.int64), None),
    ("bool from ints", lambda T: T.tensor([0, 1, 2], dtype=T.bool), None),
    ("int requires grad", lambda T: T.tensor([1, 2], requires_grad=True),
     raises("floating point and complex dtype can require gradients")),
    ("tensor of tensor", lambda T: T.tensor(T.ones(2), dtype=T.int32), None),
    ("float16 overflow", lambda T: T.tensor([1e6], dtype=T.float16), None),
    ("0-d float tensors", lambda T: T.tensor([T.tensor(1.5), T.tensor(2.5)]), None),
    ("np 0-d", lambda T: T.tensor(np.float64(1.5)), None),
    ("as_tensor float16", lambda T: T.as_tensor(np.ones(2, np.float16)), None),
    ("as_tensor uint16", lambda T: T.as_tensor(np.ones(2, np.uint16)), None),
    ("as_tensor int8", lambda T: T.as_tensor(np.ones(2, np.int8)), None),
    ("as_tensor 0-d", lambda T: T.as_tensor(np.array(3.0)), None),
    ("as_tensor object", lambda T: T.as_tensor(np.array([1, 2], dtype=object)), raises()),
    ("from_numpy Fortran strides",
     lambda T: T.tensor(T.from_numpy(np.asfortranarray(np.ones((2, 3)))).stride()), None),
    ("as_tensor shares", lambda T: shared(T, lambda T, a: T.as_tensor(a)), None),
    ("as_tensor dtype copies",
     lambda T: shared(T, lambda T, a: T.as_tensor(a, dtype=T.float32)), None),
    ("asarray copy=True copies",
     lambda T: shared(T, lambda T, a: T.asarray(a, copy=True)), None),
    ("asarray copy=False shares",
     lambda T: shared(T, lambda T, a: T.asarray(a, copy=False)), None),
    ("asarray copy=False dtype", lambda T: T.asarray(np.zeros(2), dtype=T.float32, copy=False),
     raises()),
    ("asarray list", lambda T: T.asarray([1, 2.5]), None),
    ("arange 0.1 steps", lambda T: T.arange(0, 1, 0.1), None),
    ("arange 0.1 last", lambda T: T.arange(0, 1, 0.1, dtype=T.float64)[-1:], None),
    ("arange negative step", lambda T: T.arange(1, 0, -0.3), None),
    ("arange float32", lambda T: T.arange(10, dtype=T.float32), None),
    ("arange int and float", lambda T: T.arange(1, 4, 0.5), None),
    ("arange floats into int64", lambda T: T.arange(0, 2.5, 0.5, dtype=T.int64), raises()),
    ("arange end below start", lambda T: T.arange(5, 0),
     raises("upper bound and l")),
    ("arange step 0", lambda T: T.arange(0, 5, 0), raises("step must be nonzero")),
    ("linspace 0 steps", lambda T: T.linspace(0, 1, 0), None),
    ("linspace 1 step", lambda T: T.linspace(0, 1, 1), None),
    ("linspace int", lambda T: T.linspace(-5, 10, 7, dtype=T.int32), None),
    ("logspace base 2", lambda T: T.logspace(0, 4, 5, base=2), None),
    ("logspace 1 step", lambda T: T.logspace(0, 1, 1, dtype=T.float64), None),
    ("logspace int", lambda T: T.logspace(0, 3, 4, dtype=T.int64), None),
    ("range inclusive", lambda T: T.range(0, 1, 0.25), None),
    ("full bool", lambda T: T.full((2,), True), None),
    ("full int", lambda T: T.full([2, 1], 3), None),
    ("full float", lambda T: T.full((2,), 3.5), None),
    ("full past uint8", lambda T: T.full((2,), 300, dtype=T.uint8), raises()),
    ("zeros varargs", lambda T: T.zeros(2, 3), None),
    ("zeros list", lambda T: T.zeros([2, 3]), None),
    ("zeros Size", lambda T: T.zeros(T.Size([2, 3])), None),
    ("zeros 0-d tensor", lambda T: T.zeros(T.tensor(3)), None),
    ("zeros negative", lambda T: T.zeros(-1), raises()),
    ("zeros float size", lambda T: T.zeros(2.0), raises()),
    ("zeros bool", lambda T: T.zeros(2, dtype=T.bool), None),
    ("empty negative", lambda T: T.empty(2, -3), raises("negative dimension -3")),
    ("eye n m", lambda T: T.eye(2, 4), None),
    ("tril_indices offset", lambda T: T.tril_indices(4, 3, -2), None),
    ("triu_indices offset", lambda T: T.triu_indices(3, 4, 2), None),
    ("triu_indices int32", lambda T: T.triu_indices(3, 3, dtype=T.int32), None),
    ("meshgrid", lambda T: T.meshgrid(T.arange(2), T.arange(3)), None),
    ("meshgrid xy", lambda T: T.meshgrid(T.arange(2), T.arange(3), indexing="xy"), None),
    ("cartesian_prod", lambda T: T.cartesian_prod(T.arange(2), T.arange(3)), None),
    ("heaviside", lambda T: T.heaviside(T.tensor([-1., 0., 2.]), T.tensor([0.5])), None),
    ("empty_strided", lambda T: T.tensor(T.empty_strided((2, 3), (1, 2)).stride()), None),
    ("scalar_tensor", lambda T: T.scalar_tensor(3), None),
    ("frombuffer", lambda T: T.frombuffer(bytearray(range(8)), dtype=T.uint8, count=3,
                                          offset=2), None),
    ("rand", seeded(lambda T: T.rand((2, 3), dtype=T.float64)), None),
    ("rand generator", lambda T: T.rand(3, generator=T.Generator().manual_seed(1)), None),
    ("rand int", seeded(lambda T: T.rand(3, dtype=T.int64)), raises()),
    ("randn", seeded(lambda T: T.randn(20)), None),
    ("randint", seeded(lambda T: T.randint(10, (5,))), None),
    ("randint low high", seeded(lambda T: T.randint(-5, 5, T.Size([4]))), None),
    ("randint int32", seeded(lambda T: T.randint(0, 10, (3,), dtype=T.int32)), None),
    ("randint equal bounds", seeded(lambda T: T.randint(5, 5, (2,))), raises()),
    ("randint bool", seeded(lambda T: T.randint(0, 2, (3,), dtype=T.bool)), None),
    ("randint 0-d tensor bounds", seeded(lambda T: T.randint(T.tensor(0), T.tensor(5), (2,))),
     None),
    ("randperm", seeded(lambda T: T.randperm(10)), None),
    ("randperm int32", seeded(lambda T: T.randperm(5, dtype=T.int32)), None),
    ("normal floats", seeded(lambda T: T.normal(2., 3., size=(2, 2))), None),
    ("normal tensors", seeded(lambda T: T.normal(T.zeros(3), T.ones(3))), None),
    ("bernoulli", seeded(lambda T: T.bernoulli(T.full((5,), 0.5))), None),
    ("multinomial", seeded(lambda T: T.multinomial(T.tensor([1., 2., 3.]), 2)), None),
    ("multinomial too many", seeded(lambda T: T.multinomial(T.tensor([1., 2., 3.]), 5)),
     raises("cannot sample n_sample > prob_dist.size(-1) samples without replacement")),
    ("double tensor", in_double(lambda T: T.tensor([1.5])), None),
    ("double arange", in_double(lambda T: T.arange(0., 1.)), None),
    ("double linspace", in_double(lambda T: T.linspace(0, 1, 3)), None),
    ("double full", in_double(lambda T: T.full((2,), 1.5)), None),
    ("double zeros", in_double(lambda T: T.zeros(2)), None),
    ("double eye", in_double(lambda T: T.eye(2)), None),
    ("double rand", in_double(seeded(lambda T: T.rand(2))), None),
    ("double randn", in_double(seeded(lambda T: T.randn(2))), None),
    ("double normal", in_double(seeded(lambda T: T.normal(0., 1., (2,)))), None),
    ("double scalar_tensor", in_double(lambda T: T.scalar_tensor(1)), None),
    ("double as_tensor", in_double(lambda T: T.as_tensor([1.5])), None),
]

test_matches_torch, test_still_matches_torch = table_tests(CASES, GUARDS)


def warned(T, case) -> bool:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        case(T)
    return [str(w.message) for w in caught]


# (name, case, a fragment of the one warning both give, or None: neither warns)
WARNINGS = [
    ("read-only array", lambda T: T.from_numpy(np.broadcast_to(np.ones(2), (2,))),
     "The given NumPy array is not writable"),
    ("float16 overflow", lambda T: T.tensor([1e6], dtype=T.float16), None),
    ("float32 overflow", lambda T: T.tensor([1e40]), None),
]
GUARD_WARNINGS = [
    ("tensor of tensor", lambda T: T.tensor(T.ones(2)), "To copy construct from a tensor"),
    ("range", lambda T: T.range(0, 2), "is deprecated and will be removed"),
]


@requires_torch
@pytest.mark.parametrize("name, case, fragment", WARNINGS + GUARD_WARNINGS,
                         ids=[w[0] for w in WARNINGS + GUARD_WARNINGS])
def test_warnings_match_torch(name, case, fragment):
    import torch

    import ember

    ours, theirs = warned(ember, case), warned(torch, case)
    if fragment is None:
        assert theirs == [] and ours == [], (ours, theirs)
        return
    assert len(theirs) == 1 and fragment in theirs[0], theirs
    assert len(ours) == 1 and fragment in ours[0], ours
