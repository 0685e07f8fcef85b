"""detect_anomaly: find where a NaN or inf gradient comes from.

In anomaly mode each node remembers the stack where its forward ran (a cost paid only
then), and a backward that produces NaN or inf raises, naming the node and showing that
stack."""
from __future__ import annotations

import threading
import traceback

from .. import backend

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"]


class _Flag(threading.local):
    enabled = False
    check_nan = True


_flag = _Flag()


def is_anomaly_enabled() -> bool:
    return _flag.enabled


class detect_anomaly:
    """Context manager (and decorator): record forward stacks and check every gradient."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan

    def __enter__(self):
        self._previous = (_flag.enabled, _flag.check_nan)
        _flag.enabled, _flag.check_nan = True, self.check_nan

    def __exit__(self, *exc_info):
        _flag.enabled, _flag.check_nan = self._previous
        return False

    def __call__(self, function):
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return function(*args, **kwargs)
        return wrapper


class set_detect_anomaly(detect_anomaly):
    """``set_detect_anomaly(True)`` switches anomaly mode on at once (and back on exit)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._previous = (_flag.enabled, _flag.check_nan)
        _flag.enabled, _flag.check_nan = bool(mode), check_nan

    def __enter__(self):
        return None


def record_stack(node) -> None:
    node._forward_stack = "".join(traceback.format_stack()[:-3])


def run_checked(node, grads):
    results = node._run_backward(grads)
    if _flag.check_nan:
        for i, g in enumerate(results):
            if g is not None and g._data.dtype.kind in "fV" and \
                    not bool(backend.xp_of(g._data).isfinite(g._data).all()):
                stack = getattr(node, "_forward_stack", "(no stack recorded: the forward ran "
                                "outside detect_anomaly)")
                raise RuntimeError(
                    f"Function '{node.name()}' returned nan or inf values in its {i}th output."
                    f"\nThe forward call that created this node:\n{stack}")
    return results
