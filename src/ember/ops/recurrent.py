"""Recurrent layers: ``lstm``, ``gru``, ``rnn_tanh`` and ``rnn_relu``.

The graph is the one PyTorch's CPU kernels build: an LSTM layer in float32/bfloat16
without projections, and every packed sequence, runs as one fused node per layer and
direction; other padded recurrences are composed step by step (``_composed_layer``).

A fused node runs the whole sequence. Its forward projects the inputs
of all time steps with one matmul, then loops over time in place on preallocated buffers
(one matmul with the recurrent weights and a few elementwise calls per step). Its backward
runs the reverse recurrence and forms the weight gradients with single matmuls over the
stacked sequence.

Sequences live in the packed layout: the rows of step t are ``x[start_t:start_t + n_t]``,
with n_t non-increasing (PackedSequence's ``batch_sizes``); a padded (L, N, H_in) input is
the special case n_t = N, reshaped to (L * N, H_in). A row absent at step t keeps its state,
so each sequence's final state is the one at its own last step, and the reverse direction
starts at each sequence's own end.

Double backward: the forward also returns what backward reads (the activated gates, the
cell states) as outputs of its node, so under ``create_graph`` the same backward formula,
run on Tensors, records a graph that reaches the inputs through this node again. That loop
over time on Tensors is slow: it suits gradgradcheck-sized problems.

Gate order (PyTorch's): LSTM (input, forget, cell, output); GRU (reset, update, new).
"""
from __future__ import annotations

import inspect

import numpy as np

from .. import backend, creation, dtypes
from ..autograd.function import Function
from ..tensor import Tensor
from .neural import dropout as _dropout
from .neural import linear
from .products import matmul
from .registry import Sample, register_op
from .shape import cat, stack, transpose, unbind, unsafe_chunk
from .unary import relu, sigmoid, tanh

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu"]


# ----------------------------------------------------------------------------- layout
def _steps(batch_sizes) -> tuple:
    """((start, rows), ...) of each time step in the packed layout."""
    out, start = [], 0
    for n in batch_sizes:
        out.append((start, int(n)))
        start += int(n)
    return tuple(out)


def _uniform(steps) -> bool:
    return all(n == steps[0][1] for _, n in steps)


def _order(steps, reverse: bool):
    """The time steps in the order the forward visits them."""
    return range(len(steps) - 1, -1, -1) if reverse else range(len(steps))


def _previous(m, states, initial, steps, reverse: bool):
    """The state each step starts from, stacked in the packed layout (as ``states``)."""
    batch, count = steps[0][1], len(steps)
    if _uniform(steps):
        if count == 1:
            return initial
        return m.cat([states[batch:], initial], 0) if reverse else \
            m.cat([initial, states[:-batch]], 0)
    pieces = []
    for t, (_, n) in enumerate(steps):
        if not reverse:
            if t == 0:
                pieces.append(initial[:n])
            else:
                start = steps[t - 1][0]
                pieces.append(states[start:start + n])
        elif t == count - 1:
            pieces.append(initial[:n])
        else:
            start, later = steps[t + 1]
            pieces.append(states[start:start + later])
            if n > later:
                pieces.append(initial[later:n])
    return m.cat(pieces, 0)


def _head(m, state, n: int, batch: int):
    """The first ``n`` rows of a (batch, ...) state: the rows present at a step."""
    return state if n == batch else state[:n]


def _merge(m, head, state, n: int, batch: int):
    """``state`` with its first ``n`` rows replaced by ``head``."""
    return head if n == batch else m.cat([head, state[n:]], 0)


# ----------------------------------------------------------------------------- forward
def _gate_affine(xp, sigmoid_rows, hidden: int, dtype):
    """Per-row (scale, shift) of the gates: sigmoid(z) = 0.5 tanh(z / 2) + 0.5, so sigmoid
    rows scale their pre-activation by 0.5 (exact in floating point), and one tanh over
    all the gates activates them, followed by ``* scale + shift``."""
    scale = np.repeat(np.where(sigmoid_rows, 0.5, 1.0), hidden)
    shift = np.repeat(np.where(sigmoid_rows, 0.5, 0.0), hidden)
    return xp.asarray(scale.astype(dtype)), xp.asarray(shift.astype(dtype))


def _project(xp, x, weight, bias):
    """x W^T (+ bias) for the packed sequence: one matmul for all time steps."""
    out = backend.matmul(xp, x, weight.T)
    if bias is not None:
        out += bias
    return out


