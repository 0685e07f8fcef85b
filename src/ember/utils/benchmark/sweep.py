"""The CPU-against-GPU matrix-product sweep behind ``python -m ember.utils.benchmark matmul``.

Each size is timed on every device with the honest Timer: the GPU is waited for around
each timed block, the first product and the CUDA context are timed apart, and (with
``include_transfer``) a second GPU column counts the copies of the operands to the GPU
and of the result back, which is what a CPU program that hands one product to the GPU
pays.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from . import _device
from .compare import Compare
from .measurement import Measurement, select_unit

__all__ = ["DEFAULT_SIZES", "CPU_ONLY_SIZES", "MatmulSweep", "matmul_sweep"]

DEFAULT_SIZES = (64, 128, 256, 512, 1024, 2048, 4096)
CPU_ONLY_SIZES = DEFAULT_SIZES[:-1]  # without a GPU, 4096 alone would take most of the run
_COPIES = " + copies"


@dataclasses.dataclass
class MatmulSweep:
    """The sweep's Measurements and what it learned; ``report()`` is the printed text.

    ``columns`` are 'cpu', then each GPU ('cuda:0'), then each GPU with copies
    ('cuda:0 + copies') when they were asked for.
    """

    sizes: list[int]
    dtype_name: str
    columns: list[str]
    results: list[Measurement]
    num_threads: int | None
    gpu_names: dict[str, str] = dataclasses.field(default_factory=dict)
    cuda_contexts: dict[str, float | None] = dataclasses.field(default_factory=dict)
    no_gpu_reason: str | None = None
    include_transfer: bool = False

    def measurement(self, column: str, size: int) -> Measurement:
        for m in self.results:
            if m.description == column and m.sub_label == _size_label(size):
                return m
        raise KeyError(f"no measurement of {column} at {size} x {size}")

    def speedup(self, column: str, size: int) -> float:
        """How many times faster ``column`` is than the CPU at ``size`` (medians)."""
        return self.measurement("cpu", size).median / self.measurement(column, size).median

    def crossover(self, column: str) -> int | None:
        """The smallest size from which ``column`` beats the CPU at every larger size
        tried, or None when it doesn't win at the largest."""
        if "cpu" not in self.columns:
            raise ValueError("the sweep did not time the CPU, so nothing beats it")
        winning = None
        for size in reversed(self.sizes):
            if self.speedup(column, size) <= 1.0:
                break
            winning = size
        return winning

    def compare(self) -> Compare:
        """The medians as PyTorch's ``Compare`` table (one unit for the whole table)."""
        return Compare(self.results)

    def report(self) -> str:
        """The sweep as text: medians with rates, speedups, first calls, the verdict."""
        lines = [self._heading(), ""]
        header = ["size"] + [text for c in self.columns for text in (c, "GFLOP/s")]
        lines += _grid("Median time per product, and its rate (2 n^3 flops / median):",
                       header, [[_size_label(n), *(text for c in self.columns
                                                   for text in self._time_cells(c, n))]
                                for n in self.sizes])
        if any(self.measurement(c, n).has_warnings for c in self.columns for n in self.sizes):
            lines.append("  ! the IQR is over 10% of the median: the machine was busy")
        gpus = [c for c in self.columns if c != "cpu"]
        if gpus and "cpu" in self.columns:
            lines += [""] + _grid("Speedup over the CPU (CPU median / GPU median):",
                                  ["size", *gpus],
                                  [[_size_label(n), *(f"{self.speedup(c, n):.2f}x"
                                                      for c in gpus)] for n in self.sizes])
        lines += [""] + _grid("First call of each product (kept out of the medians above):",
                              ["size", *self.columns],
                              [[_size_label(n), *(_seconds(self.measurement(c, n).first_call)
                                                  for c in self.columns)]
                               for n in self.sizes])
        for column, seconds in self.cuda_contexts.items():
            if seconds is None:
                lines.append(f"CUDA context on {column}: it existed before the sweep")
            else:
                lines.append(f"CUDA context creation on {column}: {_seconds(seconds)} "
                             "(once per process, kept out of every time above)")
        lines += ["", *self._verdicts()]
        return "\n".join(lines).rstrip() + "\n"

    def _time_cells(self, column: str, size: int) -> tuple[str, str]:
        m = self.measurement(column, size)
        mark = " !" if m.has_warnings else "  "
        return f"{_seconds(m.median)}{mark}", f"{2 * size ** 3 / m.median / 1e9:,.1f}"

    # ------------------------------------------------------------------ the text
    def _heading(self) -> str:
        threads = "BLAS's default threads" if self.num_threads is None else \
            f"{self.num_threads} BLAS thread{'s' if self.num_threads > 1 else ''}"
        text = f"Matrix products n x n @ n x n in {self.dtype_name}; CPU: {threads}"
        for column, name in self.gpu_names.items():
            text += f"; {column}: {name}"
        text += "."
        if self.no_gpu_reason is not None:
            text += f"\nNo GPU: {self.no_gpu_reason}. Timing the CPU alone."
            if self.include_transfer:
                text += " (include_transfer has no copies to count without a GPU.)"
        return text

    def _verdicts(self) -> list[str]:
        gpus = [c for c in self.columns if c != "cpu"]
        if not gpus:
            return ["Only the CPU was timed, so there is no CPU-GPU crossover to report."]
        if "cpu" not in self.columns:
            return ["The CPU was not timed, so there is no CPU-GPU crossover to report."]
        verdicts = []
        largest = self.sizes[-1]
        for column in gpus:
            start = self.crossover(column)
            if start is None:
                verdicts.append(f"{column} does not beat the CPU at {_size_label(largest)}: "
                                "the CPU wins up to the largest size tried.")
            elif start == self.sizes[0]:
                verdicts.append(f"{column} beats the CPU at every size tried, from "
                                f"{_size_label(start)} ({self.speedup(column, largest):.1f}x "
                                f"at {_size_label(largest)}).")
            else:
                verdicts.append(f"{column} starts to beat the CPU at {_size_label(start)} "
                                f"({self.speedup(column, largest):.1f}x at "
                                f"{_size_label(largest)}).")
        return verdicts


