"""The fused recurrent ops behind nn.LSTM/GRU/RNN: float32 parity with PyTorch, packed
projections, double backward, partial gradients, the graph's shape and bad arguments."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn as nn

from .compare import check_module, copy_weights

torch = pytest.importorskip("torch")


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


def _pair(build, dtype):
    t, e = build(torch.nn).to(getattr(torch, dtype)), build(nn).to(getattr(ember, dtype))
    copy_weights(t, e)
    return t, e


FLOAT32 = [
    ("LSTM-proj-bi", lambda m: m.LSTM(6, 16, num_layers=2, proj_size=5, bidirectional=True)),
    ("GRU-bi-batchfirst", lambda m: m.GRU(6, 16, bidirectional=True, batch_first=True)),
    ("RNN-relu-2layer", lambda m: m.RNN(6, 16, num_layers=2, nonlinearity="relu")),
]


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
@pytest.mark.parametrize("name,build", FLOAT32, ids=[c[0] for c in FLOAT32])
def test_float32_layers_match_torch(name, build):
    t, e = _pair(build, "float32")
    x = rand(7, 3, 6).astype(np.float32)
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    t_out, e_out = t(tx), e(ex)
    t_all = [t_out[0]] + list(t_out[1] if isinstance(t_out[1], tuple) else [t_out[1]])
    e_all = [e_out[0]] + list(e_out[1] if isinstance(e_out[1], tuple) else [e_out[1]])
    for a, b in zip(e_all, t_all):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-5)
    upstream = [rand(*b.shape, seed=k + 1).astype(np.float32) for k, b in enumerate(t_all)]
    sum((b * torch.tensor(u)).sum() for b, u in zip(t_all, upstream)).backward()
    sum((a * ember.tensor(u)).sum() for a, u in zip(e_all, upstream)).backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-4)
    for (name_t, p_t), (name_e, p_e) in zip(t.named_parameters(), e.named_parameters()):
        assert name_t == name_e
        np.testing.assert_allclose(p_e.grad.numpy(), p_t.grad.numpy(), atol=1e-4,
                                   err_msg=name_e)


def test_packed_projected_lstm_matches_torch():
    from ember.nn.utils.rnn import pack_padded_sequence as e_pack

    lengths = [2, 4, 3]

    def call(m, x_, h_, c_):
        pack = torch.nn.utils.rnn.pack_padded_sequence if isinstance(x_, torch.Tensor) \
            else e_pack
        out, hidden = m(pack(x_, lengths, enforce_sorted=False), (h_, c_))
        return out.data, hidden

    build = lambda m: m.LSTM(3, 5, proj_size=2, num_layers=2, bidirectional=True)  # noqa: E731
    check_module(build(torch.nn), build(nn), rand(4, 3, 3), rand(4, 3, 2, seed=1),
                 rand(4, 3, 5, seed=2), call=call)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_final_state_only_and_frozen_input(kind):
    """Gradients reach the weights from h_n alone, with an input that needs none."""
    t, e = _pair(lambda m: getattr(m, kind)(3, 4, num_layers=2), "float64")
    x = rand(5, 2, 3)
    t_h = t(torch.tensor(x))[1]
    e_h = e(ember.tensor(x))[1]
    (t_h[0] if kind == "LSTM" else t_h).sum().backward()
    (e_h[0] if kind == "LSTM" else e_h).sum().backward()
    for p_t, p_e in zip(t.parameters(), e.parameters()):
        np.testing.assert_allclose(p_e.grad.numpy(), p_t.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_double_backward_matches_torch(kind):
    """d/dW of |d output / d x|^2 through the fused node (its backward on Tensors)."""
    t, e = _pair(lambda m: getattr(m, kind)(2, 3, bidirectional=True), "float64")
    x = rand(3, 2, 2)
    results = []
    for lib, module in ((torch, t), (ember, e)):
        xs = lib.tensor(x, requires_grad=True)
        out = module(xs)[0]
        (g,) = lib.autograd.grad((out * out).sum(), xs, create_graph=True)
        (g * g).sum().backward()
        results.append([p.grad.numpy() for p in module.parameters()])
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, atol=1e-10)


def test_gradgradcheck_packed_lstm_through_module():
    lstm = nn.LSTM(2, 2, bidirectional=True).double()
    packed_lengths = [3, 1]

    def run(x):
        packed = nn.utils.rnn.pack_padded_sequence(x, packed_lengths)
        out, (h, c) = lstm(packed)
        return out.data, h, c

    x = ember.tensor(rand(3, 2, 2), requires_grad=True)
    assert ember.autograd.gradgradcheck(run, (x,), eps=1e-6, atol=1e-5, rtol=1e-3)


def test_one_node_per_layer_and_direction():
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    out, _ = lstm(ember.ones(5, 2, 3, requires_grad=True))
    seen, stack, names = set(), [out.grad_fn], []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name())
        stack.extend(child for child, _ in node.next_functions if child is not None)
    assert names.count("MkldnnRnnLayerBackward0") == 4


def test_no_grad_forward_is_the_same_and_untracked():
    lstm = nn.GRU(3, 4)
    x = ember.tensor(rand(5, 2, 3).astype(np.float32))
    tracked, _ = lstm(x)
    with ember.no_grad():
        plain, h = lstm(x)
    assert plain.grad_fn is None and not h.requires_grad
    np.testing.assert_array_equal(plain.numpy(), tracked.detach().numpy())


def test_full_dropout_zeroes_the_next_layers_input():
    """dropout=1 between layers: layer 2 sees zeros, so its output is that of a one-layer
    LSTM with layer 2's weights on a zero input."""
    deep = nn.LSTM(3, 4, num_layers=2, dropout=1.0).double()
    single = nn.LSTM(4, 4).double()
    with ember.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(single, f"{name}_l0").copy_(getattr(deep, f"{name}_l1"))
    out, _ = deep(ember.tensor(rand(5, 2, 3)))
    expected, _ = single(ember.zeros(5, 2, 4, dtype=ember.float64))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    deep.eval()
    assert not np.allclose(deep(ember.tensor(rand(5, 2, 3)))[0].detach().numpy(),
                           expected.detach().numpy())


