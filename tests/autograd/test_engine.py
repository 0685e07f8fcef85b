"""The autograd engine's rules, one test each: leaves and grad_fn, backward's arguments,
accumulation, retain_graph, retain_grad, hooks, autograd.grad, higher order, deep graphs."""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import ember


def test_only_floating_point_tensors_can_require_grad():
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        ember.tensor([1, 2, 3], requires_grad=True)
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        ember.arange(3).requires_grad_()


def test_leaves_and_grad_fn_names():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = (x + 2) ** 2
    z = y.mean()
    assert x.is_leaf and not y.is_leaf and x.grad_fn is None
    assert y.grad_fn.name() == "PowBackward0"
    assert z.grad_fn.name() == "MeanBackward0"
    add_node, nr = y.grad_fn.next_functions[0]
    assert add_node.name() == "AddBackward0" and nr == 0
    accumulate = add_node.next_functions[0][0]
    assert type(accumulate).__name__ == "AccumulateGrad" and accumulate.variable is x
    assert repr(z).endswith("grad_fn=<MeanBackward0>)")
    w = ember.ones(2)
    assert (w * 2).is_leaf and (w * 2).grad_fn is None


def test_requires_grad_cannot_be_switched_off_on_non_leaf():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf variables"):
        (x * 2).requires_grad_(False)


def test_implicit_gradient_only_for_one_element_outputs():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    (x * 2).backward(ember.tensor([1.0, 2.0, 3.0]))
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_backward_gradient_shape_is_checked():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(ember.ones(2))


def test_backward_on_tensor_without_graph_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        ember.ones(1).sum().backward()


def test_gradients_accumulate_and_zero():
    x = ember.tensor(2.0, requires_grad=True)
    for _ in range(3):
        (x * x).backward()
    assert x.grad.item() == 12.0
    x.grad.zero_()
    assert x.grad.item() == 0.0


def test_diamond_sums_both_paths():
    x = ember.tensor(3.0, requires_grad=True)
    a = x * 2
    y = a * a + a.exp()
    y.backward()
    assert x.grad.item() == pytest.approx(8 * 3 + 2 * np.exp(6))


def test_chain_then_branches_matches_pytorch():
    # the engine walks a chain from the root without counting, then counts where it
    # branches; consumers outside the graph being run must not hold anything up
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (torch, ember):
        x = lib.tensor([0.1, -0.2, 0.3], dtype=lib.float64, requires_grad=True)
        h = (x * 3).exp()
        a, b = h.sin(), h * h             # a diamond below the chain
        unused = h.cos() * 2              # a consumer this backward never reaches
        y = ((a + b) * 0.5).tanh() ** 2   # the chain from the root
        y.sum().backward()
        grads.append(x.grad.numpy())
        del unused
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-9)


@pytest.mark.parametrize("root", ["sum", "mean"])
def test_a_chain_from_the_root_is_walked_without_a_count(root, monkeypatch):
    # a reduction's node has one tensor edge and empty ones for its dims: still a link,
    # so a chain ending in .sum() is walked from the root; only the leaf gets counted
    from ember.autograd import engine
    counted = []
    real = engine.dependencies

    def dependencies(roots):
        found = real(roots)
        counted.append(len(found))
        return found

    monkeypatch.setattr(engine, "dependencies", dependencies)
    x = ember.tensor([0.1, 0.2], dtype=ember.float64, requires_grad=True)
    y = x
    for _ in range(10):
        y = ((y + 0.25) * 0.5).exp().tanh() ** 2
    y = getattr(y, root)()
    (want,) = ember.autograd.grad(y, x, retain_graph=True)  # counts: inputs= given
    counted.clear()
    y.backward()
    assert counted == [0]
    np.testing.assert_array_equal(x.grad.numpy(), want.numpy())


def test_second_backward_raises_unless_retain_graph():
    x = ember.tensor(2.0, requires_grad=True)
    y = x.exp()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == pytest.approx(2 * np.exp(2))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_grad_and_non_leaf_grad_warning():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    z = y * y
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z.sum().backward()
        assert y.grad.tolist() == [6.0, 12.0]
    w = x * 2
    (w * 1).sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert w.grad is None


