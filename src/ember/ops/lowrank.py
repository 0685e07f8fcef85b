"""Randomized and iterative eigen/singular solvers: ``svd_lowrank`` and ``pca_lowrank``
(Halko, Martinsson and Tropp's randomized range finder) and ``lobpcg`` (Knyazev's locally
optimal block preconditioned conjugate gradient method). They are built from ember's own
differentiable ops (matmul, qr, svd), so gradients flow through svd_lowrank and
pca_lowrank; lobpcg's eigenvalues carry the gradient of their Rayleigh quotients."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .. import backend
from ._util import ensure_tensor
from .decompositions import LinAlgError, _check_matrices, qr, svd
from .products import _constant, matmul
from .registry import NAMESPACES


def _random_like(A, shape):
    import ember

    return ember.randn(tuple(shape), dtype=A.dtype, device=A.device)


def _approximate_basis(A, q, niter, M=None):
    """An orthonormal Q (*, m, q) whose span approximates A's range: Q = qr(A R) for a
    Gaussian R (n, q), refined by ``niter`` power iterations (A - M stands for A)."""
    r = _random_like(A, (A.shape[-1], q))
    x = matmul(A, r) if M is None else matmul(A, r) - matmul(M, r)
    basis = qr(x).Q
    for _ in range(niter):
        x = matmul(A.mT, basis) if M is None else matmul(A.mT, basis) - matmul(M.mT, basis)
        basis = qr(x).Q
        x = matmul(A, basis) if M is None else matmul(A, basis) - matmul(M, basis)
        basis = qr(x).Q
    return basis


def _check_lowrank(op, A, q, niter):
    ensure_tensor(A, op, "A")
    _check_matrices(A, op, square=False)
    for name, value in (("q", q), ("niter", niter)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{name}(={value}) must be non-negative integer")


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V): an approximate rank-q SVD A ~ U diag(S) V^T of A (*, m, n) (of A - M when
    M is given), by a randomized range finder with ``niter`` power iterations: U (*, m, q),
    S (*, q), V (*, n, q). Exact when rank(A) <= q; random draws come from ember's global
    generator (seed with ``ember.manual_seed``). Differentiable (through qr and svd).

    >>> _ = ember.manual_seed(0)
    >>> A = ember.randn(20, 2) @ ember.randn(2, 10)
    >>> U, S, V = ember.svd_lowrank(A, q=4)
    >>> bool(ember.allclose(U @ ember.diag(S) @ V.mT, A, atol=1e-4))
    True
    """
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    _check_lowrank("svd_lowrank", A, q, niter)
    m, n = A.shape[-2:]
    if M is not None:
        ensure_tensor(M, "svd_lowrank", "M")
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:  # work on A^T so that the random sketch is the small side
        A = A.mT
        M = M.mT if M is not None else None
    basis = _approximate_basis(A, q, niter, M)
    b = matmul(basis.mT, A) if M is None else matmul(basis.mT, A) - matmul(basis.mT, M)
    u, s, vh = svd(b, full_matrices=False)
    u, v = matmul(basis, u), vh.mT
    return (v, s, u) if wide else (u, s, v)


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V): principal component analysis of the rows of A (*, m, n) by
    ``svd_lowrank`` of A with its column means removed (center=True): the principal
    directions are V's columns, and S ** 2 / (m - 1) the variances they explain.
    q defaults to min(6, m, n).

    >>> _ = ember.manual_seed(0)
    >>> U, S, V = ember.pca_lowrank(ember.randn(50, 3), q=3)
    >>> V.shape
    ember.Size([3, 3])
    """
    ensure_tensor(A, "pca_lowrank", "A")
    _check_matrices(A, "pca_lowrank", square=False)
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (isinstance(q, (int, np.integer)) and 0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not (isinstance(niter, (int, np.integer)) and niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    return svd_lowrank(A - A.mean(dim=-2, keepdim=True), q, niter=niter)


# ============================================================================ lobpcg
def _orthonormal_basis(xp, s, b, drop):
    """A B-orthonormal basis of span(S): S V D^-1/2 from the Gram matrix S^T B S = V D V^T,
    leaving out directions with D below ``drop`` times its largest value."""
    bs = s if b is None else xp.matmul(b, s)
    gram = xp.matmul(s.T, bs)
    gram = (gram + gram.T) / 2
    values, vectors = xp.linalg.eigh(gram)
    keep = values > drop * max(float(values[-1]), 0.0)
    if not bool(keep.any()):
        raise LinAlgError("lobpcg: the search space collapsed (all directions are linearly "
                          "dependent)")
    vectors = vectors[:, keep] / xp.sqrt(values[keep])
    return xp.matmul(s, vectors)


def _rayleigh_ritz(xp, a, b, s, count, largest, method, drop):
    """The ``count`` extreme Ritz pairs of (A, B) on span(S)."""
    if method == "ortho":
        basis = _orthonormal_basis(xp, s, b, drop)
        small = xp.matmul(basis.T, xp.matmul(a, basis))
        values, vectors = xp.linalg.eigh((small + small.T) / 2)
    else:  # basic: the generalized Gram problem through a Cholesky factor (may fail)
        bs = s if b is None else xp.matmul(b, s)
        gram = xp.matmul(s.T, bs)
        with backend.linalg_errors(a):
            try:
                low = xp.linalg.cholesky((gram + gram.T) / 2)
            except np.linalg.LinAlgError:
                raise LinAlgError("lobpcg: the Gram matrix of the search space is not "
                                  "positive-definite; method='ortho' is more robust") from None
        inv_low = xp.linalg.inv(low)
        small = xp.matmul(inv_low, xp.matmul(xp.matmul(s.T, xp.matmul(a, s)), inv_low.T))
        values, vectors = xp.linalg.eigh((small + small.T) / 2)
        basis = xp.matmul(s, inv_low.T)
    order = xp.arange(values.shape[0])[::-1] if largest else xp.arange(values.shape[0])
    order = order[:count]
    return values[order], xp.matmul(basis, vectors[:, order])


def _lobpcg_single(xp, a, b, x, k, precondition, niter, tol, largest, method, drop, tracker,
                   state):
    n = x.shape[-1]
    x = _orthonormal_basis(xp, x, b, drop)[:, :n]
    if x.shape[-1] < n:
        raise LinAlgError("lobpcg: the initial X has linearly dependent columns")
    theta, x = _rayleigh_ritz(xp, a, b, x, n, largest, "ortho", drop)
    a_norm = float(xp.linalg.norm(a))
    b_norm = 1.0 if b is None else float(xp.linalg.norm(b))
    p = None
    step = 0
    while niter < 0 or step < niter:
        bx = x if b is None else xp.matmul(b, x)
        residual = xp.matmul(a, x) - bx * theta
        rerr = xp.linalg.norm(residual, axis=0) / (
            xp.linalg.norm(x, axis=0) * (a_norm + xp.abs(theta) * b_norm))
        converged = int((rerr[:k] < tol).sum())
        state.ivars.update(istep=step, converged_count=converged)
        state.E, state.X, state.R, state.tvars["rerr"] = theta, x, residual, rerr
        if tracker is not None:
            tracker(state)
        if converged >= k or state.bvars.get("force_stop"):
            break
        w = residual if precondition is None else xp.matmul(precondition, residual)
        parts = [x, w] if p is None else [x, w, p]
        new_theta, new_x = _rayleigh_ritz(xp, a, b, xp.concatenate(parts, -1), n, largest,
                                          method, drop)
        # the conjugate direction: the new iterate's part B-orthogonal to the old one
        overlap = xp.matmul(x.T, new_x if b is None else xp.matmul(b, new_x))
        p = new_x - xp.matmul(x, overlap)
        theta, x = new_theta, new_x
        step += 1
    return theta[:k], x[:, :k]


def _square_operand(name, value, m, like):
    ensure_tensor(value, "lobpcg", name)
    if tuple(value.shape[-2:]) != (m, m):
        raise ValueError(f"lobpcg: {name} must have the shape of A's matrices ({m}, {m}), but "
                         f"got {list(value.shape)}")
    if value.dtype is not like.dtype:
        raise ValueError(f"lobpcg: {name} must have A's dtype {like.dtype.name}, not "
                         f"{value.dtype.name}")


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """(E, X): the k largest (largest=True, the default) or smallest eigenvalues E (*, k)
    and B-orthonormal eigenvectors X (*, m, k) of the symmetric generalized problem
    A x = lambda B x (B symmetric positive-definite, the identity when None), by LOBPCG:
    Rayleigh-Ritz on span[X, R, P] each step (R the preconditioned residuals, iK the
    preconditioner, P the previous update). X gives the starting block (*, m, n) (random
    from ember's generator otherwise, n defaults to k); niter caps the steps (-1: until
    converged; default 1000); tol is the relative residual tolerance (default eps ** 0.5).
    method 'ortho' (default) orthonormalizes the search space, dropping dependent
    directions (tolerance ``ortho_fparams['ortho_tol']``, default 1e-12 for float64);
    'basic' uses a Cholesky factor of its Gram matrix. ``tracker(state)`` is called each
    step with ``state.ivars['istep']``, ``state.ivars['converged_count']``, ``state.E``,
    ``state.X``, ``state.R`` and ``state.tvars['rerr']``; setting
    ``state.bvars['force_stop'] = True`` stops. Requires m >= 3 n. E's gradient (in A and
    B) is that of the Rayleigh quotients x^T A x / x^T B x; X is not differentiable.

    >>> A = ember.diag(ember.arange(1.0, 11.0, dtype=ember.float64))
    >>> E, X = ember.lobpcg(A, k=2, X=ember.ones(10, 2, dtype=ember.float64) +
    ...                     ember.eye(10, 2, dtype=ember.float64))
    >>> [round(float(e), 6) for e in E]
    [10.0, 9.0]
    """
    _check_matrices(A, "lobpcg")
    m = A.shape[-1]
    batch = tuple(A.shape[:-2])
    if B is not None:
        _square_operand("B", B, m, A)
    if iK is not None:
        _square_operand("iK", iK, m, A)
    if X is not None:
        ensure_tensor(X, "lobpcg", "X")
        if X.ndim < 2 or X.shape[-2] != m:
            raise ValueError(f"lobpcg: X must have shape (*, {m}, n), but got {list(X.shape)}")
        n = X.shape[-1]
    k = (n if X is not None else 1) if k is None else k
    n = k if n is None else n
    if not (0 < k <= n):
        raise ValueError(f"lobpcg: k (={k}) must be positive and at most n (={n})")
    if m < 3 * n:
        raise ValueError(f"LPBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    if method not in ("ortho", "basic"):
        raise ValueError(f"lobpcg: method must be 'ortho' or 'basic', got {method!r}")
    for name, value in (("ortho_iparams", ortho_iparams), ("ortho_fparams", ortho_fparams),
                        ("ortho_bparams", ortho_bparams)):
        if value is not None and not isinstance(value, dict):
            raise TypeError(f"lobpcg: {name} must be a dict, not {type(value).__name__}")
    eps = float(np.finfo(A._data.dtype).eps)
    tol = eps ** 0.5 if tol is None else float(tol)
    niter = 1000 if niter is None else int(niter)
    largest = True if largest is None else bool(largest)
    drop = (ortho_fparams or {}).get("ortho_tol", eps * 1e4)
    xp = backend.xp_for_device(A._device)
    if X is None:
        X = _random_like(A, batch + (m, n))
    state = SimpleNamespace(iparams={"k": k, "n": n, "m": m, "niter": niter},
                            fparams={"tol": tol}, bparams={"largest": largest},
                            ivars={}, fvars={}, bvars={}, tvars={}, A=A, B=B, iK=iK)

    def host(t):
        return None if t is None else t._data

    a, b, x0, pre = host(A.detach()), host(B if B is None else B.detach()), host(X.detach()), \
        host(iK if iK is None else iK.detach())
    vectors = xp.empty(batch + (m, k), dtype=a.dtype)
    for index in np.ndindex(*batch):
        _, found = _lobpcg_single(
            xp, (a[index] + a[index].T) / 2, None if b is None else b[index], x0[index], k,
            None if pre is None else pre[index], niter, tol, largest, method, drop, tracker,
            state)
        vectors[index] = found
    vectors_t = _constant(vectors, A)
    # eigenvalues as Rayleigh quotients: exact values, and the first-order gradient
    sym = (A + A.mT) / 2
    numerator = (vectors_t * matmul(sym, vectors_t)).sum(-2)
    if B is None:
        return numerator, vectors_t
    denominator = (vectors_t * matmul(B, vectors_t)).sum(-2)
    return numerator / denominator, vectors_t


for _function in (svd_lowrank, pca_lowrank, lobpcg):
    NAMESPACES["ember"][_function.__name__] = _function
