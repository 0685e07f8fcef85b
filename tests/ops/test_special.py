"""The special functions beyond the op table: special values (poles, infinities, NaN) and
wide ranges against PyTorch, accuracy against mpmath, dtype rules, errors, gradients that
PyTorch lacks or refuses, names and in-place forms, and SciPy being optional."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import ember
from ember import special

from ..conftest import HAVE_TORCH

needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")
EDGES = np.array([0.0, -0.0, -1.0, -2.0, -3.5, -0.5, 1e-300, 1e-10, -1e-10, 0.5, 1.0, 2.0,
                  1e3, 1e8, 1e15, np.inf, -np.inf, np.nan, -100.5, 170.0, 200.0])
WIDE = np.concatenate([np.linspace(-30.0, 60.0, 901), EDGES, np.exp(np.linspace(-20, 20, 81))])


def _t(values, dtype=ember.float64, **kwargs):
    return ember.tensor(np.asarray(values), dtype=dtype, **kwargs)


def _close(ours, theirs, rtol, atol=0.0):
    np.testing.assert_allclose(np.asarray(ours, np.float64), np.asarray(theirs, np.float64),
                               rtol=rtol, atol=atol, equal_nan=True)


# ----------------------------------------------------------------------------- against PyTorch
UNARY = [  # (ember function, torch name, float64 rtol, float32 rtol)
    (ember.lgamma, "lgamma", 1e-12, 1e-6),
    (special.gammaln, "special.gammaln", 1e-12, 1e-6),
    (special.i0e, "special.i0e", 1e-13, 1e-6),
    (special.i1e, "special.i1e", 1e-13, 1e-6),
    (special.scaled_modified_bessel_k0, "special.scaled_modified_bessel_k0", 1e-12, 1e-6),
    (special.scaled_modified_bessel_k1, "special.scaled_modified_bessel_k1", 1e-12, 1e-6),
    (special.modified_bessel_k0, "special.modified_bessel_k0", 1e-12, 1e-6),
    (special.modified_bessel_k1, "special.modified_bessel_k1", 1e-12, 1e-6),
    (special.spherical_bessel_j0, "special.spherical_bessel_j0", 1e-12, 1e-6),
]


def _torch_fn(torch, name):
    target = torch
    for part in name.split("."):
        target = getattr(target, part)
    return target


@needs_torch
@pytest.mark.parametrize("function,name,rtol64,rtol32", UNARY, ids=[u[1] for u in UNARY])
def test_wide_range_and_special_values_match_pytorch(function, name, rtol64, rtol32):
    import torch

    reference = _torch_fn(torch, name)
    _close(function(_t(WIDE)).numpy(), reference(torch.tensor(WIDE)).numpy(), rtol64, 1e-300)
    x32 = WIDE.astype(np.float32)
    _close(function(_t(x32, ember.float32)).numpy(), reference(torch.tensor(x32)).numpy(),
           rtol32, 1e-37)


@needs_torch
def test_digamma_polygamma_erfcx_i0_i1_match_pytorch_in_float64():
    import torch

    x = torch.tensor(WIDE)
    _close(ember.digamma(_t(WIDE)).numpy(), torch.digamma(x).numpy(), 1e-11, 1e-12)
    for n in (2, 3, 5):
        _close(ember.polygamma(n, _t(WIDE)).numpy(), torch.polygamma(n, x).numpy(), 1e-9)
    # trigamma: PyTorch's poles are large finite numbers (see the next test)
    off_poles = WIDE[(WIDE > 0) | (WIDE != np.floor(WIDE))]
    _close(ember.polygamma(1, _t(off_poles)).numpy(),
           torch.polygamma(1, torch.tensor(off_poles)).numpy(), 1e-9)
    _close(special.erfcx(_t(WIDE)).numpy(), torch.special.erfcx(x).numpy(), 1e-13)
    _close(ember.mvlgamma(_t(WIDE), p=3).numpy(), torch.mvlgamma(x, p=3).numpy(), 1e-11, 1e-12)
    finite = WIDE[np.abs(WIDE) < 700]
    for ours, theirs in ((ember.i0, torch.i0), (special.i1, torch.special.i1),
                         (special.modified_bessel_i0, torch.special.modified_bessel_i0),
                         (special.modified_bessel_i1, torch.special.modified_bessel_i1)):
        _close(ours(_t(finite)).numpy(), theirs(torch.tensor(finite)).numpy(), 1e-13)


@needs_torch
def test_deliberate_differences_from_pytorch():
    """Where PyTorch's value is an artefact, ember gives the mathematical one."""
    import torch

    # I0 and I1 at +-inf are +-inf (PyTorch: NaN), and finite up to where they overflow
    assert ember.i0(_t([np.inf, -np.inf])).tolist() == [np.inf, np.inf]
    assert special.i1(_t([np.inf, -np.inf])).tolist() == [np.inf, -np.inf]
    assert torch.isnan(torch.i0(torch.tensor([np.inf]))).all()
    assert np.isfinite(ember.i0(_t([710.0])).item()) and torch.i0(torch.tensor([710.0])) == np.inf
    # trigamma's poles are inf (PyTorch: large finite values from sin(pi n) != 0)
    assert ember.polygamma(1, _t([-1.0, -2.0, 0.0])).tolist() == [np.inf] * 3