def test_leaf_grads_are_not_aliased():
    a = ember.ones(2, requires_grad=True)
    b = ember.ones(2, requires_grad=True)
    (a + b).sum().backward()
    a.grad.zero_()
    assert b.grad.tolist() == [1.0, 1.0]
    g = ember.ones(2)
    c = ember.ones(2, requires_grad=True)
    c.backward(g)
    c.grad.mul_(5)
    assert g.tolist() == [1.0, 1.0]


def test_detach_shares_memory_and_leaves_graph():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf
    d[0] = 7.0
    assert y[0].item() == 7.0
    assert y._version == d._version == 1
    y.detach_()
    assert y.is_leaf and not y.requires_grad


def test_grad_modes_as_context_managers_and_decorators():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        assert not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad

    @ember.no_grad()
    def doubled(t):
        return t * 2

    @ember.no_grad
    def tripled(t):
        return t * 3

    assert not doubled(x).requires_grad and not tripled(x).requires_grad
    with ember.inference_mode():
        assert not (x * 2).requires_grad
        assert ember.is_inference_mode_enabled()
    assert ember.is_grad_enabled()
    ember.set_grad_enabled(False)
    try:
        assert not ember.is_grad_enabled()
    finally:
        ember.set_grad_enabled(True)


def test_autograd_grad_and_higher_order():
    x = ember.tensor(3.0, requires_grad=True)
    y = x ** 3
    (dy,) = ember.autograd.grad(y, x, create_graph=True)
    assert dy.item() == 27.0 and dy.requires_grad
    (d2y,) = ember.autograd.grad(dy, x, create_graph=True)
    assert d2y.item() == 18.0
    (d3y,) = ember.autograd.grad(d2y, x)
    assert d3y.item() == 6.0
    assert x.grad is None  # grad() leaves .grad alone


def test_backward_with_create_graph_then_second_derivative():
    x = ember.tensor(2.0, requires_grad=True)
    y = x.sin() * x
    y.backward(create_graph=True)
    first = x.grad
    x.grad = None
    first.backward()
    expected = 2 * np.cos(2.0) - 2.0 * np.sin(2.0)
    assert x.grad.item() == pytest.approx(expected)


def test_autograd_grad_unused_inputs():
    x = ember.tensor(1.0, requires_grad=True)
    z = ember.tensor(1.0, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        ember.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = ember.autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gx.item() == 2.0 and gz is None
    gx, gz = ember.autograd.grad(y, [x, z], materialize_grads=True)
    assert gz.item() == 0.0


def test_autograd_grad_of_non_leaf_input():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    y = (h * h).sum()
    (gh,) = ember.autograd.grad(y, h)
    assert gh.tolist() == [6.0, 12.0]


def test_backward_inputs_restricts_accumulation():
    a = ember.tensor(1.0, requires_grad=True)
    b = ember.tensor(2.0, requires_grad=True)
    (a * b).backward(inputs=[a])
    assert a.grad.item() == 2.0 and b.grad is None


def test_a_pass_computes_only_the_gradients_it_wants():
    # as PyTorch's nodes do: needs_input_grad narrows per call, then is restored
    w = ember.tensor([1.0, 2.0], requires_grad=True)
    x = ember.tensor([3.0, 4.0], requires_grad=True)
    y = w * x
    node = y.grad_fn
    seen = []
    node.register_prehook(lambda grads: seen.append(tuple(node.needs_input_grad)))
    (gx,) = ember.autograd.grad(y.sum(), x, retain_graph=True)
    assert gx.tolist() == [1.0, 2.0] and seen == [(False, True)]
    assert tuple(node.needs_input_grad) == (True, True)
    y.sum().backward(retain_graph=True)
    assert seen[-1] == (True, True)
    assert w.grad.tolist() == [3.0, 4.0] and x.grad.tolist() == [1.0, 2.0]


def test_needs_input_grad_is_restored_when_a_backward_raises():
    s = ember.tensor([2.0, 3.0], dtype=ember.float64, requires_grad=True)
    q = ember.tensor([1.5, 2.5], dtype=ember.float64, requires_grad=True)
    z = ember.special.zeta(s, q)
    forward_needs = tuple(z.grad_fn.needs_input_grad)
    with pytest.raises(NotImplementedError):  # the derivative in s is not implemented
        ember.autograd.grad(z.sum(), s, retain_graph=True)
    assert tuple(z.grad_fn.needs_input_grad) == forward_needs
    (gq,) = ember.autograd.grad(z.sum(), q)  # needs only q's: works, as in PyTorch
    assert gq.shape == (2,) and tuple(z.grad_fn.needs_input_grad) == forward_needs


def test_hooks_on_leaf_and_non_leaf():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.tolist()))
    y = x * 2
    y.register_hook(lambda g: g * 10)  # replaces the gradient flowing on
    y.sum().backward()
    assert seen == [[20.0, 20.0]]
    assert x.grad.tolist() == [20.0, 20.0]
    handle.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert seen == [[20.0, 20.0]]
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ember.ones(1).register_hook(lambda g: g)


