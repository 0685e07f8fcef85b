"""``ember.linalg`` decompositions and solvers: inv, det, slogdet, logdet, solve,
solve_triangular, cholesky, cholesky_solve, qr, svd, svdvals, eigh, eigvalsh,
matrix_power, matrix_rank, pinv (and inverse, pinverse), and ``ember.linalg.LinAlgError``.

Every decomposition's backward is written once against ``ctx.math`` with the
decompositions themselves as its steps (``_run``: the op on Tensors, so gradients of
gradients work, or its forward on arrays). Decompositions run on ``xp.linalg`` (LAPACK through
NumPy on
the CPU, cuSOLVER through CuPy on the GPU); a singular or non-positive-definite input raises
``ember.linalg.LinAlgError`` (a RuntimeError, as PyTorch's).

Sign convention: singular vectors (svd) and eigenvectors (eigh) are unique only up to sign;
ember fixes the sign so that the entry of largest magnitude of each vector (each column of
U or of the eigenvector matrix) is positive. The results then agree across devices and
LAPACK builds; PyTorch leaves the signs to the library, so they may differ from PyTorch's
by a sign flip of whole vectors (both are valid decompositions).
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..return_types import result_type
from ..tensor import Tensor
from ._util import ensure_tensor
from .products import _constant, _shape_text, matmul
from .registry import NAMESPACES, Sample, register_op


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input: a singular matrix for inv/solve, a
    matrix that is not positive-definite for cholesky, no convergence for svd/eigh. A
    subclass of RuntimeError, as ``torch.linalg.LinAlgError``."""


LinAlgError.__module__ = "ember.linalg"
NAMESPACES["linalg"]["LinAlgError"] = LinAlgError


SlogdetResult = result_type("linalg_slogdet", ["sign", "logabsdet"])
QRResult = result_type("linalg_qr", ["Q", "R"])
SVDResult = result_type("linalg_svd", ["U", "S", "Vh"])
EighResult = result_type("linalg_eigh", ["eigenvalues", "eigenvectors"])


# ============================================================================ helpers
def _check_float(A: Tensor, op: str, arg: str = "A") -> None:
    kind = A._data.dtype.kind
    if kind not in "fV":
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


_WARNED: set = set()


def _warn_deprecated(name: str, message: str) -> None:
    """PyTorch's once-per-process UserWarning for its older linear-algebra spellings."""
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(f"ember.{name} is deprecated {message}", UserWarning, stacklevel=3)


def _run(m, op, *args):
    """A decomposition as a step of a backward formula: the op itself on Tensors (recorded
    under create_graph), its forward on arrays, which raises the same LinAlgError."""
    if m.arrays:
        ctx = object.__new__(op)
        ctx.xp = m.xp
        return op.forward(ctx, *args)
    return op.apply(*args)


def _vector_signs(xp, vectors):
    """+1/-1 per column of ``vectors`` (*, m, k) making each column's entry of largest
    magnitude positive: the sign convention of svd and eigh."""
    index = xp.argmax(xp.abs(vectors), axis=-2)[..., None, :]
    signs = xp.sign(xp.take_along_axis(vectors, index, axis=-2))
    return xp.where(signs == 0, 1, signs).astype(vectors.dtype)


# ============================================================================ inv, det, solve
def _well_conditioned(make, n, batch=()):
    """A random matrix plus n * I: comfortably invertible."""
    values = make.numpy(batch + (n, n), -1.0, 1.0) + n * np.eye(n)
    return _from_numpy(make, values)


def _from_numpy(make, values):
    import ember

    return ember.tensor(values, dtype=make.dtype, device=make.device).requires_grad_(True)