@needs_torch
def test_incomplete_gamma_special_values_match_pytorch():
    import torch

    values = np.array([0.0, -1.0, 1e-300, 0.5, 1.0, 3.0, 50.0, np.inf, -np.inf, np.nan])
    a, x = (v.ravel() for v in np.meshgrid(values, values, indexing="ij"))
    for ours, theirs in ((ember.igamma, torch.igamma), (ember.igammac, torch.igammac)):
        expected = theirs(torch.tensor(a), torch.tensor(x)).numpy()
        # a = x = 50 falls in PyTorch's asymptotic branch, good to about 5e-10
        _close(ours(_t(a), _t(x)).numpy(), expected, 1e-9, 1e-300)


@needs_torch
def test_incomplete_gamma_and_zeta_over_wide_ranges_match_pytorch():
    import torch

    rng = np.random.default_rng(0)
    a = np.exp(rng.uniform(-5, 7, 600))
    x = a * np.exp(rng.normal(0, 0.5, 600))
    # PyTorch's asymptotic branch (a > 20, x near a) is good to about 2e-9
    for ours, theirs in ((ember.igamma, torch.igamma), (ember.igammac, torch.igammac)):
        _close(ours(_t(a), _t(x)).numpy(), theirs(torch.tensor(a), torch.tensor(x)).numpy(),
               5e-9, 1e-300)
    s = np.concatenate([rng.uniform(1.01, 60, 300), [1.0, 0.5, np.inf, np.nan, 2.0, 3.0]])
    q = np.concatenate([rng.uniform(-10, 50, 300), [2.0, 2.0, 0.5, 1.0, -3.0, -2.5]])
    _close(special.zeta(_t(s), _t(q)).numpy(),
           torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy(), 1e-11, 1e-300)
    edge = np.array([np.inf, -np.inf, -1.0, 0.0, np.nan])
    _close(special.zeta(_t([2.0] * 5), _t(edge)).numpy(),
           torch.special.zeta(torch.tensor([2.0] * 5), torch.tensor(edge)).numpy(), 0)


# ----------------------------------------------------------------------------- against mpmath
def test_far_negative_arguments_cost_their_own_steps_only():
    x = _t(np.concatenate([[-1e5 + 0.3], np.linspace(1.0, 2.0, 1000)]))
    # trigamma reflects; higher orders sum directly, the far element alone
    assert ember.polygamma(1, x)[0].item() == pytest.approx(15.079403702622, rel=1e-12)
    far = ember.polygamma(2, ember.cat([_t([-1e4 + 0.3]), x[1:]]))
    assert far.isfinite().all()
    assert far[1:].tolist() == ember.polygamma(2, x[1:]).tolist()


