"""ember.utils.benchmark: the Timer's blocks and GPU waits, Measurement's statistics and
text, Compare's tables, and the matmul sweep with its command line."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ember
from ember.backend import cuda as backend_cuda
from ember.utils.benchmark import (
    Compare,
    Measurement,
    TaskSpec,
    Timer,
    matmul_sweep,
    select_unit,
    trim_sigfig,
)
from ember.utils.benchmark.__main__ import main
from ember.utils.benchmark.sweep import MatmulSweep

from ..conftest import requires_torch

HAVE_CUDA = ember.cuda.is_available()
requires_cuda = pytest.mark.skipif(not HAVE_CUDA, reason="needs a GPU that CuPy sees")
no_cuda_only = pytest.mark.skipif(HAVE_CUDA, reason="checks what happens without a GPU")
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _spec(**fields):
    return TaskSpec(**{"stmt": "x", **fields})


# ---------------------------------------------------------------------- the Timer, on CPU
def test_timer_measures_a_known_sleep_within_tolerance():
    timer = Timer("time.sleep(0.01)", setup="import time", device="cpu")
    m = timer.blocked_autorange(min_run_time=0.1)
    assert 0.009 <= m.median <= 0.05  # generous: a busy machine oversleeps, never undersleeps
    assert 0.009 <= m.first_call <= 0.05
    assert sum(m.raw_times) >= 0.1
    single = timer.timeit(number=3)
    assert single.number_per_run == 3 and len(single.raw_times) == 1
    assert 0.027 <= single.raw_times[0] <= 0.15 and 0.009 <= single.times[0] <= 0.05


class _CountingClock:
    """A clock that advances only when the statement says so: block times are exact."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_blocked_autorange_sizes_its_blocks_and_measures_min_run_time():
    clock = _CountingClock()  # each run lasts 2**-10 s, so every sum is exact
    stmt = "clock.now += 2 ** -10"
    timer = Timer(stmt, globals={"clock": clock}, timer=clock, device="cpu")
    m = timer.blocked_autorange(min_run_time=0.2)
    # One run (~1 ms) already dwarfs the clock's cost and lasts min_run_time / 1000.
    assert m.number_per_run == 1 and len(m.raw_times) == 205  # 205 * 2**-10 s >= 0.2 s
    assert m.median == 2 ** -10 and m.first_call == 2 ** -10
    clock.now = 0.0
    longer = Timer(stmt, globals={"clock": clock}, timer=clock,
                   device="cpu").blocked_autorange(min_run_time=2.0)
    assert longer.number_per_run == 10 and len(longer.raw_times) == 205
    assert longer.median == 2 ** -10


def test_adaptive_autorange_stops_when_steady_or_out_of_time():
    clock = _CountingClock()
    steady = Timer("clock.now += 0.001", globals={"clock": clock}, timer=clock,
                   device="cpu").adaptive_autorange(min_run_time=0.01)
    assert len(steady.raw_times) == 10  # min_run_time reached with an IQR of zero
    clock.now = 0.0
    flip = {"odd": False}
    noisy_stmt = "flip['odd'] = not flip['odd']\nclock.now += 0.004 if flip['odd'] else 0.001"
    noisy = Timer(noisy_stmt, globals={"clock": clock, "flip": flip}, timer=clock,
                  device="cpu").adaptive_autorange(min_run_time=0.01, max_run_time=0.1)
    assert not noisy.meets_confidence(0.1)
    assert 0.1 < sum(noisy.raw_times) <= 0.1 + 0.05


def test_setup_runs_before_every_block_outside_the_clock_and_torch_is_ember():
    clock = _CountingClock()
    log = []
    timer = Timer("log.append(('stmt', value, torch is ember))",
                  setup="log.append('setup'); clock.now += 5.0; value = 7",
                  globals={"log": log, "clock": clock}, timer=clock, device="cpu")
    m = timer.timeit(number=2)
    assert m.raw_times == [1e-9]  # the setup's five seconds are not timed
    assert log == ["setup", ("stmt", 7, True)] + ["setup"] + [("stmt", 7, True)] * 2 + \
        ["setup"] + [("stmt", 7, True)] * 2


