"""Recurrent layers: RNN, LSTM, GRU and their single-step cells.

The layers run ``ember.lstm`` / ``ember.gru`` / ``ember.rnn_tanh`` / ``ember.rnn_relu``:
one fused node per layer and direction, which projects the whole input sequence with one
matmul and loops over time on arrays (see ``ember.ops.recurrent``). Cost per layer and
direction: O(L N G H (H_in + H)), with G gates (1 RNN, 3 GRU, 4 LSTM). The cells are one
step composed of ember ops, with PyTorch's graph.

Gate order (PyTorch's): LSTM rows are (input, forget, cell, output); GRU rows are
(reset, update, new).
"""
from __future__ import annotations

import math
import numbers
import warnings

from ... import creation
from ... import ops as _ops  # noqa: F401  (registers the ops used below)
from ...ops.recurrent import gru as ember_gru
from ...ops.recurrent import lstm as ember_lstm
from ...ops.recurrent import rnn_relu as ember_rnn_relu
from ...ops.recurrent import rnn_tanh as ember_rnn_tanh
from ...tensor import Tensor
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _ember():
    import ember

    return ember


def _gate_count(mode: str) -> int:
    return {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}[mode]


def _linear(x, weight, bias):
    """x W^T (+ b) for x of shape (..., in), as F.linear (PyTorch's Addmm graph)."""
    return _ember().nn.functional.linear(x, weight, bias)


