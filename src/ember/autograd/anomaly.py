"""detect_anomaly: find where a NaN or inf gradient comes from.

In anomaly mode each node remembers the stack where its forward ran (a cost paid only
then), and a backward that produces NaN or inf raises, naming the node and showing that
stack."""
from __future__ import annotations

import functools
import os
import sys
import threading
import traceback
import warnings

from .. import backend, detours

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"]


class _Flag(threading.local):
    enabled = False
    check_nan = True


_flag = _Flag()


def _set(enabled: bool, check_nan: bool) -> None:
    """Switch this thread's anomaly mode; the fast lane steps aside while it is on in any
    thread (``ember.detours``)."""
    was, _flag.enabled, _flag.check_nan = _flag.enabled, enabled, check_nan
    if enabled and not was:
        detours.enter()
    elif was and not enabled:
        detours.leave()


def is_anomaly_enabled() -> bool:
    return _flag.enabled


class detect_anomaly:
    """Context manager (and decorator): record forward stacks and check every gradient.

    A NaN or inf gradient raises RuntimeError naming the node, the line that created it and,
    for the ``where`` masked-branch trap, the fix:

    >>> import ember
    >>> x = ember.tensor([4.0, 0.0], requires_grad=True)
    >>> with ember.autograd.detect_anomaly():
    ...     y = ember.where(x > 0, ember.sqrt(x), ember.zeros(2))
    ...     try:
    ...         y.sum().backward()
    ...     except RuntimeError as error:
    ...         print(str(error).splitlines()[0])
    Function 'SqrtBackward0' returned nan or inf values in its 0th output.
    """

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self._previous = (_flag.enabled, _flag.check_nan)
        _set(True, self.check_nan)

    def __exit__(self, *exc_info):
        _set(*self._previous)
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with self.clone():
                return function(*args, **kwargs)
        return wrapper


    def clone(self):
        with warnings.catch_warnings():  # warned once, when the decorator was made
            warnings.simplefilter("ignore")
            return detect_anomaly(self.check_nan)


class set_detect_anomaly(detect_anomaly):
    """``set_detect_anomaly(True)`` switches anomaly mode on at once (and back on exit)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.check_nan = check_nan
        self._previous = (_flag.enabled, _flag.check_nan)
        _set(bool(mode), check_nan)

    def __enter__(self):
        return None


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def record_stack(node) -> None:
    """Remember where the forward that made ``node`` ran: the caller's frames, not ember's."""
    frames = traceback.StackSummary.extract(traceback.walk_stack(sys._getframe(1)),
                                            lookup_lines=False)  # source read on format
    mine = [f for f in reversed(frames) if not f.filename.startswith(_PACKAGE)]
    node._forward_stack = "".join(traceback.format_list(mine))


def _array(value):
    """The array behind a gradient: the engine passes Tensors or raw arrays."""
    return getattr(value, "_data", value)


def _stack_of(node) -> str:
    return getattr(node, "_forward_stack", "(no stack recorded: the forward ran outside "
                   "detect_anomaly)\n")


def run_checked(node, grads):
    """Run ``node``'s backward and raise if any gradient it returns holds NaN or inf."""
    try:
        results = node._run_backward(grads)
    except Exception:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                      f"the error:\n{_stack_of(node)}", UserWarning, stacklevel=2)
        raise
    if _flag.check_nan:
        for i, g in enumerate(results):
            if g is None:
                continue
            data = _array(g)
            xp = backend.xp_of(data)
            if data.dtype.kind not in "fcV" or bool(xp.isfinite(data).all()):
                continue
            stack = _stack_of(node)
            raise RuntimeError(
                f"Function '{node.name()}' returned nan or inf values in its {i}th output."
                f"{_masked_branch(node, grads, data, xp)}"
                f"\nThe forward call that created this node:\n{stack}")
    return results


def _masked_branch(node, grads, bad, xp) -> str:
    """Explain the where() trap when a zero incoming gradient came out as NaN/inf."""
    for g in grads:
        if g is None:
            continue
        incoming = _array(g)
        if incoming.shape != bad.shape or not bool(xp.isfinite(incoming).all()):
            continue
        broken = ~xp.isfinite(bad)
        if bool((incoming[broken] == 0).all()):
            return (
                f"\nThe gradient flowing into {node.name()} is 0 wherever its result is NaN or "
                "inf, so the op's own derivative is infinite there (0 * inf = nan). This is "
                "the masked-branch trap: where(mask, f(x), other) still backpropagates "
                "through f(x) at the positions the mask drops, and f is not finite there. "
                "Fix: compute the unsafe branch on a safe input, e.g. "
                "x_safe = where(mask, x, 1); y = where(mask, f(x_safe), other).")
    return ""


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Switch anomaly mode on or off in this thread, outside any ``with`` block."""
    _set(bool(enabled), bool(check_nan))


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode checks gradients for NaN (``detect_anomaly(check_nan=...)``)."""
    return _flag.check_nan