def test_timer_rejects_bad_input_clearly():
    with pytest.raises(ValueError, match="stmt must be a str"):
        Timer(lambda: None)
    with pytest.raises(SyntaxError):
        Timer("x = ")
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        Timer("pass", global_setup="#include <x>")
    with pytest.raises(ValueError, match="Python statements only"):
        Timer("pass", language="cpp")
    with pytest.raises(TypeError, match="globals must be a dict"):
        Timer("pass", globals=[1])
    timer = Timer("pass", device="cpu")
    with pytest.raises(ValueError, match="number must be at least 1"):
        timer.timeit(0)
    with pytest.raises(ValueError, match="min_run_time must be positive"):
        timer.blocked_autorange(min_run_time=0)
    with pytest.raises(TypeError, match="num_threads must be an int"):
        Timer("pass", num_threads=1.5)
    with pytest.raises(RuntimeError, match="Timer\\(device='gpu'\\)"):
        Timer("pass", device="gpu")
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        timer.repeat()
    with pytest.raises(ZeroDivisionError):  # the statement's own error comes through
        Timer("1 / 0", device="cpu").timeit(1)


def test_num_threads_holds_blas_while_timing_and_restores_it():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads():
        return max(p["num_threads"] for p in threadpoolctl.threadpool_info()
                   if p["user_api"] == "blas")

    before = blas_threads()
    seen = []
    m = Timer("seen.append(blas_threads())", globals={"seen": seen, "blas_threads": blas_threads},
              num_threads=1, device="cpu").timeit(1)
    assert set(seen) == {1} and m.num_threads == 1
    assert blas_threads() == before
    kept = Timer("pass", num_threads=None, device="cpu").timeit(1)
    assert kept.num_threads == before


def test_num_threads_without_threadpoolctl_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)
    with pytest.raises(ImportError, match="pip install threadpoolctl"):
        Timer("pass", num_threads=1)
    m = Timer("pass", num_threads=None, device="cpu").timeit(1)
    assert m.num_threads is None and "BLAS's default threads" in repr(m)


# ---------------------------------------------------------------------- GPU waits
@no_cuda_only
def test_timer_on_cuda_without_a_gpu_raises_saying_why():
    with pytest.raises(RuntimeError, match="Timer\\(device='cuda'\\).*CUDA is not available"):
        Timer("pass", device="cuda")


class _FakeGPU:
    """ember's CUDA backend replaced by a recorder: a 'GPU' that only logs the calls."""

    def __init__(self, monkeypatch, has_context=False):
        self.events = []
        self.context = has_context
        monkeypatch.setattr(backend_cuda, "is_available", lambda: True)
        monkeypatch.setattr(backend_cuda, "device_count", lambda: 2)
        monkeypatch.setattr(backend_cuda, "current_device", lambda: 0)
        monkeypatch.setattr(backend_cuda, "synchronize", self.synchronize)
        monkeypatch.setattr(backend_cuda, "has_context", lambda index: self.context)
        monkeypatch.setattr(backend_cuda, "create_context", self.create_context)

    def synchronize(self, index=None):
        self.events.append(("sync", index))

    def create_context(self, index):
        self.events.append(("context", index))
        self.context = True

    def clock(self):
        self.events.append("clock")
        return float(len(self.events))


def _blocks(events):
    """Split the log into timed blocks: each must be setup, sync, clock, runs, sync, clock."""
    blocks, i = [], 0
    while i < len(events):
        assert events[i] == "setup", events[i:i + 6]
        assert events[i + 1][0] == "sync" and events[i + 2] == "clock", events[i:i + 6]
        j = i + 3
        while events[j] == "stmt":
            j += 1
        assert events[j][0] == "sync" and events[j + 1] == "clock", events[i:j + 2]
        blocks.append((j - i - 3, events[i + 1][1]))
        i = j + 2
    return blocks


def test_timed_blocks_start_and_stop_with_a_synchronize_fake_gpu(monkeypatch):
    gpu = _FakeGPU(monkeypatch)
    timer = Timer("events.append('stmt')", setup="events.append('setup')",
                  globals={"events": gpu.events}, timer=gpu.clock, device="cuda")
    m = timer.timeit(number=3)
    # The context is created (and timed) first, apart from any timed block.
    assert gpu.events[:3] == ["clock", ("context", 0), "clock"]
    # First call (1 run), warm-up (2 runs), the measured block (3 runs): each one synced.
    assert _blocks(gpu.events[3:]) == [(1, 0), (2, 0), (3, 0)]
    assert m.task_spec.device == "cuda:0" and m.cuda_context is not None
    text = repr(m)
    assert "synchronized with cuda:0" in text and "CUDA context creation" in text
    assert "first call" in text

    del gpu.events[:]
    timer.blocked_autorange(min_run_time=0.001)
    blocks = _blocks(gpu.events)
    assert blocks[:5] == [(0, 0)] * 5  # the clock's own cost, also measured with the waits
    assert all(index == 0 for _, index in blocks) and len(blocks) > 6


