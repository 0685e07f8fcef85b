"""LU factorization and the ops built on it: ``linalg.lu_factor(_ex)``, ``linalg.lu``,
``lu_unpack``, ``linalg.lu_solve`` (and the older ``lu``, ``lu_solve``), plus the ``*_ex``
forms of inv, solve and cholesky that report ``info`` instead of raising.

NumPy has no LU, so ember factors by partial pivoting itself: vectorized over the batch,
one step per column, choosing the first row of largest magnitude as LAPACK's getrf does,
so the pivots (1-based, int32) and factors agree with PyTorch's. The same code runs on
CuPy arrays.
"""
from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..return_types import result_type
from ..tensor import Tensor
from ._util import ensure_tensor
from .decompositions import (
    Cholesky,
    Inv,
    LinAlgError,
    SolveTriangular,
    _check_matrices,
    _from_numpy,
    _run,
    _same_dtype,
    _warn_deprecated,
    _well_conditioned,
    solve,
    solve_triangular,
)
from .matrices import tril, triu
from .products import _constant, _shape_text, matmul
from .registry import NAMESPACES, Sample, register_op

LUFactorResult = result_type("linalg_lu_factor", ["LU", "pivots"])
LUFactorExResult = result_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
LUResult = result_type("linalg_lu", ["P", "L", "U"])
LUUnpackResult = result_type("lu_unpack", ["P", "L", "U"])
LUWithInfo = result_type("_lu_with_info", ["LU", "pivots", "info"])
InvExResult = result_type("linalg_inv_ex", ["inverse", "info"])
SolveExResult = result_type("linalg_solve_ex", ["result", "info"])
CholeskyExResult = result_type("linalg_cholesky_ex", ["L", "info"])


# ============================================================================ array kernels
def _lu_arrays(xp, a, pivot=True):
    """(LU, pivots, info) of a (*, m, n) array: L (unit diagonal, not stored) below the
    diagonal, U on and above it, 1-based int32 row interchanges, and info = the first
    1-based index j with U[j, j] == 0 (0 when none), as LAPACK's getrf."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    lu = xp.array(a.reshape((-1, m, n)), copy=True)
    count = lu.shape[0]
    rows = xp.arange(count)
    pivots = xp.zeros((count, k), dtype=np.int32)
    info = xp.zeros(count, dtype=np.int32)
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(k):
            if pivot:
                p = j + xp.argmax(xp.abs(lu[:, j:, j]), axis=1)
                pivots[:, j] = (p + 1).astype(np.int32)
                top = lu[rows, j, :].copy()
                lu[rows, j, :] = lu[rows, p, :]
                lu[rows, p, :] = top
            else:
                pivots[:, j] = j + 1
            head = lu[:, j, j]
            zero = head == 0
            info = xp.where((info == 0) & zero, np.int32(j + 1), info)
            # a zero pivot under partial pivoting has only zeros below it: nothing to scale
            lu[:, j + 1:, j] /= (xp.where(zero, 1, head) if pivot else head)[:, None]
            lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    return (lu.reshape(batch + (m, n)), pivots.reshape(batch + (k,)),
            info.reshape(batch).astype(np.int32))


def _permutation_arrays(xp, pivots, m, dtype):
    """P (*, m, m) with A = P L U, from getrf's pivots (*, k)."""
    batch, k = pivots.shape[:-1], pivots.shape[-1]
    flat = pivots.reshape((-1, k)).astype(np.int64) - 1
    count = flat.shape[0]
    rows = xp.arange(count)
    perm = xp.broadcast_to(xp.arange(m), (count, m)).copy()
    for j in range(k):
        target = flat[:, j]
        here = perm[:, j].copy()
        perm[:, j] = perm[rows, target]
        perm[rows, target] = here
    # row i of P^T A is row perm[i] of A, so P[perm[i], i] = 1
    p = xp.zeros((count, m, m), dtype=dtype)
    p[rows[:, None], perm, xp.arange(m)[None, :]] = 1
    return p.reshape(batch + (m, m))


def _substitute(xp, lu, pivots, b):
    """X with A X = B from A's LU by forward and back substitution, without LAPACK: a zero
    pivot gives inf/nan instead of an error (what the ``*_ex`` ops return for singular
    inputs). lu (*, n, n), b (*, n, k)."""
    n = lu.shape[-1]
    batch = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    p = _permutation_arrays(xp, pivots, n, lu.dtype)
    y = xp.matmul(xp.swapaxes(p, -1, -2), b) * xp.ones(batch + (1, 1), dtype=lu.dtype)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in range(1, n):
            y[..., i, :] -= xp.matmul(lu[..., i:i + 1, :i], y[..., :i, :])[..., 0, :]
        for i in range(n - 1, -1, -1):
            if i < n - 1:
                y[..., i, :] -= xp.matmul(lu[..., i:i + 1, i + 1:], y[..., i + 1:, :])[..., 0, :]
            y[..., i, :] /= lu[..., i, i][..., None]
    return y


_CPU = backend.parse_device("cpu")


def _batch_prefix(info, index) -> str:
    return f"(Batch element {index}): " if info.ndim else ""


def _first_failure(info):
    """(flat index, value) of the first non-zero info, or None."""
    flat = backend.move(info, backend.device_of_array(info), _CPU).reshape(-1)
    bad = np.nonzero(flat)[0]
    return None if bad.size == 0 else (int(bad[0]), int(flat[bad[0]]))


