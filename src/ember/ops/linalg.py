"""Linear algebra: matrix products (matmul, mm, bmm, mv, dot, outer, addmm and friends,
einsum, tensordot, kron, linalg.multi_dot, linalg.vecdot), diagonals and triangles (diag,
diagonal, diag_embed, trace, tril, triu) and ``ember.linalg``: inv, det, slogdet, solve,
solve_triangular, cholesky, qr, svd, svdvals, eigh, eigvalsh, matrix_power, matrix_rank,
pinv, norm (which calls linalg.vector_norm / linalg.matrix_norm from ops/reduce.py).

Every decomposition's backward is written with ember ops (matmul, solve, inv, ...), so
gradients of gradients work. Decompositions run on ``xp.linalg`` (LAPACK through NumPy on
the CPU, cuSOLVER through CuPy on the GPU); a singular or non-positive-definite input raises
``ember.linalg.LinAlgError`` (a RuntimeError, as PyTorch's).

Sign convention: singular vectors (svd) and eigenvectors (eigh) are unique only up to sign;
ember fixes the sign so that the entry of largest magnitude of each vector (each column of
U or of the eigenvector matrix) is positive. The results then agree across devices and
LAPACK builds; PyTorch leaves the signs to the library, so they may differ from PyTorch's
by a sign flip of whole vectors (both are valid decompositions).
"""
from __future__ import annotations

import string
from collections import namedtuple

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor, _inplace
from ._util import binary_operands, ensure_tensor, sum_to_shape, wrap_dim
from .registry import NAMESPACES, Sample, bind_method, register_op


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input: a singular matrix for inv/solve, a
    matrix that is not positive-definite for cholesky, no convergence for svd/eigh. A
    subclass of RuntimeError, as ``torch.linalg.LinAlgError``."""


LinAlgError.__module__ = "ember.linalg"
NAMESPACES["linalg"]["LinAlgError"] = LinAlgError

SlogdetResult = namedtuple("slogdet", ["sign", "logabsdet"])
QRResult = namedtuple("qr", ["Q", "R"])
SVDResult = namedtuple("svd", ["U", "S", "Vh"])
EighResult = namedtuple("eigh", ["eigenvalues", "eigenvectors"])


# ============================================================================ helpers
def _constant(array, like: Tensor) -> Tensor:
    return Tensor._make(array, like._device, False)


def _eye(n: int, like: Tensor) -> Tensor:
    """An n x n identity with ``like``'s dtype and device (a constant)."""
    return _constant(backend.xp_for_device(like._device).eye(n, dtype=like._data.dtype), like)


def _shape_text(shape) -> str:
    return "x".join(str(s) for s in shape)


def _check_float(A: Tensor, op: str, arg: str = "A") -> None:
    kind = A._data.dtype.kind
    if kind != "f":
        raise RuntimeError(f"{op}: Expected a floating point tensor as {arg}. Got "
                           f"{A.dtype.name}")
    if A._data.dtype.itemsize < 4:
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got {A.dtype.name} "
                           f"for {arg}; use float32 or float64")


def _check_matrices(A, op: str, arg: str = "A", square: bool = True) -> Tensor:
    """A floating tensor of shape (*, m, n) (with m == n when ``square``)."""
    ensure_tensor(A, op, arg)
    if A._data.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {arg} must have at least 2 dimensions, "
                           f"but it has shape {list(A.shape)}.")
    _check_float(A, op, arg)
    if square and A._data.shape[-1] != A._data.shape[-2]:
        raise RuntimeError(f"{op}: {arg} must be batches of square matrices, but they are "
                           f"{A._data.shape[-2]} by {A._data.shape[-1]} matrices")
    return A


def _same_dtype(op: str, **tensors) -> None:
    names = list(tensors)
    first = tensors[names[0]]
    for name in names[1:]:
        if tensors[name].dtype is not first.dtype:
            raise RuntimeError(f"{op}: Expected {names[0]} and {name} to have the same dtype, "
                               f"but found {names[0]} of type {first.dtype.name} and {name} of "
                               f"type {tensors[name].dtype.name} instead.")


def _lapack(op: str, problem: str, function, a, *args, **kwargs):
    """Run an ``xp.linalg`` routine; its LinAlgError becomes ember's, naming the op."""
    with backend.linalg_errors(a):
        try:
            return function(a, *args, **kwargs)
        except np.linalg.LinAlgError as error:
            raise LinAlgError(f"{op}: {problem} (input of shape {list(a.shape)}; the solver "
                              f"reported: {error})") from None


def _vector_signs(xp, vectors):
    """+1/-1 per column of ``vectors`` (*, m, k) making each column's entry of largest
    magnitude positive: the sign convention of svd and eigh."""
    index = xp.argmax(xp.abs(vectors), axis=-2)[..., None, :]
    signs = xp.sign(xp.take_along_axis(vectors, index, axis=-2))
    return xp.where(signs == 0, 1, signs).astype(vectors.dtype)


# ============================================================================ matmul family
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
        return ctx.xp.matmul(_blas_ready(ctx.xp, a), _blas_ready(ctx.xp, b))

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


@register_op(methods=("mm",), samples=lambda make: [
    Sample((make((3, 4)), make((4, 2)))), Sample((make((1, 3)), make((3, 1))), name="1x1")])
def mm(input, mat2):
    """Product of two matrices: (n, m) @ (m, p) -> (n, p). No broadcasting."""
    _product_operands("mm", input, mat2, "input", "mat2", 2, 2)
    if input._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(f"mm: mat1 and mat2 shapes cannot be multiplied "
                           f"({_shape_text(input.shape)} and {_shape_text(mat2.shape)})")
    return Matmul.apply(input, mat2)


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
    if isinstance(value, Tensor):
        value = value.item()
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
        raise TypeError(f"{op}(): argument '{name}' must be a number, not "
                        f"{type(value).__name__}")
    if input._data.dtype.kind != "f" and float(value) != int(value):
        raise RuntimeError(f"{op}: for integer inputs, {name} must be an integer, but got "
                           f"{value}")
    return value


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


@register_op(methods=("addmm",), samples=_addmm_samples)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2); ``input`` broadcasts to (n, p)."""
    return _scaled_sum("addmm", input, mm(mat1, mat2), beta, alpha)


@register_op(methods=("addmv",), samples=lambda make: [
    Sample((make((3,)), make((3, 4)), make((4,)))),
    Sample((make(()), make((3, 4)), make((4,))), {"beta": 2.0, "alpha": 0.5},
           name="0-d input")])
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec); ``input`` broadcasts to (n,)."""
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha)


