"""docs/ops.md is generated from the registry and must match it."""
from __future__ import annotations

from pathlib import Path

import ember  # noqa: F401
from ember.ops import catalog


def test_docs_ops_md_is_up_to_date():
    path = Path(__file__).resolve().parents[2] / "docs" / "ops.md"
    assert path.read_text() == catalog.markdown(), (
        "docs/ops.md is out of date: run `python -m ember.ops.catalog > docs/ops.md`")
