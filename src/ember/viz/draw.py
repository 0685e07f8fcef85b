"""``ember.viz.graph``: the autograd graph behind one or more outputs as a picture.

The walk follows ``grad_fn`` / ``next_functions`` from the outputs, breadth first and
without recursion. What each node shows comes from what the graph holds exactly: the
tensors passed in (outputs, ``params``), the leaves, what nodes keep for backward (saved
tensors, multi-output metadata), and what ``ember.viz.record`` saw at module boundaries.
A node whose output shape none of these knows shows its device alone.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from ..autograd._describe import format_shape, is_leaf_node, names_by_node, node_of, summarize, walk
from . import recording as _record
from . import render as _render
from .dot import Dot

__all__ = ["graph", "Graph", "GraphNode"]

_STYLE = {
    "op": {"fillcolor": "#e9ecef"},
    "leaf": {"fillcolor": "#cfe2ff"},
    "block": {"fillcolor": "#fff3cd", "style": "rounded,filled,bold"},
    "more": {"fillcolor": "#ffffff", "style": "rounded,dashed"},
}
_OUTPUT_STYLE = {"fillcolor": "#d1e7dd", "penwidth": "2"}
_AUTO_COLLAPSE = 150  # nodes: above this, repeated blocks collapse unless told otherwise


class GraphNode:
    """One box of the picture: an autograd node (``kind`` 'op' or 'leaf'), a collapsed
    module ('block'), or the marker of nodes left out by ``max_nodes`` ('more')."""

    __slots__ = ("id", "kind", "op", "name", "module", "lines", "is_output", "members")

    def __init__(self, node_id, kind, op, name, module, lines, is_output=False, members=()):
        self.id = node_id
        self.kind = kind
        self.op = op
        self.name = name
        self.module = module
        self.lines = lines
        self.is_output = is_output
        self.members = members

    @property
    def label(self) -> str:
        return "\n".join(self.lines)

    def __repr__(self) -> str:
        return f"GraphNode({self.id}, {self.kind}, {self.lines[0]!r})"


class Graph:
    """A drawn autograd graph. ``source`` is its DOT text (always available); ``render``,
    ``pipe`` and Jupyter's inline display go through Graphviz."""

    def __init__(self, nodes, edges, dot: Dot):
        self.nodes: list[GraphNode] = nodes
        self.edges: list[tuple[str, str]] = edges
        self._dot = dot
        self._source = None

    @property
    def source(self) -> str:
        """The graph in Graphviz's DOT language."""
        if self._source is None:
            self._source = self._dot.source()
        return self._source

    def __repr__(self) -> str:
        return f"<ember.viz.Graph: {len(self.nodes)} nodes, {len(self.edges)} edges>"

    def node(self, label_start: str) -> GraphNode:
        """The first node whose label starts with ``label_start`` (an op or a name)."""
        for n in self.nodes:
            if any(line.startswith(label_start) for line in n.lines[:2]):
                return n
        raise KeyError(f"no node of this graph is labelled {label_start!r}")

    def pipe(self, format: str = "svg") -> bytes:
        """The picture as bytes ('svg', 'png' or 'pdf'); raises
        ``ember.viz.GraphvizUnavailable`` when Graphviz is not installed."""
        return _render.pipe(self.source, format)

    def save(self, path) -> Path:
        """Write the DOT text to ``path``; returns the path."""
        path = Path(path)
        path.write_text(self.source, encoding="utf-8")
        return path

    def render(self, path, format: str | None = None) -> Path:
        """Draw the graph into ``path`` (its suffix, or ``format``, picks svg/png/pdf/dot)
        and return the path written. Without Graphviz it writes the DOT text next to it
        (``.dot``), warns once, and returns that path."""
        path = Path(path)
        suffix = path.suffix.lower().lstrip(".")
        if suffix in _render.FORMATS + ("dot", "gv"):
            if format is not None and format != suffix:
                raise ValueError(f"format {format!r} does not match the file name {path.name}")
            format = suffix
        else:
            format = format or "svg"
            path = path.with_name(path.name + "." + format)
        if format in ("dot", "gv"):
            return self.save(path)
        if format not in _render.FORMATS:
            raise ValueError(f"unsupported format {format!r}; ember.viz renders "
                             f"{', '.join(_render.FORMATS)} (or dot for the text)")
        try:
            data = self.pipe(format)
        except _render.GraphvizUnavailable as missing:
            dot_path = self.save(path.with_suffix(".dot"))
            _render.tell_once(f"ember.viz: {missing} -- wrote the graph's DOT text to "
                              f"{dot_path} instead of {path.name}")
            return dot_path
        path.write_bytes(data)
        return path

    def _svg(self):
        try:
            return self.pipe("svg").decode("utf-8")
        except _render.GraphvizUnavailable as missing:
            _render.tell_once(f"ember.viz: {missing} -- showing no picture; the DOT text is "
                              "in .source")
            return None

    def _repr_svg_(self):
        return self._svg()

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": repr(self)}
        svg = self._svg()
        if svg is not None:
            bundle["image/svg+xml"] = svg
        return bundle


