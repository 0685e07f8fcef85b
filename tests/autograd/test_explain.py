"""ember.autograd.explain: the backward pass as a table of steps, with the real gradients
(checked against PyTorch's own hooks where torch is installed)."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd.explain import Explanation

from ..conftest import requires_torch

TUTORIAL_ORDER = ["MeanBackward0", "AddBackward0", "PowBackward0", "AddBackward0",
                  "AccumulateGrad"]


def tutorial(lib):
    x = lib.arange(1, 4, dtype=lib.float32, requires_grad=True)
    a = x + 2
    b = a ** 2
    c = b + 3
    y = c.mean()
    return x, a, b, c, y


def torch_steps(torch, outputs):
    """PyTorch's execution order, incoming and outgoing gradients, seen by its node hooks."""
    order, incoming, outgoing = [], {}, {}
    roots = [t.grad_fn for t in outputs]
    seen, stack = set(), list(roots)
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)

        def pre(grads, node=node):
            order.append(node)
            incoming[node] = grads

        def post(grad_inputs, grad_outputs, node=node):
            outgoing[node] = grad_inputs

        node.register_prehook(pre)
        node.register_hook(post)
        stack.extend(child for child, _ in node.next_functions)
    torch.autograd.backward(outputs)
    return order, incoming, outgoing


def torch_name(node):
    return node.name().split("::")[-1]  # torch::autograd::AccumulateGrad


def as_numpy(t):
    return None if t is None else np.asarray(t.detach().cpu().numpy())


@requires_torch
def test_tutorial_steps_match_pytorch_hooks():
    import torch

    x, a, b, c, y = tutorial(ember)
    steps = ember.autograd.explain(y, params={"x": x})
    order, incoming, outgoing = torch_steps(torch, [tutorial(torch)[-1]])

    assert [s.name for s in steps] == [torch_name(n) for n in order] == TUTORIAL_ORDER
    assert len({id(s.node) for s in steps}) == len(steps)  # each node once
    for step, node in zip(steps, order):
        assert len(step.incoming) == len(incoming[node])
        for mine, theirs in zip(step.incoming, incoming[node]):
            np.testing.assert_allclose(as_numpy(mine), as_numpy(theirs), rtol=1e-6)
        if step.name != "AccumulateGrad":
            theirs = [g for g in outgoing[node] if g is not None]
            assert len(step.outgoing) == len(theirs)
            for flow, g in zip(step.outgoing, theirs):
                np.testing.assert_allclose(as_numpy(flow.gradient), as_numpy(g), rtol=1e-6)


def test_tutorial_table_values_and_words():
    x, a, b, c, y = tutorial(ember)
    steps = ember.autograd.explain(y, params=dict(x=x, a=a, b=b, c=c, y=y))
    assert isinstance(steps, Explanation)
    assert [s.name for s in steps] == TUTORIAL_ORDER
    assert [s.number for s in steps] == [1, 2, 3, 4, 5]
    assert [s.tensor_name for s in steps] == ["y", "c", "b", "a", "x"]
    np.testing.assert_allclose(steps[1].incoming[0].numpy(), [1 / 3] * 3, rtol=1e-6)
    np.testing.assert_allclose(steps[-1].incoming[0].numpy(), [2, 8 / 3, 10 / 3], rtol=1e-6)
    assert steps[0].derivative == ["d(mean(a))/da_i = 1/3 (n = 3 elements)"]
    assert steps[2].derivative == ["d(a ** 2)/da = 2 * a"]
    assert steps[3].derivative == ["d(a + b)/da = 1"]
    assert steps[0].outgoing[0].target is steps[1]
    text = str(steps)
    for name in TUTORIAL_ORDER:
        assert name in text
    assert "[3] [2, 2.667, 3.333]" in text and "the seed" in text
    assert text.splitlines()[0].startswith("backward of [] MeanBackward0: 5 steps")


def test_the_graph_is_not_consumed_and_grad_is_untouched():
    x, a, b, c, y = tutorial(ember)
    ember.autograd.explain(y)
    assert x.grad is None
    y.backward()  # still possible: explain ran with retain_graph=True
    np.testing.assert_allclose(x.grad.numpy(), [2, 8 / 3, 10 / 3], rtol=1e-6)


def test_hooks_are_removed_and_nodes_stay_on_the_fast_path():
    x, a, b, c, y = tutorial(ember)
    before = {id(n): set(n.__dict__) for n in (y.grad_fn, b.grad_fn)}
    ember.autograd.explain(y)
    for node in (y.grad_fn, b.grad_fn):
        assert set(node.__dict__) == before[id(node)]
        assert not node._hooked


