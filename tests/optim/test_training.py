"""An end-to-end training loop: nn.Linear + DataLoader + optimizer + scheduler gives the
same weights as the same loop in PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from tests.conftest import requires_torch


def _train(lib, weight, bias, x, y, optimizer_name, options):
    from_numpy = lib.tensor
    model = lib.nn.Sequential(lib.nn.Linear(3, 4, dtype=lib.float64), lib.nn.Tanh(),
                              lib.nn.Linear(4, 1, dtype=lib.float64))
    with lib.no_grad():
        model[0].weight.copy_(from_numpy(weight[0]))
        model[0].bias.copy_(from_numpy(bias[0]))
        model[2].weight.copy_(from_numpy(weight[1]))
        model[2].bias.copy_(from_numpy(bias[1]))
    data = lib.utils.data.TensorDataset(from_numpy(x), from_numpy(y))
    loader = lib.utils.data.DataLoader(data, batch_size=4)
    optimizer = getattr(lib.optim, optimizer_name)(model.parameters(), **options)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    losses = []
    for _ in range(4):
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss = ((model(inputs) - targets) ** 2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
    params = [p.detach().numpy() for p in model.parameters()]
    return params, losses


@requires_torch
@pytest.mark.parametrize("optimizer_name,options", [
    ("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, amsgrad=True)), ("RMSprop", dict(lr=0.01, centered=True))])
def test_training_matches_pytorch(optimizer_name, options):
    import torch

    rng = np.random.default_rng(0)
    weight = [rng.normal(size=(4, 3)), rng.normal(size=(1, 4))]
    bias = [rng.normal(size=4), rng.normal(size=1)]
    x = rng.normal(size=(10, 3))
    y = np.sin(x.sum(axis=1, keepdims=True))
    ours, our_losses = _train(ember, weight, bias, x, y, optimizer_name, options)
    theirs, their_losses = _train(torch, weight, bias, x, y, optimizer_name, options)
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-10)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert our_losses[-1] < our_losses[0]