@register_op(methods=("addbmm",), samples=lambda make: [
    Sample((make((3, 2)), make((2, 3, 4)), make((2, 4, 2)))),
    Sample((make((2,)), make((2, 3, 4)), make((2, 4, 2))), {"beta": -1.0, "alpha": 3.0},
           name="broadcast input")])
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * sum_b batch1[b] @ batch2[b] (the batch products summed)."""
    return _scaled_sum("addbmm", input, bmm(batch1, batch2).sum(0), beta, alpha)


@register_op(methods=("baddbmm",), samples=lambda make: [
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

    node_name = "EinsumBackward0"

    @staticmethod
    def forward(ctx, equation, *arrays):
        ctx.equation = equation
        ctx.sizes = [a.shape for a in arrays]
        ctx.save_for_backward(*arrays)
        return ctx.xp.einsum(equation, *arrays, optimize=len(arrays) > 1)

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
            grads.append(_einsum_operand_grad(ctx.equation, terms, out_term, k, operands,
                                              grad, ctx.sizes[k]))
        return tuple(grads)


def _einsum_operand_grad(equation, terms, out_term, k, operands, grad, shape):
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
            eyes.append(_eye(shape[position], grad))
        else:
            first_seen[c] = position
            target += c
    inputs_terms = [out_term] + [t for j, t in enumerate(terms) if j != k] + eye_terms
    available = set("".join(inputs_terms))
    reduced = "".join(c for c in target if c in available)
    tensors = [grad] + [o for j, o in enumerate(operands) if j != k] + eyes
    result = Einsum.apply(",".join(inputs_terms) + "->" + reduced, *tensors)
    if reduced != target:
        result = result.reshape(tuple(s if c in available else 1
                                      for c, s in zip(target, shape))).expand(shape)
    return result


def _einsum_arguments(args):
    """(equation, operands) from einsum('ij,jk', a, b), einsum('ij,jk', [a, b]) or the
    sublist form einsum(a, [0, 1], b, [1, 2], [0, 2])."""
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand")
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
        elif isinstance(item, (int, np.integer)) and 0 <= item < 52:
            term += _LETTERS[item]
        else:
            raise ValueError(f"einsum(): subscript in subscript list is not within the valid "
                             f"range [0, 52): {item!r}")
    return term


def _parse_term(term: str, operand_index: int, ndim: int):
    """(letters before '...', letters after, number of dims '...' covers)."""
    if term.count(".") not in (0, 3) or (term.count(".") == 3 and "..." not in term):
        raise ValueError(f"einsum(): found '.' for operand {operand_index} that is not part "
                         f"of any ellipsis")
    for c in term.replace("...", ""):
        if c not in _LETTERS:
            raise ValueError(f"einsum(): invalid subscript given at index {term.index(c)} in "
                             f"the equation string, subscripts must be in [a-zA-Z]")
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
    equation = equation.replace(" ", "")
    for i, t in enumerate(operands):
        ensure_tensor(t, "einsum", f"operands[{i}]")
    if "->" in equation:
        lhs, rhs = equation.split("->", 1)
        if "->" in rhs:
            raise ValueError("einsum(): the equation has more than one '->'")
    else:
        lhs, rhs = equation, None
    terms = lhs.split(",")
    if len(terms) != len(operands):
        more = "more" if len(operands) > len(terms) else "fewer"
        raise ValueError(f"einsum(): {more} operands were provided than specified in the "
                         f"equation '{equation}' ({len(operands)} operands, {len(terms)} terms)")
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
        if rhs.count(".") not in (0, 3) or (rhs.count(".") == 3 and "..." not in rhs):
            raise ValueError("einsum(): found '.' in the output that is not part of an ellipsis")
        output = rhs.replace("...", ellipsis_letters)
        for c in rhs.replace("...", ""):
            if c not in _LETTERS:
                raise ValueError("einsum(): invalid subscript in the output, subscripts must "
                                 "be in [a-zA-Z]")
            if c not in lhs:
                raise ValueError(f"einsum(): output subscript {c} does not appear in the "
                                 f"equation for any input operand")
            if output.count(c) > 1:
                raise ValueError(f"einsum(): output subscript {c} appears more than once in "
                                 f"the output")
    # Label sizes: equal, or 1 (broadcast). Within one operand a repeated label must match.
    sizes = {}
    for i, (term, t) in enumerate(zip(full_terms, operands)):
        seen = {}
        for c, s in zip(term, t._data.shape):
            if c in seen and seen[c] != s:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but "
                                   f"the sizes don't match, {seen[c]} != {s}")
            seen[c] = s
            if s != 1:
                if sizes.get(c, 1) not in (1, s):
                    shapes = [list(o.shape) for o in operands]
                    raise RuntimeError(f"einsum(): operands do not broadcast: subscript {c} "
                                       f"has sizes {sizes[c]} and {s} (operand shapes "
                                       f"{shapes}, equation '{equation}')")
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
    # Every output label survives: a dropped dim had size 1 where another operand has more.
    return Einsum.apply(",".join(final_terms) + "->" + output, *final_operands)


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


# ============================================================================ diagonals
def _diagonal_view(xp, x, offset: int, dim1: int, dim2: int):
    """A writable view of the diagonal of dims (dim1, dim2), moved to the last dimension."""
    v = xp.moveaxis(x, (dim1, dim2), (-2, -1))
    v = v[..., :, offset:] if offset >= 0 else v[..., -offset:, :]
    k = max(min(v.shape[-2], v.shape[-1]), 0)
    return backend.as_strided(v, v.shape[:-2] + (k,),
                              v.strides[:-2] + (v.strides[-2] + v.strides[-1],))


class Diagonal(Function):
    node_name = "DiagonalBackward0"
    is_view = True
    always_view = True

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.args = (x.shape, offset, dim1, dim2)
        return _diagonal_view(ctx.xp, x, offset, dim1, dim2)

    @staticmethod
    def backward(ctx, grad):
        return DiagonalScatter.apply(grad, *ctx.args), None, None, None


class DiagonalScatter(Function):
    """Zeros of ``shape`` with ``values`` on a diagonal: the gradient of ``diagonal``."""

    node_name = "DiagonalBackwardBackward0"

    @staticmethod
    def forward(ctx, values, shape, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        out = ctx.xp.zeros(shape, values.dtype)
        _diagonal_view(ctx.xp, out, offset, dim1, dim2)[...] = values
        return out

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, *ctx.args), None, None, None, None


class DiagEmbed(Function):
    node_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        n = x.shape[-1] + abs(offset)
        shape = list(x.shape[:-1])
        for d in sorted((dim1, dim2)):
            shape.insert(d, n)
        out = ctx.xp.zeros(tuple(shape), x.dtype)
        _diagonal_view(ctx.xp, out, offset, dim1, dim2)[...] = x
        return out

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, *ctx.args), None, None, None


def _diagonal_dims(op, ndim, dim1, dim2):
    d1, d2 = wrap_dim(dim1, ndim, op), wrap_dim(dim2, ndim, op)
    if d1 == d2:
        raise RuntimeError(f"{op}: diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


@register_op(methods=("diagonal",), samples=lambda make: [
    Sample((make((3, 4)),)), Sample((make((3, 4)), 1), name="offset 1"),
    Sample((make((2, 3, 4)), -1, 2, 0), name="offset -1, dims (2, 0)"),
    Sample((make((2, 3)), 5), name="empty")])
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal input[..., i, i + offset] of dims (dim1, dim2) as a view, appended as the
    last dimension. offset > 0 is above the main diagonal, < 0 below."""
    ensure_tensor(input, "diagonal")
    if input._data.ndim < 2:
        raise RuntimeError(f"diagonal: expected a tensor with at least 2 dimensions, but got "
                           f"shape {list(input.shape)}")
    d1, d2 = _diagonal_dims("diagonal", input._data.ndim, dim1, dim2)
    return Diagonal.apply(input, int(offset), d1, d2)


