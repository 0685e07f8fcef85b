"""ember.compile's lowering: a replay is one generated function of NumPy calls, bit for bit
equal to eager; ops whose Python reads values keep an op-level call, per op."""
import numpy as np
import pytest

import ember
from ember import nn
from ember.autograd.function import Function


def _equal(a, b):
    a = a.detach().numpy() if isinstance(a, ember.Tensor) else a
    b = b.detach().numpy() if isinstance(b, ember.Tensor) else b
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, b), (a, b)  # bit for bit (no NaNs here)


class _Normalized(Function):
    """Scales by the peak when it is above 1: its forward reads a value into Python."""

    array_backward = True

    @staticmethod
    def forward(ctx, x):
        peak = float(abs(x).max())
        ctx.scale = 1.0 / peak if peak > 1.0 else 1.0
        return x * ctx.scale

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale


class _Signed(Function):
    """Doubles; its backward flips the sign by the input's sum (a value read in backward)."""

    array_backward = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2.0

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (2.0 if x.sum() > 0 else -2.0)


def _mixed_step(w):
    def step(x):
        h = _Signed.apply((x * w).tanh())
        h = _Normalized.apply(h * 3.0)
        loss = (h * h).sum()
        loss.backward()
        return loss
    return step


def test_lowered_and_op_level_ops_mix_in_one_trace():
    w1 = ember.linspace(-1.0, 1.0, 6, requires_grad=True)
    w2 = ember.linspace(-1.0, 1.0, 6, requires_grad=True)
    eager, compiled = _mixed_step(w1), ember.compile(_mixed_step(w2))
    rng = np.random.default_rng(0)
    for scale in (0.1, 3.0, -2.0, 0.05, 5.0):  # both branches of both ops
        x = ember.tensor((rng.standard_normal(6) * scale).astype(np.float32))
        _equal(eager(x), compiled(x))
        _equal(w1.grad, w2.grad)
    assert compiled.stats == {"traces": 1, "replays": 4, "eager": 0}
    (info,) = compiled.lowered()
    reasons = dict(info["fallback"])
    assert "value into Python" in reasons["_Normalized"]
    assert "backward" in reasons["_Signed"]
    assert set(reasons) == {"_Signed", "_Normalized"} and info["lowered"] == 5


class _Positive(Function):
    """The positive elements: a boolean mask, so the output's shape depends on values."""

    array_backward = True

    @staticmethod
    def forward(ctx, x):
        ctx.mask, ctx.shape = x > 0, x.shape
        return x[ctx.mask]

    @staticmethod
    def backward(ctx, grad):
        out = ctx.xp.zeros(ctx.shape, grad.dtype)
        out[ctx.mask] = grad
        return out


class _Head(Function):
    """The first 2 or 3 elements, by the sign of the sum (read into Python)."""

    array_backward = True

    @staticmethod
    def forward(ctx, x):
        ctx.k, ctx.shape = (2 if float(x.sum()) > 0 else 3), x.shape
        return x[:ctx.k].copy()

    @staticmethod
    def backward(ctx, grad):
        out = ctx.xp.zeros(ctx.shape, grad.dtype)
        out[:ctx.k] = grad
        return out


def _sum_step(op):
    def step(x):
        loss = (op.apply(x * 1.5) * 2.0).sum()
        loss.backward()
        return loss
    return step


def test_an_op_with_a_data_dependent_shape_runs_op_level_with_its_consumers():
    x1, x2 = (ember.zeros(4, requires_grad=True) for _ in range(2))
    eager, compiled = _sum_step(_Positive), ember.compile(_sum_step(_Positive))
    for values in ([1.0, -1.0, 2.0, 0.5], [3.0, 4.0, 5.0, 6.0], [-1.0, -2.0, 0.5, -3.0]):
        with ember.no_grad():
            x1.copy_(ember.tensor(values))
            x2.copy_(ember.tensor(values))
        _equal(eager(x1), compiled(x2))
        _equal(x1.grad, x2.grad)
    assert compiled.stats["replays"] == 2
    (info,) = compiled.lowered()
    reasons = dict(info["fallback"])
    assert "data-dependent shape" in reasons["_Positive"]
    assert "op-level" in reasons["Sum"] and info["lowered"] == 1  # x * 1.5