# ============================================================================ lu_factor
class LuFactor(Function):
    array_backward = True
    node_name = "LinalgLuFactorExBackward0"

    @staticmethod
    def forward(ctx, a, pivot):
        xp = ctx.xp
        lu, pivots, info = _lu_arrays(xp, a, pivot)
        ctx.pivot = pivot
        ctx.set_materialize_grads(False)
        p = _permutation_arrays(xp, pivots, a.shape[-2], a.dtype) if pivot else None
        ctx.save_for_backward(lu, p)
        return lu, pivots, info

    @staticmethod
    def backward(ctx, grad, grad_pivots=None, grad_info=None):
        if grad is None:
            return None, None
        m = ctx.math
        lu, p = ctx.saved_tensors
        grad_a = _lu_backward(m, lu, grad)
        return (m.matmul(p, grad_a) if ctx.pivot else grad_a), None


def _tri_solve(m, a, b, upper, unit=False, left=True):
    """T^-1 B (left) or B T^-1 (right) for the triangle of ``a`` (a backward step)."""
    if left:
        return _run(m, SolveTriangular, a, b, upper, unit)
    return m.mT(_run(m, SolveTriangular, m.mT(a), m.mT(b), not upper, unit))


def _lu_backward(m, lu, grad):
    """P^T G_A from the gradient G of the packed LU (its strictly lower part is L's, the rest
    U's), for A = P L U. Square: L^-T [tril(L^T G_L, -1) + triu(G_U U^T)] U^-T; the wide and
    tall cases split off the block of U (or L) past the square part."""
    rows, cols = lu.shape[-2:]
    k = min(rows, cols)
    grad_l, grad_u = m.tril(grad[..., :, :k], -1), m.triu(grad[..., :k, :], 0)
    low = m.tril(lu[..., :, :k], -1)
    up = m.triu(lu[..., :k, :], 0)
    lt_gl = m.matmul(m.mT(low), grad_l) + grad_l[..., :k, :]  # L^T G_L, L = low + I
    square_lu = lu[..., :k, :k]
    if rows == cols:
        inner = m.tril(lt_gl, -1) + m.triu(m.matmul(grad_u, m.mT(up)), 0)
        inner = _tri_solve(m, m.mT(square_lu), inner, True, unit=True)
        return _tri_solve(m, m.mT(square_lu), inner, False, left=False)
    if rows < cols:
        inner = m.tril(lt_gl - m.matmul(grad_u, m.mT(up)), -1)
        inner = _tri_solve(m, m.mT(square_lu), inner, False, left=False)
        inner = m.cat([inner + grad_u[..., :, :k], grad_u[..., :, k:]], -1)
        return _tri_solve(m, m.mT(square_lu), inner, True, unit=True)
    inner = m.triu(m.matmul(grad_u, m.mT(up)) - lt_gl, 0)
    inner = _tri_solve(m, m.mT(square_lu), inner, True, unit=True)
    inner = m.cat([inner + grad_l[..., :k, :], grad_l[..., k:, :]], -2)
    return _tri_solve(m, m.mT(square_lu), inner, False, left=False)


def _lu_samples(make):
    return [Sample((make((3, 3)),), name="square"),
            Sample((make((2, 3, 3)),), name="batch"),
            Sample((make((4, 2)),), name="tall"),
            Sample((make((2, 4, 3)),), name="batch tall"),
            Sample((make((2, 4)),), name="wide")]


def _lu_operand(A, op):
    _check_matrices(A, op, square=False)


