"""examples/graph_pictures.py: writes the tutorial's picture and backward table and three
ResNet pictures (SVG with Graphviz, DOT text without)."""
from __future__ import annotations

import shutil

import graph_pictures

from ember.viz import render


def test_writes_every_picture(tmp_path, capsys):
    render._told = False
    written = graph_pictures.main(["--out", str(tmp_path)])
    render._told = False
    have_graphviz = shutil.which("dot") is not None and _have_package()
    suffix = ".svg" if have_graphviz else ".dot"
    assert len(written) == 6
    for what, path in written.items():
        assert path.exists() and path.stat().st_size > 0, what
    pictures = [p for w, p in written.items() if "backward" not in w]
    assert all(p.suffix == suffix for p in pictures)
    stages = written["ResNet, one box per stage"].read_text()
    for name in ("stem: Sequential", "layer1: Sequential", "layer3: Sequential", "fc: Linear"):
        assert name in stages
    assert "AccumulateGrad (x)" in written["tutorial backward (text)"].read_text()
    assert "tutorial_graph" in capsys.readouterr().out


def _have_package():
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    return True
