"""Edge cases of the elementwise ops that the op table does not reach: result dtypes of
integer inputs, rounding modes on negatives, clamp's bounds, special-function accuracy,
stability at extreme values, in-place forms and error messages."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember

from ..conftest import requires_torch


def _torch():
    return pytest.importorskip("torch")


def _np(t):
    return t.detach().cpu().numpy()


# ----------------------------------------------------------------------------- dtypes
FLOAT_OPS = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
             "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
             "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv", "sigmoid"]


@requires_torch
@pytest.mark.parametrize("name", FLOAT_OPS)
def test_integer_input_to_float_op_gives_float32_like_torch(name, device):
    torch = _torch()
    values = [-2, -1, 0, 1, 3]
    ours = getattr(ember, name)(ember.tensor(values, device=device))
    theirs = getattr(torch, name)(torch.tensor(values))
    assert ours.dtype is ember.float32
    np.testing.assert_allclose(_np(ours), theirs.numpy(), rtol=1e-6, atol=1e-6, equal_nan=True)


def test_bool_input_to_float_op_gives_float32():
    assert ember.exp(ember.tensor([True, False])).dtype is ember.float32


def test_int_divided_by_int_is_float32():
    a, b = ember.tensor([7, -7, 1]), ember.tensor([2, 2, 3])
    q = a / b
    assert q.dtype is ember.float32
    np.testing.assert_allclose(_np(q), [3.5, -3.5, 1 / 3], rtol=1e-6)
    assert (a / 2).dtype is ember.float32
    assert ember.true_divide(a, b).dtype is ember.float32


@requires_torch
@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("dtype", ["int64", "float64", "float32"])
def test_division_rounding_modes_on_negatives_match_torch(mode, dtype):
    torch = _torch()
    a = [-7, 7, -7, 7, -1, 0, 5, -6]
    b = [2, -2, -2, 2, 3, 3, -3, 4]
    ours = ember.div(ember.tensor(a, dtype=getattr(ember, dtype)),
                     ember.tensor(b, dtype=getattr(ember, dtype)), rounding_mode=mode)
    theirs = torch.div(torch.tensor(a, dtype=getattr(torch, dtype)),
                       torch.tensor(b, dtype=getattr(torch, dtype)), rounding_mode=mode)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(_np(ours), theirs.numpy(), rtol=1e-6)


@requires_torch
def test_floor_divide_remainder_fmod_signs_match_torch():
    torch = _torch()
    a, b = [-7, 7, -7, 7, -5], [2, -2, -2, 2, 5]
    for name in ("floor_divide", "remainder", "fmod"):
        ours = getattr(ember, name)(ember.tensor(a), ember.tensor(b))
        theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
        assert ours.dtype is ember.int64, name
        assert _np(ours).tolist() == theirs.tolist(), name
    af = ember.tensor([-7.5, 7.5, -0.5])
    np.testing.assert_allclose(_np(ember.fmod(af, 2.0)), [-1.5, 1.5, -0.5])
    np.testing.assert_allclose(_np(ember.remainder(af, 2.0)), [0.5, 1.5, 1.5])


def test_div_rejects_an_unknown_rounding_mode():
    with pytest.raises(RuntimeError, match="rounding_mode to be one of None, 'trunc', or 'floor'"):
        ember.div(ember.tensor([1.0]), 2.0, rounding_mode="round")


@requires_torch
def test_pow_promotion_and_scalar_base_match_torch():
    torch = _torch()
    ours = ember.pow(2.0, ember.tensor([1, 2, 3]))
    assert ours.dtype is ember.float32
    np.testing.assert_allclose(_np(ours), torch.pow(2.0, torch.tensor([1, 2, 3])).numpy())
    assert ember.pow(ember.tensor([1, 2, 3]), 2).dtype is ember.int64
    with pytest.raises(RuntimeError, match="negative integer powers"):
        ember.pow(ember.tensor([1, 2]), -1)


# ----------------------------------------------------------------------------- clamp
@requires_torch
def test_clamp_with_tensor_bounds_broadcasts_and_matches_torch_gradients():
    torch = _torch()
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, (2, 3, 4))
    low = rng.uniform(-1, 0, (3, 1))
    high = rng.uniform(0, 1, (4,))
    high[0] = -2.0  # min > max here: the result is max, min gets no gradient
    x[0, 0, 1] = low[0, 0]  # exactly at a bound: the gradient passes (inclusive)
    x[1, 2, 2] = high[2]
    tensors = [ember.tensor(v, requires_grad=True) for v in (x, low, high)]
    ours = ember.clamp(*tensors)
    t_tensors = [torch.tensor(v, requires_grad=True) for v in (x, low, high)]
    theirs = torch.clamp(*t_tensors)
    np.testing.assert_allclose(_np(ours), theirs.detach().numpy())
    upstream = rng.standard_normal(theirs.shape)
    ours.backward(ember.tensor(upstream))
    theirs.backward(torch.tensor(upstream))
    for mine, reference in zip(tensors, t_tensors):
        np.testing.assert_allclose(_np(mine.grad), reference.grad.numpy())


def test_clamp_gradient_passes_at_the_bounds():
    x = ember.tensor([-1.0, -0.5, 0.0, 0.5, 1.0], requires_grad=True)
    ember.clamp(x, -0.5, 0.5).sum().backward()
    assert _np(x.grad).tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]


def test_clamp_dtype_and_errors():
    assert ember.clamp(ember.tensor([-3, 2]), min=0.5).dtype is ember.float32
    assert ember.clamp(ember.tensor([-3, 2]), min=0).dtype is ember.int64
    assert _np(ember.clip(ember.tensor([-3.0, 2.0]), max=1.0)).tolist() == [-3.0, 1.0]
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        ember.clamp(ember.tensor([1.0]))
    with pytest.raises(TypeError, match="argument 'min' must be a number or a Tensor"):
        ember.clamp(ember.tensor([1.0]), min="0")
    with pytest.raises(TypeError, match="both be numbers or both be Tensors"):
        ember.clamp(ember.tensor([1.0]), ember.tensor([0.0]), 2.0)


def test_clamp_propagates_nan():
    out = ember.clamp(ember.tensor([float("nan"), 5.0]), -1.0, 1.0)
    assert math.isnan(_np(out)[0]) and _np(out)[1] == 1.0


# ----------------------------------------------------------------------------- special functions
@requires_torch
def test_erf_erfc_match_torch_to_1e12_in_float64():
    torch = _torch()
    x = np.concatenate([np.linspace(-7, 7, 1401), np.linspace(-28, 28, 57),
                        [0.0, -0.0, 0.5, -0.5, 4.0, -4.0, 1e-300, 26.5, np.inf, -np.inf, np.nan]])
    for name in ("erf", "erfc"):
        ours = _np(getattr(ember, name)(ember.tensor(x)))
        theirs = getattr(torch, name)(torch.tensor(x)).numpy()
        scale = np.maximum(np.abs(theirs), 1e-300)
        finite = np.isfinite(theirs)
        assert np.max(np.abs(ours - theirs)[finite] / scale[finite]) < 1e-12, name
        assert np.array_equal(np.isnan(ours), np.isnan(theirs)), name
    assert _np(ember.erf(ember.tensor([np.inf, -np.inf]))).tolist() == [1.0, -1.0]
    assert _np(ember.erfc(ember.tensor([np.inf, -np.inf]))).tolist() == [0.0, 2.0]


@requires_torch
def test_erfinv_matches_torch_to_1e12_in_float64_including_the_tails():
    torch = _torch()
    y = np.concatenate([np.linspace(-0.999, 0.999, 2001), 1 - np.logspace(-16, -1, 40),
                        -1 + np.logspace(-16, -1, 40), [1e-300, 0.5, -0.5]])
    ours = _np(ember.erfinv(ember.tensor(y)))
    theirs = torch.erfinv(torch.tensor(y)).numpy()
    assert np.max(np.abs(ours - theirs) / np.abs(theirs)) < 1e-12
    edges = _np(ember.special.erfinv(ember.tensor([1.0, -1.0, 1.5, np.nan])))
    assert edges[0] == np.inf and edges[1] == -np.inf and np.isnan(edges[2:]).all()
    # round trip (beyond |x| = 3, erf(x) rounds away too many digits of 1 - |erf|)
    x = ember.tensor(np.linspace(-3, 3, 61))
    np.testing.assert_allclose(_np(ember.erfinv(ember.erf(x))), _np(x), rtol=1e-9)


def test_special_namespace_names():
    x = ember.tensor([0.25, 0.5])
    assert ember.special.expit is ember.sigmoid
    np.testing.assert_allclose(_np(ember.special.logit(ember.special.expit(x))), _np(x),
                               rtol=1e-6)
    for name in ("erf", "erfc", "erfinv", "exp2", "expm1", "log1p", "round", "logit"):
        assert callable(getattr(ember.special, name)), name


@requires_torch
def test_logit_eps_matches_torch():
    torch = _torch()
    p = [0.0, 0.05, 0.5, 0.97, 1.0]
    ours = ember.tensor(p, dtype=ember.float64, requires_grad=True)
    theirs = torch.tensor(p, dtype=torch.float64, requires_grad=True)
    a, b = ember.logit(ours, eps=0.1), torch.logit(theirs, eps=0.1)
    np.testing.assert_allclose(_np(a), b.detach().numpy())
    a.sum().backward()
    b.sum().backward()
    np.testing.assert_allclose(_np(ours.grad), theirs.grad.numpy())


# ----------------------------------------------------------------------------- stability
def test_small_arguments_keep_their_precision():
    tiny = ember.tensor([1e-20, -1e-18], dtype=ember.float64)
    np.testing.assert_allclose(_np(ember.log1p(tiny)), [1e-20, -1e-18], rtol=1e-15)
    np.testing.assert_allclose(_np(ember.expm1(tiny)), [1e-20, -1e-18], rtol=1e-15)


def test_large_arguments_do_not_overflow():
    big = ember.tensor([1000.0, -1000.0])
    np.testing.assert_allclose(_np(ember.logaddexp(big, big)), [1000 + math.log(2),
                                                                -1000 + math.log(2)],
                               rtol=1e-6)
    np.testing.assert_allclose(_np(ember.hypot(ember.tensor([1e200], dtype=ember.float64),
                                               ember.tensor([1e200], dtype=ember.float64))),
                               [math.sqrt(2) * 1e200])
    x = ember.tensor([-400.0, 400.0], requires_grad=True)
    s = ember.sigmoid(x)
    assert _np(s).tolist() == [0.0, 1.0]
    s.sum().backward()
    assert np.isfinite(_np(x.grad)).all()


def test_logaddexp_gradient_far_apart_is_finite():
    a = ember.tensor([1000.0, -1000.0], requires_grad=True)
    b = ember.tensor([-1000.0, 1000.0], requires_grad=True)
    ember.logaddexp(a, b).sum().backward()
    assert _np(a.grad).tolist() == [1.0, 0.0]
    assert _np(b.grad).tolist() == [0.0, 1.0]


# ----------------------------------------------------------------------------- rounding
@requires_torch
def test_round_half_to_even_and_decimals_match_torch():
    torch = _torch()
    values = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.2345, -123.456, 155.0]
    for decimals in (0, 1, 2, -1, -2):
        ours = ember.round(ember.tensor(values, dtype=ember.float64), decimals=decimals)
        theirs = torch.round(torch.tensor(values, dtype=torch.float64), decimals=decimals)
        np.testing.assert_allclose(_np(ours), theirs.numpy(), err_msg=f"decimals={decimals}")


def test_rounding_ops_on_integers_and_their_errors():
    i = ember.tensor([-3, 2])
    for name in ("floor", "ceil", "round", "trunc"):
        out = getattr(ember, name)(i)
        assert out.dtype is ember.int64 and _np(out).tolist() == [-3, 2]
    with pytest.raises(NotImplementedError, match="frac"):
        ember.frac(i)
    np.testing.assert_allclose(_np(ember.frac(ember.tensor([-1.25, 2.5]))), [-0.25, 0.5])
    x = ember.tensor([0.3, 1.7], requires_grad=True)
    (ember.floor(x) + ember.frac(x)).sum().backward()
    assert _np(x.grad).tolist() == [1.0, 1.0]


# ----------------------------------------------------------------------------- nan_to_num
def test_nan_to_num_defaults_are_the_dtype_limits():
    for dtype, np_dtype in ((ember.float32, np.float32), (ember.float64, np.float64)):
        x = ember.tensor([np.nan, np.inf, -np.inf, 1.5], dtype=dtype)
        out = _np(ember.nan_to_num(x))
        info = np.finfo(np_dtype)
        assert out.tolist() == [0.0, float(info.max), float(info.min), 1.5]
        assert ember.nan_to_num(x).dtype is dtype
    custom = ember.tensor([np.nan, np.inf, -np.inf]).nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0)
    assert _np(custom).tolist() == [1.0, 2.0, -3.0]
    assert _np(ember.nan_to_num(ember.tensor([1, 2]))).tolist() == [1, 2]


def test_nan_to_num_gradient_is_zero_at_replaced_elements():
    x = ember.tensor([np.nan, np.inf, 2.0], requires_grad=True)
    ember.nan_to_num(x).sum().backward()
    assert _np(x.grad).tolist() == [0.0, 0.0, 1.0]


def test_isnan_isinf_isfinite():
    x = ember.tensor([np.nan, np.inf, -np.inf, 0.0])
    assert _np(ember.isnan(x)).tolist() == [True, False, False, False]
    assert _np(x.isinf()).tolist() == [False, True, True, False]
    assert _np(ember.isfinite(x)).tolist() == [False, False, False, True]
    assert _np(ember.isfinite(ember.tensor([1, 2]))).tolist() == [True, True]
    assert _np(ember.isnan(ember.tensor([True]))).tolist() == [False]


# ----------------------------------------------------------------------------- binary specials
def test_fmax_fmin_ignore_nan_and_give_ties_to_input():
    a = ember.tensor([np.nan, 1.0, 2.0, np.nan], requires_grad=True)
    b = ember.tensor([3.0, np.nan, 2.0, np.nan], requires_grad=True)
    out = ember.fmax(a, b)
    assert _np(out)[:3].tolist() == [3.0, 1.0, 2.0] and np.isnan(_np(out)[3])
    out.sum().backward()
    assert _np(a.grad).tolist() == [0.0, 1.0, 1.0, 1.0]
    assert _np(b.grad).tolist() == [1.0, 0.0, 0.0, 0.0]
    assert _np(ember.fmin(ember.tensor([np.nan, 5.0]), ember.tensor([1.0, 2.0]))).tolist() == [
        1.0, 2.0]


def test_maximum_ties_split_the_gradient():
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = ember.tensor([1.0, 3.0], requires_grad=True)
    ember.maximum(a, b).sum().backward()
    assert _np(a.grad).tolist() == [0.5, 0.0]
    assert _np(b.grad).tolist() == [0.5, 1.0]


def test_float_only_binary_ops_reject_integers_and_numbers():
    i = ember.tensor([1, 2])
    with pytest.raises(NotImplementedError, match="hypot"):
        ember.hypot(i, i)
    with pytest.raises(NotImplementedError, match="logaddexp"):
        ember.logaddexp(i, i)
    with pytest.raises(TypeError, match="atan2"):
        ember.atan2(ember.tensor([1.0]), 2.0)
    assert ember.atan2(i, i).dtype is ember.float32


@requires_torch
def test_shifts_match_torch_and_reject_floats():
    torch = _torch()
    a, s = [1, -16, 5, 7], [3, 2, 0, 1]
    assert _np(ember.tensor(a) << ember.tensor(s)).tolist() == (
        torch.tensor(a) << torch.tensor(s)).tolist()
    assert _np(ember.tensor(a) >> 1).tolist() == (torch.tensor(a) >> 1).tolist()
    x = ember.tensor([3])
    x <<= 2
    assert _np(x).tolist() == [12]
    with pytest.raises(RuntimeError, match="bitwise_left_shift"):
        ember.tensor([1.0]) << 1


# ----------------------------------------------------------------------------- lerp
def test_lerp_values_gradients_and_errors():
    start = ember.tensor([0.0, 1.0], requires_grad=True)
    end = ember.tensor([10.0, 3.0], requires_grad=True)
    weight = ember.tensor([0.25, 1.0], requires_grad=True)
    out = ember.lerp(start, end, weight)
    assert _np(out).tolist() == [2.5, 3.0]
    out.sum().backward()
    assert _np(start.grad).tolist() == [0.75, 0.0]
    assert _np(end.grad).tolist() == [0.25, 1.0]
    assert _np(weight.grad).tolist() == [10.0, 2.0]
    with pytest.raises(RuntimeError, match="expected dtype float32 for `end`"):
        ember.lerp(ember.zeros(2), ember.ones(2, dtype=ember.float64), 0.5)
    with pytest.raises(NotImplementedError, match="lerp"):
        ember.lerp(ember.tensor([1]), ember.tensor([2]), 0.5)


# ----------------------------------------------------------------------------- masked_fill
def test_masked_fill_value_tensor_gets_the_gradient():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    value = ember.tensor(7.0, requires_grad=True)
    mask = ember.tensor([True, False])
    out = x.masked_fill(mask, value)
    assert _np(out).tolist() == [[7.0, 2.0], [7.0, 4.0]]
    (out * ember.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert _np(value.grad).tolist() == 4.0
    assert _np(x.grad).tolist() == [[0.0, 2.0], [0.0, 4.0]]


def test_masked_fill_errors_and_in_place():
    x = ember.zeros(3)
    with pytest.raises(RuntimeError, match="only supports boolean masks, but got mask with "
                                           "dtype int64"):
        x.masked_fill(ember.tensor([1, 0, 1]), 1.0)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        x.masked_fill(ember.tensor([True, False, True]), ember.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="'value' must be a number or a 0-d Tensor"):
        x.masked_fill(ember.tensor([True, False, True]), "1")
    out = x.masked_fill_(ember.tensor([True, False, True]), 2.0)
    assert out is x and _np(x).tolist() == [2.0, 0.0, 2.0]
    assert ember.masked_fill(ember.zeros(3), ember.tensor([[True], [False]]), 1.0).shape == (2, 3)
    ints = ember.tensor([1, 2, 3]).masked_fill(ember.tensor([True, False, False]), 9)
    assert ints.dtype is ember.int64 and _np(ints).tolist() == [9, 2, 3]


# ----------------------------------------------------------------------------- in-place methods
@requires_torch
@pytest.mark.parametrize("name", ["exp_", "sqrt_", "abs_", "sin_", "log_", "sigmoid_", "tanh_",
                                  "floor_", "reciprocal_", "erf_", "square_", "expm1_",
                                  "log1p_", "rsqrt_", "frac_"])
def test_inplace_methods_match_torch_including_gradients(name):
    torch = _torch()
    values = [0.3, 1.7, 2.2]
    x = ember.tensor(values, dtype=ember.float64, requires_grad=True)
    y = x * 1.0
    result = getattr(y, name)()
    assert result is y
    tx = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    ty = tx * 1.0
    getattr(ty, name)()
    np.testing.assert_allclose(_np(y), ty.detach().numpy())
    (y * ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)).sum().backward()
    (ty * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(_np(x.grad), tx.grad.numpy())


def test_inplace_clamp_with_tensor_bound_and_errors():
    y = ember.tensor([-2.0, 0.0, 2.0])
    y.clamp_(min=ember.tensor([-1.0, 1.0, 1.0]))
    assert _np(y).tolist() == [-1.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type int64"):
        ember.tensor([1, 2]).exp_()
    leaf = ember.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.exp_()


def test_saved_input_changed_in_place_later_raises():
    x = ember.tensor([0.5, 1.0], requires_grad=True)
    y = x * 1.0
    z = ember.sin(y)
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


# ----------------------------------------------------------------------------- more special
@requires_torch
def test_normal_distribution_functions_match_torch_in_the_tails():
    torch = _torch()
    p = np.concatenate([np.logspace(-300, -1, 60), np.linspace(0.05, 0.95, 19),
                        1 - np.logspace(-16, -1, 16)])
    ours = _np(ember.special.ndtri(ember.tensor(p)))
    theirs = torch.special.ndtri(torch.tensor(p)).numpy()
    assert np.max(np.abs(ours - theirs) / np.abs(theirs)) < 1e-12
    x = np.concatenate([np.linspace(-40, 10, 101), [-1e4]])
    ours = _np(ember.special.log_ndtr(ember.tensor(x)))
    theirs = torch.special.log_ndtr(torch.tensor(x)).numpy()
    assert np.max(np.abs(ours - theirs) / np.abs(theirs)) < 1e-12
    # PyTorch's ndtr loses relative accuracy below x = -3 (1e-2 at -8): compare there with
    # mpmath, above with PyTorch
    upper = np.linspace(-3, 10, 53)
    ours = _np(ember.special.ndtr(ember.tensor(upper)))
    theirs = torch.special.ndtr(torch.tensor(upper)).numpy()
    assert np.max(np.abs(ours - theirs) / theirs) < 1e-12
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    lower = np.linspace(-37, -3, 35)
    exact = np.array([float(mpmath.ncdf(v)) for v in lower])
    ours = _np(ember.special.ndtr(ember.tensor(lower)))
    # erfc's condition number 2 z^2 limits any float64 method to about 1e-13 at -37
    assert np.max(np.abs(ours - exact) / exact) < 1e-12
    edges = _np(ember.special.ndtri(ember.tensor([0.0, 1.0, -0.5])))
    assert edges[0] == -np.inf and edges[1] == np.inf and np.isnan(edges[2])
    x = ember.tensor([-50.0], dtype=ember.float64, requires_grad=True)
    ember.special.log_ndtr(x).backward()
    assert np.isfinite(_np(x.grad)).all() and _np(x.grad)[0] > 49.0


@requires_torch
def test_xlogy_at_zero_and_its_gradients_match_torch():
    torch = _torch()
    x = [0.0, 0.0, 2.0, 0.0, 1.5]
    y = [0.0, 3.0, 0.5, np.nan, 2.0]
    a, b = ember.tensor(x, requires_grad=True), ember.tensor(y, requires_grad=True)
    ta, tb = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    ours, theirs = ember.xlogy(a, b), torch.xlogy(ta, tb)
    np.testing.assert_allclose(_np(ours), theirs.detach().numpy(), equal_nan=True)
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(_np(a.grad), ta.grad.numpy(), equal_nan=True)
    np.testing.assert_allclose(_np(b.grad), tb.grad.numpy(), equal_nan=True)
    assert ember.special.xlogy(ember.tensor([1, 2]), 3).dtype is ember.float32


def test_sinc_at_zero():
    x = ember.tensor([0.0, 0.5], requires_grad=True)
    out = ember.sinc(x)
    np.testing.assert_allclose(_np(out), [1.0, 2 / np.pi], rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [0.0, -4 / np.pi], rtol=1e-5)


def test_clamp_min_and_max():
    x = ember.tensor([-2.0, 0.0, 2.0])
    assert _np(ember.clamp_min(x, -1.0)).tolist() == [-1.0, 0.0, 2.0]
    assert _np(x.clamp_max(ember.tensor([0.0, 0.0, 1.0]))).tolist() == [-2.0, 0.0, 1.0]
    x.clamp_min_(0.5)
    assert _np(x).tolist() == [0.5, 0.5, 2.0]


def test_rounded_division_has_a_zero_gradient_and_integer_zero_division_raises():
    x = ember.tensor([1.5, -2.5], requires_grad=True)
    y = ember.div(x, 2.0, rounding_mode="floor")
    assert y.requires_grad and y.grad_fn.name() == "DivBackward2"
    y.sum().backward()
    assert _np(x.grad).tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ember.tensor([1, 2]) // ember.tensor([1, 0])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ember.div(ember.tensor([1, 2]), 0, rounding_mode="trunc")
    assert _np(ember.div(ember.tensor([1.0, -1.0]), 0.0, rounding_mode="trunc")).tolist() == [
        np.inf, -np.inf]
