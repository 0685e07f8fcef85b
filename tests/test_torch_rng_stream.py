"""ember's PyTorch-compatible CPU random stream (``ember._mt_stream``) against PyTorch
itself: every draw function for sizes 1, 7, 16, 17, 1000 and 10,007, in float32 and
float64 (and float16 where PyTorch has it), several seeds, equal to the bit; and the
generator state byte for byte after each draw, so the streams stay in step."""
import math
import platform

import numpy as np
import pytest

from ember import _mt_stream as mt

torch = pytest.importorskip("torch")

SIZES = [1, 7, 16, 17, 1000, 10007]
SEEDS = [0, 42, 2 ** 32 + 7]
FLOATS = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16}
X86 = platform.machine().lower() in ("x86_64", "amd64")
CAPABILITY = torch.backends.cpu.get_cpu_capability()
# PyTorch's x86 DEFAULT kernels (ATEN_CPU_CAPABILITY=default, or a CPU without AVX2) are
# built without fused multiply-adds: their uniforms round twice
pytestmark = pytest.mark.skipif(X86 and CAPABILITY == "DEFAULT",
                                reason="PyTorch runs its x86 DEFAULT kernels, which round "
                                       "without fused multiply-adds")
# its float32 Box-Muller for 16 values at a time is the Cephes one in its AVX2 and AVX-512
# kernels; other builds call the C library's float functions instead
CEPHES_NORMALS = X86 and CAPABILITY in ("AVX2", "AVX512")
# the scalar-p Bernoulli path this PyTorch takes (MKL's stream on Intel CPUs)
VECTOR_ULPS = 0 if CEPHES_NORMALS else 4
BERNOULLI = "mkl" if mt._cpu_is_intel() and torch.backends.mkl.is_available() else "default"


def _pair(seed):
    """Torch's default generator and an ember generator, both seeded with ``seed``."""
    torch.manual_seed(seed)
    return mt.TorchCompatibleGenerator(seed)


def _same(got, want, in_step=None, max_ulp=0):
    want = want.numpy() if hasattr(want, "numpy") else np.asarray(want)
    got = np.asarray(got)
    assert got.shape == want.shape
    if max_ulp:
        np.testing.assert_array_max_ulp(got, want, maxulp=max_ulp)
    elif not np.array_equal(got, want, equal_nan=got.dtype.kind == "f"):
        bad = np.flatnonzero(got.ravel() != want.ravel())
        raise AssertionError(f"{bad.size} of {got.size} values differ, first at {bad[:5]}: "
                             f"{got.ravel()[bad[:3]]} != {want.ravel()[bad[:3]]}")
    if in_step is not None:  # the generator states are the same bytes
        assert np.array_equal(in_step.get_state(), torch.get_rng_state().numpy())


# ------------------------------------------------------------------- seeds and state
@pytest.mark.parametrize("seed", [0, 1, 42, 2 ** 32 + 7, 2 ** 63, 2 ** 64 - 1, -1])
def test_seeded_state_is_torch_bytes(seed):
    g = _pair(seed)
    assert np.array_equal(g.get_state(), torch.get_rng_state().numpy())
    assert g.initial_seed() == torch.initial_seed()


def test_new_generator_starts_from_torch_default_seed():
    g = mt.TorchCompatibleGenerator()
    assert g.initial_seed() == torch.Generator().initial_seed()
    assert np.array_equal(g.get_state(), torch.Generator().get_state().numpy())


def test_state_moves_between_libraries():
    g = _pair(5)
    mt.normal(g, 3, "float64")  # caches the second normal of a pair
    torch.randn(3, dtype=torch.float64)
    torch.set_rng_state(torch.from_numpy(g.get_state()))  # ember's state into torch
    _same(mt.normal(g, 5, "float32"), torch.randn(5), g)
    torch.rand(1234)
    g.set_state(torch.get_rng_state().numpy())  # and torch's into ember
    _same(mt.uniform(g, 2000, "float64"), torch.rand(2000, dtype=torch.float64), g)