def _rnn_step(mode, x_proj, h, c, w_hh, b_hh, hidden):
    """One time step given the input projection ``x_proj`` (x W_ih^T + b_ih); returns the
    new (h, c). The gates are computed in PyTorch's order, so the graphs match."""
    h_proj = _linear(h, w_hh, b_hh)
    ember = _ember()
    if mode == "LSTM":
        i, f, g, o = ember.unsafe_chunk(h_proj + x_proj, 4, -1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c
    if mode == "GRU":
        x_r, x_z, x_n = ember.unsafe_chunk(x_proj, 3, -1)
        h_r, h_z, h_n = ember.unsafe_chunk(h_proj, 3, -1)
        r = (x_r + h_r).sigmoid()
        z = (x_z + h_z).sigmoid()
        n = (x_n + r * h_n).tanh()
        return (h - n) * z + n, None
    pre = h_proj + x_proj
    return (pre.tanh() if mode == "RNN_TANH" else pre.relu()), None


class RNNBase(Module):
    """Shared machinery of RNN, LSTM and GRU: the per-layer, per-direction parameters
    (weight_ih_l{k}[_reverse], weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, and weight_hr_l{k}
    for projected LSTMs), all U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          f"non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be an integer greater than zero")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be an integer greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = _gate_count(mode) * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        factory = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = "_reverse" if direction == 1 else ""
                params = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    params += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    params.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for base, shape in params:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(creation.empty(tuple(shape), **factory)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op kept for PyTorch code (cuDNN weight packing does not apply here)."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---------------------------------------------------------------- forward
    def _check_input(self, input) -> None:
        name = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: expected input to be a Tensor or PackedSequence, got "
                            f"{type(input).__name__}")
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                             "tensor instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _check_hidden(self, hx, expected, what: str) -> None:
        if tuple(hx.shape) != tuple(expected):
            raise RuntimeError(f"Expected {what} size {tuple(expected)}, got "
                               f"{tuple(hx.shape)}")

    def _run(self, input, hx, function):
        """Check and normalize ``input`` and ``hx``, run ``function`` (``ember.lstm``,
        ``ember.gru``, ``ember.rnn_tanh`` or ``ember.rnn_relu``: one fused node per layer and
        direction), and shape the results as the input was. ``hx`` is one state, or the
        pair (h_0, c_0) for LSTM."""
        lstm = self.mode == "LSTM"
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        sizes = (real_hidden, self.hidden_size) if lstm else (self.hidden_size,)
        names = ("hidden[0]", "hidden[1]") if lstm else ("hx",)
        if lstm and hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise RuntimeError("LSTM: hx must be a tuple (h_0, c_0)")
        states = (tuple(hx) if lstm else (hx,)) if hx is not None else (None,) * len(sizes)
        dropout, train = self.dropout, self.training
        layers, bidirectional = self.num_layers, self.bidirectional
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            self._check_input(data)
            batch = int(batch_sizes[0])
            states = tuple(self._state(h, data, batch, size, what, True, sorted_indices)
                           for h, size, what in zip(states, sizes, names))
            out = function(data, batch_sizes, states if lstm else states[0],
                           self._flat_weights, self.bias, layers, dropout, train,
                           bidirectional)
            output = PackedSequence(out[0], batch_sizes, sorted_indices, unsorted_indices)
            finals = tuple(h if unsorted_indices is None else h.index_select(1, unsorted_indices)
                           for h in out[1:])
            return output, finals if lstm else finals[0]
        self._check_input(input)
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        batch = input.shape[0 if self.batch_first else 1]
        states = tuple(self._state(h, input, batch, size, what, batched)
                       for h, size, what in zip(states, sizes, names))
        out = function(input, states if lstm else states[0], self._flat_weights, self.bias,
                       layers, dropout, train, bidirectional, self.batch_first)
        output, finals = out[0], out[1:]
        if not batched:
            output = output.squeeze(0 if self.batch_first else 1)
            finals = tuple(h.squeeze(1) for h in finals)
        return output, finals if lstm else finals[0]

    def _state(self, hx, input, batch, size, what, batched, permutation=None):
        """An initial state as (D * num_layers, N, size): zeros when None, checked, with
        the batch in packed order for a PackedSequence."""
        directions = 2 if self.bidirectional else 1
        expected = (self.num_layers * directions, batch, size)
        if hx is None:
            return creation.zeros(tuple(expected), dtype=input.dtype, device=input.device)
        if batched and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, {what} should also be 3-D but got "
                               f"{hx.dim()}-D tensor")
        if not batched:
            if hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, {what} should also be 2-D but "
                                   f"got {hx.dim()}-D tensor")
            hx = hx.unsqueeze(1)
        self._check_hidden(hx, expected, what)
        return hx if permutation is None else hx.index_select(1, permutation)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).

    ``forward(input, h0=None)`` returns (output, h_n): output (L, N, D*H) (batch_first:
    (N, L, D*H)), h_n (D*num_layers, N, H). A PackedSequence input gives a PackedSequence
    output."""

    def __init__(self, *args, **kwargs):
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run(input, hx, ember_rnn_tanh if self.nonlinearity == "tanh"
                         else ember_rnn_relu)


class LSTM(RNNBase):
    """Long short-term memory:
    i, f, g, o = sigma(.), sigma(.), tanh(.), sigma(.) of x_t W_ih^T + b_ih + h W_hh^T +
    b_hh; c_t = f c_{t-1} + i g; h_t = o tanh(c_t) (times W_hr^T with ``proj_size``).

    ``forward(input, (h0, c0)=None)`` returns (output, (h_n, c_n))."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run(input, hx, ember_lstm)


class GRU(RNNBase):
    """Gated recurrent unit: r = sigma(.), z = sigma(.), n = tanh(x W_in^T + b_in +
    r (h W_hn^T + b_hn)), h_t = (1 - z) n + z h_{t-1}.

    ``forward(input, h0=None)`` returns (output, h_n)."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run(input, hx, ember_gru)


class RNNCellBase(Module):
    """The parameters of one recurrent step: weight_ih (G*H, H_in), weight_hh (G*H, H),
    bias_ih, bias_hh, all U(-1/sqrt(H), 1/sqrt(H))."""

    _mode = ""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(creation.empty(num_chunks * hidden_size, input_size,
                                                  **factory))
        self.weight_hh = Parameter(creation.empty(num_chunks * hidden_size, hidden_size,
                                                  **factory))
        if bias:
            self.bias_ih = Parameter(creation.empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(creation.empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.__dict__.get("bias", True) is not True:
            s += f", bias={self.bias}"
        nonlinearity = self.__dict__.get("nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, input, hx, what="hx"):
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} "
                               f"expected {self.input_size}")
        if hx is not None and hx.dim() != input.dim():
            raise RuntimeError(f"{name}: Expected {what} to be {input.dim()}D, got "
                               f"{hx.dim()}D instead")

    def _zeros(self, input):
        return creation.zeros(input.shape[0], self.hidden_size, dtype=input.dtype,
                              device=input.device)

    def _step(self, input, h, c):
        x_proj = _linear(input, self.weight_ih, self.bias_ih)
        return _rnn_step(self._mode, x_proj, h, c, self.weight_hh, self.bias_hh,
                         self.hidden_size)


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu) for one step."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity

    @property
    def _mode(self):
        return "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"

    def forward(self, input, hx=None):
        self._check(input, hx)
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            hx = hx.unsqueeze(0) if hx is not None else None
        h = self._zeros(input) if hx is None else hx
        h, _ = self._step(input, h, None)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c') from input and (h, c) (zeros when None)."""

    _mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        self._check(input, hx[0] if hx is not None else None, "hx[0]")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if hx is not None else None
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        h, c = self._step(input, hx[0], hx[1])
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: h' from input and h (zeros when None)."""

    _mode = "GRU"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        self._check(input, hx)
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            hx = hx.unsqueeze(0) if hx is not None else None
        h = self._zeros(input) if hx is None else hx
        h, _ = self._step(input, h, None)
        return h if batched else h.squeeze(0)