def test_node_hooks():
    x = ember.tensor(2.0, requires_grad=True)
    y = x * 3
    calls = []
    y.grad_fn.register_prehook(lambda grad_outputs: calls.append("pre"))
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: calls.append("post"))
    y.backward()
    assert calls == ["pre", "post"]


def test_deep_chain_under_default_recursion_limit():
    assert sys.getrecursionlimit() <= 10000
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    del y  # dropping a 100,000-node graph must not recurse either


def test_saved_values_are_freed_after_backward():
    x = ember.ones(3, requires_grad=True)
    y = x.exp()
    node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        node.saved_tensors


def test_saved_values_read_outside_backward():
    # saved_tensors gives what backward computes with (arrays for ember's own ops);
    # saved_as_tensors gives Tensors linked into the graph, until backward frees them
    x = ember.ones(3, requires_grad=True)
    y = x.exp()
    node = y.grad_fn
    (array,) = node.saved_tensors
    assert isinstance(array, np.ndarray) and array.tolist() == y.tolist()
    (out,) = node.saved_as_tensors()
    assert isinstance(out, ember.Tensor) and out.grad_fn is node and out.tolist() == y.tolist()
    m = (x * 0.5).grad_fn  # keeps only the number: still freed, as PyTorch's node is
    assert node.saved_as_tensors() and m.saved_tensors == (None, None)
    y.sum().backward()
    (x * 0.5).sum().backward()
    for read in (lambda: node.saved_tensors, node.saved_as_tensors):
        with pytest.raises(RuntimeError, match="second time"):
            read()
    z = x * 0.5
    z.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        z.sum().backward()
    w = x + 1.0  # saves nothing: a second backward is fine
    w.sum().backward()
    w.sum().backward()
    assert x.grad.tolist() == pytest.approx([np.e + 0.5 + 0.5 + 2.0] * 3)  # exp, x * 0.5 twice, w


def test_retained_graph_runs_on_arrays_then_on_tensors_then_on_arrays():
    # the engine sets a node's math only for the call that needs another (create_graph)
    x = ember.tensor([0.5, 1.5], requires_grad=True)
    y = (x.tanh() * x ** 2).sum()
    (g1,) = ember.autograd.grad(y, x, retain_graph=True)
    (g2,) = ember.autograd.grad(y, x, create_graph=True)
    (g3,) = ember.autograd.grad(y, x, retain_graph=True)
    assert g1.tolist() == g2.tolist() == g3.tolist() and g2.grad_fn is not None
    assert y.grad_fn.math.arrays and y.grad_fn.next_functions[0][0].math.arrays


def test_anomaly_mode_names_the_node_and_forward_stack():
    x = ember.tensor([0.0], requires_grad=True)
    with ember.autograd.detect_anomaly():
        y = x.sqrt()  # d sqrt / dx at 0 is inf
        with pytest.raises(RuntimeError, match="SqrtBackward0.*nan or inf"):
            y.sum().backward()


def test_leaf_grads_never_share_memory_through_views():
    a = ember.ones(3, requires_grad=True)
    b = ember.ones(3, requires_grad=True)
    ((a + b).reshape(3, 1) * 2).sum().backward()  # both get views of one buffer
    a.grad.zero_()
    assert b.grad.tolist() == [2.0, 2.0, 2.0]
    w = ember.ones(2, 3, requires_grad=True)
    (ember.ones(4, 2) @ w).sum().backward()  # a weight's gradient may be a view: kept
    assert w.grad.tolist() == [[4.0] * 3] * 2
