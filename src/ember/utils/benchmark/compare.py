"""``Compare``: many Measurements as one table per label, in PyTorch's layout.

Rows are sub-labels (grouped by thread count, then env), columns are descriptions, and
each cell is a median, all in the unit that suits the table's fastest entry.
"""
from __future__ import annotations

import enum
import math

from .measurement import Measurement, select_unit, trim_sigfig, unit_to_english

__all__ = ["Colorize", "Compare"]

_BEST = "\033[92m"
_GOOD = "\033[34m"
_BAD = "\033[2m\033[91m"
_VERY_BAD = "\033[31m"
_BOLD = "\033[1m"
_END = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


class Compare:
    """A table of Measurements: ``Compare(results).print()``.

    Replicates (the same TaskSpec measured more than once) are merged first.

    >>> import ember
    >>> from ember.utils.benchmark import Compare, Timer
    >>> results = [Timer("x + x", globals={"x": ember.ones(n)}, label="add",
    ...                  sub_label=f"n={n}", description="cpu").timeit(10)
    ...            for n in (10, 1000)]
    >>> table = str(Compare(results))
    >>> table.splitlines()[0].startswith("[") and "n=1000" in table
    True
    """

    def __init__(self, results: list[Measurement]):
        self._results: list[Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def extend_results(self, results) -> None:
        """Add more Measurements to the table."""
        results = list(results)
        for result in results:
            if not isinstance(result, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got "
                                 f"{type(result)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Print only the digits each column's measurements support."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Color each cell by how it compares with the best in its column (or its row,
        with ``rowwise=True``): green within 1%, blue within 10%, dim red at 2x or more,
        red at 5x or more."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Mark cells whose IQR is a large share of their median with ``(! XX%)``."""
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def __str__(self) -> str:
        merged = Measurement.merge(self._results)
        by_label: dict[str | None, list[Measurement]] = {}
        for result in merged:
            by_label.setdefault(result.label, []).append(result)
        return "\n".join(_Table(group, self._colorize, self._trim_significant_figures,
                                self._highlight_warnings).render()
                         for group in by_label.values())


def _threads_key(num_threads: int | None) -> int:
    return -1 if num_threads is None else num_threads


class _Table:
    """One label's table: lays out the cells, then renders them as text."""

    def __init__(self, results: list[Measurement], colorize: Colorize, trim: bool,
                 highlight: bool):
        self.results, self.colorize, self.trim, self.highlight = results, colorize, trim, highlight
        self.label = results[0].label
        self.unit, self.scale = select_unit(min(r.median for r in results))
        rows = list(dict.fromkeys((r.num_threads, r.env, r.as_row_name) for r in results))
        # Thread counts in ascending order; within one, rows keep the order first seen.
        rows.sort(key=lambda key: (_threads_key(key[0]), key[1]))
        self.row_keys = rows
        self.column_keys = list(dict.fromkeys(r.description for r in results))
        self.cells: list[list[Measurement | None]] = [[None] * len(self.column_keys)
                                                      for _ in rows]
        row_of = {key: i for i, key in enumerate(rows)}
        column_of = {key: j for j, key in enumerate(self.column_keys)}
        for r in results:
            self.cells[row_of[(r.num_threads, r.env, r.as_row_name)]][column_of[r.description]] = r
        # Rows with one thread count form a group: column colors compare within a group.
        self.groups = []
        for i, key in enumerate(rows):
            if i == 0 or key[0] != rows[i - 1][0]:
                self.groups.append([])
            self.groups[-1].append(i)
        self.formats = [self._column_format(j) for j in range(len(self.column_keys))]

    # ------------------------------------------------------------------ numbers
    def _column_format(self, j: int) -> tuple[str, bool]:
        column = [row[j] for row in self.cells if row[j] is not None]
        warn = self.highlight and any(m.has_warnings for m in column)
        leading = [math.ceil(math.log10(m.median / self.scale)) for m in column]
        integer_digits = max(leading)
        if self.trim:
            decimals = min(max(m.significant_figures - d, 0) for m, d in zip(column, leading))
        else:
            decimals = 1
        width = integer_digits + decimals + (1 if decimals else 0)
        return f"{{:>{width}.{decimals}f}}", warn

    def _cell_text(self, j: int, m: Measurement | None) -> str:
        template, warn = self.formats[j]
        if m is None:  # as wide as a filled cell
            return " " * (len(template.format(1.0)) + (7 if warn else 0))
        value = m.median / self.scale
        if self.trim:
            value = trim_sigfig(value, m.significant_figures)
        text = template.format(value)
        if warn:
            spread = f" (! {m.iqr / m.median * 100:.0f}%)" if m.has_warnings else ""
            text += f"{spread:>7}"
        return text

    def _best(self, i: int, j: int) -> float | None:
        if self.colorize is Colorize.ROWWISE:
            return min(m.median for m in self.cells[i] if m is not None)
        group = next(g for g in self.groups if i in g)
        values = [self.cells[k][j].median for k in group if self.cells[k][j] is not None]
        return min(values) if values else None

    # ------------------------------------------------------------------ text
    def render(self) -> str:
        render_env = len({r.env for r in self.results}) > 1
        env_width = max(len(r.env) for r in self.results) if render_env else 0
        header = [""] + ["" if key is None else str(key) for key in self.column_keys]
        body = []
        previous_env = None
        for i, (threads, env, name) in enumerate(self.row_keys):
            new_group = i == 0 or threads != self.row_keys[i - 1][0]
            if new_group:
                previous_env = None
            env_text = f"({env})" if render_env and env != previous_env else ""
            previous_env = env
            body.append(["  " + env_text.ljust(env_width + 4) + name]
                        + [self._cell_text(j, m) for j, m in enumerate(self.cells[i])])
        widths = [max(len(row[k]) for row in [header] + body) for k in range(len(header))]
        lines = ["  |  ".join(text.center(width) for text, width in zip(header, widths))]
        overall = len(lines[0])
        for i, row in enumerate(body):
            threads = self.row_keys[i][0]
            if i == 0 or threads != self.row_keys[i - 1][0]:
                count = "BLAS default" if threads is None else threads
                lines.append(f"{count} threads: ".ljust(overall, "-"))
            cells = [row[0].ljust(widths[0])]
            for j, (text, width) in enumerate(zip(row[1:], widths[1:])):
                text = text.center(width)
                m = self.cells[i][j]
                if self.colorize is not Colorize.NONE and m is not None:
                    best = self._best(i, j)
                    if best is not None:
                        text = _paint(text, m.median, best)
                cells.append(text)
            lines.append("  |  ".join(cells))
        title = f" {self.label or ''} ".center(overall - 2, "-")
        footer = f"\nTimes are in {unit_to_english(self.unit)}s ({self.unit}).\n"
        if self.highlight and any(r.has_warnings for r in self.results):
            footer += ("(! XX%) Measurement has high variance, where XX is the IQR / median "
                       "* 100.\n")
        return f"[{title}]\n" + "\n".join(lines) + "\n" + footer


def _paint(text: str, value: float, best: float) -> str:
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + text + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + text + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + text + _END * 2
    if value >= best * 2:
        return _BAD + text + _END * 2
    return text

