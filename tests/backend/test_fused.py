"""Elementwise formulas (autograd/backward_math.py): each one checked on its three lanes.

- the CUDA lane (one ``cupy.fuse`` kernel) against the NumPy lane: to the bit on the strict
  stand-in (``EMBER_TEST_STANDIN=1``, whose ``fuse`` runs the formula under CuPy's tracing
  rules), to rounding on a real GPU (where ``tools/gpu_check.py`` runs this file);
- the Tensor lane (ember ops, as under ``create_graph``): the NumPy lane's values, and
  gradcheck / gradgradcheck in float64;
- the plumbing: one fused function per formula, one call of it per elementwise call, ops
  really going through it, and the unfused fallback.
"""
from __future__ import annotations

import doctest
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import backend
from ember.autograd import backward_math
from ember.autograd.backward_math import FORMULAS, TENSOR_MATH, array_math
from ember.backend import cuda

CUDA = cuda.is_available()
requires_cuda = pytest.mark.skipif(not CUDA, reason="no CUDA device (and no stand-in: "
                                   "EMBER_TEST_STANDIN=1 makes one)")


def A(low=-3.0, high=3.0):
    """An array argument drawn from [low, high)."""
    return ("array", low, high)


_A = "ember.ops.activations."
_L = "ember.ops.losses."
_N = "ember.ops.normalization."
_O = "ember.optim."
P = (0.05, 0.95)  # probabilities, away from the clamps
# every formula: lists of arguments (A(...) arrays, numbers, None)
SPECS = {
    _A + "_hardtanh_values": [(A(), -1.0, 1.5)],
    _A + "_hardtanh_grad": [(A(), A(), -1.0, 1.5)],
    _A + "_leaky_relu_values": [(A(), 0.2)],
    _A + "_leaky_relu_grad": [(A(), A(), -0.5)],
    _A + "_elu_values": [(A(), 1.0, 1.0, 1.0), (A(), 1.6732632423543772, 1.0507009873554805,
                                                1.0), (A(), 2.0, 1.0, 0.5)],
    _A + "_elu_grad": [(A(), A(), 1.0, 1.0, 1.0), (A(), A(), 1.05, 1.758, 1.0),
                       (A(), A(), 1.0, 2.0, 0.5)],
    _A + "_threshold_values": [(A(), 0.5, -2.0)],
    _A + "_threshold_grad": [(A(), A(), 0.5)],
    _A + "_hardshrink_values": [(A(), 0.5, -0.5)],
    _A + "_softshrink_values": [(A(), 1.2, -1.2)],
    _A + "_shrink_grad": [(A(), A(), 0.5, -0.5)],
    _A + "_gelu_values": [(A(),)],
    _A + "_gelu_grad": [(A(), A())],
    _A + "_gelu_tanh_values": [(A(),)],
    _A + "_gelu_tanh_grad": [(A(), A())],
    _A + "_silu_values": [(A(-30, 30),)],
    _A + "_silu_grad": [(A(), A(-30, 30))],
    _A + "_mish_values": [(A(-30, 30),)],
    _A + "_mish_grad": [(A(), A(-4, 4))],
    _A + "_softplus_values": [(A(), 1.0, 20.0), (A(), 2.0, 1.0)],
    _A + "_softplus_grad": [(A(), A(), 1.0, 20.0), (A(), A(), 0.5, 1.0)],
    _A + "_logsigmoid_values": [(A(-30, 30),)],
    _A + "_logsigmoid_grad": [(A(), A(-30, 30))],
    _A + "_hardsigmoid_values": [(A(-5, 5),)],
    _A + "_hardsigmoid_grad": [(A(), A(-5, 5))],
    _A + "_hardswish_values": [(A(-5, 5),)],
    _A + "_hardswish_grad": [(A(), A(-5, 5))],
    _A + "_glu_values": [(A(), A())],
    _A + "_glu_grads": [(A(), A(), A())],
    _A + "_logit_values": [(A(*P),)],
    _A + "_logit_clamped_values": [(A(0.0, 1.0), 0.2, 0.8)],
    _A + "_logit_grad": [(A(), A(*P))],
    _A + "_logit_clamped_grad": [(A(), A(0.0, 1.0), 0.2, 0.8)],
    _L + "_softplus_values": [(A(-30, 30),)],
    _L + "_softplus_grad": [(A(), A())],
    _L + "_bce_values": [(A(*P), A(0, 1), None), (A(*P), A(0, 1), A(0.5, 2))],
    _L + "_bce_grad_input": [(A(), A(*P), A(0, 1))],
    _L + "_mse_values": [(A(), A())],
    _L + "_mse_grad": [(A(), A(), A())],
    _L + "_smooth_l1_values": [(A(), A(), 1.0, 0.5), (A(), A(), 0.5, 0.25)],
    _L + "_smooth_l1_grad": [(A(), A(), 1.0, 1.0, A()), (A(), A(), 0.5, 2.0, A())],
    _L + "_huber_values": [(A(), A(), 1.0, 0.5), (A(), A(), 0.5, 0.25)],
    _L + "_huber_grad": [(A(), A(), 0.5, A())],
    _L + "_soft_margin_values": [(A(), A())],
    _L + "_soft_margin_grad": [(A(), A(), A())],
    _L + "_bce_logits_values": [(A(), A(0, 1), None, None), (A(), A(0, 1), A(0.5, 2),
                                                             A(0.5, 3))],
    _L + "_bce_logits_grad_input": [(A(), A(0, 1), None, A()), (A(), A(0, 1), A(0.5, 3),
                                                                A())],
    _N + "_batch_norm_grad_input": [(A(), A(), A(), A(0.5, 2), A(), A(), 12)],
    _N + "_layer_norm_values": [(A(), A(), A(0.5, 2), 1e-5, None, None),
                                (A(), A(), A(0.5, 2), 1e-3, A(), A())],
    _N + "_layer_norm_grad_input": [(A(0.5, 2), A(), A(), A(), A())],
    _N + "_group_norm_grad_input": [(A(), A(), A(), A(0.5, 2), A(), A())],
    _O + "adam._adam_update": [(A(), A(), A(), A(0, 2), 0.1, 0.999, 0.001, 0.3, 1e-8, 0.01)],
    _O + "adam._amsgrad_update": [(A(), A(), A(), A(0, 2), A(0, 2), 0.1, 0.9, 0.1, 0.5, 1e-6,
                                   0.02)],
    _O + "sgd._momentum_update": [(A(), A(), A(), 0.9, 0.1)],
    _O + "sgd._nesterov_update": [(A(), A(), A(), 0.5, 0.01)],
}
# formulas that update their array arguments in place and return None (optimizer steps):
# they never run on Tensors, and every array they write must have the full shape
IN_PLACE = {n for n in SPECS if n.startswith(_O)}
# shapes of the first array argument and of the others: same shape, 0-d, broadcasting
SHAPES = {"matrix": ((3, 4), (3, 4)), "0-d": ((), ()), "broadcast": ((2, 3, 4), (3, 1))}