def _raise_singular(op, info):
    failure = _first_failure(info._data)
    if failure is not None:
        index, j = failure
        raise LinAlgError(f"{op}: {_batch_prefix(info._data, index)}U[{j},{j}] is zero and "
                          "using it on lu_solve would result in a division by zero. If you "
                          "still want to perform the factorization, consider calling "
                          "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


@register_op(namespace="linalg", samples=_lu_samples)
def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """The packed LU factorization (LU, pivots, info) of A (*, m, n) by partial pivoting:
    A = P L U with L unit lower triangular (stored below LU's diagonal), U upper triangular
    (on and above it) and P given by ``pivots`` (*, min(m, n)), the 1-based int32 row
    interchanges of LAPACK's getrf. ``info`` (int32, *) is the first 1-based j with
    U[j, j] == 0, or 0; check_errors=True raises instead. pivot=False skips the row
    interchanges (pivots are then 1..k). Differentiable in A. Cost O(m n k).

    >>> LU, pivots, info = ember.linalg.lu_factor_ex(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> pivots
    tensor([2, 2], dtype=ember.int32)
    """
    _lu_operand(A, "linalg.lu_factor_ex")
    lu, pivots, info = LuFactor.apply(A, bool(pivot))
    if check_errors:
        _raise_singular("torch.linalg.lu_factor_ex", info)
    return LUFactorExResult(lu, pivots, info)


@register_op(namespace="linalg", samples=_lu_samples)
def lu_factor(A, *, pivot=True):
    """The packed LU factorization (LU, pivots) of A; see ``linalg.lu_factor_ex``. Raises
    ember.linalg.LinAlgError when U has a zero on its diagonal (A singular).

    >>> LU, pivots = ember.linalg.lu_factor(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> LU
    tensor([[3.0000, 4.0000],
            [0.3333, 0.6667]])
    """
    _lu_operand(A, "linalg.lu_factor")
    lu, pivots, info = LuFactor.apply(A, bool(pivot))
    _raise_singular("torch.linalg.lu_factor", info)
    return LUFactorResult(lu, pivots)


def _unpack(lu, pivots, unpack_data=True, unpack_pivots=True):
    xp = backend.xp_for_device(lu._device)
    rows, cols = lu._data.shape[-2:]
    k = min(rows, cols)
    empty = _constant(xp.zeros((0,), dtype=lu._data.dtype), lu)
    p = l_factor = u_factor = empty
    if unpack_pivots:
        p = _constant(_permutation_arrays(xp, pivots._data, rows, lu._data.dtype), lu)
    if unpack_data:
        eye = _constant(xp.eye(rows, k, dtype=lu._data.dtype), lu)
        l_factor = tril(lu[..., :, :k], -1) + eye
        u_factor = triu(lu[..., :k, :])
    return p, l_factor, u_factor


@register_op(namespace="linalg", samples=_lu_samples)
def lu(A, *, pivot=True):
    """(P, L, U) with A = P L U for A (*, m, n): P a permutation (*, m, m), L (*, m, k) unit
    lower triangular, U (*, k, n) upper triangular, k = min(m, n), by partial pivoting.
    Singular A is factored too (U has zeros on its diagonal). Differentiable in A.

    >>> P, L, U = ember.linalg.lu(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> P @ L @ U
    tensor([[1., 2.],
            [3., 4.]])
    """
    _lu_operand(A, "linalg.lu")
    packed, pivots, _ = LuFactor.apply(A, bool(pivot))
    return LUResult(*_unpack(packed, pivots))


def _check_pivots(op, LU_data, LU_pivots):
    ensure_tensor(LU_pivots, op, "LU_pivots")
    if LU_pivots._data.dtype != np.int32:
        raise RuntimeError(f"{op}: LU_pivots is expected to be a contiguous tensor of "
                           f"torch.int32 dtype. Note: this function is intended to be used "
                           f"with the output produced by torch.linalg.lu_factor (got "
                           f"{LU_pivots.dtype.name})")
    k = min(LU_data._data.shape[-2:])
    if tuple(LU_pivots.shape) != tuple(LU_data.shape[:-2]) + (k,):
        raise RuntimeError(f"{op}: the pivots must have shape {list(LU_data.shape[:-2]) + [k]} "
                           f"for LU of shape {list(LU_data.shape)}, but got "
                           f"{list(LU_pivots.shape)}")


def _lu_unpack_samples(make):
    import ember

    out = []
    for shape, name in (((3, 3), "square"), ((2, 4, 2), "batch tall"), ((2, 4), "wide")):
        a = make(shape, requires_grad=False)
        packed, pivots = ember.linalg.lu_factor(a)
        out.append(Sample((packed.detach().requires_grad_(True), pivots), name=name))
    return out


@register_op(samples=_lu_unpack_samples)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from the packed LU of ``linalg.lu_factor``: L unit lower (*, m, k), U upper
    (*, k, n), P (*, m, m) from the pivots. unpack_data=False leaves L and U empty,
    unpack_pivots=False leaves P empty. Differentiable in LU_data.

    >>> LU, pivots = ember.linalg.lu_factor(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> ember.lu_unpack(LU, pivots).P
    tensor([[0., 1.],
            [1., 0.]])
    """
    _check_matrices(LU_data, "lu_unpack", "LU_data", square=False)
    _check_pivots("lu_unpack", LU_data, LU_pivots)
    return LUUnpackResult(*_unpack(LU_data, LU_pivots, bool(unpack_data),
                                   bool(unpack_pivots)))


@register_op("lu", methods=("lu",), torch=lambda torch, A, *args, **kwargs: torch.lu(
    A, *args, **kwargs), samples=lambda make: [
        Sample((make((3, 3)),), name="square"),
        Sample((make((2, 3, 3)),), {"get_infos": True}, name="batch, infos")])
def lu_deprecated(A, pivot=True, get_infos=False):
    """The older spelling of ``linalg.lu_factor`` / ``linalg.lu_factor_ex``: (LU, pivots),
    or (LU, pivots, infos) with get_infos=True (then a singular A does not raise)."""
    _warn_deprecated("lu", "in favor of ember.linalg.lu_factor / ember.linalg.lu_factor_ex: "
                     "LU, pivots = ember.lu(A, pivot) should be replaced with LU, pivots = "
                     "ember.linalg.lu_factor(A, pivot=pivot), and LU, pivots, info = "
                     "ember.lu(A, pivot, get_infos=True) with LU, pivots, info = "
                     "ember.linalg.lu_factor_ex(A, pivot=pivot)")
    _lu_operand(A, "lu")
    packed, pivots, info = LuFactor.apply(A, bool(pivot))
    if get_infos:
        return LUWithInfo(packed, pivots, info)
    _raise_singular("torch.linalg.lu_factor", info)
    return LUFactorResult(packed, pivots)


# ============================================================================ lu_solve
def _lu_solve_samples(make):
    import ember

    def packed(n, batch=()):
        a = _well_conditioned(make, n, batch).detach()
        lu_data, pivots = ember.linalg.lu_factor(a)
        return lu_data.requires_grad_(True), pivots

    out = []
    for kwargs, b_shape, batch, name in (({}, (3, 2), (), "left"),
                                         ({"adjoint": True}, (3, 1), (2,), "adjoint, batch"),
                                         ({"left": False}, (2, 3), (), "right"),
                                         ({"left": False, "adjoint": True}, (1, 3), (),
                                          "right adjoint")):
        lu_data, pivots = packed(3, batch)
        out.append(Sample((lu_data, pivots, make(b_shape)), kwargs, name=name))
    return out


@register_op(namespace="linalg", samples=_lu_solve_samples)
def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with A X = B (or X A = B when left=False; A^T for adjoint=True), given A's packed
    LU from ``linalg.lu_factor``: two triangular solves and a permutation. B is (*, n, k)
    (or (*, k, n) when left=False); batches broadcast. Differentiable in LU and B.

    >>> A = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> LU, pivots = ember.linalg.lu_factor(A)
    >>> ember.linalg.lu_solve(LU, pivots, ember.tensor([[5.0], [11.0]]))
    tensor([[1.],
            [2.]])
    """
    _check_matrices(LU, "linalg.lu_solve", "LU")
    _check_pivots("linalg.lu_solve", LU, pivots)
    ensure_tensor(B, "linalg.lu_solve", "B")
    if B._data.ndim < 2:
        raise RuntimeError(f"linalg.lu_solve: Expected B to have at least 2 dimensions, but it "
                           f"has shape {list(B.shape)}")
    _same_dtype("linalg.lu_solve", LU=LU, B=B)
    n = LU._data.shape[-1]
    if (B._data.shape[-2] if left else B._data.shape[-1]) != n:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{equation} ({n}x{n} and {_shape_text(B.shape[-2:])})")
    if not left:  # X A = B is A^T X^T = B^T
        return lu_solve(LU, pivots, B.mT, adjoint=not adjoint).mT
    xp = backend.xp_for_device(LU._device)
    p = _constant(_permutation_arrays(xp, pivots._data, n, LU._data.dtype), LU)
    if adjoint:  # A^T = U^T L^T P^T
        y = solve_triangular(LU.mT, B, upper=False)
        y = solve_triangular(LU.mT, y, upper=True, unitriangular=True)
        return matmul(p, y)
    y = solve_triangular(LU, matmul(p.mT, B), upper=False, unitriangular=True)
    return solve_triangular(LU, y, upper=True)


@register_op("lu_solve", methods=("lu_solve",), torch=lambda torch, b, *args: torch.lu_solve(
    b, *args), samples=lambda make: [
        Sample((s.args[2],) + s.args[:2], name=s.name) for s in _lu_solve_samples(make)[:2]
        if not s.kwargs])
def lu_solve_deprecated(input, LU_data, LU_pivots):
    """The older spelling of ``linalg.lu_solve(LU_data, LU_pivots, input)``."""
    _warn_deprecated("lu_solve", "in favor of ember.linalg.lu_solve, which has its arguments "
                     "reversed: X = ember.lu_solve(B, LU, pivots) should be replaced with X = "
                     "ember.linalg.lu_solve(LU, pivots, B)")
    return lu_solve(LU_data, LU_pivots, input)


# ============================================================================ *_ex forms
def _info_of(A):
    xp = backend.xp_for_device(A._device)
    return _lu_arrays(xp, A._data)


def _int32_tensor(array, like):
    return Tensor._make(array.astype(np.int32), like._device, False)


def _spare_the_good(A, info, compute, fallback, trailing=2):
    """compute(A') with A's failed matrices (info != 0) swapped for the identity, so the
    others keep their values and gradients; the failed places get ``fallback`` (an array)."""
    where = NAMESPACES["ember"]["where"]
    xp = backend.xp_for_device(A._device)
    bad = info != 0
    eye = xp.eye(A._data.shape[-1], dtype=A._data.dtype)
    safe = where(_constant(bad[..., None, None], A), _constant(eye, A), A)
    out = compute(safe)
    mask = bad.reshape(bad.shape + (1,) * trailing)
    return where(_constant(mask, A), _constant(fallback, A), out)


@register_op(namespace="linalg", samples=lambda make: [
    Sample((_well_conditioned(make, 3),)), Sample((_well_conditioned(make, 2, (2,)),),
                                                 name="batch")])
def inv_ex(A, *, check_errors=False):
    """(inverse, info): ``linalg.inv`` that reports a singular matrix in ``info`` (int32, *;
    the first 1-based j with U[j, j] == 0 in A's LU) instead of raising; the inverse of a
    singular matrix is then inf/nan. check_errors=True raises ember.linalg.LinAlgError.

    >>> ember.linalg.inv_ex(ember.tensor([[1.0, 2.0], [2.0, 4.0]])).info
    tensor(2, dtype=ember.int32)
    """
    _check_matrices(A, "linalg.inv_ex")
    xp = backend.xp_for_device(A._device)
    batch = tuple(A._data.shape[:-2])
    try:
        out = Inv.apply(A)
    except LinAlgError:
        packed, pivots, info = _info_of(A)
        failure = _first_failure(info)
        if check_errors and failure is not None:
            index, j = failure
            raise LinAlgError(f"linalg.inv_ex: {_batch_prefix(info, index)}The diagonal "
                              f"element {j} is zero, the inversion could not be completed "
                              "because the input matrix is singular.") from None
        eye = xp.broadcast_to(xp.eye(A._data.shape[-1], dtype=A._data.dtype), A._data.shape)
        inverse = _spare_the_good(A, info, Inv.apply, _substitute(xp, packed, pivots, eye))
        return InvExResult(inverse, _int32_tensor(info, A))
    return InvExResult(out, _int32_tensor(xp.zeros(batch, dtype=np.int32), A))


@register_op(namespace="linalg", samples=lambda make: [
    Sample((_well_conditioned(make, 3), make((3, 2))), name="matrix rhs"),
    Sample((_well_conditioned(make, 3), make((2, 3))), {"left": False}, name="left=False")])
def solve_ex(A, B, *, left=True, check_errors=False):
    """(result, info): ``linalg.solve`` that reports a singular A in ``info`` (int32) instead
    of raising (the result is then inf/nan); check_errors=True raises.

    >>> ember.linalg.solve_ex(ember.eye(2), ember.ones(2)).result
    tensor([1., 1.])
    """
    _check_matrices(A, "linalg.solve_ex")
    xp = backend.xp_for_device(A._device)
    try:
        out = solve(A, B, left=left)
    except LinAlgError:
        packed, pivots, info = _info_of(A)
        failure = _first_failure(info)
        if check_errors and failure is not None:
            index, j = failure
            raise LinAlgError(f"linalg.solve_ex: {_batch_prefix(info, index)}The solver "
                              f"failed because the input matrix is singular (U[{j},{j}] is "
                              "zero).") from None
        vector = B._data.ndim == 1 or (B._data.ndim == A._data.ndim - 1 and
                                       B._data.shape == A._data.shape[:-1])
        b = B._data[..., None] if vector else B._data
        if left:
            x = _substitute(xp, packed, pivots, b)
        else:
            packed_t, pivots_t, _ = _lu_arrays(xp, xp.swapaxes(A._data, -1, -2))
            x = xp.swapaxes(_substitute(xp, packed_t, pivots_t, xp.swapaxes(b, -1, -2)), -1, -2)
        result = _spare_the_good(A, info, lambda safe: solve(safe, B, left=left),
                                 x[..., 0] if vector else x, 1 if vector else 2)
        return SolveExResult(result, _int32_tensor(info, A))
    return SolveExResult(out, _int32_tensor(xp.zeros(A._data.shape[:-2], np.int32), A))


def _partial_cholesky(xp, a):
    """LAPACK's unblocked potf2 (lower): (L, info) where the factorization stops at the first
    leading minor that is not positive-definite; that column's diagonal keeps the failed
    pivot and the columns after it keep A's lower triangle."""
    n = a.shape[-1]
    low = xp.tril(a).copy()
    info = xp.zeros(a.shape[:-2], dtype=np.int32)
    for j in range(n):
        active = info == 0
        head = low[..., j, j] - (low[..., j, :j] * low[..., j, :j]).sum(axis=-1)
        failed = active & ~(head > 0)
        info = xp.where(failed, np.int32(j + 1), info)
        going = active & ~failed
        low[..., j, j] = xp.where(active, xp.where(going, xp.sqrt(xp.where(going, head, 1)),
                                                   head), low[..., j, j])
        below = low[..., j + 1:, j] - xp.matmul(low[..., j + 1:, :j],
                                                low[..., j, :j][..., None])[..., 0]
        scaled = below / xp.where(going, low[..., j, j], 1)[..., None]
        low[..., j + 1:, j] = xp.where(going[..., None], scaled, low[..., j + 1:, j])
    return low, info


@register_op(namespace="linalg", samples=lambda make: [
    Sample((make.positive_definite(3),)),
    Sample((make.positive_definite(2, (2,)),), {"upper": True}, name="batch upper")],
    gradcheck_wrapper=lambda function, A, **kwargs: function(A + A.mT, **kwargs))
def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info): ``linalg.cholesky`` that reports a matrix that is not positive-definite in
    ``info`` (int32, *: the order of the first leading minor that is not) instead of raising;
    check_errors=True raises ember.linalg.LinAlgError. For such a matrix L holds the
    factorization up to that minor, as LAPACK's potf2 leaves it.

    >>> ember.linalg.cholesky_ex(ember.tensor([[4.0, 2.0], [2.0, -1.0]])).info
    tensor(2, dtype=ember.int32)
    """
    _check_matrices(A, "linalg.cholesky_ex")
    xp = backend.xp_for_device(A._device)
    try:
        factor = Cholesky.apply(A, bool(upper))
    except LinAlgError:
        low, info = _partial_cholesky(xp, A._data)
        failure = _first_failure(info)
        if check_errors and failure is not None:
            index, j = failure
            raise LinAlgError(f"linalg.cholesky_ex: {_batch_prefix(info, index)}The "
                              "factorization could not be completed because the input is not "
                              f"positive-definite (the leading minor of order {j} is not "
                              "positive-definite).") from None
        partial = xp.ascontiguousarray(xp.swapaxes(low, -1, -2)) if upper else low
        factor = _spare_the_good(A, info, lambda safe: Cholesky.apply(safe, bool(upper)),
                                 partial)
        return CholeskyExResult(factor, _int32_tensor(info, A))
    return CholeskyExResult(factor, _int32_tensor(xp.zeros(A._data.shape[:-2], np.int32), A))

# ============================================================================ Householder
GeqrfResult = result_type("geqrf", ["a", "tau"])


def _geqrf_arrays(xp, a):
    """LAPACK's geqrf on (*, m, n): R on and above the diagonal, the Householder vectors
    v_j (v_j[j] = 1, not stored) below it, and tau (*, k) with H_j = I - tau_j v_j v_j^T and
    A = H_1 ... H_k R. Each reflector is larfg's: beta = -sign(alpha) * ||x||."""
    out = xp.array(a, copy=True)
    m, n = a.shape[-2:]
    k = min(m, n)
    tau = xp.zeros(a.shape[:-2] + (k,), dtype=a.dtype)
    for j in range(k):
        alpha = out[..., j, j]
        below = out[..., j + 1:, j]
        tail = xp.sqrt((below * below).sum(axis=-1))
        reflect = tail != 0  # larfg: H = I when the column below the diagonal is zero
        beta = -xp.where(alpha >= 0, 1, -1).astype(a.dtype) * xp.sqrt(alpha * alpha + tail * tail)
        safe_beta = xp.where(reflect, beta, 1)
        tau[..., j] = xp.where(reflect, (beta - alpha) / safe_beta, 0)
        scale = xp.where(reflect, 1 / xp.where(reflect, alpha - beta, 1), 1)
        out[..., j + 1:, j] = below * scale[..., None]
        out[..., j, j] = xp.where(reflect, beta, alpha)
        if j + 1 < n:  # apply H_j to the columns on the right
            v = xp.concatenate([xp.ones(a.shape[:-2] + (1,), a.dtype), out[..., j + 1:, j]], -1)
            rest = out[..., j:, j + 1:]
            w = xp.matmul(v[..., None, :], rest)  # v^T C
            out[..., j:, j + 1:] = rest - tau[..., j, None, None] * v[..., :, None] * w
    return out, tau


class Geqrf(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, a):
        return _geqrf_arrays(ctx.xp, a)


@register_op(methods=("geqrf",), differentiable=False, samples=lambda make: [
    Sample((make((4, 3)),), name="tall"), Sample((make((2, 3, 4)),), name="batch wide")])
def geqrf(input):
    """(a, tau): the QR decomposition in LAPACK's packed form. R is on and above a's
    diagonal; below it are the Householder vectors v_j (with an implicit 1 at v_j[j]), and
    A = H_1 ... H_k R with H_j = I - tau_j v_j v_j^T. ``householder_product(a, tau)`` builds
    Q from them and ``ormqr`` applies Q without building it. Not differentiable (as in
    PyTorch); use ``linalg.qr`` for gradients.

    >>> a, tau = ember.geqrf(ember.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> a[0, 0]
    tensor(-5.)
    """
    _check_matrices(input, "geqrf", "input", square=False)
    return GeqrfResult(*Geqrf.apply(input))


def _reflectors(op, input, tau):
    """The unit lower Householder vectors (*, m, k) of a packed input (*, m, n), checking
    tau (*, k)."""
    _check_matrices(input, op, "input", square=False)
    ensure_tensor(tau, op, "tau")
    _same_dtype(op, input=input, tau=tau)
    m, n = input._data.shape[-2:]
    if tau._data.ndim != input._data.ndim - 1 or tuple(tau.shape[:-1]) != tuple(
            input.shape[:-2]):
        raise RuntimeError(f"{op}: Expected batch dimensions of tau {list(tau.shape[:-1])} to "
                           f"be equal to input.shape[:-2] {list(input.shape[:-2])}")
    k = tau._data.shape[-1]
    if k > min(m, n):
        raise RuntimeError(f"{op}: input.shape[-1] and input.shape[-2] must be greater than "
                           f"or equal to tau.shape[-1] (got tau of size {k} for input of "
                           f"shape {list(input.shape)})")
    xp = backend.xp_for_device(input._device)
    eye = _constant(xp.eye(m, k, dtype=input._data.dtype), input)
    return tril(input[..., :, :k], -1) + eye, k


def _reflect(vectors, tau, i, c, left):
    """H_i C (left) or C H_i, H_i = I - tau_i v_i v_i^T."""
    v = vectors[..., :, i:i + 1]
    t = tau[..., i:i + 1].unsqueeze(-1)
    if left:
        return c - t * matmul(v, matmul(v.mT, c))
    return c - t * matmul(matmul(c, v), v.mT)


def _householder_samples(make):
    import ember

    out = []
    for shape, name in (((4, 3), "tall"), ((2, 3, 3), "batch square"), ((4, 2), "k < n")):
        a, tau = ember.geqrf(make(shape, requires_grad=False))
        if name == "k < n":
            tau = tau[..., :1]
        out.append(Sample((a.requires_grad_(True), tau.requires_grad_(True)), name=name))
    return out


@register_op(namespace="linalg", samples=_householder_samples)
def householder_product(A, tau):
    """The first n columns of H_1 ... H_k for Householder reflectors H_j = I - tau_j v_j
    v_j^T, v_j the j-th column of A (*, m, n) below its diagonal with an implicit 1 on it
    (m >= n >= k = tau.shape[-1]): Q from ``geqrf``'s packed output. Differentiable in A and
    tau. Cost O(m n k).

    >>> a, tau = ember.geqrf(ember.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> ember.linalg.householder_product(a, tau)
    tensor([[-0.6000, -0.8000],
            [-0.8000,  0.6000]])
    """
    _check_matrices(A, "linalg.householder_product", "A", square=False)
    m, n = A._data.shape[-2:]
    if m < n:
        raise RuntimeError(f"torch.linalg.householder_product: input.shape[-2] must be greater "
                           f"than or equal to input.shape[-1] (got {m} by {n})")
    if isinstance(tau, Tensor) and tau._data.ndim >= 1 and tau._data.shape[-1] > n:
        raise RuntimeError(f"torch.linalg.householder_product: input.shape[-1] must be greater "
                           f"than or equal to tau.shape[-1] (got {n} and {tau.shape[-1]})")
    vectors, k = _reflectors("linalg.householder_product", A, tau)
    xp = backend.xp_for_device(A._device)
    q = _constant(xp.broadcast_to(xp.eye(m, n, dtype=A._data.dtype),
                                  A._data.shape).copy(), A)
    for i in range(k - 1, -1, -1):
        q = _reflect(vectors, tau, i, q, left=True)
    return q


@register_op(methods=("orgqr",), samples=_householder_samples)
def orgqr(input, tau):
    """The older name of ``linalg.householder_product``."""
    return householder_product(input, tau)


def _ormqr_samples(make):
    import ember

    out = []
    for kwargs, c_shape, name in (({}, (4, 2), "left"),
                                  ({"transpose": True}, (4, 3), "left transpose"),
                                  ({"left": False}, (2, 4), "right"),
                                  ({"left": False, "transpose": True}, (3, 4),
                                   "right transpose")):
        a, tau = ember.geqrf(make((4, 3), requires_grad=False))
        out.append(Sample((a.requires_grad_(True), tau.requires_grad_(True), make(c_shape)),
                          kwargs, name=name))
    return out


@register_op(methods=("ormqr",), samples=_ormqr_samples)
def ormqr(input, tau, other, left=True, transpose=False):
    """Q C, Q^T C, C Q or C Q^T (left, transpose) for Q = H_1 ... H_k the full square
    orthogonal matrix of ``geqrf``'s packed reflectors, without forming Q. input is
    (*, mn, k) with mn = other's rows (left) or columns; other is (*, m, n). Differentiable in
    all three. Cost O(m n k).

    >>> a, tau = ember.geqrf(ember.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> ember.ormqr(a, tau, ember.eye(2))
    tensor([[-0.6000, -0.8000],
            [-0.8000,  0.6000]])
    """
    vectors, k = _reflectors("ormqr", input, tau)
    ensure_tensor(other, "ormqr", "other")
    _same_dtype("ormqr", input=input, other=other)
    if other._data.ndim < 2:
        raise RuntimeError(f"ormqr: other must have at least 2 dimensions, but got shape "
                           f"{list(other.shape)}")
    mn = input._data.shape[-2]
    side = other._data.shape[-2] if left else other._data.shape[-1]
    if side != mn:
        which = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"ormqr: input.shape[-2] must be equal to {which} (got {mn} and "
                           f"{side})")
    order = range(k - 1, -1, -1) if left != bool(transpose) else range(k)
    result = other
    for i in order:
        result = _reflect(vectors, tau, i, result, left=bool(left))
    return result


