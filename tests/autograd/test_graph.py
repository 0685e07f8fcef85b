"""ember.autograd.graph: nodes and gradient edges, increment_version, multi-gradient
hooks (against PyTorch) and the saved-tensors hook context managers."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import graph
from tests.conftest import requires_torch


def test_nodes_and_gradient_edges():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    assert isinstance(y.grad_fn, graph.Node)
    edge = graph.get_gradient_edge(y)
    assert edge == (y.grad_fn, 0) and edge.node is y.grad_fn and edge.output_nr == 0
    leaf = graph.get_gradient_edge(x)
    assert leaf.node.name() == "AccumulateGrad" and leaf.node.variable is x
    assert graph.get_gradient_edge(x).node is leaf.node  # one accumulator per leaf
    _, b = x.unbind(0)
    assert graph.get_gradient_edge(b).output_nr == b._output_nr
    with pytest.raises(RuntimeError, match="not possible to get the gradient edge"):
        graph.get_gradient_edge(ember.tensor([1.0]))


def test_increment_version_makes_saved_values_stale():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y.sin()
    before = y._version
    graph.increment_version(y)
    assert y._version == before + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    a, b = ember.ones(2), ember.ones(3)
    graph.increment_version([a, b])
    assert a._version == 1 and b._version == 1
    with pytest.raises(TypeError, match="expects Tensors"):
        graph.increment_version([a, 3])


def _passes(lib, mode):
    a = lib.tensor(1.0, requires_grad=True)
    b = lib.tensor(2.0, requires_grad=True)
    c = lib.tensor(3.0, requires_grad=True)
    seen = []

    def record(value):
        if mode == "any":
            seen.append(float(value))
        else:
            seen.append(tuple(None if g is None else float(g) for g in value))

    handle = lib.autograd.graph.register_multi_grad_hook((a, b, c), record, mode=mode)
    (a * 3).backward()                    # only a is reached
    (a * b * c).backward()                # all three
    (a * b + c).backward(inputs=[a, c])   # b is not needed
    (b * c).backward(retain_graph=True)
    handle.remove()
    (a * b).backward()                    # removed: not recorded
    # non-leaf tensors through autograd.grad
    x = a * 1
    y = b * 1
    handle = lib.autograd.graph.register_multi_grad_hook((x, y), record, mode=mode)
    lib.autograd.grad(x * y * 5, [y], retain_graph=True)
    lib.autograd.grad(x * 7, [x])
    return seen


@requires_torch
def test_multi_grad_hook_all_matches_pytorch():
    import torch

    assert _passes(ember, "all") == _passes(torch, "all")


@requires_torch
def test_multi_grad_hook_any_is_called_once_per_pass():
    import torch

    ours, theirs = _passes(ember, "any"), _passes(torch, "any")
    assert len(ours) == len(theirs) == 6
    # which gradient comes first in a pass depends on the engine's order; both are
    # gradients of that pass
    choices = [{3.0}, {6.0, 3.0, 2.0}, {2.0, 1.0}, {3.0, 2.0}, {5.0}, {7.0}]
    assert all(value in options for value, options in zip(ours, choices))
    assert all(value in options for value, options in zip(theirs, choices))


def test_multi_grad_hook_errors_and_handle():
    a = ember.tensor(1.0, requires_grad=True)
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        graph.register_multi_grad_hook((a,), print, mode="first")
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        graph.register_multi_grad_hook((a, ember.tensor(1.0)), print)
    seen = []
    with graph.register_multi_grad_hook((a,), seen.append):
        (a * 2).backward()
    (a * 2).backward()
    assert len(seen) == 1


def test_disable_saved_tensors_hooks_raises_its_message_and_nests():
    with graph.disable_saved_tensors_hooks("outer"):
        with graph.disable_saved_tensors_hooks("inner"):
            with pytest.raises(RuntimeError, match="^inner$"):
                with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with pytest.raises(RuntimeError, match="^outer$"):
            with graph.save_on_cpu():
                pass


def _hooked_run(lib, double=False):
    """What the pack hook sees and what backward computes, with hooks that scale on
    unpack (so using the hooks shows in the gradients)."""
    seen = []

    def pack(t):
        seen.append(tuple(t.shape))
        return t.detach() * 1.0

    def unpack(t):
        return t * 2.0

    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([1.5, 0.25, -0.5], dtype=lib.float64, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * w).exp().sum()   # mul saves both inputs, exp saves its output
    grads = lib.autograd.grad(y, (x, w), create_graph=double)
    if double:
        grads = lib.autograd.grad(grads[0].sum(), (x, w), allow_unused=True)
    return seen, [None if g is None else g.detach().tolist() for g in grads]


@requires_torch
@pytest.mark.parametrize("double", [False, True])
def test_saved_tensors_hooks_pack_and_unpack_as_torch(double):
    import torch

    ours, theirs = _hooked_run(ember, double), _hooked_run(torch, double)
    assert ours[0] == theirs[0]
    assert np.allclose(ours[1], theirs[1], rtol=1e-12)


def test_saved_tensors_hooks_leave_the_graph_alone_outside():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    with graph.saved_tensors_hooks(lambda t: calls.append(1) or t, lambda t: t):
        pass
    (x * x).sum().backward()
    assert calls == [] and x.grad.tolist() == [2.0, 4.0]
    assert graph.current_saved_tensors_hooks() is None


def test_save_on_cpu_gives_the_same_gradients():
    x = ember.tensor([0.5, 1.5], requires_grad=True)
    with graph.save_on_cpu():
        y = (x.tanh() * x).sum()
    y.backward()
    expected = (1 - np.tanh([0.5, 1.5]) ** 2) * [0.5, 1.5] + np.tanh([0.5, 1.5])
    assert np.allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_unpack_hook_must_return_a_tensor():
    x = ember.tensor([1.0], requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
        y = (x * x).sum()
    with pytest.raises(TypeError, match="unpack hook must return a Tensor"):
        y.backward()


def test_save_on_cpu_hooks_round_trip():
    hooks = graph.save_on_cpu()
    x = ember.tensor([1.0, 2.0])
    packed = hooks.pack_hook(x)
    assert packed[0] == x.device and packed[1].device.type == "cpu"
    assert hooks.unpack_hook(packed).tolist() == [1.0, 2.0]


@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt")
def test_anomaly_mode_module_path():
    from ember.autograd import anomaly_mode

    assert anomaly_mode.detect_anomaly is ember.autograd.detect_anomaly
    assert anomaly_mode.set_detect_anomaly is ember.autograd.set_detect_anomaly
    x = ember.tensor([-1.0], requires_grad=True)
    with anomaly_mode.detect_anomaly():
        with pytest.raises(RuntimeError, match="returned nan or inf"):
            ember.sqrt(x).sum().backward()


@pytest.mark.parametrize("name", ["ember.autograd.functional", "ember.autograd.graph",
                                  "ember.autograd.anomaly_mode"])
def test_docstring_examples(name):
    import doctest
    import importlib

    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={"ember": ember})
    assert result.attempted > 0 and result.failed == 0


@requires_torch
def test_gradient_edges_as_inputs_of_grad_and_backward():
    import torch

    results = []
    for lib in (ember, torch):
        G = lib.autograd.graph
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = (y * y).sum()
        edge = G.get_gradient_edge(y)
        del y  # the edge still reaches the node
        w = lib.tensor(1.0, requires_grad=True)
        one = lib.autograd.grad(z, edge, retain_graph=True)
        two = lib.autograd.grad(z, (edge, G.get_gradient_edge(x)), retain_graph=True)
        unused = lib.autograd.grad(z, (edge, w), retain_graph=True, allow_unused=True)
        with pytest.raises(RuntimeError, match="materialize_grads cannot be used"):
            lib.autograd.grad(z, (G.get_gradient_edge(w),), retain_graph=True,
                              materialize_grads=True)
        z.backward(inputs=[G.get_gradient_edge(x)])
        results.append([one[0].tolist(), [t.tolist() for t in two], unused[1], x.grad.tolist()])
    assert results[0] == results[1]


@requires_torch
def test_leaf_hooks_run_under_autograd_grad_as_torch():
    import torch

    results = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: g * 10)
        y = x * 3
        y.register_hook(lambda g: g * 100)
        results.append([lib.autograd.grad((x * x).sum(), x)[0].tolist(),
                        lib.autograd.grad((y * y).sum(), x)[0].tolist()])
    assert results[0] == results[1]