def test_accuracy_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    x = np.array([-7.3, -2.5, -0.999, -1e-8, 1e-8, 0.3, 0.999, 1.0001, 1.46, 1.9999, 2.5,
                  9.7, 33.3, 140.0, 1e4])
    checks = [
        (ember.lgamma, lambda v: mpmath.log(abs(mpmath.gamma(v))), x, 5e-14),
        (ember.digamma, mpmath.digamma, x, 1e-12),
        (lambda t: ember.polygamma(1, t), lambda v: mpmath.polygamma(1, v), x, 1e-13),
        # for x < 0 the terms of the sum alternate in sign: a few digits cancel
        (lambda t: ember.polygamma(4, t), lambda v: mpmath.polygamma(4, v), x, 1e-12),
    ]
    # next to the poles (where x - round(x) is exact) and at tiny and subnormal x (where
    # sin(pi x) would round: lgamma(5e-324) was 4.5% off through the reflection)
    near = np.array([-2.0 + 8 * 2.0 ** -52, -3.0 - 1e-10, -1.0 + 1e-12, -7.0 + 2.0 ** -49])
    tiny = np.array([5e-324, -5e-324, 1e-310, -2.2e-308, 1e-20, 9.9e-18, 1.1e-17, -3e-17])
    checks += [
        (ember.digamma, mpmath.digamma, near, 1e-12),
        (ember.lgamma, lambda v: mpmath.log(abs(mpmath.gamma(v))), np.concatenate([near, tiny]),
         5e-14),
    ]
    y = np.array([-40.0, -19.9, -3.0, -0.001, 0.0, 1e-5, 0.7, 5.0, 19.99, 20.01, 150.0, 600.0])
    checks += [
        (ember.i0, lambda v: mpmath.besseli(0, v), y, 1e-14),
        (special.i1, lambda v: mpmath.besseli(1, v), y[y != 0], 1e-14),
        (special.i0e, lambda v: mpmath.besseli(0, v) * mpmath.exp(-abs(v)), y, 1e-14),
        (special.i1e, lambda v: mpmath.besseli(1, v) * mpmath.exp(-abs(v)), y[y != 0], 1e-14),
        (special.erfcx, lambda v: mpmath.exp(v * v) * mpmath.erfc(v),
         np.array([-20.0, -1.0, 0.0, 0.4, 0.6, 3.0, 30.0, 1e5]), 1e-14),
    ]
    for ours, exact, points, rtol in checks:
        expected = [float(exact(mpmath.mpf(float(v)))) for v in points]
        _close(ours(_t(points)).numpy(), expected, rtol)
    a = np.array([1e-3, 0.5, 1.0, 2.5, 10.0, 100.0, 1000.0, 0.2])
    x = np.array([1e-4, 0.1, 5.0, 1.0, 30.0, 90.0, 1010.0, 1.3])
    lower = [float(mpmath.gammainc(u, 0, v, regularized=True)) for u, v in zip(a, x)]
    upper = [float(mpmath.gammainc(u, v, mpmath.inf, regularized=True)) for u, v in zip(a, x)]
    _close(ember.igamma(_t(a), _t(x)).numpy(), lower, 1e-12)
    _close(ember.igammac(_t(a), _t(x)).numpy(), upper, 1e-12)
    s = np.array([1.1, 2.0, 3.5, 30.0, 100.0])
    q = np.array([0.3, -2.5, 10.0, 0.5, 20.0])
    expected = [float(mpmath.zeta(u, v)) for u, v in zip(s, q)]
    _close(special.zeta(_t(s), _t(q)).numpy(), expected, 1e-13)


