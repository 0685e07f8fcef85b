"""Matrix products: matmul, mm, bmm, mv, dot, vdot, outer, addmm/addmv/addbmm/baddbmm,
einsum, tensordot, kron, cross, linalg.cross, linalg.multi_dot, linalg.vecdot (and
linalg.matmul).
"""
from __future__ import annotations

import string
import warnings

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from ..tensor import Tensor, apply_inplace
from ._util import (
    as_int,
    binary_operands,
    dtype_not_implemented,
    ensure_tensor,
    integer_scalar,
    refuse_bool,
    wrap_dim,
)
from .registry import NAMESPACES, Sample, register_op


# ============================================================================ helpers
def _constant(array, like: Tensor) -> Tensor:
    return Tensor._make(array, like._device, False)


def _shape_text(shape) -> str:
    return "x".join(str(s) for s in shape)


# ============================================================================ matmul family
class Matmul(Function):
    array_backward = True
    node_name = "MmBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        ctx.node_name = _matmul_node_name(a.ndim, b.ndim)
        # Shapes with the 1-D operands promoted to matrices, for backward.
        a2 = (1,) + a.shape if a.ndim == 1 else a.shape
        b2 = b.shape + (1,) if b.ndim == 1 else b.shape
        ctx.shapes = (a2, b2, np.broadcast_shapes(a2[:-2], b2[:-2]) + (a2[-2], b2[-1]))
        return backend.matmul(ctx.xp, _blas_ready(ctx.xp, a), _blas_ready(ctx.xp, b))

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        a, b = ctx.saved_tensors
        a2_shape, b2_shape, out2_shape = ctx.shapes
        grad2 = m.reshape(grad, out2_shape)
        a2 = m.reshape(a, a2_shape) if a.ndim == 1 else a
        b2 = m.reshape(b, b2_shape) if b.ndim == 1 else b
        need_a, need_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if need_a:
            grad_a = m.reshape(m.sum_to_shape(m.matmul(grad2, m.mT(b2)), a2_shape), a.shape)
        if need_b:
            grad_b = m.reshape(m.sum_to_shape(m.matmul(m.mT(a2), grad2), b2_shape), b.shape)
        return grad_a, grad_b


def _blas_ready(xp, array):
    """NumPy runs stacked (>2-D) products through BLAS only for contiguous operands; a
    transposed batch (``k.transpose(-2, -1)``) otherwise takes a loop hundreds of times
    slower, so copy it first. 2-D transposes are fine (BLAS takes them as flags)."""
    if array.ndim > 2 and not array.flags.c_contiguous:
        return xp.ascontiguousarray(array)
    return array


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


@register_op(operators=("__matmul__",), reflected=("__rmatmul__",), methods=("matmul",),
             samples=_matmul_samples)
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
    _refuse_bool_product(input, other, "matmul")
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


def _refuse_bool_product(a: Tensor, b: Tensor, op: str) -> None:
    """PyTorch's matrix products have no bool kernel; an empty operand runs none (but a dot
    of two vectors always does)."""
    if a._data.dtype.kind == "b" and (a._data.size and b._data.size
                                      or a._data.ndim == b._data.ndim == 1):
        refuse_bool(a, op)


def _product_operands(op: str, a, b, a_name: str, b_name: str, a_ndim: int, b_ndim: int):
    ensure_tensor(a, op, a_name)
    ensure_tensor(b, op, b_name)
    for t, name, ndim in ((a, a_name, a_ndim), (b, b_name, b_ndim)):
        if t._data.ndim != ndim:
            raise RuntimeError(f"{op}: {name} must be a {ndim}-D tensor, but got a "
                               f"{t._data.ndim}-D tensor of shape {list(t.shape)}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{op}: expected {a_name} and {b_name} to have the same dtype, but "
                           f"got {a.dtype.name} and {b.dtype.name}")
    _refuse_bool_product(a, b, op)


@register_op(methods=("mm",), samples=lambda make: [
    Sample((make((3, 4)), make((4, 2)))), Sample((make((1, 3)), make((3, 1))), name="1x1")])
def mm(input, mat2):
    """Product of two matrices: (n, m) @ (m, p) -> (n, p). No broadcasting."""
    _check_mm("mm", input, mat2)
    return Matmul.apply(input, mat2)


def _check_mm(op: str, mat1, mat2) -> None:
    _product_operands(op, mat1, mat2, "input" if op == "mm" else "mat1", "mat2", 2, 2)
    if mat1._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(f"{op}: mat1 and mat2 shapes cannot be multiplied "
                           f"({_shape_text(mat1.shape)} and {_shape_text(mat2.shape)})")


@register_op(methods=("bmm",), samples=lambda make: [
    Sample((make((2, 3, 4)), make((2, 4, 2))))])