# ============================================================================ LDL
LDLFactorResult = result_type("linalg_ldl_factor", ["LD", "pivots"])
LDLFactorExResult = result_type("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
_BUNCH_KAUFMAN = (1 + 17 ** 0.5) / 8


def _swap(a, i, j, axis):
    if axis == 0:
        a[[i, j], :] = a[[j, i], :]
    else:
        a[:, [i, j]] = a[:, [j, i]]


def _ldl_one(xp, a):
    """LAPACK's sytf2 (lower) on one symmetric matrix: Bunch-Kaufman diagonal pivoting with
    1x1 and 2x2 blocks. Returns (LD, pivots, info): D's blocks on LD's diagonal, L's
    multipliers below them, pivots 1-based (a 2x2 block's two entries both -p)."""
    n = a.shape[-1]
    work = xp.tril(a) + xp.swapaxes(xp.tril(a, -1), -1, -2)  # the symmetric matrix it reads
    pivots = np.zeros(n, dtype=np.int32)
    info = 0
    k = 0
    while k < n:
        step = 1
        absakk = abs(float(work[k, k]))
        if k < n - 1:
            imax = k + 1 + int(xp.argmax(xp.abs(work[k + 1:, k])))
            colmax = abs(float(work[imax, k]))
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0:  # a zero column: D[k, k] = 0, nothing to eliminate
            info = info or k + 1
            pivots[k] = k + 1
            k += 1
            continue
        if absakk >= _BUNCH_KAUFMAN * colmax:
            kp = k
        else:
            row = xp.abs(work[imax, k:])
            row[imax - k] = 0
            rowmax = float(row.max())
            if absakk >= _BUNCH_KAUFMAN * colmax * (colmax / rowmax):
                kp = k
            elif abs(float(work[imax, imax])) >= _BUNCH_KAUFMAN * rowmax:
                kp = imax
            else:
                kp, step = imax, 2
        kk = k + step - 1
        if kp != kk:  # symmetric interchange within the trailing block only, as sytf2
            block = work[k:, k:]
            _swap(block, kk - k, kp - k, 0)
            _swap(block, kk - k, kp - k, 1)
        if step == 1:
            pivot = work[k, k]
            column = work[k + 1:, k] / pivot
            work[k + 1:, k + 1:] -= xp.outer(column, work[k + 1:, k])
            work[k + 1:, k] = column
            work[k, k + 1:] = column
            if pivot == 0:
                info = info or k + 1
            pivots[k] = kp + 1
        else:
            d = work[k:k + 2, k:k + 2]
            w = work[k + 2:, k:k + 2]
            multipliers = xp.linalg.solve(d, w.T).T  # W D^-1 (D symmetric)
            work[k + 2:, k + 2:] -= xp.matmul(multipliers, w.T)
            work[k + 2:, k:k + 2] = multipliers
            work[k:k + 2, k + 2:] = multipliers.T
            pivots[k] = pivots[k + 1] = -(kp + 1)
        k += step
    return xp.tril(work), pivots, info


class LdlFactor(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, a):
        xp = ctx.xp
        batch, n = a.shape[:-2], a.shape[-1]
        flat = a.reshape((-1, n, n))
        ld = xp.empty_like(flat)
        pivots = np.zeros((flat.shape[0], n), dtype=np.int32)
        info = np.zeros(flat.shape[0], dtype=np.int32)
        for i in range(flat.shape[0]):
            ld[i], pivots[i], info[i] = _ldl_one(xp, flat[i])
        return (ld.reshape(a.shape), xp.asarray(pivots.reshape(batch + (n,))),
                xp.asarray(info.reshape(batch)))


def _ldl_samples(make):
    from .decompositions import _symmetric

    return [Sample((_symmetric(make, 4),), name="symmetric"),
            Sample((_symmetric(make, 3, (2,)),), name="batch"),
            Sample((_from_numpy(make, np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0],
                                                [2.0, 3.0, 0.0]])),), name="2x2 pivots")]