def test_incomplete_gamma_for_large_a_against_mpmath():
    """a up to 1e12: the log-density written without cancellation, and Temme's uniform
    expansion where x is near a (the series would need about 9 sqrt(a) terms)."""
    a = np.array([300.0, 1e4, 1e5, 1e5, 1e6, 1e6, 3e6, 1e12])
    x = np.array([420.0, 1e4 + 50, 1e5 + 1000, 98500.0, 999500.0, 1003000.0, 2.99e6, 1e12 + 1e6])
    # mpmath.gammainc(a, x, mpmath.inf) / mpmath.gamma(a) at 40 digits (seconds to compute)
    upper = np.array([2.9600766709565618e-10, 0.30765755929743444, 0.00080842151292559073,
                      0.99999906174450059, 0.69137444310918468, 0.0013617406462175915,
                      0.99999999625914091, 0.15865525393141672])
    lower = np.array([0.99999999970399233, 0.69234244070256556, 0.99919157848707441,
                      9.3825549940779958e-7, 0.30862555689081532, 0.99863825935378241,
                      3.7408590867046809e-9, 0.84134474606858328])
    _close(ember.igammac(_t(a), _t(x)).numpy(), upper, 2e-14)
    _close(ember.igamma(_t(a), _t(x)).numpy(), lower, 2e-14)
    # the derivative in a there: by differences of P
    a_e = _t(a[2:7], requires_grad=True)
    (grad,) = ember.autograd.grad(ember.igamma(a_e, _t(x[2:7])).sum(), [a_e])
    h = 1e-4 * np.sqrt(a[2:7])
    numeric = (ember.igamma(_t(a[2:7] + h), _t(x[2:7])).numpy()
               - ember.igamma(_t(a[2:7] - h), _t(x[2:7])).numpy()) / (2 * h)
    _close(grad.numpy(), numeric, 1e-6, 1e-20)


# ----------------------------------------------------------------------------- dtypes, errors
@pytest.mark.parametrize("call", [
    ember.lgamma, ember.digamma, ember.i0, special.i0e, special.i1, special.i1e, special.erfcx,
    special.bessel_j0, special.modified_bessel_k1, special.spherical_bessel_j0,
    special.modified_bessel_i0, lambda t: ember.polygamma(2, t), lambda t: ember.mvlgamma(t, 2),
    lambda t: special.zeta(t, t)], ids=lambda c: getattr(c, "__name__", "call"))
def test_integer_inputs_give_the_default_float_dtype(call):
    assert call(ember.tensor([2, 3])).dtype == ember.float32
    assert call(ember.tensor([2.0, 3.0], dtype=ember.float64)).dtype == ember.float64


def test_argument_errors():
    x = ember.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not support negative n"):
        ember.polygamma(-1, x)
    with pytest.raises(TypeError, match="'n' .* must be int, not float"):
        ember.polygamma(1.5, x)
    with pytest.raises(TypeError, match="must be int, not bool"):
        ember.polygamma(True, x)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        ember.mvlgamma(x, p=0)
    with pytest.raises(NotImplementedError, match="igamma.*'int64'"):
        ember.igamma(ember.tensor([1, 2]), ember.tensor([1, 2]))
    with pytest.raises(TypeError, match="'other' .* must be Tensor, not float"):
        ember.igamma(x, 2.0)
    with pytest.raises(TypeError, match="at least one Tensor"):
        special.zeta(2.0, 1.0)
    assert ember.igamma(x, x.double()).dtype == ember.float64
    assert special.zeta(2.0, ember.tensor([1.0, 2.0], dtype=ember.float64)).dtype == \
        ember.float64


# ----------------------------------------------------------------------------- gradients
def test_igamma_gradient_in_input_by_finite_differences():
    """PyTorch refuses d/da; ember differentiates the series or continued fraction."""
    a = _t([0.4, 1.5, 3.0, 12.0], requires_grad=True)
    x = _t([0.3, 2.0, 1.0, 15.0], requires_grad=True)
    assert ember.autograd.gradcheck(ember.igamma, (a, x))
    assert ember.autograd.gradcheck(ember.igammac, (a, x))
    (grad_a,) = ember.autograd.grad(ember.igamma(a, x).sum(), [a], create_graph=True)
    with pytest.raises(NotImplementedError, match="igamma's gradient with respect to 'input'"):
        grad_a.sum().backward()
    # with create_graph, the gradient in x alone still has its own derivative
    (grad_x,) = ember.autograd.grad(ember.igamma(a, x).sum(), [x], create_graph=True)
    assert grad_x.grad_fn is not None


