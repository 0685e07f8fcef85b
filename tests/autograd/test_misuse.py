"""Misuse of the autograd API: the errors PyTorch raises (type and gist), and ``.data``'s
own version counter."""
from __future__ import annotations

import numpy as np
import pytest

import ember

from ..conftest import requires_torch


# ----------------------------------------------------------------- .data and detach()
def test_data_writes_are_not_seen_by_autograd():
    x = ember.ones(3, requires_grad=True)
    y = x.exp()
    y.data.mul_(2)  # y is saved by exp's backward; .data has its own counter
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2 * np.e), rtol=1e-6)
    x = ember.ones(3, requires_grad=True)
    y = x * x
    x.data.mul_(3)
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0, 6.0]  # the saved x now reads 3, as in PyTorch


def test_data_has_a_fresh_counter_each_time_and_shares_memory():
    x = ember.ones(3, requires_grad=True)
    a, b = x.data, x.data
    assert not a.requires_grad and a.is_leaf and a._base is None
    a.add_(1)
    assert x._version == 0 and a._version == 1 and b._version == 0
    assert x.tolist() == [2.0, 2.0, 2.0]
    with ember.inference_mode():
        i = ember.ones(2)
    assert i.data.is_inference() and not x.data.is_inference()


def test_detach_still_shares_the_version_counter():
    x = ember.ones(3, requires_grad=True)
    y = x.exp()
    y.detach().mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_data_assignment():
    x = ember.ones(3, requires_grad=True)
    x.data = ember.zeros(2, dtype=ember.float64)
    assert x.tolist() == [0.0, 0.0] and x.dtype is ember.float64 and x.requires_grad
    with pytest.raises(TypeError, match="int"):
        x.data = 5


@requires_torch
def test_data_writes_match_torch():
    import torch

    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        y = x.exp()
        y.data.mul_(2)
        y.sum().backward()
        if lib is ember:
            got = x.grad.numpy()
        else:
            np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-6)


# ----------------------------------------------------------------- tensor and node hooks
def _hooked(hook, leaf):
    x = ember.ones(3, requires_grad=True)
    t = x if leaf else x * 1
    t.register_hook(hook)
    t.sum().backward()
    return x.grad


@pytest.mark.parametrize("leaf", [True, False])
def test_hook_changing_the_dtype_raises(leaf):
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has changed the type of value "
                                           r"\(was ember.FloatTensor got ember.DoubleTensor\)"):
        _hooked(lambda g: g.double(), leaf)

    def named(g):
        return g.int()

    with pytest.raises(RuntimeError, match="hook 'named' has changed the type of value"):
        _hooked(named, leaf)


@pytest.mark.parametrize("leaf", [True, False])
def test_hook_changing_the_size_raises(leaf):
    with pytest.raises(RuntimeError, match=r"has changed the size of value \(was \[3\] got"):
        _hooked(lambda g: g[:2], leaf)
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        _hooked(lambda g: g.reshape(3, 1), leaf)


@pytest.mark.parametrize("leaf", [True, False])
def test_hook_returning_a_non_tensor_raises(leaf):
    with pytest.raises(TypeError, match="expected Tensor, but hook '<lambda>' returned 'int'"):
        _hooked(lambda g: 5, leaf)


@pytest.mark.parametrize("leaf", [True, False])
def test_hook_replacing_with_a_like_tensor_still_works(leaf):
    assert _hooked(lambda g: g * 2, leaf).tolist() == [2.0, 2.0, 2.0]


def test_leaf_hook_sees_the_gradient_in_grad_dtype():
    x = ember.ones(3, requires_grad=True)
    x.grad_dtype = ember.float64
    seen = []
    x.register_hook(lambda g: seen.append(g.dtype) or g.double())
    x.sum().backward()
    assert seen == [ember.float64] and x.grad.dtype is ember.float64


def _node_hooked(pre=None, post=None):
    x = ember.ones(3, requires_grad=True)
    z = (x * 2) * 3
    if pre is not None:
        z.grad_fn.register_prehook(pre)
    if post is not None:
        z.grad_fn.register_hook(post)
    z.sum().backward()
    return x.grad


