"""How many examples each property test runs under the loaded profile."""
from __future__ import annotations

import os

import pytest

hypothesis = pytest.importorskip(
    "hypothesis", reason="hypothesis is not installed: pip install hypothesis (in the dev extra)")

SCALE = 20 if os.environ.get("EMBER_HYPOTHESIS_PROFILE", "ci") == "deep" else 1


def examples(count: int):
    """``@examples(n)``: run n examples (n * 20 under the deep profile)."""
    return hypothesis.settings(max_examples=count * SCALE)
