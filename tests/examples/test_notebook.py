"""examples/tutorial.ipynb runs top to bottom in a fresh kernel, prints the tutorial's
values and draws its graphs inline."""
from __future__ import annotations

from pathlib import Path

import pytest

import ember

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "tutorial.ipynb"


def _run(monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="pip install 'ember[docs]'")
    nbclient = pytest.importorskip("nbclient", reason="pip install 'ember[docs]'")
    pytest.importorskip("ipykernel", reason="pip install 'ember[docs]'")
    from jupyter_client.kernelspec import NoSuchKernel

    # The kernel is a child process: it imports the ember this test imports.
    src = str(Path(ember.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", src)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    # 'python3' is ipykernel's own kernel, started with this interpreter.
    client = nbclient.NotebookClient(notebook, kernel_name="python3", timeout=120,
                                     resources={"metadata": {"path": str(ROOT)}})
    try:
        client.execute()
    except NoSuchKernel as missing:
        pytest.skip(f"no Jupyter kernel for this interpreter: {missing}")
    return notebook


def _text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def test_tutorial_notebook_runs_and_shows_its_graphs(monkeypatch):
    notebook = _run(monkeypatch)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    errors = [out for cell in code for out in cell.outputs if out.output_type == "error"]
    assert not errors
    text = "\n".join(_text(cell) for cell in code)
    for line in ("X tensor([1., 2., 3.], requires_grad=True)",
                 "Y tensor(19.6667, grad_fn=<MeanBackward0>)",
                 "tensor([2.0000, 2.6667, 3.3333])",
                 "tensor(22.)\ntensor(22.)\ntensor(22.)",
                 "False tensor(41.)",
                 "tensor(51.6667, grad_fn=<MeanBackward0>)",
                 "tensor([ 6.6667,  9.3333, 12.0000])",
                 "Median:"):
        assert line in text
    graphs = [out for cell in code for out in cell.outputs
              if "viz.graph" in cell.source and out.output_type == "execute_result"]
    assert len(graphs) == 2
    explained = [out for cell in code for out in cell.outputs
                 if "explain" in cell.source and out.output_type == "execute_result"]
    assert explained and "text/html" in explained[0]["data"]
    from ember.viz import render

    try:
        render.pipe("digraph { a }")
    except render.GraphvizUnavailable:
        return  # no picture without Graphviz; the text/plain repr is still there
    assert all("<svg" in out["data"]["image/svg+xml"] for out in graphs)