def bmm(input, mat2):
    """Batched matrix product: (b, n, m) @ (b, m, p) -> (b, n, p). No broadcasting."""
    _product_operands("bmm", input, mat2, "input", "mat2", 3, 3)
    (b1, _, m1), (b2, m2, _) = input._data.shape, mat2._data.shape
    if b1 != b2 or m1 != m2:
        raise RuntimeError(f"bmm: expected mat2 of shape [{b1}, {m1}, *] for input of shape "
                           f"{list(input.shape)}, but got {list(mat2.shape)}")
    return Matmul.apply(input, mat2)


@register_op(methods=("mv",), samples=lambda make: [Sample((make((3, 4)), make((4,))))])
def mv(input, vec):
    """Matrix-vector product: (n, m) @ (m,) -> (n,)."""
    _product_operands("mv", input, vec, "input", "vec", 2, 1)
    if input._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(f"mv: size mismatch, got input {list(input.shape)} and vec "
                           f"{list(vec.shape)}")
    return Matmul.apply(input, vec)


def _dot(op, input, other):
    _product_operands(op, input, other, "input", "other", 1, 1)
    if input._data.shape[0] != other._data.shape[0]:
        raise RuntimeError(f"{op}: inconsistent tensor size, expected tensor "
                           f"[{input._data.shape[0]}] and src [{other._data.shape[0]}] to have "
                           f"the same number of elements, but got {input._data.shape[0]} and "
                           f"{other._data.shape[0]} elements respectively")
    return Matmul.apply(input, other)


def _dot_samples(make):
    return [Sample((make((4,)), make((4,)))), Sample((make((1,)), make((1,))), name="size 1")]


@register_op(methods=("dot",), samples=_dot_samples)
def dot(input, other):
    """Inner product of two 1-D tensors of the same size and dtype: sum_i a_i b_i."""
    return _dot("dot", input, other)


@register_op(methods=("vdot",), samples=_dot_samples)
def vdot(input, other):
    """sum_i conj(a_i) b_i; ember's tensors are real, so it equals ``dot``."""
    return _dot("vdot", input, other)


def _outer_samples(make):
    return [Sample((make((3,)), make((4,)))),
            Sample((make((2,)), make.int((3,), -3, 3)), name="int other promotes")]


@register_op(methods=("outer", "ger"), also=("ger",), samples=_outer_samples)
def outer(input, vec2):
    """Outer product of two 1-D tensors: out[i, j] = input[i] * vec2[j] (types promote)."""
    for t, name in ((input, "input"), (vec2, "vec2")):
        ensure_tensor(t, "outer", name)
        if t._data.ndim != 1:
            raise RuntimeError(f"outer: expected {name} to be a 1-D tensor, but got a "
                               f"{t._data.ndim}-D tensor of shape {list(t.shape)}")
    a, b = binary_operands(input, vec2, "outer")
    return a.reshape(-1, 1) * b.reshape(1, -1)


def _scalar_factor(value, input: Tensor, op: str, name: str):
    """beta or alpha as PyTorch takes it: cast to the input's dtype (for integers 0.5 is 0,
    True is 1); addr refuses floats for integers and bools, and bools for numbers."""
    if isinstance(value, Tensor):
        value = value.item()
    if not isinstance(value, (int, float, np.integer, np.floating, np.bool_)):
        raise TypeError(f"{op}(): argument '{name}' must be a number, not "
                        f"{type(value).__name__}")
    kind = input._data.dtype.kind
    is_bool = isinstance(value, (bool, np.bool_))
    if op == "addr":
        if kind in "biu" and isinstance(value, (float, np.floating)):
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                               "floating point number.")
        if is_bool and kind != "b":
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
    if kind == "b":
        return bool(value)
    if kind in "iu":
        return integer_scalar(value, input._data.dtype)
    return int(value) if is_bool else value


def _scaled_sum(op: str, input, product: Tensor, beta, alpha) -> Tensor:
    """beta * input + alpha * product, ``input`` broadcast to product's shape. With beta == 0
    the input is ignored (its nan and inf do not propagate), as in PyTorch."""
    ensure_tensor(input, op)
    if input.dtype is not product.dtype:
        raise RuntimeError(f"{op}: expected input and the matrices to have the same dtype, but "
                           f"got {input.dtype.name} and {product.dtype.name}")
    try:
        target = np.broadcast_shapes(tuple(input.shape), tuple(product.shape))
    except ValueError:
        target = None
    if target != tuple(product.shape):
        raise RuntimeError(f"{op}: input of shape {list(input.shape)} does not broadcast to the "
                           f"product's shape {list(product.shape)}")
    beta = _scalar_factor(beta, input, op, "beta")
    alpha = _scalar_factor(alpha, input, op, "alpha")
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return (input if beta == 1 else input * beta) + product


def _addmm_samples(make):
    return [Sample((make((3, 2)), make((3, 4)), make((4, 2)))),
            Sample((make((2,)), make((3, 4)), make((4, 2))), {"beta": 0.5, "alpha": -2.0},
                   name="broadcast input, beta, alpha"),
            Sample((make((3, 2)), make((3, 4)), make((4, 2))), {"beta": 0}, name="beta 0")]


