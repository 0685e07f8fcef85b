"""ember.compile: replays give eager's outputs and gradients; guards fall back to eager."""
import numpy as np
import pytest

import ember
from ember import nn


def _mlp(seed=0):
    ember.manual_seed(seed)
    model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 5))
    opt = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, opt


def _batches(n, batch=8, features=20, classes=5, seed=1):
    rng = np.random.default_rng(seed)
    return [(ember.tensor(rng.standard_normal((batch, features)).astype(np.float32)),
             ember.tensor(rng.integers(0, classes, batch))) for _ in range(n)]


def _train_step(model, opt, loss_fn):
    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _same(a, b, tol=1e-6):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def test_mlp_training_step_matches_eager_after_five_steps():
    loss_fn = nn.CrossEntropyLoss()
    eager_model, eager_opt = _mlp()
    model, opt = _mlp()
    eager = _train_step(eager_model, eager_opt, loss_fn)
    compiled = ember.compile(_train_step(model, opt, loss_fn))
    for x, y in _batches(5):
        _same(eager(x, y), compiled(x, y))
    assert compiled.stats == {"traces": 1, "replays": 4, "eager": 0}
    for p, q in zip(eager_model.parameters(), model.parameters()):
        _same(p, q)
        _same(p.grad, q.grad)
    assert eager_opt.state_dict()["state"].keys() == opt.state_dict()["state"].keys()


def test_adam_step_and_grads_set_to_zero_match_eager():
    loss_fn = nn.MSELoss()

    def build():
        ember.manual_seed(3)
        model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
        return model, ember.optim.Adam(model.parameters(), lr=1e-2)

    def step_of(model, opt):
        def step(x, y):
            opt.zero_grad(set_to_none=False)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss
        return step

    (m1, o1), (m2, o2) = build(), build()
    eager, compiled = step_of(m1, o1), ember.compile(step_of(m2, o2))
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = ember.tensor(rng.standard_normal((7, 4)).astype(np.float32))
        y = ember.tensor(rng.standard_normal((7, 1)).astype(np.float32))
        _same(eager(x, y), compiled(x, y))
    assert compiled.stats["replays"] == 4
    for p, q in zip(m1.parameters(), m2.parameters()):
        _same(p, q, 1e-5)


def _cnn(seed=0):
    ember.manual_seed(seed)
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(8 * 2 * 2, 3))


def test_cnn_forward_and_backward_match_eager():
    rng = np.random.default_rng(2)
    eager_model, model = _cnn(), _cnn()
    loss_fn = nn.CrossEntropyLoss()

    def step_of(m):
        def step(x, y):
            m.zero_grad()
            loss = loss_fn(m(x), y)
            loss.backward()
            return loss
        return step

    eager, compiled = step_of(eager_model), ember.compile(step_of(model))
    for _ in range(3):
        x = ember.tensor(rng.standard_normal((4, 1, 14, 14)).astype(np.float32))
        y = ember.tensor(rng.integers(0, 3, 4))
        _same(eager(x, y), compiled(x, y), 1e-5)
        for p, q in zip(eager_model.parameters(), model.parameters()):
            _same(p.grad, q.grad, 1e-5)
    assert compiled.stats["replays"] == 2


def test_compiled_module_forward_under_no_grad():
    model = _cnn()
    compiled = ember.compile(model)
    assert compiled.training is model.training  # attributes are the module's
    rng = np.random.default_rng(4)
    with ember.no_grad():
        for _ in range(3):
            x = ember.tensor(rng.standard_normal((2, 1, 14, 14)).astype(np.float32))
            _same(model(x), compiled(x))
    assert compiled.stats["replays"] == 2


def test_module_forward_needing_a_graph_runs_eagerly():
    model = _cnn()
    compiled = ember.compile(model)
    x = ember.ones(2, 1, 14, 14)
    for _ in range(2):
        out = compiled(x)
        assert out.grad_fn is not None  # the caller's backward needs it
        out.sum().backward()
    assert compiled.stats == {"traces": 1, "replays": 0, "eager": 1}
    assert "requires grad" in compiled.explain()[0]


