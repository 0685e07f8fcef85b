"""ember.compile(mode="reduce-overhead"): GPU forward calls replay as one captured CUDA
graph, with eager's results; everything a graph cannot redo replays op by op."""
import numpy as np
import pytest

import ember
from ember import backend, nn

needs_cuda = pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a CUDA GPU "
                                "(or the CuPy stand-in: make test-standin)")


def _model(device, dropout=0.0):
    ember.manual_seed(0)
    layers = [nn.Linear(12, 16), nn.Tanh()]
    if dropout:
        layers.append(nn.Dropout(dropout))
    layers.append(nn.Linear(16, 3))
    return nn.Sequential(*layers).to(device)


def _inputs(n, device, seed=3):
    rng = np.random.default_rng(seed)
    return [ember.tensor(rng.standard_normal((5, 12)).astype(np.float32), device=device)
            for _ in range(n)]


def _same(a, b):
    np.testing.assert_allclose(a.cpu().numpy(), b.cpu().numpy(), rtol=1e-6, atol=1e-6)


def test_what_a_graph_cannot_redo_is_refused():
    from ember.compiler.graphs import refusal
    gpu_op = (0, None, None, None, 0, False, (), None, 0, 0)  # a forward step on cuda:0
    assert refusal([gpu_op], draws_during_trace=False) == (
        None if ember.cuda.is_available() else
        "CUDA graphs are not available here (no usable GPU, or a ROCm build of CuPy)")
    assert "random numbers" in refusal([gpu_op], draws_during_trace=True)
    assert "on the CPU" in refusal([gpu_op[:8] + (None, 0)], False)
    assert "several GPUs" in refusal([gpu_op, gpu_op[:8] + (1, 1)], False)
    assert "backward" in refusal([gpu_op, (1, None)], False)
    assert refusal([], False) == "it runs no op"


def test_unknown_mode_is_refused_as_pytorch_does():
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast, should be one of"):
        ember.compile(lambda x: x, mode="fast")


def test_cpu_calls_replay_as_before_and_say_why_no_graph():
    model = _model("cpu")
    compiled = ember.compile(model, mode="reduce-overhead")
    with ember.no_grad():
        for x in _inputs(3, "cpu"):
            _same(compiled(x), model(x))
    assert compiled.stats["replays"] == 2
    [state] = compiled.cuda_graphs()
    assert state["captured"] is False and "on the CPU" in state["refused"]


def test_default_mode_captures_nothing():
    compiled = ember.compile(lambda x: x * 2)
    compiled(ember.ones(3))
    assert compiled.cuda_graphs() == [{"captured": False, "launches": 0, "failed": None,
                                       "refused": "mode='reduce-overhead' is off"}]


@needs_cuda
def test_cuda_forward_replays_as_a_graph_with_eager_results():
    model = _model("cuda")
    compiled = ember.compile(model, mode="reduce-overhead")
    xs = _inputs(6, "cuda")
    results = []
    with ember.no_grad():
        for x in xs:
            results.append(compiled(x))
        for x, r in zip(xs, results):  # earlier results were not overwritten by later calls
            _same(r, model(x))
    [state] = compiled.cuda_graphs()
    assert state["captured"] and state["launches"] == 4 and state["failed"] is None
    assert compiled.stats == {"traces": 1, "replays": 5, "eager": 0}


@needs_cuda
def test_cuda_replaced_parameter_data_is_captured_again():
    model = _model("cuda")
    compiled = ember.compile(model, mode="max-autotune")
    x = _inputs(1, "cuda")[0]
    with ember.no_grad():
        for _ in range(3):
            compiled(x)
        weight = model[0].weight
        weight.data = weight.data * 2  # new memory the old graph does not read
        _same(compiled(x), model(x))
        _same(compiled(x), model(x))
    assert compiled.cuda_graphs()[0]["captured"]


@needs_cuda
def test_cuda_graph_reads_in_place_updates_of_parameters():
    model = _model("cuda")
    compiled = ember.compile(model, mode="reduce-overhead")
    x = _inputs(1, "cuda")[0]
    with ember.no_grad():
        for _ in range(3):
            compiled(x)
        model[2].bias.add_(1.0)  # same memory: the graph sees the new values
        _same(compiled(x), model(x))


@needs_cuda
def test_cuda_random_draws_training_steps_and_failed_captures_replay_op_by_op(monkeypatch):
    with ember.no_grad():
        model = _model("cuda", dropout=0.5)  # train mode: dropout draws on the GPU
        compiled = ember.compile(model, mode="reduce-overhead")
        for x in _inputs(3, "cuda"):
            compiled(x)
        assert compiled.cuda_graphs() == [None]  # the mask is drawn outside an op: eager
        assert compiled.explain()[0] is not None

    model = _model("cuda")
    opt = ember.optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        loss = model(x).sum()
        loss.backward()
        opt.step()
        return loss
    compiled_step = ember.compile(step, mode="reduce-overhead")
    for x in _inputs(3, "cuda"):
        compiled_step(x)
    assert "backward" in compiled_step.cuda_graphs()[0]["refused"]

    def refuse(fn, env, index):
        raise RuntimeError("operation not permitted when stream is capturing")
    monkeypatch.setattr(backend.cuda, "CapturedGraph", refuse)
    model = _model("cuda")
    compiled = ember.compile(model, mode="reduce-overhead")
    with ember.no_grad():
        for x in _inputs(4, "cuda"):
            _same(compiled(x), model(x))
    [state] = compiled.cuda_graphs()
    assert not state["captured"] and "stream is capturing" in state["failed"]