def _matmul_into(xp, a, b, out):
    if a.dtype.kind == "f" and a.dtype.itemsize >= 4:
        return xp.matmul(a, b, out=out)
    out[...] = backend.matmul(xp, a, b)  # half precision: through float32
    return out


def _scaled(weight, scale):
    return weight * scale[:, None]


class _State:
    """The state of every row during the forward. Uniform batches read the last step's
    output rows directly; packed ones keep a (batch, size) copy and update its head."""

    def __init__(self, initial, steps):
        self.uniform = _uniform(steps)
        self.value = initial if self.uniform else initial.copy()

    def rows(self, n: int):
        return self.value if self.uniform else self.value[:n]

    def update(self, new, n: int) -> None:
        if self.uniform:
            self.value = new
        else:
            self.value[:n] = new

    def final(self):
        return self.value.copy() if self.uniform else self.value


# ----------------------------------------------------------------------------- input grads
def _input_grads(m, needs, dpre, x, w_ih):
    """Gradients of x W_ih^T + b_ih from the stacked gradient of the projection."""
    dx = m.matmul(dpre, w_ih) if needs[0] else None
    dw = m.matmul(m.mT(dpre), x) if needs[1] else None
    db = m.sum(dpre, 0) if needs[2] else None
    return dx, dw, db


def _zeros_if_none(m, grad, like):
    return grad if grad is not None else m.zeros(like.shape, like)


def _rows(m, x):
    """A padded sequence (L, N, H) as rows (L * N, H); packed data is rows already."""
    return x if x is None or x.ndim == 2 else m.reshape(x, (-1, x.shape[2]))


def _unrows(m, dx, seq):
    return dx if dx is None or seq is None else m.reshape(dx, seq + (dx.shape[1],))


def _as_sequence(y, seq):
    """Rows back to the padded sequence's (L, N, H) (a view: the rows are contiguous)."""
    return y if seq is None else y.reshape(seq + (y.shape[1],))


