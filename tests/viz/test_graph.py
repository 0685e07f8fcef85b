"""ember.viz.graph: what the picture holds (nodes, labels, edges, clusters), read from the
DOT text always and from Graphviz's SVG where Graphviz is installed."""
from __future__ import annotations

import re
import shutil
import warnings
import xml.etree.ElementTree as ET

import pytest

import ember
from ember import nn
from ember.viz import render

from ._models import TinyResNet

try:
    import graphviz  # noqa: F401

    HAVE_PACKAGE = True
except ImportError:
    HAVE_PACKAGE = False
HAVE_GRAPHVIZ = HAVE_PACKAGE and shutil.which("dot") is not None
needs_graphviz = pytest.mark.skipif(
    not HAVE_GRAPHVIZ, reason="Graphviz is not installed (pip install graphviz; "
                              "apt-get install graphviz)")


@pytest.fixture(autouse=True)
def _fresh_warning():
    render._told = False  # "says so once" is per process; each test starts untold
    yield
    render._told = False


def tutorial():
    x = ember.arange(1, 4, dtype=ember.float32, requires_grad=True)
    a = x + 2
    b = a ** 2
    c = b + 3
    y = c.mean()
    return x, a, b, c, y


def parse_dot(source):
    """{node id: label lines} and [(tail, head)] from the DOT text."""
    nodes = {}
    for node_id, label in re.findall(r'^\s*(n\d+) \[.*?label="((?:[^"\\]|\\.)*)"', source, re.M):
        nodes[node_id] = label.replace('\\"', '"').split("\\n")
    edges = re.findall(r"^\s*(n\d+) -> (n\d+)", source, re.M)
    return nodes, edges


def parse_svg(svg):
    """{node id: text lines} and [(tail, head)] from Graphviz's SVG."""
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    nodes, edges = {}, []
    for group in root.iter("{http://www.w3.org/2000/svg}g"):
        kind = group.get("class")
        title = group.find("s:title", ns)
        if kind == "node":
            nodes[title.text] = [t.text for t in group.iter("{http://www.w3.org/2000/svg}text")]
        elif kind == "edge":
            edges.append(tuple(title.text.split("->")))
    return nodes, edges


TUTORIAL_NODES = {
    "n0": ["y", "MeanBackward0", "[] float32 cpu", "value 19.67"],
    "n1": ["c", "AddBackward0", "[3] float32 cpu", "value [12, 19, 28]"],
    "n2": ["b", "PowBackward0", "[3] float32 cpu", "value [9, 16, 25]"],
    "n3": ["a", "AddBackward0", "[3] float32 cpu", "value [3, 4, 5]"],
    "n4": ["x", "[3] float32 cpu", "value [1, 2, 3]", "grad [2, 2.667, 3.333]"],
}
TUTORIAL_EDGES = [("n1", "n0"), ("n2", "n1"), ("n3", "n2"), ("n4", "n3")]


def test_tutorial_graph_in_dot():
    x, a, b, c, y = tutorial()
    y.backward()
    g = ember.viz.graph(y, params=dict(x=x, a=a, b=b, c=c, y=y))
    nodes, edges = parse_dot(g.source)
    assert nodes == TUTORIAL_NODES
    assert edges == TUTORIAL_EDGES
    assert [(n.id, n.kind) for n in g.nodes] == [
        ("n0", "op"), ("n1", "op"), ("n2", "op"), ("n3", "op"), ("n4", "leaf")]
    assert g.edges == TUTORIAL_EDGES and g.nodes[0].is_output
    assert g.source.startswith("digraph ember {") and g.source.rstrip().endswith("}")


@needs_graphviz
def test_tutorial_graph_renders_to_svg(tmp_path):
    x, a, b, c, y = tutorial()
    y.backward()
    g = ember.viz.graph(y, params=dict(x=x, a=a, b=b, c=c, y=y))
    path = g.render(tmp_path / "tutorial.svg")
    assert path == tmp_path / "tutorial.svg"
    nodes, edges = parse_svg(path.read_text())
    assert nodes == TUTORIAL_NODES
    assert sorted(edges) == sorted(TUTORIAL_EDGES)