class Inv(Function):
    array_backward = True
    node_name = "LinalgInvExBackward0"

    @staticmethod
    def forward(ctx, a):
        out = _lapack("linalg.inv", "The input matrix is singular, so it cannot be inverted",
                      ctx.xp.linalg.inv, a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        m = ctx.math
        (inverse,) = ctx.saved_tensors
        inverse_t = m.mT(inverse)
        return -m.matmul(m.matmul(inverse_t, grad), inverse_t)


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
    array_backward = True
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
        m = ctx.math
        a, d = ctx.saved_tensors
        if bool(m.all(d != 0)):
            try:
                return _matrix_scale(m, grad * d) * m.mT(_run(m, Inv, a))
            except LinAlgError:
                pass
        return _matrix_scale(m, grad) * _cofactors(m, a)


def _matrix_scale(m, values):
    """Per-matrix scalars (*) as (*, 1, 1), to scale a batch of matrices."""
    return m.unsqueeze(m.unsqueeze(values, -1), -1)


def _cofactors(m, a):
    """The cofactor matrix det(A) A^-T, defined for singular A too, through the SVD."""
    u, s, vh = _run(m, Svd, a, False)
    eye = m.eye(s.shape[-1], s)
    others = m.prod(m.unsqueeze(s, -2) * (1 - eye) + eye, -1)
    # det(U) det(V) is +-1: a constant, not a path for gradients
    sign = _run(m, Det, m.detach(u)) * _run(m, Det, m.detach(vh))
    return m.matmul(u * m.unsqueeze(others * m.unsqueeze(sign, -1), -2), vh)


def _inv_t(m, a, op: str):
    """A^-T for a backward; a singular A has no finite gradient here."""
    try:
        return m.mT(_run(m, Inv, a))
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
    array_backward = True
    node_name = "LinalgSlogdetBackward0"

    @staticmethod
    def forward(ctx, a):
        sign, logabsdet = ctx.xp.linalg.slogdet(a)
        sign, logabsdet = ctx.xp.asarray(sign), ctx.xp.asarray(logabsdet)
        ctx.set_materialize_grads(False)  # the sign's gradient is never used
        ctx.save_for_backward(a)
        return sign, logabsdet

    @staticmethod
    def backward(ctx, grad_sign, grad_logabsdet):
        m = ctx.math
        if grad_logabsdet is None:
            return None
        (a,) = ctx.saved_tensors
        return _matrix_scale(m, grad_logabsdet) * _inv_t(m, a, "linalg.slogdet")


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
    array_backward = True
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
        m = ctx.math
        a, x = ctx.saved_tensors
        a_shape, b_shape = ctx.shapes
        grad_b = _run(m, Solve, m.mT(a), grad)
        grad_a = None
        if ctx.needs_input_grad[0]:
            grad_a = m.sum_to_shape(-m.matmul(grad_b, m.mT(x)), a_shape)
        return grad_a, m.sum_to_shape(grad_b, b_shape) if ctx.needs_input_grad[1] else None


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
    array_backward = True
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
        m = ctx.math
        (factor,) = ctx.saved_tensors
        low, g = (m.mT(factor), m.mT(grad)) if ctx.upper else (factor, grad)
        phi = m.tril(m.matmul(m.mT(low), g), 0) * (1 - 0.5 * m.eye(low.shape[-1], low))
        low_inv = _run(m, Inv, low)
        grad_a = m.matmul(m.matmul(m.mT(low_inv), phi), low_inv)
        return 0.5 * (grad_a + m.mT(grad_a)), None


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
    array_backward = True
    node_name = "LinalgQrBackward0"

    @staticmethod
    def forward(ctx, a, mode):
        xp = ctx.xp
        ctx.mode = mode
        ctx.shape = a.shape
        ctx.set_materialize_grads(False)  # backward fills in zeros itself
        if mode == "r":
            r = _lapack("linalg.qr", "The QR decomposition failed", xp.linalg.qr, a, mode="r")
            return xp.zeros((0,), a.dtype), r
        q, r = _lapack("linalg.qr", "The QR decomposition failed", xp.linalg.qr, a, mode=mode)
        ctx.save_for_backward(a, q, r)
        return q, r

    @staticmethod
    def backward(ctx, grad_q, grad_r):
        m = ctx.math
        rows, cols = ctx.shape[-2:]
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        if ctx.mode == "complete" and rows > cols:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        if grad_q is None and grad_r is None:
            return None, None
        a, q, r = ctx.saved_tensors
        grad_q = m.zeros_like(q) if grad_q is None else grad_q
        grad_r = m.zeros_like(r) if grad_r is None else grad_r
        if rows >= cols:
            return _qr_backward_tall(m, q, r, grad_q, grad_r), None
        # Wide A = [X | Y], R = [U | V]: X = Q U is square, Y = Q V.
        u = r[..., :, :rows]
        y = a[..., :, rows:]
        grad_v = grad_r[..., :, rows:]
        grad_y = m.matmul(q, grad_v)
        grad_x = _qr_backward_tall(m, q, u, grad_q + m.matmul(y, m.mT(grad_v)),
                                   grad_r[..., :, :rows])
        return m.cat([grad_x, grad_y], -1), None


def _copyltu(m, x):
    """The symmetric matrix whose lower triangle (with the diagonal) is x's."""
    return m.tril(x, 0) + m.mT(m.tril(x, -1))


def _qr_backward_tall(m, q, r, grad_q, grad_r):
    # rows >= cols (Liao et al. 2019): G_A = [G_Q + Q copyltu(M)] R^-T,
    # M = R G_R^T - G_Q^T Q.
    inner = m.matmul(r, m.mT(grad_r)) - m.matmul(m.mT(grad_q), q)
    b = grad_q + m.matmul(q, _copyltu(m, inner))
    return m.mT(_run(m, Solve, r, m.mT(b)))


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
    array_backward = True
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
        m = ctx.math
        u, s, vh = ctx.saved_tensors
        if ctx.full_matrices:
            # Columns of U (rows of Vh) past k span an arbitrary basis: their gradients are
            # ignored, as in PyTorch.
            k = s.shape[-1]
            u, vh = u[..., :, :k], vh[..., :k, :]
            grad_u = grad_u[..., :, :k] if grad_u is not None else None
            grad_vh = grad_vh[..., :k, :] if grad_vh is not None else None
        return _svd_backward(m, u, s, vh, grad_u, grad_s, grad_vh), None


def _svd_backward(m, u, s, vh, grad_u, grad_s, grad_vh):
    """Townsend (2016), for A = U S V^T with distinct non-zero singular values:
    G_A = U [F o (U^T G_U - G_U^T U) S + diag(G_S) + S F o (V^T G_V - G_V^T V)] V^T
          + (I - U U^T) G_U S^-1 V^T + U S^-1 G_V^T (I - V V^T),  F_ij = 1 / (s_j^2 - s_i^2)."""
    rows, cols, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    if grad_u is None and grad_vh is None:
        if grad_s is None:
            return None
        return m.matmul(u * m.unsqueeze(grad_s, -2), vh)
    eye = m.eye(k, s)
    s_row, s_col = m.unsqueeze(s, -2), m.unsqueeze(s, -1)
    gap = s_row * s_row - s_col * s_col + eye  # s_j^2 - s_i^2, 1 on the diagonal
    inner = m.unsqueeze(grad_s, -1) * eye if grad_s is not None else 0  # diag(G_S)
    v = m.mT(vh)
    if grad_u is not None:
        ut_gu = m.matmul(m.mT(u), grad_u)
        inner = inner + (ut_gu - m.mT(ut_gu)) / gap * s_row
    if grad_vh is not None:
        vt_gv = m.matmul(vh, m.mT(grad_vh))
        inner = inner + s_col * ((vt_gv - m.mT(vt_gv)) / gap)
    result = m.matmul(m.matmul(u, inner), vh)
    if grad_u is not None and rows > k:
        projected = grad_u - m.matmul(u, m.matmul(m.mT(u), grad_u))
        result = result + m.matmul(projected / s_row, vh)
    if grad_vh is not None and cols > k:
        projected = grad_vh - m.matmul(m.matmul(grad_vh, v), vh)
        result = result + m.matmul(u, projected / s_col)
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
    array_backward = True
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
        m = ctx.math
        w, v = ctx.saved_tensors
        if grad_w is None and grad_v is None:
            return None, None
        eye = m.eye(w.shape[-1], w)
        inner = 0
        if grad_v is not None:
            vt_gv = m.matmul(m.mT(v), grad_v)
            gap = m.unsqueeze(w, -2) - m.unsqueeze(w, -1) + eye
            inner = 0.5 * (vt_gv - m.mT(vt_gv)) / gap
        if grad_w is not None:
            inner = inner + m.unsqueeze(grad_w, -1) * eye  # diag(G_w)
        return m.matmul(m.matmul(v, inner), m.mT(v)), None


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
    array_backward = True
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
        m = ctx.math
        a, p = ctx.saved_tensors
        pt = m.mT(p)
        grad_t = m.mT(grad)
        first = -m.matmul(m.matmul(pt, grad), pt)
        second = m.matmul(grad_t - m.matmul(a, m.matmul(p, grad_t)), m.matmul(p, pt))
        third = m.matmul(m.matmul(pt, p), grad_t - m.matmul(m.matmul(grad_t, p), a))
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


# ============================================================================ more solvers
class SolveTriangular(Function):
    array_backward = True
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
        m = ctx.math
        upper, unitriangular, a_shape, b_shape = ctx.args
        a, x = ctx.saved_tensors
        grad_b = _run(m, SolveTriangular, m.mT(a), grad, not upper, unitriangular)
        grad_a = None
        if ctx.needs_input_grad[0]:
            full = -m.matmul(grad_b, m.mT(x))
            offset = 1 if unitriangular else 0
            grad_a = m.sum_to_shape(m.triu(full, offset) if upper else m.tril(full, -offset),
                                    a_shape)
        grad_b = m.sum_to_shape(grad_b, b_shape) if ctx.needs_input_grad[1] else None
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