def matmul_sweep(sizes=None, devices=None, dtype=None, include_transfer: bool = False,
                 min_run_time: float = 0.2, num_threads: int | None = None,
                 progress: Callable[[str], None] | None = None) -> MatmulSweep:
    """Time ``a @ b`` for square ``a`` and ``b`` of each size on each device.

    Args:
        sizes: the n of each n x n product (default 64, 128, ..., 4096; up to 2048 when
            only the CPU is timed).
        devices: the devices to time ('cpu', 'cuda:0', ...); default the CPU and every
            GPU CuPy sees. Without a GPU the sweep times the CPU alone and says why.
        dtype: ember.float32 (default) or ember.float64.
        include_transfer: also time each GPU with the copies of both operands to it and
            of the result back included (the 'cuda:0 + copies' column).
        min_run_time: seconds of measurement per size and device.
        num_threads: BLAS threads on the CPU; None keeps BLAS's own count.
        progress: called with a line of text before each timing (e.g. ``print``).

    >>> from ember.utils.benchmark import matmul_sweep
    >>> sweep = matmul_sweep(sizes=[16, 32], devices=["cpu"], min_run_time=0.01)
    >>> sweep.columns, sweep.measurement("cpu", 32).median > 0
    (['cpu'], True)
    """
    import ember

    dtype = ember.float32 if dtype is None else dtype
    if dtype not in (ember.float32, ember.float64):
        raise TypeError(f"matmul_sweep: dtype must be ember.float32 or ember.float64, got "
                        f"{dtype}")
    no_gpu_reason = None
    if devices is None:
        devices = ["cpu"] + [f"cuda:{i}" for i in range(ember.cuda.device_count())]
        if len(devices) == 1:
            no_gpu_reason = _why_no_gpu()
    targets = _check_devices(devices)
    gpus = [d for d in targets if d.type == "cuda"]
    sizes = _check_sizes(sizes, DEFAULT_SIZES if gpus else CPU_ONLY_SIZES)
    columns = [str(d) for d in targets]
    if include_transfer:
        columns += [f"{d}{_COPIES}" for d in gpus]
    say = progress or (lambda text: None)

    sweep = MatmulSweep(sizes=sizes, dtype_name=str(dtype).replace("ember.", ""),
                        columns=columns, results=[], num_threads=num_threads,
                        no_gpu_reason=no_gpu_reason, include_transfer=include_transfer)
    for gpu in gpus:
        sweep.gpu_names[str(gpu)] = ember.cuda.get_device_name(gpu.index)
        sweep.cuda_contexts[str(gpu)] = _device.create_contexts((gpu.index,))
    label = f"matmul, {sweep.dtype_name}: median time per product"
    generator = ember.Generator().manual_seed(0)  # leaves the user's random stream alone
    for size in sizes:
        a, b = (ember.randn(size, size, dtype=dtype, generator=generator) for _ in range(2))
        jobs = []
        for target in targets:
            operands = {"a": a.to(target), "b": b.to(target)}
            jobs.append((str(target), "a @ b", operands, target))
        if include_transfer:
            for gpu in gpus:
                jobs.append((f"{gpu}{_COPIES}", "(a.to(device) @ b.to(device)).cpu()",
                             {"a": a, "b": b, "device": gpu}, gpu))
        for column, stmt, names, target in jobs:
            say(f"timing {_size_label(size)} on {column}")
            timer = _sweep_timer(stmt, names, target, label, size, column, num_threads)
            sweep.results.append(timer.blocked_autorange(min_run_time=min_run_time))
        del a, b, jobs
    sweep.num_threads = sweep.results[0].num_threads if sweep.results else num_threads
    return sweep


