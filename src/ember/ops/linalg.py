"""Matrix products: matmul (1-D, 2-D, batched, broadcast)."""
from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ._util import ensure_tensor, sum_to_shape
from .registry import Sample, register_op


class Matmul(Function):
    node_name = "MmBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        ctx.node_name = _matmul_node_name(a.ndim, b.ndim)
        # Shapes with the 1-D operands promoted to matrices, for backward.
        a2 = (1,) + a.shape if a.ndim == 1 else a.shape
        b2 = b.shape + (1,) if b.ndim == 1 else b.shape
        ctx.shapes = (a2, b2, np.broadcast_shapes(a2[:-2], b2[:-2]) + (a2[-2], b2[-1]))
        return ctx.xp.matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        a2_shape, b2_shape, out2_shape = ctx.shapes
        grad2 = grad.reshape(out2_shape)
        a2 = a.reshape(a2_shape) if a.ndim == 1 else a
        b2 = b.reshape(b2_shape) if b.ndim == 1 else b
        need_a, need_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if need_a:
            grad_a = sum_to_shape(matmul(grad2, b2.mT), a2_shape).reshape(a.shape)
        if need_b:
            grad_b = sum_to_shape(matmul(a2.mT, grad2), b2_shape).reshape(b.shape)
        return grad_a, grad_b


def _matmul_node_name(a_ndim: int, b_ndim: int) -> str:
    if a_ndim == 1 and b_ndim == 1:
        return "DotBackward0"
    if a_ndim == 2 and b_ndim == 1:
        return "MvBackward0"
    if a_ndim == 2 and b_ndim == 2:
        return "MmBackward0"
    if a_ndim == 3 and b_ndim == 3:
        return "BmmBackward0"
    return "UnsafeViewBackward0"


def _matmul_samples(make):
    return [Sample((make((3, 4)), make((4, 2))), name="mm"),
            Sample((make((4,)), make((4,))), name="dot"),
            Sample((make((3, 4)), make((4,))), name="mv"),
            Sample((make((4,)), make((4, 2))), name="vm"),
            Sample((make((2, 3, 4)), make((2, 4, 2))), name="bmm"),
            Sample((make((2, 1, 3, 4)), make((3, 4, 2))), name="broadcast batch"),
            Sample((make((2, 3, 4)), make((4,))), name="batch @ vector")]


@register_op(methods=("matmul",), samples=_matmul_samples)
def matmul(input, other):
    """Matrix product with NumPy's rules: 1-D operands act as vectors, leading dimensions
    broadcast as batches. Both operands must have the same dtype, as in PyTorch."""
    ensure_tensor(input, "matmul")
    ensure_tensor(other, "matmul", "other")
    a_ndim, b_ndim = input._data.ndim, other._data.ndim
    if a_ndim == 0 or b_ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a_ndim}D and {b_ndim}D")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{input.dtype.name} != {other.dtype.name}")
    k_a = input._data.shape[-1]
    k_b = other._data.shape[-2] if b_ndim > 1 else other._data.shape[0]
    if k_a != k_b:
        if a_ndim == 1 and b_ndim == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{k_a}] and src "
                               f"[{k_b}] to have the same number of elements, but got {k_a} and "
                               f"{k_b} elements respectively")
        rows = int(np.prod(input._data.shape[:-1])) if a_ndim > 1 else 1
        cols = other._data.shape[-1] if b_ndim > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k_a} and "
                           f"{k_b}x{cols})")
    try:
        return Matmul.apply(input, other)
    except ValueError:
        raise RuntimeError(f"matmul(): batch dimensions of {list(input.shape)} and "
                           f"{list(other.shape)} don't broadcast") from None