def _ldl_operand(op, A, hermitian):
    _check_matrices(A, op)
    if not isinstance(hermitian, bool):
        raise TypeError(f"{op}(): argument 'hermitian' must be bool, not "
                        f"{type(hermitian).__name__}")


@register_op(namespace="linalg", differentiable=False, samples=_ldl_samples)
def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """(LD, pivots, info): the Bunch-Kaufman LDL^T factorization of a symmetric A (*, n, n),
    reading its lower triangle, in LAPACK's sytrf form: D (1x1 and 2x2 blocks) on LD's
    diagonal, L's multipliers below it; pivots (int32) are the 1-based interchanges, both
    entries of a 2x2 block holding -p. info > 0 names the first zero diagonal entry of D
    (the factorization is complete, but D is singular); check_errors=True raises then.
    hermitian only matters for complex inputs. Not differentiable (as in PyTorch).

    >>> ember.linalg.ldl_factor_ex(ember.tensor([[4.0, 2.0], [2.0, 3.0]])).LD
    tensor([[4.0000, 0.0000],
            [0.5000, 2.0000]])
    """
    _ldl_operand("linalg.ldl_factor_ex", A, hermitian)
    ld, pivots, info = LdlFactor.apply(A)
    if check_errors:
        _raise_ldl("linalg.ldl_factor_ex", info)
    return LDLFactorExResult(ld, pivots, info)


