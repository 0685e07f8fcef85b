"""The fast lane (``autograd.function.fast_lane``) must be indistinguishable from the
general path it skips: same values, dtypes, nodes, saved values, gradients and errors.
Every op registered with ``fast=`` is checked against its own general path
(``function.__wrapped__``), so registering a new fast op adds its checks."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import ember
from ember.ops.registry import OPS

FAST = sorted(name for name, info in OPS.items() if info.fast is not None)
KIND = {name: OPS[name].fast[0] for name in FAST}


def test_the_hot_ops_take_the_lane():
    assert {"add", "sub", "mul", "div", "pow", "exp", "tanh", "sum", "mean"} <= set(FAST)
    for name in FAST:
        lane, slow = OPS[name].function, OPS[name].function.__wrapped__
        assert lane is not slow


def _inputs(kind, dtype, requires_grad, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 1.5, (3, 4)).astype(dtype)
    x = ember.tensor(a, requires_grad=requires_grad)
    if kind != "binary":
        return [(x,)]
    b = rng.uniform(0.5, 1.5, (3, 4)).astype(dtype)
    row = rng.uniform(0.5, 1.5, (4,)).astype(dtype)
    y = ember.tensor(b, requires_grad=requires_grad)
    z = ember.tensor(row)  # broadcasting, no grad
    return [(x, 0.75), (x, 2), (x, y), (x, z)]


def _leaves(args):
    return [a for a in args if isinstance(a, ember.Tensor) and a.requires_grad]


def _run(fn, args):
    """Value, the node (its name and its next_functions) and the leaves' gradients."""
    leaves = _leaves(args)
    for leaf in leaves:
        leaf.grad = None
    out = fn(*args)
    name = None
    if out.grad_fn is not None:
        name = (out.grad_fn.name(), [(type(n).__name__, nr)
                                     for n, nr in out.grad_fn.next_functions],
                tuple(out.grad_fn.needs_input_grad))
    grads = None
    if out.requires_grad:
        (out * 1.5).sum().backward()
        grads = [leaf.grad._data.copy() for leaf in leaves]
    return out, name, grads


@pytest.mark.parametrize("name", FAST)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_lane_matches_the_general_path(name, dtype, requires_grad):
    lane, slow = OPS[name].function, OPS[name].function.__wrapped__
    for args in _inputs(KIND[name], dtype, requires_grad):
        got, got_name, got_grads = _run(lane, args)
        want, want_name, want_grads = _run(slow, args)
        assert got.dtype is want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got._data, want._data)
        assert got.requires_grad == want.requires_grad and got.is_leaf == want.is_leaf
        assert got_name == want_name
        assert type(got._version_counter) is type(want._version_counter)
        if want_grads is not None:
            for g, w in zip(got_grads, want_grads):
                np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", FAST)
def test_lane_keeps_no_grad_and_inference_mode(name):
    lane, slow = OPS[name].function, OPS[name].function.__wrapped__
    for args in _inputs(KIND[name], np.float32, True):
        for mode in (ember.no_grad, ember.inference_mode):
            with mode():
                got, want = lane(*args), slow(*args)
            assert not got.requires_grad and got.grad_fn is None
            assert type(got._version_counter) is type(want._version_counter)
            assert got.is_inference() == want.is_inference()
            np.testing.assert_array_equal(got._data, want._data)


_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-30, 3e38, -3e38, np.inf, -np.inf, np.nan]
_NUMBERS = [0.75, -0.0, 0.0, 2, 0, -1, 0.5, 2.0, -0.5, 1e40, 3, float("nan"), float("inf"),
            2 ** 70]


@pytest.mark.parametrize("name", [n for n in FAST if len(OPS[n].fast) == 3])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_kernel_is_the_forward(name, dtype):
    # an unrecorded call runs the op's NumPy kernel instead of its forward: bit for bit
    # the same values and dtype, on special values and every kind of Python number
    lane, slow = OPS[name].function, OPS[name].function.__wrapped__
    with np.errstate(all="ignore"):
        x = ember.tensor(np.array(_SPECIAL, dtype))
        y = ember.tensor(np.array(_SPECIAL[::-1], dtype))
        cases = [(x,)] if KIND[name] == "unary" else \
            [(x, n) for n in _NUMBERS] + [(x, x), (x, y), (ember.tensor(np.ones((2, 1), dtype)), x)]
        for args in cases:
            for mode in (ember.no_grad, ember.enable_grad):
                with mode():
                    try:
                        want = slow(*args)
                    except (RuntimeError, OverflowError) as error:
                        with pytest.raises(type(error)):
                            lane(*args)
                        continue
                    got = lane(*args)
                assert got.dtype is want.dtype and got.shape == want.shape, args[1:]
                np.testing.assert_array_equal(got._data, want._data)
                np.testing.assert_array_equal(np.signbit(got._data), np.signbit(want._data))