class LSTMLayer(Function):
    """One LSTM layer and direction over the packed sequence ``x`` (rows, H_in):
    outputs (y, h_n, c_n, cells, gates); cells (rows, H) and the activated gates
    (rows, 4H) are what backward reads."""

    array_backward = True
    node_name = "MkldnnRnnLayerBackward0"  # PyTorch's one-layer fused LSTM node on the CPU

    @staticmethod
    def forward(ctx, x, w_ih, w_hh, b_ih, b_hh, h0, c0, w_hr, steps, reverse):
        # (PyTorch's mkldnn_rnn_layer argument order: the node's edges come out in its order)
        xp = ctx.xp
        given, ctx.seq = x, (x.shape[:2] if x.ndim == 3 else None)
        x = x if ctx.seq is None else x.reshape(-1, x.shape[2])
        hidden, size = w_hh.shape[0] // 4, w_hh.shape[1]
        dtype = x.dtype
        scale, shift = _gate_affine(xp, [True, True, False, True], hidden, dtype)
        bias = None if b_ih is None else (b_ih + b_hh) * scale
        gates = _project(xp, x, _scaled(w_ih, scale), bias)  # activated in place below
        w_hh_t = _scaled(w_hh, scale).T
        w_hr_t = None if w_hr is None else w_hr.T
        batch = h0.shape[0]
        cells = xp.empty((x.shape[0], hidden), dtype)
        y = xp.empty((x.shape[0], size), dtype)
        product = xp.empty((batch, 4 * hidden), dtype)
        scratch = xp.empty((batch, hidden), dtype)
        h, c = _State(h0, steps), _State(c0, steps)
        for t in _order(steps, reverse):
            start, n = steps[t]
            end = start + n
            gate = gates[start:end]
            gate += _matmul_into(xp, h.rows(n), w_hh_t, product[:n])
            xp.tanh(gate, out=gate)
            gate *= scale
            gate += shift
            i, f = gate[:, :hidden], gate[:, hidden:2 * hidden]
            g, o = gate[:, 2 * hidden:3 * hidden], gate[:, 3 * hidden:]
            c_new, tmp = cells[start:end], scratch[:n]
            xp.multiply(f, c.rows(n), out=c_new)
            xp.multiply(i, g, out=tmp)
            c_new += tmp
            xp.tanh(c_new, out=tmp)
            h_new = y[start:end]
            if w_hr_t is None:
                xp.multiply(o, tmp, out=h_new)
            else:
                tmp *= o
                _matmul_into(xp, tmp, w_hr_t, h_new)
            h.update(h_new, n)
            c.update(c_new, n)
        ctx.steps, ctx.reverse = steps, reverse
        ctx.set_materialize_grads(False)
        y = _as_sequence(y, ctx.seq)
        ctx.save_for_backward(given, h0, c0, w_ih, w_hh, w_hr, y, cells, gates)
        return y, h.final(), c.final(), cells, gates

    @staticmethod
    def backward(ctx, grad_y, grad_h, grad_c, grad_cells, grad_gates):
        m = ctx.math
        x, h0, c0, w_ih, w_hh, w_hr, y, cells, gates = ctx.saved_tensors
        x, y, grad_y = _rows(m, x), _rows(m, y), _rows(m, grad_y)
        steps, reverse = ctx.steps, ctx.reverse
        needs = ctx.needs_input_grad
        hidden, batch = cells.shape[1], h0.shape[0]
        c_prev = _previous(m, cells, c0, steps, reverse)
        dh = _zeros_if_none(m, grad_h, h0)
        dc = _zeros_if_none(m, grad_c, c0)
        dpre, dproj = [None] * len(steps), [None] * len(steps)
        # on arrays each step's gate gradients go straight into their rows of one array
        rows = m.xp.empty(gates.shape, gates.dtype) if m.arrays else None
        for t in reversed(_order(steps, reverse)):
            start, n = steps[t]
            end = start + n
            dh_t = _head(m, dh, n, batch)
            if grad_y is not None:
                dh_t = dh_t + grad_y[start:end]
            if w_hr is not None:
                dproj[t] = dh_t
                dh_t = m.matmul(dh_t, w_hr)  # to o * tanh(c), before the projection
            gate = gates[start:end]
            i, f = gate[:, :hidden], gate[:, hidden:2 * hidden]
            g, o = gate[:, 2 * hidden:3 * hidden], gate[:, 3 * hidden:]
            tc = m.tanh(cells[start:end])
            dc_t = dh_t * o * (1 - tc * tc) + _head(m, dc, n, batch)
            if grad_cells is not None:
                dc_t = dc_t + grad_cells[start:end]
            d_i, d_f, d_g, d_o = dc_t * g, dc_t * c_prev[start:end], dc_t * i, dh_t * tc
            if grad_gates is not None:
                extra = grad_gates[start:end]
                d_i = d_i + extra[:, :hidden]
                d_f = d_f + extra[:, hidden:2 * hidden]
                d_g = d_g + extra[:, 2 * hidden:3 * hidden]
                d_o = d_o + extra[:, 3 * hidden:]
            parts = [d_i * i * (1 - i), d_f * f * (1 - f), d_g * (1 - g * g),
                     d_o * o * (1 - o)]
            step = m.cat(parts, 1) if rows is None else \
                m.xp.concatenate(parts, axis=1, out=rows[start:end])
            dpre[t] = step
            dh = _merge(m, m.matmul(step, w_hh), dh, n, batch)
            dc = _merge(m, dc_t * f, dc, n, batch)
        dpre = m.cat(dpre, 0) if rows is None else rows
        dx, dw_ih, db = _input_grads(m, (needs[0], needs[1], needs[3] or needs[4]), dpre, x,
                                     w_ih)
        dw_hh = m.matmul(m.mT(dpre), _previous(m, y, h0, steps, reverse)) if needs[2] else None
        dw_hr = None
        if w_hr is not None and needs[7]:
            dw_hr = m.matmul(m.mT(m.cat(dproj, 0)), gates[:, 3 * hidden:] * m.tanh(cells))
        return (_unrows(m, dx, ctx.seq), dw_ih, dw_hh, db if needs[3] else None,
                db if needs[4] else None, dh if needs[5] else None, dc if needs[6] else None,
                dw_hr, None, None)


