"""The exact arithmetic behind ember's PyTorch-compatible random stream, checked without
PyTorch: the FMA emulations against exact rational arithmetic, the Cephes float32
functions against float64 references, mt19937 against NumPy's legacy seeding, and the
MKL MCG31 Bernoulli path against values recorded from MKL itself."""
from fractions import Fraction

import numpy as np
import pytest

from ember import _mt_stream as mt
from ember._exact_float import fma32, fma64, libm, logf_cephes, sincosf_cephes


def _exact(a, b, c):
    return Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))


def test_fma64_rounds_once_like_exact_arithmetic():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(3000) * 10.0 ** rng.integers(-5, 5, 3000)
    b = rng.standard_normal(3000) * 10.0 ** rng.integers(-5, 5, 3000)
    c = -a * b * (1 + rng.standard_normal(3000) * 1e-9)  # heavy cancellation
    got = fma64(a, b, c)
    want = np.array([float(_exact(x, y, z)) for x, y, z in zip(a, b, c)])
    assert np.array_equal(got, want)
    assert np.count_nonzero(got != a * b + c) > 1000  # the plain expression differs


def test_fma64_scalars_and_non_finite():
    assert float(fma64(0.1, 10.0, -1.0)) == float(_exact(0.1, 10.0, -1.0)) != 0.0
    out = fma64([1e300, np.inf, np.nan, 2.0], [1e300, 1.0, 1.0, 3.0], [0.0, 1.0, 0.0, 1.0])
    assert np.isinf(out[0]) and np.isinf(out[1]) and np.isnan(out[2]) and out[3] == 7.0


def test_fma32_rounds_once_including_the_double_rounding_ties():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(4000).astype(np.float32)
    b = rng.standard_normal(4000).astype(np.float32)
    c = rng.standard_normal(4000).astype(np.float32)
    # c = +-2^-60 on top of an exact float32 midpoint: a float64 sum lands on the
    # midpoint and a second rounding would pick the even neighbour
    a[:8] = np.float32(1.5)
    b[:8] = (np.arange(8, dtype=np.float32) * 2 + 1) * np.float32(2.0 ** -23) + 1
    c[:8] = np.where(np.arange(8) % 2, 2.0 ** -60, -(2.0 ** -60)).astype(np.float32)
    got = fma32(a, b, c)
    want = np.array([np.float32(float(_exact(x, y, z))) for x, y, z in zip(a, b, c)])
    # the exact value rounded straight to float32 (Fraction -> float is correctly rounded
    # to float64, and these values are never float64 ties, so one rounding remains)
    want_exact = np.array([_round_to_float32(_exact(x, y, z)) for x, y, z in zip(a, b, c)])
    assert np.array_equal(got, want_exact)
    assert not np.array_equal(want, want_exact)  # the naive double rounding is wrong
    assert got.dtype == np.float32


def _round_to_float32(value: Fraction) -> np.float32:
    """Round an exact rational to the nearest float32 (ties to even)."""
    low = np.float32(float(value))
    if Fraction(float(low)) > value:
        low = np.nextafter(low, np.float32(-np.inf))
    high = np.nextafter(low, np.float32(np.inf))
    below, above = value - Fraction(float(low)), Fraction(float(high)) - value
    if below != above:
        return low if below < above else high
    return low if (low.view(np.int32) & 1) == 0 else high


def test_fma32_subnormal_results():
    tiny = np.float32(2.0 ** -130)
    got = fma32(np.float32(1.5), tiny, np.float32(0))
    assert got == _round_to_float32(Fraction(3, 2) * Fraction(float(tiny)))


def test_libm_functions_match_math_and_handle_poles():
    import math

    x = np.linspace(0.01, 0.99, 101)
    for name in ("log", "log1p", "cos", "sin", "tan", "exp"):
        assert np.array_equal(getattr(libm, name)(x),
                              np.array([getattr(math, name)(v) for v in x]))
    assert libm.log(np.array([0.0, 1.0]))[0] == -np.inf
    assert np.isnan(libm.log(np.array([-1.0]))[0])
    assert libm.exp(np.array([1000.0]))[0] == np.inf
    assert libm.log(np.empty(0)).shape == (0,)


def test_cephes_log_and_sincos_are_float32_accurate():
    u = (np.arange(1, 200001, dtype=np.float64) / 200001).astype(np.float32)
    log = logf_cephes(u)
    assert log.dtype == np.float32
    ulp = np.spacing(np.abs(np.log(u.astype(np.float64))).astype(np.float32))
    assert np.all(np.abs(log - np.log(u.astype(np.float64))) <= 2 * ulp + 1e-12)
    theta = np.float32(2 * np.pi) * u
    sine, cosine = sincosf_cephes(theta)
    assert np.abs(sine - np.sin(theta.astype(np.float64))).max() < 2e-7
    assert np.abs(cosine - np.cos(theta.astype(np.float64))).max() < 2e-7
    negative_sine, _ = sincosf_cephes(-theta[:100])
    assert np.array_equal(negative_sine, -sine[:100])


# ------------------------------------------------------------------- mt19937 itself
@pytest.mark.parametrize("seed", [0, 1, 42, 5489, 2 ** 32 - 1])
def test_words_are_std_mt19937(seed):
    legacy = np.random.RandomState(seed)  # init_genrand seeding, std::mt19937's
    want = legacy.randint(0, 2 ** 32, size=1500, dtype=np.uint64)
    g = mt.TorchCompatibleGenerator(seed)
    got = np.concatenate([g.random_uint32(k) for k in (1, 622, 1, 1, 500, 375)])
    assert np.array_equal(got.astype(np.uint64), want)