def _arguments(spec, dtype, shape_case, seed=0):
    rng = np.random.default_rng(seed)
    first, rest = SHAPES[shape_case]
    out, arrays = [], 0
    for item in spec:
        if isinstance(item, tuple):
            shape = first if arrays == 0 else rest
            arrays += 1
            out.append(rng.uniform(item[1], item[2], shape).astype(dtype))
        else:
            out.append(item)
    return out


def _cases():
    for name in sorted(SPECS):
        for index, spec in enumerate(SPECS[name]):
            yield pytest.param(name, spec, id=f"{name.rsplit('.', 1)[1]}-{index}")


def _run(lane, formula, args, fused: bool):
    """The formula's results; for an in-place formula, the arrays it was handed."""
    out = lane.elementwise(formula, *args) if fused else formula(lane, *args)
    if out is None:
        return tuple(a for a in args if hasattr(a, "dtype"))
    return out if isinstance(out, tuple) else (out,)


def _results(out):
    return out if isinstance(out, tuple) else (out,)


def test_every_formula_is_listed_here():
    assert set(FORMULAS) == set(SPECS), (
        f"formulas without a spec: {sorted(set(FORMULAS) - set(SPECS))}; specs of no "
        f"formula: {sorted(set(SPECS) - set(FORMULAS))}")


# ----------------------------------------------------------------------------- CUDA lane
def _cuda_xp():
    return backend.xp_for_device(backend.parse_device("cuda"))


def _to_device(xp, values):
    return [xp.asarray(v) if isinstance(v, np.ndarray) else v for v in values]