class GRULayer(Function):
    """One GRU layer and direction over the packed sequence ``x``: outputs
    (y, h_n, gates), gates (rows, 4H) holding r, z, n and h W_hn^T + b_hn."""

    array_backward = True
    node_name = "GruLayerBackward0"

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, steps, reverse):
        given, ctx.seq = x, (x.shape[:2] if x.ndim == 3 else None)
        x = x if ctx.seq is None else x.reshape(-1, x.shape[2])
        xp = ctx.xp
        hidden = w_hh.shape[0] // 3
        dtype = x.dtype
        scale, _ = _gate_affine(xp, [True, True, False], hidden, dtype)
        inputs = _project(xp, x, _scaled(w_ih, scale), None if b_ih is None else b_ih * scale)
        w_hh_t = _scaled(w_hh, scale).T
        b_hh = None if b_hh is None else b_hh * scale
        batch = h0.shape[0]
        gates = xp.empty((x.shape[0], 4 * hidden), dtype)
        y = xp.empty((x.shape[0], hidden), dtype)
        product = xp.empty((batch, 3 * hidden), dtype)
        h = _State(h0, steps)
        for t in _order(steps, reverse):
            start, n = steps[t]
            end = start + n
            hp = _matmul_into(xp, h.rows(n), w_hh_t, product[:n])
            if b_hh is not None:
                hp += b_hh
            gate, x_t = gates[start:end], inputs[start:end]
            rz = gate[:, :2 * hidden]
            xp.add(x_t[:, :2 * hidden], hp[:, :2 * hidden], out=rz)
            xp.tanh(rz, out=rz)
            rz *= 0.5
            rz += 0.5
            r, z = gate[:, :hidden], gate[:, hidden:2 * hidden]
            new, h_n = gate[:, 2 * hidden:3 * hidden], gate[:, 3 * hidden:]
            h_n[...] = hp[:, 2 * hidden:]
            xp.multiply(r, h_n, out=new)
            new += x_t[:, 2 * hidden:]
            xp.tanh(new, out=new)
            h_new = y[start:end]
            xp.subtract(h.rows(n), new, out=h_new)  # h' = n + z (h - n)
            h_new *= z
            h_new += new
            h.update(h_new, n)
        ctx.steps, ctx.reverse = steps, reverse
        ctx.set_materialize_grads(False)
        y = _as_sequence(y, ctx.seq)
        ctx.save_for_backward(given, h0, w_ih, w_hh, y, gates)
        return y, h.final(), gates

    @staticmethod
    def backward(ctx, grad_y, grad_h, grad_gates):
        m = ctx.math
        x, h0, w_ih, w_hh, y, gates = ctx.saved_tensors
        x, y, grad_y = _rows(m, x), _rows(m, y), _rows(m, grad_y)
        steps, reverse = ctx.steps, ctx.reverse
        needs = ctx.needs_input_grad
        hidden, batch = y.shape[1], h0.shape[0]
        h_prev = _previous(m, y, h0, steps, reverse)
        dh = _zeros_if_none(m, grad_h, h0)
        d_input, d_hidden = [None] * len(steps), [None] * len(steps)
        for t in reversed(_order(steps, reverse)):
            start, n = steps[t]
            end = start + n
            dh_t = _head(m, dh, n, batch)
            if grad_y is not None:
                dh_t = dh_t + grad_y[start:end]
            gate = gates[start:end]
            r, z = gate[:, :hidden], gate[:, hidden:2 * hidden]
            new, h_n = gate[:, 2 * hidden:3 * hidden], gate[:, 3 * hidden:]
            d_new, d_z = dh_t * (1 - z), dh_t * (h_prev[start:end] - new)
            if grad_gates is not None:
                extra = grad_gates[start:end]
                d_z = d_z + extra[:, hidden:2 * hidden]
                d_new = d_new + extra[:, 2 * hidden:3 * hidden]
            d_new = d_new * (1 - new * new)
            d_r, d_hn = d_new * h_n, d_new * r
            if grad_gates is not None:
                d_r = d_r + extra[:, :hidden]
                d_hn = d_hn + extra[:, 3 * hidden:]
            d_r, d_z = d_r * r * (1 - r), d_z * z * (1 - z)
            d_input[t] = m.cat([d_r, d_z, d_new], 1)
            d_hidden[t] = step = m.cat([d_r, d_z, d_hn], 1)
            dh = _merge(m, dh_t * z + m.matmul(step, w_hh), dh, n, batch)
        d_input, d_hidden = m.cat(d_input, 0), m.cat(d_hidden, 0)
        dx, dw_ih, db_ih = _input_grads(m, (needs[0], needs[2], needs[4]), d_input, x, w_ih)
        dw_hh = m.matmul(m.mT(d_hidden), h_prev) if needs[3] else None
        db_hh = m.sum(d_hidden, 0) if needs[5] else None
        return (_unrows(m, dx, ctx.seq), dh if needs[1] else None, dw_ih, dw_hh, db_ih, db_hh,
                None, None)