def test_user_hooks_survive_and_still_run():
    x, a, b, c, y = tutorial(ember)
    calls = []
    b.grad_fn.register_prehook(lambda grads: calls.append("pre"))
    ember.autograd.explain(y)
    assert calls == ["pre"] and b.grad_fn._hooked
    y.backward()
    assert calls == ["pre", "pre"]


def test_gradients_that_meet_are_marked_summed():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x + x.exp()).sum()
    steps = ember.autograd.explain(y, params={"x": x})
    leaf = steps[-1]
    assert leaf.name == "AccumulateGrad" and leaf.summed
    assert len(leaf.sources[0]) == 3  # twice through the product, once through exp
    np.testing.assert_allclose(leaf.incoming[0].numpy(), 2 * np.array([1, 2]) + np.exp([1, 2]),
                               rtol=1e-6)
    assert "sum of 3 gradients" in str(steps)
    assert "meets other gradients at #" in str(steps)
    assert not steps[0].summed


@requires_torch
def test_broadcast_reduction_is_marked_and_matches_pytorch():
    import torch

    def run(lib):
        p = lib.ones(2, 3, requires_grad=True)
        q = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        return (p * q).sum(), p, q

    y, p, q = run(ember)
    steps = ember.autograd.explain(y, params={"p": p, "q": q})
    mul = next(s for s in steps if s.name == "MulBackward0")
    to_q = next(f for f in mul.outgoing if f.target.tensor_name == "q")
    to_p = next(f for f in mul.outgoing if f.target.tensor_name == "p")
    assert to_q.reduced_from == (2, 3) and tuple(to_q.gradient.shape) == (3,)
    assert to_p.reduced_from is None
    assert "broadcast reduced: [2, 3] -> [3]" in str(steps)

    ty, tp, tq = run(torch)
    order, incoming, outgoing = torch_steps(torch, [ty])
    assert [s.name for s in steps if s.name != "AccumulateGrad"] == \
        [torch_name(n) for n in order if torch_name(n) != "AccumulateGrad"]
    np.testing.assert_allclose(to_q.gradient.numpy(), tq.grad.numpy())
    np.testing.assert_allclose(to_p.gradient.numpy(), tp.grad.numpy())


@requires_torch
def test_matmul_network_matches_pytorch():
    import torch

    rng = np.random.default_rng(0)
    w_value, x_value = rng.standard_normal((3, 4)), rng.standard_normal((2, 3))

    def run(lib):
        w = lib.tensor(w_value, requires_grad=True)
        x = lib.tensor(x_value)
        return (x @ w).tanh().sigmoid().mean(), w

    y, w = run(ember)
    steps = ember.autograd.explain(y, params={"w": w})
    ty, tw = run(torch)
    order, incoming, outgoing = torch_steps(torch, [ty])
    assert [s.name for s in steps] == [torch_name(n) for n in order]
    for step, node in zip(steps, order):
        np.testing.assert_allclose(as_numpy(step.incoming[0]), as_numpy(incoming[node][0]),
                                   rtol=1e-6, atol=1e-12)
    words = {s.name: s.derivative for s in steps}
    assert words["MmBackward0"] == ["d(A @ B)/dB = A.T @ grad"]
    assert words["TanhBackward0"] == ["d(tanh(a))/da = 1 - tanh(a) ** 2"]
    assert words["SigmoidBackward0"] == ["d(sigmoid(a))/da = sigmoid(a) * (1 - sigmoid(a))"]


def test_words_for_common_ops_and_constants():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    z = ember.tensor([0.5, 1.0], requires_grad=True)
    words = {s.name: s.derivative for s in ember.autograd.explain(
        ((x * 3) / z - z).relu().log().sum())}
    assert words["MulBackward0"] == ["d(a * 3)/da = 3"]
    assert words["DivBackward0"] == ["d(a / b)/da = 1 / b", "d(a / b)/db = -a / b ** 2"]
    assert words["SubBackward0"] == ["d(a - b)/da = 1", "d(a - b)/db = -1"]
    assert words["ReluBackward0"] == ["d(relu(a))/da = 1 where a > 0, else 0"]
    assert words["LogBackward0"] == ["d(log(a))/da = 1 / a"]
    assert words["SumBackward0"][0].startswith("d(sum(a))/da_i = 1")