@register_op(methods=("diag_embed",), samples=lambda make: [
    Sample((make((2, 3)),)), Sample((make((3,)), 1), name="offset 1"),
    Sample((make((2, 3)), -1, 0, 2), name="offset -1, dims (0, 2)")])
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose diagonal (offset, dim1, dim2) holds the last dimension of input, zeros
    elsewhere; the inverse of ``diagonal``. dims refer to the output (ndim + 1)."""
    ensure_tensor(input, "diag_embed")
    if input._data.ndim < 1:
        raise RuntimeError("diag_embed: expected a tensor with at least 1 dimension, got a "
                           "0-d tensor")
    d1, d2 = _diagonal_dims("diag_embed", input._data.ndim + 1, dim1, dim2)
    return DiagEmbed.apply(input, int(offset), d1, d2)


@register_op(methods=("diag",), samples=lambda make: [
    Sample((make((3,)),)), Sample((make((3,)), -2), name="vector, offset -2"),
    Sample((make((3, 4)),), name="matrix"), Sample((make((3, 4)), 1), name="matrix offset 1")])
def diag(input, diagonal=0):
    """1-D input: the square matrix with input on diagonal ``diagonal``. 2-D input: that
    diagonal as a 1-D tensor (a copy)."""
    ensure_tensor(input, "diag")
    ndim = input._data.ndim
    if ndim == 1:
        return DiagEmbed.apply(input, int(diagonal), 0, 1)
    if ndim == 2:
        return Diagonal.apply(input, int(diagonal), 0, 1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")


@register_op(methods=("trace",), samples=lambda make: [
    Sample((make((3, 3)),)), Sample((make((2, 4)),), name="non-square")])
def trace(input):
    """Sum of the main diagonal of a 2-D tensor (integers sum to int64)."""
    ensure_tensor(input, "trace")
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{input._data.ndim}")
    return Trace.apply(input)


class Trace(Function):
    node_name = "TraceBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        dtype = np.int64 if x.dtype.kind in "biu" else x.dtype
        return ctx.xp.asarray(ctx.xp.trace(x, dtype=dtype))

    @staticmethod
    def backward(ctx, grad):
        n = min(ctx.shape)
        return DiagonalScatter.apply(grad.expand((n,)), ctx.shape, 0, 0, 1)


class Tril(Function):
    node_name = "TrilBackward0"

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return ctx.xp.tril(x, k)

    @staticmethod
    def backward(ctx, grad):
        return Tril.apply(grad, ctx.k), None


class Triu(Function):
    node_name = "TriuBackward0"

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return ctx.xp.triu(x, k)

    @staticmethod
    def backward(ctx, grad):
        return Triu.apply(grad, ctx.k), None


def _triangle_samples(make):
    return [Sample((make((3, 4)),)), Sample((make((2, 3, 3)), 1), name="batch, diagonal 1"),
            Sample((make((4, 3)), -1), name="diagonal -1")]


def _triangle(cls, op, input, diagonal):
    ensure_tensor(input, op)
    if input._data.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions, but got shape "
                           f"{list(input.shape)}")
    if not isinstance(diagonal, (int, np.integer)) or isinstance(diagonal, bool):
        raise TypeError(f"{op}(): argument 'diagonal' must be int, not "
                        f"{type(diagonal).__name__}")
    return cls.apply(input, int(diagonal))


@register_op(methods=("tril",), samples=_triangle_samples)
def tril(input, diagonal=0):
    """The lower triangle of the last two dims: elements with j - i <= diagonal, others 0."""
    return _triangle(Tril, "tril", input, diagonal)


@register_op(methods=("triu",), samples=_triangle_samples)
def triu(input, diagonal=0):
    """The upper triangle of the last two dims: elements with j - i >= diagonal, others 0."""
    return _triangle(Triu, "triu", input, diagonal)


# ============================================================================ in-place forms
def _inplace_form(function):
    def method(self, *args, **kwargs):
        return _inplace(self, function, *args, **kwargs)

    method.__name__ = function.__name__ + "_"
    method.__doc__ = f"In-place form of ``{function.__name__}``: writes the result into self."
    return method


for _function in (tril, triu, addmm, addmv, addbmm, baddbmm):
    bind_method(_function.__name__ + "_", _inplace_form(_function))


# ============================================================================ inv, det, solve
def _well_conditioned(make, n, batch=()):
    """A random matrix plus n * I: comfortably invertible."""
    values = make.numpy(batch + (n, n), -1.0, 1.0) + n * np.eye(n)
    return _from_numpy(make, values)


def _from_numpy(make, values):
    import ember

    return ember.tensor(values, dtype=make.dtype, device=make.device).requires_grad_(True)


class Inv(Function):
    node_name = "LinalgInvExBackward0"

    @staticmethod
    def forward(ctx, a):
        out = _lapack("linalg.inv", "The input matrix is singular, so it cannot be inverted",
                      ctx.xp.linalg.inv, a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (inverse_t,) = ctx.saved_tensors
        inverse_t = inverse_t.mT
        return -matmul(matmul(inverse_t, grad), inverse_t)


def _inv_samples(make):
    return [Sample((_well_conditioned(make, 3),)),
            Sample((_well_conditioned(make, 2, (2,)),), name="batch"),
            Sample((_well_conditioned(make, 1),), name="1x1")]


@register_op(namespace="linalg", samples=_inv_samples)
def inv(A):
    """The inverse A^-1 of a square matrix (or a batch); raises ember.linalg.LinAlgError when
    A is singular. Gradient: -A^-T G A^-T. Cost O(n^3) per matrix."""
    _check_matrices(A, "linalg.inv")
    return Inv.apply(A)


@register_op(methods=("inverse",), samples=lambda make: [Sample((_well_conditioned(make, 3),))])
def inverse(input):
    """The matrix inverse; the same as ``ember.linalg.inv``."""
    _check_matrices(input, "inverse", "input")
    return Inv.apply(input)


class Det(Function):
    node_name = "LinalgDetBackward0"

    @staticmethod
    def forward(ctx, a):
        with np.errstate(over="ignore"):  # det overflows to inf silently, as in PyTorch
            d = ctx.xp.asarray(ctx.xp.linalg.det(a))
        ctx.save_for_backward(a, d)
        return d

    @staticmethod
    def backward(ctx, grad):
        # G * det(A) * A^-T is G times the cofactor matrix; a singular A has no inverse, so
        # its cofactors come from the SVD: cof(A) = det(U) det(V) U diag(prod_{j!=i} s_j) V^T.
        a, d = ctx.saved_tensors
        if bool((d._data != 0).all()):
            try:
                return (grad * d).unsqueeze(-1).unsqueeze(-1) * Inv.apply(a).mT
            except LinAlgError:
                pass
        return grad.unsqueeze(-1).unsqueeze(-1) * _cofactors(a)


def _cofactors(a: Tensor) -> Tensor:
    """The cofactor matrix det(A) A^-T, defined for singular A too, through the SVD."""
    xp = backend.xp_for_device(a._device)
    u, s, vh = Svd.apply(a, False)
    eye = _eye(s.shape[-1], s)
    others = NAMESPACES["ember"]["prod"](s.unsqueeze(-2) * (1 - eye) + eye, -1)
    sign = _constant(xp.asarray(xp.linalg.det(u._data) * xp.linalg.det(vh._data)), s)
    return matmul(u * (others * sign.unsqueeze(-1)).unsqueeze(-2), vh)


def _inv_t(a: Tensor, op: str) -> Tensor:
    """A^-T for a backward; a singular A has no finite gradient here."""
    try:
        return Inv.apply(a).mT
    except LinAlgError:
        raise LinAlgError(f"{op}: the backward needs A^-1, but A (shape {list(a.shape)}) is "
                          "singular") from None


def _det_samples(make):
    return [Sample((_well_conditioned(make, 3),)),
            Sample((_well_conditioned(make, 2, (2,)),), name="batch"),
            Sample((make((3, 3)),), name="random sign")]


@register_op(namespace="linalg", methods=("det",), exported_in=("ember",), samples=_det_samples)
def det(A):
    """The determinant of a square matrix (or a batch), by LU factorization. Gradient:
    G * det(A) * A^-T (A must be invertible for the gradient). Cost O(n^3)."""
    _check_matrices(A, "linalg.det")
    return Det.apply(A)


class Slogdet(Function):
    node_name = "LinalgSlogdetBackward0"

    @staticmethod
    def forward(ctx, a):
        sign, logabsdet = ctx.xp.linalg.slogdet(a)
        sign, logabsdet = ctx.xp.asarray(sign), ctx.xp.asarray(logabsdet)
        ctx.save_for_backward(a)
        return sign, logabsdet

    @staticmethod
    def backward(ctx, grad_sign, grad_logabsdet):
        (a,) = ctx.saved_tensors
        return grad_logabsdet.unsqueeze(-1).unsqueeze(-1) * _inv_t(a, "linalg.slogdet")


@register_op(namespace="linalg", methods=("slogdet",), exported_in=("ember",),
             samples=_det_samples)
def slogdet(A):
    """(sign, logabsdet) with det(A) = sign * exp(logabsdet): the log-determinant without
    overflow. A singular A gives (0, -inf). Gradient of logabsdet: G * A^-T."""
    _check_matrices(A, "linalg.slogdet")
    return SlogdetResult(*Slogdet.apply(A))


@register_op(methods=("logdet",), samples=lambda make: [
    Sample((make.positive_definite(3),)),
    Sample((_well_conditioned(make, 2, (2,)),), name="batch")])
def logdet(input):
    """log(det(A)): nan when det(A) < 0, -inf when det(A) == 0."""
    _check_matrices(input, "logdet", "input")
    sign, logabsdet = Slogdet.apply(input)
    return NAMESPACES["ember"]["where"](sign < 0, float("nan"), logabsdet)


class Solve(Function):
    node_name = "LinalgSolveExBackward0"

    @staticmethod
    def forward(ctx, a, b):
        xp = ctx.xp
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        ctx.shapes = (a.shape, b.shape)
        x = _lapack("linalg.solve", "The solver failed because the input matrix is singular",
                    xp.linalg.solve, xp.broadcast_to(a, batch + a.shape[-2:]),
                    xp.broadcast_to(b, batch + b.shape[-2:]))
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        a_shape, b_shape = ctx.shapes
        grad_b = Solve.apply(a.mT, grad)
        grad_a = None
        if ctx.needs_input_grad[0]:
            grad_a = sum_to_shape(-matmul(grad_b, x.mT), a_shape)
        return grad_a, sum_to_shape(grad_b, b_shape) if ctx.needs_input_grad[1] else None


def _solve_samples(make):
    return [Sample((_well_conditioned(make, 3), make((3, 2))), name="matrix rhs"),
            Sample((_well_conditioned(make, 3), make((3,))), name="vector rhs"),
            Sample((_well_conditioned(make, 2, (2,)), make((2, 2))), name="batched vectors"),
            Sample((_well_conditioned(make, 2, (2, 1)), make((3, 2, 1))),
                   name="broadcast batch"),
            Sample((_well_conditioned(make, 3), make((2, 3))), {"left": False}, name="left=False")]


@register_op(namespace="linalg", samples=_solve_samples)
def solve(A, B, *, left=True):
    """X with A X = B (left=True) or X A = B (left=False), for square invertible A, without
    forming A^-1. With left=True, B is a batch of vectors (*, n) when B is 1-D or its shape is
    A's without the last dim, otherwise a batch of matrices (*, n, k); with left=False, B is
    a batch of matrices (*, k, n). Batch dims broadcast. Gradient:
    G_B = A^-T G, G_A = -G_B X^T. Cost O(n^3 + n^2 k)."""
    _check_matrices(A, "linalg.solve")
    ensure_tensor(B, "linalg.solve", "B")
    _same_dtype("linalg.solve", A=A, B=B)
    n = A._data.shape[-1]
    vector = B._data.ndim == 1 or (B._data.ndim == A._data.ndim - 1 and
                                   B._data.shape == A._data.shape[:-1])
    if not left:
        if vector or B._data.shape[-1] != n:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                               f"XA = B ({n}x{n} and "
                               f"{_shape_text(B.shape[-2:] if not vector else (B.shape[-1], 1))})")
        return solve(A.mT, B.mT).mT
    matrix_b = B.unsqueeze(-1) if vector else B
    if matrix_b._data.ndim < 2 or matrix_b._data.shape[-2] != n:
        shown = matrix_b.shape[-2:] if matrix_b._data.ndim >= 2 else (matrix_b.shape[0], 1)
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({n}x{n} and {_shape_text(shown)})")
    try:
        np.broadcast_shapes(A._data.shape[:-2], matrix_b._data.shape[:-2])
    except ValueError:
        raise RuntimeError(f"linalg.solve: the batch dimensions of A {list(A.shape)} and B "
                           f"{list(B.shape)} don't broadcast") from None
    x = Solve.apply(A, matrix_b)
    return x.squeeze(-1) if vector else x


# ============================================================================ cholesky
class Cholesky(Function):
    node_name = "LinalgCholeskyExBackward0"

    @staticmethod
    def forward(ctx, a, upper):
        low = _lapack("linalg.cholesky", "The factorization could not be completed because the "
                      "input is not positive-definite", ctx.xp.linalg.cholesky, a)
        out = ctx.xp.ascontiguousarray(ctx.xp.swapaxes(low, -1, -2)) if upper else low
        ctx.upper = upper
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        # Murray (2016): G_A = L^-T Phi(L^T G) L^-1, symmetrized; Phi keeps the lower
        # triangle and halves the diagonal.
        (factor,) = ctx.saved_tensors
        low, g = (factor.mT, grad.mT) if ctx.upper else (factor, grad)
        phi = Tril.apply(matmul(low.mT, g), 0)
        phi = phi - 0.5 * DiagEmbed.apply(Diagonal.apply(phi, 0, phi.ndim - 2, phi.ndim - 1), 0,
                                          phi.ndim - 2, phi.ndim - 1)
        low_inv = Inv.apply(low)
        grad_a = matmul(matmul(low_inv.mT, phi), low_inv)
        return 0.5 * (grad_a + grad_a.mT), None


def _symmetrized(function, A, *args, **kwargs):
    """The gradcheck wrapper of ops that read one triangle: f(A + A^T), as PyTorch checks."""
    return function(A + A.mT, *args, **kwargs)


def _cholesky_samples(make):
    return [Sample((make.positive_definite(3),)),
            Sample((make.positive_definite(2, (2,)),), name="batch"),
            Sample((make.positive_definite(3),), {"upper": True}, name="upper")]


@register_op(namespace="linalg", samples=_cholesky_samples, gradcheck_wrapper=_symmetrized)
def cholesky(A, *, upper=False):
    """L lower triangular with A = L L^T (or U = L^T with A = U^T U when upper=True) for
    symmetric positive-definite A; only the lower triangle of A is read. Raises
    ember.linalg.LinAlgError when A is not positive-definite. Cost O(n^3 / 3)."""
    _check_matrices(A, "linalg.cholesky")
    return Cholesky.apply(A, bool(upper))


@register_op(methods=("cholesky_solve",), samples=lambda make: [
    Sample((make((3, 2)), _cholesky_factor(make, 3)), name="lower"),
    Sample((make((2, 3, 1)), _cholesky_factor(make, 3, upper=True)), {"upper": True},
           name="upper, batched rhs")])
def cholesky_solve(B, L, upper=False):
    """X with A X = B, where A = L L^T (or U^T U when upper=True) is given by its Cholesky
    factor: two triangular solves, X = L^-T (L^-1 B). B is (*, n, k); batches broadcast."""
    _check_matrices(L, "cholesky_solve", "L")
    ensure_tensor(B, "cholesky_solve", "B")
    _same_dtype("cholesky_solve", B=B, L=L)
    if B._data.ndim < 2:
        raise RuntimeError(f"cholesky_solve: B must be a batch of matrices (*, n, k), but got "
                           f"shape {list(B.shape)}")
    if upper:
        return solve(L, solve(L.mT, B))
    return solve(L.mT, solve(L, B))


def _cholesky_factor(make, n, upper=False):
    import ember

    a = make.rng.standard_normal((n, n))
    low = np.linalg.cholesky(a @ a.T + n * np.eye(n))
    return ember.tensor(low.T if upper else low, dtype=make.dtype,
                        device=make.device).requires_grad_(True)


# ============================================================================ qr
class Qr(Function):
    node_name = "LinalgQrBackward0"

    @staticmethod
    def forward(ctx, a, mode):
        xp = ctx.xp
        ctx.mode = mode
        ctx.shape = a.shape
        if mode == "r":
            r = _lapack("linalg.qr", "The QR decomposition failed", xp.linalg.qr, a, mode="r")
            return xp.zeros((0,), a.dtype), r
        q, r = _lapack("linalg.qr", "The QR decomposition failed", xp.linalg.qr, a, mode=mode)
        ctx.save_for_backward(a, q, r)
        return q, r

    @staticmethod
    def backward(ctx, grad_q, grad_r):
        m, n = ctx.shape[-2:]
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        a, q, r = ctx.saved_tensors
        if m >= n:
            return _qr_backward_tall(q, r, grad_q, grad_r), None
        # Wide A = [X | Y], R = [U | V]: X = Q U is square, Y = Q V.
        u = r[..., :, :m]
        y = a[..., :, m:]
        grad_y = matmul(q, grad_r[..., :, m:])
        grad_x = _qr_backward_tall(q, u, grad_q + matmul(y, grad_r[..., :, m:].mT),
                                   grad_r[..., :, :m])
        return _cat_last(grad_x, grad_y), None


def _cat_last(a: Tensor, b: Tensor) -> Tensor:
    return NAMESPACES["ember"]["cat"]([a, b], dim=-1)


def _copyltu(m: Tensor) -> Tensor:
    """The symmetric matrix whose lower triangle (with the diagonal) is m's."""
    return Tril.apply(m, 0) + Tril.apply(m, -1).mT