class RNNLayer(Function):
    """One Elman RNN layer and direction (tanh or relu) over the packed sequence ``x``:
    outputs (y, h_n)."""

    array_backward = True
    node_name = "RnnLayerBackward0"

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, steps, reverse, relu):
        given, ctx.seq = x, (x.shape[:2] if x.ndim == 3 else None)
        x = x if ctx.seq is None else x.reshape(-1, x.shape[2])
        xp = ctx.xp
        y = _project(xp, x, w_ih, None if b_ih is None else b_ih + b_hh)  # in place below
        w_hh_t = w_hh.T
        product = xp.empty((h0.shape[0], w_hh.shape[0]), x.dtype)
        h = _State(h0, steps)
        for t in _order(steps, reverse):
            start, n = steps[t]
            h_new = y[start:start + n]
            h_new += _matmul_into(xp, h.rows(n), w_hh_t, product[:n])
            if relu:
                xp.maximum(h_new, 0, out=h_new)
            else:
                xp.tanh(h_new, out=h_new)
            h.update(h_new, n)
        ctx.steps, ctx.reverse, ctx.relu = steps, reverse, relu
        ctx.set_materialize_grads(False)
        y = _as_sequence(y, ctx.seq)
        ctx.save_for_backward(given, h0, w_ih, w_hh, y)
        return y, h.final()

    @staticmethod
    def backward(ctx, grad_y, grad_h):
        m = ctx.math
        x, h0, w_ih, w_hh, y = ctx.saved_tensors
        x, y, grad_y = _rows(m, x), _rows(m, y), _rows(m, grad_y)
        steps, reverse = ctx.steps, ctx.reverse
        needs = ctx.needs_input_grad
        batch = h0.shape[0]
        dh = _zeros_if_none(m, grad_h, h0)
        dpre = [None] * len(steps)
        for t in reversed(_order(steps, reverse)):
            start, n = steps[t]
            end = start + n
            dh_t = _head(m, dh, n, batch)
            if grad_y is not None:
                dh_t = dh_t + grad_y[start:end]
            out = y[start:end]
            dpre[t] = step = dh_t * (out > 0) if ctx.relu else dh_t * (1 - out * out)
            dh = _merge(m, m.matmul(step, w_hh), dh, n, batch)
        dpre = m.cat(dpre, 0)
        dx, dw_ih, db = _input_grads(m, (needs[0], needs[2], needs[4] or needs[5]), dpre, x,
                                     w_ih)
        dw_hh = m.matmul(m.mT(dpre), _previous(m, y, h0, steps, reverse)) if needs[3] else None
        return (_unrows(m, dx, ctx.seq), dh if needs[1] else None, dw_ih, dw_hh,
                db if needs[4] else None, db if needs[5] else None, None, None, None)


# ----------------------------------------------------------------------------- public
def _parameter(name: str):
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)


_TAIL = ("params", "has_biases", "num_layers", "dropout", "train", "bidirectional")
_PADDED = inspect.Signature([_parameter(n) for n in ("input", "hx") + _TAIL + ("batch_first",)])
_PACKED = inspect.Signature([_parameter(n) for n in ("data", "batch_sizes", "hx") + _TAIL])


def _bind(name: str, args, kwargs):
    """PyTorch's two overloads: (input, hx, params, ..., batch_first) for a padded
    sequence, (data, batch_sizes, hx, params, ...) for a packed one."""
    second = args[1] if len(args) > 1 else kwargs.get("batch_sizes")
    packed = "batch_sizes" in kwargs or "data" in kwargs or (
        isinstance(second, Tensor) and not second.is_floating_point())
    try:
        return packed, (_PACKED if packed else _PADDED).bind(*args, **kwargs).arguments
    except TypeError as error:
        raise TypeError(f"{name}() received an invalid combination of arguments ({error}); "
                        f"expected {name}{_PADDED} or {name}{_PACKED}") from None


def _check_tensor(name: str, value, what: str, ndim: int, dtype) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{what}' must be Tensor, not "
                        f"{type(value).__name__}")
    if value.dim() != ndim:
        raise RuntimeError(f"{name}: {what} must have {ndim} dimensions, got {value.dim()}")
    if value.dtype is not dtype:
        raise RuntimeError(f"{name}: expected {what} to have the input's dtype {dtype}, got "
                           f"{value.dtype}")
    return value


def _batch_sizes(name: str, batch_sizes, rows: int) -> list:
    if not isinstance(batch_sizes, Tensor) or batch_sizes.dim() != 1 or \
            batch_sizes.is_floating_point():
        raise RuntimeError(f"{name}: batch_sizes must be a 1-D integer tensor")
    sizes = [int(n) for n in batch_sizes.cpu().numpy()]
    if not sizes or sizes[-1] < 1 or any(a < b for a, b in zip(sizes, sizes[1:])):
        raise RuntimeError(f"{name}: batch_sizes must be positive and non-increasing, got "
                           f"{sizes}")
    if sum(sizes) != rows:
        raise RuntimeError(f"{name}: batch_sizes sum to {sum(sizes)} but data has {rows} rows")
    return sizes