# ------------------------------------------------------------------- uniform / normal
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", list(FLOATS))
def test_rand_and_uniform(seed, n, dtype):
    g = _pair(seed)
    _same(mt.uniform(g, n, dtype), torch.rand(n, dtype=FLOATS[dtype]), g)
    _same(mt.uniform(g, n, dtype, -0.37, 2.9),
          torch.empty(n, dtype=FLOATS[dtype]).uniform_(-0.37, 2.9), g)
    bound = 1 / math.sqrt(3)  # the bounds nn.init's kaiming_uniform_ computes
    _same(mt.uniform(g, n, dtype, -bound, bound),
          torch.empty(n, dtype=FLOATS[dtype]).uniform_(-bound, bound), g)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES + [15, 31, 32, 33])
@pytest.mark.parametrize("dtype", list(FLOATS))
def test_randn_and_normal(seed, n, dtype):
    g = _pair(seed)
    # bit for bit, except where this PyTorch's kernels use other float32 functions
    ulps = VECTOR_ULPS if dtype != "float64" and n >= 16 else 0
    _same(mt.normal(g, n, dtype), torch.randn(n, dtype=FLOATS[dtype]), g, ulps)
    _same(mt.normal(g, n, dtype, 0.3, 2.7),
          torch.empty(n, dtype=FLOATS[dtype]).normal_(0.3, 2.7), g, ulps)


def test_uniform_rounds_once():
    # 1.5 * u + 2^-60 with u at a float32 midpoint: a product rounded first, or a sum
    # rounded through float64, lands on the other neighbour
    g = _pair(42)
    _same(mt.uniform(g, 1, "float32", 2.0 ** -60, 1.5),
          torch.empty(1).uniform_(2.0 ** -60, 1.5), g)


def test_uniform_value_rounding_to_the_upper_bound_becomes_the_lower():
    g = _pair(2)
    g.random_uint32(12675698)  # the next word has its low 24 bits all ones
    torch.set_rng_state(torch.from_numpy(g.get_state()))
    value = mt.uniform(g, 1, "float32", 0.5, 1.0)
    _same(value, torch.empty(1).uniform_(0.5, 1.0), g)
    assert value[0] == 0.5
    g = _pair(0)
    values = mt.uniform(g, 200000, "float16")
    _same(values, torch.rand(200000, dtype=torch.float16), g)
    assert values.max() < 1  # 24-bit uniforms that round to 1.0 in half become 0


def test_scalar_normal_caches_the_second_value_across_dtypes_and_paths():
    g = _pair(3)
    for n, dtype in [(1, "float64"), (1, "float32"), (20, "float32"), (3, "float64"),
                     (1, "float16"), (2, "float32"), (16, "float64"), (1, "float64")]:
        ulps = VECTOR_ULPS if dtype == "float32" and n >= 16 else 0
        _same(mt.normal(g, n, dtype), torch.randn(n, dtype=FLOATS[dtype]), g, ulps)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_non_contiguous_fills_in_memory_order(dtype):
    g = _pair(8)
    base = torch.empty(6, 40, dtype=FLOATS[dtype])
    view = base.t()
    view.normal_(1.0, 0.5)  # a non-contiguous tensor takes the scalar path
    mine = np.empty((6, 40), dtype=dtype)
    target = mt.fill_order(mine.T)
    target[...] = mt.normal(g, mine.size, dtype, 1.0, 0.5, contiguous=False).reshape(
        target.shape)
    _same(mine, base, g)
    view.uniform_(-2.0, 3.0)
    target[...] = mt.uniform(g, mine.size, dtype, -2.0, 3.0).reshape(target.shape)
    _same(mine, base, g)


def test_normal_with_tensor_mean_or_std():
    """torch.normal(mean_t, std_t) and normal(number, std_t): standard normals of the
    result's size, times std, plus mean; normal(mean_t, number): normal_(0, std) plus
    mean. Each step rounds in the result's dtype."""
    g = _pair(4)
    mean, std = torch.linspace(-1, 1, 40), torch.linspace(0.1, 2, 40)
    z = mt.normal(g, 40, "float32")
    _same(z * std.numpy() + mean.numpy(), torch.normal(mean, std), g, VECTOR_ULPS)
    z = mt.normal(g, 40, "float32")
    _same(z * std.numpy() + np.float32(0.3), torch.normal(0.3, std), g, VECTOR_ULPS)
    z = mt.normal(g, 40, "float32", 0.0, 0.7)
    _same(z + mean.numpy(), torch.normal(mean, 0.7), g, VECTOR_ULPS)
    _same(mt.normal(g, 5, "float64", 0.3, 0.7),
          torch.normal(0.3, 0.7, (5,), dtype=torch.float64), g)


