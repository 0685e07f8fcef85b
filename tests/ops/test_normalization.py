"""Normalization edge cases beyond the op table: running statistics, evaluation mode,
error messages, numerical stability, zero vectors."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ..conftest import requires_torch


@requires_torch
@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 2)])
def test_batch_norm_running_statistics_match_torch(shape):
    import torch

    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape) * 3 + 1
    rm, rv = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    e_rm, e_rv = ember.tensor(rm), ember.tensor(rv)
    t_rm, t_rv = torch.tensor(rm), torch.tensor(rv)
    version = e_rm._version
    out = F.batch_norm(ember.tensor(x), e_rm, e_rv, training=True, momentum=0.3)
    tout = torch.nn.functional.batch_norm(torch.tensor(x), t_rm, t_rv, training=True,
                                          momentum=0.3)
    np.testing.assert_allclose(out.numpy(), tout.numpy(), atol=1e-12)
    np.testing.assert_allclose(e_rm.numpy(), t_rm.numpy(), atol=1e-12)
    np.testing.assert_allclose(e_rv.numpy(), t_rv.numpy(), atol=1e-12)
    assert e_rm._version > version
    # evaluation uses the running statistics
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    out = F.batch_norm(ember.tensor(x), e_rm, e_rv, ember.tensor(w), ember.tensor(b))
    tout = torch.nn.functional.batch_norm(torch.tensor(x), t_rm, t_rv, torch.tensor(w),
                                          torch.tensor(b))
    np.testing.assert_allclose(out.numpy(), tout.numpy(), atol=1e-12)


@requires_torch
def test_instance_norm_running_statistics_match_torch():
    import torch

    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 2, 5)) * 2
    e_rm, e_rv = ember.zeros(2, dtype=ember.float64), ember.ones(2, dtype=ember.float64)
    t_rm, t_rv = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
    out = F.instance_norm(ember.tensor(x), e_rm, e_rv, momentum=0.2)
    tout = torch.nn.functional.instance_norm(torch.tensor(x), t_rm, t_rv, momentum=0.2)
    np.testing.assert_allclose(out.numpy(), tout.numpy(), atol=1e-12)
    np.testing.assert_allclose(e_rm.numpy(), t_rm.numpy(), atol=1e-12)
    np.testing.assert_allclose(e_rv.numpy(), t_rv.numpy(), atol=1e-12)


def test_batch_norm_errors():
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when "
                                         "training, got input size \\[1, 3\\]"):
        F.batch_norm(ember.zeros(1, 3), None, None, training=True)
    with pytest.raises(RuntimeError, match="running_mean and running_var must be defined"):
        F.batch_norm(ember.zeros(2, 3), None, None)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(ember.zeros(2, 3), ember.zeros(4), ember.ones(3))


def test_layer_norm_and_group_norm_errors():
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with "
                                           r"shape \[\*, 4\], but got input of size\[2, 3\]"):
        F.layer_norm(ember.zeros(2, 3), (4,))
    with pytest.raises(RuntimeError, match=r"Expected number of channels in input to be "
                                           r"divisible by num_groups, but got input of shape "
                                           r"\[2, 6, 4\] and num_groups=4"):
        F.group_norm(ember.zeros(2, 6, 4), 4)
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality input"):
        F.local_response_norm(ember.zeros(2, 3), 2)


@requires_torch
def test_layer_norm_is_stable_for_a_large_offset():
    import torch

    rng = np.random.default_rng(8)
    x = 1e8 + rng.standard_normal((4, 16))
    ex = ember.tensor(x).requires_grad_()
    tx = torch.tensor(x, requires_grad=True)
    out = F.layer_norm(ex, (16,))
    tout = torch.nn.functional.layer_norm(tx, (16,))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-6)
    upstream = rng.standard_normal((4, 16))
    out.backward(ember.tensor(upstream))
    tout.backward(torch.tensor(upstream))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-6)


@requires_torch
def test_rms_norm_default_eps_is_the_dtype_epsilon():
    import torch

    x = np.zeros((2, 3), dtype=np.float32)
    x[0] = 1e-4
    out = F.rms_norm(ember.tensor(x), (3,))
    tout = torch.nn.functional.rms_norm(torch.tensor(x), (3,))
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-5)


@requires_torch
def test_normalize_zero_vector_has_finite_gradient():
    import torch

    x = np.array([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0]])
    ex = ember.tensor(x).requires_grad_()
    tx = torch.tensor(x, requires_grad=True)
    out = F.normalize(ex)
    tout = torch.nn.functional.normalize(tx)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy())
    out.sum().backward()
    tout.sum().backward()
    assert np.isfinite(ex.grad.numpy()).all()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-12)


@requires_torch
def test_local_response_norm_on_5d_input():
    import torch

    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 6, 2, 3, 2))
    np.testing.assert_allclose(
        F.local_response_norm(ember.tensor(x), 4, alpha=0.5, beta=0.6, k=1.5).numpy(),
        torch.nn.functional.local_response_norm(torch.tensor(x), 4, alpha=0.5, beta=0.6,
                                                k=1.5).numpy(), atol=1e-12)


def test_empty_batch_and_momentum_type():
    out = F.batch_norm(ember.zeros(0, 3, 2), None, None, training=True)
    assert tuple(out.shape) == (0, 3, 2)
    assert tuple(F.instance_norm(ember.zeros(0, 3, 2)).shape) == (0, 3, 2)
    with pytest.raises(TypeError, match="argument 'momentum' must be float"):
        F.batch_norm(ember.zeros(2, 3), ember.zeros(3), ember.ones(3), training=True,
                     momentum=None)
