"""Spotting graphs that user code keeps alive across training steps.

``total_loss += loss`` (or ``losses.append(loss)``) looks harmless, but each ``loss`` still
holds its graph, and the sum chains every step's graph into one that is never freed:
memory grows with every step. The engine frees saved values after ``backward()``, yet the
nodes themselves live on as long as a tensor refers to them.

The check is cheap. Each ``backward()`` notes a weak reference to its root node (the
``grad_fn`` of the tensor it started from). At each ``optimizer.step()`` the optimizer
counts the roots of backward calls made before its previous step that are still alive. In
an ordinary loop that number is 0 (the previous ``loss`` was replaced by the new one); when
user code keeps the graphs it grows by one every step. At ``THRESHOLD`` a warning, once per
process, names the fix: keep ``loss.item()``, a Python number, instead of the tensor.

    total_loss = 0.0
    for x, y in loader:
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total_loss += loss.item()      # not: total_loss += loss
"""
from __future__ import annotations

import threading
import warnings
import weakref

__all__ = ["THRESHOLD"]

# Roots of earlier steps still alive at an optimizer step before it warns.
THRESHOLD = 3
_MAX_TRACKED = 64  # roots remembered at most (dead ones are dropped first)

_lock = threading.Lock()
_roots: list[tuple[int, weakref.ref]] = []  # (backward call number, weakref to root node)
_calls = 0
_warned = False


def note_backward(tensors) -> None:
    """Called by ``ember.autograd.backward``: remember each root node, weakly."""
    global _calls, _roots
    if _warned:
        return
    with _lock:
        for tensor in tensors:
            node = getattr(tensor, "grad_fn", None)
            if node is None:
                continue
            _calls += 1
            _roots.append((_calls, weakref.ref(node)))
        if len(_roots) > _MAX_TRACKED:
            _roots = [entry for entry in _roots if entry[1]() is not None][-_MAX_TRACKED:]


def check_step(optimizer, stacklevel: int) -> None:
    """Called by ``Optimizer.step``: warn once when graphs of earlier steps pile up."""
    global _roots, _warned
    if _warned:
        return
    with _lock:
        previous = optimizer.__dict__.get("_graph_watch_mark")
        optimizer._graph_watch_mark = _calls
        _roots = [entry for entry in _roots if entry[1]() is not None]
        if previous is None:
            return
        stale = {id(ref()) for number, ref in _roots if number <= previous}
        stale.discard(id(None))
        if len(stale) < THRESHOLD:
            return
        _warned = True
        _roots = []
    warnings.warn(
        f"the graphs of {len(stale)} earlier training steps are still alive at this "
        "optimizer.step(): something keeps their losses, typically `total_loss += loss` or "
        "`losses.append(loss)`, which chains every step's graph into one that is never freed, "
        "so memory grows each step. Keep the number instead: `total_loss += loss.item()` (or "
        "store `loss.detach()`).", UserWarning, stacklevel=stacklevel + 1)


def _reset() -> None:
    """Forget everything and warn again (for tests)."""
    global _roots, _calls, _warned
    with _lock:
        _roots, _calls, _warned = [], 0, False