# --------------------------------------------------------------------------- integers
_RANGES = [(0, 10), (-5, 95), (3, 4), (-2 ** 27, 2 ** 27 - 1), (-2 ** 27, 2 ** 27),
           (0, 2 ** 40), (-2 ** 63, 2 ** 63 - 1)]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("low,high", _RANGES)
def test_randint(n, low, high):
    for seed in SEEDS:
        g = _pair(seed)
        _same(mt.random_from_to(g, n, low, high), torch.randint(low, high, (n,)), g)


@pytest.mark.parametrize("dtype", ["int32", "int16", "uint8", "float32", "float64",
                                   "float16"])
def test_random_from_to_other_dtypes(dtype):
    low, high = (2, 200) if dtype == "uint8" else (-3, 7)
    for n in SIZES:
        g = _pair(n)
        want = torch.empty(n, dtype=getattr(torch, dtype)).random_(low, high)
        _same(mt.random_from_to(g, n, low, high, dtype).astype(dtype), want, g)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool",
                                   "float32", "float64", "float16"])
def test_random_full_range(dtype):
    for n in (1, 17, 1000):
        g = _pair(n)
        _same(mt.random_full(g, n, dtype), torch.empty(n, dtype=getattr(torch, dtype)).random_(),
              g)
    g = _pair(9)
    _same(mt.random_full_64_bits(g, 20),
          torch.empty(20, dtype=torch.int64).random_(-2 ** 63, None), g)


@pytest.mark.parametrize("n", [0, 1, 2] + SIZES)
def test_randperm(n):
    for seed in SEEDS:
        g = _pair(seed)
        _same(mt.randperm(g, n), torch.randperm(n), g)


# -------------------------------------------------------------------- bernoulli, dropout
@pytest.mark.parametrize("n", SIZES)
def test_bernoulli_scalar_p(n):
    for seed in SEEDS:
        for p in (0.0, 0.3, 0.5, 1.0):
            g = _pair(seed)
            _same(mt.bernoulli_scalar(g, n, p, BERNOULLI).astype(np.float32),
                  torch.empty(n).bernoulli_(p), g)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", list(FLOATS))
def test_bernoulli_tensor_p(n, dtype):
    probs = torch.rand(n, generator=torch.Generator().manual_seed(n)).to(FLOATS[dtype])
    for seed in SEEDS:
        g = _pair(seed)
        _same(mt.bernoulli_tensor(g, probs.numpy()).astype(dtype), torch.bernoulli(probs), g)
        _same(mt.bernoulli_tensor(g, probs.numpy()).astype(np.float64),
              torch.empty(n, dtype=torch.float64).bernoulli_(probs), g)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 1.0])
def test_dropout_mask(n, p):
    # training-mode dropout: keep with probability 1 - p (drawn as bernoulli_(1 - p)),
    # scale by 1 / (1 - p) in the input's dtype; p = 0 and p = 1 draw nothing
    x = torch.linspace(-3, 3, n)
    for seed in SEEDS:
        g = _pair(seed)
        want = torch.nn.functional.dropout(x, p, training=True)
        if p in (0.0, 1.0):
            mine = x.numpy() * np.float32(1 - p)
        else:
            keep = mt.bernoulli_scalar(g, n, 1 - p, BERNOULLI).astype(np.float32)
            mine = x.numpy() * (keep / np.float32(1 - p))
        _same(mine, want, g)


def test_feature_dropout_masks_whole_channels():
    g = _pair(1)
    x = torch.randn(2, 3, 4, 4, generator=torch.Generator().manual_seed(0))
    want = torch.nn.functional.dropout2d(x, 0.4, training=True)
    keep = mt.bernoulli_scalar(g, 6, 0.6, BERNOULLI).astype(np.float32).reshape(2, 3, 1, 1)
    _same(x.numpy() * (keep / np.float32(0.6)), want, g)