def _raise_ldl(op, info):
    failure = _first_failure(info._data)
    if failure is not None:
        index, j = failure
        raise LinAlgError(f"{op}: {_batch_prefix(info._data, index)}The factorization could "
                          f"be completed, but D[{j},{j}] is exactly zero, so D is singular "
                          "and the factors cannot be used to solve a system")


@register_op(namespace="linalg", differentiable=False, samples=_ldl_samples)
def ldl_factor(A, *, hermitian=False):
    """(LD, pivots): ``linalg.ldl_factor_ex`` that raises ember.linalg.LinAlgError when D is
    singular.

    >>> ember.linalg.ldl_factor(ember.tensor([[0.0, 1.0], [1.0, 0.0]])).pivots
    tensor([-2, -2], dtype=ember.int32)
    """
    _ldl_operand("linalg.ldl_factor", A, hermitian)
    ld, pivots, info = LdlFactor.apply(A)
    _raise_ldl("linalg.ldl_factor", info)
    return LDLFactorResult(ld, pivots)


def _ldl_solve_one(xp, ld, pivots, b):
    """LAPACK's sytrs (lower): X with A X = B from sytf2's factors; b (n, k) is overwritten."""
    n = ld.shape[-1]
    k = 0
    while k < n:  # L D Y = B
        if pivots[k] > 0:
            _swap(b, k, int(pivots[k]) - 1, 0)
            b[k + 1:] -= xp.outer(ld[k + 1:, k], b[k])
            b[k] /= ld[k, k]
            k += 1
        else:
            _swap(b, k + 1, -int(pivots[k]) - 1, 0)
            b[k + 2:] -= xp.outer(ld[k + 2:, k], b[k]) + xp.outer(ld[k + 2:, k + 1], b[k + 1])
            d = ld[k:k + 2, k:k + 2]
            d = xp.stack([xp.stack([d[0, 0], d[1, 0]]), xp.stack([d[1, 0], d[1, 1]])])
            b[k:k + 2] = xp.linalg.solve(d, b[k:k + 2])
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y
        if pivots[k] > 0:
            b[k] -= xp.matmul(ld[k + 1:, k], b[k + 1:])
            _swap(b, k, int(pivots[k]) - 1, 0)
            k -= 1
        else:
            b[k] -= xp.matmul(ld[k + 1:, k], b[k + 1:])
            b[k - 1] -= xp.matmul(ld[k + 1:, k - 1], b[k + 1:])
            _swap(b, k, -int(pivots[k]) - 1, 0)
            k -= 2
    return b


