"""RNN, LSTM, GRU and the cells equal PyTorch's (float64, outputs and all gradients)."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn as nn

from .compare import check_module, same_keys, same_repr

torch = pytest.importorskip("torch")


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


RECURRENT = [
    ("RNN", lambda m: m.RNN(3, 4), False),
    ("RNN-relu-2layer-bi", lambda m: m.RNN(3, 4, 2, nonlinearity="relu",
                                           bidirectional=True), False),
    ("RNN-nobias-batchfirst", lambda m: m.RNN(3, 4, bias=False, batch_first=True), False),
    ("LSTM", lambda m: m.LSTM(3, 4), False),
    ("LSTM-2layer-bi-batchfirst", lambda m: m.LSTM(3, 4, num_layers=2, bidirectional=True,
                                                   batch_first=True), False),
    ("LSTM-proj", lambda m: m.LSTM(3, 4, proj_size=2, num_layers=2), False),
    ("GRU", lambda m: m.GRU(3, 4), False),
    ("GRU-2layer-bi", lambda m: m.GRU(3, 4, num_layers=2, bidirectional=True), False),
]


@pytest.mark.parametrize("name,build,_", RECURRENT, ids=[c[0] for c in RECURRENT])
def test_recurrent_layer_matches_torch(name, build, _):
    t, e = build(torch.nn), build(nn)
    same_repr(t, e)
    same_keys(t, e)
    batch_first = t.batch_first
    x = rand(2, 5, 3) if batch_first else rand(5, 2, 3)
    check_module(t, e, x)


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_initial_states(kind, bidirectional):
    layers = 2
    directions = 2 if bidirectional else 1
    t = getattr(torch.nn, kind)(3, 4, num_layers=layers, bidirectional=bidirectional)
    e = getattr(nn, kind)(3, 4, num_layers=layers, bidirectional=bidirectional)
    x = rand(4, 2, 3)
    h0 = rand(layers * directions, 2, 4, seed=1)
    if kind == "LSTM":
        c0 = rand(layers * directions, 2, 4, seed=2)
        check_module(t, e, x, (h0, c0))
    else:
        check_module(t, e, x, h0)


def test_unbatched_input():
    t, e = torch.nn.LSTM(3, 4, bidirectional=True), nn.LSTM(3, 4, bidirectional=True)
    check_module(t, e, rand(5, 3), (rand(2, 4, seed=1), rand(2, 4, seed=2)))
    t, e = torch.nn.GRU(3, 4), nn.GRU(3, 4)
    check_module(t, e, rand(5, 3))


def test_dropout_between_layers_only_in_training():
    e = nn.GRU(3, 4, num_layers=2, dropout=0.5).double()
    x = ember.tensor(rand(5, 2, 3))
    e.eval()
    a, _ = e(x)
    b, _ = e(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    e.train()
    ember.manual_seed(1)
    c, _ = e(x)
    ember.manual_seed(2)
    d, _ = e(x)
    assert not np.allclose(c.detach().numpy(), d.detach().numpy())
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.2)


CELLS = [
    ("RNNCell", lambda m: m.RNNCell(3, 4)),
    ("RNNCell-relu-nobias", lambda m: m.RNNCell(3, 4, bias=False, nonlinearity="relu")),
    ("LSTMCell", lambda m: m.LSTMCell(3, 4)),
    ("GRUCell", lambda m: m.GRUCell(3, 4)),
]


@pytest.mark.parametrize("name,build", CELLS, ids=[c[0] for c in CELLS])
def test_cells_match_torch(name, build):
    t, e = build(torch.nn), build(nn)
    same_repr(t, e)
    same_keys(t, e)
    check_module(t, e, rand(2, 3))
    if "LSTM" in name:
        check_module(t, e, rand(2, 3), (rand(2, 4, seed=1), rand(2, 4, seed=2)))
        check_module(t, e, rand(3), (rand(4, seed=1), rand(4, seed=2)))
    else:
        check_module(t, e, rand(2, 3), rand(2, 4, seed=1))
        check_module(t, e, rand(3), rand(4, seed=1))


def test_initialization_bound():
    lstm = nn.LSTM(10, 25, num_layers=2)
    bound = 1 / 5
    values = np.concatenate([p.detach().numpy().ravel() for p in lstm.parameters()])
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.95 * bound


def test_shape_errors():
    lstm = nn.LSTM(3, 4)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        lstm(ember.ones(5, 2, 2))
    with pytest.raises(RuntimeError, match="Expected hidden\\[0\\] size"):
        lstm(ember.ones(5, 2, 3), (ember.zeros(2, 2, 4), ember.zeros(1, 2, 4)))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D"):
        nn.GRU(3, 4)(ember.ones(3))


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_packed_sequence_input_matches_torch(kind, enforce_sorted):
    from ember.nn.utils.rnn import pack_padded_sequence as e_pack

    t_pack = torch.nn.utils.rnn.pack_padded_sequence
    lengths = [5, 3, 2] if enforce_sorted else [2, 5, 3]
    t = getattr(torch.nn, kind)(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    e = getattr(nn, kind)(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    x = rand(3, 5, 3)
    h0 = rand(4, 3, 4, seed=1)

    def call(m, x_, h_):
        lib_pack = t_pack if isinstance(x_, torch.Tensor) else e_pack
        packed = lib_pack(x_, lengths, batch_first=True, enforce_sorted=enforce_sorted)
        state = (h_, h_ * 0.5) if kind == "LSTM" else h_
        out, hidden = m(packed, state)
        return out.data, hidden

    check_module(t, e, x, h0, call=call)


def test_pack_pad_round_trip_matches_torch():
    from ember.nn.utils import rnn as e_rnn

    t_rnn = torch.nn.utils.rnn
    seqs = [rand(2, 3), rand(4, 3, seed=1), rand(1, 3, seed=2)]
    tp = t_rnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    ep = e_rnn.pack_sequence([ember.tensor(s) for s in seqs], enforce_sorted=False)
    np.testing.assert_array_equal(ep.data.numpy(), tp.data.numpy())
    np.testing.assert_array_equal(ep.batch_sizes.numpy(), tp.batch_sizes.numpy())
    np.testing.assert_array_equal(ep.sorted_indices.numpy(), tp.sorted_indices.numpy())
    np.testing.assert_array_equal(ep.unsorted_indices.numpy(), tp.unsorted_indices.numpy())
    tpad, tlen = t_rnn.pad_packed_sequence(tp, batch_first=True, padding_value=-1,
                                           total_length=6)
    epad, elen = e_rnn.pad_packed_sequence(ep, batch_first=True, padding_value=-1,
                                           total_length=6)
    np.testing.assert_array_equal(epad.numpy(), tpad.numpy())
    np.testing.assert_array_equal(elen.numpy(), tlen.numpy())
    for a, b in zip(e_rnn.unpack_sequence(ep), seqs):
        np.testing.assert_array_equal(a.numpy(), b)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        e_rnn.pack_padded_sequence(ember.zeros(4, 2, 1), [1, 3])
