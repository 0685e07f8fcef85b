"""The closing summary of a test run says how many tests skipped and why."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SAMPLE = '''
import pytest

@pytest.mark.parametrize("i", range(3))
def test_oracle(i):
    # what pytest.importorskip("torch") says where torch is missing (importing the real
    # torch here would only slow the test down)
    pytest.skip("could not import 'torch': No module named 'torch'")

def test_oracle_marked():
    pytest.skip("PyTorch is not installed")

def test_other_extra():
    pytest.importorskip("no_such_extra_module")

@pytest.mark.xfail(reason="a known bug, reported", strict=True)
def test_known_bug():
    assert False

def test_passes():
    pass
'''


def _run(tmp_path, source):
    (tmp_path / "test_sample.py").write_text(source)
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "src")]))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "tests.skip_summary", "test_sample.py"], cwd=tmp_path, env=environment,
        capture_output=True, text=True, timeout=120)
    return result.stdout


def test_summary_groups_skips_by_reason(tmp_path):
    output = _run(tmp_path, SAMPLE)
    assert "skipped tests and known bugs, by reason" in output
    assert ("4 PyTorch oracle tests skipped: torch is not installed — run `make test-oracle`"
            in output)
    assert "1 test skipped: no_such_extra_module is not installed" in output
    assert "1 known bug marked xfail: a known bug, reported" in output
    # it comes before pytest's closing count
    assert output.index("PyTorch oracle") < output.index("5 skipped")


def test_no_summary_when_nothing_skipped(tmp_path):
    output = _run(tmp_path, "def test_passes():\n    pass\n")
    assert "by reason" not in output
    assert "1 passed" in output