def test_device_none_waits_for_the_current_gpu_and_the_tensors_gpus(monkeypatch):
    gpu = _FakeGPU(monkeypatch, has_context=True)
    x = ember.zeros(2)
    real_device = ember.Tensor.device
    monkeypatch.setattr(ember.Tensor, "device", property(  # x says it lives on cuda:1
        lambda t: ember.device("cuda", 1) if t is x else real_device.fget(t)))
    m = Timer("pass", globals={"x": x}, timer=gpu.clock).timeit(1)
    assert m.task_spec.device == "cuda:0,cuda:1" and m.cuda_context is None
    syncs = [e for e in gpu.events if e != "clock"]
    assert syncs[:4] == [("sync", 0), ("sync", 1), ("sync", 0), ("sync", 1)]
    del gpu.events[:]
    Timer("pass", device="cpu", timer=gpu.clock).timeit(1)
    assert "sync" not in {e[0] for e in gpu.events if e != "clock"}


@requires_cuda
def test_timer_synchronizes_a_real_cuda_matmul(monkeypatch):
    calls = []
    real = backend_cuda.synchronize

    def spy(index=None):
        calls.append(index)
        real(index)

    monkeypatch.setattr(backend_cuda, "synchronize", spy)
    x = ember.randn(512, 512, device="cuda")
    m = Timer("x @ x", globals={"x": x}).timeit(number=5)
    assert m.task_spec.device.startswith("cuda:") and m.first_call > 0
    assert len(calls) == 6  # before and after the first call, the warm-up, the block
    assert "synchronized with cuda:" in repr(m)


@requires_cuda
def test_matmul_sweep_on_cuda_finds_a_verdict():
    sweep = matmul_sweep(sizes=[64, 256], include_transfer=True, min_run_time=0.01)
    gpu = next(c for c in sweep.columns if c.startswith("cuda:") and "copies" not in c)
    assert f"{gpu} + copies" in sweep.columns
    text = sweep.report()
    assert "Speedup over the CPU" in text and "CUDA context" in text
    assert "beat the CPU" in text


# ---------------------------------------------------------------------- Measurement
def test_measurement_statistics_on_known_data():
    m = Measurement(2, [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0], _spec())
    assert m.times == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    assert m.median == 4.5 and m.mean == 4.5
    assert m.iqr == pytest.approx(6.25 - 2.75)  # linear interpolation between points
    assert not m.meets_confidence(0.1) and m.has_warnings
    assert m.significant_figures == 1
    tight = Measurement(1, [0.98, 0.99, 1.00, 1.01, 1.02, 0.97, 1.03, 1.00], _spec())
    assert tight.iqr == pytest.approx(1.0125 - 0.9875)
    assert tight.meets_confidence() and not tight.has_warnings
    # The middle four (0.99, 1, 1, 1.01) give a 90% interval of +-0.0058: two figures.
    assert tight.significant_figures == 2
    assert Measurement(1, [1.0] * 8, _spec()).significant_figures == 4
    assert Measurement(1, [0.5], _spec()).iqr == 0.0


def test_measurement_repr_has_pytorchs_layout_and_the_first_call():
    spec = TaskSpec("x + 1", setup="import time", label="add", sub_label="n=3",
                    description="cpu", num_threads=1)
    one = Measurement(20, [0.2], spec, first_call=0.0425)
    assert repr(one).splitlines()[1:] == [
        "add: n=3", "cpu", "setup: import time", "  10.00 ms",
        "  1 measurement, 20 runs , 1 thread",
        "  first call: 42.50 ms (kept out of the times above)"]
    many = Measurement(10, [1e-4, 1.1e-4, 1.2e-4, 1.3e-4, 1.6e-4], TaskSpec(
        "a\nb", num_threads=4, device="cuda:0"), cuda_context=0.31)
    assert repr(many).splitlines()[1:] == [
        "stmt:", "  a", "  b", "", "  Median: 12.00 us", "  IQR:    2.00 us (11.00 to 13.00)",
        "  5 measurements, 10 runs per measurement, 4 threads, synchronized with cuda:0",
        "  WARNING: Interquartile range is 16.7% of the median measurement.",
        "           This could indicate system fluctuation.",
        "  CUDA context creation: 310.00 ms (kept out of the times above)"]
    assert many.title == "stmt:\n  a\n  b" and many.num_threads == 4 and many.env == \
        "Unspecified env"