def _qr_backward_tall(q, r, grad_q, grad_r):
    # m >= n (Liao et al. 2019): G_A = [G_Q + Q copyltu(M)] R^-T, M = R G_R^T - G_Q^T Q.
    m = matmul(r, grad_r.mT) - matmul(grad_q.mT, q)
    b = grad_q + matmul(q, _copyltu(m))
    return Solve.apply(r, b.mT).mT


_QR_MODES = ("reduced", "complete", "r")


def _qr_samples(make):
    return [Sample((make((4, 3)),), name="tall"),
            Sample((make((2, 3, 3)),), name="batch square"),
            Sample((make((2, 4)),), name="wide"),
            Sample((make((3, 3)),), {"mode": "complete"}, name="complete square")]


def _qr_output(result):
    q, r = result
    return (r,) if q.numel() == 0 else (q, r)


@register_op(namespace="linalg", samples=_qr_samples, output_process=_qr_output)
def qr(A, mode="reduced"):
    """A = Q R with Q orthonormal columns and R upper triangular (Householder, as LAPACK's
    geqrf). mode 'reduced': Q (*, m, k), R (*, k, n), k = min(m, n); 'complete': Q (*, m, m),
    R (*, m, n); 'r': only R (Q is empty). Differentiable for 'reduced' and for 'complete'
    with m <= n. Cost O(m n k)."""
    _check_matrices(A, "linalg.qr", square=False)
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    return QRResult(*Qr.apply(A, mode))