def _sweep_timer(stmt, names, target, label, size, column, num_threads):
    from .timer import Timer

    return Timer(stmt, globals=names, label=label, sub_label=_size_label(size),
                 description=column, num_threads=num_threads, device=target)


def _seconds(value: float) -> str:
    """Three significant digits in the unit that suits: 10.2 us, 431 ms, 1.78 s."""
    unit, scale = select_unit(value)
    scaled = value / scale
    decimals = max(0, 2 - math.floor(math.log10(scaled))) if scaled > 0 else 0
    return f"{scaled:.{decimals}f} {unit}"


def _grid(title: str, header: list[str], rows: list[list[str]]) -> list[str]:
    """A titled plain-text table, columns right-aligned."""
    widths = [max(len(row[k]) for row in [header] + rows) for k in range(len(header))]
    lines = [title]
    for row in [header] + rows:
        lines.append("  " + "   ".join(cell.rjust(width)
                                       for cell, width in zip(row, widths)).rstrip())
    return lines


def _size_label(size: int) -> str:
    return f"{size} x {size}"


def _check_sizes(sizes, default) -> list[int]:
    if sizes is None:
        return list(default)
    sizes = list(sizes)
    if not sizes:
        raise ValueError("matmul_sweep: sizes is empty")
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"matmul_sweep: sizes must be positive integers, got {size!r}")
    return sorted(set(sizes))


def _check_devices(devices) -> list:
    import ember

    from ...backend import parse_device

    if isinstance(devices, (str, ember.device)):
        devices = [devices]
    targets = []
    for device in devices:
        try:
            target = parse_device(device)
        except RuntimeError as error:
            raise RuntimeError(f"matmul_sweep cannot time {device}: {error}") from None
        if target not in targets:
            targets.append(target)
    if not targets:
        raise ValueError("matmul_sweep: devices is empty")
    # The CPU first, so the columns read CPU, then GPUs.
    return sorted(targets, key=lambda d: (d.type != "cpu", d.index or 0))


def _why_no_gpu() -> str:
    from ...backend import cuda

    try:
        cuda.cupy()
    except RuntimeError as error:
        return str(error)
    return "CuPy sees no GPU"
