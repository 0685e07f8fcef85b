"""Edge cases of the factorizations the op table does not reach: LU pivots against
PyTorch's on many shapes, singular inputs and ``info``, check_errors and its messages, the
older torch-level forms' argument orders, lstsq's driver outputs, LDL's 2x2 pivots, and
the properties of the randomized solvers (svd_lowrank, pca_lowrank, lobpcg)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ..conftest import requires_torch

f64 = ember.float64


def t64(values, requires_grad=False, device="cpu"):
    return ember.tensor(np.asarray(values, dtype=np.float64), device=device,
                        requires_grad=requires_grad)


def host(t):
    return t.detach().cpu().numpy()


SINGULAR = [[1.0, 2.0], [2.0, 4.0]]


def torch_of(array):
    import torch

    return torch.tensor(np.asarray(array))


# ----------------------------------------------------------------------------- LU
@requires_torch
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 2, 5), (6, 3), (2, 2, 3, 7)])
def test_lu_factor_matches_torch_pivots_and_factors(shape):
    import torch

    a = np.random.default_rng(sum(shape)).standard_normal(shape)
    ours = ember.linalg.lu_factor_ex(t64(a))
    theirs = torch.linalg.lu_factor_ex(torch_of(a))
    np.testing.assert_allclose(host(ours.LU), theirs.LU.numpy(), atol=1e-12)
    assert ours.pivots.dtype is ember.int32
    np.testing.assert_array_equal(host(ours.pivots), theirs.pivots.numpy())
    assert tuple(ours.info.shape) == tuple(theirs.info.shape)
    P, L, U = ember.linalg.lu(t64(a))
    np.testing.assert_allclose(host(P @ L @ U), a, atol=1e-12)


def test_lu_of_a_singular_matrix_reports_info_and_lu_factor_raises(device):
    a = t64(SINGULAR, device=device)
    LU, pivots, info = ember.linalg.lu_factor_ex(a)
    assert int(info) == 2 and host(pivots).tolist() == [2, 2]
    np.testing.assert_allclose(host(LU), [[2.0, 4.0], [0.5, 0.0]])
    with pytest.raises(ember.linalg.LinAlgError, match=r"lu_factor: U\[2,2\] is zero"):
        ember.linalg.lu_factor(a)
    with pytest.raises(RuntimeError, match=r"lu_factor_ex: .*U\[2,2\] is zero"):
        ember.linalg.lu_factor_ex(a, check_errors=True)
    P, L, U = ember.linalg.lu(a)  # linalg.lu factors singular matrices without complaint
    np.testing.assert_allclose(host(P @ L @ U), SINGULAR)


def test_lu_batch_error_names_the_batch_element():
    batch = t64([np.eye(2), SINGULAR])
    with pytest.raises(ember.linalg.LinAlgError, match=r"\(Batch element 1\): U\[2,2\]"):
        ember.linalg.lu_factor(batch)
    assert host(ember.linalg.lu_factor_ex(batch).info).tolist() == [0, 2]


def test_lu_without_pivoting_keeps_the_rows():
    a = t64([[2.0, 1.0], [4.0, 3.0]])
    LU, pivots = ember.linalg.lu_factor(a, pivot=False)
    assert host(pivots).tolist() == [1, 2]
    np.testing.assert_allclose(host(LU), [[2.0, 1.0], [2.0, 1.0]])
    P, L, U = ember.linalg.lu(a, pivot=False)
    np.testing.assert_allclose(host(P), np.eye(2))


def test_older_lu_returns_infos_only_when_asked():
    a = t64(SINGULAR)
    LU, pivots, infos = ember.lu(a, get_infos=True)
    assert int(infos) == 2
    with pytest.raises(ember.linalg.LinAlgError):
        ember.lu(a)
    assert len(t64(np.eye(3)).lu()) == 2


def test_lu_unpack_flags_and_pivot_checks():
    LU, pivots = ember.linalg.lu_factor(t64([[1.0, 2.0], [3.0, 4.0]]))
    P, L, U = ember.lu_unpack(LU, pivots, unpack_data=False)
    assert L.numel() == 0 and U.numel() == 0 and tuple(P.shape) == (2, 2)
    P, L, U = ember.lu_unpack(LU, pivots, unpack_pivots=False)
    assert P.numel() == 0
    with pytest.raises(RuntimeError, match="LU_pivots is expected to be .*int32"):
        ember.lu_unpack(LU, pivots.long())
    with pytest.raises(RuntimeError, match="pivots must have shape"):
        ember.lu_unpack(LU, pivots[:1])


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 5)])
def test_lu_gradients_through_p_l_u(shape):
    a = t64(np.random.default_rng(3).standard_normal(shape), requires_grad=True)

    def factors(x):
        _, L, U = ember.linalg.lu(x)
        return L, U
    assert gradcheck(factors, (a,))
    assert gradgradcheck(factors, (a,))


def test_lu_solve_all_four_forms_solve_their_equations(device):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    LU, pivots = ember.linalg.lu_factor(t64(a, device=device))
    b = rng.standard_normal((3, 2))
    for left, adjoint, check in ((True, False, lambda x: a @ x),
                                 (True, True, lambda x: a.T @ x),
                                 (False, False, lambda x: x @ a),
                                 (False, True, lambda x: x @ a.T)):
        rhs = b if left else b.T
        x = host(ember.linalg.lu_solve(LU, pivots, t64(rhs, device=device), left=left,
                                       adjoint=adjoint))
        np.testing.assert_allclose(check(x), rhs, atol=1e-12)
    x = host(ember.lu_solve(t64(b, device=device), LU, pivots))
    np.testing.assert_allclose(a @ x, b, atol=1e-12)
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        ember.linalg.lu_solve(LU, pivots, t64(np.ones((2, 2)), device=device))


# ----------------------------------------------------------------------------- *_ex
def test_inv_ex_and_solve_ex_report_singular_matrices(device):
    a = t64(SINGULAR, device=device)
    inverse, info = ember.linalg.inv_ex(a)
    assert int(info) == 2 and info.dtype is ember.int32
    assert not np.isfinite(host(inverse)).all()
    result, info = ember.linalg.solve_ex(a, t64([[1.0], [1.0]], device=device))
    assert int(info) == 2
    with pytest.raises(ember.linalg.LinAlgError, match="linalg.inv_ex: The diagonal element 2 "
                                                       "is zero"):
        ember.linalg.inv_ex(a, check_errors=True)
    with pytest.raises(ember.linalg.LinAlgError, match="linalg.solve_ex"):
        ember.linalg.solve_ex(a, t64([1.0, 1.0], device=device), check_errors=True)
    good = t64([[2.0, 0.0], [0.0, 4.0]], device=device)
    inverse, info = ember.linalg.inv_ex(good, check_errors=True)
    assert int(info) == 0
    np.testing.assert_allclose(host(inverse), [[0.5, 0.0], [0.0, 0.25]])
    result, info = ember.linalg.solve_ex(good, t64(np.ones((2, 2, 1)), device=device))
    assert tuple(info.shape) == () and tuple(result.shape) == (2, 2, 1)


def test_cholesky_ex_stops_at_the_first_bad_minor_as_lapack():
    a = t64([[4.0, 2.0, 1.0], [2.0, -1.0, 0.0], [1.0, 0.0, 3.0]])
    L, info = ember.linalg.cholesky_ex(a)
    assert int(info) == 2
    np.testing.assert_allclose(host(L), [[2.0, 0.0, 0.0], [1.0, -2.0, 0.0], [0.5, 0.0, 3.0]])
    with pytest.raises(ember.linalg.LinAlgError, match="leading minor of order 2"):
        ember.linalg.cholesky_ex(a, check_errors=True)
    batch = ember.stack([t64(np.eye(3) * 4), a])
    L, info = ember.linalg.cholesky_ex(batch, upper=True)
    assert host(info).tolist() == [0, 2]
    np.testing.assert_allclose(host(L[0]), 2 * np.eye(3))


def test_ex_forms_keep_the_gradients_of_the_good_matrices_in_a_batch():
    good = np.array([[2.0, 1.0], [1.0, 3.0]])
    batch = t64([good, SINGULAR], requires_grad=True)
    inverse, info = ember.linalg.inv_ex(batch)
    assert host(info).tolist() == [0, 2]
    np.testing.assert_allclose(host(inverse[0]), np.linalg.inv(good))
    inverse[0].sum().backward()
    inv = np.linalg.inv(good)
    np.testing.assert_allclose(host(batch.grad[0]), -(inv.T @ np.ones((2, 2)) @ inv.T))
    assert not host(batch.grad[1]).any()
    result, info = ember.linalg.solve_ex(batch, t64([1.0, 1.0]))
    np.testing.assert_allclose(host(result[0]), np.linalg.solve(good, [1.0, 1.0]))
    assert result.requires_grad and not np.isfinite(host(result[1])).all()
    spd = t64([good, -np.eye(2)], requires_grad=True)
    L, info = ember.linalg.cholesky_ex(spd)
    assert host(info).tolist() == [0, 1] and L.requires_grad
    np.testing.assert_allclose(host(L[0]), np.linalg.cholesky(good))


# ----------------------------------------------------------------------------- Householder
@requires_torch
def test_geqrf_householder_product_and_ormqr_match_torch():
    import torch

    a = np.random.default_rng(5).standard_normal((5, 3))
    packed, tau = ember.geqrf(t64(a))
    t_packed, t_tau = torch.geqrf(torch_of(a))
    np.testing.assert_allclose(host(packed), t_packed.numpy(), atol=1e-12)
    np.testing.assert_allclose(host(tau), t_tau.numpy(), atol=1e-12)
    q = ember.linalg.householder_product(packed, tau)
    np.testing.assert_allclose(host(q @ packed[:3].triu()), a, atol=1e-12)
    c = np.random.default_rng(6).standard_normal((5, 2))
    for left, transpose in ((True, False), (True, True)):
        ours = ember.ormqr(packed, tau, t64(c), left, transpose)
        theirs = torch.ormqr(t_packed, t_tau, torch_of(c), left, transpose)
        np.testing.assert_allclose(host(ours), theirs.numpy(), atol=1e-12)


def test_householder_argument_errors():
    packed, tau = ember.geqrf(t64(np.ones((4, 3))))
    with pytest.raises(RuntimeError, match="greater than or equal to input.shape"):
        ember.linalg.householder_product(packed.mT, tau[:2])
    with pytest.raises(RuntimeError, match="tau.shape"):
        ember.linalg.householder_product(packed, ember.ones(4, dtype=f64))
    with pytest.raises(RuntimeError, match="batch dimensions of tau"):
        ember.linalg.householder_product(packed, ember.ones(2, 3, dtype=f64))
    with pytest.raises(RuntimeError, match="must be equal to other.shape"):
        ember.ormqr(packed, tau, ember.ones(3, 3, dtype=f64))


# ----------------------------------------------------------------------------- matrix_exp
@requires_torch
@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0])
def test_matrix_exp_matches_torch_across_norms(scale):
    import torch

    a = scale * np.random.default_rng(7).standard_normal((2, 4, 4))
    np.testing.assert_allclose(host(ember.matrix_exp(t64(a))),
                               torch.matrix_exp(torch_of(a)).numpy(), rtol=1e-9)


def test_matrix_exp_of_known_matrices():
    rotation = t64([[0.0, -math.pi / 2], [math.pi / 2, 0.0]])
    np.testing.assert_allclose(host(rotation.matrix_exp()), [[0.0, -1.0], [1.0, 0.0]],
                               atol=1e-14)
    nilpotent = t64([[0.0, 1.0], [0.0, 0.0]])
    np.testing.assert_allclose(host(ember.linalg.matrix_exp(nilpotent)), [[1.0, 1.0],
                                                                        [0.0, 1.0]])
    assert np.isnan(host(ember.matrix_exp(t64([[float("nan"), 0.0], [0.0, 1.0]])))).any()


# ----------------------------------------------------------------------------- cond, lstsq
@requires_torch
@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf])
def test_cond_matches_torch(p):
    import torch

    a = np.random.default_rng(8).standard_normal((2, 3, 3))
    np.testing.assert_allclose(host(ember.linalg.cond(t64(a), p)),
                               torch.linalg.cond(torch_of(a), p).numpy(), rtol=1e-10)


def test_cond_of_singular_and_bad_arguments():
    assert math.isinf(float(ember.linalg.cond(t64(SINGULAR), 1)))
    with pytest.raises(RuntimeError, match="invalid norm type"):
        ember.linalg.cond(t64(np.eye(2)), 3)
    with pytest.raises(RuntimeError, match=r"cond\(ord=1\): A must be batches of square"):
        ember.linalg.cond(t64(np.ones((2, 3))), 1)


@requires_torch
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_outputs_per_driver_match_torch(driver):
    import torch

    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    ours = ember.linalg.lstsq(t64(a), t64(b), driver=driver)
    theirs = torch.linalg.lstsq(torch_of(a), torch_of(b), driver=driver)
    for name in ("solution", "residuals", "rank", "singular_values"):
        mine, ref = getattr(ours, name), getattr(theirs, name)
        assert tuple(mine.shape) == tuple(ref.shape), name
        np.testing.assert_allclose(host(mine), ref.numpy(), atol=1e-10, err_msg=name)


@requires_torch
def test_lstsq_rank_deficient_gives_the_minimum_norm_solution():
    import torch

    a = np.outer([1.0, 2.0, 3.0, 4.0], [1.0, -1.0, 2.0])
    b = np.arange(8.0).reshape(4, 2)
    ours = ember.linalg.lstsq(t64(a), t64(b), driver="gelsd")
    theirs = torch.linalg.lstsq(torch_of(a), torch_of(b), driver="gelsd")
    assert int(ours.rank) == 1 == int(theirs.rank)
    np.testing.assert_allclose(host(ours.solution), theirs.solution.numpy(), atol=1e-10)
    assert ours.residuals.numel() == 0  # not full rank: no residuals


def test_lstsq_argument_errors():
    a = t64(np.ones((4, 2)))
    with pytest.raises(RuntimeError, match="size\\(-2\\) should match"):
        ember.linalg.lstsq(a, t64(np.ones((3, 1))))
    with pytest.raises(RuntimeError, match="driver` should be one of"):
        ember.linalg.lstsq(a, t64(np.ones((4, 1))), driver="lapack")
    with pytest.raises(RuntimeError, match="same dtype"):
        ember.linalg.lstsq(a, ember.ones(4, 1))
    x = ember.linalg.lstsq(a + t64(np.eye(4, 2)), t64(np.ones(4))).solution
    assert tuple(x.shape) == (2,)


# ----------------------------------------------------------------------------- older forms
def test_older_svd_returns_v_and_zero_filled_factors_without_uv():
    a = t64(np.random.default_rng(10).standard_normal((2, 4, 3)))
    U, S, V = ember.svd(a)
    assert tuple(U.shape) == (2, 4, 3) and tuple(V.shape) == (2, 3, 3)
    np.testing.assert_allclose(host(U @ ember.diag_embed(S) @ V.mT), host(a), atol=1e-12)
    U, S, V = a.svd(some=False)
    assert tuple(U.shape) == (2, 4, 4)
    U, S, V = ember.svd(a, compute_uv=False)
    assert tuple(U.shape) == (2, 4, 4) and tuple(V.shape) == (2, 3, 3)
    assert not host(U).any() and not host(V).any()


def test_older_qr_cholesky_and_triangular_solve():
    a = t64(np.random.default_rng(11).standard_normal((4, 3)))
    assert tuple(ember.qr(a).Q.shape) == (4, 3) and tuple(a.qr(some=False).Q.shape) == (4, 4)
    spd = t64([[4.0, 2.0], [2.0, 3.0]])
    np.testing.assert_allclose(host(spd.cholesky(upper=True)), host(
        ember.linalg.cholesky(spd).mT))
    upper = t64([[2.0, 1.0], [0.0, 4.0]])
    b = t64([[3.0], [4.0]])
    solution, cloned = ember.triangular_solve(b, upper)
    np.testing.assert_allclose(host(solution), [[1.0], [1.0]])
    assert cloned is not upper and np.array_equal(host(cloned), host(upper))
    solution, _ = b.triangular_solve(upper, transpose=True)
    np.testing.assert_allclose(host(upper.mT @ solution), host(b))
    _, cloned = ember.triangular_solve(ember.ones(3, 2, 1, dtype=f64), upper)
    assert tuple(cloned.shape) == (3, 2, 2)


def test_cholesky_inverse_inverts_the_product():
    rng = np.random.default_rng(12)
    m = rng.standard_normal((3, 3))
    a = m @ m.T + 3 * np.eye(3)
    low = np.linalg.cholesky(a)
    np.testing.assert_allclose(host(ember.cholesky_inverse(t64(low))), np.linalg.inv(a),
                               atol=1e-12)
    np.testing.assert_allclose(host(t64(low.T).cholesky_inverse(upper=True)),
                               np.linalg.inv(a), atol=1e-12)


def test_chain_matmul_addr_and_addmv_in_place():
    a, b = t64(np.ones((2, 3))), t64(np.ones((3, 4)))
    np.testing.assert_allclose(host(ember.chain_matmul(a, b)), 3 * np.ones((2, 4)))
    with pytest.raises(RuntimeError, match="Expected one or more matrices"):
        ember.chain_matmul()
    with pytest.raises(RuntimeError, match="Tensor dimension is 1, expected 2"):
        ember.chain_matmul(ember.ones(2))
    target = ember.zeros(2, 2, dtype=f64)
    target.addr_(t64([1.0, 2.0]), t64([3.0, 4.0]), alpha=2)
    np.testing.assert_allclose(host(target), [[6.0, 8.0], [12.0, 16.0]])
    with pytest.raises(RuntimeError, match="Expected 1-D argument vec1"):
        ember.addr(target, target, t64([1.0, 2.0]))
    y = t64([1.0, 1.0])
    assert ember.addmv_(y, t64(np.eye(2)), t64([1.0, 2.0]), beta=2) is y
    np.testing.assert_allclose(host(y), [3.0, 4.0])


# ----------------------------------------------------------------------------- LDL
@requires_torch
@pytest.mark.parametrize("seed", range(4))
def test_ldl_factor_matches_torch_including_2x2_pivots(seed):
    import torch

    m = np.random.default_rng(seed).standard_normal((7, 7))
    a = m + m.T
    a[np.diag_indices(7)] *= 0.01  # small diagonals force 2x2 pivots
    ours = ember.linalg.ldl_factor_ex(t64(a))
    theirs = torch.linalg.ldl_factor_ex(torch_of(a))
    np.testing.assert_array_equal(host(ours.pivots), theirs.pivots.numpy())
    np.testing.assert_allclose(host(ours.LD), theirs.LD.numpy(), atol=1e-10)
    b = np.random.default_rng(seed).standard_normal((7, 2))
    x = host(ember.linalg.ldl_solve(ours.LD, ours.pivots, t64(b)))
    np.testing.assert_allclose(a @ x, b, atol=1e-9)


def test_ldl_singular_d_is_reported():
    a = t64([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    LD, pivots, info = ember.linalg.ldl_factor_ex(a)
    assert int(info) == 3 and host(pivots).tolist() == [-2, -2, 3]
    with pytest.raises(ember.linalg.LinAlgError, match=r"D\[3,3\] is exactly zero"):
        ember.linalg.ldl_factor(a)
    with pytest.raises(RuntimeError, match="Expected pivots to be integers"):
        ember.linalg.ldl_solve(LD, pivots.long(), t64(np.ones((3, 1))))


# ----------------------------------------------------------------------------- randomized
def test_svd_lowrank_recovers_a_low_rank_matrix_wide_and_tall():
    ember.manual_seed(0)
    a = ember.randn(3, 30, 3, dtype=f64) @ ember.randn(3, 3, 12, dtype=f64)
    for matrix in (a, a.mT):
        U, S, V = ember.svd_lowrank(matrix, q=5)
        assert tuple(U.shape[-2:]) == (matrix.shape[-2], 5)
        np.testing.assert_allclose(host(U.mT @ U), np.broadcast_to(np.eye(5), (3, 5, 5)),
                                   atol=1e-10)
        np.testing.assert_allclose(host(U @ ember.diag_embed(S) @ V.mT), host(matrix),
                                   atol=1e-10)
    M = ember.ones(30, 12, dtype=f64)
    U, S, V = ember.svd_lowrank(a[0] + M, q=4, M=M)
    np.testing.assert_allclose(host(U @ ember.diag(S) @ V.mT), host(a[0]), atol=1e-10)


def test_svd_lowrank_gradient_equals_the_exact_svd_gradient():
    ember.manual_seed(1)
    a = (ember.randn(8, 2, dtype=f64) @ ember.randn(2, 6, dtype=f64)).requires_grad_(True)
    (g,) = ember.autograd.grad(ember.svd_lowrank(a, q=3)[1][:2].sum(), a)
    (exact,) = ember.autograd.grad(ember.linalg.svdvals(a)[:2].sum(), a)
    np.testing.assert_allclose(host(g), host(exact), atol=1e-8)


def test_pca_lowrank_finds_the_principal_directions():
    ember.manual_seed(2)
    rng = np.random.default_rng(2)
    data = rng.standard_normal((200, 3)) * [5.0, 1.0, 0.1] + [10.0, -3.0, 2.0]
    U, S, V = ember.pca_lowrank(t64(data), q=3)
    centered = data - data.mean(0)
    np.testing.assert_allclose(host(S) ** 2, np.linalg.eigvalsh(centered.T @ centered)[::-1],
                               rtol=1e-8)
    assert abs(host(V)[0, 0]) > 0.99
    with pytest.raises(ValueError, match="q\\(=4\\) must be non-negative"):
        ember.pca_lowrank(t64(data), q=4)
    with pytest.raises(ValueError, match="niter"):
        ember.pca_lowrank(t64(data), niter=-1)


def _spectrum(n=30, seed=3):
    q = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))[0]
    return q, (q * np.arange(1.0, n + 1)) @ q.T


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_finds_extreme_eigenpairs(method, largest):
    ember.manual_seed(3)
    q, a = _spectrum()
    E, X = ember.lobpcg(t64(a), k=3, largest=largest, method=method)
    expected = [30.0, 29.0, 28.0] if largest else [1.0, 2.0, 3.0]
    np.testing.assert_allclose(host(E), expected, rtol=1e-7)
    np.testing.assert_allclose(host(X.mT @ X), np.eye(3), atol=1e-7)
    np.testing.assert_allclose(a @ host(X), host(X) * host(E), atol=1e-5)


def test_lobpcg_generalized_problem_and_the_tracker_runs():
    ember.manual_seed(4)
    _, a = _spectrum()
    b = np.diag(np.linspace(1.0, 2.0, 30))
    steps = []
    E, X = ember.lobpcg(t64(a), k=2, B=t64(b), tracker=lambda s: steps.append(
        s.ivars["istep"]))
    scale = np.diag(1 / np.sqrt(np.diag(b)))
    expected = np.linalg.eigvalsh(scale @ a @ scale)[::-1][:2]
    np.testing.assert_allclose(host(E), expected, rtol=1e-6)
    np.testing.assert_allclose(host(X.mT @ t64(b) @ X), np.eye(2), atol=1e-7)
    assert steps and steps == list(range(len(steps)))


def test_lobpcg_eigenvalue_gradient_and_errors():
    ember.manual_seed(5)
    q, a = _spectrum()
    A = t64(a, requires_grad=True)
    E, _ = ember.lobpcg(A, k=2, tol=1e-12)
    E.sum().backward()
    np.testing.assert_allclose(host(A.grad), q[:, 29:30] @ q[:, 29:30].T +
                               q[:, 28:29] @ q[:, 28:29].T, atol=1e-6)
    with pytest.raises(ValueError, match="smaller than 3 x the number"):
        ember.lobpcg(t64(np.eye(5)), k=2)
    with pytest.raises(ValueError, match="method must be"):
        ember.lobpcg(t64(a), method="fast")
    stop = []

    def tracker(state):
        stop.append(1)
        state.bvars["force_stop"] = True
    ember.lobpcg(t64(a), k=1, tracker=tracker)
    assert len(stop) == 1


def test_the_older_forms_warn_once_as_pytorch(monkeypatch):
    from ember.ops import decompositions

    monkeypatch.setattr(decompositions, "_WARNED", set())
    a = t64(np.eye(2))
    with pytest.warns(UserWarning, match="ember.qr is deprecated in favor of ember.linalg.qr"):
        ember.qr(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.qr(a)  # the second call is quiet
    for call, name in ((lambda: ember.lu(a), "lu"),
                       (lambda: ember.cholesky(a), "cholesky"),
                       (lambda: ember.triangular_solve(a, a), "triangular_solve")):
        with pytest.warns(UserWarning, match=f"ember.{name} is deprecated"):
            call()


# ----------------------------------------------------------------------------- docs
@pytest.mark.parametrize("name", ["factorizations", "matrix_functions", "lowrank"])
def test_docstring_examples_run(name):
    import doctest
    import importlib

    module = importlib.import_module(f"ember.ops.{name}")
    result = doctest.testmod(module, extraglobs={"ember": ember})
    assert result.attempted and not result.failed