def test_measurement_rejects_bad_input_and_merges_replicates():
    with pytest.raises(ValueError, match="number_per_run must be a positive integer"):
        Measurement(0, [1.0], _spec())
    with pytest.raises(ValueError, match="raw_times is empty"):
        Measurement(1, [], _spec())
    with pytest.raises(ValueError, match="finite and non-negative"):
        Measurement(1, [-1.0], _spec())
    with pytest.raises(TypeError, match="task_spec must be a TaskSpec"):
        Measurement(1, [1.0], "x")
    a = Measurement(2, [2.0, 4.0], _spec(label="L"), first_call=9.0)
    b = Measurement(1, [3.0], _spec(label="L"))
    c = Measurement(1, [5.0], _spec(label="other"))
    merged = Measurement.merge([a, b, c])
    assert [m.times for m in merged] == [[1.0, 2.0, 3.0], [5.0]]
    assert merged[0].number_per_run == 1 and merged[0].first_call == 9.0


def test_units_and_significant_figures():
    assert select_unit(4.2e-9) == ("ns", 1e-9) and select_unit(3e-12) == ("ns", 1e-9)
    assert select_unit(4.2e-5) == ("us", 1e-6) and select_unit(0.042) == ("ms", 1e-3)
    assert select_unit(42.0) == ("s", 1.0)
    assert trim_sigfig(3.14159, 2) == pytest.approx(3.1)
    assert trim_sigfig(98765, 1) == 100000 and trim_sigfig(0.0, 3) == 0.0
    with pytest.raises(ValueError, match="positive integer"):
        trim_sigfig(1.0, 0)


@requires_torch
def test_measurement_matches_pytorch_on_random_data():
    import torch.utils.benchmark as tb

    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 4, 7, 30):
        for spread in (0.001, 0.15, 0.5):
            raw = list(1e-4 * (1 + rng.normal(0, spread, n)).clip(0.1))
            mine = Measurement(7, raw, TaskSpec("y = x", "import x", label="L", num_threads=2))
            theirs = tb.Measurement(7, raw, tb.TaskSpec("y = x", "import x", label="L",
                                                       num_threads=2))
            for name in ("median", "mean", "iqr"):
                assert getattr(mine, name) == pytest.approx(getattr(theirs, name), rel=1e-9)
            assert mine.significant_figures == theirs.significant_figures
            assert mine.has_warnings == theirs.has_warnings
            assert repr(mine).splitlines()[1:] == repr(theirs).splitlines()[1:]


# ---------------------------------------------------------------------- Compare
def _grid_results(module=None):
    """Two labels, two thread counts, rows by size, columns by device; one cell missing."""
    spec_type = TaskSpec if module is None else module.TaskSpec
    measurement_type = Measurement if module is None else module.Measurement
    results = []
    rng = np.random.default_rng(1)
    for label in ("matmul", "add"):
        for threads in (1, 4):
            for size, base in (("64", 2e-6), ("1024", 3e-3)):
                for column, factor in (("cpu", 1.0), ("cuda", 0.3), ("cuda + copies", 2.5)):
                    if (label, threads, size, column) == ("add", 4, "1024", "cpu"):
                        continue
                    raw = list(base * factor * 10 * (1 + rng.normal(0, 0.05, 6)))
                    results.append(measurement_type(10, raw, spec_type(
                        "x", "pass", label=label, sub_label=size, description=column,
                        num_threads=threads)))
    return results


def test_compare_prints_pytorchs_table():
    results = [Measurement(1, [t], TaskSpec("x @ x", label="mm", sub_label=sub,
                                            description=desc))
               for sub, desc, t in (("64", "cpu", 6.0e-6), ("64", "cuda", 5.8e-6),
                                    ("128", "cpu", 3.73e-5), ("128", "cuda", 3.70e-5))]
    assert str(Compare(results)) == (
        "[----------- mm ----------]\n"
        "           |  cpu   |  cuda\n"
        "1 threads: ----------------\n"
        "      64   |   6.0  |   5.8\n"
        "      128  |  37.3  |  37.0\n"
        "\n"
        "Times are in microseconds (us).\n")
    table = Compare(_grid_results())
    table.colorize()
    text = str(table)
    assert text.count("Times are in") == 2 and "4 threads: " in text
    assert "\033[92m" in text  # the best cell of a column is green
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        Compare([1.0])


@requires_torch
@pytest.mark.parametrize("options", [(), ("trim",), ("color",), ("rowwise",), ("warn",),
                                     ("trim", "warn", "color")])