def test_node_hooks_are_checked():
    with pytest.raises(RuntimeError, match="has changed the type of value"):
        _node_hooked(pre=lambda go: (go[0].double(),))
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        _node_hooked(pre=lambda go: (go[0][:2],))
    with pytest.raises(TypeError, match="expected tuple, but hook returned 'list'"):
        _node_hooked(pre=lambda go: [go[0]])
    with pytest.raises(RuntimeError, match=r"incorrect number of values \(got 1, but "
                                           r"expected 2\)"):
        _node_hooked(post=lambda gi, go: (gi[0],))
    with pytest.raises(RuntimeError, match="can't replace a None gradient"):
        _node_hooked(post=lambda gi, go: (gi[0], ember.ones(())))
    assert _node_hooked(post=lambda gi, go: (gi[0] * 2, None)).tolist() == [12.0] * 3


@requires_torch
def test_hook_errors_match_torch():
    import torch

    for hook, kind in [(lambda g: g.double(), RuntimeError), (lambda g: g[:2], RuntimeError),
                       (lambda g: 5, TypeError)]:
        for lib in (ember, torch):
            x = lib.ones(3, requires_grad=True)
            x.register_hook(hook)
            with pytest.raises(kind, match="hook"):
                x.sum().backward()


# ----------------------------------------------------------------- assigning .grad
def test_grad_assignment_checks():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="can't assign Variable as its own grad"):
        x.grad = x
    y = x * 2
    with pytest.raises(RuntimeError, match="can't assign Variable as its own grad"):
        y.grad = y
    with pytest.raises(TypeError, match="but got grad of type int"):
        x.grad = 5
    with pytest.raises(TypeError, match="but got grad of type list"):
        x.grad = [1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="gradient with dtype 'float64' to a tensor with "
                                           "grad_dtype 'float32'"):
        x.grad = ember.ones(3, dtype=ember.float64)
    with pytest.raises(RuntimeError, match=r"gradient of size '\[2\]' to a tensor of size "
                                           r"'\[3\]'"):
        x.grad = ember.ones(2)
    with pytest.raises(RuntimeError, match="dtype"):  # dtype is checked before size
        x.grad = ember.ones(2, dtype=ember.float64)
    x.grad = x.detach()  # sharing memory is allowed, as in PyTorch
    x.grad = None
    assert x.grad is None


def test_grad_assignment_follows_grad_dtype():
    x = ember.ones(3, requires_grad=True)
    x.grad_dtype = ember.float64
    x.grad = ember.ones(3, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="grad_dtype 'float64'"):
        x.grad = ember.ones(3)
    x.grad_dtype = None  # any dtype
    x.grad = ember.ones(3, dtype=ember.float16)
    assert x.grad.dtype is ember.float16


@requires_torch
def test_grad_assignment_matches_torch():
    import torch

    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="own grad"):
            x.grad = x
        with pytest.raises(TypeError, match="grad of type int"):
            x.grad = 5
        with pytest.raises(RuntimeError, match="same size"):
            x.grad = lib.ones(2)
        with pytest.raises(RuntimeError, match="grad_dtype"):
            x.grad = lib.ones(3, dtype=lib.float64)


# ----------------------------------------------------------------- gradient arguments
@pytest.mark.parametrize("shape", [(), (1,), (3,)])
@pytest.mark.parametrize("gradient", [5, 5.0, True, [1.0], (1.0,), np.ones(1)])
def test_backward_refuses_numbers_and_lists(shape, gradient):
    x = ember.ones(shape, requires_grad=True)
    y = x * 2
    with pytest.raises(TypeError, match="gradients can be either Tensors or None"):
        y.backward(gradient)
    with pytest.raises(TypeError, match="gradients can be either Tensors or None"):
        ember.autograd.backward(y, gradient)
    with pytest.raises(TypeError, match="gradients can be either Tensors or None"):
        ember.autograd.grad(y, x, gradient)
    assert x.grad is None


