"""Step-through backward: ``explain(y)`` runs y's backward pass and shows it as a table, one
row per node in the order the engine ran them, with the gradient that came in, the local
derivative in words, and the gradients that went out: the chain rule, step by step.

>>> import ember
>>> x = ember.arange(1, 4, dtype=ember.float32, requires_grad=True)
>>> y = ((x + 2) ** 2 + 3).mean()
>>> steps = ember.autograd.explain(y, params={"x": x})
>>> [step.name for step in steps]
['MeanBackward0', 'AddBackward0', 'PowBackward0', 'AddBackward0', 'AccumulateGrad']
>>> steps[-1].incoming[0]
tensor([2.0000, 2.6667, 3.3333])
>>> print(steps)  # doctest: +SKIP
"""
from __future__ import annotations

import html
import textwrap

import numpy as np

from . import _rules
from ._describe import describe, format_shape, is_leaf_node, names_by_node, node_of, walk
from .function import SECOND_BACKWARD

__all__ = ["explain", "Explanation", "Step", "Flow"]


class Flow:
    """A gradient a step sent on: to ``target`` (a Step), for the node's forward argument
    number ``position``; ``reduced_from`` is the shape it was summed down from when the op
    had broadcast that argument (else None)."""

    __slots__ = ("position", "target", "gradient", "reduced_from")

    def __init__(self, position, target, gradient, reduced_from):
        self.position = position
        self.target = target
        self.gradient = gradient
        self.reduced_from = reduced_from

    def __repr__(self) -> str:
        return f"Flow(to=#{self.target.number} {self.target.name}, {describe(self.gradient)})"


class Step:
    """One node's turn in the backward pass.

    ``incoming``: the gradient of each of the node's outputs (None where none came), after
    gradients from several consumers were summed; ``sources``: for each output, the steps
    (None for the seed) whose gradients were summed into it; ``derivative``: the local
    derivative for each gradient-carrying input, in words; ``outgoing``: the Flows sent on.
    ``ran`` is False for a node that no gradient reached (the engine skips it).
    """

    __slots__ = ("number", "node", "name", "label", "tensor_name", "incoming", "sources",
                 "derivative", "outgoing", "ran")

    def __init__(self, node, tensor_name):
        self.node = node
        self.name = node.name()
        self.tensor_name = tensor_name
        self.label = self.name if tensor_name is None else f"{self.name} ({tensor_name})"
        self.number = 0
        self.incoming = ()
        self.sources = ()
        self.derivative = []
        self.outgoing = []
        self.ran = False

    @property
    def summed(self) -> bool:
        """Whether gradients from two or more places met here and were added."""
        return any(len(s) > 1 for s in self.sources)

    def __repr__(self) -> str:
        return f"Step(#{self.number} {self.label})"


class Explanation:
    """The table ``explain`` returns: a sequence of Steps in execution order. ``print`` it
    in a terminal; Jupyter shows it as HTML."""

    def __init__(self, steps, outputs):
        self.steps = steps
        self.outputs = outputs

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def __getitem__(self, index):
        return self.steps[index]

    def _cells(self):
        header = ["#", "node", "incoming gradient", "local derivative", "outgoing gradient"]
        rows = [[[str(s.number)], [s.label], _incoming_lines(s), _derivative_lines(s),
                 _outgoing_lines(s)] for s in self.steps]
        return header, rows

    def __str__(self) -> str:
        header, rows = self._cells()
        caps = [4, 24, 30, 34, 40]
        wrapped = [[_wrap(cell, cap) for cell, cap in zip(row, caps)] for row in rows]
        widths = [max([len(header[i])] + [len(line) for row in wrapped for line in row[i]])
                  for i in range(len(header))]
        spaced = any(max(len(cell) for cell in row) > 1 for row in wrapped)
        lines = [self._title(), _join(header, widths),
                 _join(["-" * w for w in widths], widths)]
        for k, row in enumerate(wrapped):
            if spaced and k:
                lines.append("")
            for i in range(max(len(cell) for cell in row)):
                lines.append(_join([cell[i] if i < len(cell) else "" for cell in row], widths))
        return "\n".join(lines)

    __repr__ = __str__

    def _title(self) -> str:
        outs = ", ".join(f"{format_shape(o.shape)} {o.grad_fn.name() if o.grad_fn else 'leaf'}"
                         for o in self.outputs)
        return f"backward of {outs}: {len(self.steps)} steps, in the order they ran"

    def _repr_html_(self) -> str:
        header, rows = self._cells()
        esc = html.escape
        out = ['<table class="ember-explain" style="font-family:monospace;text-align:left">',
               f"<caption>{esc(self._title())}</caption><tr>"]
        out += [f'<th style="text-align:left">{esc(h)}</th>' for h in header]
        out.append("</tr>")
        for row in rows:
            out.append("<tr>")
            for cell in row:
                parts = [f"<em>{esc(line.strip())}</em>" if line.startswith("  ")
                         else esc(line) for line in cell]
                out.append('<td style="text-align:left;vertical-align:top">'
                           + "<br>".join(parts) + "</td>")
            out.append("</tr>")
        out.append("</table>")
        return "".join(out)


