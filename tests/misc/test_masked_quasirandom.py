"""ember.masked against torch.masked, and SobolEngine against torch's draws."""
from __future__ import annotations

import numpy as np
import pytest

import ember

from ..conftest import requires_torch

_REDUCTIONS = ["sum", "mean", "amax", "amin", "prod", "var", "std", "logsumexp", "norm"]


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    mask = rng.random((3, 4)) > 0.4
    mask[2] = False  # a row with nothing kept
    return x, mask


@requires_torch
@pytest.mark.parametrize("name", _REDUCTIONS)
def test_reductions_match_torch(name):
    import torch
    import torch.masked as tm

    x, mask = _data()
    for dim in (1, 0, None):
        args = (2.0,) if name == "norm" else ()
        dims = () if dim is None else (dim,)
        got = getattr(ember.masked, name)(ember.tensor(x), *args, *dims,
                                          mask=ember.tensor(mask))
        want = getattr(tm, name)(torch.tensor(x), *args, *dims, mask=torch.tensor(mask))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12,
                                   equal_nan=True, err_msg=f"{name} dim={dim}")


@requires_torch
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin", "cumsum", "cumprod"])
def test_along_dim_matches_torch(name):
    import torch
    import torch.masked as tm

    x, mask = _data()
    got = getattr(ember.masked, name)(ember.tensor(x), 1, mask=ember.tensor(mask))
    want = getattr(tm, name)(torch.tensor(x), 1, mask=torch.tensor(mask))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12,
                               equal_nan=True)


@requires_torch
def test_normalize_argmax_logaddexp():
    import torch
    import torch.masked as tm

    x, mask = _data()
    got = ember.masked.normalize(ember.tensor(x), 2.0, 1, mask=ember.tensor(mask))
    want = tm.normalize(torch.tensor(x), 2.0, 1, mask=torch.tensor(mask))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    index = ember.masked.argmax(ember.tensor(x), 1, mask=ember.tensor(mask))
    assert index.dtype is ember.int64  # (torch.masked returns these as floats)
    assert index[:2].tolist() == tm.argmax(torch.tensor(x), 1, mask=torch.tensor(mask))[
        :2].long().tolist()
    a = ember.masked.logaddexp(ember.tensor(x), ember.tensor(x), input_mask=ember.tensor(mask),
                               other_mask=ember.tensor(~mask))
    np.testing.assert_allclose(a.numpy(), x, rtol=1e-12)


def test_masked_gradient_only_reaches_kept_elements():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    keep = ember.tensor([[True, False], [True, True]])
    ember.masked.mean(x, 1, mask=keep).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0], [0.5, 0.5]]


def test_masked_errors_and_defaults():
    x = ember.ones(2, 3)
    assert ember.masked.sum(x).item() == 6.0  # no mask: everything kept
    assert ember.masked.sum(x, 1, mask=ember.tensor([True, False, True])).tolist() == [2, 2]
    with pytest.raises(ValueError, match="bool Tensor"):
        ember.masked.sum(x, mask=ember.ones(2, 3))
    with pytest.raises(RuntimeError, match="does not broadcast"):
        ember.masked.sum(x, mask=ember.ones(4, dtype=ember.bool))
    with pytest.raises(ValueError, match="only one of unbiased and correction"):
        ember.masked.var(x, unbiased=True, correction=1)
    ints = ember.tensor([[1, 5], [2, 3]])
    assert ember.masked.amax(ints, 1, mask=ember.tensor([[True, False], [False, False]])
                             ).tolist() == [1, np.iinfo(np.int64).min]


@requires_torch
@pytest.mark.parametrize("dimension", [1, 5, 40, 1111])
@pytest.mark.parametrize("scramble", [False, True])
def test_sobol_matches_torch(dimension, scramble):
    import torch

    ours = ember.quasirandom.SobolEngine(dimension, scramble=scramble, seed=7)
    theirs = torch.quasirandom.SobolEngine(dimension, scramble=scramble, seed=7)
    for step in (lambda e, d: e.draw(1, dtype=d), lambda e, d: e.draw(9, dtype=d)):
        a = step(ours, ember.float64)
        b = step(theirs, torch.float64)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    ours.fast_forward(5)
    theirs.fast_forward(5)
    np.testing.assert_array_equal(ours.draw(3).numpy(), theirs.draw(3).numpy())
    ours.reset()
    theirs.reset()
    np.testing.assert_array_equal(ours.draw_base2(2).numpy(), theirs.draw_base2(2).numpy())
    assert repr(ours) == repr(theirs)


@requires_torch
def test_sobol_global_seed_and_high_dimensions():
    import torch

    ember.manual_seed(3)
    torch.manual_seed(3)
    a = ember.quasirandom.SobolEngine(3, scramble=True).draw(4)
    b = torch.quasirandom.SobolEngine(3, scramble=True).draw(4)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    pytest.importorskip("scipy", reason="dimensions above 1111 read SciPy's table")
    a = ember.quasirandom.SobolEngine(1500).draw(3)
    b = torch.quasirandom.SobolEngine(1500).draw(3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_sobol_balance_and_errors():
    engine = ember.quasirandom.SobolEngine(2)
    points = engine.draw_base2(3)
    assert sorted(points[:, 0].tolist()) == [i / 8 for i in range(8)]
    with pytest.raises(ValueError, match="require n to be a power of 2"):
        engine.draw_base2(1) if engine.draw(1) is not None else None
    with pytest.raises(ValueError, match="\\[1, 21201\\]"):
        ember.quasirandom.SobolEngine(0)
    out = ember.empty(0)
    assert ember.quasirandom.SobolEngine(2).draw(3, out=out) is out and out.shape == (3, 2)