def _chain(x):
    y = x
    for _ in range(4):
        y = y + 0.25
        y = y * 0.5
        y = y ** 2
        y = y.exp()
        y = y.tanh()
    return y.sum()


def test_ops_chain_forward_and_backward_match_eager():
    x1 = ember.linspace(-1, 1, 16, requires_grad=True)
    x2 = ember.linspace(-1, 1, 16, requires_grad=True)

    def step(x):
        out = _chain(x)
        out.backward()
        return out

    compiled = ember.compile(step)
    for _ in range(3):
        _same(step(x1), compiled(x2))
        _same(x1.grad, x2.grad)  # accumulated over the calls, like eager
    with ember.no_grad():
        fwd = ember.compile(_chain)
        for _ in range(2):
            _same(_chain(x1), fwd(x2))
    assert compiled.stats["replays"] == 2 and fwd.stats["replays"] == 1


def test_replay_reads_new_input_values_and_multiple_outputs():
    def f(a, b):
        s, i = ember.sort(a * b)
        return {"sorted": s, "mean": (s - b).mean(), "pair": (i, 2)}

    compiled = ember.compile(f)
    rng = np.random.default_rng(5)
    for _ in range(3):
        a, b = (ember.tensor(rng.standard_normal(6)) for _ in range(2))
        got, want = compiled(a, b), f(a, b)
        _same(got["sorted"], want["sorted"])
        _same(got["mean"], want["mean"])
        assert got["pair"][1] == 2
        assert np.array_equal(got["pair"][0].numpy(), want["pair"][0].numpy())
    assert compiled.stats["replays"] == 2


def test_shape_change_makes_a_new_trace():
    compiled = ember.compile(lambda x: (x * 2).sum(0))
    a, b = ember.ones(3, 4), ember.ones(5, 4)
    _same(compiled(a), ember.full((4,), 6.0))
    _same(compiled(b), ember.full((4,), 10.0))
    _same(compiled(a), ember.full((4,), 6.0))
    assert compiled.stats == {"traces": 2, "replays": 1, "eager": 0}


def test_dtype_change_makes_a_new_trace():
    compiled = ember.compile(lambda x: x / 3)
    f32 = compiled(ember.ones(3))
    f64 = compiled(ember.ones(3, dtype=ember.float64))
    again = compiled(ember.ones(3, dtype=ember.float64))
    assert f32.dtype is ember.float32 and f64.dtype is ember.float64
    assert again.dtype is ember.float64
    _same(again, ember.full((3,), 1 / 3, dtype=ember.float64), 1e-12)
    assert compiled.stats == {"traces": 2, "replays": 1, "eager": 0}


def test_grad_mode_and_python_values_are_guarded():
    scale = {"v": 2.0}
    compiled = ember.compile(lambda x, k: x * k)
    x = ember.ones(2, requires_grad=True)
    _same(compiled(x, 2.0), ember.full((2,), 2.0))
    _same(compiled(x.detach(), 3.0), ember.full((2,), 3.0))  # new Python value: new trace
    with ember.no_grad():
        _same(compiled(x, 2.0), ember.full((2,), 2.0))
    assert compiled.stats["traces"] == 3
    assert scale["v"] == 2.0


def test_data_dependent_control_flow_runs_eagerly():
    calls = []

    def f(x):
        calls.append(1)
        if x.sum() > 0:  # bool() of a traced value
            return x * 2
        return x * -1

    compiled = ember.compile(f)
    pos, neg = ember.ones(3), -ember.ones(3)
    _same(compiled(pos), ember.full((3,), 2.0))
    _same(compiled(neg), ember.full((3,), 1.0))  # same signature, other branch: eager
    assert compiled.stats == {"traces": 1, "replays": 0, "eager": 1}
    assert "read a tensor's value" in compiled.explain()[0]
    assert len(calls) == 2
    for read in (lambda t: t.sum().item(), lambda t: t.tolist()):
        g = ember.compile(lambda x, read=read: (read(x), x + 1)[1])
        g(pos)
        assert g(pos) is not None and g.stats["eager"] == 1