# ============================================================================ svd
class Svd(Function):
    node_name = "LinalgSvdBackward0"

    @staticmethod
    def forward(ctx, a, full_matrices):
        xp = ctx.xp
        u, s, vh = _lapack("linalg.svd", "The SVD did not converge", xp.linalg.svd, a,
                           full_matrices=full_matrices)
        k = s.shape[-1]
        signs = _vector_signs(xp, u[..., :, :k])
        u[..., :, :k] *= signs  # u and vh are fresh arrays: fix the signs in place
        vh[..., :k, :] *= xp.swapaxes(signs, -1, -2)
        ctx.full_matrices = full_matrices
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(u, s, vh)
        return u, s, vh

    @staticmethod
    def backward(ctx, grad_u, grad_s, grad_vh):
        u, s, vh = ctx.saved_tensors
        if ctx.full_matrices:
            # Columns of U (rows of Vh) past k span an arbitrary basis: their gradients are
            # ignored, as in PyTorch.
            k = s.shape[-1]
            u, vh = u[..., :, :k], vh[..., :k, :]
            grad_u = grad_u[..., :, :k] if grad_u is not None else None
            grad_vh = grad_vh[..., :k, :] if grad_vh is not None else None
        return _svd_backward(u, s, vh, grad_u, grad_s, grad_vh), None


def _svd_backward(u, s, vh, grad_u, grad_s, grad_vh):
    """Townsend (2016), for A = U S V^T with distinct non-zero singular values:
    G_A = U [F o (U^T G_U - G_U^T U) S + diag(G_S) + S F o (V^T G_V - G_V^T V)] V^T
          + (I - U U^T) G_U S^-1 V^T + U S^-1 G_V^T (I - V V^T),  F_ij = 1 / (s_j^2 - s_i^2)."""
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    if grad_u is None and grad_vh is None:
        if grad_s is None:
            return None
        return matmul(u * grad_s.unsqueeze(-2), vh)
    eye = _eye(k, s)
    s_row, s_col = s.unsqueeze(-2), s.unsqueeze(-1)
    gap = s_row * s_row - s_col * s_col + eye  # s_j^2 - s_i^2, 1 on the diagonal
    inner = DiagEmbed.apply(grad_s, 0, s.ndim - 1, s.ndim) if grad_s is not None else 0
    v = vh.mT
    if grad_u is not None:
        ut_gu = matmul(u.mT, grad_u)
        inner = inner + (ut_gu - ut_gu.mT) / gap * s_row
    if grad_vh is not None:
        grad_v = grad_vh.mT
        vt_gv = matmul(vh, grad_v)
        inner = inner + s_col * ((vt_gv - vt_gv.mT) / gap)
    result = matmul(matmul(u, inner), vh)
    if grad_u is not None and m > k:
        projected = grad_u - matmul(u, matmul(u.mT, grad_u))
        result = result + matmul(projected / s_row, vh)
    if grad_vh is not None and n > k:
        projected = grad_vh - matmul(matmul(grad_vh, v), vh)
        result = result + matmul(u, projected / s_col)
    return result


def _torch_signs(torch, vectors):
    index = vectors.detach().abs().argmax(dim=-2, keepdim=True)
    signs = torch.gather(vectors.detach(), -2, index).sign()
    return torch.where(signs == 0, torch.ones_like(signs), signs)