def _wrap(lines, cap):
    out = []
    for line in lines:
        indent = "  " if line.startswith("  ") else ""
        out += textwrap.wrap(line, cap, subsequent_indent=indent + "  ") or [""]
    return out


def _join(cells, widths) -> str:
    return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()


def _incoming_lines(step):
    if not step.ran and not any(g is not None for g in step.incoming):
        return ["none reached this node"]
    lines = []
    several = len(step.incoming) > 1
    for nr, (g, sources) in enumerate(zip(step.incoming, step.sources)):
        prefix = f"out {nr}: " if several else ""
        lines.append(prefix + (describe(g) if g is not None else "none"))
        if len(sources) > 1:
            names = " + ".join("the seed" if s is None else f"#{s.number}" for s in sources)
            lines.append(f"  sum of {len(sources)} gradients: {names}")
        elif sources and sources[0] is None:
            lines.append("  the seed")
    return lines


def _derivative_lines(step):
    return list(step.derivative)


def _outgoing_lines(step):
    if is_leaf_node(step.node):
        who = step.tensor_name or "this leaf"
        return [f"= d(output)/d({who})" if step.incoming and step.incoming[0] is not None
                else "nothing"]
    lines = []
    for flow in step.outgoing:
        target = flow.target
        who = f" {target.tensor_name}" if target.tensor_name else ""
        lines.append(f"-> #{target.number}{who}: {describe(flow.gradient)}")
        if flow.reduced_from is not None:
            lines.append(f"  broadcast reduced: {format_shape(flow.reduced_from)} -> "
                         f"{format_shape(flow.gradient.shape)}")
        if target.summed:
            lines.append(f"  meets other gradients at #{target.number}")
    if lines:
        return lines
    return ["nothing: the node did not run"] if not step.ran else \
        ["nothing: backward gave no gradient"]


def explain(outputs, gradients=None, *, params=None) -> Explanation:
    """Run the backward pass of ``outputs`` and show it step by step.

    Returns an ``Explanation``: one ``Step`` per node, in the order the engine ran them
    (a leaf's row comes as soon as all its gradient has arrived). Each step shows the
    incoming gradient (summed where several paths met), the local derivative in words
    (``d(a * b)/da = b``), and each gradient sent on (marked where broadcasting was summed
    away). ``params`` names tensors of the graph, e.g. ``dict(model.named_parameters())``.

    The gradients are the real ones: the backward runs through ``ember.autograd.grad``
    with ``retain_graph=True``, so the graph is not consumed and ``.grad`` is not touched;
    call ``backward()`` afterwards as usual. As in any backward, hooks registered on the
    graph's tensors run (a ``retain_grad()`` tensor gets its ``.grad`` filled).

    >>> x = ember.tensor([1.0, 2.0], requires_grad=True)
    >>> print(ember.autograd.explain((x * x).sum(), params={"x": x}))  # doctest: +SKIP
    """
    from ..creation import ones_like
    from ..tensor import Tensor
    from . import grad as autograd_grad

    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    if not outputs:
        raise RuntimeError("explain() needs at least one output tensor")
    if gradients is None:
        gradients = [None] * len(outputs)
    else:
        gradients = list(gradients) if isinstance(gradients, (tuple, list)) else [gradients]
    if len(gradients) != len(outputs):
        raise RuntimeError(f"got {len(gradients)} gradients for {len(outputs)} outputs")
    for i, t in enumerate(outputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"explain(): expected Tensors as outputs, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn, so it has no backward pass to explain")
    seeds = [ones_like(t) if g is None and t.numel() == 1 else g
             for t, g in zip(outputs, gradients)]
    names = names_by_node(params)
    roots = [node_of(t) for t in outputs]
    nodes = walk(roots)
    leaves = [n for n in nodes if is_leaf_node(n) and n.variable.requires_grad]
    log = _Log()
    installed = [_Hooks(node, log) for node in nodes if not is_leaf_node(node)]
    try:
        leaf_grads = autograd_grad(outputs, [n.variable for n in leaves], grad_outputs=seeds,
                                   retain_graph=True, allow_unused=True)
    except RuntimeError as error:
        if str(error).startswith(SECOND_BACKWARD[:60]):
            raise RuntimeError(
                f"{error} (explain() runs the backward pass itself: call it before "
                "backward(), or run backward(retain_graph=True) first)") from None
        raise
    finally:
        for hooks in installed:
            hooks.remove()
    return _build(outputs, seeds, roots, nodes, dict(zip(leaves, leaf_grads)), log, names)