class Addmm(Function):
    """``beta * input + alpha * (mat1 @ mat2)`` as one node (what nn.Linear runs)."""

    array_backward = True
    node_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx, input, mat1, mat2, beta, alpha):
        ctx.save_for_backward(mat1, mat2)
        ctx.input_shape, ctx.factors = input.shape, (beta, alpha)
        ctx.transposed = (_transposed(mat1), _transposed(mat2))
        out = backend.matmul(ctx.xp, mat1, mat2)  # bfloat16 stays bfloat16
        if alpha != 1:
            out *= alpha
        if beta != 0:  # beta 0 ignores the input, its nan and inf included
            out += input if beta == 1 else input * beta
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        mat1, mat2 = ctx.saved_tensors
        beta, alpha = ctx.factors
        need_input, need_mat1, need_mat2 = ctx.needs_input_grad[:3]
        scaled = grad * alpha if alpha != 1 else grad
        grad_input = grad_mat1 = grad_mat2 = None
        if need_input:
            grad_input = m.sum_to_shape(grad * beta if beta != 1 else grad, ctx.input_shape)
        if need_mat1:
            grad_mat1 = _laid_out(m, scaled, m.mT(mat2), ctx.transposed[0])
        if need_mat2:
            grad_mat2 = _laid_out(m, m.mT(mat1), scaled, ctx.transposed[1])
        return grad_input, grad_mat1, grad_mat2, None, None


def _transposed(array) -> bool:
    """A 2-D array laid out column-major only (``weight.T``, as nn.Linear passes it)."""
    flags = array.flags
    return array.ndim == 2 and flags.f_contiguous and not flags.c_contiguous


def _laid_out(m, a, b, transposed: bool):
    """``a @ b``, laid out column-major when the operand it is the gradient of was: as
    ``(b.T @ a.T).T`` (the same product, BLAS takes transposes as flags), so that the
    gradient reaching ``weight`` through ``weight.T`` is row-major like the weight and
    ``.grad`` needs no copy to match its tensor's layout."""
    if transposed:
        return m.mT(m.matmul(m.mT(b), m.mT(a)))
    return m.matmul(a, b)


@register_op(inplace=("addmm_",), methods=("addmm",), samples=_addmm_samples)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2); ``input`` broadcasts to (n, p).

    >>> ember.addmm(ember.ones(2), ember.eye(2), ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[2., 3.],
            [4., 5.]])
    """
    _check_mm("addmm", mat1, mat2)
    ensure_tensor(input, "addmm")
    out_shape = (mat1.shape[0], mat2.shape[1])
    try:
        fits = np.broadcast_shapes(tuple(input.shape), out_shape) == out_shape
    except ValueError:
        fits = False
    if not (fits and input.dtype is mat1.dtype):
        return _scaled_sum("addmm", input, mm(mat1, mat2), beta, alpha)  # raises its errors
    return Addmm.apply(input, mat1, mat2, _scalar_factor(beta, input, "addmm", "beta"),
                       _scalar_factor(alpha, input, "addmm", "alpha"))


@register_op(inplace=("addmv_",), methods=("addmv",), samples=lambda make: [
    Sample((make((3,)), make((3, 4)), make((4,)))),
    Sample((make(()), make((3, 4)), make((4,))), {"beta": 2.0, "alpha": 0.5},
           name="0-d input")])
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec); ``input`` broadcasts to (n,)."""
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha)


