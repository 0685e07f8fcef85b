"""The closing lines of a test run: how many tests were skipped and why, grouped by reason,
and the known bugs marked xfail, so that a skip is never mistaken for a pass. Loaded by
tests/conftest.py."""
from __future__ import annotations

import re

_MISSING_MODULE = re.compile(r"could not import '([\w.]+)'")
_ORACLE_HINT = "run `make test-oracle` (installs torch==2.13.0 into .venv)"


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    message = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else \
        str(longrepr)
    return message.removeprefix("Skipped: ").strip()


def _skip_group(reason: str) -> tuple[str, str]:
    """(what the tests are, why they skipped) for one skip reason."""
    missing = _MISSING_MODULE.search(reason)
    if missing and missing.group(1).split(".")[0] == "torch" or \
            reason == "PyTorch is not installed":
        return "PyTorch oracle test", "torch is not installed — " + _ORACLE_HINT
    if missing:
        return "test", f"{missing.group(1)} is not installed"
    return "test", reason


def _counted(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def pytest_terminal_summary(terminalreporter):
    groups: dict[tuple, list[int]] = {}  # (noun, why) -> [tests, test files skipped whole]
    for report in terminalreporter.stats.get("skipped", []):
        counts = groups.setdefault(_skip_group(_skip_reason(report)), [0, 0])
        counts[1 if getattr(report, "when", None) == "collect" else 0] += 1
    xfails: dict[str, int] = {}
    for report in terminalreporter.stats.get("xfailed", []):
        reason = (getattr(report, "wasxfail", "") or "no reason given").removeprefix("reason: ")
        xfails[reason] = xfails.get(reason, 0) + 1
    if not groups and not xfails:
        return
    terminalreporter.section("skipped tests and known bugs, by reason")
    for (noun, why), (tests, files) in sorted(groups.items(), key=lambda item: -sum(item[1])):
        parts = ([_counted(tests, noun)] if tests else []) + \
                ([_counted(files, noun.replace("test", "test file"))] if files else [])
        terminalreporter.write_line(f"{' and '.join(parts)} skipped: {why}")
    for reason, count in sorted(xfails.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(f"{_counted(count, 'known bug')} marked xfail: {reason}")