def _torch_svd(torch, a, full_matrices=True):
    u, s, vh = torch.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    signs = _torch_signs(torch, u[..., :, :k])
    u_rest = torch.ones(u.shape[:-2] + (1, u.shape[-1] - k), dtype=u.dtype)
    vh_rest = torch.ones(vh.shape[:-2] + (vh.shape[-2] - k, 1), dtype=vh.dtype)
    u = u * torch.cat([signs, u_rest], dim=-1)
    vh = vh * torch.cat([signs.mT, vh_rest], dim=-2)
    return u, s, vh


def _svd_output(result):
    # With full_matrices, U's columns past k are an arbitrary basis: compare the first k.
    u, s, vh = result
    k = s.shape[-1]
    return u[..., :, :k], s, vh[..., :k, :]


def _svd_samples(make):
    return [Sample((make((3, 3)),), name="square"),
            Sample((make((4, 2)),), {"full_matrices": False}, name="tall reduced"),
            Sample((make((2, 2, 3)),), {"full_matrices": False}, name="batch wide reduced"),
            Sample((make((3, 2)),), name="tall full")]


@register_op(namespace="linalg", samples=_svd_samples, torch=_torch_svd,
             output_process=_svd_output, atol=1e-6, rtol=1e-5,
             gradcheck_wrapper=lambda function, *args, **kwargs: _svd_output(
                 function(*args, **kwargs)))
def svd(A, full_matrices=True):
    """A = U diag(S) Vh with S >= 0 descending; U (*, m, m) and Vh (*, n, n), or (*, m, k)
    and (*, k, n) with full_matrices=False (k = min(m, n)). Signs: each column of U has its
    largest-magnitude entry positive. Gradients are exact for distinct non-zero singular
    values; those through U and Vh are gauge-dependent only via that sign convention.
    Cost O(m n k)."""
    _check_matrices(A, "linalg.svd", square=False)
    return SVDResult(*Svd.apply(A, bool(full_matrices)))


class SvdVals(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, a):
        return _lapack("linalg.svdvals", "The SVD did not converge", ctx.xp.linalg.svd, a,
                       compute_uv=False)


@register_op(namespace="linalg", samples=lambda make: [
    Sample((make((3, 2)),)), Sample((make((2, 2, 3)),), name="batch")],
    atol=1e-6, rtol=1e-5)
def svdvals(A):
    """The singular values of A, descending. Gradient: U diag(G) V^T (U, V computed only when
    a gradient is needed)."""
    _check_matrices(A, "linalg.svdvals", square=False)
    if A._requires_grad and is_grad_enabled():
        return Svd.apply(A, False)[1]
    return SvdVals.apply(A)


# ============================================================================ eigh
class Eigh(Function):
    node_name = "LinalgEighBackward0"

    @staticmethod
    def forward(ctx, a, uplo):
        xp = ctx.xp
        w, v = _lapack("linalg.eigh", "The eigenvalue algorithm did not converge",
                       xp.linalg.eigh, a, UPLO=uplo)
        v = v * _vector_signs(xp, v)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, grad_w, grad_v):
        # G_A = V (diag(G_w) + skew(V^T G_V) / E) V^T, E_ij = w_j - w_i: symmetric, as
        # PyTorch's (the gradient for symmetric perturbations).
        w, v = ctx.saved_tensors
        if grad_w is None and grad_v is None:
            return None, None
        inner = 0
        if grad_v is not None:
            vt_gv = matmul(v.mT, grad_v)
            gap = w.unsqueeze(-2) - w.unsqueeze(-1) + _eye(w.shape[-1], w)
            inner = 0.5 * (vt_gv - vt_gv.mT) / gap
        if grad_w is not None:
            inner = inner + DiagEmbed.apply(grad_w, 0, w.ndim - 1, w.ndim)
        return matmul(matmul(v, inner), v.mT), None


def _torch_eigh(torch, a, UPLO="L"):
    w, v = torch.linalg.eigh(a, UPLO=UPLO)
    return w, v * _torch_signs(torch, v)


def _symmetric(make, n, batch=()):
    a = make.numpy(batch + (n, n))
    return _from_numpy(make, a + np.swapaxes(a, -1, -2))


def _eigh_samples(make):
    return [Sample((_symmetric(make, 3),)),
            Sample((_symmetric(make, 2, (2,)),), name="batch"),
            Sample((_symmetric(make, 3),), {"UPLO": "U"}, name="UPLO=U")]


def _check_uplo(op, UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"{op}: Expected UPLO argument to be 'L' or 'U', but got {UPLO!r}")


@register_op(namespace="linalg", samples=_eigh_samples, torch=_torch_eigh,
             gradcheck_wrapper=_symmetrized, atol=1e-6, rtol=1e-5)
def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors (columns) of a symmetric matrix,
    reading only its lower (UPLO='L') or upper ('U') triangle. Eigenvector signs: the
    largest-magnitude entry of each is positive. Eigenvector gradients need distinct
    eigenvalues. Cost O(n^3)."""
    _check_matrices(A, "linalg.eigh")
    _check_uplo("linalg.eigh", UPLO)
    return EighResult(*Eigh.apply(A, UPLO))


class EigvalsH(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, a, uplo):
        return _lapack("linalg.eigvalsh", "The eigenvalue algorithm did not converge",
                       ctx.xp.linalg.eigvalsh, a, UPLO=uplo)


@register_op(namespace="linalg", samples=lambda make: [
    Sample((_symmetric(make, 3),)), Sample((_symmetric(make, 2, (2,)),), {"UPLO": "U"},
                                           name="batch, UPLO=U")],
    gradcheck_wrapper=_symmetrized, atol=1e-6, rtol=1e-5)
def eigvalsh(A, UPLO="L"):
    """The eigenvalues of a symmetric matrix, ascending. Gradient: V diag(G) V^T."""
    _check_matrices(A, "linalg.eigvalsh")
    _check_uplo("linalg.eigvalsh", UPLO)
    if A._requires_grad and is_grad_enabled():
        return Eigh.apply(A, UPLO)[0]
    return EigvalsH.apply(A, UPLO)


# ============================================================================ powers, pinv
@register_op(namespace="linalg", exported_in=("ember",), methods=("matrix_power",),
             samples=lambda make: [
                 Sample((make((3, 3), -1, 1), 3), name="cube"),
                 Sample((_well_conditioned(make, 2, (2,)), -2), name="batch inverse square"),
                 Sample((make((2, 2)), 1), name="power 1")])
def matrix_power(A, n):
    """A^n for integer n by repeated squaring (O(log n) products); A^0 is the identity and
    n < 0 uses inv(A)^-n."""
    ensure_tensor(A, "linalg.matrix_power", "A")
    if A._data.ndim < 2 or A._data.shape[-1] != A._data.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"got shape {list(A.shape)}")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power(): argument 'n' must be int, not "
                        f"{type(n).__name__}")
    if n == 0:
        eye = backend.xp_for_device(A._device).eye(A._data.shape[-1], dtype=A._data.dtype)
        return _constant(backend.xp_for_device(A._device).broadcast_to(eye, A._data.shape).copy(),
                         A)
    if n < 0:
        _check_float(A, "linalg.matrix_power")
        A, n = Inv.apply(A), -n
    if n == 1:
        return A.clone()
    result, square = None, A
    while n:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if n:
            square = matmul(square, square)
    return result


class Pinv(Function):
    node_name = "LinalgPinvBackward0"

    @staticmethod
    def forward(ctx, a, atol, rtol, hermitian):
        xp = ctx.xp
        if hermitian:
            w, v = _lapack("linalg.pinv", "The eigenvalue algorithm did not converge",
                           xp.linalg.eigh, a)
            magnitude = xp.abs(w)
            largest = magnitude.max(axis=-1, keepdims=True) if w.shape[-1] else magnitude
            left, right = v, xp.swapaxes(v, -1, -2)
        else:
            u, w, vh = _lapack("linalg.pinv", "The SVD did not converge", xp.linalg.svd, a,
                               full_matrices=False)
            magnitude, largest = w, w[..., :1]
            left, right = xp.swapaxes(vh, -1, -2), xp.swapaxes(u, -1, -2)
        keep = magnitude > xp.maximum(largest * rtol, atol)
        w_inv = xp.where(keep, 1 / xp.where(keep, w, 1), 0).astype(a.dtype)
        out = xp.matmul(left * w_inv[..., None, :], right)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        # dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P (constant rank), so
        # G_A = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A).
        a, p = ctx.saved_tensors
        pt = p.mT
        grad_t = grad.mT
        first = -matmul(matmul(pt, grad), pt)
        second = matmul(grad_t - matmul(a, matmul(p, grad_t)), matmul(p, pt))
        third = matmul(matmul(pt, p), grad_t - matmul(matmul(grad_t, p), a))
        return first + second + third, None, None, None


@register_op(namespace="linalg", samples=lambda make: [
    Sample((make((3, 2)),), name="tall"), Sample((make((2, 2, 3)),), name="batch wide"),
    Sample((_symmetric(make, 3),), {"hermitian": True}, name="hermitian")],
    gradcheck_wrapper=lambda function, A, **kwargs: function(
        A + A.mT if kwargs.get("hermitian") else A, **kwargs), atol=1e-6, rtol=1e-5)
def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse A^+: V diag(1/s) U^T over the singular values s above
    max(atol, rtol * s_max) (smaller ones count as zero). Default rtol: eps * max(m, n) when
    atol is not given or 0, else 0. hermitian=True uses eigh on the lower triangle. Gradient:
    the pseudo-inverse's derivative for constant rank (Golub and Pereyra). Cost O(m n k)."""
    _check_matrices(A, "linalg.pinv", square=hermitian)
    m, n = A._data.shape[-2:]
    eps = float(np.finfo(A._data.dtype).eps)
    atol_value = 0.0 if atol is None else float(atol)
    if rtol is None:
        rtol_value = eps * max(m, n) if atol_value <= 0 else 0.0
    else:
        rtol_value = float(rtol)
    return Pinv.apply(A, atol_value, rtol_value, bool(hermitian))


