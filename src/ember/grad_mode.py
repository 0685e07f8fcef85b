"""Switching graph recording off and on: no_grad, enable_grad, set_grad_enabled,
inference_mode. Each works as a context manager and as a decorator. The switch is
per thread, as in PyTorch."""
from __future__ import annotations

import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


class _State(threading.local):
    enabled = True
    inference = False


_state = _State()


def is_grad_enabled() -> bool:
    """Whether ops record the graph right now."""
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


class _GradModeContext:
    """Base: subclasses set ``_mode``; a fresh instance serves each use as decorator."""

    _mode = True

    def __enter__(self):
        self._previous = (_state.enabled, _state.inference)
        _state.enabled = self._mode
        return None

    def __exit__(self, *exc_info):
        _state.enabled, _state.inference = self._previous
        return False

    def clone(self):
        return self.__class__()

    def __call__(self, function):
        if inspect.isgeneratorfunction(function):
            @functools.wraps(function)
            def generator_wrapper(*args, **kwargs):
                generator = function(*args, **kwargs)
                with self.clone():
                    response = generator.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        generator.close()
                        raise
                    with self.clone():
                        try:
                            response = generator.send(request)
                        except StopIteration as stop:
                            return stop.value
            return generator_wrapper

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with self.clone():
                return function(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):
    """Ops inside record no graph: results have ``requires_grad=False``.

    >>> x = ember.ones(2, requires_grad=True)
    >>> with ember.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    _mode = False

    def __init__(self, orig_func=None):
        # ``@no_grad`` without parentheses is accepted too.
        self._wrapped = orig_func

    def __new__(cls, orig_func=None):
        instance = super().__new__(cls)
        if callable(orig_func):
            instance.__init__()
            return instance(orig_func)
        return instance


class enable_grad(_GradModeContext):
    """Turn graph recording back on inside a ``no_grad`` block."""

    _mode = True


class set_grad_enabled(_GradModeContext):
    """``set_grad_enabled(False)`` is ``no_grad()``; works as a plain call too."""

    def __init__(self, mode: bool):
        self._mode = bool(mode)
        self._previous = (_state.enabled, _state.inference)
        _state.enabled = self._mode  # a plain call takes effect at once, as in PyTorch

    def __enter__(self):
        return None

    def clone(self):
        return set_grad_enabled(self._mode)

    def __call__(self, function):
        _state.enabled, _state.inference = self._previous
        return super().__call__(function)


class inference_mode(_GradModeContext):
    """Like ``no_grad``: ember keeps no extra bookkeeping that inference mode could drop."""

    def __init__(self, mode: bool = True):
        self._mode = not mode
        self._inference = bool(mode)

    def __enter__(self):
        super().__enter__()
        _state.inference = self._inference

    def clone(self):
        return inference_mode(self._inference)