def test_seed_keeps_64_bits_and_uses_the_low_32():
    g = mt.TorchCompatibleGenerator(2 ** 32 + 5)
    assert g.initial_seed() == 2 ** 32 + 5
    assert np.array_equal(g.random_uint32(5), mt.TorchCompatibleGenerator(5).random_uint32(5))
    assert mt.TorchCompatibleGenerator(-1).initial_seed() == 2 ** 64 - 1
    with pytest.raises(RuntimeError, match="seed must be within"):
        mt.TorchCompatibleGenerator(2 ** 64)
    with pytest.raises(TypeError):
        mt.TorchCompatibleGenerator(1.5)


def test_uint64_draw_puts_the_first_word_high():
    words = mt.TorchCompatibleGenerator(3).random_uint32(4).astype(np.uint64)
    pairs = mt.TorchCompatibleGenerator(3).random_uint64(2)
    assert pairs.tolist() == [int(words[0]) << 32 | int(words[1]),
                              int(words[2]) << 32 | int(words[3])]


def test_state_round_trip_mid_block_and_with_cached_normal():
    g = mt.TorchCompatibleGenerator(11)
    g.random_uint32(700)
    mt.normal(g, 1, "float64")  # leaves the pair's second value cached
    assert g.next_double_normal is not None
    state = g.get_state()
    assert state.dtype == np.uint8 and state.size == mt.STATE_SIZE == 5056
    want = (mt.normal(g, 3, "float64"), g.random_uint32(2000))
    twin = mt.TorchCompatibleGenerator(0).set_state(state)
    assert twin.initial_seed() == 11
    got = (mt.normal(twin, 3, "float64"), twin.random_uint32(2000))
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert np.array_equal(twin.get_state(), g.get_state())
    clone = g.clone()
    assert np.array_equal(clone.random_uint32(9), g.random_uint32(9))


def test_set_state_rejects_what_is_not_a_state():
    g = mt.TorchCompatibleGenerator(0)
    with pytest.raises(RuntimeError, match="size 5056 but found .* 10"):
        g.set_state(np.zeros(10, np.uint8))
    with pytest.raises(TypeError, match="uint8"):
        g.set_state(np.zeros(5056, np.float32))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        g.set_state(np.zeros(5056, np.uint8))
    bad = g.get_state()
    bad[8:12] = np.frombuffer(np.int32(625).tobytes(), np.uint8)  # left beyond 624
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        g.set_state(bad)
    assert np.array_equal(g.random_uint32(3), mt.TorchCompatibleGenerator(0).random_uint32(3))


def test_draw_functions_reject_bad_arguments():
    g = mt.TorchCompatibleGenerator(0)
    with pytest.raises(ValueError, match="non-negative"):
        mt.uniform(g, -1, "float32")
    with pytest.raises(TypeError, match="floating-point dtype"):
        mt.normal(g, 3, "int64")
    with pytest.raises(RuntimeError, match="'from' to be less than 'to'"):
        mt.random_from_to(g, 3, 5, 5)
    with pytest.raises(ValueError, match="method must be"):
        mt.bernoulli_scalar(g, 3, 0.5, "fast")
    with pytest.raises(ValueError, match="2-d"):
        mt.multinomial(g, np.ones(3), 1, True)


# --------------------------------------------------------------- the MKL Bernoulli path
# Recorded from MKL 2026.2's vslNewStream(VSL_BRNG_MCG31, seed) + viRngBernoulli(ICDF),
# seeded with the generator's first word, as PyTorch's MKL builds do on Intel CPUs.
_MKL_RECORDED = {
    (0, 0.5, 64): (None, "1001100111100111010000111110000101101010101110100111110000101010",
                   None),
    (0, 0.2, 10007): (2019, "100000011010010000000001011000010000001000011010",
                      "101000010010000100100000000010000000100010000011"),
    (0, 0.9, 10007): (8974, "110111111111111111001111111111111111111111111111",
                      "111111111111111111111111111111110110111111011111"),
    (7, 0.2, 10007): (2067, "100010100000000000100000000010001010001001000000",
                      "000100010000101100000001101101000000000110100101"),
    (7, 0.9, 10007): (9026, "111111111111011111111111111111111011111101111101",
                      "111111010011111111111111111101111111001111110111"),
}


@pytest.mark.parametrize("seed,p,n", sorted(_MKL_RECORDED))
def test_mkl_bernoulli_path_matches_recorded_mkl_output(seed, p, n):
    total, head, tail = _MKL_RECORDED[(seed, p, n)]
    g = mt.TorchCompatibleGenerator(seed)
    mask = mt.bernoulli_scalar(g, n, p, method="mkl")
    bits = "".join("1" if v else "0" for v in mask)
    assert bits.startswith(head)
    assert total is None or int(mask.sum()) == total
    assert tail is None or bits.endswith(tail)
    # one word consumed, whatever n
    after = mt.TorchCompatibleGenerator(seed)
    after.random_uint32(1)
    assert np.array_equal(g.random_uint32(4), after.random_uint32(4))


def test_mcg31_seed_zero_and_modulus_start_at_one():
    for seed in (0, 2 ** 31 - 1):
        u = mt._mcg31_uniforms(seed, 3)
        assert u[0] == 1.0 / (2 ** 31 - 1)
        assert u[1] == 1132489760 * (1.0 / (2 ** 31 - 1))


def test_docstring_examples_hold():
    import doctest

    from ember import _exact_float

    for module in (mt, _exact_float):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__