# ============================================================================ smaller helpers
NAMESPACES["linalg"]["matmul"] = matmul  # torch.linalg.matmul is torch.matmul


@register_op("diagonal", namespace="linalg", samples=lambda make: [
    Sample((make((2, 3, 4)),), {"offset": 1}), Sample((make((3, 3)),), {"dim1": 0, "dim2": 1})])
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``diagonal`` with the defaults of a batch of matrices: the diagonals of the last two
    dims (a view)."""
    return diagonal(A, offset, dim1, dim2)


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


def _squeeze_ends(result, first_vector, last_vector):
    if first_vector:
        result = result.squeeze(0)
    if last_vector:
        result = result.squeeze(-1)
    return result


class SolveTriangular(Function):
    node_name = "LinalgSolveTriangularBackward0"

    @staticmethod
    def forward(ctx, a, b, upper, unitriangular):
        xp = ctx.xp
        triangle = xp.triu(a) if upper else xp.tril(a)
        if unitriangular:
            n = a.shape[-1]
            triangle = triangle * (1 - xp.eye(n, dtype=a.dtype)) + xp.eye(n, dtype=a.dtype)
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        x = _lapack("linalg.solve_triangular", "The triangular matrix is singular",
                    xp.linalg.solve, xp.broadcast_to(triangle, batch + a.shape[-2:]),
                    xp.broadcast_to(b, batch + b.shape[-2:]))
        ctx.args = (upper, unitriangular, a.shape, b.shape)
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        # X = T^-1 B with T the triangle: G_B = T^-T G, G_A = -(G_B X^T) on T's free entries.
        upper, unitriangular, a_shape, b_shape = ctx.args
        a, x = ctx.saved_tensors
        grad_b = SolveTriangular.apply(a.mT, grad, not upper, unitriangular)
        grad_a = None
        if ctx.needs_input_grad[0]:
            full = -matmul(grad_b, x.mT)
            offset = 1 if unitriangular else 0
            grad_a = sum_to_shape(Triu.apply(full, offset) if upper else
                                  Tril.apply(full, -offset), a_shape)
        grad_b = sum_to_shape(grad_b, b_shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b, None, None


def _triangular(make, n, upper, batch=()):
    values = make.numpy(batch + (n, n), -1.0, 1.0) + 2 * n * np.eye(n)
    values = np.triu(values) if upper else np.tril(values)
    return _from_numpy(make, values)


@register_op(namespace="linalg", samples=lambda make: [
    Sample((_triangular(make, 3, True), make((3, 2))), {"upper": True}, name="upper"),
    Sample((_triangular(make, 3, False, (2,)), make((3, 1))), {"upper": False},
           name="lower, broadcast batch"),
    Sample((_triangular(make, 3, False), make((2, 3))),
           {"upper": False, "left": False, "unitriangular": True}, name="right, unit")])
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A X = B (or X A = B when left=False) for triangular A, reading only the upper
    or the lower triangle of A (and taking its diagonal as ones when unitriangular). B is
    (*, n, k); batches broadcast. Cost O(n^3) per batch (a general solve on the triangle)."""
    _check_matrices(A, "linalg.solve_triangular")
    ensure_tensor(B, "linalg.solve_triangular", "B")
    if B._data.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    _check_float(B, "linalg.solve_triangular", "B")
    _same_dtype("linalg.solve_triangular", A=A, B=B)
    n = A._data.shape[-1]
    if not left:
        if B._data.shape[-1] != n:
            raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for "
                               f"the equation XA = B ({n}x{n} and {_shape_text(B.shape[-2:])})")
        return solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    if B._data.shape[-2] != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation AX = B ({n}x{n} and {_shape_text(B.shape[-2:])})")
    try:
        np.broadcast_shapes(A._data.shape[:-2], B._data.shape[:-2])
    except ValueError:
        raise RuntimeError(f"linalg.solve_triangular: the batch dimensions of A "
                           f"{list(A.shape)} and B {list(B.shape)} don't broadcast") from None
    return SolveTriangular.apply(A, B, bool(upper), bool(unitriangular))


class MatrixRank(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, a, atol, rtol, hermitian):
        xp = ctx.xp
        if hermitian:
            values = xp.abs(_lapack("linalg.matrix_rank", "The eigenvalue algorithm did not "
                                    "converge", xp.linalg.eigvalsh, a))
        else:
            values = _lapack("linalg.matrix_rank", "The SVD did not converge", xp.linalg.svd,
                             a, compute_uv=False)
        largest = values.max(axis=-1, keepdims=True) if values.shape[-1] else values
        return (values > xp.maximum(largest * rtol, atol)).sum(axis=-1).astype(np.int64)