class _Log:
    def __init__(self):
        self.order = []
        self.incoming = {}
        self.results = {}


class _Hooks:
    """A pre-hook and a post-hook on one node, removed afterwards without leaving the node
    on the engine's hooked (slower) path."""

    def __init__(self, node, log):
        self.node = node
        self.before = set(node.__dict__)

        def pre(grad_outputs):
            log.order.append(node)
            log.incoming[node] = tuple(grad_outputs)

        def post(grad_inputs, grad_outputs):
            log.results[node] = tuple(grad_inputs)

        self.handles = [node.register_prehook(pre), node.register_hook(post)]

    def remove(self):
        for handle in self.handles:
            handle.remove()
        state = self.node.__dict__
        for key in [k for k in state if k not in self.before]:
            value = state[key]
            if isinstance(value, bool) or (isinstance(value, (list, dict)) and not value):
                del state[key]  # flags and empty hook lists that registration added


def _edges_of(node, count):
    """The (node, output_nr) or None for each forward argument, aligned with the gradients
    the node's backward returned."""
    edges = getattr(node, "_edges", None)
    if edges is not None and len(edges) == count:
        return list(edges)
    public = [e if e[0] is not None else None for e in node.next_functions]
    return (public + [None] * count)[:count]


def _build(outputs, seeds, roots, nodes, leaf_grads, log, names):
    steps = {node: Step(node, names.get((node, 0))) for node in nodes}
    sources = {}  # (node, output_nr) -> list of (source node or None, gradient)
    for root, t, seed in zip(roots, outputs, seeds):
        nr = t.output_nr if t.grad_fn is not None else 0
        sources.setdefault((root, nr), []).append((None, seed))
    for node in log.order:
        results = log.results.get(node, ())
        for edge, g in zip(_edges_of(node, len(results)), results):
            if edge is not None and g is not None:
                sources.setdefault(edge, []).append((node, g))

    order = []
    last_feeder = {}  # leaf -> the last step that sent it a gradient
    for node in log.order:
        for edge, g in zip(_edges_of(node, len(log.results.get(node, ()))),
                           log.results.get(node, ())):
            if edge is not None and g is not None and is_leaf_node(edge[0]):
                last_feeder[edge[0]] = node
    after = {}
    for leaf, feeder in last_feeder.items():
        after.setdefault(feeder, []).append(leaf)
    placed = set()
    position = {node: i for i, node in enumerate(nodes)}
    for root in roots:  # an output that is itself a leaf
        if is_leaf_node(root) and root not in placed:
            order.append(root)
            placed.add(root)
    for node in log.order:
        order.append(node)
        placed.add(node)
        for leaf in sorted(after.get(node, ()), key=position.__getitem__):
            if leaf not in placed:
                order.append(leaf)
                placed.add(leaf)
    order += [n for n in nodes if n not in placed]  # nothing reached them

    for number, node in enumerate(order, 1):
        steps[node].number = number
    for node in order:
        step = steps[node]
        if is_leaf_node(node):
            step.ran = node in leaf_grads and leaf_grads[node] is not None
            step.incoming = (leaf_grads.get(node),)
            step.sources = (_steps_of(sources.get((node, 0), ()), steps),)
            step.derivative = _rules.derivative(node, [0])
            continue
        step.ran = node in log.incoming
        incoming = log.incoming.get(node, ())
        step.incoming = incoming
        step.sources = tuple(_steps_of(sources.get((node, nr), ()), steps)
                             for nr in range(len(incoming)))
        results = log.results.get(node, ())
        edges = _edges_of(node, len(results))
        positions = [i for i, e in enumerate(edges) if e is not None]
        first = next((g for g in incoming if g is not None), None)
        sent = [results[i] for i in positions if results[i] is not None]
        if not results:  # never ran: still say what its rule is
            positions = [i for i, e in enumerate(node.next_functions) if e[0] is not None]
        step.derivative = _rules.derivative(node, positions, sent[0].numel() if sent else 0,
                                            first.numel() if first is not None else 0)
        for i in positions:
            if i >= len(results) or results[i] is None:
                continue
            target = steps[edges[i][0]]
            step.outgoing.append(Flow(i, target, results[i],
                                      _reduced(node, i, first, results[i])))
    return Explanation([steps[n] for n in order], outputs)


def _steps_of(entries, steps):
    return [None if source is None else steps[source] for source, _ in entries]


def _reduced(node, position, incoming, gradient):
    """The shape broadcasting was summed down from, for a broadcasting op's argument."""
    op = _rules.op_of(node.name())
    if op not in _rules.BROADCASTING or incoming is None:
        return None
    if op == "Addmm" and position != 0:
        return None
    big, small = tuple(incoming.shape), tuple(gradient.shape)
    if big == small:
        return None
    try:
        if np.broadcast_shapes(big, small) != big:
            return None
    except ValueError:
        return None
    return big
