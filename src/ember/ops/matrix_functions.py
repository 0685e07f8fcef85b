"""The matrix exponential, condition numbers, least squares, and PyTorch's older
torch-level spellings of the decompositions (``torch.svd`` returning V, ``torch.qr`` with
``some=``, ``torch.triangular_solve``, ``torch.cholesky``, ``torch.cholesky_inverse``)."""
from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..return_types import result_type
from ._util import ensure_tensor
from .decompositions import (
    _check_matrices,
    _run,
    _svd_output,
    _torch_svd,
    _warn_deprecated,
    _well_conditioned,
    cholesky,
    matrix_rank,
    pinv,
    qr,
    solve_triangular,
    svd,
    svdvals,
)
from .factorizations import inv_ex
from .norms import matrix_norm
from .products import _constant, matmul
from .registry import Sample, register_op

LstsqResult = result_type("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
SvdResult = result_type("svd", ["U", "S", "V"])
QrResult = result_type("qr", ["Q", "R"])
TriangularSolveResult = result_type("triangular_solve", ["solution", "cloned_coefficient"])


# ============================================================================ matrix_exp
# Higham (2005): the [13/13] Pade approximant after scaling the 1-norm below theta_13.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm_arrays(xp, a):
    n = a.shape[-1]
    if n == 0 or a.size == 0:
        return a.copy()
    norm = xp.abs(a).sum(axis=-2).max(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = xp.ceil(xp.log2(norm / _THETA13))
    steps = xp.where(xp.isfinite(steps) & (steps > 0), steps, 0).astype(np.int64)
    x = a * (0.5 ** steps).astype(a.dtype)[..., None, None]
    b = [a.dtype.type(c) for c in _PADE13]
    eye = xp.eye(n, dtype=a.dtype)
    x2 = xp.matmul(x, x)
    x4 = xp.matmul(x2, x2)
    x6 = xp.matmul(x4, x2)
    u = xp.matmul(x, xp.matmul(x6, b[13] * x6 + b[11] * x4 + b[9] * x2)
                  + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye)
    v = (xp.matmul(x6, b[12] * x6 + b[10] * x4 + b[8] * x2)
         + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye)
    with backend.linalg_errors(a):
        try:
            r = xp.linalg.solve(v - u, v + u)
        except np.linalg.LinAlgError:  # nan or inf in A: no finite exponential
            return xp.full(a.shape, np.nan, dtype=a.dtype)
    for i in range(int(steps.max())):
        r = xp.where((steps > i)[..., None, None], xp.matmul(r, r), r)
    return r.astype(a.dtype)


class MatrixExp(Function):
    array_backward = True
    node_name = "LinalgMatrixExpBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _expm_arrays(ctx.xp, a)

    @staticmethod
    def backward(ctx, grad):
        # The Frechet derivative in direction G^T is the upper-right block of
        # exp([[A^T, G], [0, A^T]]); the block matrix's exponential records its own graph.
        m = ctx.math
        (a,) = ctx.saved_tensors
        n = a.shape[-1]
        at = m.mT(a)
        grad = grad + m.zeros_like(at)  # broadcast-safe copy of the incoming gradient
        top = m.cat([at, grad], -1)
        bottom = m.cat([m.zeros_like(at), at], -1)
        block = _run(m, MatrixExp, m.cat([top, bottom], -2))
        return block[..., :n, n:]


@register_op(namespace="linalg", exported_in=("ember",), methods=("matrix_exp",),
             samples=lambda make: [
                 Sample((make((3, 3), -1, 1),), name="small"),
                 Sample((make((2, 2, 2), -4, 4),), name="batch, scaled"),
                 Sample((make((1, 1)),), name="1x1")])
def matrix_exp(A):
    """The matrix exponential e^A = sum_k A^k / k! of square matrices (*, n, n), by scaling
    and squaring with a [13/13] Pade approximant (Higham 2005). Gradient: the Frechet
    derivative, through the exponential of the block matrix [[A^T, G], [0, A^T]].

    >>> ember.linalg.matrix_exp(ember.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    _check_matrices(A, "linalg.matrix_exp")
    return MatrixExp.apply(A)


# ============================================================================ cond
_COND_NORMS = (None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf)


def _torch_cond(torch, A, p=None):
    # PyTorch's own cond cannot backward for these norms (it changes its inverse in place):
    # the reference is its definition; tests/ops/test_linalg_factorizations.py compares
    # the values with torch.linalg.cond itself.
    if p in (None, 2, -2):
        return torch.linalg.cond(A, p)
    return torch.linalg.matrix_norm(A, p) * torch.linalg.matrix_norm(torch.linalg.inv(A), p)


@register_op(namespace="linalg", torch=_torch_cond, samples=lambda make: [
    Sample((_well_conditioned(make, 3),), name="2-norm"),
    Sample((_well_conditioned(make, 3), "fro"), name="fro"),
    Sample((_well_conditioned(make, 2, (2,)), math.inf), name="inf batch"),
    Sample((_well_conditioned(make, 3), 1), name="1-norm"),
    Sample((make((3, 2)), -2), name="-2 tall")], atol=1e-6, rtol=1e-5)
def cond(A, p=None):
    """The condition number of A in the norm ``p``: s_max / s_min for p None or 2 (s_min /
    s_max for -2, any shape), else ||A||_p ||A^-1||_p for square A ('fro', 'nuc', 1, -1,
    inf, -inf), which is inf for a singular A.

    >>> ember.linalg.cond(ember.tensor([[1.0, 0.0], [0.0, 4.0]]))
    tensor(4.)
    """
    if p not in _COND_NORMS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    _check_matrices(A, "linalg.cond", square=False)
    if p in (None, 2, -2):
        s = svdvals(A)
        if s.shape[-1] == 0:
            return s.sum(-1)
        largest, smallest = s[..., 0], s[..., -1]
        return largest / smallest if p != -2 else smallest / largest
    if A._data.shape[-1] != A._data.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but "
                           f"they are {A.shape[-2]} by {A.shape[-1]} matrices")
    inverse, info = inv_ex(A)
    result = matrix_norm(A, p) * matrix_norm(inverse, p)
    return result.masked_fill(info > 0, math.inf)


# ============================================================================ lstsq
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_samples(make):
    samples = [Sample((make((4, 3)), make((4, 2))), name="tall default driver"),
               Sample((make((4, 2)), make((4, 2))), {"driver": "gelsd"}, name="tall gelsd"),
               Sample((make((2, 4, 3)), make((2, 4))), {"driver": "gels"},
                      name="batch vector gels"),
               Sample((make((2, 3)), make((2, 2))), {"driver": "gelss"}, name="wide gelss")]
    if str(make.device).startswith("cuda"):  # CUDA has only gels (and tall A), as PyTorch's
        samples = [Sample(s.args, {"driver": "gels"}, name=s.name) for s in samples[:3]] + [
            Sample((make((3, 3)), make((3, 2))), {"driver": "gels"}, name="square gels")]
    return samples


@register_op(namespace="linalg", samples=_lstsq_samples, atol=1e-6, rtol=1e-5,
             gradcheck_wrapper=lambda function, *args, **kwargs: tuple(
                 t for t in function(*args, **kwargs)[:2] if t.numel()))
def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values): X minimizing ||A X - B||_F for A
    (*, m, n) and B (*, m, k) (or (*, m)); batches broadcast. X = A^+ B with the singular
    values of A below rcond * s_max (default eps * max(m, n)) taken as zero, so a
    rank-deficient A gives the minimum-norm solution (the 'gels' driver assumes full rank).
    As PyTorch's drivers report them: ``residuals`` (the squared column norms of A X - B)
    only for m > n, full rank and a driver other than 'gelsy'; ``rank`` (int64) for all
    but 'gels'; ``singular_values`` for 'gelsd' and 'gelss'; the others are empty.
    Gradients flow through the pseudo-inverse (full-rank A). Default driver: 'gelsy' on the
    CPU, 'gels' (the only one) on CUDA.

    >>> A = ember.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> ember.linalg.lstsq(A, ember.tensor([[1.0], [2.0], [3.0]])).solution
    tensor([[1.],
            [2.]])
    """
    ensure_tensor(A, "linalg.lstsq", "A")
    ensure_tensor(B, "linalg.lstsq", "B")
    if A._data.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B._data.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {A.dtype.name} and other's dtype "
                           f"{B.dtype.name}")
    _check_matrices(A, "linalg.lstsq", square=False)
    if not (A._data.ndim >= B._data.ndim and A._data.ndim - B._data.ndim <= 1):
        raise RuntimeError(f"torch.linalg.lstsq: input.dim() must be greater or equal to "
                           f"other.dim() and (input.dim() - other.dim()) <= 1 (got "
                           f"{A._data.ndim} and {B._data.ndim})")
    vector = A._data.ndim == B._data.ndim + 1
    matrix_b = B.unsqueeze(-1) if vector else B
    m, n = A._data.shape[-2:]
    if matrix_b._data.shape[-2] != m or (vector and B._data.shape[:-1] != A._data.shape[:-2]):
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    on_cpu = A._device.type == "cpu"
    if driver is None:
        driver = "gelsy" if on_cpu else "gels"
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    if not on_cpu and driver != "gels":
        raise RuntimeError("torch.linalg.lstsq: `driver` other than `gels` is not supported "
                           "on CUDA")
    if not on_cpu and m < n:
        raise RuntimeError("torch.linalg.lstsq: only overdetermined systems (input.size(-2) >= "
                           "input.size(-1)) are allowed on CUDA")
    eps = float(np.finfo(A._data.dtype).eps)
    rtol = eps * max(m, n) if rcond is None or rcond < 0 else float(rcond)
    if driver == "gels":
        rtol = 0.0
    solution = matmul(pinv(A, rtol=rtol), matrix_b)
    xp = backend.xp_for_device(A._device)
    empty = _constant(xp.zeros((0,), dtype=A._data.dtype), A)
    rank = _constant(xp.zeros((0,), dtype=np.int64), A)
    if driver != "gels":
        rank = matrix_rank(A, rtol=rtol)
    residuals = solution.reshape(-1)[:0]  # empty, but an output of the graph as in PyTorch
    if driver != "gelsy" and m > n and (driver == "gels" or bool((rank == n).all())):
        residuals = ((matmul(A, solution) - matrix_b) ** 2).sum(-2)
    singular = svdvals(A.detach()) if driver in ("gelsd", "gelss") else empty
    return LstsqResult(solution.squeeze(-1) if vector else solution, residuals, rank,
                       singular)


# ============================================================================ older forms
@register_op("cholesky", methods=("cholesky",), samples=lambda make: [
    Sample((make.positive_definite(3),)),
    Sample((make.positive_definite(2, (2,)), True), name="batch upper")],
    gradcheck_wrapper=lambda function, A, *args: function(A + A.mT, *args))
def cholesky_deprecated(input, upper=False):
    """The older spelling of ``linalg.cholesky(input, upper=upper)``."""
    _warn_deprecated("cholesky", "in favor of ember.linalg.cholesky: L = ember.cholesky(A) "
                     "should be replaced with L = ember.linalg.cholesky(A), and U = "
                     "ember.cholesky(A, upper=True) with U = ember.linalg.cholesky(A).mH")
    return cholesky(input, upper=bool(upper))


def _torch_old_svd(torch, a, some=True, compute_uv=True):
    if not compute_uv:
        return torch.svd(a, some=some, compute_uv=False)
    u, s, vh = _torch_svd(torch, a, full_matrices=not some)
    return u, s, vh.mT


def _old_svd_output(result):
    u, s, v = result
    if not u.numel() or not u.abs().sum():  # compute_uv=False: zero-filled U and V
        return (s,)
    u, s, vh = _svd_output((u, s, v.mT))
    return u, s, vh


@register_op("svd", methods=("svd",), torch=_torch_old_svd, output_process=_old_svd_output,
             gradcheck_wrapper=lambda function, *args, **kwargs: _old_svd_output(
                 function(*args, **kwargs)),
             samples=lambda make: [Sample((make((4, 3)),), name="some"),
                                   Sample((make((2, 3)),), {"some": False}, name="full"),
                                   Sample((make((2, 3, 3)),), {"compute_uv": False},
                                          name="values only")], atol=1e-6, rtol=1e-5)
def svd_deprecated(input, some=True, compute_uv=True):
    """The older spelling of the SVD: (U, S, V) with A = U diag(S) V^T (V, not Vh).
    some=True gives the reduced factors; compute_uv=False returns zero-filled U (*, m, m)
    and V (*, n, n) beside the singular values."""
    _check_matrices(input, "svd", "input", square=False)
    if not compute_uv:
        xp = backend.xp_for_device(input._device)
        batch, (m, n) = tuple(input._data.shape[:-2]), input._data.shape[-2:]
        zeros = [_constant(xp.zeros(batch + (k, k), dtype=input._data.dtype), input)
                 for k in (m, n)]
        return SvdResult(zeros[0], svdvals(input), zeros[1])
    u, s, vh = svd(input, full_matrices=not some)
    return SvdResult(u, s, vh.mT)


@register_op("qr", methods=("qr",), torch=lambda torch, a, some=True: torch.qr(a, some),
             samples=lambda make: [Sample((make((4, 3)),), name="some"),
                                   Sample((make((2, 3, 3)), False), name="complete batch")])
def qr_deprecated(input, some=True):
    """The older spelling of ``linalg.qr(input, 'reduced' if some else 'complete')``."""
    _warn_deprecated("qr", "in favor of ember.linalg.qr: Q, R = ember.qr(A, some) should be "
                     "replaced with Q, R = ember.linalg.qr(A, 'reduced' if some else "
                     "'complete')")
    result = qr(input, "reduced" if some else "complete")
    return QrResult(result.Q, result.R)


def _triangular_solve_samples(make):
    from .decompositions import _triangular

    return [Sample((make((3, 2)), _triangular(make, 3, True)), name="upper"),
            Sample((make((2, 3, 1)), _triangular(make, 3, False)),
                   {"upper": False, "transpose": True}, name="lower transpose batch"),
            Sample((make((3, 2)), _triangular(make, 3, True)), {"unitriangular": True},
                   name="unit")]


@register_op(methods=("triangular_solve",), samples=_triangular_solve_samples)
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """The older triangular solver: (solution, cloned_coefficient) with X solving A X = b
    (A^T X = b when transpose=True) for triangular A (*, n, n), reading only its upper (or
    lower) triangle; b is (*, n, k) and batches broadcast. ``cloned_coefficient`` is a copy
    of A (broadcast to the batch)."""
    _warn_deprecated("triangular_solve", "in favor of ember.linalg.solve_triangular, which "
                     "has its arguments reversed and does not return a copy of A: X = "
                     "ember.triangular_solve(B, A).solution should be replaced with X = "
                     "ember.linalg.solve_triangular(A, B)")
    _check_matrices(A, "triangular_solve", "A")
    ensure_tensor(b, "triangular_solve", "b")
    if b._data.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: The input tensor b must have at least 2 "
                           f"dimensions, but got shape {list(b.shape)}")
    coefficient = A.mT if transpose else A
    solution = solve_triangular(coefficient, b, upper=bool(upper) != bool(transpose),
                                unitriangular=bool(unitriangular))
    batch = tuple(solution.shape[:-2])
    cloned = A.expand(*batch, *A.shape[-2:]).clone() if batch != tuple(A.shape[:-2]) else \
        A.clone()
    return TriangularSolveResult(solution, cloned)


