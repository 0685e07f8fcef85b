"""The compile measurement of the benchmark harness (bench/_harness.py): --against-eager
times ember eager beside the compiled steps, and a compiled training step reads each
batch."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import ember

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import _harness as h  # noqa: E402


def _model():
    ember.manual_seed(0)
    nn = ember.nn
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def _batches():
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((4, 6)).astype(np.float32), rng.integers(0, 3, 4))
            for _ in range(3)]


def test_compiled_training_case_reads_each_batch():
    eager_model, model = _model(), _model()
    eager = h.training(ember, eager_model, ember.nn.CrossEntropyLoss(), _batches())
    case = h.training(ember, model, ember.nn.CrossEntropyLoss(), _batches())
    compiled = case.compiled(ember.compile)
    for _ in range(5):  # cycles through the three batches
        eager.step()
        compiled()
    for p, q in zip(eager_model.parameters(), model.parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())


def test_against_eager_times_both_and_reports_compiled_over_eager(capsys):
    calls = {"plain": 0, "compiled": 0}

    def plain():
        calls["plain"] += 1

    def compiled_of(compile):
        def step():
            calls["compiled"] += 1
        return step

    cases = {"ember": {"c": h.Case(plain, compiled=compiled_of)}}
    args = argparse.Namespace(repeats=3, warmup=1, threads=0, device="cpu", json=False,
                              compile=False, against_eager=True)
    (row,) = h.main("w", "d", args, cases, baseline=h.EAGER)
    assert calls["plain"] == calls["compiled"] == 4
    assert "ratio_eager" in row and "compiled / eager" in capsys.readouterr().out