def test_zeta_derivative_in_input_is_not_implemented():
    s = _t([2.0, 3.0], requires_grad=True)
    q = _t([1.5, 0.5], requires_grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
        special.zeta(s, q).sum().backward()
    q2 = _t([1.5, 0.5], requires_grad=True)
    special.zeta(s.detach(), q2).sum().backward()
    expected = -s.detach() * special.zeta(s.detach() + 1, q2.detach())
    _close(q2.grad.numpy(), expected.numpy(), 1e-14)


def test_airy_far_out():
    """SciPy's airy() gives NaN past |x| ~ 1e7: Ai underflows to 0 on the right, and the
    leading asymptotic term serves on the left (Ai is ill-conditioned there: its phase
    2/3 |x|^(3/2) carries the input's rounding, about 1e-6 relative at x = -1e7)."""
    pytest.importorskip("scipy")
    out = special.airy_ai(_t([1e8, 1e300, -1e7, -3e6])).tolist()
    assert out[:2] == [0.0, 0.0]
    # mpmath.airyai(-1e7), mpmath.airyai(-3e6)
    _close(out[2:], [0.005418514944210602, -0.003928456791453151], 5e-6)


def test_functions_without_gradients_give_untracked_results():
    x = ember.tensor([0.5, 2.0], requires_grad=True)
    for name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
                 "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
                 "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                 "spherical_bessel_j0", "airy_ai"):
        out = getattr(special, name)(x)
        assert not out.requires_grad and out.grad_fn is None, name


def test_node_names():
    x = ember.tensor([1.5, 2.5], requires_grad=True)
    names = {ember.lgamma: "LgammaBackward0", ember.digamma: "DigammaBackward0",
             ember.i0: "I0Backward0", special.i0e: "SpecialI0EBackward0",
             special.i1: "SpecialI1Backward0", special.i1e: "SpecialI1EBackward0",
             special.erfcx: "SpecialErfcxBackward0",
             (lambda t: ember.polygamma(2, t)): "PolygammaBackward0",
             (lambda t: ember.mvlgamma(t, 2)): "MvlgammaBackward0",
             (lambda t: ember.igamma(t.detach(), t)): "IgammaBackward0",
             (lambda t: ember.igammac(t.detach(), t)): "IgammacBackward0",
             (lambda t: special.zeta(t.detach(), t)): "SpecialZetaBackward0"}
    for function, name in names.items():
        assert function(x).grad_fn.name() == name


def test_gradients_at_zero_of_i1_and_i1e():
    x = _t([0.0, 0.0], requires_grad=True)
    (g,) = ember.autograd.grad(special.i1(x).sum(), [x])
    (ge,) = ember.autograd.grad(special.i1e(x).sum(), [x])
    assert g.tolist() == [0.5, 0.5] and ge.tolist() == [0.5, 0.5]


# ----------------------------------------------------------------------------- names, in place
def test_names_methods_and_in_place_forms():
    x = _t([0.7, 2.5, 4.0])
    assert special.gammaln(x).tolist() == ember.lgamma(x).tolist()
    assert special.psi(x).tolist() == special.digamma(x).tolist() == ember.digamma(x).tolist()
    assert special.multigammaln(x + 1, 2).tolist() == ember.mvlgamma(x + 1, p=2).tolist()
    assert special.gammainc(x, x).tolist() == x.igamma(x).tolist()
    assert special.gammaincc(x, x).tolist() == x.igammac(x).tolist()
    assert special.i0(x).tolist() == x.i0().tolist()
    assert x.polygamma(2).tolist() == ember.polygamma(2, x).tolist()
    assert x.mvlgamma(p=2).tolist() == ember.mvlgamma(x, 2).tolist()
    for method, expected in (("lgamma_", ember.lgamma(x)), ("digamma_", ember.digamma(x)),
                             ("i0_", ember.i0(x))):
        y = x.clone()
        assert getattr(y, method)() is y and y.tolist() == expected.tolist()
    y = x.clone()
    y.polygamma_(1)
    assert y.tolist() == ember.polygamma(1, x).tolist()
    y = x.clone() + 1
    y.mvlgamma_(3)
    assert y.tolist() == ember.mvlgamma(x + 1, 3).tolist()
    y = x.clone()
    y.igamma_(x)
    assert y.tolist() == ember.igamma(x, x).tolist()
    y = x.clone()
    y.igammac_(x)
    assert y.tolist() == ember.igammac(x, x).tolist()
    y = x.clone()
    assert ember.i0_(y) is y and y.tolist() == ember.i0(x).tolist()
    out = ember.empty(3, dtype=ember.float64)
    special.gammaln(x, out=out)
    assert out.tolist() == ember.lgamma(x).tolist()


def test_special_module_lists_the_new_names():
    for name in ("airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma",
                 "erfcx", "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e",
                 "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
                 "modified_bessel_k1", "multigammaln", "polygamma", "psi",
                 "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                 "spherical_bessel_j0", "zeta"):
        assert callable(getattr(special, name)), name


# ----------------------------------------------------------------------------- SciPy optional
def test_without_scipy_the_scipy_functions_say_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    with pytest.raises(ImportError, match="pip install scipy"):
        special.bessel_j0(ember.tensor([1.0]))
    # ember's own kernels need no SciPy
    assert special.modified_bessel_i0(ember.tensor([0.0])).item() == 1.0
    assert ember.lgamma(ember.tensor([1.0])).item() == 0.0


def test_docstring_examples_run_and_print_what_they_show():
    import doctest

    from ember.ops import OPS

    names = ["lgamma", "digamma", "polygamma", "mvlgamma", "igamma", "igammac", "i0"]
    names += [k for k, info in OPS.items() if k.startswith("special.") and
              info.function.__module__ == "ember.ops.special"]
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner()
    assert len(names) >= 24
    for name in names:
        doc = OPS[name].function.__doc__
        test = parser.get_doctest(doc, {"ember": ember}, name, None, 0)
        assert test.examples, f"{name} has no example"
        runner.run(test)
    assert runner.failures == 0


# ----------------------------------------------------------------------------- gradients
def _zeta_pair(requires_grad_s=True):
    torch = pytest.importorskip("torch")
    s, q = [2.0, 3.0], [1.5, 2.5]
    ours = (_t(s, requires_grad=requires_grad_s), _t(q, requires_grad=True))
    theirs = (torch.tensor(s, dtype=torch.float64, requires_grad=requires_grad_s),
              torch.tensor(q, dtype=torch.float64, requires_grad=True))
    return torch, ours, theirs


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")
def test_zeta_raises_for_its_first_arguments_gradient_only_where_it_is_needed():
    torch, (s, q), (ts, tq) = _zeta_pair()
    for ours, theirs in ((lambda: special.zeta(s, q).sum().backward(),
                          lambda: torch.special.zeta(ts, tq).sum().backward()),
                         (lambda: ember.autograd.grad(special.zeta(s, q).sum(), s),
                          lambda: torch.autograd.grad(torch.special.zeta(ts, tq).sum(), ts))):
        with pytest.raises(NotImplementedError) as theirs_error:
            theirs()
        with pytest.raises(NotImplementedError) as ours_error:
            ours()
        assert str(ours_error.value) == str(theirs_error.value)
    torch, (s, q), (ts, tq) = _zeta_pair(requires_grad_s=False)
    (got,) = ember.autograd.grad(special.zeta(s, q).sum(), q)
    (expected,) = torch.autograd.grad(torch.special.zeta(ts, tq).sum(), tq)
    _close(got.numpy(), expected.numpy(), 1e-12)


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")
def test_zeta_gradient_in_q_alone_while_s_requires_grad_matches_pytorch():
    torch, (s, q), (ts, tq) = _zeta_pair()
    (expected,) = torch.autograd.grad(torch.special.zeta(ts, tq).sum(), tq)
    (got,) = ember.autograd.grad(special.zeta(s, q).sum(), q)
    _close(got.numpy(), expected.numpy(), 1e-12)
