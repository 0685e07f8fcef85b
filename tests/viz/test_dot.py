"""The DOT writer behind ember.viz: quoting, attributes and nested clusters."""
from __future__ import annotations

import pytest

from ember.viz.dot import Dot, attributes, identifier, quote


def test_quote_escapes_what_dot_reads_specially():
    assert quote('say "hi"') == '"say \\"hi\\""'
    assert quote("a\\b") == '"a\\\\b"'
    assert quote("two\nlines\r\nthree") == '"two\\nlines\\nthree"'
    assert quote(3) == '"3"'


def test_identifiers_and_attributes():
    assert identifier("n0") == "n0"
    assert identifier("cluster_0_layer1") == "cluster_0_layer1"
    assert identifier("has space") == '"has space"'
    assert identifier("0abc") == '"0abc"'
    assert attributes({"label": "x", "color": None}) == ' [label="x"]'
    assert attributes({}) == ""


def test_nested_clusters_hold_their_nodes():
    dot = Dot("g", graph_attrs={"rankdir": "TB"}, node_attrs={"shape": "box"})
    outer = dot.cluster("outer", label="outer")
    inner = dot.cluster("inner", outer, label="inner")
    dot.cluster("second", label="second")
    dot.node("a", inner, label="A")
    dot.node("b", outer, label="B")
    dot.node("c", label="C")
    dot.edge("a", "b")
    dot.edge("b", "c", label="0")
    assert dot.source() == "\n".join([
        "digraph g {",
        '  graph [rankdir="TB"]',
        '  node [shape="box"]',
        "  subgraph cluster_outer {",
        '    label="outer"',
        '    b [label="B"]',
        "    subgraph cluster_inner {",
        '      label="inner"',
        '      a [label="A"]',
        "    }",
        "  }",
        "  subgraph cluster_second {",
        '    label="second"',
        "  }",
        '  c [label="C"]',
        "  a -> b",
        '  b -> c [label="0"]',
        "}",
        ""])


def test_a_node_is_declared_once():
    dot = Dot()
    dot.node("a")
    with pytest.raises(ValueError, match="declared twice"):
        dot.node("a")


def test_deep_cluster_nesting_needs_no_recursion():
    dot = Dot()
    parent = None
    for i in range(2000):  # deeper than Python's recursion limit
        parent = dot.cluster(f"c{i}", parent)
    dot.node("leaf", parent)
    source = dot.source()
    assert source.count("subgraph") == 2000 and "leaf" in source


def test_docstring_examples_run(tmp_path, monkeypatch):
    import doctest
    import sys

    import ember

    monkeypatch.chdir(tmp_path)
    for name in ("ember.viz", "ember.viz.draw", "ember.viz.recording",
                 "ember.autograd.explain"):
        result = doctest.testmod(sys.modules[name], extraglobs={"ember": ember})
        assert result.failed == 0 and result.attempted > 0, name