def graph(outputs, params=None, show_values: bool = True, show_grads: bool = True, *,
          module=None, max_depth: int | None = None, max_nodes: int | None = 500,
          collapse_repeats: bool | None = None) -> Graph:
    """Draw the autograd graph behind ``outputs`` (a tensor or a sequence of them).

    Each node shows its op (``MulBackward0``) and, where the graph knows it, its output's
    shape, dtype and device. Leaves show their name from ``params`` (a dict of name ->
    tensor, e.g. ``dict(model.named_parameters())``; non-leaf tensors may be named too),
    a summary of their value (``show_values``) and, after backward, of their ``.grad``
    (``show_grads``). Edges run from inputs to the ops that use them.

    Module clusters: inside ``with ember.viz.record(model):`` every node is grouped under
    the module that made it; with only ``module=model`` (or dotted parameter names) the
    ops that use a module's parameters are grouped under it.

    Large graphs: ``collapse_repeats`` draws runs of identical sibling blocks (ResNet's
    stages) as one box after the first (default: when the graph has more than 150
    nodes); ``max_depth`` draws modules nested deeper than that as single boxes (0: each
    top-level module is one box); ``max_nodes`` stops drawing after that many boxes,
    nearest the outputs first (None: no limit).

    >>> x = ember.arange(1, 4, dtype=ember.float32, requires_grad=True)
    >>> y = ((x + 2) ** 2 + 3).mean()
    >>> g = ember.viz.graph(y, params={"x": x})
    >>> [n.lines[0] for n in g.nodes]
    ['output', 'AddBackward0', 'PowBackward0', 'AddBackward0', 'x']
    >>> g.render("tutorial.svg")  # doctest: +SKIP
    """
    from ..tensor import Tensor

    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    if not outputs:
        raise ValueError("ember.viz.graph needs at least one output tensor")
    for i, t in enumerate(outputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"ember.viz.graph: output {i} is a {type(t).__name__}, not a Tensor")
        if not t.requires_grad:
            raise RuntimeError(f"ember.viz.graph: output {i} does not require grad and has no "
                               "grad_fn, so there is no graph behind it (was it computed "
                               "under no_grad(), or from tensors without requires_grad=True?)")
    if max_nodes is not None and (not isinstance(max_nodes, int) or max_nodes < 1):
        raise ValueError(f"max_nodes must be a positive int or None, not {max_nodes!r}")
    if max_depth is not None and (not isinstance(max_depth, int) or max_depth < 0):
        raise ValueError(f"max_depth must be a non-negative int or None, not {max_depth!r}")
    return _Builder(outputs, params, show_values, show_grads, module, max_depth, max_nodes,
                    collapse_repeats).build()


def _key(tensor):
    return (node_of(tensor), tensor.output_nr if tensor.grad_fn is not None else 0)


def _meta_of(tensor):
    return (tuple(tensor.shape), tensor.dtype, tensor.device)


def _device_of(node):
    return getattr(node, "out_device", None) or getattr(node, "_device", None)


def _format_meta(meta) -> str:
    shape, dtype, device = meta
    return f"{format_shape(shape)} {getattr(dtype, 'name', dtype)} {device}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _parent(path: str) -> str:
    return path.rsplit(".", 1)[0] if "." in path else ""


def _prefixes(path: str):
    parts = path.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