class CholeskyInverse(Function):
    array_backward = True
    node_name = "CholeskyInverseBackward0"

    @staticmethod
    def forward(ctx, factor, upper):
        xp = ctx.xp
        n = factor.shape[-1]
        triangle = xp.triu(factor) if upper else xp.tril(factor)
        eye = xp.broadcast_to(xp.eye(n, dtype=factor.dtype), factor.shape)
        with backend.linalg_errors(factor):
            try:
                x = xp.linalg.solve(triangle, eye)  # U^-1 or L^-1
            except np.linalg.LinAlgError:
                from .decompositions import LinAlgError

                raise LinAlgError(f"cholesky_inverse: the factor (shape {list(factor.shape)}) "
                                  "has a zero on its diagonal") from None
        out = xp.matmul(x, xp.swapaxes(x, -1, -2)) if upper else \
            xp.matmul(xp.swapaxes(x, -1, -2), x)
        ctx.upper = upper
        ctx.save_for_backward(factor, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        # out = (L L^T)^-1 (or (U^T U)^-1) as a function of the whole factor, as PyTorch
        # differentiates it: G_L = -(G + G^T) out-sandwiched times L.
        m = ctx.math
        factor, out = ctx.saved_tensors
        common = m.matmul(out, m.matmul(grad + m.mT(grad), out))
        if ctx.upper:
            return -m.matmul(factor, common), None
        return -m.matmul(common, factor), None


def _factor_sample(make, n, batch=(), upper=False):
    from .decompositions import _from_numpy

    a = make.rng.standard_normal(batch + (n, n))
    low = np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + n * np.eye(n))
    return _from_numpy(make, np.swapaxes(low, -1, -2) if upper else low)


def _triangle_only(function, L, upper=False):
    """gradcheck sees the triangle the op reads, as PyTorch checks it."""
    return function(L.triu() if upper else L.tril(), upper)


@register_op(methods=("cholesky_inverse",), gradcheck_wrapper=_triangle_only,
             samples=lambda make: [
                 Sample((_factor_sample(make, 3),), name="lower"),
                 Sample((_factor_sample(make, 3, (2,), upper=True), True), name="upper batch")])
def cholesky_inverse(L, upper=False):
    """A^-1 for A = L L^T (or U^T U when upper=True) given its Cholesky factor, reading only
    the factor's lower (upper) triangle.

    >>> ember.cholesky_inverse(ember.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor([[0.2500, 0.0000],
            [0.0000, 1.0000]])
    """
    _check_matrices(L, "cholesky_inverse", "L")
    return CholeskyInverse.apply(L, bool(upper))

