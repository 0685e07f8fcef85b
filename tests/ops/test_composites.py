"""The composite ops' error paths and the forms the op table does not reach."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F

torch = pytest.importorskip("torch", reason="PyTorch is the oracle")


def test_triplet_margin_with_distance_loss_module_matches_pytorch():
    rng = np.random.default_rng(0)
    a, p, n = (rng.random((4, 3)) for _ in range(3))
    for kwargs in ({}, {"swap": True, "margin": 0.3}, {"reduction": "none"}):
        ours = ember.nn.TripletMarginWithDistanceLoss(**kwargs)(
            *map(ember.tensor, (a, p, n)))
        theirs = torch.nn.TripletMarginWithDistanceLoss(**kwargs)(
            *map(torch.tensor, (a, p, n)))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    cosine = lambda x, y: 1 - F.cosine_similarity(x, y)  # noqa: E731
    loss = ember.nn.TripletMarginWithDistanceLoss(distance_function=cosine)
    assert loss(*map(ember.tensor, (a, p, n))).ndim == 0
    with pytest.raises(ValueError, match="margin"):
        ember.nn.TripletMarginWithDistanceLoss(margin=0)
    with pytest.raises(ValueError, match="not a valid value"):
        F.triplet_margin_with_distance_loss(*map(ember.tensor, (a, p, n)), reduction="x")


def test_error_paths():
    with pytest.raises(RuntimeError, match="divisible by groups"):
        F.channel_shuffle(ember.ones(1, 3, 2), 2)
    with pytest.raises(RuntimeError, match="2D"):
        F.pdist(ember.ones(3))
    with pytest.raises(RuntimeError, match="greater than 1"):
        ember.linalg.vander(ember.ones(3), N=1)
    with pytest.raises(RuntimeError, match="prod"):
        ember.linalg.tensorinv(ember.ones(2, 3), ind=1)
    with pytest.raises(RuntimeError, match="strictly positive"):
        ember.linalg.tensorinv(ember.ones(2, 2), ind=0)
    with pytest.raises(RuntimeError, match="prod"):
        ember.linalg.tensorsolve(ember.ones(2, 3), ember.ones(2))
    with pytest.raises(TypeError, match="at least one Tensor"):
        ember.special.chebyshev_polynomial_t(0.5, 2)


def test_polynomial_scalar_forms_match_pytorch():
    x = np.linspace(-1, 1, 5)
    ours = ember.special.legendre_polynomial_p(0.3, ember.tensor([0, 1, 2, 7])).numpy()
    theirs = torch.special.legendre_polynomial_p(0.3, torch.tensor([0, 1, 2, 7])).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    ours = ember.special.hermite_polynomial_h(ember.tensor(x), 4.7).numpy()
    theirs = torch.special.hermite_polynomial_h(torch.tensor(x), 4.7).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_vander_gradient_at_zero_is_finite():
    x = ember.tensor([0.0, 2.0], requires_grad=True)
    ember.linalg.vander(x, N=4).sum().backward()
    t = torch.tensor([0.0, 2.0], requires_grad=True)
    torch.linalg.vander(t, N=4).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_with_indices_forms():
    x = ember.randn(1, 2, 6, 6)
    out, idx = F.max_pool2d_with_indices(x, 2)
    ref, ref_idx = F.max_pool2d(x, 2, return_indices=True)
    assert ember.equal(out, ref) and ember.equal(idx, ref_idx)
    out, idx = F.adaptive_max_pool1d_with_indices(ember.randn(1, 2, 7), 3)
    assert out.shape == idx.shape == (1, 2, 3)


def test_tensor_queries_match_pytorch():
    for data in ([2.0], [0], [[True]]):
        assert ember.is_nonzero(ember.tensor(data)) == torch.is_nonzero(torch.tensor(data))
    for data in ([], [1, 2]):
        with pytest.raises(RuntimeError, match="ambiguous"):
            ember.tensor(data).is_nonzero()
    x = ember.ones(2, 3)
    assert x.is_same_size(ember.zeros(2, 3)) and not ember.is_same_size(x, ember.ones(3, 2))
    for dtype in ("uint8", "int8", "float32", "bool"):
        assert ember.zeros(1, dtype=getattr(ember, dtype)).is_signed() == \
            torch.zeros(1, dtype=getattr(torch, dtype)).is_signed(), dtype


def test_split_with_sizes_and_inplace_cumulative():
    x = ember.arange(12.0).reshape(3, 4)
    parts = x.split_with_sizes([1, 3], dim=1)
    assert [p.shape[1] for p in parts] == [1, 3]
    with pytest.raises(RuntimeError, match="sum exactly"):
        x.split_with_sizes([1, 2], dim=1)
    y = x.clone()
    assert y.cumsum_(0) is y and y.tolist() == ember.cumsum(x, 0).tolist()
    z = x.clone() + 1
    assert z.cumprod_(1).tolist() == ember.cumprod(x + 1, 1).tolist()
    with pytest.raises(RuntimeError, match="not expandable"):
        x.sum_to_size(2, 4)


def test_variable():
    from ember.autograd import Variable

    t = ember.ones(2)
    v = Variable(t, requires_grad=True)
    assert v.requires_grad and v.is_leaf and not t.requires_grad
    (v * 2).sum().backward()
    assert v.grad.tolist() == [2.0, 2.0]
    assert isinstance(t, Variable) and not isinstance([1.0], Variable)
    with pytest.raises(TypeError, match="has to be a tensor"):
        Variable([1.0])
    with pytest.raises(RuntimeError, match="volatile"):
        Variable(t, volatile=True)