class LdlSolve(Function):
    differentiable = False

    @staticmethod
    def forward(ctx, ld, pivots, b):
        xp = ctx.xp
        batch = np.broadcast_shapes(ld.shape[:-2], pivots.shape[:-1], b.shape[:-2])
        n = ld.shape[-1]
        ld = xp.broadcast_to(ld, batch + (n, n))
        host_pivots = backend.move(pivots, backend.device_of_array(pivots), _CPU)
        host_pivots = np.broadcast_to(host_pivots, batch + (n,))
        out = xp.array(xp.broadcast_to(b, batch + b.shape[-2:]), copy=True)
        for index in np.ndindex(*batch):
            _ldl_solve_one(xp, ld[index], host_pivots[index], out[index])
        return out


def _ldl_solve_samples(make):
    import ember

    out = []
    for s in _ldl_samples(make):
        ld, pivots = ember.linalg.ldl_factor(s.args[0].detach())
        shape = tuple(ld.shape[:-1]) + (2,)
        out.append(Sample((ld, pivots, make(shape, requires_grad=False)), name=s.name))
    return out


@register_op(namespace="linalg", differentiable=False, samples=_ldl_solve_samples)
def ldl_solve(LD, pivots, B, *, hermitian=False):
    """X with A X = B from A's LDL^T factorization (``linalg.ldl_factor``): B is (*, n, k);
    batches broadcast. Not differentiable (as in PyTorch).

    >>> LD, pivots = ember.linalg.ldl_factor(ember.tensor([[4.0, 2.0], [2.0, 3.0]]))
    >>> ember.linalg.ldl_solve(LD, pivots, ember.tensor([[6.0], [5.0]]))
    tensor([[1.],
            [1.]])
    """
    _ldl_operand("linalg.ldl_solve", LD, hermitian)
    ensure_tensor(pivots, "linalg.ldl_solve", "pivots")
    ensure_tensor(B, "linalg.ldl_solve", "B")
    if pivots._data.dtype != np.int32:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected pivots to be integers. Got "
                           f"{pivots.dtype.name}; use the int32 pivots of linalg.ldl_factor")
    if B._data.ndim < 2:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected B to have at least 2 dimensions, "
                           f"but it has shape {list(B.shape)}")
    _same_dtype("linalg.ldl_solve", LD=LD, B=B)
    n = LD._data.shape[-1]
    if tuple(pivots.shape[-1:]) != (n,) or B._data.shape[-2] != n:
        raise RuntimeError(f"torch.linalg.ldl_solve: Incompatible shapes: LD {list(LD.shape)}, "
                           f"pivots {list(pivots.shape)}, B {list(B.shape)}")
    return LdlSolve.apply(LD, pivots, B)