@pytest.mark.parametrize("name", FAST)
def test_lane_records_double_backward(name):
    lane = OPS[name].function
    x = ember.tensor([0.7, 1.1, 1.3], dtype=ember.float64, requires_grad=True)
    args = (x, 1.5) if KIND[name] == "binary" else (x,)
    (g,) = ember.autograd.grad(lane(*args).sum(), x, create_graph=True)
    torch = pytest.importorskip("torch")
    t = torch.tensor([0.7, 1.1, 1.3], dtype=torch.float64, requires_grad=True)
    t_args = (t, 1.5) if KIND[name] == "binary" else (t,)
    (tg,) = torch.autograd.grad(getattr(torch, name)(*t_args).sum(), t, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-12)
    assert g.requires_grad == tg.requires_grad
    if tg.requires_grad:
        (gg,) = ember.autograd.grad(g.sum(), x, allow_unused=True)
        (tgg,) = torch.autograd.grad(tg.sum(), t, allow_unused=True)
        if tgg is None:
            assert gg is None or not gg.numpy().any()
        else:
            np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-12, atol=1e-15)


def test_in_place_change_of_a_saved_value_is_caught():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    z = y.exp()  # saves its output
    w = y * y    # saves both inputs (one tensor)
    z.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()


def test_results_of_detached_and_no_grad_tensors_say_why():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        (x.detach() * 2).exp().sum().backward()
    with ember.no_grad():
        y = x * 2
    with pytest.raises(RuntimeError, match="no_grad"):
        (y + 1).sum().backward()


def test_the_lane_steps_aside_for_what_it_does_not_handle():
    x = ember.tensor([1, 2, 3])  # integers: the general path promotes them
    assert (x.exp()).dtype is ember.float32
    assert (x / 2).dtype is ember.float32
    f = ember.tensor([1.0, 2.0])
    assert (f + True).tolist() == [2.0, 3.0]
    assert (f * ember.tensor([1.0, 2.0], dtype=ember.float64)).dtype is ember.float64
    assert ember.add(f, f, alpha=2).tolist() == [3.0, 6.0]
    assert ember.pow(f, exponent=2).tolist() == [1.0, 4.0]
    assert ember.exp(input=ember.tensor([0.0])).tolist() == [1.0]
    assert f.sum(0).tolist() == 3.0 and f.sum(dim=0, keepdim=True).tolist() == [3.0]
    with pytest.raises(RuntimeError, match="must match the size"):
        ember.ones(3) + ember.ones(4)
    with pytest.raises(RuntimeError, match="bool"):
        f - True


def test_autocast_and_anomaly_mode_see_lane_ops():
    x = ember.tensor([[1.0, 2.0]], requires_grad=True)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        assert (x @ x.T).dtype is ember.bfloat16  # autocast still applies
        assert x.exp().dtype is ember.float32
    with ember.autograd.detect_anomaly():
        y = (x * 2).exp()
        assert "test_fast_lane.py" in y.grad_fn._forward_stack  # where the forward ran


def test_saved_tensor_hooks_see_lane_ops():
    packed = []

    def pack(t):
        packed.append(t)
        return t

    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with ember.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = (x * x).exp()
    assert len(packed) == 3  # both operands of mul, exp's output
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (2 * x * (x * x).exp()).detach().numpy())


def test_compile_records_lane_ops():
    calls = []

    def step(x):
        calls.append(1)
        return ((x * 0.5 + 1.0) ** 2).exp().tanh().sum()

    compiled = ember.compile(step)
    x = ember.tensor([0.1, 0.2, 0.3])
    first = compiled(x).item()
    second = compiled(x).item()
    assert first == second == step(x).item()
    assert len(calls) == 2  # the second call was replayed, not run


