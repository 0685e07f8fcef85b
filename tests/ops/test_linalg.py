"""Edge cases of the linear-algebra ops that the op table does not reach: errors and their
messages, singular and rank-deficient inputs, sign conventions, the triangle that eigh and
cholesky read, einsum's many equation forms, views, and special arguments."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ..conftest import requires_torch

f64 = ember.float64


def t64(values, requires_grad=False, device="cpu"):
    return ember.tensor(np.asarray(values, dtype=np.float64), device=device,
                        requires_grad=requires_grad)


def random(shape, seed=0, requires_grad=True, device="cpu"):
    rng = np.random.default_rng(seed)
    return t64(rng.standard_normal(shape), requires_grad, device)


def spd(n, seed=0, batch=(), device="cpu"):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (n, n))
    return t64(a @ np.swapaxes(a, -1, -2) + n * np.eye(n), True, device)


# ----------------------------------------------------------------------------- LinAlgError
def test_linalg_error_is_exported_and_a_runtime_error():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    assert ember.linalg.LinAlgError.__name__ == "LinAlgError"


@pytest.mark.parametrize("op", ["inv", "inverse", "solve"])
def test_singular_matrix_raises_linalg_error(op, device):
    singular = t64([[1.0, 2.0], [2.0, 4.0]], device=device)
    with pytest.raises(ember.linalg.LinAlgError, match=r"singular.*\[2, 2\]"):
        if op == "inv":
            ember.linalg.inv(singular)
        elif op == "inverse":
            singular.inverse()
        else:
            ember.linalg.solve(singular, t64([1.0, 1.0], device=device))


def test_singular_element_in_a_batch_raises(device):
    batch = t64([[[2.0, 0.0], [0.0, 2.0]], [[0.0, 0.0], [0.0, 0.0]]], device=device)
    with pytest.raises(ember.linalg.LinAlgError, match="linalg.inv"):
        ember.linalg.inv(batch)


def test_cholesky_of_a_non_positive_definite_matrix_raises(device):
    with pytest.raises(ember.linalg.LinAlgError, match="linalg.cholesky.*positive-definite"):
        ember.linalg.cholesky(-ember.eye(3, dtype=f64, device=device))


# ----------------------------------------------------------------------------- argument errors
@pytest.mark.parametrize("op", ["inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh"])
def test_non_square_input_is_rejected_with_the_shapes(op):
    with pytest.raises(RuntimeError, match=f"linalg.{op}: A must be batches of square "
                                           "matrices, but they are 2 by 3 matrices"):
        getattr(ember.linalg, op)(random((2, 3), requires_grad=False))


@pytest.mark.parametrize("op", ["inv", "det", "qr", "svd", "svdvals"])
def test_one_dimensional_input_is_rejected(op):
    with pytest.raises(RuntimeError, match=f"linalg.{op}: .*at least 2 dimensions"):
        getattr(ember.linalg, op)(random((3,), requires_grad=False))


def test_integer_input_is_rejected():
    with pytest.raises(RuntimeError, match="linalg.inv: Expected a floating point tensor as A. "
                                           "Got int64"):
        ember.linalg.inv(ember.tensor([[1, 0], [0, 1]]))


def test_half_precision_is_rejected():
    with pytest.raises(RuntimeError, match="Low precision dtypes not supported. Got float16"):
        ember.linalg.det(ember.eye(2, dtype=ember.float16))


def test_dtype_mismatches_are_rejected():
    a32, a64 = ember.eye(2), ember.eye(2, dtype=f64)
    with pytest.raises(RuntimeError, match="linalg.solve: Expected A and B to have the same "
                                           "dtype, but found A of type float64 and B of type "
                                           "float32"):
        ember.linalg.solve(a64, ember.ones(2))
    with pytest.raises(RuntimeError, match="mm: expected input and mat2 to have the same dtype"):
        ember.mm(a32, a64)
    with pytest.raises(RuntimeError, match="dot: expected input and other to have the same"):
        ember.dot(ember.ones(2), ember.ones(2, dtype=f64))
    with pytest.raises(RuntimeError, match="einsum\\(\\): expected all operands to have the same "
                                           "dtype"):
        ember.einsum("ij,jk", a32, a64)
    with pytest.raises(RuntimeError, match="tensordot: both inputs should have same dtype"):
        ember.tensordot(a32, a64)
    with pytest.raises(RuntimeError, match="addmm: expected input and the matrices"):
        ember.addmm(a64, a32, a32)


def test_shape_mismatches_name_the_op_and_shapes():
    with pytest.raises(RuntimeError, match=r"mm: mat1 and mat2 shapes cannot be multiplied "
                                           r"\(2x3 and 2x3\)"):
        ember.mm(ember.ones(2, 3), ember.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"bmm: expected mat2 of shape \[2, 3, \*\]"):
        ember.bmm(ember.ones(2, 2, 3), ember.ones(3, 3, 2))
    with pytest.raises(RuntimeError, match=r"bmm: input must be a 3-D tensor"):
        ember.bmm(ember.ones(2, 3), ember.ones(3, 2))
    with pytest.raises(RuntimeError, match=r"mv: size mismatch, got input \[2, 3\] and vec \[2\]"):
        ember.mv(ember.ones(2, 3), ember.ones(2))
    with pytest.raises(RuntimeError, match=r"dot: inconsistent tensor size"):
        ember.dot(ember.ones(2), ember.ones(3))
    with pytest.raises(RuntimeError, match=r"linalg.solve: Incompatible shapes of A and B for "
                                           r"the equation AX = B \(3x3 and 2x1\)"):
        ember.linalg.solve(ember.eye(3), ember.ones(2))
    with pytest.raises(RuntimeError, match=r"linalg.solve: Incompatible shapes of A and B for "
                                           r"the equation XA = B \(3x3 and 3x1\)"):
        ember.linalg.solve(ember.eye(3), ember.ones(3), left=False)
    with pytest.raises(RuntimeError, match=r"linalg.solve: the batch dimensions"):
        ember.linalg.solve(ember.eye(2).expand(3, 2, 2), ember.ones(4, 2, 1))
    with pytest.raises(RuntimeError, match=r"tensordot: contracted dimensions need to match"):
        ember.tensordot(ember.ones(2, 3), ember.ones(2, 3), dims=([1], [0]))
    with pytest.raises(RuntimeError, match=r"addmm: input of shape \[3\] does not broadcast"):
        ember.addmm(ember.ones(3), ember.ones(2, 2), ember.ones(2, 2))
    with pytest.raises(RuntimeError, match="outer: expected vec2 to be a 1-D tensor"):
        ember.outer(ember.ones(2), ember.ones(2, 2))


def test_other_argument_errors():
    with pytest.raises(RuntimeError, match="qr received unrecognized mode 'full'"):
        ember.linalg.qr(ember.eye(2), mode="full")
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got "
                                           "'X'"):
        ember.linalg.eigh(ember.eye(2), UPLO="X")
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical"):
        ember.diagonal(ember.ones(2, 2), 0, 1, -1)
    with pytest.raises(RuntimeError, match="trace: expected a matrix, but got tensor with dim 3"):
        ember.trace(ember.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        ember.tril(ember.ones(3))
    with pytest.raises(RuntimeError, match=r"diag\(\): Supports 1D or 2D tensors. Got 3D"):
        ember.diag(ember.ones(2, 2, 2))
    with pytest.raises(TypeError, match="matrix_power\\(\\): argument 'n' must be int"):
        ember.linalg.matrix_power(ember.eye(2), 1.5)
    with pytest.raises(RuntimeError, match="linalg.norm: If dim is not specified but ord is, the "
                                           "input must be 1D or 2D. Got 3D."):
        ember.linalg.norm(ember.ones(2, 2, 2), ord=2)
    with pytest.raises(RuntimeError, match="For integral input tensors, argument beta must not "
                                           "be a floating point number"):
        ember.addr(ember.ones(2, 2, dtype=ember.int64), ember.ones(2, dtype=ember.int64),
                   ember.ones(2, dtype=ember.int64), beta=0.5)


# ----------------------------------------------------------------------------- einsum
EINSUM_CASES = [
    ("ii->", [(3, 3)]), ("ii", [(3, 3)]), ("iij->j", [(2, 2, 3)]), ("iji->j", [(2, 3, 2)]),
    ("iii->i", [(2, 2, 2)]), ("i,i", [(3,), (3,)]), ("i,j->ij", [(2,), (3,)]),
    ("...ij->...ji", [(2, 3, 4)]), ("...ij->ij", [(2, 3, 4)]), ("...", [(2, 3)]),
    ("i...->...", [(2, 3, 4)]), ("Ab,bC->AC", [(2, 3), (3, 2)]),
    ("bij,bjk->bik", [(1, 2, 3), (4, 3, 2)]), ("i,i->i", [(1,), (3,)]),
    ("ij,j->i", [(2, 1), (3,)]), ("...i,...i->...", [(3, 1, 4), (2, 4)]), ("", [()]),
    (",->", [(), ()]), ("i,->i", [(3,), ()]), ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]),
    (" i j , j k -> i k ", [(2, 3), (3, 2)]), ("ii,i->i", [(3, 3), (3,)]),
    ("ab,cd->", [(2, 1), (1, 3)]), ("ba,ca", [(2, 3), (4, 3)]),
]


@requires_torch
@pytest.mark.parametrize("equation,shapes", EINSUM_CASES, ids=[c[0] or "empty" for c in
                                                               EINSUM_CASES])
def test_einsum_matches_torch_with_gradients(equation, shapes):
    import torch

    rng = np.random.default_rng(len(equation))
    arrays = [rng.standard_normal(s) for s in shapes]
    ours = [t64(a, True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = ember.einsum(equation, *ours), torch.einsum(equation, *theirs)
    assert tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    upstream = rng.standard_normal(tuple(expected.shape))
    grads = ember.autograd.grad(out, ours, t64(upstream))
    expected_grads = torch.autograd.grad(expected, theirs, torch.tensor(upstream))
    for g, e in zip(grads, expected_grads):
        assert tuple(g.shape) == tuple(e.shape)
        np.testing.assert_allclose(g.numpy(), e.numpy(), atol=1e-12)


@pytest.mark.parametrize("equation,shapes", [("iij->j", [(2, 2, 3)]), ("ij,jk", [(2, 3), (3, 2)]),
                                             ("i,i->i", [(1,), (3,)]), ("ii", [(2, 2)])])
def test_einsum_double_backward(equation, shapes):
    inputs = [random(s, seed=i) for i, s in enumerate(shapes)]
    assert gradgradcheck(lambda *x: ember.einsum(equation, *x), inputs)


def test_einsum_with_the_same_operand_twice():
    x = random((2, 3))
    assert gradcheck(lambda t: ember.einsum("ij,ij->", t, t), [x])
    assert gradgradcheck(lambda t: ember.einsum("ij,kj->ik", t, t), [x])


def test_einsum_operand_forms():
    a, b = random((2, 3), 1, False), random((3, 4), 2, False)
    expected = a.numpy() @ b.numpy()
    np.testing.assert_allclose(ember.einsum("ij,jk", [a, b]).numpy(), expected)
    np.testing.assert_allclose(ember.einsum(a, [0, 1], b, [1, 2], [0, 2]).numpy(), expected)
    np.testing.assert_allclose(ember.einsum(a, [..., 1], b, [1, 2]).numpy(), expected)


def test_einsum_errors():
    a = ember.ones(2, 3)
    cases = [
        (("ij", a, a), "more operands were provided than specified"),
        (("ij,jk", a), "fewer operands"),
        (("ijk", a), r"the number of subscripts in the equation \(3\) does not match the "
                     r"number of dimensions \(2\) for operand 0 and no ellipsis was given"),
        (("ij,jk", a, a), "subscript j has size 2 for operand 1 which does not broadcast with "
                          "previously seen size 3"),
        (("ii", a), "subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"),
        (("ij->k", a), "output subscript k does not appear"),
        (("ij->ii", a), "output subscript i appears more than once"),
        (("i1", a), "invalid subscript given at index 1"),
        (("i..j", a), "not part of any ellipsis"),
    ]
    for args, match in cases:  # PyTorch's type for each: RuntimeError
        with pytest.raises(RuntimeError, match=match):
            ember.einsum(*args)


# ----------------------------------------------------------------------------- tensordot, kron
@requires_torch
@pytest.mark.parametrize("dims,b_shape", [(0, (2,)), (1, (4, 2)), (2, (3, 4)),
                                          (([0, 1], [1, 0]), (4, 3)), (([1], [0]), (4,))])
def test_tensordot_dims_forms(dims, b_shape):
    import torch

    a, b = random((3, 4), 1, False), random(b_shape, 2, False)
    expected = torch.tensordot(torch.tensor(a.numpy()), torch.tensor(b.numpy()), dims=dims)
    np.testing.assert_allclose(ember.tensordot(a, b, dims=dims).numpy(), expected.numpy())


def test_kron_of_matrices_matches_numpy():
    a, b = random((2, 3), 1, False), random((4, 2), 2, False)
    np.testing.assert_allclose(ember.kron(a, b).numpy(), np.kron(a.numpy(), b.numpy()))
    ints = ember.kron(ember.tensor([1, 2]), ember.tensor([[1], [3]]))
    assert ints.dtype is ember.int64 and ints.tolist() == [[1, 2], [3, 6]]


# ----------------------------------------------------------------------------- products
def test_addmm_with_beta_zero_ignores_nan_in_input():
    input = t64([[np.nan, np.inf], [1.0, 2.0]], True)
    out = ember.addmm(input, ember.eye(2, dtype=f64), t64([[1.0, 2.0], [3.0, 4.0]]), beta=0,
                      alpha=2)
    assert out.tolist() == [[2.0, 4.0], [6.0, 8.0]]


def test_matmul_family_node_names():
    a, b = random((2, 3)), random((3, 2))
    assert ember.mm(a, b).grad_fn.name() == "MmBackward0"
    assert ember.mv(a, b[:, 0]).grad_fn.name() == "MvBackward0"
    assert ember.dot(a[0], b[:, 0]).grad_fn.name() == "DotBackward0"
    assert ember.outer(a[0], b[0]).shape == (3, 2)
    assert ember.ger is ember.outer


# ----------------------------------------------------------------------------- diagonals
def test_diagonal_is_a_writable_view():
    base = ember.zeros(3, 4)
    view = base.diagonal(1)
    assert view.shape == (3,)
    view.fill_(7.0)
    assert base.tolist() == [[0, 7, 0, 0], [0, 0, 7, 0], [0, 0, 0, 7]]
    base[0, 1] = 5.0
    assert view.tolist()[0] == 5.0


def test_in_place_through_a_diagonal_view_keeps_gradients():
    x = random((3, 3))
    y = x * 1
    y.diagonal().mul_(2)
    y.sum().backward()
    assert x.grad.tolist() == (np.ones((3, 3)) + np.eye(3)).tolist()


def test_diag_embed_and_diagonal_are_inverse():
    x = random((2, 3), requires_grad=False)
    for offset in (-2, 0, 1):
        embedded = ember.diag_embed(x, offset, 0, 2)
        assert embedded.shape == (3 + abs(offset), 2, 3 + abs(offset))
        np.testing.assert_array_equal(ember.diagonal(embedded, offset, 0, 2).numpy(), x.numpy())


def test_diag_out_of_range_offset_gives_empty():
    assert ember.diag(ember.ones(2, 3), 5).shape == (0,)
    assert ember.diagonal(ember.ones(2, 3), -4).shape == (0,)


def test_in_place_forms():
    x = ember.ones(3, 3)
    assert x.tril_() is x and x.tolist() == np.tril(np.ones((3, 3))).tolist()
    x.triu_(0)
    assert x.tolist() == np.eye(3).tolist()
    y = ember.ones(2, 2)
    y.addmm_(ember.eye(2), ember.eye(2), beta=2, alpha=3)
    assert y.tolist() == [[5.0, 2.0], [2.0, 5.0]]
    leaf = random((2, 2))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.tril_()


def test_trace_of_integers_is_int64():
    result = ember.trace(ember.tensor([[1, 2], [3, 4]], dtype=ember.int32))
    assert result.dtype is ember.int64 and result.item() == 5


# ----------------------------------------------------------------------------- det family
def test_det_gradient_of_a_singular_matrix_is_the_cofactor_matrix():
    # det is smooth everywhere; at a singular A its gradient is the cofactor matrix.
    for values in ([[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]):
        a = t64(values, True)
        assert ember.linalg.det(a).item() == pytest.approx(0.0, abs=1e-12)
        assert gradcheck(ember.linalg.det, [a])
    a = t64([[1.0, 2.0], [2.0, 4.0]], True)
    ember.linalg.det(a).backward()
    np.testing.assert_allclose(a.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)


def test_slogdet_and_logdet_of_singular_and_negative_determinants():
    singular = t64([[1.0, 2.0], [2.0, 4.0]])
    sign, logabsdet = ember.linalg.slogdet(singular)
    assert sign.item() == 0.0 and logabsdet.item() == -np.inf
    assert ember.logdet(singular).item() == -np.inf
    assert np.isnan(ember.logdet(t64([[0.0, 1.0], [1.0, 0.0]])).item())
    assert ember.slogdet(t64([[0.0, 1.0], [1.0, 0.0]])).sign.item() == -1.0


def test_slogdet_does_not_overflow():
    big = ember.eye(300, dtype=f64) * 1e3
    assert ember.linalg.det(big).item() == np.inf
    assert ember.linalg.slogdet(big).logabsdet.item() == pytest.approx(300 * np.log(1e3))


# ----------------------------------------------------------------------------- solve
def test_solve_vector_and_matrix_right_hand_sides():
    a = spd(3, batch=(2,))
    vectors = random((2, 3), 1)  # (*, n) with * = A's batch: a batch of vectors
    x = ember.linalg.solve(a, vectors)
    assert x.shape == (2, 3)
    np.testing.assert_allclose((a @ x.unsqueeze(-1)).squeeze(-1).detach().numpy(),
                               vectors.detach().numpy(), atol=1e-12)
    single = ember.linalg.solve(a, random((3,), 2))  # one vector, broadcast over the batch
    assert single.shape == (2, 3)
    matrices = ember.linalg.solve(a, random((3, 4), 3))  # one matrix, broadcast
    assert matrices.shape == (2, 3, 4)
    row = ember.linalg.solve(a[0], random((2, 3), 4), left=False)
    np.testing.assert_allclose((row @ a[0]).detach().numpy(), random((2, 3), 4).detach().numpy(),
                               atol=1e-12)


def test_cholesky_solve_matches_solve():
    a = spd(3)
    low = ember.linalg.cholesky(a)
    b = random((3, 2), 1)
    np.testing.assert_allclose(ember.cholesky_solve(b, low).detach().numpy(),
                               ember.linalg.solve(a, b).detach().numpy(), atol=1e-12)
    up = ember.linalg.cholesky(a, upper=True)
    np.testing.assert_allclose(ember.cholesky_solve(b, up, upper=True).detach().numpy(),
                               ember.linalg.solve(a, b).detach().numpy(), atol=1e-12)


# ----------------------------------------------------------------------------- triangles read
def test_cholesky_and_eigh_read_one_triangle():
    a = spd(3)
    garbage = a.detach() + ember.triu(ember.ones(3, 3, dtype=f64), 1) * 100
    np.testing.assert_allclose(ember.linalg.cholesky(garbage).numpy(),
                               ember.linalg.cholesky(a).detach().numpy())
    np.testing.assert_allclose(ember.linalg.eigvalsh(garbage).numpy(),
                               ember.linalg.eigvalsh(a).detach().numpy())
    lower_garbage = a.detach() + ember.tril(ember.ones(3, 3, dtype=f64), -1) * 100
    np.testing.assert_allclose(ember.linalg.eigvalsh(lower_garbage, UPLO="U").numpy(),
                               ember.linalg.eigvalsh(a).detach().numpy())


def test_cholesky_upper_is_the_transpose():
    a = spd(3)
    low, up = ember.linalg.cholesky(a), ember.linalg.cholesky(a, upper=True)
    np.testing.assert_allclose(up.detach().numpy(), low.detach().numpy().T)
    np.testing.assert_allclose((up.mT @ up).detach().numpy(), a.detach().numpy(), atol=1e-12)


# ----------------------------------------------------------------------------- qr
def test_qr_modes_and_shapes():
    a = random((4, 3), requires_grad=False)
    q, r = ember.linalg.qr(a)
    assert q.shape == (4, 3) and r.shape == (3, 3)
    q, r = ember.linalg.qr(a, mode="complete")
    assert q.shape == (4, 4) and r.shape == (4, 3)
    np.testing.assert_allclose((q @ r).numpy(), a.numpy(), atol=1e-12)
    q, r = ember.linalg.qr(a, mode="r")
    assert q.shape == (0,) and r.shape == (3, 3)


def test_qr_backward_errors_where_pytorch_has_none():
    a = random((4, 3))
    with pytest.raises(RuntimeError, match="not computed when mode='r'"):
        ember.linalg.qr(a, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and "
                                           "nrows > ncols"):
        ember.linalg.qr(a, mode="complete").Q.sum().backward()


def test_qr_wide_gradient():
    assert gradcheck(lambda x: ember.linalg.qr(x), [random((2, 4))])
    assert gradcheck(lambda x: ember.linalg.qr(x, mode="complete"), [random((2, 3))])


# ----------------------------------------------------------------------------- svd, eigh
def test_svd_sign_convention_and_reconstruction():
    a = random((2, 4, 3), requires_grad=False)
    u, s, vh = ember.linalg.svd(a, full_matrices=False)
    columns = u.numpy()
    index = np.abs(columns).argmax(axis=-2)
    assert (np.take_along_axis(columns, index[..., None, :], axis=-2) > 0).all()
    np.testing.assert_allclose((u * s.unsqueeze(-2) @ vh).numpy(), a.numpy(), atol=1e-12)
    assert (np.diff(s.numpy(), axis=-1) <= 0).all()


def test_eigh_sign_convention_and_reconstruction():
    x = random((3, 3), requires_grad=False).numpy()
    a = t64(x + x.T)
    w, v = ember.linalg.eigh(a)
    index = np.abs(v.numpy()).argmax(axis=0)
    assert (v.numpy()[index, np.arange(3)] > 0).all()
    np.testing.assert_allclose((v * w @ v.mT).numpy(), a.numpy(), atol=1e-12)


@requires_torch
def test_svd_gradient_of_a_gauge_invariant_loss_matches_torch():
    import torch

    values = np.random.default_rng(3).standard_normal((4, 3))
    weights = np.random.default_rng(4).standard_normal((4, 3))

    def loss(lib, x):
        u, s, vh = lib.linalg.svd(x, full_matrices=False)
        w = lib.tensor(weights) if lib is torch else t64(weights)
        return ((u * u) * w).sum() + (vh * vh)[0].sum() * 2 + s.sum()

    ours, theirs = t64(values, True), torch.tensor(values, requires_grad=True)
    loss(ember, ours).backward()
    loss(torch, theirs).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-10)


def test_svd_full_matrices_gradient_ignores_the_extra_columns():
    a = random((4, 2))
    u = ember.linalg.svd(a).U
    assert u.shape == (4, 4)
    (g,) = ember.autograd.grad(u[:, 2:].sum(), [a])
    assert np.abs(g.numpy()).max() == 0


def test_svdvals_and_eigvalsh_compute_vectors_only_for_gradients():
    a = random((3, 3))
    assert ember.linalg.svdvals(a).grad_fn.name() == "LinalgSvdBackward0"
    assert ember.linalg.eigvalsh(a).grad_fn.name() == "LinalgEighBackward0"
    with ember.no_grad():
        assert ember.linalg.svdvals(a).grad_fn is None
    np.testing.assert_allclose(ember.linalg.svdvals(a.detach()).numpy(),
                               np.linalg.svd(a.detach().numpy(), compute_uv=False))


def test_singular_value_gradient_is_u_v_transpose():
    a = random((3, 2))
    (g,) = ember.autograd.grad(ember.linalg.svdvals(a)[0], [a])
    u, _, vh = np.linalg.svd(a.detach().numpy(), full_matrices=False)
    np.testing.assert_allclose(g.numpy(), np.outer(u[:, 0], vh[0]), atol=1e-12)


# ----------------------------------------------------------------------------- powers, pinv
def test_matrix_power_special_exponents():
    a = spd(2)
    identity = ember.linalg.matrix_power(a, 0)
    assert identity.tolist() == [[1.0, 0.0], [0.0, 1.0]] and not identity.requires_grad
    np.testing.assert_allclose(ember.linalg.matrix_power(a, -1).detach().numpy(),
                               np.linalg.inv(a.detach().numpy()))
    np.testing.assert_allclose(ember.matrix_power(a, 5).detach().numpy(),
                               np.linalg.matrix_power(a.detach().numpy(), 5))
    assert ember.linalg.matrix_power(ember.tensor([[1, 1], [0, 1]]), 3).tolist() == \
        [[1, 3], [0, 1]]


@requires_torch
def test_pinv_of_a_rank_deficient_matrix():
    # pinv jumps where the rank changes (finite differences can't check it there); the
    # gradient is the constant-rank one, as PyTorch's.
    import torch

    values = [[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]
    a, expected = t64(values, True), torch.tensor(values, dtype=torch.float64,
                                                  requires_grad=True)
    p = ember.linalg.pinv(a)
    np.testing.assert_allclose(p.detach().numpy(), np.linalg.pinv(np.array(values)), atol=1e-12)
    upstream = np.random.default_rng(0).standard_normal((2, 3))
    p.backward(t64(upstream))
    torch.linalg.pinv(expected).backward(torch.tensor(upstream))
    np.testing.assert_allclose(a.grad.numpy(), expected.grad.numpy(), atol=1e-10)
    ignored = ember.linalg.pinv(t64([[1.0, 0.0], [0.0, 1e-20]]), atol=1e-10)
    assert ignored.tolist() == [[1.0, 0.0], [0.0, 0.0]]


# ----------------------------------------------------------------------------- norm dispatch
def test_norm_dispatch():
    x = random((3, 4), requires_grad=False)
    values = x.numpy()
    assert ember.linalg.norm(x).item() == pytest.approx(np.linalg.norm(values))
    assert ember.linalg.norm(x, "fro").item() == pytest.approx(np.linalg.norm(values, "fro"))
    assert ember.linalg.norm(x, 1).item() == pytest.approx(np.linalg.norm(values, 1))
    np.testing.assert_allclose(ember.linalg.norm(x, 3, dim=1).numpy(),
                               np.linalg.norm(values, 3, axis=1))
    np.testing.assert_allclose(ember.linalg.norm(x[0], np.inf).numpy(),
                               np.linalg.norm(values[0], np.inf))


# ----------------------------------------------------------------------------- small helpers
def test_multi_dot_orders_and_errors():
    chain = [random((10, 2), 1), random((2, 10), 2), random((10, 2), 3), random((2,), 4)]
    expected = chain[0].detach().numpy() @ chain[1].detach().numpy() @ \
        chain[2].detach().numpy() @ chain[3].detach().numpy()
    np.testing.assert_allclose(ember.linalg.multi_dot(chain).detach().numpy(), expected)
    long_chain = [ember.eye(2, dtype=f64) * 1.01 for _ in range(100)]  # left to right
    assert ember.linalg.multi_dot(long_chain)[0, 0].item() == pytest.approx(1.01 ** 100)
    with pytest.raises(RuntimeError, match="expected at least 2 tensors but got 1"):
        ember.linalg.multi_dot([ember.eye(2)])
    with pytest.raises(RuntimeError, match="tensor 1 must be 2D but got 1D"):
        ember.linalg.multi_dot([ember.eye(2), ember.ones(2), ember.eye(2)])
    with pytest.raises(RuntimeError, match=r"tensors 0 and 1 with shapes \[2, 3\] and \[2, 2\]"):
        ember.linalg.multi_dot([ember.ones(2, 3), ember.eye(2)])


def test_solve_triangular_reads_one_triangle():
    a = t64([[2.0, 1.0], [5.0, 4.0]])
    b = t64([[1.0], [2.0]])
    upper = ember.linalg.solve_triangular(a, b, upper=True)
    np.testing.assert_allclose(upper.numpy(), np.linalg.solve(np.triu(a.numpy()), b.numpy()))
    unit = ember.linalg.solve_triangular(a, b, upper=False, unitriangular=True)
    np.testing.assert_allclose(unit.numpy(), [[1.0], [-3.0]])
    with pytest.raises(RuntimeError, match="B must have at least 2 dimensions"):
        ember.linalg.solve_triangular(a, ember.ones(2, dtype=f64), upper=True)
    with pytest.raises(ember.linalg.LinAlgError, match="singular"):
        ember.linalg.solve_triangular(t64([[1.0, 0.0], [1.0, 0.0]]), b, upper=False)


def test_matrix_rank():
    assert ember.linalg.matrix_rank(t64(np.outer([1, 2, 3], [1, -1, 2]))).item() == 1
    assert ember.linalg.matrix_rank(ember.zeros(3, 3)).item() == 0
    ranks = ember.linalg.matrix_rank(t64(np.diag([1.0, 1e-3, 0.0])[None].repeat(2, 0)),
                                     atol=1e-2)
    assert ranks.dtype is ember.int64 and ranks.tolist() == [1, 1]
    assert ember.linalg.matrix_rank(t64([[1.0, 2.0], [2.0, 1.0]]), hermitian=True).item() == 2


def test_vecdot_and_linalg_aliases():
    x, y = random((2, 3), 1, False), random((2, 3), 2, False)
    np.testing.assert_allclose(ember.linalg.vecdot(x, y).numpy(),
                               (x.numpy() * y.numpy()).sum(-1))
    assert ember.linalg.matmul is ember.matmul
    assert ember.linalg.diagonal(ember.ones(2, 3, 4)).shape == (2, 3)