def test_in_place_op_and_random_factory_run_eagerly():
    def inplace(x):
        y = x * 1
        y.add_(1)
        return y

    g = ember.compile(inplace)
    g(ember.ones(2))
    _same(g(ember.ones(2)), ember.full((2,), 2.0))
    assert g.stats["eager"] == 1 and "in-place" in g.explain()[0]
    r = ember.compile(lambda x: x + ember.randn(3))
    a, b = r(ember.zeros(3)), r(ember.zeros(3))
    assert not np.array_equal(a.numpy(), b.numpy())
    assert r.stats["eager"] == 1 and "random" in r.explain()[0]


def test_dropout_draws_new_numbers_each_call():
    g = ember.compile(nn.Dropout(0.5))
    x = ember.ones(200)
    a, b, c = g(x), g(x), g(x)
    assert not np.array_equal(a.numpy(), b.numpy()) and not np.array_equal(b.numpy(), c.numpy())
    assert set(np.unique(c.numpy())) <= {0.0, 2.0}
    assert g.stats["eager"] == 2  # its mask is drawn outside an op
    with ember.no_grad():
        g.eval()
        g(x)
        assert g(x) is not None and g.stats["replays"] == 1  # eval: the identity, replayed


def test_parameter_replaced_with_other_shape_retraces():
    lin = nn.Linear(3, 2)
    with ember.no_grad():
        g = ember.compile(lin)
        x = ember.ones(1, 3)
        g(x)
        g(x)
        lin.weight = nn.Parameter(ember.ones(4, 3))
        lin.bias = nn.Parameter(ember.zeros(4))
        _same(g(x), ember.full((1, 4), 3.0))
    assert g.stats == {"traces": 2, "replays": 1, "eager": 0}


def test_trace_cache_is_bounded_lru():
    compiled = ember.compile(lambda x: x + 1, cache_size=3)
    for n in range(1, 7):
        compiled(ember.ones(n))
    assert compiled.cache_len() == 3
    compiled(ember.ones(6))  # still cached
    compiled(ember.ones(1))  # evicted: traced again
    assert compiled.stats == {"traces": 7, "replays": 1, "eager": 0}
    assert ember.compile(lambda x: x).cache_size == 8


def test_fullgraph_raises_and_bad_arguments():
    g = ember.compile(lambda x: x * x.sum().item(), fullgraph=True)
    with pytest.raises(RuntimeError, match="fullgraph"):
        g(ember.ones(2))
    with pytest.raises(TypeError, match="function or an nn.Module"):
        ember.compile(3)
    with pytest.raises(ValueError, match="cache_size"):
        ember.compile(lambda x: x, cache_size=0)
    f = lambda x: x  # noqa: E731
    assert ember.compile(f, disable=True) is f
    assert isinstance(ember.compile(mode="reduce-overhead")(f), ember.compiler.CompiledFunction)


def test_hooks_run_eagerly():
    w = ember.ones(3, requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(1))

    def step():
        (w * 2).sum().backward()

    g = ember.compile(step)
    g()
    g()
    assert len(seen) == 2 and g.stats["eager"] == 1


def test_deep_chain_is_recorded_without_recursion():
    def f(x):
        for _ in range(3000):
            x = x * 1.0001
        x.sum().backward()

    x = ember.ones(2, requires_grad=True)
    g = ember.compile(f)
    g(x)
    g(x)
    _same(x.grad, ember.full((2,), 2 * 1.0001 ** 3000), 1e-4)