def _check_shapes(name: str, weights, first: int, rows: int, size: int, hidden: int,
                  projected: bool) -> None:
    """w_ih (G*H, in), w_hh (G*H, size), biases (G*H,), w_hr (size, H)."""
    expected = [(rows, weights[0].shape[1]), (rows, size)]
    expected += [(rows,), (rows,)] if len(weights) - projected == 4 else []
    expected += [(size, hidden)] if projected else []
    for k, (w, shape) in enumerate(zip(weights, expected)):
        if tuple(w.shape) != shape:
            raise RuntimeError(f"{name}: params[{first + k}] should have shape {shape}, got "
                               f"{tuple(w.shape)}")


def _composed_layer(mode, x, h, w_ih, w_hh, b_ih, b_hh, reverse: bool, w_hr=None):
    """An RNN or GRU layer over a padded sequence as PyTorch's CPU kernel composes it: the
    input projection of the whole sequence at once, then one cell per step and a stack,
    so the graph has PyTorch's nodes (its LSTM is one fused node, as ``LSTMLayer`` is)."""
    steps = unbind(linear(x, w_ih, b_ih), 0)
    outputs = [None] * len(steps)
    for t in (range(len(steps) - 1, -1, -1) if reverse else range(len(steps))):
        h = _composed_cell(mode, steps[t], h, w_hh, b_hh, w_hr)
        outputs[t] = h[0] if mode == "LSTM" else h
    return stack(outputs, 0), h


def _composed_cell(mode, x_t, h, w_hh, b_hh, w_hr=None):
    """One step, in PyTorch's order of operations (``x_t`` already projected); an LSTM's
    state ``h`` is the pair (h, c)."""
    if mode == "LSTM":
        h, c = h
        gates = linear(h, w_hh, b_hh) + x_t
        in_gate, forget, cell, out_gate = unsafe_chunk(gates, 4, 1)
        in_gate, forget, out_gate = sigmoid(in_gate), sigmoid(forget), sigmoid(out_gate)
        c = forget * c + in_gate * tanh(cell)
        h = out_gate * tanh(c)
        return (h if w_hr is None else matmul(h, w_hr.t())), c
    hidden = linear(h, w_hh, b_hh)
    if mode != "GRU":
        return (relu if mode == "RNN_RELU" else tanh)(hidden + x_t)
    x_r, x_z, x_n = unsafe_chunk(x_t, 3, 1)
    h_r, h_z, h_n = unsafe_chunk(hidden, 3, 1)
    reset, update = sigmoid(h_r + x_r), sigmoid(h_z + x_z)
    new = tanh(x_n + h_n * reset)
    return (h - new) * update + new


