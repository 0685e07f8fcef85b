"""ember.autograd: the engine's public face: backward, grad, Function, gradcheck, grad modes."""
from __future__ import annotations

import warnings

from .. import grad_mode
from ..grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from ..tensor import Tensor
from . import anomaly, anomaly_mode, function, functional, graph, graph_watch
from . import gradcheck as gradcheck_module
from .anomaly import detect_anomaly, set_detect_anomaly
from .engine import not_a_gradient, run_backward
from .explain import explain  # the step-through backward
from .function import Function as _OpFunction
from .function import FunctionCtx, once_differentiable
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
    if create_graph and inputs is None:
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between "
            "the parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after "
            "use to break the cycle and avoid the leak.", UserWarning, stacklevel=3)
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
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "ember.autograd.backward.", FutureWarning, stacklevel=2)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
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


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """``is_grads_batched``: one vector-Jacobian product per row of the grad_outputs
    (the first dimension), stacked; PyTorch vmaps, ember loops (same values)."""
    from .backward_math import TENSOR_MATH

    grads = _as_tuple(grad_outputs)
    if grads is None or any(g is None for g in grads):
        raise RuntimeError("is_grads_batched=True needs a batched grad_output for every output")
    for g in grads:
        if not isinstance(g, Tensor):
            raise not_a_gradient(g)
    sizes = {g.shape[0] if g.ndim else None for g in grads}
    if len(sizes) != 1 or None in sizes:
        raise RuntimeError("is_grads_batched=True: every grad_output needs the same batch "
                           f"size as its first dimension, got shapes {[g.shape for g in grads]}")
    (batch,) = sizes
    if batch == 0:
        raise RuntimeError("is_grads_batched=True: the grad_outputs hold an empty batch")
    rows = []
    for b in range(batch):
        keep = True if b < batch - 1 else retain_graph
        rows.append(grad(outputs, inputs, tuple(g[b] for g in grads), keep, create_graph,
                         allow_unused=allow_unused, materialize_grads=materialize_grads))
    return tuple(None if rows[0][i] is None else
                 TENSOR_MATH.stack([row[i] for row in rows], 0) for i in range(len(rows[0])))


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
    generate_vmap_rule = False  # ember has no vmap; kept for code that reads it

    def __init__(self, *args, **kwargs):
        # apply makes its ctx without __init__: only a direct instantiation gets here
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      "are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

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
