"""ember.viz: the autograd graph as a picture (Graphviz: SVG, PNG, PDF; DOT text always).

>>> import ember
>>> x = ember.arange(1, 4, dtype=ember.float32, requires_grad=True)
>>> y = ((x + 2) ** 2 + 3).mean()
>>> picture = ember.viz.graph(y, params={"x": x})
>>> picture.render("tutorial.svg")   # doctest: +SKIP

Rendering needs the ``graphviz`` package (``pip install graphviz``) and Graphviz's ``dot``
program (``apt-get install graphviz``); without them ``render`` writes the ``.dot`` text
and says so once. ``ember.viz.record(model)`` groups nodes by the module that made them.
"""
from __future__ import annotations

from .draw import Graph, GraphNode, graph
from .recording import record
from .render import GraphvizUnavailable

__all__ = ["graph", "record", "Graph", "GraphNode", "GraphvizUnavailable"]
