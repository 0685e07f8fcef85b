"""Transforms and TransformedDistribution against PyTorch: forward, inverse, log |det J|,
composition, caching, and the log_prob / cdf / icdf of transformed distributions."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.distributions as ED
from ember.distributions import transforms as ET

torch = pytest.importorskip("torch")
TD = torch.distributions
TT = torch.distributions.transforms

X = np.random.default_rng(0).normal(size=(4, 3))


def _pair(name):
    loc, scale = np.array([0.5, -1.0, 2.0]), np.array([2.0, -0.5, 1.5])
    return {
        "Exp": (ET.ExpTransform(), TT.ExpTransform()),
        "Sigmoid": (ET.SigmoidTransform(), TT.SigmoidTransform()),
        "Tanh": (ET.TanhTransform(), TT.TanhTransform()),
        "AffineTensor": (ET.AffineTransform(ember.tensor(loc), ember.tensor(scale)),
                         TT.AffineTransform(torch.tensor(loc), torch.tensor(scale))),
        "AffineNumber": (ET.AffineTransform(1.0, -3.0), TT.AffineTransform(1.0, -3.0)),
        "AffineEvent": (ET.AffineTransform(ember.tensor(loc), ember.tensor(scale), event_dim=1),
                        TT.AffineTransform(torch.tensor(loc), torch.tensor(scale), event_dim=1)),
        "Power": (ET.PowerTransform(ember.tensor(2.5, dtype=ember.float64)),
                  TT.PowerTransform(torch.tensor(2.5, dtype=torch.float64))),
        "Compose": (ET.ComposeTransform([ET.AffineTransform(0.5, 2.0), ET.ExpTransform()]),
                    TT.ComposeTransform([TT.AffineTransform(0.5, 2.0), TT.ExpTransform()])),
        "Inverse": (ET.ExpTransform().inv, TT.ExpTransform().inv),
    }[name]


NAMES = ["Exp", "Sigmoid", "Tanh", "AffineTensor", "AffineNumber", "AffineEvent", "Power",
         "Compose", "Inverse"]


@pytest.mark.parametrize("name", NAMES)
def test_transform_matches_pytorch(name):
    mine, theirs = _pair(name)
    x = np.abs(X) + 0.1 if name in ("Power", "Inverse") else X
    x_e = ember.tensor(x, requires_grad=True)
    x_t = torch.tensor(x, requires_grad=True)
    y_e, y_t = mine(x_e), theirs(x_t)
    np.testing.assert_allclose(y_e.detach().numpy(), y_t.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(mine.inv(y_e).detach().numpy(), x, rtol=1e-9, atol=1e-12)
    ladj_e, ladj_t = mine.log_abs_det_jacobian(x_e, y_e), theirs.log_abs_det_jacobian(x_t, y_t)
    np.testing.assert_allclose(ladj_e.detach().numpy(), ladj_t.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    (g_e,) = ember.autograd.grad((ladj_e.sum() + y_e.sum()), [x_e])
    (g_t,) = torch.autograd.grad((ladj_t.sum() + y_t.sum()), [x_t])
    np.testing.assert_allclose(g_e.numpy(), g_t.numpy(), rtol=1e-9, atol=1e-12)
    assert mine.bijective == theirs.bijective
    assert mine.domain.event_dim == theirs.domain.event_dim
    assert mine.codomain.event_dim == theirs.codomain.event_dim
    sign_e, sign_t = mine.sign, theirs.sign
    np.testing.assert_array_equal(np.asarray(sign_e.numpy() if hasattr(sign_e, "numpy")
                                             else sign_e),
                                  np.asarray(sign_t.numpy() if hasattr(sign_t, "numpy")
                                             else sign_t))
    assert tuple(mine.forward_shape((4, 3))) == tuple(theirs.forward_shape((4, 3)))


def test_inverse_and_equality():
    exp = ET.ExpTransform()
    assert exp.inv.inv is exp
    assert exp == ET.ExpTransform() and exp != ET.SigmoidTransform()
    assert exp.inv == ET.ExpTransform().inv
    assert ET.AffineTransform(1.0, 2.0) == ET.AffineTransform(1.0, 2.0)
    assert ET.AffineTransform(1.0, 2.0) != ET.AffineTransform(1.0, 3.0)
    compose = ET.ComposeTransform([exp, ET.AffineTransform(0.0, 2.0)])
    assert compose.inv.inv is compose
    assert compose == ET.ComposeTransform([ET.ExpTransform(), ET.AffineTransform(0.0, 2.0)])
    assert repr(exp) == "ExpTransform()" and repr(exp.inv) == "_InverseTransform(ExpTransform())"
    x = ember.tensor([1.0, 2.0])
    np.testing.assert_array_equal(ET.identity_transform(x).numpy(), x.numpy())


def test_cache_returns_the_same_tensor():
    cached = ET.ExpTransform(cache_size=1)
    x = ember.tensor([0.5, 1.0])
    y = cached(x)
    assert cached(x) is y
    assert cached.inv(y) is x
    assert ET.ExpTransform().with_cache(1)._cache_size == 1
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        ET.ExpTransform(cache_size=2)


def _transformed(lib):
    D = ED if lib is ember else TD
    T = ET if lib is ember else TT
    base = D.Normal(lib.tensor([0.3, -0.2], dtype=lib.float64),
                    lib.tensor([1.2, 0.7], dtype=lib.float64))
    return [
        D.TransformedDistribution(base, [T.AffineTransform(1.0, -2.0), T.ExpTransform()]),
        D.TransformedDistribution(base, T.SigmoidTransform()),
        D.TransformedDistribution(base, [T.TanhTransform()]),
        D.TransformedDistribution(base, [T.AffineTransform(lib.zeros(3, 2, dtype=lib.float64),
                                                           2.0)]),
        D.TransformedDistribution(D.Normal(lib.zeros(2, 3, dtype=lib.float64), 1.0),
                                  [T.AffineTransform(0.0, 2.0, event_dim=1)]),
    ]


def test_transformed_distributions_match_pytorch():
    values = [np.array([[0.4, 2.5]]), np.array([[0.2, 0.9]]), np.array([[-0.3, 0.6]]),
              np.random.default_rng(1).normal(size=(3, 2)),
              np.random.default_rng(2).normal(size=(2, 3))]
    for mine, theirs, value in zip(_transformed(ember), _transformed(torch), values):
        assert tuple(mine.batch_shape) == tuple(theirs.batch_shape)
        assert tuple(mine.event_shape) == tuple(theirs.event_shape)
        assert repr(mine.support) == repr(theirs.support)
        np.testing.assert_allclose(mine.log_prob(ember.tensor(value)).numpy(),
                                   theirs.log_prob(torch.tensor(value)).numpy(), rtol=1e-10)
        assert tuple(mine.rsample((5,)).shape) == tuple(theirs.rsample((5,)).shape)
        assert mine.has_rsample
    first_e, first_t = _transformed(ember)[0], _transformed(torch)[0]
    value = np.array([[0.4, 2.5]])
    np.testing.assert_allclose(first_e.cdf(ember.tensor(value)).numpy(),
                               first_t.cdf(torch.tensor(value)).numpy(), rtol=1e-10)
    u = np.array([[0.2, 0.7]])
    np.testing.assert_allclose(first_e.icdf(ember.tensor(u)).numpy(),
                               first_t.icdf(torch.tensor(u)).numpy(), rtol=1e-10)
    big = first_e.expand((4, 2))
    assert tuple(big.batch_shape) == (4, 2)
    assert tuple(big.sample().shape) == (4, 2)


def test_transformed_rsample_carries_gradients():
    loc = ember.tensor([0.3], dtype=ember.float64, requires_grad=True)
    dist = ED.TransformedDistribution(ED.Normal(loc, 1.0), [ED.AffineTransform(0.0, 3.0)])
    (grad,) = ember.autograd.grad(dist.rsample((100,)).mean(), [loc])
    assert grad.item() == pytest.approx(3.0)


def _new_pair(name):
    """(ember transform, PyTorch transform, input x, has log|det J|, inverse exact)."""
    rng = np.random.default_rng(3)
    square = rng.normal(size=(2, 3, 3))
    return {
        "Abs": (ET.AbsTransform(), TT.AbsTransform(), X, False, False),
        "Softplus": (ET.SoftplusTransform(), TT.SoftplusTransform(), X, True, True),
        "Softmax": (ET.SoftmaxTransform(), TT.SoftmaxTransform(), X, False, False),
        "StickBreaking": (ET.StickBreakingTransform(), TT.StickBreakingTransform(), X, True,
                          True),
        "LowerCholesky": (ET.LowerCholeskyTransform(), TT.LowerCholeskyTransform(), square,
                          False, False),
        "PositiveDefinite": (ET.PositiveDefiniteTransform(), TT.PositiveDefiniteTransform(),
                             square, False, False),
        "CorrCholesky": (ET.CorrCholeskyTransform(), TT.CorrCholeskyTransform(),
                         rng.normal(size=(4, 6)), True, True),
        "Reshape": (ET.ReshapeTransform((3,), (3, 1)), TT.ReshapeTransform((3,), (3, 1)), X,
                    True, True),
        "Independent": (ET.IndependentTransform(ET.ExpTransform(), 1),
                        TT.IndependentTransform(TT.ExpTransform(), 1), X, True, True),
        "Cat": (ET.CatTransform([ET.ExpTransform(), ET.AffineTransform(1.0, 2.0)], dim=1,
                                lengths=[1, 2]),
                TT.CatTransform([TT.ExpTransform(), TT.AffineTransform(1.0, 2.0)], dim=1,
                                lengths=[1, 2]), X, True, True),
        "CatEvent": (ET.CatTransform([ET.StickBreakingTransform(), ET.ExpTransform()], dim=-1,
                                     lengths=[2, 1]),
                     TT.CatTransform([TT.StickBreakingTransform(), TT.ExpTransform()], dim=-1,
                                     lengths=[2, 1]), X, True, False),
        "Stack": (ET.StackTransform([ET.ExpTransform(), ET.TanhTransform(),
                                     ET.SoftplusTransform()], dim=1),
                  TT.StackTransform([TT.ExpTransform(), TT.TanhTransform(),
                                     TT.SoftplusTransform()], dim=1), X, True, True),
        "CumulativeDistribution": (
            ET.CumulativeDistributionTransform(ED.Normal(ember.tensor(0.5), ember.tensor(2.0))),
            TT.CumulativeDistributionTransform(TD.Normal(torch.tensor(0.5), torch.tensor(2.0))),
            X, True, True),
    }[name]


NEW_NAMES = ["Abs", "Softplus", "Softmax", "StickBreaking", "LowerCholesky", "PositiveDefinite",
             "CorrCholesky", "Reshape", "Independent", "Cat", "Stack", "CumulativeDistribution"]


@pytest.mark.parametrize("name", NEW_NAMES)
def test_new_transforms_match_pytorch(name):
    mine, theirs, x, has_jacobian, exact_inverse = _new_pair(name)
    x_e = ember.tensor(x, requires_grad=True)
    x_t = torch.tensor(x, requires_grad=True)
    y_e, y_t = mine(x_e), theirs(x_t)
    np.testing.assert_allclose(y_e.detach().numpy(), y_t.detach().numpy(), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(mine.inv(y_e).detach().numpy(),
                               theirs.inv(y_t).detach().numpy(), rtol=1e-9, atol=1e-12)
    if exact_inverse:
        np.testing.assert_allclose(mine.inv(y_e).detach().numpy(), x, rtol=1e-8, atol=1e-10)
    loss_e, loss_t = y_e.sum(), y_t.sum()
    if has_jacobian:
        ladj_e = mine.log_abs_det_jacobian(x_e, y_e)
        ladj_t = theirs.log_abs_det_jacobian(x_t, y_t)
        np.testing.assert_allclose(ladj_e.detach().numpy(), ladj_t.detach().numpy(),
                                   rtol=1e-10, atol=1e-12)
        loss_e, loss_t = loss_e + ladj_e.sum(), loss_t + ladj_t.sum()
    (g_e,) = ember.autograd.grad(loss_e, [x_e])
    (g_t,) = torch.autograd.grad(loss_t, [x_t])
    np.testing.assert_allclose(g_e.numpy(), g_t.numpy(), rtol=1e-8, atol=1e-10)
    assert mine.bijective == theirs.bijective
    assert mine.domain.event_dim == theirs.domain.event_dim
    assert mine.codomain.event_dim == theirs.codomain.event_dim
    assert repr(mine.codomain) == repr(theirs.codomain)
    shape = tuple(x.shape)
    assert tuple(mine.forward_shape(shape)) == tuple(theirs.forward_shape(shape))
    out = tuple(y_t.shape)
    assert tuple(mine.inverse_shape(out)) == tuple(theirs.inverse_shape(out))
    assert bool(mine.codomain.check(y_e).all())


def test_cat_transform_event_dims_match_pytorch():
    mine, theirs, x, _, _ = _new_pair("CatEvent")
    x_e, x_t = ember.tensor(x), torch.tensor(x)
    np.testing.assert_allclose(mine(x_e).numpy(), theirs(x_t).numpy(), rtol=1e-12)
    assert mine.event_dim == theirs.event_dim == 1


def test_transform_shape_and_argument_errors():
    with pytest.raises(ValueError, match="different numbers of elements"):
        ET.ReshapeTransform((3,), (2, 2))
    with pytest.raises(ValueError, match="Shape mismatch"):
        ET.ReshapeTransform((3,), (3, 1)).forward_shape((4, 2))
    with pytest.raises(ValueError, match="not a flattened lower-diagonal number"):
        ET.CorrCholeskyTransform().forward_shape((4,))
    with pytest.raises(ValueError, match="Input is not square"):
        ET.CorrCholeskyTransform().inverse_shape((3, 4))
    with pytest.raises(ValueError, match="Too few dimensions"):
        ET.IndependentTransform(ET.ExpTransform(), 2)(ember.zeros(3))
    with pytest.raises(ValueError, match="is not the sum of lengths"):
        ET.CatTransform([ET.ExpTransform()], dim=0, lengths=[2])(ember.zeros(3))
    with pytest.raises(ValueError, match="is not the number of transforms"):
        ET.StackTransform([ET.ExpTransform()], dim=0)(ember.zeros(3))
    with pytest.raises(TypeError, match="must be a Transform"):
        ET.StackTransform([ED.Normal(0.0, 1.0)])
    with pytest.raises(NotImplementedError):
        ET.AbsTransform().log_abs_det_jacobian(ember.zeros(1), ember.zeros(1))
    cached = ET.IndependentTransform(ET.ExpTransform(), 1).with_cache(1)
    x = ember.zeros(2)
    assert cached.inv(cached(x)) is x


def test_constraint_registry_matches_pytorch():
    """biject_to / transform_to pick PyTorch's transform for each constraint: the same
    values on random inputs."""
    EC, TC = ED.constraints, TD.constraints
    pairs = [(EC.real, TC.real, (4, 3)), (EC.positive, TC.positive, (4, 3)),
             (EC.nonnegative, TC.nonnegative, (4, 3)),
             (EC.greater_than(1.5), TC.greater_than(1.5), (4, 3)),
             (EC.less_than(-1.0), TC.less_than(-1.0), (4, 3)),
             (EC.unit_interval, TC.unit_interval, (4, 3)),
             (EC.interval(-2.0, 3.0), TC.interval(-2.0, 3.0), (4, 3)),
             (EC.half_open_interval(0.0, 2.0), TC.half_open_interval(0.0, 2.0), (4, 3)),
             (EC.simplex, TC.simplex, (4, 3)), (EC.real_vector, TC.real_vector, (4, 3)),
             (EC.independent(EC.positive, 1), TC.independent(TC.positive, 1), (4, 3)),
             (EC.lower_cholesky, TC.lower_cholesky, (2, 3, 3)),
             (EC.positive_definite, TC.positive_definite, (2, 3, 3)),
             (EC.corr_cholesky, TC.corr_cholesky, (2, 3)),
             (EC.cat([EC.positive, EC.real], dim=-1, lengths=[1, 2]),
              TC.cat([TC.positive, TC.real], dim=-1, lengths=[1, 2]), (4, 3)),
             (EC.stack([EC.positive, EC.unit_interval, EC.real], dim=-1),
              TC.stack([TC.positive, TC.unit_interval, TC.real], dim=-1), (4, 3))]
    rng = np.random.default_rng(0)
    for mine, theirs, shape in pairs:
        x = rng.normal(size=shape)
        for registry_e, registry_t in ((ED.transform_to, TD.transform_to),
                                       (ED.biject_to, TD.biject_to)):
            try:
                t_t = registry_t(theirs)
            except NotImplementedError:
                with pytest.raises(NotImplementedError, match="Cannot transform"):
                    registry_e(mine)
                continue
            t_e = registry_e(mine)
            y_e = t_e(ember.tensor(x))
            np.testing.assert_allclose(y_e.numpy(), t_t(torch.tensor(x)).numpy(), rtol=1e-10,
                                       atol=1e-12, err_msg=repr(theirs))
            assert bool(mine.check(y_e).all()), repr(theirs)
            if t_t.bijective:
                ladj_t = t_t.log_abs_det_jacobian(torch.tensor(x), t_t(torch.tensor(x)))
                ladj_e = t_e.log_abs_det_jacobian(ember.tensor(x), y_e)
                np.testing.assert_allclose(ladj_e.numpy(), ladj_t.numpy(), rtol=1e-10,
                                           atol=1e-12, err_msg=repr(theirs))


def test_constraint_registry_register_and_errors():
    registry = ED.constraint_registry.ConstraintRegistry()
    with pytest.raises(NotImplementedError, match="Cannot transform _GreaterThan"):
        registry(ED.constraints.positive)
    registry.register(ED.constraints.positive, lambda c: ET.SoftplusTransform())
    assert isinstance(registry(ED.constraints.positive), ET.SoftplusTransform)
    with pytest.raises(TypeError, match="Constraint subclass or instance"):
        registry.register(int, lambda c: None)
    with pytest.raises(NotImplementedError):
        ED.biject_to(ED.constraints.lower_cholesky)  # PyTorch has no bijection there either