@register_op(inplace=("addr_",), methods=("addr",), samples=lambda make: [
    Sample((make((3, 4)), make((3,)), make((4,)))),
    Sample((make((4,)), make((3,)), make((4,))), {"beta": 0.5, "alpha": -2.0},
           name="broadcast input, beta, alpha"),
    Sample((make((3, 4)), make((3,)), make((4,))), {"beta": 0}, name="beta 0")])
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2); ``input`` broadcasts to (n, m).

    >>> ember.addr(ember.zeros(2, 2), ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
    tensor([[3., 4.],
            [6., 8.]])
    """
    for t, name in ((vec1, "vec1"), (vec2, "vec2")):
        ensure_tensor(t, "addr", name)
        if t._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got "
                               f"{t._data.ndim}-D")
    return _scaled_sum("addr", input, outer(vec1, vec2), beta, alpha)


@register_op(inplace=("addbmm_",), methods=("addbmm",), samples=lambda make: [
    Sample((make((3, 2)), make((2, 3, 4)), make((2, 4, 2)))),
    Sample((make((2,)), make((2, 3, 4)), make((2, 4, 2))), {"beta": -1.0, "alpha": 3.0},
           name="broadcast input")])
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * sum_b batch1[b] @ batch2[b] (the batch products summed)."""
    product = bmm(batch1, batch2)
    return _scaled_sum("addbmm", input, product.sum(0, dtype=product.dtype), beta, alpha)


@register_op(inplace=("baddbmm_",), methods=("baddbmm",), samples=lambda make: [
    Sample((make((2, 3, 2)), make((2, 3, 4)), make((2, 4, 2)))),
    Sample((make((3, 1)), make((2, 3, 4)), make((2, 4, 2))), {"beta": 0.5, "alpha": 2.0},
           name="broadcast input")])
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), batch by batch; ``input`` broadcasts to
    (b, n, p)."""
    return _scaled_sum("baddbmm", input, bmm(batch1, batch2), beta, alpha)


# ============================================================================ einsum
_LETTERS = string.ascii_uppercase + string.ascii_lowercase


class Einsum(Function):
    """An einsum over a normalized equation: explicit output, letters only, no size-1
    broadcasting. The gradient of operand k is itself an einsum of the output gradient and
    the other operands, so it has gradients too."""

    array_backward = True
    node_name = "EinsumBackward0"

    @staticmethod
    def forward(ctx, equation, *arrays):
        ctx.equation = equation
        ctx.sizes = [a.shape for a in arrays]
        ctx.save_for_backward(*arrays)
        return backend.einsum(ctx.xp, equation, *arrays)

    @staticmethod
    def backward(ctx, grad):
        operands = ctx.saved_tensors
        lhs, out_term = ctx.equation.split("->")
        terms = lhs.split(",")
        grads = [None]
        for k, term in enumerate(terms):
            if not ctx.needs_input_grad[k + 1]:
                grads.append(None)
                continue
            grads.append(_einsum_operand_grad(ctx.math, ctx.equation, terms, out_term, k,
                                              operands, grad, ctx.sizes[k]))
        return tuple(grads)


def _einsum_operand_grad(m, equation, terms, out_term, k, operands, grad, shape):
    """d(sum grad * einsum(...)) / d operand_k as one einsum. A label repeated in term k (a
    diagonal) gets fresh labels tied to the first by identity matrices; a label summed only
    within term k is broadcast back with ``expand``."""
    unused = [c for c in _LETTERS if c not in equation]
    target, eye_terms, eyes, first_seen = "", [], [], {}
    for position, c in enumerate(terms[k]):
        if c in first_seen:
            fresh = unused.pop(0)
            target += fresh
            eye_terms.append(c + fresh)
            eyes.append(m.eye(shape[position], grad))
        else:
            first_seen[c] = position
            target += c
    inputs_terms = [out_term] + [t for j, t in enumerate(terms) if j != k] + eye_terms
    available = set("".join(inputs_terms))
    reduced = "".join(c for c in target if c in available)
    tensors = [grad] + [o for j, o in enumerate(operands) if j != k] + eyes
    result = m.einsum(",".join(inputs_terms) + "->" + reduced, *tensors)
    if reduced != target:
        result = m.expand(m.reshape(result, tuple(s if c in available else 1
                                                  for c, s in zip(target, shape))), shape)
    return result


def _einsum_arguments(args):
    """(equation, operands) from einsum('ij,jk', a, b), einsum('ij,jk', [a, b]) or the
    sublist form einsum(a, [0, 1], b, [1, 2], [0, 2])."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        operands = args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
        return args[0], list(operands)
    operands, terms = [], []
    rest = list(args)
    while len(rest) >= 2:
        operands.append(rest.pop(0))
        terms.append(_sublist_term(rest.pop(0)))
    equation = ",".join(terms)
    if rest:
        equation += "->" + _sublist_term(rest.pop(0))
    return equation, operands


def _sublist_term(sublist) -> str:
    term = ""
    for item in sublist:
        if item is Ellipsis:
            term += "..."
            continue
        item = as_int(item, "einsum", "subscript")
        if not 0 <= item < 52:
            raise ValueError(f"einsum(): subscript in subscript list is not within the valid "
                             f"range [0, 52): {item!r}")
        term += _LETTERS[item]
    return term


def _check_subscripts(equation: str):
    """Letters, ',' and '.' (and spaces) before the one '->', letters and '.' after it;
    the index is into the equation as given, as PyTorch reports it."""
    arrow = equation.find("->")
    for i, c in enumerate(equation):
        if c in _LETTERS or c in ". " or c == "," and (arrow < 0 or i < arrow) or \
                arrow >= 0 and i in (arrow, arrow + 1):
            continue
        raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                           f"string, subscripts must be in [a-zA-Z]")


def _check_dots(term: str, where: str):
    """'.' only as one '...' per term (PyTorch's two messages, for operands and output)."""
    first = term.find(".")
    if first < 0:
        return
    output = where == "output"
    if term[first:first + 3] != "...":
        raise RuntimeError(f"einsum(): found '.' for {where} that is not part of any ellipsis"
                           + (" (...)" if output else ""))
    if "." in term[first + 3:]:
        raise RuntimeError(f"einsum(): found '.' for {where} " + (
            "but an ellipsis (...) was already found" if output else
            "for which an ellipsis was already found"))