@pytest.mark.parametrize("method", ["__rsub__", "__rpow__"])
@pytest.mark.parametrize("number", [0.75, 2])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_reflected_lane_matches_the_general_path(method, number, requires_grad):
    lane = getattr(ember.Tensor, method)
    slow = lane.__wrapped__
    for dtype in (np.float32, np.float64):
        (x,) = _inputs("unary", dtype, requires_grad)[0]
        got, got_name, got_grads = _run(lambda t: lane(t, number), (x,))
        want, want_name, want_grads = _run(lambda t: slow(t, number), (x,))
        assert got.dtype is want.dtype and got_name == want_name
        np.testing.assert_array_equal(got._data, want._data)
        if want_grads is not None:
            np.testing.assert_array_equal(got_grads[0], want_grads[0])
    assert (2 ** ember.tensor([1, 2])).tolist() == [2, 4]  # integers: the general path
    assert (True + ember.tensor([1.0])).tolist() == [2.0]


@pytest.mark.parametrize("expression", ["x + 2", "2 + x", "x - 2", "1 - x", "x / 2", "2 / x",
                                        "x * 2", "2 * x", "x ** 2", "2 ** x", "x * x",
                                        "x * y", "y * x", "x.exp()", "x.sum()"])
def test_operator_graphs_are_pytorchs(expression):
    # node names and next_functions, the wrapped number's (None, 0) edge included
    torch = pytest.importorskip("torch")

    def graph(lib):
        names = {"x": lib.ones(2, requires_grad=True), "y": lib.ones(2)}
        node = eval(expression, {}, names).grad_fn
        return node.name(), [(None if n is None else n.name().split("::")[-1], nr)
                             for n, nr in node.next_functions]

    assert graph(ember) == graph(torch)


@pytest.mark.parametrize("op", [lambda x: x.exp(), lambda x: x.tanh(), lambda x: x * 2.0,
                                lambda x: x ** 2, lambda x: 2.0 - x, lambda x: x.sum()])
def test_unrecorded_lane_keeps_no_result_alive(op):
    # the forward of an unrecorded call runs on one shared ctx per op: what it saves for a
    # backward that will never come must not outlive the call
    x = ember.ones(64)
    with ember.no_grad():
        y = op(x)
    data = weakref.ref(y._data)
    del y
    gc.collect()
    assert data() is None


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_zero_dim_products_and_sums_on_numpy_scalars_are_the_ufuncs_numbers(dtype):
    # two 0-d float operands compute on NumPy scalars (a scalar graph): the same values
    # and dtypes as the ufunc, forward and backward, with a 0-d array as each result
    rng = np.random.default_rng(0)
    a, b = (np.asarray(rng.uniform(-2, 2)).astype(dtype) for _ in range(2))
    x, y = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    for out, expected in ((x * y, a * b), (x + y, a + b), ((x * y + x) * x, (a * b + a) * a)):
        assert type(out._data) is np.ndarray and out._data.dtype == np.dtype(dtype)
        assert out._data.shape == () and out._data.tobytes() == np.asarray(expected).tobytes()
    out = (x * y + x) * x  # d/dx = 2xy + 2x, d/dy = x^2
    out.backward()
    assert type(x.grad._data) is np.ndarray and x.grad._data.shape == ()
    assert x.grad._data.dtype == np.dtype(dtype) and y.grad._data.dtype == np.dtype(dtype)
    np.testing.assert_allclose(x.grad._data, 2 * a * b + 2 * a, rtol=2e-3)
    np.testing.assert_allclose(y.grad._data, a * a, rtol=2e-3)


def test_zero_dim_integers_wrap_without_warning_and_second_order_still_records():
    import warnings

    big = ember.tensor(100, dtype=ember.int8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's scalar math would warn on overflow
        assert (big * big).item() == np.multiply(np.array(100, np.int8),
                                                 np.array(100, np.int8)).item()
        assert (big + big).item() == -56
    x = ember.tensor(1.5, dtype=ember.float64, requires_grad=True)
    y = ember.tensor(0.5, dtype=ember.float64, requires_grad=True)
    (gx,) = ember.autograd.grad(x * x * y, x, create_graph=True)  # 2xy
    (gxx,) = ember.autograd.grad(gx, x)  # 2y
    assert gx.item() == 1.5 and gxx.item() == 1.0
    assert ember.autograd.gradcheck(lambda a, b: a * b + a * a, (x, y))