def test_the_checked_in_tutorial_picture_is_what_the_code_draws():
    from pathlib import Path

    svg = Path(__file__).parents[2] / "docs" / "images" / "tutorial_graph.svg"
    nodes, edges = parse_svg(svg.read_text())
    assert nodes == TUTORIAL_NODES
    assert sorted(edges) == sorted(TUTORIAL_EDGES)


@needs_graphviz
def test_png_and_pdf(tmp_path):
    g = ember.viz.graph(tutorial()[-1])
    assert g.render(tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert g.render(tmp_path / "g", format="pdf").read_bytes()[:5] == b"%PDF-"
    assert (tmp_path / "g.pdf").exists()
    assert g.pipe("svg").lstrip().startswith(b"<?xml")


@needs_graphviz
def test_jupyter_shows_svg_inline():
    g = ember.viz.graph(tutorial()[-1])
    bundle = g._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"] and bundle["text/plain"] == repr(g)
    assert "<svg" in g._repr_svg_()


def _without_dot(monkeypatch):
    if HAVE_PACKAGE:
        monkeypatch.setenv("PATH", "/nonexistent")  # the package is there, the program is not
    else:
        monkeypatch.setattr(render, "_import_graphviz", _missing_package)


def _missing_package():
    raise ImportError("ember.viz renders pictures with the graphviz package: pip install "
                      "graphviz")


@pytest.mark.parametrize("absent", ["program", "package"])
def test_without_graphviz_it_writes_dot_and_says_so_once(tmp_path, monkeypatch, absent):
    if absent == "program":
        _without_dot(monkeypatch)
        reason = "dot" if HAVE_PACKAGE else "pip install graphviz"
    else:
        monkeypatch.setattr(render, "_import_graphviz", _missing_package)
        reason = "pip install graphviz"
    g = ember.viz.graph(tutorial()[-1])
    with pytest.warns(UserWarning, match="wrote the graph's DOT text") as caught:
        path = g.render(tmp_path / "tutorial.svg")
    assert reason in str(caught[0].message)
    assert path == tmp_path / "tutorial.dot"
    assert path.read_text() == g.source
    assert not (tmp_path / "tutorial.svg").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once: no second warning
        assert g.render(tmp_path / "again.png") == tmp_path / "again.dot"
        assert g._repr_mimebundle_() == {"text/plain": repr(g)}
        assert g._repr_svg_() is None
    with pytest.raises(ember.viz.GraphvizUnavailable):
        g.pipe("svg")


def test_dot_format_and_save_need_no_graphviz(tmp_path, monkeypatch):
    monkeypatch.setattr(render, "_import_graphviz", _missing_package)
    g = ember.viz.graph(tutorial()[-1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert g.render(tmp_path / "t.dot").read_text() == g.source
        assert g.save(tmp_path / "u.gv").read_text() == g.source


def test_leaf_labels_follow_show_values_and_show_grads():
    x, a, b, c, y = tutorial()
    before = ember.viz.graph(y, params={"x": x}).node("x").lines
    assert before == ["x", "[3] float32 cpu", "value [1, 2, 3]"]
    y.backward()
    after = ember.viz.graph(y, params={"x": x}).node("x").lines
    assert after[-1] == "grad [2, 2.667, 3.333]"
    bare = ember.viz.graph(y, params={"x": x}, show_values=False, show_grads=False)
    assert bare.node("x").lines == ["x", "[3] float32 cpu"]
    unnamed = ember.viz.graph(y).nodes[-1]
    assert unnamed.lines[0] == "AccumulateGrad" and unnamed.kind == "leaf"


def test_large_values_are_summarized():
    w = ember.arange(0, 100, dtype=ember.float32).reshape(10, 10).requires_grad_()
    g = ember.viz.graph((w * 2).sum(), params={"w": w})
    assert g.node("w").lines[2] == "value mean 49.5, std 28.87, min 0, max 99"


def test_shapes_come_from_saved_tensors_and_multi_output_nodes():
    x = ember.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = x.split(2)
    y = (a * b).sum()
    g = ember.viz.graph(y)
    split = next(n for n in g.nodes if n.op.startswith("Split"))
    assert split.lines[1:] == ["0: [2] float32 cpu", "1: [2] float32 cpu"]
    nodes, edges = parse_dot(g.source)
    labels = re.findall(r'(n\d+) -> (n\d+) \[label="(\d)"\]', g.source)
    assert sorted(label for _, _, label in labels) == ["0", "1"]


def test_several_outputs_share_their_graph():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    g = ember.viz.graph([h.sum(), h.mean()], params={"x": x})
    firsts = [n.lines[0] for n in g.nodes]
    assert firsts[:2] == ["output 0", "output 1"]
    assert firsts.count("MulBackward0") == 1 and firsts.count("x") == 1


def test_labels_are_escaped():
    x = ember.tensor([1.0], requires_grad=True)
    g = ember.viz.graph((x * 2).sum(), params={'say "hi"\\now': x})
    assert 'label="say \\"hi\\"\\\\now\\n[1] float32 cpu' in g.source


def test_parameter_names_group_ops_by_module():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    out = model(ember.randn(5, 3)).sum()
    g = ember.viz.graph(out, module=model)
    assert {n.lines[0] for n in g.nodes if n.kind == "leaf"} == \
        {"0.weight", "0.bias", "2.weight", "2.bias"}
    assert [n.module for n in g.nodes if n.op == "AddmmBackward0"] == ["2", "0"]
    assert 'label="0: Linear"' in g.source and 'label="2: Linear"' in g.source
    assert g.node("TanhBackward0").module is None  # no parameters: outside any cluster
    same = ember.viz.graph(out, params=dict(model.named_parameters()))
    assert [n.module for n in same.nodes if n.op == "AddmmBackward0"] == ["2", "0"]


def test_record_groups_every_node_under_the_module_that_made_it():
    model = TinyResNet(blocks=2)
    with ember.viz.record(model):
        loss = model(ember.randn(2, 3, 8, 8)).sum()
    g = ember.viz.graph(loss, collapse_repeats=False)
    by_op = {}
    for n in g.nodes:
        by_op.setdefault(n.op, set()).add(n.module)
    assert by_op["ConvolutionBackward0"] == {
        "stem.0", "layer1.0.conv1", "layer1.0.conv2", "layer1.1.conv1", "layer1.1.conv2",
        "layer2.0.conv1", "layer2.0.conv2", "layer2.0.down.0", "layer2.1.conv1",
        "layer2.1.conv2"}
    assert by_op["ReluBackward0"] == {"stem.2", "layer1.0.relu", "layer1.1.relu",
                                      "layer2.0.relu", "layer2.1.relu"}
    assert by_op["AddmmBackward0"] == {"fc"}
    # the residual sum is the block's own op, not its last submodule's
    assert {"layer1.0", "layer2.1"} <= by_op["AddBackward0"]
    assert g.node("layer1.0.conv1.weight").module == "layer1.0.conv1"
    # nested clusters: layer1 holds layer1.0, which holds layer1.0.bn1
    source = g.source
    outer = source.index('label="layer1: Sequential"')
    block = source.index('label="layer1.0: Block"')
    inner = source.index('label="layer1.0.bn1: BatchNorm2d"')
    assert outer < block < inner
    # a single-node module gets no cluster of its own, only a line
    # a global adaptive average pool is PyTorch's MeanBackward1
    assert "in pool: AdaptiveAvgPool2d" in g.node("MeanBackward1").lines
    # module outputs give shapes the graph alone does not keep
    assert "[2, 8, 1, 1] float32 cpu" in g.node("MeanBackward1").lines


@needs_graphviz
def test_module_graph_renders_with_its_clusters():
    model = TinyResNet(blocks=2)
    with ember.viz.record(model):
        loss = model(ember.randn(2, 3, 8, 8)).sum()
    g = ember.viz.graph(loss, collapse_repeats=False)
    svg = g.pipe("svg").decode()
    nodes, edges = parse_svg(svg)
    assert set(nodes) == {n.id for n in g.nodes}
    assert sorted(edges) == sorted(g.edges)
    for n in g.nodes:
        assert nodes[n.id] == n.lines
    assert svg.count('class="cluster"') == g.source.count("subgraph cluster_")


def test_record_stops_and_cleans_up():
    model = nn.Linear(2, 2)
    with ember.viz.record(model) as rec:
        assert len(model._forward_hooks) == 1
    assert len(model._forward_hooks) == 0 and rec.module is model
    with pytest.raises(TypeError, match="takes an nn.Module"):
        ember.viz.record(lambda x: x)


def test_repeated_blocks_collapse():
    model = TinyResNet(blocks=6)
    with ember.viz.record(model):
        loss = model(ember.randn(2, 3, 8, 8)).sum()
    full = ember.viz.graph(loss, collapse_repeats=False)
    short = ember.viz.graph(loss)  # large enough to collapse on its own
    assert not [n for n in full.nodes if n.kind == "block"]
    blocks = {n.lines[0]: n for n in short.nodes if n.kind == "block"}
    assert set(blocks) == {"layer1.1 ... layer1.5", "layer2.2 ... layer2.5"}
    assert blocks["layer1.1 ... layer1.5"].lines[1:3] == [
        "5 x Block, same as layer1.0", "35 ops, 30 parameters"]
    assert blocks["layer2.2 ... layer2.5"].lines[1] == "4 x Block, same as layer2.1"
    assert blocks["layer1.1 ... layer1.5"].module == "layer1"
    assert len(short.nodes) < len(full.nodes)
    # the box is wired in where its blocks were: from layer1.0's output, into layer2.0
    box = blocks["layer1.1 ... layer1.5"].id
    into = [t for t, h in short.edges if h == box]
    out_of = [h for t, h in short.edges if t == box]
    ids = {n.id: n for n in short.nodes}
    assert any(ids[t].module == "layer1.0.relu" for t in into)
    assert {ids[h].module for h in out_of} >= {"layer2.0.conv1", "layer2.0.down.0"}


def test_max_depth_draws_each_module_as_one_box():
    model = TinyResNet(blocks=2)
    with ember.viz.record(model):
        loss = model(ember.randn(2, 3, 8, 8)).sum()
    g = ember.viz.graph(loss, max_depth=0)
    assert [n.lines[0] for n in g.nodes] == [
        "output", "fc: Linear", "ViewBackward0", "pool: AdaptiveAvgPool2d",
        "layer2: Sequential", "layer1: Sequential", "stem: Sequential"]
    assert g.node("layer1").lines[1:] == ["14 ops, 12 parameters", "[2, 4, 8, 8] float32 cpu"]
    assert [(g.nodes[int(t[1:])].lines[0], g.nodes[int(h[1:])].lines[0]) for t, h in g.edges] \
        == [("fc: Linear", "output"), ("ViewBackward0", "fc: Linear"),
            ("pool: AdaptiveAvgPool2d", "ViewBackward0"),
            ("layer2: Sequential", "pool: AdaptiveAvgPool2d"),
            ("layer1: Sequential", "layer2: Sequential"),
            ("stem: Sequential", "layer1: Sequential")]
    g1 = ember.viz.graph(loss, max_depth=1)
    assert "layer1.0: Block" in [n.lines[0] for n in g1.nodes]
    assert 'label="layer1: Sequential"' in g1.source  # now a cluster around its blocks


def test_max_nodes_keeps_the_part_nearest_the_output_of_a_deep_graph():
    x = ember.ones(2, requires_grad=True)
    y = x
    for _ in range(20_000):  # far deeper than Python's recursion limit
        y = y.tanh()  # saves its output: the drawing knows each shape
    g = ember.viz.graph(y.sum(), max_nodes=50)
    assert len(g.nodes) == 51
    assert g.nodes[-1].kind == "more"
    assert g.nodes[-1].lines == ["... 19952 more nodes", "(max_nodes=50)"]
    assert (g.nodes[-1].id, "n49") in g.edges
    assert g.nodes[49].lines == ["TanhBackward0", "[2] float32 cpu"]
    assert len(ember.viz.graph(y.sum()).nodes) == 501  # the default limit, 500
    everything = ember.viz.graph(y.sum(), max_nodes=None)
    assert len(everything.nodes) == 20_002 and len(everything.edges) == 20_001


def test_bad_arguments():
    x = ember.ones(2, requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(TypeError, match="output 0 is a float"):
        ember.viz.graph(1.0)
    with pytest.raises(RuntimeError, match="does not require grad"):
        ember.viz.graph(ember.ones(2))
    with pytest.raises(ValueError, match="at least one output"):
        ember.viz.graph([])
    with pytest.raises(TypeError, match="params must be a dict"):
        ember.viz.graph(y, params=[x])
    with pytest.raises(TypeError, match="is a str, not a Tensor"):
        ember.viz.graph(y, params={"x": "x"})
    with pytest.raises(ValueError, match="max_nodes"):
        ember.viz.graph(y, max_nodes=0)
    with pytest.raises(ValueError, match="max_depth"):
        ember.viz.graph(y, max_depth=-1)
    with pytest.raises(TypeError, match="module must be an nn.Module"):
        ember.viz.graph(y, module="model")
    g = ember.viz.graph(y)
    with pytest.raises(ValueError, match="unsupported format 'jpg'"):
        g.render("picture", format="jpg")
    with pytest.raises(ValueError, match="does not match"):
        g.render("picture.svg", format="png")
    with pytest.raises(KeyError, match="labelled 'nothing'"):
        g.node("nothing")


@pytest.mark.cuda
@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_tensors_are_labelled_with_their_device():
    w = ember.randn(50, 50, device="cuda", requires_grad=True)
    g = ember.viz.graph((w * 2).sum(), params={"w": w})
    lines = g.node("w").lines
    assert lines[1] == "[50, 50] float32 cuda:0"
    assert lines[2].startswith("value mean ")
    assert "cuda:0" in g.nodes[0].lines[2]


@pytest.mark.parametrize("make, op", [(lambda x: x * 2, "MulBackward0"),
                                      (lambda x: 2 * x, "MulBackward0"),
                                      (lambda x: x + 1, "AddBackward0"),
                                      (lambda x: x ** 2, "PowBackward0"),
                                      (lambda x: 2.5 / x, None)])
def test_ops_with_a_python_number_show_the_tensors_shape(make, op):
    """A number is a 0-d wrapped scalar in PyTorch's graph: it has no edge, and the op's
    output has the tensor operand's shape (never the number's [])."""
    x = ember.ones(2, 3, requires_grad=True)
    y = make(x)
    g = ember.viz.graph(y, params={"x": x})
    assert g.nodes[0].lines[1] == (op or y.grad_fn.name())
    assert g.nodes[0].lines[2] == "[2, 3] float32 cpu"
    assert all(n.lines[1] == "[2, 3] float32 cpu" for n in g.nodes[1:])
    assert g.node("x").lines[1] == "[2, 3] float32 cpu"
    assert len(g.edges) == len(g.nodes) - 1  # no box for the number
