"""ember.autograd: the engine's public face: backward, grad, Function, gradcheck, grad modes."""
from __future__ import annotations

from .. import grad_mode
from ..grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from ..tensor import Tensor
from . import anomaly, anomaly_mode, function, functional, graph, graph_watch
from . import gradcheck as gradcheck_module
from .anomaly import detect_anomaly, set_detect_anomaly
from .engine import not_a_gradient, run_backward
from .explain import explain  # the step-through backward
from .function import Function as _OpFunction
from .function import FunctionCtx
from .gradcheck import gradcheck, gradgradcheck
from .variable import Variable

__all__ = ["backward", "grad", "Function", "FunctionCtx", "gradcheck", "gradgradcheck",
           "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "detect_anomaly",
           "set_detect_anomaly", "once_differentiable", "Variable", "functional",
           "anomaly_mode", "graph"]


def _as_tuple(value):
    if value is None:
        return None
    if isinstance(value, (tuple, list)) and not isinstance(value, graph.GradientEdge):
        return tuple(value)
    return (value,)


_ONE_NONE: tuple = (None,)


def _one_per_output(grads, n: int) -> tuple:
    """The gradients given for ``n`` outputs, checked as PyTorch does: Tensors or None
    (numbers and lists refused first), one per output. PyTorch ignores extra ones; here
    they are an error, as they are most likely a mistake."""
    if grads is None:
        return (None,) * n
    for g in grads:
        if g is not None and not isinstance(g, Tensor):
            raise not_a_gradient(g)
    if len(grads) != n:
        raise RuntimeError(f"got {n} tensors and {len(grads)} gradients (one gradient, or "
                           "None, per output)")
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             inputs=None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the graph's leaves
    (or only of ``inputs``)."""
    if grad_tensors is None and inputs is None and isinstance(tensors, Tensor):
        tensors, grads = (tensors,), _ONE_NONE  # loss.backward(), the common call
    else:
        tensors = _as_tuple(tensors)
        grads = _one_per_output(_as_tuple(grad_tensors), len(tensors))
        inputs = graph.tensors_for_edges(_as_tuple(inputs))
        if inputs is not None and len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    run = graph.begin_run(tensors, inputs)  # multi-gradient hooks tell passes apart
    try:
        run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs,
                     accumulate=True)
    except BaseException:
        graph.end_run(run, completed=False)
        raise
    graph.end_run(run)
    graph_watch.note_backward(tensors)  # spots graphs kept alive across steps


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """The gradients of ``outputs`` w.r.t. ``inputs``, returned (``.grad`` is untouched).

    >>> x = ember.tensor(3.0, requires_grad=True)
    >>> (dy,) = ember.autograd.grad(x ** 3, x, create_graph=True)   # 3x^2 = 27
    >>> ember.autograd.grad(dy, x)                                  # 6x = 18
    (tensor(18.),)
    """
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True needs vmap, which ember does not have")
    outputs = _as_tuple(outputs)
    inputs = graph.tensors_for_edges(_as_tuple(inputs), materialize_grads)
    if inputs is None:
        raise TypeError("grad(): inputs must be a Tensor or a sequence of Tensors, not None")
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _one_per_output(_as_tuple(grad_outputs), len(outputs))
    if allow_unused is None:
        allow_unused = materialize_grads
    with graph.backward_run(outputs, inputs):
        result = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs,
                              accumulate=False, allow_unused=allow_unused, who="grad")
    if materialize_grads:
        from ..creation import zeros_like

        result = tuple(zeros_like(t) if g is None else g for g, t in zip(result, inputs))
    return result


class Function(_OpFunction):
    """Write your own differentiable op, as in PyTorch::

        class Cube(ember.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 3 * x ** 2

        y = Cube.apply(x)

    forward runs under no_grad on Tensors; backward returns one gradient (or None) per
    forward argument. ``setup_context(ctx, inputs, output)`` style is accepted too.
    """

    _array_forward = False
    _custom = True

    def name(self) -> str:
        return type(self).__name__ + "Backward"

    @classmethod
    def apply(cls, *args, **kwargs):
        if "setup_context" in _defined(cls):
            return _OpFunction.apply.__func__(_with_setup(cls), *args, **kwargs)
        return _OpFunction.apply.__func__(cls, *args, **kwargs)

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("subclasses of ember.autograd.Function define forward")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("subclasses of ember.autograd.Function define backward")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError


def _defined(cls):
    names = set()
    for klass in cls.__mro__:
        if klass is Function:
            break
        names.update(vars(klass))
    return names


_setup_classes: dict = {}


def _with_setup(cls):
    """A subclass whose forward takes ctx, built from forward(*args) + setup_context."""
    wrapped = _setup_classes.get(cls)
    if wrapped is None:
        def forward(ctx, *args, **kwargs):
            output = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, output)
            return output

        wrapped = type(cls.__name__, (cls,), {"forward": staticmethod(forward),
                                              "apply": classmethod(_OpFunction.apply.__func__)})
        _setup_classes[cls] = wrapped
    return wrapped


def once_differentiable(backward):
    """Mark a backward as not differentiable itself: it runs under no_grad, and a double
    backward through it raises."""
    import functools

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with no_grad():
            results = backward(ctx, *grads)
        tracked = [g for g in grads if g is not None and g._requires_grad]
        if grad_mode.is_grad_enabled() and tracked:
            results = _OnceGuard.wrap(ctx, results, tracked)
        return results
    return wrapper


class _OnceGuard(_OpFunction):
    """Stands in front of the gradients of a once_differentiable backward; its own
    backward raises."""

    _array_forward = True

    @classmethod
    def wrap(cls, ctx, results, tracked):
        single = not isinstance(results, tuple)
        results = (results,) if single else results
        guarded = tuple(cls.apply(r, ctx.name(), *tracked) if r is not None else None
                        for r in results)
        return guarded[0] if single else guarded

    @staticmethod
    def forward(ctx, x, name, *tracked):
        ctx.origin = name
        return x

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(f"trying to differentiate twice a function that was marked with "
                           f"@once_differentiable ({ctx.origin})")