def test_a_shape_change_in_an_op_level_call_reruns_eagerly_then_replays_op_by_op():
    x1, x2 = (ember.zeros(4, requires_grad=True) for _ in range(2))
    eager, compiled = _sum_step(_Head), ember.compile(_sum_step(_Head))
    for values in ([1.0, 2.0, 3.0, 4.0], [2.0, 1.0, 0.0, 1.0], [-1.0, -2.0, 1.0, 0.5],
                   [-4.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]):
        with ember.no_grad():
            x1.copy_(ember.tensor(values))
            x2.copy_(ember.tensor(values))
        lowered = compiled.lowered()
        _equal(eager(x1), compiled(x2))
        _equal(x1.grad, x2.grad)
    assert lowered == [None]  # after the change: op by op
    assert compiled.stats == {"traces": 1, "replays": 3, "eager": 1}


def test_returned_tensors_and_grads_never_share_the_next_calls_arrays():
    w = ember.ones(4, requires_grad=True)

    @ember.compile
    def step(x):
        y = x * w
        loss = (y * y).sum()
        loss.backward()
        return y.detach(), loss

    x1, x2 = ember.tensor([1.0, 2.0, 3.0, 4.0]), ember.tensor([0.5, -1.0, 2.0, 1.0])
    step(x1)
    w.grad = None
    y1, loss1 = step(x1)  # a replay
    grad1 = w.grad
    saved = y1.numpy().copy()
    y1.add_(100.0)        # the caller changes what it got back
    grad1.mul_(0.0)
    y2, loss2 = step(x2)
    assert step.stats["replays"] == 2
    _equal(y2, x2 * 1.0)
    _equal(loss2, (x2 * x2).sum())
    _equal(w.grad, 2 * x2 * x2)  # added into the zeroed .grad, as eager adds
    _equal(y1, ember.tensor(saved) + 100.0)  # the earlier result is not overwritten
    assert not np.shares_memory(y1.numpy(), y2.numpy())
    assert not np.shares_memory(w.grad.numpy(), y2.numpy())


def _chain(x):
    y = x
    for _ in range(3):
        y = y + 0.25
        y = y * 0.5
        y = y ** 2
        y = y.exp()
        y = y.tanh()
    return y.sum()


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_ops_chain_is_bit_for_bit_eager(dtype):
    x1 = ember.linspace(-1.5, 1.5, 16, dtype=dtype, requires_grad=True)
    x2 = ember.linspace(-1.5, 1.5, 16, dtype=dtype, requires_grad=True)

    def step(x):
        out = _chain(x)
        out.backward()
        return out

    compiled = ember.compile(step)
    for _ in range(3):
        _equal(step(x1), compiled(x2))
        _equal(x1.grad, x2.grad)
    forward = ember.compile(_chain)
    with ember.no_grad():
        for k in range(3):
            x = ember.linspace(-1.0, 1.0 + k, 16, dtype=dtype)
            _equal(_chain(x), forward(x))
    for c in (compiled, forward):
        (info,) = c.lowered()
        assert info["fallback"] == [] and info["lowered"] == 16


def _mlp():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 5))
    return model, ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def test_mlp_sgd_momentum_parameters_are_bit_for_bit_eager_after_five_steps():
    loss_fn = nn.CrossEntropyLoss()

    def step_of(model, opt):
        def step(x, y):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss
        return step

    (m1, o1), (m2, o2) = _mlp(), _mlp()
    eager, compiled = step_of(m1, o1), ember.compile(step_of(m2, o2))
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = ember.tensor(rng.standard_normal((8, 20)).astype(np.float32))
        y = ember.tensor(rng.integers(0, 5, 8))
        _equal(eager(x, y), compiled(x, y))
    assert compiled.stats["replays"] == 4
    for p, q in zip(m1.parameters(), m2.parameters()):
        _equal(p, q)
        _equal(p.grad, q.grad)
    (info,) = compiled.lowered()
    assert info["lowered"] >= 8  # linears, relus, log-softmax; the loss's gather may not be


def test_cnn_gradients_are_bit_for_bit_eager():
    def cnn():
        ember.manual_seed(0)
        return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(4, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(8 * 2 * 2, 3))

    m1, m2 = cnn(), cnn()
    loss_fn = nn.CrossEntropyLoss()

    def step_of(m):
        def step(x, y):
            m.zero_grad()
            loss = loss_fn(m(x), y)
            loss.backward()
            return loss
        return step

    eager, compiled = step_of(m1), ember.compile(step_of(m2))
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = ember.tensor(rng.standard_normal((4, 1, 14, 14)).astype(np.float32))
        y = ember.tensor(rng.integers(0, 3, 4))
        _equal(eager(x, y), compiled(x, y))
        for p, q in zip(m1.parameters(), m2.parameters()):
            _equal(p.grad, q.grad)
    assert compiled.stats["replays"] == 2
    assert compiled.lowered()[0]["lowered"] >= 4


