"""Rprop against PyTorch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="PyTorch is the oracle")


def _run(lib, w0, steps, **kwargs):
    w = lib.tensor(w0.copy(), requires_grad=True)
    opt = lib.optim.Rprop([w], **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        (w ** 3 - w).sum().backward()
        opt.step()
    return w.detach().numpy(), opt


@pytest.mark.parametrize("kwargs", [
    {}, {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}, {"maximize": True}])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matches_pytorch(kwargs, dtype):
    w0 = np.random.default_rng(0).standard_normal(6).astype(dtype)
    ours, _ = _run(ember, w0, 10, **kwargs)
    theirs, _ = _run(torch, w0, 10, **kwargs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6 if dtype == "float32" else 1e-12)


def test_state_dict_resumes():
    w0 = np.random.default_rng(1).standard_normal(4)
    _, opt = _run(ember, w0, 3)
    state = opt.state_dict()
    assert set(state["state"][0]) == {"step", "prev", "step_size"}
    w = ember.tensor(w0.copy(), requires_grad=True)
    resumed = ember.optim.Rprop([w])
    resumed.load_state_dict(state)
    assert resumed.state[w]["step"].item() == 3


def test_bad_arguments():
    w = ember.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="eta"):
        ember.optim.Rprop([w], etas=(1.5, 1.2))
    with pytest.raises(ValueError, match="learning rate"):
        ember.optim.Rprop([w], lr=-1.0)
