"""The benchmark suite's bookkeeping (bench/_harness.py, bench/run_all.py): interleaved
timing, ratios against the right baseline, the generated page and its kept prose."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import _harness as h  # noqa: E402
import run_all  # noqa: E402


def test_time_cases_interleaves_and_counts_inner_calls():
    calls = []
    cases = {lib: {"c": h.Case(lambda lib=lib: calls.append(lib), inner=3)}
             for lib in ("ember", "torch")}
    samples = h.time_cases(cases, repeats=4, warmup=1)
    assert [len(samples["c"][lib]) for lib in ("ember", "torch")] == [4, 4]
    assert len(calls) == 2 * (1 + 4 * 3)
    timed = calls[2:]  # after the warm-ups, the order alternates every repeat
    firsts = [timed[i * 6] for i in range(4)]
    assert firsts == ["ember", "torch", "ember", "torch"]


def _rows(kind, ember_s, torch_s, baseline="torch"):
    cases = {lib: {"c": h.Case(lambda: None, kind=kind, work=2.0)}
             for lib in ("ember", baseline)}
    samples = {"c": {"ember": [ember_s] * 3, baseline: [torch_s] * 3}}
    return h.summarize(cases, samples, baseline)


def test_ratio_is_time_over_time_or_rate_over_rate():
    (time_row,) = _rows("time", 0.2, 0.1)
    assert time_row["ratio"] == pytest.approx(2.0)
    (rate_row,) = _rows("rate", 0.2, 0.1)
    assert rate_row["ratio"] == pytest.approx(0.5)
    assert rate_row["ember"]["rate"] == pytest.approx(10.0)
    (numpy_row,) = _rows("rate", 0.1, 0.1, baseline="numpy")
    assert numpy_row["baseline"] == "numpy" and numpy_row["ratio"] == pytest.approx(1.0)


def _result(threads, case, kind, ember_s, torch_s, **extra):
    rows = _rows(kind, ember_s, torch_s)
    rows[0]["case"] = case
    for lib, values in extra.items():
        rows[0][lib].update(values)
    return {"workload": case, "description": "d", "threads": threads, "device": "cpu",
            "rows": rows, "extra": {}}


def test_page_marks_targets_and_memory(tmp_path):
    results = [_result(0, "cnn_train", "rate", 0.1, 0.05),
               _result(1, "cnn_train", "rate", 0.1, 0.1),
               _result(0, "deep_chain fwd+bwd", "time", 0.09, 0.1,
                       ember={"rss_growth_mb": 30.0}, torch={"rss_growth_mb": 50.0})]
    table = run_all.ratios(results)
    assert table["cnn_train"][0][0] == pytest.approx(0.5)
    assert table["deep_chain peak memory"][0][0] == pytest.approx(0.6)
    text = run_all.page(results, {"cores": 2, "numpy": "x", "blas": ["b"], "torch": "t",
                                  "python": "3"}, "cpu", "images/b.png", 60.0)
    assert "| cnn_train | 0.50x | 1.00x | steps/s | >= 0.6x | **no** |" in text
    assert "| deep_chain fwd+bwd | 0.90x | - | time | <= 1.0x | yes |" in text
    assert "| deep_chain peak memory | 0.60x |" in text
    assert run_all.speed("deep_chain fwd+bwd", 0.5) == pytest.approx(2.0)
    assert run_all.speed("cnn_train", 0.5) == pytest.approx(0.5)


def test_chart_is_written(tmp_path):
    pytest.importorskip("matplotlib", reason="pip install matplotlib for the chart")
    table = {"cnn_train": {0: (0.5, "torch"), 1: (0.7, "torch")},
             "conv2d fwd+bwd": {0: (2.0, "torch")}}
    path = tmp_path / "images" / "chart.png"
    assert run_all.chart(table, path, "cpu")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
