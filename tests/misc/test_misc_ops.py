"""The misc ops beyond what the op table checks: errors, in-place forms, edge values,
and the sampled ones (binomial) against torch's draws."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember

from ..conftest import requires_torch


def test_ldexp_negative_int_exponents_differentiate():
    # d/dx x * 2**e is 2**e for every exponent (torch's integer pow gives 0 for e < 0)
    x = ember.tensor([1.5, 1.5], requires_grad=True)
    ember.ldexp(x, ember.tensor([-1, 2])).sum().backward()
    assert x.grad.tolist() == [0.5, 4.0]
    with pytest.raises(TypeError, match="must be a Tensor"):
        ember.ldexp(x, 2)
    y = ember.ones(2)
    y.ldexp_(ember.tensor([1, 3]))
    assert y.tolist() == [2.0, 8.0]
    assert ember.ldexp_(ember.ones(1), ember.tensor([2])).tolist() == [4.0]


def test_frexp_edges():
    values = ember.tensor([0.0, -0.0, 1e-40, math.inf, -8.0, 3.0])
    mantissa, exponent = ember.frexp(values)
    expected_m, expected_e = np.frexp(values.numpy())
    np.testing.assert_array_equal(mantissa.numpy(), expected_m)
    np.testing.assert_array_equal(exponent.numpy(), expected_e)
    assert exponent.dtype is ember.int32
    with pytest.raises(RuntimeError, match="floating-point"):
        ember.frexp(ember.tensor([1, 2]))


def test_nextafter_signbit_angle_copysign_inplace():
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        ember.nextafter(ember.tensor([1]), ember.tensor([2]))
    x = ember.tensor([1.0])
    x.nextafter_(ember.tensor([2.0]))
    assert x.item() == np.nextafter(np.float32(1), np.float32(2))
    assert ember.signbit(ember.tensor([-0.0, 0.0, -1])).tolist() == [True, False, True]
    assert ember.signbit(ember.tensor([-3, 4])).tolist() == [True, False]
    assert ember.angle(ember.tensor([-1, 2])).dtype is ember.float32
    assert math.isnan(ember.angle(ember.tensor([math.nan])).item())
    y = ember.tensor([1.0, -2.0])
    y.copysign_(-1.0)
    assert y.tolist() == [-1.0, -2.0]


def test_isin_forms():
    assert ember.isin(ember.tensor([1, 2, 3]), ember.tensor([2, 5])).tolist() == \
        [False, True, False]
    assert ember.isin(ember.tensor([1, 2]), 2, invert=True).tolist() == [True, False]
    assert ember.isin(2, ember.tensor([1, 2])).item() is True
    assert ember.tensor([1.0, 2.0]).isin(ember.tensor([2])).tolist() == [False, True]
    with pytest.raises(TypeError, match="at least one"):
        ember.isin(1, 2)


def test_fill_and_rsub():
    x = ember.tensor([1.0, math.inf], requires_grad=True)
    out = ember.fill(x, 2.0)
    out.sum().backward()
    assert out.tolist() == [2.0, 2.0] and x.grad.tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="0-dimension value tensor"):
        ember.fill(x, ember.ones(2))
    assert ember.fill(ember.tensor([1, 2]), 2.5).tolist() == [2, 2]
    assert ember.rsub(ember.tensor([1.0, 2.0]), 10.0, alpha=2).tolist() == [8.0, 6.0]
    assert ember.tensor([1, 2]).rsub(5).tolist() == [4, 3]


@requires_torch
def test_fill_diagonal_matches_torch():
    import torch

    for shape, wrap in (((3, 4), False), ((7, 3), True), ((7, 3), False), ((3, 3, 3), False)):
        got = ember.zeros(*shape).fill_diagonal_(2.5, wrap=wrap)
        want = torch.zeros(*shape).fill_diagonal_(2.5, wrap=wrap)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
        ember.zeros(3).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        ember.zeros(2, 3, 4).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ember.zeros(2, 2, requires_grad=True).fill_diagonal_(1)


def test_renorm_errors_and_inplace():
    x = ember.tensor([[3.0, 4.0], [0.3, 0.4]])
    x.renorm_(2, 0, 1.0)
    np.testing.assert_allclose(x.numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        ember.renorm(ember.ones(3), 2, 0, 1)
    with pytest.raises(RuntimeError, match="maxnorm to be >= 0"):
        ember.renorm(ember.ones(2, 2), 2, 0, -1)
    with pytest.raises(RuntimeError, match="non-positive-norm"):
        ember.renorm(ember.ones(2, 2), 0, 0, 1)


def test_range_unravel_split_with_sizes():
    with pytest.warns(UserWarning, match="deprecated"):
        assert ember.range(1, 4).tolist() == [1.0, 2.0, 3.0, 4.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ember.range(4, 1, -1).tolist() == [4.0, 3.0, 2.0, 1.0]
        assert ember.range(0, 1, 0.3).numel() == 4
        assert ember.range(1, 3, dtype=ember.int64).dtype is ember.int64
        with pytest.raises(RuntimeError, match="inconsistent with step sign"):
            ember.range(4, 1)
    rows, cols = ember.unravel_index(ember.tensor([4, 1, -1]), (2, 3))
    assert rows.tolist() == [1, 0, 1] and cols.tolist() == [1, 1, 2]
    with pytest.raises(TypeError, match="integer dtype"):
        ember.unravel_index(ember.tensor([1.0]), (2, 3))
    with pytest.raises(RuntimeError, match="must be in range"):
        ember.unravel_index(ember.tensor([6]), (2, 3))
    pieces = ember.split_with_sizes(ember.arange(5), [2, 3])
    assert [p.tolist() for p in pieces] == [[0, 1], [2, 3, 4]]
    with pytest.raises(RuntimeError, match="sum exactly"):
        ember.split_with_sizes(ember.arange(5), [2, 2])


def test_scatter_family_and_index_put():
    base = ember.zeros(2, 3)
    assert base.select_scatter(ember.ones(3), 0, 1).tolist() == [[0, 0, 0], [1, 1, 1]]
    assert base.slice_scatter(ember.ones(2, 1), 1, 2).tolist() == [[0, 0, 1], [0, 0, 1]]
    assert base.diagonal_scatter(ember.ones(2)).tolist() == [[1, 0, 0], [0, 1, 0]]
    with pytest.raises(RuntimeError, match="size equal to the slice"):
        ember.diagonal_scatter(base, ember.ones(3))
    with pytest.raises(RuntimeError, match="size equal to the slice"):
        ember.as_strided_scatter(ember.zeros(4), ember.ones(3), (2,), (2,))
    x = ember.zeros(3)
    ember.index_put_(x, (ember.tensor([0, 0, 2]),), ember.tensor(1.0), accumulate=True)
    assert x.tolist() == [2.0, 0.0, 1.0]


def test_trapezoid_and_gradient_errors():
    assert ember.trapz(ember.tensor([1.0, 2.0, 3.0]), dx=2.0).item() == 8.0
    assert ember.trapezoid(ember.ones(0)).item() == 0.0
    with pytest.raises(RuntimeError, match="one `x` value for each sample point"):
        ember.trapezoid(ember.ones(3), ember.ones(2))
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        ember.gradient(ember.ones(2), edge_order=2)
    with pytest.raises(RuntimeError, match="edge_order=1 and edge_order=2"):
        ember.gradient(ember.ones(4), edge_order=3)
    with pytest.raises(TypeError, match="spacing"):
        ember.gradient(ember.ones(4), spacing=(["a"],))


@requires_torch
def test_gradient_spacing_forms_match_torch():
    import torch

    rng = np.random.default_rng(0)
    f = rng.standard_normal((4, 5))
    for kwargs in ({"spacing": [2.0, 0.5]}, {"spacing": 3.0, "dim": [1]},
                   {"dim": (0, 1), "edge_order": 2}):
        got = ember.gradient(ember.tensor(f), **kwargs)
        want = torch.gradient(torch.tensor(f), **kwargs)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


@requires_torch
def test_histograms_match_torch():
    import torch

    rng = np.random.default_rng(0)
    x = rng.standard_normal(50).astype(np.float32)
    edges = np.array([-2.0, -0.5, 0.0, 1.0, 3.0], dtype=np.float32)
    for kwargs in ({"bins": 7}, {"bins": 4, "range": (-1.0, 1.0)}, {"bins": 5, "density": True}):
        got = ember.histogram(ember.tensor(x), **kwargs)
        want = torch.histogram(torch.tensor(x), **kwargs)
        np.testing.assert_allclose(got.hist.numpy(), want.hist.numpy(), rtol=1e-5)
        np.testing.assert_allclose(got.bin_edges.numpy(), want.bin_edges.numpy(), rtol=1e-6)
    got = ember.histogram(ember.tensor(x), ember.tensor(edges))
    want = torch.histogram(torch.tensor(x), torch.tensor(edges))
    np.testing.assert_array_equal(got.hist.numpy(), want.hist.numpy())
    points = rng.standard_normal((30, 2))
    got = ember.histogramdd(ember.tensor(points), bins=[3, 4])
    want = torch.histogramdd(torch.tensor(points), bins=[3, 4])
    np.testing.assert_array_equal(got.hist.numpy(), want.hist.numpy())
    assert isinstance(got.bin_edges, tuple) and len(got.bin_edges) == 2
    with pytest.raises(RuntimeError, match="floating-point"):
        ember.histogram(ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="same shape"):
        ember.histogram(ember.ones(3), weight=ember.ones(2))


@requires_torch
def test_binomial_draws_match_torch():
    import torch

    counts = np.array([10.0, 100.0, 3.0, 1000.0, 50.0, 0.0, 20.0, 37.0])
    probs = np.array([0.5, 0.2, 0.9, 0.7, 0.05, 0.3, 1.0, 0.45])
    for seed in (0, 1, 7):
        g = ember.Generator().manual_seed(seed)
        tg = torch.Generator().manual_seed(seed)
        got = ember.binomial(ember.tensor(counts), ember.tensor(probs), generator=g)
        want = torch.binomial(torch.tensor(counts), torch.tensor(probs), generator=tg)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        # the stream is left where torch leaves it
        np.testing.assert_array_equal(ember.rand(3, generator=g).numpy(),
                                      torch.rand(3, generator=tg).numpy())


def test_binomial_errors_and_gradient():
    with pytest.raises(RuntimeError, match="same shape"):
        ember.binomial(ember.ones(2), ember.ones(3))
    with pytest.raises(TypeError, match="'prob' must be a Tensor"):
        ember.binomial(ember.ones(2), 0.5)
    count = ember.full((3,), 5.0, requires_grad=True)
    draw = ember.binomial(count, ember.full((3,), 0.5))
    assert draw.grad_fn.name() == "BinomialBackward0"
    assert bool(((draw >= 0) & (draw <= 5)).all())


def test_limited_unsigned_dtypes():
    x = ember.from_numpy(np.array([1, 2], dtype=np.uint16))
    assert x.dtype is ember.uint16 and ember.uint16.scalar_name == "UInt16"
    y = ember.tensor([1, 2], dtype=ember.uint32)
    assert (y + y).dtype is ember.uint32
    assert (y + ember.tensor([0.5, 0.5])).tolist() == [1.5, 2.5]
    assert ember.iinfo(ember.uint64).max == 2 ** 64 - 1
    assert ember.promote_types(ember.uint64, ember.float32) is ember.float32
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is not "
                                           "supported, attempted to promote UInt32 and Long"):
        y + ember.tensor([1, 2])
    with pytest.raises(RuntimeError, match="UInt16 and Bool"):
        ember.promote_types(ember.uint16, ember.bool)


@requires_torch
def test_limited_unsigned_promotion_matches_torch():
    import torch

    names = ["uint16", "uint32", "uint64", "uint8", "int64", "float32", "bool"]
    for a in names[:3]:
        for b in names:
            try:
                want = str(torch.promote_types(getattr(torch, a), getattr(torch, b)))
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    ember.promote_types(getattr(ember, a), getattr(ember, b))
                continue
            assert repr(ember.promote_types(getattr(ember, a), getattr(ember, b))) == \
                want.replace("torch", "ember")


def test_unsigned_tensors_save_and_load(tmp_path):
    path = tmp_path / "u.safetensors"
    ember.save({"a": ember.tensor([1, 2 ** 40], dtype=ember.uint64)}, path)
    loaded = ember.load(path)["a"]
    assert loaded.dtype is ember.uint64 and loaded.tolist() == [1, 2 ** 40]