def _parse_term(term: str, operand_index: int, ndim: int):
    """(letters before '...', letters after, number of dims '...' covers)."""
    _check_dots(term, f"operand {operand_index}")
    if "..." in term:
        before, after = term.split("...")
        covered = ndim - len(before) - len(after)
        if covered < 0:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(before) + len(after)}) is more than the number of "
                               f"dimensions ({ndim}) for operand {operand_index}")
        return before, after, covered
    if len(term) != ndim:
        raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term)}) "
                           f"does not match the number of dimensions ({ndim}) for operand "
                           f"{operand_index} and no ellipsis was given")
    return term, "", 0


@register_op(torch=lambda torch, *args: torch.einsum(*args), samples=lambda make: [
    Sample(("ij,jk->ik", make((2, 3)), make((3, 4))), name="matmul"),
    Sample(("bij,bjk", make((2, 2, 3)), make((2, 3, 2))), name="implicit output"),
    Sample(("ii->i", make((3, 3))), name="diagonal"),
    Sample(("...ij,...j->...i", make((2, 1, 3, 2)), make((4, 2))), name="ellipsis broadcast"),
    Sample(("ij,kj,k->", make((2, 3)), make((1, 3)), make((2,))), name="size-1 broadcast"),
])
def einsum(*args):
    """Einstein summation: ``einsum('ij,jk->ik', a, b)`` is sum_j a[i, j] b[j, k]. Letters
    repeated across operands are multiplied along, letters missing from the output are
    summed, a letter repeated within one operand takes its diagonal, '...' stands for
    broadcast batch dimensions, and without '->' the output is '...' followed by the
    letters that occur once, in alphabetical order. Size-1 dimensions broadcast against the
    same letter's size in other operands. The sublist form einsum(a, [0, 1], b, [1, 2], [0, 2])
    is accepted too. Cost: NumPy's contraction order (``optimize=True``)."""
    equation, operands = _einsum_arguments(args)
    for i, t in enumerate(operands):
        ensure_tensor(t, "einsum", f"operands[{i}]")
    _check_subscripts(equation)
    equation = equation.replace(" ", "")
    if "->" in equation:
        lhs, rhs = equation.split("->", 1)
    else:
        lhs, rhs = equation, None
    terms = lhs.split(",")
    if len(terms) != len(operands):
        more = "more" if len(operands) > len(terms) else "fewer"
        raise RuntimeError(f"einsum(): {more} operands were provided than specified in the "
                           f"equation '{equation}' ({len(operands)} operands, {len(terms)} "
                           f"terms)")
    dtype = operands[0].dtype
    for t in operands[1:]:
        if t.dtype is not dtype:
            raise RuntimeError(f"einsum(): expected all operands to have the same dtype, but "
                               f"got {[o.dtype.name for o in operands]}")
    parsed = [_parse_term(term, i, t._data.ndim) for i, (term, t) in
              enumerate(zip(terms, operands))]
    used = set(lhs.replace(".", "")) | set((rhs or "").replace(".", ""))
    ellipsis_ndim = max((p[2] for p in parsed), default=0)
    free = [c for c in _LETTERS if c not in used]
    if len(free) < ellipsis_ndim:
        raise RuntimeError("einsum(): too many dimensions: at most 52 labels are supported")
    ellipsis_letters = "".join(free[:ellipsis_ndim])
    # Each operand's full term, '...' replaced by letters aligned from the right.
    full_terms = [before + (ellipsis_letters[ellipsis_ndim - covered:] if covered else "") +
                  after for before, after, covered in parsed]
    if rhs is None:
        counts = {}
        for c in "".join(full_terms):
            counts[c] = counts.get(c, 0) + 1
        output = ellipsis_letters + "".join(sorted(c for c, n in counts.items()
                                                   if n == 1 and c not in ellipsis_letters))
    else:
        _check_dots(rhs, "output")
        output = rhs.replace("...", ellipsis_letters)
        for c in rhs.replace("...", ""):
            if output.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                                   f"the output")
            if c not in lhs:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   f"equation for any input operand")
    # Label sizes: equal, or 1 (broadcast). Within one operand a repeated label must match.
    sizes = {}
    for i, (term, t) in enumerate(zip(full_terms, operands)):
        seen = {}
        for c, s in zip(term, t._data.shape):
            if c in seen and seen[c] != s:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but "
                                   f"the sizes don't match, {s} != {seen[c]}")
            seen[c] = s
            if s != 1:
                if sizes.get(c, 1) not in (1, s):
                    raise _size_mismatch(c, s, sizes[c], i, ellipsis_letters, parsed[i][2])
                sizes[c] = s
            else:
                sizes.setdefault(c, 1)
    # Size-1 dims against a larger size elsewhere: drop them (the operand is constant
    # along that label), so NumPy's einsum sees consistent sizes.
    final_terms, final_operands = [], []
    for term, t in zip(full_terms, operands):
        keep = [i for i, (c, s) in enumerate(zip(term, t._data.shape))
                if not (s == 1 and sizes[c] > 1)]
        if len(keep) != len(term):
            t = t.reshape(tuple(t._data.shape[i] for i in keep))
            term = "".join(term[i] for i in keep)
        final_terms.append(term)
        final_operands.append(t)
    if not dtype.is_floating_point:
        final_operands = _integer_einsum(full_terms, output, final_operands, dtype)
    # Every output label survives: a dropped dim had size 1 where another operand has more.
    return Einsum.apply(",".join(final_terms) + "->" + output, *final_operands)


