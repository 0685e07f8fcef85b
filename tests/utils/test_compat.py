"""The coverage report (ember.utils.compat) and its checked-in page docs/compat.md."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ember.utils import compat

torch = pytest.importorskip("torch", reason="the coverage report enumerates PyTorch's names")

PAGE = Path(__file__).resolve().parents[2] / "docs" / "compat.md"


@pytest.fixture(scope="module")
def rows():
    return compat.report()


def test_page_in_sync():
    # in a fresh process, as the page is made: which of torch's lazily loaded submodules
    # this test process has imported depends on the tests that ran before
    src = str(PAGE.parents[1] / "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    page = subprocess.run([sys.executable, "-m", "ember.utils.compat"], env=env, check=True,
                          capture_output=True, text=True, timeout=300).stdout
    assert PAGE.read_text(encoding="utf-8") == page, (
        "docs/compat.md is stale: run python -m ember.utils.compat docs/compat.md")


def test_every_namespace_reported(rows):
    assert [r.namespace for r in rows] == [t for t, _ in compat.NAMESPACES]


def test_classification_is_a_partition(rows):
    for r in rows:
        left = [n for names in r.left_out.values() for n in names]
        seen = r.present + r.missing + left + r.not_api
        assert len(seen) == len(set(seen)), r.namespace
        theirs = compat._resolve(r.namespace)
        assert set(seen) == {n for n in dir(theirs) if not n.startswith("_")}


def test_known_names(rows):
    by = {r.namespace: r for r in rows}
    assert "exp" in by["torch"].present
    assert "complex64" in by["torch"].left_out["complex numbers (ember has real dtypes only)"]
    assert "Linear" in by["torch.nn"].present
    assert "math" in by["torch.nn.functional"].not_api      # an import, not API
    assert "to_sparse" in by["torch.Tensor"].left_out["sparse layouts"]


def test_left_out_never_hides_a_name_ember_has(rows):
    # a name ember has counts as present even when a left-out pattern matches it
    for r in rows:
        ours = compat._resolve(r.ember_namespace)
        for names in r.left_out.values():
            assert ours is None or not any(hasattr(ours, n) for n in names)


def test_percent_and_main(tmp_path, capsys):
    cov = compat.Coverage("a", "b", present=["x", "y", "z"], missing=["w"])
    assert cov.counted == 4 and cov.percent == 75.0
    assert compat.Coverage("a", "b").percent == 100.0
    target = tmp_path / "page.md"
    assert compat.main([str(target)]) == 0
    assert target.read_text(encoding="utf-8").startswith("# PyTorch coverage")