def test_lowering_can_be_switched_off_and_gpu_style_traces_replay_op_by_op():
    compiled = ember.compile(_chain, options={"lower": False})
    with ember.no_grad():
        x = ember.linspace(-1.0, 1.0, 16)
        compiled(x)
        _equal(compiled(x), _chain(x))
    assert compiled.stats["replays"] == 1 and compiled.lowered() == [None]
    with pytest.raises(TypeError, match="options"):
        ember.compile(_chain, options=["lower"])
    with pytest.raises(TypeError, match="lower"):
        ember.compile(_chain, options={"lower": "no"})


def test_generated_source_is_straight_line_numpy():
    x = ember.ones(3, requires_grad=True)

    @ember.compile
    def step():
        (x * 0.5).sum().backward()

    step()
    step()
    _equal(x.grad, ember.full((3,), 1.0))
    held = next(iter(step._cache.values()))
    source = held.lowered.source
    assert source.startswith("def _replay(flat):") and "for " not in source
    assert "Mul" not in source and "forward" not in source  # no op-level calls


def test_a_detached_result_is_this_calls_value():
    g = ember.compile(lambda x: ((x * 2).detach(), x.detach()))
    for k in range(3):
        x = ember.full((2,), float(k))
        doubled, same = g(x)
        _equal(doubled, x * 2)
        _equal(same, x)
        assert same is not x and np.shares_memory(same.numpy(), x.numpy())
    assert g.stats["replays"] == 2