def test_compare_matches_pytorch(options):
    import torch.utils.benchmark as tb

    texts = []
    for module, results in ((tb, _grid_results(tb)), (None, _grid_results())):
        table = (tb.Compare if module else Compare)(results)
        if "trim" in options:
            table.trim_significant_figures()
        if "color" in options:
            table.colorize()
        if "rowwise" in options:
            table.colorize(rowwise=True)
        if "warn" in options:
            table.highlight_warnings()
        texts.append(str(table))
    assert texts[1] == texts[0]


# ---------------------------------------------------------------------- the sweep
def _synthetic_sweep(gpu_over_cpu: dict[int, float]) -> MatmulSweep:
    results = []
    for size, ratio in gpu_over_cpu.items():
        for column, seconds in (("cpu", 1e-3), ("cuda:0", 1e-3 * ratio)):
            results.append(Measurement(1, [seconds] * 4, TaskSpec(
                "a @ b", label="m", sub_label=f"{size} x {size}", description=column),
                first_call=seconds * 3))
    return MatmulSweep(sizes=list(gpu_over_cpu), dtype_name="float32",
                       columns=["cpu", "cuda:0"], results=results, num_threads=2,
                       gpu_names={"cuda:0": "Fake GPU"}, cuda_contexts={"cuda:0": 0.25})


def test_sweep_finds_where_the_gpu_starts_to_win():
    sweep = _synthetic_sweep({64: 4.0, 128: 0.5, 256: 2.0, 512: 0.5, 1024: 0.1})
    assert sweep.crossover("cuda:0") == 512  # a win at 128 that is lost at 256 doesn't count
    assert sweep.speedup("cuda:0", 1024) == pytest.approx(10.0)
    text = sweep.report()
    assert "cuda:0 starts to beat the CPU at 512 x 512 (10.0x at 1024 x 1024)." in text
    assert "CUDA context creation on cuda:0: 250 ms" in text and "Fake GPU" in text
    assert "10.00x" in text and "First call of each product" in text
    assert _synthetic_sweep({64: 0.5, 128: 0.2}).crossover("cuda:0") == 64
    assert "at every size tried" in _synthetic_sweep({64: 0.5, 128: 0.2}).report()
    loses = _synthetic_sweep({64: 3.0, 128: 1.5})
    assert loses.crossover("cuda:0") is None
    assert "the CPU wins up to the largest size tried" in loses.report()


def test_sweep_on_the_cpu_times_every_size():
    sweep = matmul_sweep(sizes=[32, 8, 16], devices=["cpu"], min_run_time=0.005,
                         dtype=ember.float64)
    assert sweep.sizes == [8, 16, 32] and sweep.columns == ["cpu"]
    assert all(sweep.measurement("cpu", n).first_call > 0 for n in sweep.sizes)
    text = sweep.report()
    assert "float64" in text and "32 x 32" in text
    assert "Only the CPU was timed" in text
    assert "[" in str(sweep.compare()).splitlines()[0]


def test_sweep_rejects_bad_input():
    with pytest.raises(ValueError, match="sizes must be positive integers"):
        matmul_sweep(sizes=[0], devices=["cpu"])
    with pytest.raises(ValueError, match="sizes is empty"):
        matmul_sweep(sizes=[], devices=["cpu"])
    with pytest.raises(TypeError, match="float32 or ember.float64"):
        matmul_sweep(sizes=[4], devices=["cpu"], dtype=ember.int64)


@no_cuda_only
def test_sweep_without_a_gpu_says_so_plainly(capsys):
    assert main(["matmul", "--sizes", "8,16", "--min-run-time", "0.005", "--quiet",
                 "--include-transfer"]) == 0
    out = capsys.readouterr().out
    assert "No GPU: CUDA is not available" in out and "Timing the CPU alone" in out
    assert "include_transfer has no copies to count without a GPU" in out
    assert "16 x 16" in out
    with pytest.raises(RuntimeError, match="cannot time cuda.*CUDA is not available"):
        matmul_sweep(sizes=[4], devices=["cuda"])


def test_cli_rejects_bad_options(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["matmul", "--sizes", "64,abc"])
    assert exit_info.value.code == 2
    assert "expected positive integers separated by commas" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([])
    assert "COMMAND" in capsys.readouterr().err


def test_python_m_runs_the_sweep():
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "ember.utils.benchmark", "matmul", "--sizes",
                           "8,16", "--min-run-time", "0.005", "--device", "cpu"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Median time per product" in done.stdout and "timing 16 x 16 on cpu" in done.stderr