class _Builder:
    def __init__(self, outputs, params, show_values, show_grads, module, max_depth,
                 max_nodes, collapse_repeats):
        self.outputs = outputs
        self.params = params
        self.show_values = show_values
        self.show_grads = show_grads
        self.module = module
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.collapse_repeats = collapse_repeats

    # ------------------------------------------------------------------ what is known
    def build(self) -> Graph:
        from ..nn import Module

        if self.module is not None and not isinstance(self.module, Module):
            raise TypeError(f"module must be an nn.Module, not {type(self.module).__name__}")
        self.roots = [node_of(t) for t in self.outputs]
        self.kids = {}  # node -> its next_functions, read once
        self.nodes = walk(self.roots, self.kids)
        self._names()
        self._modules()
        self._groups()
        self._layout()
        self._meta()
        return self._draw()

    def _names(self):
        self.names = names_by_node(self.params)  # (node, nr) -> name
        self.tensors = {}  # (node, nr) -> a tensor we were handed
        if self.params is not None:
            for t in self.params.values():
                self.tensors.setdefault(_key(t), t)
        for t in self.outputs:
            self.tensors.setdefault(_key(t), t)
        leaf_names = {}
        if self.module is not None:
            for name, p in self.module.named_parameters():
                if p.requires_grad:
                    leaf_names[node_of(p)] = name
        for node in self.nodes:
            if is_leaf_node(node):
                name = self.names.get((node, 0)) or leaf_names.get(node) or \
                    _record.LEAF_NAMES.get(node)
                if name is not None:
                    self.names[(node, 0)] = name

    def _meta(self):
        """(node, output_nr) -> (shape, dtype, device), for the nodes that are drawn."""
        from ..tensor import Tensor

        drawn = [n for n in self.nodes if self.item_of[n] < self.kept]
        scan = set(drawn)
        for node in drawn:  # what a consumer saved can tell a drawn node's shape
            scan.update(p for p in self._consumers(node) if p is not None)
        meta = {}
        put = meta.setdefault
        for key, t in self.tensors.items():
            put(key, _meta_of(t))
        for node in scan:
            for nr, m in _record.META.get(node, {}).items():
                put((node, nr), m)
        for node in scan:
            if is_leaf_node(node):
                put((node, 0), _meta_of(node.variable))
                continue
            device = _device_of(node)
            for nr, entry in enumerate(getattr(node, "_output_meta", None) or ()):
                if entry is not None and entry[1] is not None:
                    put((node, nr), (tuple(entry[0]), entry[1], device))
            inputs, edges = getattr(node, "_input_meta", None), getattr(node, "_edges", None)
            if inputs and edges and len(inputs) == len(edges):
                for edge, entry in zip(edges, inputs):
                    if edge is not None and entry is not None:
                        put(tuple(edge), (tuple(entry[0]), entry[1], device))
            try:
                saved = node.saved_as_tensors()  # freed after backward: then nothing here
            except (RuntimeError, AttributeError):
                saved = ()
            for t in saved:
                if isinstance(t, Tensor) and t.grad_fn is not None:
                    put((t.grad_fn, t.output_nr), _meta_of(t))
        self.meta = meta
        self.outputs_of = {}  # node -> how many outputs it has, where more than one
        for node in scan:
            count = getattr(node, "_num_outputs", 1)
            if count > 1:
                self.outputs_of[node] = count
        for node, nr in meta:
            if nr > 0:
                self.outputs_of[node] = max(self.outputs_of.get(node, 1), nr + 1)

    def _modules(self):
        """node -> dotted module name (None: outside any module) and module classes."""
        self.classes = {}
        if self.module is not None:
            self.classes.update({n: type(m).__name__ for n, m in self.module.named_modules()})
        module_of = {}
        for node in self.nodes:
            info = _record.MODULE_OF.get(node)
            if info is not None:
                self.classes.update({k: v for k, v in info[1].items() if k not in self.classes})
                module_of[node] = info[0] or None
        for node in self.nodes:
            if is_leaf_node(node):
                name = self.names.get((node, 0))
                module_of[node] = (_parent(name) or None) if name and "." in name else None
        # Ops reading a module's parameters (directly, or through a parameter-only subgraph
        # such as weight.T) belong to that module when no recording said otherwise.
        derived = {n: module_of[n] for n in self.nodes if is_leaf_node(n) and module_of[n]}
        for node in reversed(_topological(self.nodes, self.kids) if derived else ()):
            if is_leaf_node(node):
                continue
            kids = [c for c, _ in self.kids[node]]  # None: a tensor without grad
            owners = {derived[c] for c in kids if c in derived}
            if node not in module_of and len(owners) == 1:
                module_of[node] = next(iter(owners))
                if all(c in derived for c in kids):
                    derived[node] = module_of[node]
        self.module_of = module_of

    # ------------------------------------------------------------------ collapsing
    def _groups(self):
        within = {}  # module path -> nodes made by it or its submodules
        for node in self.nodes:
            path = self.module_of.get(node)
            if path:
                for prefix in _prefixes(path):
                    within.setdefault(prefix, []).append(node)
        order = list(self.classes) + [p for p in within if p not in self.classes]
        self.group_of = {}
        self.groups = {}
        collapse = self.collapse_repeats
        if collapse is None:
            collapse = len(self.nodes) > _AUTO_COLLAPSE
        if collapse:  # first, so that repeats of the boxes max_depth makes merge too
            self._collapse_repeats(order, within)
        if self.max_depth is not None:
            for path in order:
                if path and path.count(".") == self.max_depth and path in within:
                    self._group("module:" + path, within[path], [path], None)

    def _group(self, key, members, paths, same_as):
        members = [m for m in members if m not in self.group_of]
        if not members:
            return
        for m in members:
            self.group_of[m] = key
        self.groups[key] = (members, paths, same_as)

    def _collapse_repeats(self, order, within):
        children = {}
        for path in order:
            if path and path in within:
                children.setdefault(_parent(path), []).append(path)
        has_children = {_parent(p) for p in order if p}
        for parent, siblings in children.items():
            if self.max_depth is not None and parent and parent.count(".") >= self.max_depth:
                continue  # inside a box max_depth draws whole
            run = []
            for path in siblings + [None]:
                signature = self._signature(path, within) if path in has_children else None
                if run and signature is not None and signature == run[0][1]:
                    run.append((path, signature))
                    continue
                if len(run) > 1:
                    rest = [p for p, _ in run[1:]]
                    members = [n for p in rest for n in within[p]]
                    self._group("repeat:" + rest[0], members, rest, run[0][0])
                run = [(path, signature)] if signature is not None else []

    def _signature(self, path, within):
        ops, params = Counter(), []
        for node in within[path]:
            if is_leaf_node(node):
                name = self.names.get((node, 0), "")
                params.append((name[len(path) + 1:], tuple(node.variable.shape)))
            else:
                ops[node.name()] += 1
        return (self.classes.get(path), tuple(sorted(ops.items())), tuple(sorted(params)))

    # ------------------------------------------------------------------ drawing
    def _layout(self):
        """The boxes in drawing order (nearest the outputs first) and how many are kept."""
        items, item_of = [], {}
        for node in self.nodes:
            item = self.group_of.get(node, node)
            if item not in item_of:
                item_of[item] = len(items)
                items.append(item)
            item_of[node] = item_of[item]
        self.items, self.item_of = items, item_of
        self.kept = len(items) if self.max_nodes is None else min(len(items), self.max_nodes)

    def _draw(self) -> Graph:
        items, item_of, kept = self.items, self.item_of, self.kept
        dropped = len(items) - kept
        root_items = {item_of[r] for r in self.roots}
        several = len(self.outputs) > 1

        made = []
        for index in range(kept):
            item = items[index]
            made.append(self._item(f"n{index}", item, index in root_items, several))
        edges, seen = [], set()
        more_id = f"n{kept}" if dropped else None
        for parent in self.nodes:
            head = item_of[parent]
            if head >= kept:
                continue
            for child, nr in self.kids[parent]:
                if child is None:
                    continue
                tail = item_of[child]
                if tail == head:
                    continue
                tail_id = f"n{tail}" if tail < kept else more_id
                if tail >= kept or isinstance(items[tail], str) or isinstance(items[head], str):
                    if (tail_id, head) in seen:
                        continue  # boxes standing for many nodes get one edge per pair
                    seen.add((tail_id, head))
                label = str(nr) if self.outputs_of.get(child, 1) > 1 else None
                edges.append((tail_id, f"n{head}", label))
        if dropped:
            made.append(GraphNode(more_id, "more", None, None, None,
                                  [f"... {dropped} more nodes", f"(max_nodes={self.max_nodes})"]))
        return Graph(made, [(t, h) for t, h, _ in edges], self._dot(made, edges))

    def _item(self, node_id, item, is_output, several):
        if isinstance(item, str):
            return self._block(node_id, item, is_output)
        node = item
        lines = []
        nr0 = self.roots.index(node) if is_output else 0
        name = self.names.get((node, 0))
        if is_leaf_node(node):
            var = node.variable
            lines.append(name or "AccumulateGrad")
            lines.append(_format_meta(self.meta[(node, 0)]))
            if self.show_values:
                lines.append("value " + summarize(var))
            if self.show_grads and var._grad is not None:
                lines.append("grad " + summarize(var._grad))
            kind = "leaf"
        else:
            if name is not None:
                lines.append(name)
            elif is_output:
                lines.append(f"output {nr0}" if several else "output")
            lines.append(node.name())
            count = self.outputs_of.get(node, 1)
            for nr in range(count):
                meta = self.meta.get((node, nr))
                text = _format_meta(meta) if meta is not None else None
                if count > 1:
                    lines.append(f"{nr}: {text or 'shape not recorded'}")
                elif text is not None:
                    lines.append(text)
                elif _device_of(node) is not None:
                    lines.append(str(_device_of(node)))
            tensor = self.tensors.get((node, 0))
            if tensor is not None and self.show_values:
                lines.append("value " + summarize(tensor))
            if tensor is not None and self.show_grads and tensor._grad is not None:
                lines.append("grad " + summarize(tensor._grad))
            kind = "op"
        module = self.module_of.get(node)
        return GraphNode(node_id, kind, node.name(), name, module, lines, is_output, (node,))

    def _block(self, node_id, key, is_output):
        members, paths, same_as = self.groups[key]
        ops = sum(1 for m in members if not is_leaf_node(m))
        params = len(members) - ops
        first, last = paths[0], paths[-1]
        cls = self.classes.get(first)
        if same_as is not None:
            lines = [first if len(paths) == 1 else f"{first} ... {last}",
                     f"{len(paths)} x {cls or 'block'}, same as {same_as}"]
        else:
            lines = [f"{first}: {cls}" if cls else first]
        lines.append(f"{_count(ops, 'op')}, {_count(params, 'parameter')}")
        exits = [m for m in members if any(
            self.group_of.get(p) != key for p in self._consumers(m))] or members[:1]
        if len(exits) == 1:
            meta = self.meta.get((exits[0], 0))
            if meta is not None:
                lines.append(_format_meta(meta))
        module = _parent(first) or None
        return GraphNode(node_id, "block", None, None, module, lines, is_output, tuple(members))

    def _consumers(self, node):
        if not hasattr(self, "_consumer_map"):
            self._consumer_map = {}
            for parent in self.nodes:
                for child, _ in self.kids[parent]:
                    if child is not None:
                        self._consumer_map.setdefault(child, []).append(parent)
            for root in self.roots:
                self._consumer_map.setdefault(root, []).append(None)
        return self._consumer_map.get(node, ())

    def _dot(self, made, edges) -> Dot:
        dot = Dot("ember", graph_attrs={"rankdir": "TB", "fontname": "Helvetica",
                                        "fontsize": "11", "nodesep": "0.25",
                                        "ranksep": "0.35"},
                  node_attrs={"shape": "box", "style": "rounded,filled",
                              "fontname": "Helvetica", "fontsize": "10"},
                  edge_attrs={"arrowsize": "0.7", "fontsize": "9"})
        counts = Counter()
        for item in made:
            if item.module:
                for prefix in _prefixes(item.module):
                    counts[prefix] += 1
        drawn = {p for p, c in counts.items() if c >= 2}
        clusters = {}
        for path in sorted(drawn, key=lambda p: (p.count("."), p)):
            parent = next((q for q in reversed(_prefixes(path)[:-1]) if q in drawn), None)
            cls = self.classes.get(path)
            clusters[path] = dot.cluster(
                f"{len(clusters)}_{re.sub(r'[^A-Za-z0-9]', '_', path)}",
                clusters.get(parent), label=f"{path}: {cls}" if cls else path,
                style="rounded,dashed", color="#6c757d", fontname="Helvetica",
                fontsize="10")
        for item in made:
            lines = item.lines
            home = None
            if item.module:
                home = next((q for q in reversed(_prefixes(item.module)) if q in drawn), None)
                if home != item.module and item.kind != "block":
                    cls = self.classes.get(item.module)
                    lines.append(f"in {item.module}" + (f": {cls}" if cls else ""))
            attrs = dict(_STYLE[item.kind])
            if item.is_output:
                attrs.update(_OUTPUT_STYLE)
            attrs["label"] = "\n".join(lines)
            attrs["tooltip"] = item.op or lines[0]
            dot.node(item.id, clusters.get(home), **attrs)
        for tail, head, label in edges:
            dot.edge(tail, head, label=label)
        return dot


def _topological(nodes, kids):
    """Consumers before the nodes they read from (the order backward runs in)."""
    deps = dict.fromkeys(nodes, 0)
    for node in nodes:
        for child, _ in kids[node]:
            if child is not None:
                deps[child] += 1
    ready = [n for n in nodes if deps[n] == 0]
    order = []
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in kids[node]:
            if child is not None:
                deps[child] -= 1
                if deps[child] == 0:
                    ready.append(child)
    return order