@requires_cuda
@pytest.mark.parametrize("shape_case", list(SHAPES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name, spec", list(_cases()))
def test_cuda_fused_formula_matches_the_numpy_lane(name, spec, dtype, shape_case):
    if name in IN_PLACE and shape_case == "broadcast":
        pytest.skip("an in-place formula writes full-shape arrays only")
    formula = FORMULAS[name]
    args = _arguments(spec, dtype, shape_case)
    xp = _cuda_xp()
    device_args = _to_device(xp, args)
    with np.errstate(all="ignore"):
        expected = _run(array_math(np), formula, args, fused=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unfused fallback fails the test
        got = _run(array_math(xp), formula, device_args, fused=True)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        host = cuda.to_host(g)
        assert host.dtype == e.dtype and host.shape == e.shape
        if cuda.STANDIN:  # the very same arithmetic: to the bit
            assert host.tobytes() == e.tobytes(), f"{name}: the fused lane differs"
        else:  # CUDA's transcendental functions round differently from the host's
            tolerance = {np.float32: 2e-5, np.float64: 1e-12}[dtype]
            np.testing.assert_allclose(host, e, rtol=tolerance, atol=tolerance)
    kernel = cuda.fused_formulas()[name]
    assert not kernel.unfused, f"{name} ran unfused: {kernel.unfused}"
    if not cuda.STANDIN:  # cupy.fuse compiled a kernel (old fusion's memo or new fusion)
        fusion = kernel.kernel
        assert getattr(fusion, "_memo", None) or getattr(fusion, "new_fusion", None) \
            is not None or not hasattr(fusion, "_memo")


@requires_cuda
def test_cuda_lane_fuses_each_formula_once_and_calls_it_once_per_use():
    if not cuda.STANDIN:
        pytest.skip("counts the stand-in's cupy.fuse calls")
    from ember.backend import standin

    xp = _cuda_xp()
    x = xp.asarray(np.linspace(-3, 3, 12).reshape(3, 4))
    lane = array_math(xp)
    formula = FORMULAS[_A + "_gelu_tanh_values"]
    lane.elementwise(formula, x)
    kernel = cuda.fused_formulas()[_A + "_gelu_tanh_values"]
    before = kernel.kernel.calls
    for _ in range(3):
        lane.elementwise(formula, x)
    assert kernel.kernel.calls == before + 3
    assert cuda.fused(formula, lane) is kernel
    made = [f for f in standin.FUSED if f.function.__name__ == formula.__name__]
    assert len(made) == 1, "the formula was decorated more than once"


@requires_cuda
@pytest.mark.parametrize("op, names", [
    (F.gelu, ("_gelu_values", "_gelu_grad")),
    (lambda t: F.gelu(t, approximate="tanh"), ("_gelu_tanh_values", "_gelu_tanh_grad")),
    (F.silu, ("_silu_values", "_silu_grad")),
    (F.mish, ("_mish_values", "_mish_grad")),
    (F.selu, ("_elu_values", "_elu_grad")),
    (F.softplus, ("_softplus_values", "_softplus_grad")),
])
def test_cuda_ops_run_their_formulas_fused(op, names):
    if not cuda.STANDIN:
        pytest.skip("counts the stand-in's cupy.fuse calls")
    x = ember.randn(3, 4, device="cuda", requires_grad=True)
    op(x).sum().backward()  # makes the fused functions (the gradient's too)
    kernels = [cuda.fused_formulas()[_A + n] for n in names]
    before = [k.kernel.calls for k in kernels]
    op(x).sum().backward()
    assert [k.kernel.calls for k in kernels] == [b + 1 for b in before]


def _uses_shape(m, x):
    return x * x.shape[0]


@requires_cuda
def test_cuda_formula_cupy_cannot_fuse_runs_unfused_with_one_warning():
    if not cuda.STANDIN:
        pytest.skip("the stand-in's tracing rules refuse .shape, as CuPy's do")
    xp = _cuda_xp()
    x = xp.asarray(np.arange(3.0))
    lane = array_math(xp)
    with pytest.warns(RuntimeWarning, match="could not fuse"):
        out = lane.elementwise(_uses_shape, x)
    assert cuda.to_host(out).tolist() == [0.0, 3.0, 6.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cuda.to_host(lane.elementwise(_uses_shape, x)).tolist() == [0.0, 3.0, 6.0]
    assert len(cuda.fused_formulas()[f"{__name__}._uses_shape"].unfused) == 1


@requires_cuda
def test_cuda_bad_inputs_raise_their_own_error_and_are_not_taken_for_unfusable():
    xp = _cuda_xp()
    formula = FORMULAS[_L + "_mse_values"]
    with pytest.raises(ValueError):
        array_math(xp).elementwise(formula, xp.ones((2, 3)), xp.ones((4,)))
    assert not cuda.fused_formulas()[_L + "_mse_values"].unfused


@requires_cuda
def test_cuda_standin_fuse_traces_as_cupy_does():
    if not cuda.STANDIN:
        pytest.skip("checks the stand-in's cupy.fuse")
    from ember.backend import standin

    cp = standin.cupy
    x = cp.asarray(np.arange(4.0))
    refused = [lambda a: a * a.shape[0], lambda a: a.sum(), lambda a: cp.sum(a),
               lambda a: a[1:], lambda a: a if a > 0 else -a, lambda a: float(a) * a,
               lambda a: np.exp(a), lambda a: 2.0]
    for body in refused:
        with pytest.raises((TypeError, AttributeError)):
            cp.fuse(body)(x)
    assert cp.fuse(lambda a: cp.where(a > 1, a, 0.0))(x).get().tolist() == [0, 0, 2, 3]

    def in_place(a, b):
        a += b
        a[...] = cp.maximum(a, 2.0)
    assert cp.fuse(in_place)(x, 1.0) is None and x.get().tolist() == [2.0, 2.0, 3.0, 4.0]
    fused = cp.fuse(kernel_name="twice")(lambda a: a * 2)
    with pytest.raises(TypeError, match="positional"):
        fused(a=x)
    with pytest.raises(TypeError, match="Invalid argument type"):
        fused([1.0, 2.0])
    assert fused(3.0) == 6.0 and fused.name == "twice"  # no device array: a plain call
    assert x.shape == (4,)  # outside the fused call arrays are whole again


# ----------------------------------------------------------------------------- Tensor lane
def _tensor_cases():
    for name in sorted(set(SPECS) - IN_PLACE):
        spec = SPECS[name][-1]
        yield pytest.param(name, spec, id=name.rsplit(".", 1)[1])


@pytest.mark.parametrize("name, spec", list(_tensor_cases()))
def test_formula_on_tensors_matches_and_has_first_and_second_derivatives(name, spec):
    formula = FORMULAS[name]
    args = _arguments(spec, np.float64, "matrix", seed=3)
    with np.errstate(all="ignore"):
        expected = _results(formula(array_math(np), *args))
    positions = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    tensors = [ember.tensor(args[i], requires_grad=True) for i in positions]

    def on_tensors(*inputs):
        values = list(args)
        for i, t in zip(positions, inputs):
            values[i] = t
        return TENSOR_MATH.elementwise(formula, *values)

    got = _results(on_tensors(*tensors))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.detach().numpy(), e, rtol=1e-12, atol=1e-12)
    assert ember.autograd.gradcheck(on_tensors, tensors)
    assert ember.autograd.gradgradcheck(on_tensors, tensors)


def _function_arguments(name):
    x = np.linspace(0.5, 2.0, 4)
    if name == "where":
        return (x > 1, x, 0.0)
    if name in ("maximum", "minimum"):
        return (x, 1.5)
    return (x, x) if name == "cast" else (x,)


@pytest.mark.parametrize("name", backward_math.ELEMENTWISE)
def test_every_elementwise_function_exists_on_tensors(name):
    args = _function_arguments(name)
    expected = getattr(array_math(np), name)(*args)
    on_tensors = getattr(TENSOR_MATH, name)(*(ember.tensor(a) if isinstance(a, np.ndarray)
                                               else a for a in args))
    np.testing.assert_allclose(on_tensors.numpy(), expected, rtol=1e-12)


@requires_cuda
@pytest.mark.parametrize("name", backward_math.ELEMENTWISE)
def test_cuda_every_elementwise_function_fuses(name):
    args = _function_arguments(name)
    expected = getattr(array_math(np), name)(*args)
    xp = _cuda_xp()
    lane = array_math(xp)
    fused = xp.fuse(kernel_name=f"ember_check_{name}")(lambda *a: getattr(lane, name)(*a))
    got = fused(*_to_device(xp, args))
    np.testing.assert_allclose(cuda.to_host(got), expected, rtol=1e-12)


def test_numpy_lane_is_the_formula_itself():
    x = np.linspace(-2, 2, 5)
    formula = FORMULAS[_A + "_silu_values"]
    assert array_math(np).elementwise(formula, x).tobytes() == formula(array_math(np),
                                                                         x).tobytes()


def test_examples_in_the_docstrings():
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    globs = {"np": np, "array_math": array_math, "FORMULAS": FORMULAS,
             "elementwise_formula": backward_math.elementwise_formula}
    for target, name in ((backward_math.ArrayMath.elementwise, "elementwise"),
                         (backend.fused, "fused"),
                         (backward_math.elementwise_formula, "elementwise_formula")):
        for test in doctest.DocTestFinder().find(target, name, globs=dict(globs)):
            runner.run(test)
    assert runner.failures == 0


@requires_cuda
@pytest.mark.parametrize("name, spec", list(_cases()))
def test_cuda_fused_formula_keeps_eagers_dtype_under_cupy13s_scalar_promotion(
        name, spec, monkeypatch):
    """CuPy before 14 types a scalar argument of a fused kernel as float64, so float32
    inputs came back float64: the result is cast back to the dtype eager gives."""
    if not cuda.STANDIN:
        pytest.skip("the stand-in emulates CuPy 13's fused scalar types")
    from ember.backend import standin

    monkeypatch.setattr(cuda, "_fused", {})  # kernels made under the old CuPy (and kept
    monkeypatch.setattr(standin, "FUSED", [])  # apart from the ones other tests count)
    formula = FORMULAS[name]
    args = _arguments(spec, np.float32, "matrix")
    xp = _cuda_xp()
    device_args = _to_device(xp, args)
    with np.errstate(all="ignore"):
        expected = _run(array_math(np), formula, args, fused=False)
    with standin.legacy_fuse_scalars(), warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _run(array_math(xp), formula, device_args, fused=True)
        again = _run(array_math(xp), formula,  # (a second call: the dtypes kept)
                     _to_device(xp, _arguments(spec, np.float32, "matrix")), fused=True)
    for g, e in zip(got + again, expected + expected):
        host = cuda.to_host(g)
        assert host.dtype == e.dtype and host.shape == e.shape, name
        # float64 steps inside the kernel round differently from float32's
        np.testing.assert_allclose(host, e, rtol=2e-5, atol=2e-6)
    assert cuda.fused_formulas()[name].casts


@requires_cuda
def test_cuda_fused_formula_casts_only_where_the_dtypes_differ(monkeypatch):
    if not cuda.STANDIN:
        pytest.skip("the stand-in emulates CuPy 13's fused scalar types")
    from ember.backend import standin

    monkeypatch.setattr(cuda, "_fused", {})
    monkeypatch.setattr(standin, "FUSED", [])
    xp = _cuda_xp()
    lane = array_math(xp)
    x32 = xp.asarray(np.linspace(-1.0, 1.0, 6, dtype=np.float32))
    x64 = xp.asarray(np.linspace(-1.0, 1.0, 6))
    with standin.legacy_fuse_scalars():
        scaled = lane.elementwise(_scaled_and_positive, x32, 2.5)
        wide = lane.elementwise(_scaled_and_positive, x64, 2.5)
        kernel = cuda.fused_formulas()[f"{__name__}._scaled_and_positive"]
        raw = kernel.kernel(x64, 2.5)
    assert [r.dtype for r in scaled] == [np.float32, np.bool_]
    assert [r.dtype for r in wide] == [np.float64, np.bool_]
    assert cuda.to_host(scaled[0]).tolist() == (np.linspace(-1, 1, 6, dtype=np.float32) *
                                                np.float32(2.5)).tolist()
    assert raw[0].dtype == np.float64  # (the kernel itself gives float64 either way)
    # CuPy 14 types scalars as eager does: nothing to cast, nothing checked
    monkeypatch.setattr(cuda, "_fused", {})
    lane.elementwise(_scaled_and_positive, x32, 2.5)
    assert not cuda.fused_formulas()[f"{__name__}._scaled_and_positive"].casts


def _scaled_and_positive(m, x, scale):
    return x * scale, x > 0
