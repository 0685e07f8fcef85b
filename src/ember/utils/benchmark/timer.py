"""``Timer``: PyTorch's ``torch.utils.benchmark.Timer`` for ember, honest on the GPU.

A GPU runs its kernels asynchronously, so a clock read right after an op measures only
the launch. The Timer waits for the GPU before it starts the clock and before it stops
it, for every timed block. The first run of a statement carries one-off costs (the CUDA
context, CuPy compiling its kernels, cuBLAS's handle, the memory pool's first
allocation); the Timer times it alone and keeps it out of the statistics.
"""
from __future__ import annotations

import textwrap
import time
from collections.abc import Callable
from typing import Any

from . import _device
from .measurement import Measurement, TaskSpec

__all__ = ["Timer", "timer"]

timer = time.perf_counter  # the default clock; the GPU waits are the Timer's own job

_INT_MAX = 2 ** 31 - 1

# The timed function: setup, wait for the GPU, start the clock, the statement `number`
# times, wait for the GPU again, stop the clock. Names are prefixed so a statement can
# use any name of its own.
_TEMPLATE = """
def _ember_timed(_ember_number, _ember_clock, _ember_synchronize):
{setup}
    _ember_synchronize()
    _ember_start = _ember_clock()
    for _ember_run in range(_ember_number):
{stmt}
    _ember_synchronize()
    return _ember_clock() - _ember_start
"""