@register_op(namespace="linalg", differentiable=False, samples=lambda make: [
    Sample((_from_numpy(make, np.outer([1.0, 2, 3], [1.0, -1, 2])),), name="rank 1"),
    Sample((make((2, 3, 4)),), name="batch full rank"),
    Sample((_from_numpy(make, np.diag([1.0, 1e-3, 0.0])),), {"atol": 1e-2}, name="atol")])
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values above max(atol, rtol * s_max) (int64). Default rtol:
    eps * max(m, n) when atol is not given or 0, else 0. Cost O(m n min(m, n))."""
    _check_matrices(A, "linalg.matrix_rank", square=hermitian)
    m, n = A._data.shape[-2:]
    atol_value = 0.0 if atol is None else float(atol)
    if rtol is None:
        rtol_value = float(np.finfo(A._data.dtype).eps) * max(m, n) if atol_value <= 0 else 0.0
    else:
        rtol_value = float(rtol)
    return MatrixRank.apply(A, atol_value, rtol_value, bool(hermitian))


@register_op(methods=("pinverse",), samples=lambda make: [Sample((make((3, 2)),))],
             atol=1e-6, rtol=1e-5)
def pinverse(input, rcond=1e-15):
    """The pseudo-inverse with singular values below rcond * s_max treated as zero; the
    older spelling of ``linalg.pinv(input, rtol=rcond)``."""
    return pinv(input, rtol=rcond)


# ============================================================================ norm
def _norm_samples(make):
    return [Sample((make((3, 4)),), name="flattened 2-norm"),
            Sample((make((3, 4)), "fro"), name="frobenius"),
            Sample((make((4,)), 1), name="vector ord 1"),
            Sample((make((2, 3, 4)), 2, -1, True), name="dim -1 keepdim"),
            Sample((make((2, 3)), float("inf"), (0, 1)), name="matrix inf")]


@register_op(namespace="linalg", samples=_norm_samples)
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector or matrix norm, chosen as PyTorch does: dim an int -> vector_norm over it;
    dim a pair -> matrix_norm over those dims; dim None -> the 2-norm of the flattened input
    when ord is None, else vector_norm for 1-D and matrix_norm for 2-D input."""
    ensure_tensor(A, "linalg.norm", "A")
    ndim = A._data.ndim
    if isinstance(dim, (int, np.integer)) and not isinstance(dim, bool):
        dim = (int(dim),)
    if dim is not None:
        dim = tuple(dim)
        if len(dim) == 1:
            return _linalg("vector_norm")(A, 2 if ord is None else ord, dim, keepdim,
                                          dtype=dtype)
        if len(dim) == 2:
            return _linalg("matrix_norm")(A, "fro" if ord is None else ord, dim, keepdim,
                                          dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           f"Got {list(dim)}")
    if ord is None:
        return _linalg("vector_norm")(A, 2, None, keepdim, dtype=dtype)
    if ndim == 1:
        return _linalg("vector_norm")(A, ord, None, keepdim, dtype=dtype)
    if ndim == 2:
        return _linalg("matrix_norm")(A, ord, (-2, -1), keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D "
                       f"or 2D. Got {ndim}D.")


def _linalg(name: str):
    function = NAMESPACES["linalg"].get(name)
    if function is None:
        raise RuntimeError(f"linalg.norm needs ember.linalg.{name}, which is not available")
    return function


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


# ----------------------------------------------------------------------------- index builders
def _int64():
    from .. import dtypes as _dtypes
    return _dtypes.int64


def _triangle_indices(op, lower, row, col, offset, dtype, device):
    from .. import dtypes as _dtypes

    for arg, value in (("row", row), ("col", col), ("offset", offset)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{op}(): argument '{arg}' must be int, not {type(value).__name__}")
    if row < 0 or col < 0:
        raise RuntimeError(f"{op}(): row and col must be non-negative, got row={row}, "
                           f"col={col}")
    d = _dtypes.int64 if dtype is None else _dtypes.to_dtype(dtype)
    if d.numpy.kind not in "iu":
        raise RuntimeError(f"{op}(): dtype must be an integer type, got {d.name}")
    target = backend.CPU if device is None else backend.parse_device(device)
    r, c = np.indices((row, col)).reshape(2, -1)
    keep = (c - r <= offset) if lower else (c - r >= offset)
    index = np.stack([r[keep], c[keep]]).astype(d.numpy)
    return Tensor._make(backend.xp_for_device(target).asarray(index), target)


def _index_builder_samples(make):
    device = make(()).device
    return [Sample((4, 3), {"device": device}, name="tall"),
            Sample((3, 5, 1), {"device": device}, name="offset 1"),
            Sample((3, 4, -2), {"device": device}, name="offset -2"),
            Sample((0, 3), {"device": device}, name="empty")]


@register_op(differentiable=False, samples=_index_builder_samples)
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """Coordinates of the lower triangle (``j - i <= offset``) of a row x col matrix, as a
    2 x N int64 tensor (row indices, then column indices) in row-major order."""
    return _triangle_indices("tril_indices", True, row, col, offset, dtype, device)


@register_op(differentiable=False, samples=_index_builder_samples)
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """Coordinates of the upper triangle (``j - i >= offset``) of a row x col matrix, as a
    2 x N int64 tensor (row indices, then column indices) in row-major order."""
    return _triangle_indices("triu_indices", False, row, col, offset, dtype, device)


@register_op(methods=("diagflat",), samples=lambda make: [
    Sample((make((2, 2)),), name="matrix flattened"),
    Sample((make((3,)), 1), name="offset 1"),
    Sample((make((3,)), -2), name="offset -2"),
    Sample((make(()),), name="0-d")])
def diagflat(input, offset=0):
    """A square matrix with the flattened ``input`` on diagonal ``offset``, zeros
    elsewhere."""
    ensure_tensor(input, "diagflat")
    return diag(input.reshape(-1), offset)


def _torch_vander(torch, x, N=None, increasing=False):
    # PyTorch 2.13's own vander fails in backward (its cumprod works in place), so the
    # reference is the definition, x ** powers
    n = x.shape[0] if N is None else N
    powers = torch.arange(n) if increasing else torch.arange(n - 1, -1, -1)
    if not x.is_floating_point():
        return torch.vander(x, N, increasing)
    return x.unsqueeze(1) ** powers.to(x.dtype)


@register_op(torch=_torch_vander, samples=lambda make: [
    Sample((make((4,)),), name="square"),
    Sample((make((3,)),), {"N": 4, "increasing": True}, name="increasing, wide"),
    Sample((make((3,)), 2), name="narrow"),
    Sample((make.int((3,), -3, 4),), name="int")])
def vander(x, N=None, increasing=False):
    """Vandermonde matrix of a 1-D tensor: column j is ``x ** (N - 1 - j)`` (``x ** j``
    when increasing); N defaults to len(x). Built by a running product (like PyTorch, so
    its gradient at 0 is finite). Integer and bool inputs give int64."""
    ensure_tensor(x, "vander")
    if x._data.ndim != 1:
        raise RuntimeError(f"vander(): x must be a one-dimensional tensor (got "
                           f"{x._data.ndim} dimensions)")
    n = x._data.shape[0] if N is None else N
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"vander(): argument 'N' must be int, not {type(N).__name__}")
    if n < 0:
        raise RuntimeError(f"vander(): N must be non-negative (got {n})")
    if x._data.dtype.kind in "biu":
        x = x.to(_int64())
    xp = backend.xp_for_device(x._device)
    ones = Tensor._make(xp.ones((x._data.shape[0], 1), dtype=x._data.dtype), x._device)
    if n == 0:
        return ones[:, :0]
    if n == 1:
        result = ones
    else:
        columns = NAMESPACES["ember"]["cat"](
            [ones, x.reshape(-1, 1).expand(x._data.shape[0], int(n) - 1)], dim=1)
        result = columns.cumprod(dim=1)
    return result if increasing else result.flip(1)