# ----------------------------------------------------------------- other distributions
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", list(FLOATS))
def test_exponential_geometric_cauchy_log_normal(n, dtype):
    t = FLOATS[dtype]
    for seed in SEEDS[:2]:
        g = _pair(seed)
        _same(mt.exponential(g, n, dtype, 2.5), torch.empty(n, dtype=t).exponential_(2.5), g)
        _same(mt.geometric(g, n, 0.3, dtype), torch.empty(n, dtype=t).geometric_(0.3), g)
        _same(mt.cauchy(g, n, dtype, 0.5, 0.3), torch.empty(n, dtype=t).cauchy_(0.5, 0.3), g)
        _same(mt.log_normal(g, n, dtype, 0.2, 0.7),
              torch.empty(n, dtype=t).log_normal_(0.2, 0.7), g)


def test_geometric_into_integers():
    g = _pair(6)
    _same(mt.geometric(g, 500, 0.2, "int64"),
          torch.empty(500, dtype=torch.int64).geometric_(0.2), g)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rows,categories", [(1, 5), (3, 50), (2, 1000), (1, 10007)])
def test_multinomial(dtype, rows, categories):
    weights = torch.rand(rows, categories, dtype=FLOATS[dtype],
                         generator=torch.Generator().manual_seed(categories)) ** 2
    weights[:, ::7] = 0  # zero-weight categories are never drawn while others remain
    for samples, replacement in [(1, True), (1, False), (3, False),
                                 (categories // 2, False), (17, True), (1000, True)]:
        g = _pair(samples)
        _same(mt.multinomial(g, weights.numpy(), samples, replacement),
              torch.multinomial(weights, samples, replacement), g)


# ------------------------------------------------------------------------ consumption
def test_interleaved_draws_stay_in_step():
    """A session mixing every kind of draw, in odd sizes and dtypes: each result and the
    state after it match PyTorch's."""
    g = _pair(2024)
    w = torch.rand(4, 30, generator=torch.Generator().manual_seed(1))
    steps = [
        (lambda: mt.uniform(g, 5, "float32"), lambda: torch.rand(5)),
        (lambda: mt.normal(g, 3, "float64"), lambda: torch.randn(3, dtype=torch.float64)),
        (lambda: mt.random_from_to(g, 9, 0, 10), lambda: torch.randint(0, 10, (9,))),
        (lambda: mt.normal(g, 33, "float32"), lambda: torch.randn(33), VECTOR_ULPS),
        (lambda: mt.randperm(g, 11), lambda: torch.randperm(11)),
        (lambda: mt.normal(g, 1, "float32"), lambda: torch.randn(1)),
        (lambda: mt.bernoulli_scalar(g, 13, 0.7, BERNOULLI).astype(np.float32),
         lambda: torch.empty(13).bernoulli_(0.7)),
        (lambda: mt.uniform(g, 700, "float64", -1, 1),
         lambda: torch.empty(700, dtype=torch.float64).uniform_(-1, 1)),
        (lambda: mt.multinomial(g, w.numpy(), 5, False), lambda: torch.multinomial(w, 5)),
        (lambda: mt.random_from_to(g, 4, 0, 2 ** 35), lambda: torch.randint(0, 2 ** 35, (4,))),
        (lambda: mt.exponential(g, 3, "float32"), lambda: torch.empty(3).exponential_()),
        (lambda: mt.normal(g, 2, "float64", 5.0, 0.1),
         lambda: torch.empty(2, dtype=torch.float64).normal_(5.0, 0.1)),
        (lambda: mt.bernoulli_tensor(g, w.numpy()).astype(np.float32),
         lambda: torch.bernoulli(w)),
        (lambda: mt.normal(g, 1000, "float64"), lambda: torch.randn(1000, dtype=torch.float64)),
        (lambda: mt.multinomial(g, w.numpy(), 40, True), lambda: torch.multinomial(w, 40, True)),
        (lambda: mt.uniform(g, 1, "float32"), lambda: torch.rand(1)),
    ]
    for _ in range(3):
        for mine, theirs, *ulps in steps:
            _same(mine(), theirs(), g, *ulps)


def test_explicit_generators_are_independent_of_the_default():
    g = mt.TorchCompatibleGenerator(77)
    theirs = torch.Generator().manual_seed(77)
    torch.manual_seed(1)
    before = torch.get_rng_state()
    _same(mt.normal(g, 50, "float32"), torch.randn(50, generator=theirs), max_ulp=VECTOR_ULPS)
    _same(mt.randperm(g, 30), torch.randperm(30, generator=theirs))
    assert torch.equal(torch.get_rng_state(), before)
    assert np.array_equal(g.get_state(), theirs.get_state().numpy())