class Timer:
    """Time a statement the way PyTorch's ``torch.utils.benchmark.Timer`` does, with the
    GPU waits and the first-call costs handled.

    Args:
        stmt: the Python code to time (a string).
        setup: code run before each timed block, not timed (defines what ``stmt`` uses).
        timer: the clock, ``time.perf_counter`` by default.
        globals: names the code can use; ``torch`` and ``ember`` are ember unless given.
        label, sub_label, description, env: how ``Compare`` places the Measurement
            (rows by ``sub_label``, columns by ``description``, tables by ``label``).
        num_threads: BLAS threads for the CPU while timing (1 by default, as PyTorch);
            set with ``threadpoolctl`` (``pip install threadpoolctl``). None keeps
            BLAS's own thread count.
        device: what to wait for: 'cpu' (nothing), 'cuda' or 'cuda:1'. None (the
            default) waits for the GPUs of the tensors in ``globals`` and for the
            current GPU whenever CUDA is available.

    >>> import ember
    >>> from ember.utils.benchmark import Timer
    >>> x = ember.ones(64, 64)
    >>> m = Timer("x @ x", globals={"x": x}, label="matmul", sub_label="64").timeit(100)
    >>> m.number_per_run, len(m.times), m.first_call > 0
    (100, 1, True)
    """

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict[str, Any] | None = None,
                 label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None,
                 num_threads: int | None = 1, language: str = "python", device=None):
        if not isinstance(stmt, str):
            raise ValueError(f"Timer: stmt must be a str of Python code, got "
                             f"{type(stmt).__name__}")
        if not isinstance(setup, str):
            raise ValueError(f"Timer: setup must be a str of Python code, got "
                             f"{type(setup).__name__}")
        if language not in ("python", "py"):
            raise ValueError(f"Timer: ember times Python statements only, got "
                             f"language={language!r}")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                             "this code can simply be moved to `setup`.")
        if globals is not None and not isinstance(globals, dict):
            raise TypeError(f"Timer: globals must be a dict, got {type(globals).__name__}")
        if not callable(timer):
            raise TypeError(f"Timer: timer must be a callable clock, got {timer!r}")
        stmt, setup = _tidy(stmt), _tidy(setup)
        for name, code in (("stmt", stmt), ("setup", setup)):
            compile(code, f"<timer {name}>", "exec")  # a SyntaxError names the culprit now

        import ember

        self._globals = dict(globals or {})
        self._globals.setdefault("torch", ember)
        self._globals.setdefault("ember", ember)
        self._clock = timer
        self._threads = _ThreadLimit(num_threads)
        self._indices = _device.cuda_indices(device, self._globals)
        self._synchronize = _device.synchronizer(self._indices)
        self._task_spec = TaskSpec(
            stmt=stmt, setup=setup, label=label, sub_label=sub_label,
            description=description, env=env, num_threads=self._threads.count,
            device=_device.device_name(self._indices))
        source = _TEMPLATE.format(setup=textwrap.indent(setup, " " * 4),
                                  stmt=textwrap.indent(stmt, " " * 8))
        exec(compile(source, "<ember.utils.benchmark.Timer>", "exec"), self._globals)
        self._timed = self._globals.pop("_ember_timed")
        self._first_call: float | None = None
        self._cuda_context: float | None = None

    @property
    def task_spec(self) -> TaskSpec:
        return self._task_spec

    # ------------------------------------------------------------------ the runs
    def _run(self, number: int) -> float:
        """Seconds for one block of ``number`` runs (never exactly zero)."""
        return max(self._timed(number, self._clock, self._synchronize), 1e-9)

    def _first_run(self) -> None:
        """Once per Timer: create the missing CUDA contexts, then time the first run."""
        if self._first_call is None:
            self._cuda_context = _device.create_contexts(self._indices, self._clock)
            self._first_call = self._run(1)

    def _measurement(self, number: int, times: list[float]) -> Measurement:
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec,
                           first_call=self._first_call, cuda_context=self._cuda_context)

    # ------------------------------------------------------------------ public API
    def timeit(self, number: int = 1000000) -> Measurement:
        """Run ``stmt`` ``number`` times in one timed block, after the first run (timed
        apart) and a warm-up of ``number // 100`` runs (at least 2)."""
        number = _positive_int("timeit", "number", number)
        with self._threads:
            self._first_run()
            self._run(max(number // 100, 2))
            return self._measurement(number, [self._run(number)])

    def blocked_autorange(self, callback: Callable[[int, float], None] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Time blocks of runs until ``min_run_time`` seconds were measured.

        The block size grows tenfold from 1 until the clock's and the GPU waits' own cost
        is under 0.01% of a block (and a block lasts ``min_run_time / 1000``), or a block
        alone lasts ``min_run_time``. Those trial blocks are the warm-up.
        ``callback(number, seconds)`` is called after each measured block.
        """
        min_run_time = _positive_float("blocked_autorange", "min_run_time", min_run_time)
        with self._threads:
            self._first_run()
            number = self._block_size(min_run_time)
            times = self._loop(number, min_run_time, None, callback, lambda times: True)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], None] | None = None
                           ) -> Measurement:
        """Like ``blocked_autorange``, but keep timing blocks until there are more than
        three, ``min_run_time`` seconds were measured and the IQR is under ``threshold``
        times the median, or ``max_run_time`` seconds were measured."""
        threshold = _positive_float("adaptive_autorange", "threshold", threshold)
        min_run_time = _positive_float("adaptive_autorange", "min_run_time", min_run_time)
        max_run_time = _positive_float("adaptive_autorange", "max_run_time", max_run_time)

        def steady(times: list[float]) -> bool:
            return len(times) > 3 and \
                Measurement(number, times, self._task_spec).meets_confidence(threshold)

        with self._threads:
            self._first_run()
            number = self._block_size(0.05)
            times = self._loop(number, min_run_time, max_run_time, callback, steady)
        return self._measurement(number, times)

    def repeat(self, repeat: int = -1, number: int = -1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    # ------------------------------------------------------------------ helpers
    def _block_size(self, min_run_time: float) -> int:
        overheads = sorted(self._run(0) for _ in range(5))
        overhead = overheads[2]
        number = 1
        while True:
            seconds = self._run(number)
            if overhead / seconds <= 1e-4 and seconds >= min_run_time / 1000:
                return number
            if seconds > min_run_time or number * 10 > _INT_MAX:
                return number
            number *= 10

    def _loop(self, number: int, min_run_time: float, max_run_time: float | None,
              callback, can_stop: Callable[[list[float]], bool]) -> list[float]:
        times: list[float] = []
        total = 0.0
        while True:
            seconds = self._run(number)
            times.append(seconds)
            total += seconds
            if callback is not None:
                callback(number, seconds)
            if total >= min_run_time and can_stop(times):
                return times
            if max_run_time is not None and total > max_run_time:
                return times


def _tidy(code: str) -> str:
    code = textwrap.dedent(code)
    code = code.removeprefix("\n")
    return code.rstrip() or "pass"


def _positive_int(method: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"Timer.{method}: {name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"Timer.{method}: {name} must be at least 1, got {value}")
    return value


def _positive_float(method: str, name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"Timer.{method}: {name} must be a number of seconds, got "
                        f"{type(value).__name__}")
    if not value > 0:
        raise ValueError(f"Timer.{method}: {name} must be positive, got {value}")
    return float(value)


class _ThreadLimit:
    """A context that holds NumPy's BLAS (and OpenMP) at ``num_threads`` threads through
    threadpoolctl, restoring them after; None leaves them alone."""

    def __init__(self, num_threads: int | None):
        self._threadpoolctl = None
        self._limits = None
        if num_threads is None:
            self.count = _blas_threads()
            return
        if isinstance(num_threads, bool) or not isinstance(num_threads, int):
            raise TypeError(f"Timer: num_threads must be an int or None, got "
                            f"{type(num_threads).__name__}")
        if num_threads < 1:
            raise ValueError(f"Timer: num_threads must be at least 1, got {num_threads}")
        try:
            import threadpoolctl
        except ImportError:
            raise ImportError(
                f"Timer(num_threads={num_threads}) sets NumPy's BLAS thread count through "
                "threadpoolctl, which is not installed: pip install threadpoolctl (or "
                "pip install 'ember[benchmark]'), or pass num_threads=None to keep BLAS's "
                "own thread count") from None
        self._threadpoolctl = threadpoolctl
        self.count = num_threads

    def __enter__(self):
        if self._threadpoolctl is not None:
            self._limits = self._threadpoolctl.threadpool_limits(limits=self.count)
        return self

    def __exit__(self, *exc_info):
        if self._limits is not None:
            self._limits.restore_original_limits()
            self._limits = None
        return False


def _blas_threads() -> int | None:
    """BLAS's thread count as it stands, or None when threadpoolctl can't be asked."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    counts = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    return max(counts) if counts else None