def _recurrent(name: str, mode: str, args, kwargs):
    """The stacked, possibly bidirectional recurrence behind the four public functions."""
    packed, a = _bind(name, args, kwargs)
    source = a["data"] if packed else a["input"]
    if not isinstance(source, Tensor) or not source.is_floating_point():
        raise TypeError(f"{name}(): argument '{'data' if packed else 'input'}' must be a "
                        "floating-point Tensor")
    dtype = source.dtype
    if packed:
        x = _check_tensor(name, source, "data", 2, dtype)
        steps = _steps(_batch_sizes(name, a["batch_sizes"], x.shape[0]))
    else:
        x = _check_tensor(name, source, "input", 3, dtype)
        if a["batch_first"]:
            x = transpose(x, 0, 1)
        length, batch = x.shape[0], x.shape[1]
        if length == 0 or batch == 0:
            raise RuntimeError(f"{name}: expected a non-empty sequence and batch, got input "
                               f"of shape {tuple(source.shape)}")
        steps = _steps([batch] * length)  # (the layers take the sequence as it is)
    layers, directions = int(a["num_layers"]), 2 if a["bidirectional"] else 1
    hx = a["hx"]
    if mode == "LSTM":
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise RuntimeError(f"{name}: hx must be a tuple (h_0, c_0)")
        h0 = _check_tensor(name, hx[0], "hx[0]", 3, dtype)
        c0 = _check_tensor(name, hx[1], "hx[1]", 3, dtype)
    else:
        h0, c0 = _check_tensor(name, hx, "hx", 3, dtype), None
    params = list(a["params"])
    projected = c0 is not None and h0.shape[2] != c0.shape[2]
    per = (4 if a["has_biases"] else 2) + (1 if projected else 0)
    if len(params) != per * layers * directions:
        raise RuntimeError(f"{name}: expected {per * layers * directions} parameter tensors "
                           f"({per} per layer and direction), got {len(params)}")
    for k, p in enumerate(params):
        _check_tensor(name, p, f"params[{k}]", 1 if a["has_biases"] and k % per in (2, 3)
                      else 2, dtype)
    batch = steps[0][1]
    hidden = params[1].shape[1] if mode != "LSTM" else c0.shape[2]
    gates = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    expected = (layers * directions, batch, h0.shape[2] if mode == "LSTM" else hidden)
    if tuple(h0.shape) != expected:
        raise RuntimeError(f"{name}: expected hx of size {expected}, got {tuple(h0.shape)}")
    if c0 is not None and tuple(c0.shape) != (layers * directions, batch, hidden):
        raise RuntimeError(f"{name}: expected cx of size {(layers * directions, batch, hidden)},"
                           f" got {tuple(c0.shape)}")
    p, train = float(a["dropout"]), bool(a["train"])
    layer_input, h_n, c_n, initial = x, [], [], None
    # PyTorch's CPU LSTM is one fused (oneDNN) node per layer in float32 and bfloat16
    # without projections; its other recurrences are composed step by step
    fused = mode == "LSTM" and (packed or dtype in (dtypes.float32, dtypes.bfloat16)
                                and not projected)
    for layer in range(layers):
        outputs = []
        for direction in range(directions):
            k = layer * directions + direction
            w = params[k * per:(k + 1) * per]
            if w[0].shape[1] != layer_input.shape[-1]:
                raise RuntimeError(f"{name}: params[{k * per}] has {w[0].shape[1]} input "
                                   f"features, but layer {layer} gets {layer_input.shape[-1]}")
            _check_shapes(name, w, k * per, gates * hidden, h0.shape[2], hidden, projected)
            b_ih, b_hh = (w[2], w[3]) if a["has_biases"] else (None, None)
            reverse = direction == 1
            if fused:
                if not packed and not layer_input._data.flags.c_contiguous:
                    layer_input = layer_input.contiguous()  # as PyTorch's fused layer
                y, h, c, _, _ = LSTMLayer.apply(layer_input, w[0], w[1], b_ih, b_hh, h0[k],
                                                c0[k], w[-1] if projected else None, steps,
                                                reverse)
                c_n.append(c)
            elif not packed:
                if initial is None:  # PyTorch takes the layers' states so
                    initial = unbind(h0, 0) if c0 is None else list(zip(unbind(h0, 0),
                                                                       unbind(c0, 0)))
                y, h = _composed_layer(mode, layer_input, initial[k], w[0], w[1], b_ih, b_hh,
                                       reverse, w[-1] if projected else None)
                if mode == "LSTM":
                    h, c = h
                    c_n.append(c)
            elif mode == "GRU":
                y, h, _ = GRULayer.apply(layer_input, h0[k], w[0], w[1], b_ih, b_hh, steps,
                                         reverse)
            else:
                y, h = RNNLayer.apply(layer_input, h0[k], w[0], w[1], b_ih, b_hh, steps,
                                      reverse, mode == "RNN_RELU")
            outputs.append(y)
            h_n.append(h)
        layer_input = outputs[0] if directions == 1 else cat(outputs, -1)
        if p > 0 and train and layer < layers - 1:
            layer_input = _dropout(layer_input, p, True)
    output = layer_input
    if not packed and a["batch_first"]:
        # (PyTorch transposes an RNN's and a GRU's output in place, an LSTM's not)
        output = transpose(output, 0, 1) if mode == "LSTM" else output.transpose_(0, 1)
    if mode == "LSTM":
        return output, stack(h_n, 0), stack(c_n, 0)
    return output, stack(h_n, 0)


def _params(make, sizes, layers, directions, bias, gates, proj=0):
    """Random weights in PyTorch's flat order for each layer and direction."""
    hidden = sizes[1]
    out = proj or hidden
    params = []
    for layer in range(layers):
        for _ in range(directions):
            inputs = sizes[0] if layer == 0 else out * directions
            params += [make((gates * hidden, inputs), -0.8, 0.8),
                       make((gates * hidden, out), -0.8, 0.8)]
            if bias:
                params += [make((gates * hidden,), -0.5, 0.5), make((gates * hidden,), -0.5, 0.5)]
            if proj:
                params.append(make((proj, hidden), -0.8, 0.8))
    return params


