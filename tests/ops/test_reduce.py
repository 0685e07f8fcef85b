"""Edge cases of the reductions that the op table can't see: result dtypes, PyTorch's
errors and warnings, ties, zeros, NaN and infinities."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember

from ..conftest import requires_torch

INF = math.inf
NAN = math.nan


def _pair(values, dtype="float64", requires_grad=True):
    """The same values as an ember tensor and a torch tensor."""
    torch = pytest.importorskip("torch")
    array = np.array(values, dtype=dtype)
    ours = ember.tensor(array).requires_grad_(requires_grad)
    theirs = torch.tensor(array).requires_grad_(requires_grad)
    return ours, theirs


def _close(ours, theirs, **kwargs):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(),
                               equal_nan=True, **kwargs)


# ----------------------------------------------------------------------------- dtypes
@pytest.mark.parametrize("dtype", [ember.int8, ember.int32, ember.int64, ember.uint8,
                                   ember.bool])
def test_integer_and_bool_sums_are_int64(dtype):
    x = ember.ones(3, 4, dtype=dtype)
    assert ember.sum(x).dtype is ember.int64
    assert x.sum(1).dtype is ember.int64
    assert ember.prod(x).dtype is ember.int64
    assert ember.cumsum(x, 0).dtype is ember.int64
    assert ember.nansum(x).dtype is ember.int64
    assert ember.sum(x).item() == 12


def test_sum_of_bools_counts_trues():
    x = ember.tensor([True, False, True])
    assert ember.sum(x).item() == 2


def test_sum_dtype_is_honoured_and_the_gradient_keeps_the_input_dtype():
    x = ember.tensor([1.5, 2.5], requires_grad=True)
    y = ember.sum(x, dtype=ember.float64)
    assert y.dtype is ember.float64
    y.backward()
    assert x.grad.dtype is ember.float32
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    assert ember.sum(ember.tensor([1.7, 2.6]), dtype=ember.int32).dtype is ember.int32


def test_float16_sums_accumulate_in_float32():
    # summing down a column adds row by row; in float16 that would stall at 2048
    x = ember.ones(4096, 2, dtype=ember.float16)
    assert ember.sum(x, 0).dtype is ember.float16
    assert ember.sum(x, 0).tolist() == [4096.0, 4096.0]
    assert ember.mean(x, 0).tolist() == [1.0, 1.0]


def test_mean_dtype_promotes_integers():
    x = ember.tensor([1, 2, 4])
    out = ember.mean(x, dtype=ember.float64)
    assert out.dtype is ember.float64
    assert out.item() == pytest.approx(7 / 3)


def test_mean_of_integers_raises_pytorchs_error():
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype. Input "
                       r"dtype must be either a floating point or complex dtype. Got: Long"):
        ember.mean(ember.tensor([1, 2, 3]))
    with pytest.raises(RuntimeError, match="nanmean.*Long"):
        ember.nanmean(ember.tensor([1, 2, 3]))


def test_all_any_give_bool_and_uint8_for_uint8():
    x = ember.tensor([[1.0, 0.0], [2.0, 3.0]])
    assert ember.all(x).dtype is ember.bool and not ember.all(x).item()
    np.testing.assert_array_equal(ember.all(x, 1).numpy(), [False, True])
    np.testing.assert_array_equal(ember.any(x, 0).numpy(), [True, True])
    assert ember.any(x, (0, 1), keepdim=True).shape == (1, 1)
    assert ember.all(ember.tensor([1, 2], dtype=ember.uint8)).dtype is ember.uint8


def test_indices_are_int64_and_not_differentiable():
    x = ember.randn(3, 4, requires_grad=True)
    for result in (ember.max(x, 1), ember.sort(x), ember.topk(x, 2), ember.median(x, 0),
                   ember.cummax(x, 1), ember.cummin(x, 0), ember.nanmedian(x, 1)):
        assert result.indices.dtype is ember.int64
        assert not result.indices.requires_grad
        assert result.values.requires_grad
    assert ember.argmax(x).dtype is ember.int64
    assert ember.argsort(x).dtype is ember.int64
    assert ember.count_nonzero(x).dtype is ember.int64


def test_named_tuple_results():
    x = ember.randn(3, 4)
    for op, name in ((lambda: ember.max(x, 1), "max"), (lambda: ember.min(x, 1), "min"),
                     (lambda: ember.sort(x), "sort"), (lambda: ember.topk(x, 2), "topk"),
                     (lambda: ember.median(x, 1), "median"),
                     (lambda: ember.nanmedian(x, 1), "nanmedian"),
                     (lambda: ember.cummax(x, 1), "cummax"),
                     (lambda: ember.cummin(x, 1), "cummin"),
                     (lambda: ember.kthvalue(x, 2), "kthvalue")):
        result = op()
        assert type(result).__name__ == name
        values, indices = result
        assert values is result.values and indices is result.indices
        assert result[0] is result.values


# ----------------------------------------------------------------------------- var and std
def test_var_of_one_element_is_nan_with_pytorchs_warning():
    with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom is <= 0"):
        out = ember.var(ember.tensor([3.0]))
    assert math.isnan(out.item())
    with pytest.warns(UserWarning, match=r"std\(\): degrees of freedom is <= 0"):
        assert math.isnan(ember.std(ember.tensor([3.0])).item())
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert ember.var(ember.tensor([1.0, 2.0]), correction=2).item() == math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.var(ember.tensor([3.0]), correction=0).item() == 0.0


def test_var_unbiased_and_correction_forms():
    x = ember.tensor([[1.0, 2.0, 4.0], [0.0, 0.0, 3.0]])
    data = x.numpy()
    np.testing.assert_allclose(ember.var(x, 1).numpy(), data.var(1, ddof=1), rtol=1e-6)
    np.testing.assert_allclose(ember.var(x, 1, False).numpy(), data.var(1), rtol=1e-6)
    np.testing.assert_allclose(ember.var(x, False).item(), data.var(), rtol=1e-6)
    np.testing.assert_allclose(ember.std(x, correction=0).item(), data.std(), rtol=1e-6)
    assert ember.var(x, (0, 1), keepdim=True).shape == (1, 1)
    with pytest.raises(TypeError, match="either 'unbiased' or 'correction'"):
        ember.var(x, 1, unbiased=False, correction=0)
    var, mean = ember.var_mean(x, 1)
    np.testing.assert_allclose(mean.numpy(), data.mean(1), rtol=1e-6)
    np.testing.assert_allclose(var.numpy(), data.var(1, ddof=1), rtol=1e-6)


def test_std_gradient_where_std_is_zero_is_zero():
    x = ember.tensor([2.0, 2.0, 2.0], requires_grad=True)
    ember.std(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])


@requires_torch
def test_var_mean_gradients_of_both_outputs_match_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(np.random.default_rng(1).normal(size=(3, 4)))
    v, m = ember.std_mean(ours, 1)
    (v * 2 + m * 3).sum().backward()
    tv, tm = torch.std_mean(theirs, 1)
    (tv * 2 + tm * 3).sum().backward()
    _close(ours.grad, theirs.grad, rtol=1e-10)


# values whose sum, or sum of squared deviations, overflows the dtype
_OVERFLOWING = [[3e38, -3e38, 1e38], [1e38, 2e38, 3e38], [3e38, 1e38], [3e38, -3e38],
                [-3e38, -3e38, 3e38, 1.0], [2e19, -2e19, 1.0], [1e20, -1e20, 3.0],
                [3.4e38, 3.4e38, 3.3e38], [3.4e38, 3.4e38, -3.4e38, -3.4e38]]


@requires_torch
@pytest.mark.parametrize("values", _OVERFLOWING)
@pytest.mark.parametrize("correction", [1, 0])
def test_var_and_std_past_float32s_limit_match_pytorch(values, correction, device):
    """inf (or a finite std) where the true variance is past the limit, never nan. The
    reference is PyTorch's float64-accumulating pass over a dim; its single-output pass
    gives the same var (its std is inf wherever its float32 mean overflows)."""
    torch = pytest.importorskip("torch")
    rows = np.array([values, [1.0] * len(values), values[::-1]], dtype=np.float32)
    ours = ember.tensor(rows, device=device)
    theirs = torch.tensor(rows)
    for name in ("var", "std"):
        expected = getattr(theirs, name)(1, correction=correction).numpy()
        got = getattr(ours, name)(1, correction=correction).cpu().numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-6)
        got_all = getattr(ours[0], name)(correction=correction).item()
        np.testing.assert_allclose(got_all, expected[0], rtol=1e-6)
        pair = getattr(ember, name + "_mean")(ours.t(), 0, correction=correction)
        expected_pair = getattr(torch, name + "_mean")(theirs.t(), 0, correction=correction)
        for got_part, expected_part in zip(pair, expected_pair):
            np.testing.assert_allclose(got_part.cpu().numpy(), expected_part.numpy(),
                                       rtol=1e-6)
    np.testing.assert_allclose(ours[0].var(correction=correction).item(),
                               theirs[0].var(correction=correction).item(), rtol=1e-6)


@requires_torch
def test_var_past_the_limit_in_float64_and_float16_is_inf_like_pytorch():
    torch = pytest.importorskip("torch")
    for values, dtype in (([1e308, 1.5e308, 1.7e308], "float64"),
                          ([1e155, -1e155, 1.0], "float64"),
                          ([6e4, -6e4, 1e4], "float16"), ([60000.0, 60032.0], "float16")):
        ours, theirs = _pair(values, dtype, requires_grad=False)
        names = ("var", "std") if dtype == "float16" else ("var",)
        for name in names:
            expected = getattr(torch.stack([theirs, theirs]), name)(1)[0].item()
            assert getattr(ours, name)().item() == expected, (values, name)
    # a half tensor's std is the float32 std rounded once, as PyTorch's
    ours, theirs = _pair([6e4, -6e4, 1e4], "float16", requires_grad=False)
    assert ours.std().item() == theirs.std().item() == 60288.0
    # float64 has no wider accumulator: PyTorch's overflows (inf or nan) where a sum does,
    # ember's results are the true ones wherever they are representable
    x = ember.tensor([1e308, 1.5e308, 1.7e308], dtype=ember.float64)
    np.testing.assert_allclose(x.std().item(), np.sqrt(13.0) * 1e307, rtol=1e-12)
    x = ember.tensor([1e154, -1e154, 1.0], dtype=ember.float64)
    np.testing.assert_allclose(x.var().item(), 1e308, rtol=1e-12)


@requires_torch
def test_gradients_of_var_and_std_past_float32s_limit_match_pytorch():
    pytest.importorskip("torch")
    for values in ([3e38, -3e38, 1e38], [2e19, -2e19, 1.0]):
        for name in ("var", "std"):
            ours, theirs = _pair(values, "float32")
            getattr(ours, name)().backward()
            getattr(theirs, name)().backward()
            _close(ours.grad, theirs.grad, rtol=1e-6)


def test_var_and_std_of_huge_equal_values_stay_zero_beside_overflowing_rows(device):
    rows = ember.tensor([[3e38] * 3, [3e38, -3e38, 1e38], [1.0, 2.0, 3.0]], device=device)
    assert rows.var(1).cpu().tolist()[0] == 0.0
    assert rows.std(1).cpu().tolist()[0] == 0.0
    assert rows.var(1).cpu().tolist()[1:] == [INF, 1.0]
    variance, mean = ember.var_mean(rows, 1)
    assert variance.cpu().tolist() == [0.0, INF, 1.0]
    assert mean.cpu().numpy()[0] == np.float32(3e38)
    # NaN and infinite inputs still give NaN, as PyTorch's
    for values in ([INF, 1.0], [3e38, NAN], [INF, INF]):
        assert math.isnan(ember.tensor(values, device=device).var().item())


# ----------------------------------------------------------------------------- norms
@requires_torch
@pytest.mark.parametrize("p", [2, 1, 3, 0.5, INF, -INF, 0, -1])
def test_vector_norm_gradient_at_zero_matches_pytorch(p):
    torch = pytest.importorskip("torch")
    ours, theirs = _pair([0.0, 0.0, 0.0])
    ember.linalg.vector_norm(ours, p).backward()
    torch.linalg.vector_norm(theirs, p).backward()
    expected = np.zeros(3) if theirs.grad is None else theirs.grad.numpy()
    got = np.zeros(3) if ours.grad is None else ours.grad.numpy()
    np.testing.assert_array_equal(got, expected)
    assert not np.isnan(got).any()


@requires_torch
@pytest.mark.parametrize("p", [3, 0.5, INF, -INF, -1])
def test_vector_norm_gradient_with_a_zero_element_matches_pytorch(p):
    torch = pytest.importorskip("torch")
    ours, theirs = _pair([0.0, 1.0, -2.0])
    ember.linalg.vector_norm(ours, p).backward()
    torch.linalg.vector_norm(theirs, p).backward()
    _close(ours.grad, theirs.grad, rtol=1e-10)


def test_norm_of_a_zero_row_has_zero_gradient_and_second_gradient():
    x = ember.tensor([[0.0, 0.0], [3.0, 4.0]], requires_grad=True)
    out = ember.norm(x, dim=1)
    (grad,) = ember.autograd.grad(out.sum(), x, create_graph=True)
    np.testing.assert_allclose(grad.detach().numpy(), [[0, 0], [0.6, 0.8]])
    (second,) = ember.autograd.grad(grad.sum(), x)
    assert not np.isnan(second.numpy()).any()


def test_norm_forms():
    x = ember.tensor([[3.0, -4.0], [0.0, 12.0]])
    assert ember.norm(x).item() == pytest.approx(13.0)
    assert ember.norm(x, 1).item() == pytest.approx(19.0)
    assert ember.norm(x, INF).item() == pytest.approx(12.0)
    assert ember.norm(x, 0).item() == pytest.approx(3.0)
    np.testing.assert_allclose(ember.norm(x, dim=1).numpy(), [5.0, 12.0])
    assert x.norm(p="fro", dim=(0, 1), keepdim=True).shape == (1, 1)
    assert ember.linalg.matrix_norm(x, 1).item() == pytest.approx(16.0)
    assert ember.linalg.matrix_norm(x, INF).item() == pytest.approx(12.0)
    assert ember.linalg.matrix_norm(x, -INF).item() == pytest.approx(7.0)
    assert ember.linalg.matrix_norm(x, keepdim=True).shape == (1, 1)


@requires_torch
@pytest.mark.parametrize("ord", ["nuc", 2, -2])
def test_matrix_norms_from_singular_values_match_pytorch(ord):
    torch = pytest.importorskip("torch")
    if "linalg.svdvals" not in ember.ops.OPS:
        pytest.skip("ember.linalg.svdvals is not registered")
    values = np.random.default_rng(5).normal(size=(2, 3, 4))
    for dim, keepdim in (((-2, -1), False), ((0, 2), True)):
        ours, theirs = _pair(values)
        got = ember.linalg.matrix_norm(ours, ord, dim, keepdim)
        want = torch.linalg.matrix_norm(theirs, ord, dim, keepdim)
        assert tuple(got.shape) == tuple(want.shape)
        _close(got, want, rtol=1e-10)
        got.sum().backward()
        want.sum().backward()
        _close(ours.grad, theirs.grad, rtol=1e-8)
    _close(ember.norm(ember.tensor(values[0]), "nuc"),
           torch.norm(torch.tensor(values[0]), "nuc"), rtol=1e-10)


def test_norm_errors():
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or "
                       "complex tensor as input. Got Long"):
        ember.linalg.vector_norm(ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        ember.linalg.matrix_norm(ember.ones(3))
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        ember.linalg.matrix_norm(ember.ones(3, 3), 3)
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple"):
        ember.linalg.matrix_norm(ember.ones(3, 3), dim=(0,))
    with pytest.raises(TypeError, match="'ord' must be a number"):
        ember.linalg.vector_norm(ember.ones(3), "fro")


# ----------------------------------------------------------------------------- logsumexp
def test_logsumexp_is_stable_and_handles_infinities():
    x = ember.tensor([[1000.0, 1000.0], [-1000.0, -1000.0], [-INF, -INF], [INF, 1.0]])
    out = ember.logsumexp(x, 1).numpy()
    np.testing.assert_allclose(out[:2], [1000 + math.log(2), -1000 + math.log(2)])
    assert out[2] == -INF
    assert out[3] == INF
    assert ember.logsumexp(ember.zeros(0, 3), 0).numpy().tolist() == [-INF] * 3
    assert ember.logsumexp(ember.tensor([1, 2]), 0).dtype is ember.float32


@requires_torch
def test_logsumexp_gradient_with_minus_infinity_matches_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _pair([[-INF, -INF], [1.0, 2.0], [-INF, 0.5]])
    ember.logsumexp(ours, 1).sum().backward()
    torch.logsumexp(theirs, 1).sum().backward()
    _close(ours.grad, theirs.grad, rtol=1e-12)


# ----------------------------------------------------------------------------- ties
@requires_torch
@pytest.mark.parametrize("op", ["amax", "amin"])
def test_amax_amin_ties_share_the_gradient_like_pytorch(op):
    torch = pytest.importorskip("torch")
    values = [[1.5, 1.5, 0.0, -1.0], [2.0, -3.0, 2.0, 2.0], [-1.0, -1.0, -1.0, -1.0]]
    for dim in [(), 1, (0, 1), 0]:
        ours, theirs = _pair(values)
        upstream = np.random.default_rng(0).normal(size=np.shape(
            getattr(torch, op)(theirs, dim).detach().numpy()))
        getattr(ember, op)(ours, dim).backward(ember.tensor(upstream))
        getattr(torch, op)(theirs, dim).backward(torch.tensor(upstream))
        _close(ours.grad, theirs.grad, rtol=1e-12)


@requires_torch
def test_max_of_all_elements_shares_ties_like_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _pair([[3.0, 1.0], [3.0, 3.0]])
    ember.max(ours).backward()
    torch.max(theirs).backward()
    _close(ours.grad, theirs.grad)


@requires_torch
@pytest.mark.parametrize("op", [lambda lib, t: lib.max(t), lambda lib, t: lib.amax(t, 1),
                                lambda lib, t: lib.max(t, 1).values,
                                lambda lib, t: lib.linalg.vector_norm(t, INF, 1),
                                lambda lib, t: lib.cummax(t, 1).values])
def test_gradients_with_nan_match_pytorch(op):
    torch = pytest.importorskip("torch")
    ours, theirs = _pair([[1.0, NAN, 3.0, NAN], [1.0, 2.0, 3.0, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        op(ember, ours).sum().backward()
    op(torch, theirs).sum().backward()
    _close(ours.grad, theirs.grad)


def test_max_and_min_of_two_tensors_are_elementwise():
    a, b = ember.tensor([1.0, 5.0]), ember.tensor([3.0, 2.0])
    np.testing.assert_array_equal(ember.max(a, b).numpy(), [3.0, 5.0])
    np.testing.assert_array_equal(a.min(b).numpy(), [1.0, 2.0])


# ----------------------------------------------------------------------------- zeros
@requires_torch
@pytest.mark.parametrize("values", [[[2.0, 0.0, 3.0, -1.5], [1.0, 2.0, 0.5, 4.0]],
                                    [[0.0, 2.0, 0.0, 3.0], [0.0, 1.0, 1.0, 1.0]],
                                    [[0.0, 0.0, 0.0, 2.0], [1.5, 0.0, 2.0, 0.0]]])
def test_prod_and_cumprod_gradients_with_zeros_match_pytorch(values):
    torch = pytest.importorskip("torch")
    upstream = np.random.default_rng(3).normal(size=(2, 4))
    for dim in (None, 0, 1):
        ours, theirs = _pair(values)
        if dim is None:
            ember.prod(ours).backward()
            torch.prod(theirs).backward()
        else:
            ember.cumprod(ours, dim).backward(ember.tensor(upstream))
            torch.cumprod(theirs, dim).backward(torch.tensor(upstream))
            _close(ours.grad, theirs.grad, rtol=1e-12, atol=1e-12)
            ours.grad = None
            theirs.grad = None
            ember.prod(ours, dim).backward(ember.tensor(upstream[0] if dim == 0 else
                                                        upstream[:, 0]))
            torch.prod(theirs, dim).backward(torch.tensor(upstream[0] if dim == 0 else
                                                          upstream[:, 0]))
        _close(ours.grad, theirs.grad, rtol=1e-12, atol=1e-12)


@requires_torch
@pytest.mark.parametrize("op", ["cumprod", "prod"])
def test_second_derivatives_with_zeros_match_pytorch(op):
    torch = pytest.importorskip("torch")
    values = [[2.0, 0.0, 3.0, -1.5], [0.0, 2.0, 0.0, 3.0], [0.0, 0.0, 0.0, 2.0],
              [1.5, -2.0, 0.0, 0.5]]
    rng = np.random.default_rng(7)
    upstream = rng.normal(size=(4, 4) if op == "cumprod" else (4,))
    direction = rng.normal(size=(4, 4))
    results = []
    for lib, make in ((ember, ember.tensor), (torch, torch.tensor)):
        x = make(np.array(values)).requires_grad_(True)
        out = getattr(lib, op)(x, 1)
        (grad,) = lib.autograd.grad(out, x, make(upstream), create_graph=True)
        (second,) = lib.autograd.grad((grad * make(direction)).sum(), x)
        results.append((grad.detach().numpy(), second.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-12)


def test_prod_second_derivative_with_one_zero():
    # d^2 prod / dx_i dx_k = product of the others, also where x_k is the zero
    x = ember.tensor([2.0, 0.0, 3.0], dtype=ember.float64, requires_grad=True)
    (grad,) = ember.autograd.grad(ember.prod(x), x, create_graph=True)
    np.testing.assert_allclose(grad.detach().numpy(), [0.0, 6.0, 0.0])
    hessian = np.stack([ember.autograd.grad(grad[i], x, retain_graph=True)[0].numpy()
                        for i in range(3)])
    np.testing.assert_allclose(hessian, [[0, 3, 0], [3, 0, 2], [0, 2, 0]])


# ----------------------------------------------------------------------------- NaN, order
@requires_torch
def test_cummax_cummin_indices_with_ties_and_nan_match_pytorch():
    torch = pytest.importorskip("torch")
    values = [1.0, 3.0, 3.0, 2.0, 5.0, NAN, 1.0, NAN, 7.0]
    for op in ("cummax", "cummin"):
        ours, theirs = _pair(values, requires_grad=False)
        got, want = getattr(ember, op)(ours, 0), getattr(torch, op)(theirs, 0)
        _close(got.values, want.values)
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    ours, theirs = _pair([1.0, 0.0, 0.0, 2.0], requires_grad=False)
    np.testing.assert_array_equal(ember.cummin(ours, 0).indices.numpy(),
                                  torch.cummin(theirs, 0).indices.numpy())


@requires_torch
def test_cummax_gradient_goes_to_the_running_maximum():
    torch = pytest.importorskip("torch")
    ours, theirs = _pair([[1.0, 3.0, 2.0, 4.0], [5.0, 1.0, 2.0, 0.0]])
    upstream = np.arange(8.0).reshape(2, 4)
    ember.cummax(ours, 1).values.backward(ember.tensor(upstream))
    torch.cummax(theirs, 1).values.backward(torch.tensor(upstream))
    _close(ours.grad, theirs.grad)


@requires_torch
def test_median_and_nanmedian_with_nan_match_pytorch():
    torch = pytest.importorskip("torch")
    values = [[1.0, NAN, 3.0, NAN], [4.0, 2.0, 3.0, 1.0], [NAN, NAN, NAN, NAN]]
    ours, theirs = _pair(values, requires_grad=False)
    for op in ("median", "nanmedian"):
        got, want = getattr(ember, op)(ours, 1), getattr(torch, op)(theirs, 1)
        _close(got.values, want.values)
        # which NaN an all-NaN row reports is an accident of std::nth_element in PyTorch
        np.testing.assert_array_equal(got.indices.numpy()[:2], want.indices.numpy()[:2])
        _close(getattr(ember, op)(ours), getattr(torch, op)(theirs))
    assert ember.median(ember.tensor([4.0, 1.0, 3.0, 2.0])).item() == 2.0  # lower median


@requires_torch
def test_sort_descending_stable_with_nan_matches_pytorch():
    torch = pytest.importorskip("torch")
    values = [1.0, NAN, 3.0, 1.0, -2.0, 3.0, NAN]
    ours, theirs = _pair(values, requires_grad=False)
    for descending in (False, True):
        got = ember.sort(ours, descending=descending, stable=True)
        want = torch.sort(theirs, descending=descending, stable=True)
        _close(got.values, want.values)
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    got, want = ember.topk(ours, 3), torch.topk(theirs, 3)
    _close(got.values, want.values)


def test_sort_gradient_has_a_working_double_backward():
    x = ember.tensor([3.0, 1.0, 2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t: ember.sort(t).values ** 2, (x,))
    assert ember.autograd.gradgradcheck(lambda t: ember.topk(t, 2).values ** 3, (x,))


# ----------------------------------------------------------------------------- shapes
@pytest.mark.parametrize("op", [
    lambda x: ember.sum(x, 1, keepdim=True), lambda x: ember.mean(x, 1, keepdim=True),
    lambda x: ember.prod(x, 1, keepdim=True), lambda x: ember.max(x, 1, keepdim=True).values,
    lambda x: ember.amax(x, 1, keepdim=True), lambda x: ember.argmin(x, 1, keepdim=True),
    lambda x: ember.var(x, 1, keepdim=True), lambda x: ember.std_mean(x, 1, keepdim=True)[1],
    lambda x: ember.logsumexp(x, 1, keepdim=True), lambda x: ember.all(x, 1, keepdim=True),
    lambda x: ember.median(x, 1, keepdim=True).indices,
    lambda x: ember.norm(x, 2, 1, keepdim=True), lambda x: ember.nansum(x, 1, keepdim=True)])
def test_keepdim_keeps_a_size_one_dim(op):
    assert op(ember.randn(2, 3, 4)).shape == (2, 1, 4)


def test_dim_tuples_and_full_keepdim():
    x = ember.randn(2, 3, 4)
    assert ember.sum(x, (0, 2)).shape == (3,)
    assert ember.amin(x, (0, 2), keepdim=True).shape == (1, 3, 1)
    assert ember.argmax(x, keepdim=True).shape == (1, 1, 1)
    assert ember.count_nonzero(x, (0, 1)).shape == (4,)


def test_numpy_axis_and_keepdims_aliases():
    x = ember.randn(2, 3)
    assert ember.sum(x, axis=0).shape == (3,)
    assert x.mean(axis=1, keepdims=True).shape == (2, 1)
    assert ember.max(x, axis=0).indices.shape == (3,)
    assert x.argmax(axis=1).shape == (2,)
    assert ember.sort(x, axis=0).values.shape == (2, 3)
    with pytest.raises(TypeError, match=r"sum\(\): got both 'dim' and its alias 'axis'"):
        ember.sum(x, dim=0, axis=0)
    # every op with a dim takes the alias, as in PyTorch (the registry adds it)
    assert ember.cat([x, x], axis=1).shape == (2, 6)
    assert ember.stack([x, x], axis=2).shape == (2, 3, 2)
    assert x[:1].squeeze(axis=0).shape == (3,)
    assert x.unsqueeze(axis=0).shape == (1, 2, 3)
    assert x.cumsum(axis=1).shape == (2, 3)
    assert x.index_select(axis=1, index=ember.tensor([0])).shape == (2, 1)


def test_zero_dim_inputs():
    x = ember.tensor(2.5, requires_grad=True)
    assert ember.sum(x, 0).shape == ()
    values, indices = ember.sort(x)
    assert values.shape == () and indices.item() == 0
    assert ember.topk(x, 1).values.item() == 2.5
    assert ember.cummax(x, 0).indices.item() == 0
    assert ember.median(x, 0).values.item() == 2.5
    assert ember.argmax(x, 0).item() == 0
    ember.cumsum(x, 0).backward()
    assert x.grad.item() == 1.0


# ----------------------------------------------------------------------------- errors
def test_reductions_over_empty_dims_raise_pytorchs_errors():
    empty = ember.zeros(0, 3)
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim 0 to have "
                       "non-zero size"):
        ember.amax(empty, 0)
    with pytest.raises(RuntimeError, match=r"amin\(\): Expected reduction dim to be specified"):
        ember.amin(empty)
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have "
                       "non-zero size"):
        ember.max(empty, 0)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        ember.max(empty)
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim to be specified"):
        ember.argmax(empty)
    with pytest.raises(IndexError, match=r"median\(\): Expected reduction dim 0"):
        ember.median(empty, 0)
    assert ember.amax(empty, 1).shape == (0,)
    assert math.isnan(ember.mean(ember.zeros(0)).item())
    assert math.isnan(ember.median(ember.zeros(0)).item())
    assert ember.sum(empty).item() == 0
    assert ember.prod(empty, 0).numpy().tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("call", [
    lambda x: ember.sum(x, 2), lambda x: ember.mean(x, -3), lambda x: ember.amax(x, (0, 5)),
    lambda x: ember.max(x, 2), lambda x: ember.argmax(x, 2), lambda x: ember.var(x, 2),
    lambda x: ember.cumsum(x, 2), lambda x: ember.sort(x, 2), lambda x: ember.topk(x, 1, 2),
    lambda x: ember.median(x, -3), lambda x: ember.logsumexp(x, 2),
    lambda x: ember.linalg.vector_norm(x, 2, 2)])
def test_dim_out_of_range_message(call):
    x = ember.randn(2, 3)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                       r"\[-2, 1\], but got (2|-3|5)\)"):
        call(x)


@pytest.mark.parametrize("call", [ember.argmax, ember.argmin, ember.median, ember.nanmedian,
                                  lambda x: ember.topk(x, 1), lambda x: ember.kthvalue(x, 1)])
def test_order_statistics_reject_bool_like_pytorch(call):
    # median and kthvalue: PyTorch's NotImplementedError (a RuntimeError)
    with pytest.raises(RuntimeError, match="does not support bool input|not implemented for "
                                           "'Bool'"):
        call(ember.tensor([True, False]))


def test_other_argument_errors():
    x = ember.randn(2, 3)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        ember.sum(x, (0, 0))
    with pytest.raises(RuntimeError, match=r"topk\(\): selected index k out of range"):
        ember.topk(x, 4)
    with pytest.raises(RuntimeError, match="k out of range"):
        ember.topk(x, -1)
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range"):
        ember.kthvalue(x, 4)
    with pytest.raises(TypeError, match=r"argmax\(\): argument 'dim' must be int, not tuple"):
        ember.argmax(x, (0,))
    with pytest.raises(TypeError, match=r"cumsum\(\) missing 1 required positional argument"):
        ember.cumsum(x)
    with pytest.raises(TypeError, match=r"sum\(\): argument 'input' must be a Tensor"):
        ember.sum([1, 2])
    with pytest.raises(RuntimeError, match=r"var\(\): std and var only support floating"):
        ember.var(ember.tensor([1, 2, 3]))