def _integer_einsum(terms, output: str, operands, dtype):
    """Integer and bool operands in PyTorch's einsum dtypes: a label summed within one
    operand is a ``sum`` (int64, as integer sums are), a label contracted between operands a
    ``bmm`` (no bool kernel, and both sides of one dtype)."""
    counts: dict = {}
    for term in terms:
        for c in set(term):
            counts[c] = counts.get(c, 0) + 1
    summed = [any(counts[c] == 1 and c not in output for c in term) for term in terms]
    contracted = any(n > 1 and c not in output for c, n in counts.items())
    if contracted and not all(summed):
        if dtype is dtypes.bool and all(t._data.size for t in operands):
            raise dtype_not_implemented("bmm", dtype, "einsum contracts bools with a matrix "
                                        "product: convert with .int() or .float() first")
        if any(summed) and dtype is not dtypes.int64:
            raise RuntimeError(f"einsum(): expected scalar type {dtype.scalar_name} but found "
                               "Long (operands summed on their own become int64 before the "
                               "contraction: convert them to one dtype first)")
    if any(summed):
        return [t.to(dtypes.int64) for t in operands]
    return operands


def _size_mismatch(c: str, size: int, seen: int, i: int, ellipsis_letters: str,
                   covered: int) -> RuntimeError:
    if c not in ellipsis_letters:
        return RuntimeError(f"einsum(): subscript {c} has size {size} for operand {i} which "
                            f"does not broadcast with previously seen size {seen}")
    # a letter standing for '...': PyTorch counts the dims this operand's '...' covers
    k = ellipsis_letters.index(c) - (len(ellipsis_letters) - covered)
    return RuntimeError(f"einsum(): dimension {k} covered by ellipsis in operand {i} has size "
                        f"{size} which does not broadcast with previously seen ellipsis with "
                        f"size {seen} for the respective dimension")


# ============================================================================ tensordot, kron
def _tensordot_samples(make):
    return [Sample((make((2, 3, 4)), make((3, 4, 2)))),
            Sample((make((2, 3)), make((3, 2))), {"dims": 1}, name="dims=1"),
            Sample((make((3, 2, 4)), make((4, 3))), {"dims": ([0, 2], [1, 0])}, name="lists"),
            Sample((make((2,)), make((3,))), {"dims": 0}, name="outer")]


@register_op(samples=_tensordot_samples)
def tensordot(a, b, dims=2):
    """Contract ``dims`` dimensions: an int n pairs the last n dims of a with the first n of
    b; a pair of lists ([a dims], [b dims]) names them. The result has a's free dims, then
    b's."""
    ensure_tensor(a, "tensordot", "a")
    ensure_tensor(b, "tensordot", "b")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"tensordot: both inputs should have same dtype, but got "
                           f"{a.dtype.name} and {b.dtype.name}")
    _refuse_bool_product(a, b, "tensordot")
    na, nb = a._data.ndim, b._data.ndim
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        if dims < 0 or dims > min(na, nb):
            raise RuntimeError(f"tensordot: dims must be in [0, {min(na, nb)}] for shapes "
                               f"{list(a.shape)} and {list(b.shape)}, but got {dims}")
        dims_a, dims_b = list(range(na - dims, na)), list(range(dims))
    elif isinstance(dims, (list, tuple)) and len(dims) == 2:
        dims_a, dims_b = ([d] if isinstance(d, (int, np.integer)) else list(d) for d in dims)
        if len(dims_a) != len(dims_b):
            raise RuntimeError(f"tensordot: both dimension lists should have same length, but "
                               f"got {dims_a} and {dims_b}")
        dims_a = [wrap_dim(d, na, "tensordot") for d in dims_a]
        dims_b = [wrap_dim(d, nb, "tensordot") for d in dims_b]
    else:
        raise TypeError(f"tensordot(): dims must be an int or a pair of lists of dims, not "
                        f"{dims!r}")
    for da, db in zip(dims_a, dims_b):
        if a._data.shape[da] != b._data.shape[db]:
            raise RuntimeError(f"tensordot: contracted dimensions need to match, but first has "
                               f"size {a._data.shape[da]} in dim {da} and second has size "
                               f"{b._data.shape[db]} in dim {db}")
    if na + nb - len(dims_a) > 52:
        raise RuntimeError("tensordot: too many dimensions")
    term_a = _LETTERS[:na]
    letters_b = iter(_LETTERS[na:])
    term_b = "".join(term_a[dims_a[dims_b.index(i)]] if i in dims_b else next(letters_b)
                     for i in range(nb))
    out = "".join(c for i, c in enumerate(term_a) if i not in dims_a) + \
        "".join(c for i, c in enumerate(term_b) if i not in dims_b)
    return Einsum.apply(f"{term_a},{term_b}->{out}", a, b)