def test_unknown_ops_get_the_generic_words():
    class Cube(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    x = ember.tensor([2.0], requires_grad=True)
    steps = ember.autograd.explain(Cube.apply(x).sum())
    assert steps[1].name == "CubeBackward"
    assert "CubeBackward's own backward formula" in steps[1].derivative[0]
    np.testing.assert_allclose(steps[-1].incoming[0].numpy(), [12.0])


def test_nodes_no_gradient_reaches_come_last_and_say_so():
    class Stop(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return None

    x = ember.tensor([1.0, 2.0], requires_grad=True)
    w = ember.tensor([3.0, 4.0], requires_grad=True)
    steps = ember.autograd.explain((Stop.apply(x * 2) + w).sum(), params={"x": x, "w": w})
    assert [(s.name, s.ran) for s in steps] == [
        ("SumBackward0", True), ("AddBackward0", True), ("AccumulateGrad", True),
        ("StopBackward", True), ("MulBackward0", False), ("AccumulateGrad", False)]
    assert steps[-1].incoming == (None,)
    text = str(steps)
    assert "nothing: backward gave no gradient" in text
    assert "none reached this node" in text


def test_several_outputs_of_one_node():
    x = ember.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = x.split(2)
    steps = ember.autograd.explain((a * b).sum())
    split = next(s for s in steps if s.name.startswith("Split"))
    assert len(split.incoming) == 2
    np.testing.assert_allclose(split.incoming[0].numpy(), [3.0, 4.0])
    np.testing.assert_allclose(split.incoming[1].numpy(), [1.0, 2.0])
    assert "out 0: [2] [3, 4]" in str(steps) and "out 1: [2] [1, 2]" in str(steps)


def test_explicit_gradient_and_several_outputs():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    steps = ember.autograd.explain(y, ember.tensor([1.0, 10.0]))
    np.testing.assert_allclose(steps[-1].incoming[0].numpy(), [2.0, 20.0])
    u, v = (x * x).sum(), (x * 3).sum()
    steps = ember.autograd.explain([u, v])
    np.testing.assert_allclose(steps[-1].incoming[0].numpy(), [5.0, 7.0])
    assert steps[-1].summed


def test_a_leaf_output_is_one_step():
    x = ember.tensor(2.0, requires_grad=True)
    steps = ember.autograd.explain(x, params={"x": x})
    assert [s.label for s in steps] == ["AccumulateGrad (x)"]
    assert steps[0].incoming[0].item() == 1.0


def test_html_for_jupyter():
    x, a, b, c, y = tutorial(ember)
    page = ember.autograd.explain(y, params={"x": x})._repr_html_()
    assert page.startswith('<table class="ember-explain"')
    assert page.count("<tr>") == 6  # the header and five steps
    assert "MeanBackward0" in page and "AccumulateGrad (x)" in page


def test_explain_after_backward_says_what_to_do():
    x, a, b, c, y = tutorial(ember)
    y.backward()
    with pytest.raises(RuntimeError, match=r"explain\(\) runs the backward pass itself"):
        ember.autograd.explain(y)


def test_bad_arguments():
    with pytest.raises(TypeError, match="expected Tensors"):
        ember.autograd.explain(3.0)
    with pytest.raises(RuntimeError, match="does not require grad"):
        ember.autograd.explain(ember.ones(2))
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        ember.autograd.explain(x * 2)
    with pytest.raises(RuntimeError, match="got 2 gradients for 1 outputs"):
        ember.autograd.explain((x * 2).sum(), [None, None])
    with pytest.raises(TypeError, match="params must be a dict"):
        ember.autograd.explain((x * 2).sum(), params=[x])


def test_a_deep_graph_needs_no_recursion():
    x = ember.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(20000):
        y = y + 1.0
    steps = ember.autograd.explain(y.sum())
    assert len(steps) == 20002
    assert steps[-1].incoming[0].item() == 1.0


@pytest.mark.cuda
@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a CUDA GPU")
def test_explain_on_cuda():
    x = ember.arange(1, 4, dtype=ember.float32, device="cuda", requires_grad=True)
    w = ember.randn(20, 3, device="cuda", requires_grad=True)
    y = ((x + 2) ** 2 + 3).mean() + (w * x).sum()
    steps = ember.autograd.explain(y, params={"x": x, "w": w})
    leaf = next(s for s in steps if s.tensor_name == "x")
    expected = np.array([2, 8 / 3, 10 / 3]) + w.detach().sum(0).cpu().numpy()
    np.testing.assert_allclose(leaf.incoming[0].cpu().numpy(), expected, rtol=1e-5)
    assert leaf.summed and leaf.incoming[0].device.type == "cuda"
    text = str(steps)
    assert "[20, 3] all 1" in text or "[20, 3] mean" in text