def _recurrent_samples(gates: int, lstm: bool = False):
    def state(make, count, batch, hidden, proj=0):
        if lstm:
            return (make((count, batch, proj or hidden), -1, 1),
                    make((count, batch, hidden), -1, 1))
        return make((count, batch, hidden), -1, 1)

    def samples(make):
        x = make((3, 2, 2), -1, 1)
        out = [Sample((x, state(make, 1, 2, 2), _params(make, (2, 2), 1, 1, True, gates),
                       True, 1, 0.0, False, False, False), name="one layer"),
               Sample((make((2, 2, 1), -1, 1), state(make, 4, 2, 1),
                       _params(make, (1, 1), 2, 2, False, gates), False, 2, 0.0, False, True,
                       True), name="two layers, bidirectional, batch_first, no bias")]
        sizes = creation.tensor([2, 2, 1])  # three steps; the second sequence is shorter
        out.append(Sample((make((5, 2), -1, 1), sizes, state(make, 2, 2, 2),
                           _params(make, (2, 2), 1, 2, True, gates), True, 1, 0.0, False,
                           True), name="packed, bidirectional"))
        if lstm:
            out.append(Sample((make((2, 2, 2), -1, 1), state(make, 1, 2, 3, proj=2),
                               _params(make, (2, 3), 1, 1, True, gates, proj=2), True, 1, 0.0,
                               False, False, False), name="proj_size"))
        return out
    return samples



_SIGNATURES = (
    "``{name}(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, "
    "batch_first)`` for a padded sequence, ``{name}(data, batch_sizes, hx, params, "
    "has_biases, num_layers, dropout, train, bidirectional)`` for a packed one (PyTorch's "
    "overloads).")


@register_op(samples=_recurrent_samples(4, lstm=True))
def lstm(*args, **kwargs):
    """A stacked LSTM over a whole sequence, as ``nn.LSTM`` runs it: returns
    (output, h_n, c_n). ``hx`` is (h_0, c_0); ``params`` holds, per layer and direction,
    w_ih, w_hh (and b_ih, b_hh with ``has_biases``, and w_hr when h_0's size differs from
    c_0's, i.e. ``proj_size``). Each layer and direction is one fused node (see
    ``ember.ops.recurrent``).

    >>> x = ember.ones(5, 1, 2)
    >>> params = [ember.full((8, 2), 0.1), ember.full((8, 2), 0.1)]
    >>> state = (ember.zeros(1, 1, 2), ember.zeros(1, 1, 2))
    >>> out, h, c = ember.lstm(x, state, params, False, 1, 0.0, False, False, False)
    >>> tuple(out.shape), tuple(h.shape)
    ((5, 1, 2), (1, 1, 2))
    """
    return _recurrent("lstm", "LSTM", args, kwargs)


@register_op(samples=_recurrent_samples(3))
def gru(*args, **kwargs):
    """A stacked GRU over a whole sequence, as ``nn.GRU`` runs it: returns (output, h_n).
    ``params`` holds w_ih, w_hh (and b_ih, b_hh) per layer and direction.

    >>> params = [ember.full((6, 2), 0.1), ember.full((6, 2), 0.1)]
    >>> out, h = ember.gru(ember.ones(5, 1, 2), ember.zeros(1, 1, 2), params, False, 1, 0.0,
    ...                    False, False, False)
    >>> tuple(out.shape)
    (5, 1, 2)
    """
    return _recurrent("gru", "GRU", args, kwargs)


@register_op(samples=_recurrent_samples(1))
def rnn_tanh(*args, **kwargs):
    """A stacked Elman RNN with tanh over a whole sequence (``nn.RNN``): returns
    (output, h_n).

    >>> params = [ember.full((2, 2), 0.1), ember.full((2, 2), 0.1)]
    >>> out, h = ember.rnn_tanh(ember.ones(5, 1, 2), ember.zeros(1, 1, 2), params, False, 1,
    ...                         0.0, False, False, False)
    >>> tuple(h.shape)
    (1, 1, 2)
    """
    return _recurrent("rnn_tanh", "RNN_TANH", args, kwargs)


@register_op(samples=_recurrent_samples(1))
def rnn_relu(*args, **kwargs):
    """A stacked Elman RNN with relu over a whole sequence (``nn.RNN(nonlinearity='relu')``):
    returns (output, h_n).

    >>> params = [ember.full((2, 2), 0.1), ember.full((2, 2), 0.1)]
    >>> out, h = ember.rnn_relu(ember.ones(5, 1, 2), ember.zeros(1, 1, 2), params, False, 1,
    ...                         0.0, False, False, False)
    >>> tuple(h.shape)
    (1, 1, 2)
    """
    return _recurrent("rnn_relu", "RNN_RELU", args, kwargs)


for _function in (lstm, gru, rnn_tanh, rnn_relu):
    _function.__doc__ += "\n    " + _SIGNATURES.format(name=_function.__name__)
    _function.__signature__ = _PADDED  # type: ignore[attr-defined]  (the padded overload)