@register_op(methods=("kron",), samples=lambda make: [
    Sample((make((2, 3)), make((2, 2)))),
    Sample((make((3,)), make((2, 1, 2))), name="different ndim")])
def kron(input, other):
    """Kronecker product: out[i*q + k, j*r + l] = a[i, j] * b[k, l] for matrices, and the same
    per dimension for any ndim (the shorter shape padded with leading 1s)."""
    ensure_tensor(input, "kron")
    ensure_tensor(other, "kron", "other")
    a, b = binary_operands(input, other, "kron")
    n = max(a._data.ndim, b._data.ndim)
    sa = (1,) * (n - a._data.ndim) + tuple(a._data.shape)
    sb = (1,) * (n - b._data.ndim) + tuple(b._data.shape)
    a_shape = tuple(x for s in sa for x in (s, 1))
    b_shape = tuple(x for s in sb for x in (1, s))
    return (a.reshape(a_shape) * b.reshape(b_shape)).reshape(tuple(x * y for x, y in
                                                                   zip(sa, sb)))


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    """In-place ``addmv``: writes beta * input + alpha * (mat @ vec) into input."""
    return apply_inplace(input, addmv, mat, vec, beta=beta, alpha=alpha)


NAMESPACES["ember"]["addmv_"] = addmv_


# ============================================================================ vecdot, multi_dot
# torch.linalg.matmul is torch.matmul
NAMESPACES["linalg"]["matmul"] = NAMESPACES["ember"]["matmul"]


@register_op(namespace="linalg", samples=lambda make: [
    Sample((make((2, 3)), make((2, 3)))),
    Sample((make((3, 1)), make((4,))), {"dim": 0}, name="broadcast, dim 0")])
def vecdot(x, y, *, dim=-1):
    """The dot product of vectors along ``dim``: sum_i x_i y_i, the other dims broadcast."""
    ensure_tensor(x, "linalg.vecdot", "x")
    ensure_tensor(y, "linalg.vecdot", "y")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {x.dtype.name} and y of type {y.dtype.name} instead.")
    if x._data.dtype.kind not in "fV":
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {x.dtype.scalar_name} (convert with .float())")
    return (x * y).sum(dim)


@register_op(namespace="linalg", samples=lambda make: [
    Sample(([make((2, 3)), make((3, 4)), make((4, 2))],), name="matrices"),
    Sample(([make((3,)), make((3, 4)), make((4, 2)), make((2,))],), name="vector ends")])
def multi_dot(tensors):
    """The product of a chain of matrices, multiplied in the cheapest order (dynamic
    programming over split points, O(k^3) steps for k <= 64 matrices; longer chains go left
    to right). The first tensor may be a row
    vector and the last a column vector (1-D); those dims are dropped from the result."""
    if not isinstance(tensors, (list, tuple)) or len(tensors) < 2:
        count = len(tensors) if isinstance(tensors, (list, tuple)) else type(tensors).__name__
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {count}")
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        ensure_tensor(t, "linalg.multi_dot", f"tensors[{i}]")
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t._data.ndim not in allowed:
            raise RuntimeError(f"multi_dot(): tensor {i} must be "
                               f"{' or '.join(f'{d}D' for d in allowed)} but got "
                               f"{t._data.ndim}D")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have the same dtype, but tensor 0 "
                               f"is {tensors[0].dtype.name} and tensor {i} is {t.dtype.name}")
    if all(t._data.size for t in tensors):
        refuse_bool(tensors[0], "linalg.multi_dot")
    first_vector, last_vector = tensors[0]._data.ndim == 1, tensors[-1]._data.ndim == 1
    if first_vector:
        tensors[0] = tensors[0].unsqueeze(0)
    if last_vector:
        tensors[-1] = tensors[-1].unsqueeze(-1)
    for i in range(len(tensors) - 1):
        if tensors[i]._data.shape[1] != tensors[i + 1]._data.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               "cannot be multiplied")
    dims = [t._data.shape[0] for t in tensors] + [tensors[-1]._data.shape[1]]
    k = len(tensors)
    if k > 64:  # the order search costs O(k^3) Python steps: go left to right
        result = tensors[0]
        for t in tensors[1:]:
            result = Matmul.apply(result, t)
        return _squeeze_ends(result, first_vector, last_vector)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    # Evaluate the split tree bottom-up with an explicit stack (no recursion).
    done = {}
    stack = [(0, k - 1)]
    while stack:
        i, j = stack[-1]
        if i == j:
            done[i, j] = tensors[i]
            stack.pop()
            continue
        left, right = (i, split[i][j]), (split[i][j] + 1, j)
        missing = [part for part in (left, right) if part not in done]
        if missing:
            stack.extend(missing)
            continue
        done[i, j] = Matmul.apply(done.pop(left), done.pop(right))
        stack.pop()
    return _squeeze_ends(done[0, k - 1], first_vector, last_vector)


