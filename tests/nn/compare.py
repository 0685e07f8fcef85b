"""Run the same model in PyTorch and ember (float64) and compare outputs and gradients."""
from __future__ import annotations

import numpy as np

import ember


class Const:
    """An input array that gets no gradient (labels, targets)."""

    def __init__(self, array):
        self.array = array


def rand(*shape, seed=0, low=-2.0, high=2.0):
    """A float64 array of ``shape``, the same on every run (seeded by the shape too)."""
    return np.random.default_rng(seed + sum(shape)).uniform(low, high, shape)


def as_input(T, x):
    """An input of the tables for library ``T``: a float array becomes a tensor that
    requires grad, an integer one or a Const a plain tensor; anything else stays as is."""
    if isinstance(x, Const):
        return T.tensor(x.array)
    if isinstance(x, np.ndarray):
        return T.tensor(x.copy(), requires_grad=x.dtype.kind == "f")
    return x


def to_ember(value, requires_grad=False):
    """A torch tensor as an ember tensor with the same values (float64 stays float64)."""
    return ember.tensor(value.detach().cpu().numpy().copy(), requires_grad=requires_grad)


def copy_weights(torch_module, ember_module) -> None:
    """Load torch's state_dict into the ember module (the keys must match exactly)."""
    state = {k: to_ember(v) for k, v in torch_module.state_dict().items()}
    ember_module.load_state_dict(state)


def _flatten(output):
    if isinstance(output, (tuple, list)):
        out = []
        for o in output:
            out.extend(_flatten(o))
        return out
    return [] if output is None else [output]


def assert_close(ember_value, torch_value, atol=1e-10, rtol=1e-7, what="value"):
    e = ember_value.detach().numpy() if hasattr(ember_value, "detach") else ember_value
    t = torch_value.detach().cpu().numpy()
    assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {e.shape} != {t.shape}"
    np.testing.assert_allclose(e, t, atol=atol, rtol=rtol, err_msg=what)


def check_module(torch_module, ember_module, *inputs, atol=1e-10, rtol=1e-7, seed=0,
                 call=None, grad_inputs=True):
    """Copy weights torch -> ember, run both in float64 on ``inputs`` (numpy arrays, or
    ints/None passed as they are), backward a random upstream gradient through every
    floating output, and compare outputs, input gradients and parameter gradients."""
    import torch

    torch_module = torch_module.double()
    ember_module = ember_module.double()
    copy_weights(torch_module, ember_module)
    torch_inputs, ember_inputs = [], []
    for x in inputs:
        if isinstance(x, Const):
            t, e = torch.tensor(x.array), ember.tensor(x.array)
        elif isinstance(x, np.ndarray):
            floating = x.dtype.kind == "f"
            t = torch.tensor(x, requires_grad=floating and grad_inputs)
            e = ember.tensor(x, requires_grad=floating and grad_inputs)
        elif isinstance(x, tuple) and x and isinstance(x[0], np.ndarray):
            t = tuple(torch.tensor(a, requires_grad=grad_inputs) for a in x)
            e = tuple(ember.tensor(a, requires_grad=grad_inputs) for a in x)
        else:
            t = e = x
        torch_inputs.append(t)
        ember_inputs.append(e)
    call = call or (lambda m, *a: m(*a))
    torch_out = _flatten(call(torch_module, *torch_inputs))
    ember_out = _flatten(call(ember_module, *ember_inputs))
    assert len(torch_out) == len(ember_out)
    rng = np.random.default_rng(seed)
    torch_terms, ember_terms = [], []
    for i, (t, e) in enumerate(zip(torch_out, ember_out)):
        assert_close(e, t, atol, rtol, what=f"output {i}")
        if t.requires_grad:
            assert e.requires_grad, f"output {i} should require grad"
            upstream = rng.standard_normal(tuple(t.shape))
            torch_terms.append((t * torch.tensor(upstream)).sum())
            ember_terms.append((e * ember.tensor(upstream)).sum())
    if not torch_terms:
        return torch_out, ember_out
    sum(torch_terms).backward()
    sum(ember_terms[1:], ember_terms[0]).backward()
    for i, (t, e) in enumerate(zip(_flatten(torch_inputs), _flatten(ember_inputs))):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            assert e.grad is not None, f"input {i} got no gradient"
            assert_close(e.grad, t.grad, atol, rtol, what=f"grad of input {i}")
    ember_params = dict(ember_module.named_parameters())
    for name, p in torch_module.named_parameters():
        e = ember_params[name]
        if p.grad is None:
            assert e.grad is None or not np.any(e.grad.numpy()), f"{name} should get no grad"
            continue
        assert e.grad is not None, f"parameter {name} got no gradient"
        assert_close(e.grad, p.grad, atol, rtol, what=f"grad of {name}")
    return torch_out, ember_out


def same_repr(torch_module, ember_module) -> None:
    assert repr(ember_module) == repr(torch_module).replace("torch.", "ember.")


def same_keys(torch_module, ember_module) -> None:
    assert list(ember_module.state_dict()) == list(torch_module.state_dict())
    assert [n for n, _ in ember_module.named_parameters()] == \
        [n for n, _ in torch_module.named_parameters()]