def test_long_sequence_backward():
    rnn = nn.RNN(1, 2)
    out, h = rnn(ember.ones(3000, 1, 1, requires_grad=True))
    h.sum().backward()
    assert np.isfinite(rnn.weight_hh_l0.grad.numpy()).all()


def _args(x, hx, params, **overrides):
    args = dict(input=x, hx=hx, params=params, has_biases=False, num_layers=1, dropout=0.0,
                train=False, bidirectional=False, batch_first=False)
    args.update(overrides)
    return args


def test_functional_errors():
    x = ember.ones(4, 2, 3)
    h = ember.zeros(1, 2, 5)
    params = [ember.ones(15, 3), ember.ones(15, 5)]
    assert ember.gru(**_args(x, h, params))[0].shape == (4, 2, 5)
    with pytest.raises(RuntimeError, match="expected 4 parameter tensors"):
        ember.gru(**_args(x, h, params, has_biases=True))
    with pytest.raises(RuntimeError, match="expected hx of size \\(1, 2, 5\\)"):
        ember.gru(**_args(x, ember.zeros(1, 3, 5), params))
    with pytest.raises(RuntimeError, match="dtype"):
        ember.gru(**_args(x, h, [params[0].double(), params[1]]))
    with pytest.raises(RuntimeError, match="input must have 3 dimensions"):
        ember.gru(**_args(ember.ones(4, 3), h, params))
    with pytest.raises(RuntimeError, match="has 3 input features, but layer 0 gets 2"):
        ember.gru(**_args(ember.ones(4, 2, 2), h, params))
    with pytest.raises(RuntimeError, match="hx must be a tuple"):
        ember.lstm(**_args(x, h, params))
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        ember.gru(x, h, params)
    with pytest.raises(RuntimeError, match="non-increasing"):
        ember.gru(ember.ones(3, 3), ember.tensor([1, 2]), ember.zeros(1, 2, 5), params, False,
                  1, 0.0, False, False)
    with pytest.raises(RuntimeError, match="sum to 3 but data has 4 rows"):
        ember.gru(ember.ones(4, 3), ember.tensor([2, 1]), ember.zeros(1, 2, 5), params, False,
                  1, 0.0, False, False)


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_dropout_between_layers_matches_torch_after_a_seed(kind, packed):
    """Dropout masks the whole layer output at once, as PyTorch does, so the same seed
    gives the same outputs and gradients."""
    from ember.nn.utils.rnn import pack_padded_sequence as e_pack

    def call(m, x_):
        lib = torch if isinstance(x_, torch.Tensor) else ember
        lib.manual_seed(3)
        if not packed:
            return m(x_)
        pack = torch.nn.utils.rnn.pack_padded_sequence if lib is torch else e_pack
        out, hidden = m(pack(x_, [5, 4], enforce_sorted=False))
        return out.data, hidden

    def build(m):
        return getattr(m, kind)(3, 4, num_layers=3, dropout=0.5, bidirectional=True)

    check_module(build(torch.nn), build(nn), rand(5, 2, 3), call=call)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_unbatched_batch_first_with_state(kind):
    def build(m):
        return getattr(m, kind)(3, 4, num_layers=2, bidirectional=True, batch_first=True)

    h0 = rand(4, 4, seed=1)
    state = (h0, rand(4, 4, seed=2)) if kind == "LSTM" else h0
    check_module(build(torch.nn), build(nn), rand(5, 3), state)


def test_functional_weight_shape_errors():
    x, h = ember.ones(4, 2, 3), ember.zeros(1, 2, 5)
    with pytest.raises(RuntimeError, match="params\\[1\\] should have shape \\(15, 5\\)"):
        ember.gru(**_args(x, h, [ember.ones(15, 3), ember.ones(12, 5)]))
    with pytest.raises(RuntimeError, match="params\\[3\\] should have shape \\(15,\\)"):
        ember.gru(**_args(x, h, [ember.ones(15, 3), ember.ones(15, 5), ember.ones(15),
                                 ember.ones(5)], has_biases=True))
    state = (ember.zeros(1, 2, 2), ember.zeros(1, 2, 5))
    with pytest.raises(RuntimeError, match="params\\[2\\] should have shape \\(2, 5\\)"):
        ember.lstm(**_args(x, state, [ember.ones(20, 3), ember.ones(20, 2), ember.ones(5, 2)]))