_CHAIN_MATMUL_WARNED: list = []


@register_op(torch=lambda torch, *matrices: torch.chain_matmul(*matrices), samples=lambda make: [
    Sample((make((2, 3)), make((3, 4)), make((4, 2))), name="three"),
    Sample((make((3, 2)),), name="one")])
def chain_matmul(*matrices):
    """The product of 2-D matrices, multiplied in the cheapest order; the older spelling of
    ``linalg.multi_dot`` (which also takes vector ends).

    >>> ember.chain_matmul(ember.eye(2), ember.ones(2, 3)).shape
    ember.Size([2, 3])
    """
    if not _CHAIN_MATMUL_WARNED:  # once per process, as PyTorch
        _CHAIN_MATMUL_WARNED.append(True)
        warnings.warn("ember.chain_matmul is deprecated; use ember.linalg.multi_dot instead, "
                      "which accepts a list of two or more tensors rather than multiple "
                      "parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, t in enumerate(matrices):
        ensure_tensor(t, "chain_matmul", f"matrices[{i}]")
        if t._data.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t._data.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(list(matrices))


def _squeeze_ends(result, first_vector, last_vector):
    if first_vector:
        result = result.squeeze(0)
    if last_vector:
        result = result.squeeze(-1)
    return result


# ----------------------------------------------------------------------------- cross products
def _cross(input, other, dim, op):
    for arg, value in (("input", input), ("other", other)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{op}(): argument '{arg}' must be Tensor, not "
                            f"{type(value).__name__}")
    if input._data.ndim != other._data.ndim:
        raise RuntimeError(f"{op}: inputs must have the same number of dimensions (got "
                           f"{input._data.ndim} and {other._data.ndim})")
    try:
        shape = np.broadcast_shapes(input._data.shape, other._data.shape)
    except ValueError:
        raise RuntimeError(f"{op}: shapes {list(input.shape)} and {list(other.shape)} don't "
                           "broadcast") from None
    if dim is None:  # torch.cross's legacy default: the first dim of size 3
        import warnings

        warnings.warn("Using cross without specifying the dim arg is deprecated: pass the dim "
                      "explicitly or use linalg.cross (the default will become -1, as in "
                      "linalg.cross).", UserWarning, stacklevel=3)
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError(f"{op}: no dimension of size 3 in input")
    d = wrap_dim(dim, len(shape), op)
    sizes = [(1,) * (len(shape) - t._data.ndim) + t._data.shape for t in (input, other)]
    if sizes[0][d] != 3 or sizes[1][d] != 3:
        raise RuntimeError(f"{op}: inputs dimension {dim} must have length 3. Got "
                           f"{sizes[0][d]} and {sizes[1][d]}")
    a, b = binary_operands(input, other, op)
    for t in (input, a):
        refuse_bool(t, "cross")
    a, b = a.expand(shape), b.expand(shape)
    xp = backend.xp_for_device(a._device)
    next1 = Tensor._make(xp.asarray([1, 2, 0], dtype=np.int64), a._device)
    next2 = Tensor._make(xp.asarray([2, 0, 1], dtype=np.int64), a._device)
    return (a.index_select(d, next1) * b.index_select(d, next2)
            - a.index_select(d, next2) * b.index_select(d, next1))


def _cross_samples(make):
    return [Sample((make((4, 3)), make((4, 3))), {"dim": 1}, name="rows"),
            Sample((make((3, 2)), make((3, 1))), {"dim": 0}, name="broadcast"),
            Sample((make((2, 3)), make((2, 3))), {"dim": -1}, name="negative dim")]


@register_op(methods=("cross",), samples=_cross_samples)
def cross(input, other, dim=None):
    """Cross product of 3-vectors along ``dim`` (broadcast):
    ``(a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0)``; without a dim, the first dim of size
    3 (PyTorch's legacy default)."""
    return _cross(input, other, dim, "cross")


@register_op("cross", namespace="linalg", samples=lambda make: [
    Sample((make((4, 3)), make((4, 3))), name="rows"),
    Sample((make((2, 1, 3)), make((1, 3, 3))), name="broadcast"),
    Sample((make((3, 2)), make((3, 2))), {"dim": 0}, name="dim 0")])
def linalg_cross(input, other, *, dim=-1):
    """Cross product of 3-vectors along ``dim`` (the last by default), broadcasting the
    other dims."""
    return _cross(input, other, dim, "linalg.cross")
