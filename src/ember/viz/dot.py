"""A small DOT writer: enough of Graphviz's language for ember's graphs (attributes, nodes,
edges, nested ``cluster_`` subgraphs), so a graph always has its text without Graphviz."""
from __future__ import annotations

import re

_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def quote(text) -> str:
    """A DOT string: ``"..."`` with quotes and backslashes escaped and newlines as ``\\n``
    (a centered line break in a label)."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"')
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return f'"{text}"'


def identifier(text) -> str:
    text = str(text)
    return text if _ID.match(text) else quote(text)


def attributes(attrs: dict) -> str:
    """``[a="1", b="x"]`` (empty when there are none); None values are left out."""
    items = [f"{identifier(k)}={quote(v)}" for k, v in attrs.items() if v is not None]
    return f" [{', '.join(items)}]" if items else ""


class Cluster:
    """A ``subgraph cluster_<id>``: its own attributes, node ids and nested clusters."""

    def __init__(self, key: str, attrs: dict):
        self.key = key
        self.attrs = attrs
        self.nodes: list[str] = []
        self.children: list[Cluster] = []


class Dot:
    """Collects a directed graph and writes its DOT text with ``source()``."""

    def __init__(self, name: str = "G", graph_attrs=None, node_attrs=None, edge_attrs=None):
        self.name = name
        self.graph_attrs = dict(graph_attrs or {})
        self.node_attrs = dict(node_attrs or {})
        self.edge_attrs = dict(edge_attrs or {})
        self.nodes: dict[str, dict] = {}
        self.edges: list[tuple[str, str, dict]] = []
        self.top: list[str] = []
        self.clusters: list[Cluster] = []

    def node(self, node_id: str, cluster: Cluster | None = None, **attrs) -> None:
        if node_id in self.nodes:
            raise ValueError(f"node {node_id!r} is declared twice")
        self.nodes[node_id] = attrs
        (cluster.nodes if cluster is not None else self.top).append(node_id)

    def edge(self, tail: str, head: str, **attrs) -> None:
        self.edges.append((tail, head, attrs))

    def cluster(self, key: str, parent: Cluster | None = None, **attrs) -> Cluster:
        made = Cluster(key, attrs)
        (parent.children if parent is not None else self.clusters).append(made)
        return made

    def source(self) -> str:
        lines = [f"digraph {identifier(self.name)} {{"]
        for kind, attrs in (("graph", self.graph_attrs), ("node", self.node_attrs),
                            ("edge", self.edge_attrs)):
            if attrs:
                lines.append(f"  {kind}{attributes(attrs)}")
        # Clusters are written depth first with an explicit stack (no recursion).
        stack = [(c, 1) for c in reversed(self.clusters)]
        while stack:
            item, depth = stack.pop()
            if item is None:
                lines.append("  " * depth + "}")
                continue
            pad = "  " * depth
            lines.append(f"{pad}subgraph {identifier('cluster_' + item.key)} {{")
            for k, v in item.attrs.items():
                if v is not None:
                    lines.append(f"{pad}  {identifier(k)}={quote(v)}")
            for node_id in item.nodes:
                lines.append(f"{pad}  {identifier(node_id)}{attributes(self.nodes[node_id])}")
            stack.append((None, depth))
            stack.extend((c, depth + 1) for c in reversed(item.children))
        for node_id in self.top:
            lines.append(f"  {identifier(node_id)}{attributes(self.nodes[node_id])}")
        for tail, head, attrs in self.edges:
            lines.append(f"  {identifier(tail)} -> {identifier(head)}{attributes(attrs)}")
        lines.append("}")
        return "\n".join(lines) + "\n"