def test_learning_rate_change_and_scheduler_are_seen_by_replays():
    loss_fn = nn.CrossEntropyLoss()
    (m1, o1), (m2, o2) = _mlp(), _mlp()
    eager, compiled = _train_step(m1, o1, loss_fn), ember.compile(_train_step(m2, o2, loss_fn))
    s1 = ember.optim.lr_scheduler.StepLR(o1, step_size=1, gamma=0.5)
    s2 = ember.optim.lr_scheduler.StepLR(o2, step_size=1, gamma=0.5)
    for x, y in _batches(4, seed=7):
        _same(eager(x, y), compiled(x, y))
        s1.step()
        s2.step()
    assert compiled.stats["replays"] == 3
    for p, q in zip(m1.parameters(), m2.parameters()):
        _same(p, q)


def test_pytorch_style_module_compile_and_retained_results():
    import ember as torch

    model = torch.nn.Linear(4, 3)
    fast = torch.compile(model, mode="reduce-overhead")
    with torch.no_grad():
        first = fast(torch.ones(2, 4))
        second = fast(torch.full((2, 4), 2.0))
        _same(first, model(torch.ones(2, 4)))  # the first result is not overwritten
        _same(second, model(torch.full((2, 4), 2.0)))


def test_batch_norm_running_statistics_update_on_replay():
    def build():
        ember.manual_seed(0)
        return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))

    m1, m2 = build(), build()
    g = ember.compile(m2)
    rng = np.random.default_rng(8)
    with ember.no_grad():
        for _ in range(3):
            x = ember.tensor(rng.standard_normal((6, 3)).astype(np.float32))
            _same(m1(x), g(x))
    assert g.stats["replays"] == 2
    _same(m1[1].running_mean, m2[1].running_mean)
    _same(m1[1].running_var, m2[1].running_var)
    assert m1[1].num_batches_tracked.item() == m2[1].num_batches_tracked.item() == 3


def test_assignment_into_a_tensor_runs_eagerly():
    def f(x):
        y = x * 2
        y[0] = 5.0
        return y

    g = ember.compile(f)
    for _ in range(2):
        _same(g(ember.ones(3)), ember.tensor([5.0, 2.0, 2.0]))
    assert g.stats["eager"] == 1 and "assignment" in g.explain()[0]


def test_returned_argument_is_the_same_object_and_threads_do_not_leak_into_a_trace():
    import threading

    g = ember.compile(lambda x, y: (x, y + 1))
    a = ember.ones(2)
    for _ in range(2):
        same, _ = g(a, a)
        assert same is a
    other_thread_ops = []
    started, release = threading.Event(), threading.Event()

    def worker():
        started.set()
        release.wait(5)
        other_thread_ops.append(ember.ones(2) * 3)

    t = threading.Thread(target=worker)
    t.start()
    started.wait(5)

    def f(x):
        release.set()
        t.join(5)  # the other thread's op runs while this call is traced
        return x * 2

    h = ember.compile(f)
    h(ember.ones(2))
    _same(h(ember.full((2,), 4.0)), ember.full((2,), 8.0))
    _same(other_thread_ops[0], ember.full((2,), 3.0))
    assert h.stats["replays"] == 1


def test_default_dtype_is_guarded():
    g = ember.compile(lambda x: x * 2)
    x = ember.ones(2, dtype=ember.int64)
    g(x)
    previous = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        g(x)
    finally:
        ember.set_default_dtype(previous)
    assert g.stats["traces"] == 2


def test_indexing_with_a_tensor_index_reads_each_calls_index():
    g = ember.compile(lambda x, i: x[i] * 2)
    x = ember.arange(5.0)
    for idx in ([0, 1], [3, 4], [2, 2]):
        _same(g(x, ember.tensor(idx)), x[ember.tensor(idx)] * 2)
    cat = ember.compile(lambda a, b: ember.cat([a, b]) + 1)
    for k in range(3):
        a, b = ember.full((2,), float(k)), ember.ones(1)
        _same(cat(a, b), ember.cat([a, b]) + 1)


