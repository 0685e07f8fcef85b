"""What a Timer measured: ``TaskSpec`` (what was timed) and ``Measurement`` (the times, their
statistics, and the first-call costs that were kept out of them)."""
from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Iterable
from functools import cached_property
from typing import Any

import numpy as np

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # seconds: no clock resolves better than this
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What a Timer runs, and the labels that place its Measurement in a ``Compare`` table.

    ``device`` names what the Timer synchronized around its timed blocks ('cpu' when
    nothing, else e.g. 'cuda:0').
    """

    stmt: str
    setup: str = "pass"
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int | None = 1
    device: str = "cpu"

    @property
    def title(self) -> str:
        """The label (or the statement) and the sub-label, as printed above the times."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub}\n" + textwrap.indent(self.stmt, "  ")

    def setup_str(self) -> str:
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return "setup:\n" + textwrap.indent(self.setup, "  ")
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The title, description and setup, one section a line (multi-line ones padded)."""
        sections = [s for s in (self.title, self.description or "", self.setup_str()) if s]
        return "\n".join(s + "\n" if "\n" in s else s for s in sections)


_TASK_FIELDS = frozenset(field.name for field in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(repr=False)
class Measurement:
    """One or more timings of a statement: ``raw_times[i]`` is the time of one block of
    ``number_per_run`` runs, so ``times`` (per run) are ``raw_times / number_per_run``.

    ``first_call`` is the time of the statement's first run (seconds), which the Timer
    took apart from ``times``: it carries one-off costs such as CuPy compiling a kernel,
    cuBLAS creating its handle or the memory pool's first allocation. ``cuda_context``
    is the time the Timer spent creating the CUDA context, when it had to (None when
    the context already existed or no GPU was involved).

    >>> from ember.utils.benchmark import Measurement, TaskSpec
    >>> m = Measurement(10, [0.010, 0.012, 0.011, 0.013], TaskSpec("x + 1"))
    >>> round(m.median * 1e3, 3), round(m.iqr * 1e3, 3)  # milliseconds per run
    (1.15, 0.15)
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None
    first_call: float | None = None
    cuda_context: float | None = None

    def __post_init__(self) -> None:
        number = self.number_per_run
        if isinstance(number, bool) or not isinstance(number, (int, np.integer)) or number < 1:
            raise ValueError(f"Measurement: number_per_run must be a positive integer, got "
                             f"{number!r}")
        self.raw_times = [float(t) for t in self.raw_times]
        if not self.raw_times:
            raise ValueError("Measurement: raw_times is empty; a measurement needs at least "
                             "one time")
        if any(not math.isfinite(t) or t < 0 for t in self.raw_times):
            raise ValueError(f"Measurement: raw_times must be finite and non-negative, got "
                             f"{self.raw_times}")
        if not isinstance(self.task_spec, TaskSpec):
            raise TypeError(f"Measurement: task_spec must be a TaskSpec, got "
                            f"{type(self.task_spec).__name__}")

    def __getattr__(self, name: str) -> Any:
        # The TaskSpec's fields read as the Measurement's own (m.label, m.num_threads).
        if name in _TASK_FIELDS and "task_spec" in self.__dict__:
            return getattr(self.__dict__["task_spec"], name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    # ------------------------------------------------------------------ statistics
    @property
    def times(self) -> list[float]:
        """Seconds per run, one entry per timed block."""
        return [t / self.number_per_run for t in self.raw_times]

    @cached_property
    def _sorted(self) -> np.ndarray:
        return np.sort(np.asarray(self.times, dtype=np.float64))

    def _quantile(self, q: float) -> float:
        return float(np.quantile(self._sorted, q))  # linear interpolation, as PyTorch's

    @property
    def median(self) -> float:
        return self._quantile(0.5)

    @property
    def mean(self) -> float:
        return float(self._sorted.mean())

    @property
    def iqr(self) -> float:
        """The interquartile range: the 75th minus the 25th percentile of ``times``."""
        return self._quantile(0.75) - self._quantile(0.25)

    @property
    def significant_figures(self) -> int:
        """How many digits of the median the spread of the middle half supports (1 to 4):
        a rough 90% confidence interval of the mean of the interquartile points."""
        n = len(self._sorted)
        middle = self._sorted[n // 4:math.ceil(3 * n / 4)]
        interval = 1.645 * float(middle.std()) / math.sqrt(len(middle))
        interval = max(interval, _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(math.log10(max(self.median, 1e-300) / interval))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """True when the IQR is less than ``threshold`` times the median."""
        median = self.median
        if median == 0:
            return self.iqr == 0
        return self.iqr / median < threshold

    @property
    def has_warnings(self) -> bool:
        return bool(self._warnings)

    @cached_property
    def _warnings(self) -> tuple[str, ...]:
        if self.meets_confidence(_IQR_WARN_THRESHOLD):
            return ()
        reason = ("This suggests significant environmental influence."
                  if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD)
                  else "This could indicate system fluctuation.")
        share = self.iqr / self.median * 100
        warning = (f"  WARNING: Interquartile range is {share:.1f}% of the median "
                   f"measurement.\n           {reason}")
        return (warning,)

    # ------------------------------------------------------------------ naming
    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str:
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    # ------------------------------------------------------------------ printing
    def __repr__(self) -> str:
        n = len(self._sorted)
        unit, scale = select_unit(self.median)
        lines = [object.__repr__(self), self.task_spec.summarize()]
        lines.append(f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}")
        if n >= 4:
            low, high = self._quantile(0.25) / scale, self._quantile(0.75) / scale
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({low:.2f} to {high:.2f})")
        threads = _threads_text(self.task_spec.num_threads)
        where = "" if self.task_spec.device == "cpu" else \
            f", synchronized with {self.task_spec.device}"
        if n > 1:
            lines.append(f"  {n} measurements, {self.number_per_run} runs per measurement, "
                         f"{threads}{where}")
        else:  # PyTorch's spacing, kept so the text matches
            lines.append(f"  1 measurement, {self.number_per_run} runs , {threads}{where}")
        lines.extend(self._warnings)
        lines.extend(self._first_call_lines())
        return "\n".join(lines).strip()

    def _first_call_lines(self) -> list[str]:
        lines = []
        if self.first_call is not None:
            unit, scale = select_unit(self.first_call)
            lines.append(f"  first call: {self.first_call / scale:.2f} {unit} "
                         "(kept out of the times above)")
        if self.cuda_context is not None:
            unit, scale = select_unit(self.cuda_context)
            lines.append(f"  CUDA context creation: {self.cuda_context / scale:.2f} {unit} "
                         "(kept out of the times above)")
        return lines

    # ------------------------------------------------------------------ replicates
    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """One Measurement per distinct TaskSpec, pooling the per-run times of its
        replicates (``number_per_run`` becomes 1; metadata is dropped, the first
        replicate's first-call costs are kept)."""
        groups: dict[TaskSpec, list[Measurement]] = {}
        for measurement in measurements:
            groups.setdefault(measurement.task_spec, []).append(measurement)
        merged = []
        for spec, group in groups.items():
            times = [t for m in group for t in m.times]
            first = next((m.first_call for m in group if m.first_call is not None), None)
            context = next((m.cuda_context for m in group if m.cuda_context is not None),
                           None)
            merged.append(Measurement(1, times, spec, None, first, context))
        return merged


def _threads_text(num_threads: int | None) -> str:
    if num_threads is None:
        return "BLAS's default threads"
    return f"{num_threads} thread{'s' if num_threads > 1 else ''}"


_UNITS = {-3: ("ns", 1e-9), -2: ("us", 1e-6), -1: ("ms", 1e-3)}


def select_unit(t: float) -> tuple[str, float]:
    """The unit that shows ``t`` seconds with one to three integer digits, and its scale:
    ``select_unit(0.0042) == ('ms', 1e-3)``."""
    if not t > 0:
        return "ns", 1e-9
    group = math.floor(math.log10(t)) // 3
    if group < -3:
        return "ns", 1e-9
    return _UNITS.get(group, ("s", 1.0))


def unit_to_english(unit: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[unit]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures: ``trim_sigfig(3.14159, 2) == 3.1``."""
    if int(n) != n or n < 1:
        raise ValueError(f"trim_sigfig: n must be a positive integer, got {n!r}")
    if x == 0 or not math.isfinite(x):
        return float(x)
    magnitude = math.ceil(math.log10(abs(x)))
    scale = 10.0 ** (magnitude - int(n))
    return float(round(x / scale) * scale)


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    """The distinct elements in the order first seen."""
    return list(dict.fromkeys(elements))