def test_backward_type_is_checked_before_the_count():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(TypeError, match="but got float"):
        (x * 2).backward([1.0, 2.0, 3.0])  # torch: TypeError too


def test_tensor_gradients_still_work():
    x = ember.ones((), requires_grad=True)
    (x * 2).backward(ember.tensor(3.0))
    ember.autograd.backward([x * 2], [None])
    assert x.grad.item() == 8.0


@requires_torch
@pytest.mark.parametrize("gradient", [5, 5.0, [1.0]])
def test_backward_number_matches_torch(gradient):
    import torch

    for lib in (ember, torch):
        x = lib.ones((), requires_grad=True)
        with pytest.raises(TypeError):
            (x * 2).backward(gradient)


# ----------------------------------------------------------------- autograd.grad inputs
def test_grad_needs_inputs():
    x = ember.ones((), requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match=r"`inputs` argument to `grad\(\)` cannot be empty"):
        ember.autograd.grad(y, [])
    with pytest.raises(RuntimeError, match="cannot be empty"):
        ember.autograd.grad(y, (), allow_unused=True)
    with pytest.raises(TypeError, match="not None"):
        ember.autograd.grad(y, None)
    with pytest.raises(RuntimeError, match=r"`inputs` argument to `backward\(\)` cannot be "
                                           "empty"):
        ember.autograd.backward(y, inputs=[])


def test_grad_outputs_count():
    x = ember.ones((), requires_grad=True)
    y1, y2 = x * 2, x * 3
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        ember.autograd.grad([y1, y2], [x], grad_outputs=[ember.ones(())])
    with pytest.raises(RuntimeError, match="got 2 tensors and 0 gradients"):
        ember.autograd.grad([y1, y2], [x], grad_outputs=[])  # not read as "none given"
    with pytest.raises(RuntimeError, match="got 2 tensors and 0 gradients"):
        ember.autograd.backward([y1, y2], grad_tensors=[])
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        ember.autograd.backward([y1, y2], grad_tensors=[ember.ones(())])
    assert x.grad is None
    (g,) = ember.autograd.grad([y1, y2], [x], grad_outputs=[ember.ones(()), None])
    assert g.item() == 5.0


@requires_torch
def test_grad_inputs_match_torch():
    import torch

    for lib in (ember, torch):
        x = lib.ones((), requires_grad=True)
        y1, y2 = x * 2, x * 3
        with pytest.raises(RuntimeError, match="cannot be empty"):
            lib.autograd.grad(y1, [])
        with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
            lib.autograd.grad([y1, y2], [x], grad_outputs=[lib.ones(())])
        with pytest.raises(RuntimeError, match="got 2 tensors and 0 gradients"):
            lib.autograd.grad([y1, y2], [x], grad_outputs=[])


# ----------------------------------------------------------------- save_for_backward
def _saving(*extra):
    class Saving(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, *extra)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            ctx.saved_tensors
            return grad * 2

    return Saving


@pytest.mark.parametrize("value, name", [(5, "int"), (2.5, "float"), ([1.0], "list")])
def test_save_for_backward_refuses_non_tensors(value, name):
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(TypeError, match=f"save_for_backward can only save variables, but "
                                        f"argument 1 is of type {name}"):
        _saving(value).apply(x)


def test_save_for_backward_accepts_none_and_tensors():
    x = ember.ones(3, requires_grad=True)
    _saving(None, ember.ones(2)).apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    _saving(5).apply(ember.ones(3))  # nothing is saved without a graph, as in PyTorch


def test_save_for_backward_in_setup_context():
    class Setup(ember.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(3)

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(TypeError, match="argument 0 is of type int"):
        Setup.apply(ember.ones(3, requires_grad=True))


@requires_torch
def test_save_for_backward_matches_torch():
    import torch

    for lib in (ember, torch):
        class Saving(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(5)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad

        with pytest.raises(TypeError, match="argument 0 is of type int"):
            Saving.apply(lib.ones(3, requires_grad=True))