def test_post_accumulate_hooks_and_grad_dtype_run_eagerly():
    w = ember.ones(3, requires_grad=True)
    seen = []
    w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))

    @ember.compile
    def step(x):
        (w * x).sum().backward()

    for _ in range(3):
        step(ember.full((3,), 2.0))
    assert len(seen) == 3 and seen[-1].tolist() == [6.0, 6.0, 6.0]
    v = ember.ones(2, requires_grad=True)
    v.grad_dtype = ember.float64

    @ember.compile
    def other(x):
        (v * x).sum().backward()

    for _ in range(2):
        other(ember.ones(2))
    assert v.grad.dtype is ember.float64 and v.grad.tolist() == [2.0, 2.0]


def test_clearing_grad_inside_the_step_is_replayed():
    # `p.grad = None` (what zero_grad(set_to_none=True) does) is recorded and replayed;
    # assigning a tensor to .grad is not replayable, so that step runs eagerly
    w = ember.tensor([0.5, -1.0, 2.0], requires_grad=True)

    def step(x):
        w.grad = None
        loss = (w * x).sum()
        loss.backward()
        return loss

    compiled = ember.compile(step)
    for k in range(4):
        x = ember.tensor([1.0, 2.0, 3.0]) * (k + 1)
        assert compiled(x).item() == 4.5 * (k + 1) and w.grad.tolist() == x.tolist()
    assert compiled.stats["replays"] == 3

    def assigning(x):
        w.grad = ember.zeros(3)
        loss = (w * x).sum()
        loss.backward()
        return loss

    compiled = ember.compile(assigning)
    for _ in range(3):
        assert compiled(ember.ones(3)).item() == 1.5 and w.grad.tolist() == [1.0, 1.0, 1.0]
    assert compiled.stats["replays"] == 0
    assert "assigning a tensor to .grad" in compiled.explain()[0]


@pytest.mark.parametrize("lower", [False, True])
def test_calls_from_several_threads_at_once_match_eager(lower):
    """Each op-level call keeps its op's ctx (and the call's arguments) between forward
    and backward: threads replaying one signature at once must not see each other's."""
    import sys
    import threading

    from .test_compile_lower import _Normalized

    weight = ember.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4).astype(np.float32))

    def f(x):
        scaled = _Normalized.apply(x * 3.0)  # kept as an op-level call by the lowering
        hidden = ember.tanh(scaled @ weight)
        loss = (ember.sort(hidden, dim=1).values * hidden).sum()
        loss.backward()
        return loss, hidden.softmax(1)

    g = ember.compile(f, options={"lower": lower})
    CALLS = 100
    rng = np.random.default_rng(3)
    inputs = [(rng.standard_normal((5, 3)) * (i + 1)).astype(np.float32) for i in range(4)]
    expected = []
    for data in inputs:
        x = ember.tensor(data, requires_grad=True)
        loss, soft = f(x)
        expected.append((loss.item(), soft.detach().numpy(), x.grad.numpy()))
    g(ember.tensor(inputs[0], requires_grad=True))  # the trace
    failures = []
    barrier = threading.Barrier(len(inputs))

    def worker(i):
        barrier.wait()
        for _ in range(CALLS):
            x = ember.tensor(inputs[i], requires_grad=True)
            try:
                loss, soft = g(x)
            except Exception as error:  # a replay that met another thread's state
                failures.append(repr(error))
                continue
            want_loss, want_soft, want_grad = expected[i]
            if not (np.isclose(loss.item(), want_loss, rtol=1e-5) and
                    np.allclose(soft.numpy(), want_soft, rtol=1e-5, atol=1e-6) and
                    x.grad is not None and
                    np.allclose(x.grad.numpy(), want_grad, rtol=1e-5, atol=1e-6)):
                failures.append(f"thread {i}: a result differs from eager")

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, inside the replays
    try:
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(inputs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        sys.setswitchinterval(interval)
    assert g.stats["traces"] == 1 and g.stats["replays"] >= 1
    assert (g.lowered()[0] is not None) == lower
    if lower:
        assert "_Normalized" in dict(g.lowered()[0]["fallback"])
    assert not failures, f"{len(failures)} of {CALLS * len(inputs)} calls: {failures[:3]}"
