"""The autograd API as tutorials use it, against PyTorch: each scenario runs on both
libraries and must give the same values, gradients, flags, warnings and exception types."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _plain(value):
    """Tensors become nested lists, so results of the two libraries compare."""
    if hasattr(value, "detach") and hasattr(value, "tolist"):
        return np.round(np.asarray(value.detach().tolist(), dtype=float), 6).tolist()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def _run(scenario, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome = ("ok", _plain(scenario(lib)))
        except Exception as error:  # the type is what must match
            outcome = ("raises", type(error).__name__)
    ours = [(w.category.__name__, str(w.message).split(".")[0]) for w in caught
            if w.category is not DeprecationWarning or "instantiated" in str(w.message)]
    return outcome, ours


def _function(lib, forward, backward):
    body = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    return type("F", (lib.autograd.Function,), body)


# ---------------------------------------------------------------- scenarios


def mark_dirty_of_a_clone(lib):
    def forward(ctx, a):
        a.mul_(2)
        ctx.mark_dirty(a)
        return a
    f = _function(lib, forward, lambda ctx, g: g * 2)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    z = f.apply(y)
    (z * z).sum().backward()
    return [z is y, x.grad, z.grad_fn.name()]


def retain_grad_sees_hooks_registered_after_it(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 100)
    (y * y).sum().backward()
    return [x.grad, y.grad]


def function_with_non_tensor_outputs(lib):
    f = _function(lib, lambda ctx, x: (x * 2, 7, "s"), lambda ctx, g, a, b: g * 3)
    x = lib.ones(2, requires_grad=True)
    out = f.apply(x)
    out[0].sum().backward()
    return [out[1], out[2], x.grad]


def function_non_tensor_outputs_unmaterialized(lib):
    def backward(ctx, g, a):
        return g * 3 if a is None else None
    f = _function(lib, lambda ctx, x: (x * 2, 1.5), backward)
    x = lib.ones(2, requires_grad=True)
    f.apply(x)[0].sum().backward()
    return x.grad


def once_differentiable_from_function_module(lib):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 2

    @lib.autograd.function.once_differentiable
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * 2 * a
    f = _function(lib, forward, backward)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    f.apply(x).sum().backward()
    return x.grad


def generate_vmap_rule_default(lib):
    return _function(lib, lambda ctx, x: x, lambda ctx, g: g).generate_vmap_rule


def gradient_for_a_number_argument(lib):
    f = _function(lib, lambda ctx, x, k: x * k, lambda ctx, g: (g, g))
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    f.apply(x, 2.0).sum().backward()
    return x.grad


def instantiating_a_function(lib):
    _function(lib, lambda ctx, x: x, lambda ctx, g: g)()
    return "made"


def materialize_grads_with_allow_unused_false(lib):
    x, z = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
    return lib.autograd.grad((x * 2).sum(), [x, z], allow_unused=False, materialize_grads=True)


def only_inputs_false(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    return lib.autograd.grad((x * 2).sum(), x, only_inputs=False)


def grads_batched(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    return lib.autograd.grad(x ** 2, x, grad_outputs=lib.eye(3), is_grads_batched=True)


def grads_batched_two_inputs_create_graph(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, -1.0], requires_grad=True)
    y = x * x * w
    gx, gw = lib.autograd.grad(y, (x, w), grad_outputs=lib.tensor([[1.0, 0.0], [2.0, 5.0]]),
                               is_grads_batched=True, create_graph=True)
    gx.sum().backward()
    return [gx, gw, x.grad, w.grad]


def disable_saved_hooks_inside_hooks(lib):
    graph = lib.autograd.graph
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        with graph.disable_saved_tensors_hooks("no hooks here"):
            pass


def detect_anomaly_warns(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.autograd.detect_anomaly():
        (x * 2).sum().backward()
    return x.grad


def anomaly_names_the_node_of_a_version_error(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.autograd.detect_anomaly():
        y = x.exp()
        y.add_(1)
        y.sum().backward()


def no_grad_view_of_a_non_leaf(lib):
    x = lib.ones(3, requires_grad=True) * 1
    with lib.no_grad():
        v = x[:2]
    return [v.requires_grad, v.is_leaf, v.grad_fn is None]


def no_grad_view_of_a_non_leaf_changed_in_place(lib):
    x = lib.ones(3, requires_grad=True) * 1
    with lib.no_grad():
        v = x[:2]
    v.mul_(2)


def no_grad_view_of_a_leaf(lib):
    x = lib.ones(3, requires_grad=True)
    with lib.no_grad():
        v = x.view(3)
        w = x[1:]
        d = x.detach()
    return [v.requires_grad, v.is_leaf, w.requires_grad, d.requires_grad]


def no_grad_view_changed_under_no_grad(lib):
    x = lib.ones(3, requires_grad=True) * 1
    with lib.no_grad():
        v = x[:2]
        v.mul_(2)
    x.sum().backward()
    return [x, v]


def accumulate_grad_node_hooks(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    seen = []
    node = y.grad_fn.next_functions[0][0]
    node.register_prehook(lambda go: (go[0] * 10,))
    node.register_hook(lambda gi, go: seen.append(("post", len(gi), go[0] * 1)))
    x.register_hook(lambda g: seen.append(("tensor", g * 1)))
    y.sum().backward()
    return [x.grad, seen]


def node_metadata(lib):
    y = lib.ones(2, requires_grad=True) * 2
    y.grad_fn.metadata["tag"] = 1
    return [type(y.grad_fn.metadata).__name__, y.grad_fn.metadata]


def backward_create_graph_warns(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x ** 2).sum().backward(create_graph=True)
    x.grad.sum().backward(inputs=[x])  # with inputs=: no warning
    return x.grad


# guards: behaviour that already matched and must stay so


def guard_accumulation_and_reset(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    (x * x).sum().backward()
    first = x.grad * 1
    x.grad = None
    (x * 3).sum().backward()
    return [first, x.grad]


def guard_hooks_on_non_leaf(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    handle = y.register_hook(lambda g: g * 0)
    y.register_hook(lambda g: g + 1)
    handle.remove()
    (y * y).sum().backward()
    return x.grad


def guard_custom_function_double_backward(lib):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 3

    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * 3 * a ** 2
    f = _function(lib, forward, backward)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (g,) = lib.autograd.grad(f.apply(x).sum(), x, create_graph=True)
    return [g, lib.autograd.grad(g.sum(), x)]


def guard_materialize_grads(lib):
    x, z = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
    return lib.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)


def grad_of_a_non_leaf_filled_by_backward_inputs(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    (y * 3).sum().backward(inputs=[y])
    return y.grad  # (filled: no warning)


SCENARIOS = [
    grad_of_a_non_leaf_filled_by_backward_inputs,
    mark_dirty_of_a_clone,
    retain_grad_sees_hooks_registered_after_it,
    function_with_non_tensor_outputs,
    function_non_tensor_outputs_unmaterialized,
    once_differentiable_from_function_module,
    generate_vmap_rule_default,
    gradient_for_a_number_argument,
    instantiating_a_function,
    materialize_grads_with_allow_unused_false,
    only_inputs_false,
    grads_batched,
    grads_batched_two_inputs_create_graph,
    disable_saved_hooks_inside_hooks,
    detect_anomaly_warns,
    anomaly_names_the_node_of_a_version_error,
    no_grad_view_of_a_non_leaf,
    no_grad_view_of_a_non_leaf_changed_in_place,
    no_grad_view_of_a_leaf,
    no_grad_view_changed_under_no_grad,
    accumulate_grad_node_hooks,
    node_metadata,
    backward_create_graph_warns,
    guard_accumulation_and_reset,
    guard_hooks_on_non_leaf,
    guard_custom_function_double_backward,
    guard_materialize_grads,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_matches_torch(scenario):
    expected = _run(scenario, torch)
    got = _run(scenario, ember)
    assert got[0] == expected[0]
    assert [c for c, _ in got[1]] == [c for c, _ in expected[1]], (got[1], expected[1])


def _messages(scenario, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            scenario(lib)
        except Exception as error:
            return [str(w.message) for w in caught], str(error)
    return [str(w.message) for w in caught], None


def test_anomaly_warning_names_node_and_forward_line():
    found, error = _messages(anomaly_names_the_node_of_a_version_error, ember)
    assert "is at version 1; expected version 0" in error
    (detected,) = [m for m in found if m.startswith("Error detected in")]
    assert detected.startswith("Error detected in ExpBackward0. Traceback of forward call")
    assert "y = x.exp()" in detected


def test_non_tensor_gradient_message_names_the_position():
    _, error = _messages(gradient_for_a_number_argument, ember)
    assert error == ("function FBackward returned a gradient different than None at "
                     "position 2, but the corresponding forward input was not a Variable")


def test_disable_saved_hooks_message_is_the_callers():
    _, error = _messages(disable_saved_hooks_inside_hooks, ember)
    assert error == "no hooks here"


def test_apply_does_not_warn_about_instantiation():
    f = _function(ember, lambda ctx, x: x * 2, lambda ctx, g: g * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = ember.ones(2, requires_grad=True)
        f.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_unused_input_message_names_its_index():
    x, z = ember.ones(2, requires_grad=True), ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to "
                                           "not have been used in the graph"):
        ember.autograd.grad((x * 2).sum(), [x, z])


def test_in_place_on_a_no_grad_view_says_why():
    x = ember.ones(3, requires_grad=True)
    with ember.no_grad():
        v = x[0]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        v.mul_(2)
