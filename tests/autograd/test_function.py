"""User-defined ember.autograd.Function, as in PyTorch."""
from __future__ import annotations

import pytest

import ember
from ember.autograd import Function, once_differentiable


class Cube(Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x ** 3 * scale

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2 * ctx.scale, None


def test_custom_function_forward_backward_and_double_backward():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"
    assert y.tolist() == [2.0, 16.0]
    (g,) = ember.autograd.grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [6.0, 24.0]
    (gg,) = ember.autograd.grad(g.sum(), x)
    assert gg.tolist() == [12.0, 24.0]
    assert ember.autograd.gradcheck(lambda t: Cube.apply(t, 2.0), (x,))
    assert ember.autograd.gradgradcheck(lambda t: Cube.apply(t, 2.0), (x,))


def test_needs_input_grad_and_non_differentiable_outputs():
    class SortWithIndices(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.flags = ctx.needs_input_grad
            values = x + y
            indices = ember.arange(x.numel())
            ctx.mark_non_differentiable(indices)
            return values, indices

        @staticmethod
        def backward(ctx, grad_values, grad_indices):
            return grad_values, grad_values

    a = ember.ones(3, requires_grad=True)
    b = ember.ones(3)
    values, indices = SortWithIndices.apply(a, b)
    assert values.requires_grad and not indices.requires_grad
    assert values.grad_fn.flags == (True, False)


def test_setup_context_style():
    class Square(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = ember.tensor(3.0, requires_grad=True)
    Square.apply(x).backward()
    assert x.grad.item() == 6.0


def test_wrong_gradient_shape_is_reported():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad.sum()

    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="returned an invalid gradient at index 0"):
        Bad.apply(x).sum().backward()


def test_once_differentiable_blocks_double_backward():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    x = ember.tensor(1.0, requires_grad=True)
    v = ember.tensor(2.0, requires_grad=True)  # an upstream gradient that is tracked
    (g,) = ember.autograd.grad(Exp.apply(x), x, grad_outputs=v, create_graph=True)
    assert g.item() == pytest.approx(2 * 2.718281828)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        ember.autograd.grad(g, v)


def test_saved_input_modified_in_place_raises_at_backward():
    x = ember.ones(3, requires_grad=True)
    y = x * 1
    z = Cube.apply(y, 1.0)
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
