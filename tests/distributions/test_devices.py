"""Every distribution on every available device (CUDA where CuPy sees a GPU): the same
log_prob, entropy and KL as on the CPU, samples on the parameters' device, and gradients
through rsample."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.distributions as ED

from .cases import CASES


def _build(case, device, requires_grad=False):
    rng = np.random.default_rng(0)
    params = {k: ember.tensor(make(rng), dtype=ember.float64, device=device,
                              requires_grad=requires_grad)
              for k, make in case.params.items()}
    return case.build(ED, params), params, rng


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_distribution_on_device(case, device):
    dist, params, _ = _build(case, device, requires_grad=True)
    reference, _, _ = _build(case, "cpu")
    values = case.values(np.random.default_rng(5), {k: v.detach().cpu().numpy()
                                                      for k, v in params.items()})
    log_prob = dist.log_prob(ember.tensor(values, device=device))
    assert log_prob.device.type == ember.device(device).type
    np.testing.assert_allclose(log_prob.detach().cpu().numpy(),
                               reference.log_prob(ember.tensor(values)).numpy(), rtol=1e-10)
    if case.entropy:
        np.testing.assert_allclose(dist.entropy().detach().cpu().numpy(),
                                   reference.entropy().numpy(), rtol=1e-10)
    try:
        kl = ED.kl_divergence(dist, dist)
    except NotImplementedError:  # no formula for this family (nor in PyTorch)
        kl = None
    if kl is not None:
        np.testing.assert_allclose(kl.detach().cpu().numpy(), 0.0, atol=1e-10)
    x = dist.sample((3,))
    assert x.device.type == ember.device(device).type
    if dist.has_rsample:
        draws = dist.rsample((3,))
        grads = ember.autograd.grad(draws.sum(), list(params.values()), allow_unused=True)
        assert any(g is not None and g.device.type == ember.device(device).type for g in grads)