def test_docstring_example_runs():
    import doctest

    import ember.compiler.trace as trace

    result = doctest.testmod(trace, extraglobs={"ember": ember}, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_memory_layout_is_guarded():
    conv = nn.Conv2d(2, 3, 3)
    compiled = ember.compile(conv)
    rng = np.random.default_rng(3)
    data = rng.standard_normal((2, 2, 6, 6)).astype(np.float32)
    with ember.no_grad():
        dense = ember.tensor(data)
        swapped = ember.tensor(data.transpose(0, 1, 3, 2).copy()).transpose(2, 3)  # strided
        assert swapped.shape == dense.shape and not swapped.is_contiguous()
        for x in (dense, dense, swapped, swapped):
            _equal(compiled(x), conv(x))
    assert compiled.stats == {"traces": 2, "replays": 2, "eager": 0}
    assert compiled.lowered()[0]["fallback"] == []  # the convolution itself is lowered


def test_scalar_graph_is_bit_for_bit_eager():
    rng = np.random.default_rng(4)
    values = rng.uniform(-1, 1, 10)
    pairs = [tuple(rng.integers(0, 10, 2)) for _ in range(60)]

    def leaves(dtype):
        return [ember.tensor(v, dtype=dtype, requires_grad=True) for v in values]

    def graph(ls):
        def run():
            y = ls[0] * 0.0
            for i, j in pairs:
                y = y + ls[i] * ls[j] / 3.0 - ls[j]
            y.backward()
            return y
        return run

    for dtype in (ember.float32, ember.float64):
        a, b = leaves(dtype), leaves(dtype)
        eager, compiled = graph(a), ember.compile(graph(b))
        for _ in range(3):
            _equal(eager(), compiled())
            for p, q in zip(a, b):
                _equal(p.grad, q.grad)
        assert compiled.stats["replays"] == 2 and compiled.lowered()[0]["fallback"] == []


class _QuietLog(Function):
    """log(x) under np.errstate(divide="ignore"): no warning for log(0)."""

    array_backward = True

    @staticmethod
    def forward(ctx, x):
        with np.errstate(divide="ignore"):
            return ctx.xp.log(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


def test_an_ops_errstate_holds_in_the_replay():
    import warnings

    compiled = ember.compile(lambda x: _QuietLog.apply(x) * 2.0)
    x = ember.tensor([0.0, 1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            _equal(compiled(x), _QuietLog.apply(x) * 2.0)
    assert compiled.stats["replays"] == 2 and compiled.lowered()[0]["fallback"] == []


_TARGETS = [0, 1, 2, 3]
_OPS = {
    "softmax": lambda x: ember.nn.functional.softmax(x, 1),
    "log_softmax": lambda x: ember.nn.functional.log_softmax(x, 1),
    "mean and var": lambda x: x.mean(1) * x.var(1),
    "max over a dim": lambda x: x.max(1)[0],
    "amax": lambda x: x.amax(1),
    "sigmoid, gelu, silu": lambda x: ember.sigmoid(x) + ember.nn.functional.gelu(x)
    + ember.nn.functional.silu(x),
    "layer_norm": lambda x: ember.nn.functional.layer_norm(x, (6,)),
    "matmul of views": lambda x: (x @ x.t()).sum(1, keepdim=True) + x.permute(1, 0).reshape(4, 6),
    "cat, stack, index": lambda x: ember.cat([x, x[1:3, ::2].reshape(2, 3).repeat(1, 2)])
    .sum(0) + ember.stack([x, x]).sum(0),
    "where, clamp, abs": lambda x: ember.where(x > 0, x, x * 0.1).clamp(-0.5, 0.5) + x.abs(),
    "sqrt, log, pow, div": lambda x: (x * x + 1).sqrt() + (x * x + 1).log() + x ** 3
    + x / (x * x + 1),
    "cross_entropy": lambda x: ember.nn.functional.cross_entropy(x, ember.tensor(_TARGETS)),
    "mse_loss": lambda x: ember.nn.functional.mse_loss(x, x * 0.5),
    "norm, cumsum, sort": lambda x: x.norm(dim=1).sum() + x.cumsum(1) + ember.sort(x, 1)[0],
    "expand, embedding": lambda x: x[:1].expand(4, 6) * x
    + ember.nn.functional.embedding(ember.tensor([0, 2, 1, 3]), x),
}


@pytest.mark.parametrize("name", list(_OPS))
def test_ops_forward_and_backward_are_bit_for_bit_eager(name):
    op = _OPS[name]
    rng = np.random.default_rng(6)
    x1, x2 = (ember.zeros(4, 6, requires_grad=True) for _ in range(2))

    def step_of(x):
        def step():
            out = op(x).sum()
            out.backward()
            return out
        return step

    eager, compiled = step_of(x1), ember.compile(step_of(x2))
    for _ in range(3):
        values = ember.tensor(rng.standard_normal((4, 6)).astype(np.float32))
        with ember.no_grad():
            x1.copy_(values)
            x2.copy_(values)
        _equal(eager(), compiled())
        _equal(x1.grad, x2.grad)
    assert compiled.stats["replays"] == 2
    assert compiled.lowered()[0]["lowered"] >= 1


def test_many_ops_whose_backward_refuses_take_one_more_pass_not_one_each():
    def f(x):
        for _ in range(80):  # more than the lowering's passes
            x = _Signed.apply(x) * 0.5
        loss = x.sum()
        loss.backward()
        return loss

    x1, x2 = ember.tensor([0.5, -1.0, 2.0], requires_grad=True), \
        ember.tensor([0.5, -1.0, 2.0], requires_grad=True)
    compiled = ember.compile(f)
    for _ in range(2):
        _equal(f(x1), compiled(x2))
        _equal(x1.grad, x2.grad)
    (info,) = compiled.lowered()
    assert len(info["fallback"]) == 80 and info["lowered"] == 81  # the muls and the sum


@pytest.mark.parametrize("lower", [True, False])
def test_gradients_go_to_each_calls_own_arguments(lower):
    def step(x):
        y = (x * x).sum()
        y.backward()
        return y

    compiled = ember.compile(step, options={"lower": lower})
    xs = [ember.tensor([float(k), 2.0], requires_grad=True) for k in range(3)]
    for x in xs:
        compiled(x)
    assert compiled.stats["replays"] == 2
    for k, x in enumerate(xs):
        _equal(x.grad, ember.tensor([2.0 * k, 4.0]))
    hooked = ember.tensor([1.0, 1.0], requires_grad=True)
    seen = []
    hooked.register_hook(lambda g: seen.append(g))
    compiled(hooked)  # a hook on this call's argument: run eagerly
    assert len(seen) == 1 and compiled.stats["replays"] == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_where_with_zero_gives_numpys_bits(dtype):
    from ember.compiler.record import _where_zero

    rng = np.random.default_rng(7)
    x = (rng.standard_normal((5, 7)) - 0.2).astype(dtype)
    x[0, :5] = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    for mask in (x > 0, rng.random((5, 7)) < 0.5, np.zeros((5, 7), bool)):
        want, got = np.where(mask, x, 0.0), _where_zero(mask, x)
        bits = np.dtype(f"i{x.itemsize}")
        assert got.dtype == want.dtype and got.flags.c_contiguous
        assert np.array_equal(got.view(bits), want.view(bits))
