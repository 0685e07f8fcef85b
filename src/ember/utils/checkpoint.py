"""Activation checkpointing: trade compute for memory by recomputing a segment's forward
during backward instead of keeping its intermediate values."""
from __future__ import annotations

from ..autograd import Function, enable_grad, grad_mode
from ..autograd.function import AccumulateGrad
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]


def checkpoint(function, *args, use_reentrant: bool | None = False,
               preserve_rng_state: bool = True, **kwargs):
    """``function(*args, **kwargs)``, keeping none of its intermediate values for backward:
    backward runs ``function`` again on the saved ``args`` and differentiates that.

    Gradients equal those of the plain call, for the tensor arguments and for every
    parameter (any leaf tensor) ``function`` uses, even when no argument requires grad.
    With ``preserve_rng_state`` (the default) the recomputation draws the same random
    numbers as the first run, so dropout masks match. Tensors that ``function`` uses
    should be its arguments or leaves (parameters), not results of earlier ops that it
    reads from outside. ``use_reentrant`` is accepted for PyTorch code; both values run
    this implementation (True refuses keyword arguments, as PyTorch does).

    >>> layer = ember.nn.Sequential(ember.nn.Linear(4, 4), ember.nn.Tanh())
    >>> x = ember.randn(2, 4, requires_grad=True)
    >>> checkpoint(layer, x).sum().backward()   # layer's activations were not kept
    >>> x.grad.shape
    ember.Size([2, 4])
    """
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if not callable(function):
        raise TypeError(f"checkpoint: function must be callable, got {type(function).__name__}")
    if not grad_mode.is_grad_enabled():
        return function(*args, **kwargs)  # nothing will be differentiated: nothing to save
    rng = _RngState(args) if preserve_rng_state else None
    inputs = [a for a in args if isinstance(a, Tensor)]
    detached = _detached(args)
    with enable_grad():
        outputs = function(*detached, **kwargs)
    single = isinstance(outputs, Tensor)
    if not single and not (isinstance(outputs, tuple) and
                           all(isinstance(o, Tensor) or o is None for o in outputs)):
        raise TypeError("checkpoint: function must return a Tensor or a tuple of Tensors, got "
                        f"{type(outputs).__name__}")
    outputs = (outputs,) if single else outputs
    own = {id(d) for d in detached if isinstance(d, Tensor)}
    leaves = [t for t in _leaves_reached(outputs) if id(t) not in own]
    values = tuple(o.detach() if o is not None else None for o in outputs)
    del outputs  # the first run's graph, and with it every intermediate value, goes here
    plan = _Plan(function, args, kwargs, len(inputs), rng, values)
    result = _Checkpoint.apply(plan, *inputs, *leaves)
    result = result if isinstance(result, tuple) else (result,)
    return result[0] if single else result


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = False,
                          **kwargs):
    """Run a Sequential (or a list of modules/functions) in ``segments`` checkpointed parts:
    only each part's input is kept; the last part runs normally, as in PyTorch.

    >>> model = ember.nn.Sequential(*[ember.nn.Linear(8, 8) for _ in range(6)])
    >>> checkpoint_sequential(model, 3, ember.randn(2, 8, requires_grad=True)).shape
    ember.Size([2, 8])
    """
    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions)
    if not isinstance(segments, int) or isinstance(segments, bool) or segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be a positive int, got "
                         f"{segments!r}")
    if not functions:
        raise ValueError("checkpoint_sequential: no functions to run")
    size = max(1, len(functions) // segments)
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = min(start + size - 1, len(functions) - 1)
        input = checkpoint(_run_range(functions, start, end), input,
                           use_reentrant=use_reentrant, **kwargs)
    return _run_range(functions, end + 1, len(functions) - 1)(input)


def _run_range(functions, start: int, end: int):
    def run(value):
        for index in range(start, end + 1):
            value = functions[index](value)
        return value
    return run


class _Plan:
    """What backward needs to run the function again."""

    __slots__ = ("function", "args", "kwargs", "n_inputs", "rng", "values")

    def __init__(self, function, args, kwargs, n_inputs, rng, values):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.n_inputs, self.rng, self.values = n_inputs, rng, values


class _Checkpoint(Function):
    """apply(plan, *tensor_args, *leaves): returns the values already computed; backward
    recomputes them with a graph and differentiates it."""

    @staticmethod
    def forward(ctx, plan, *tensors):
        ctx.plan = plan
        ctx.set_materialize_grads(False)  # outputs without a gradient get None, not zeros
        ctx.save_for_backward(*tensors)
        values = plan.values
        plan.values = None
        return tuple(values) if len(values) > 1 else values[0]

    @staticmethod
    def backward(ctx, *grads):
        from ..autograd import grad as differentiate

        plan = ctx.plan
        saved = ctx.saved_tensors
        inputs, leaves = saved[:plan.n_inputs], saved[plan.n_inputs:]
        replaced = iter(inputs)
        args = [next(replaced) if isinstance(a, Tensor) else a for a in plan.args]
        # For a double backward (create_graph) the recomputation must hang off the real
        # inputs, so that the gradients it gives lead back to them.
        double = grad_mode.is_grad_enabled()
        detached = list(args) if double else _detached(args)
        with enable_grad():
            if plan.rng is not None:
                with plan.rng.replay():
                    outputs = plan.function(*detached, **plan.kwargs)
            else:
                outputs = plan.function(*detached, **plan.kwargs)
        outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
        wanted = [d for d in detached if isinstance(d, Tensor)] + list(leaves)
        needs = ctx.needs_input_grad[1:]
        targets = [t for t, need in zip(wanted, needs) if need]
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if o is not None and g is not None and o.requires_grad]
        result = [None] * len(wanted)
        if pairs and targets:
            found = differentiate([o for o, _ in pairs], targets, [g for _, g in pairs],
                                  create_graph=double, allow_unused=True)
            found = iter(found)
            result = [next(found) if need else None for need in needs]
        return (None, *result)


def _detached(args) -> list:
    """Fresh leaves in place of the tensor arguments, requiring grad as the originals do."""
    out = []
    for a in args:
        if isinstance(a, Tensor):
            d = a.detach()
            d.requires_grad_(a.requires_grad)
            out.append(d)
        else:
            out.append(a)
    return out


def _leaves_reached(outputs) -> list:
    """The leaf tensors that require grad and that the graph of ``outputs`` reaches (walked
    without recursion)."""
    found, seen = {}, set()
    stack = [o.grad_fn for o in outputs if o is not None and o.grad_fn is not None]
    for o in outputs:
        if o is not None and o.grad_fn is None and o.requires_grad:
            found[id(o)] = o
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is AccumulateGrad:
            found.setdefault(id(node.variable), node.variable)
            continue
        stack.extend(edge[0] for edge in node._edges if edge is not None)
    return list(found.values())


class _RngState:
    """The random state at the first run, to replay it in the recomputation: the CPU
    generator's state (restored afterwards), and for each GPU in use a fresh seed (CuPy does
    not expose cuRAND's state, so the first run starts from a seed drawn here)."""

    def __init__(self, args):
        from .. import random

        self._cuda = {}
        for a in args:
            if isinstance(a, Tensor) and a.device.type == "cuda" and \
                    a.device.index not in self._cuda:
                generator = _cuda_generator(a.device)
                seed = _draw_seed()
                generator.manual_seed(seed)
                self._cuda[a.device.index] = (generator, seed)
        self._cpu = random.get_rng_state()

    def replay(self):
        import contextlib

        from .. import random

        @contextlib.contextmanager
        def replaying():
            after = {i: _draw_seed() for i in self._cuda}
            current = random.get_rng_state()
            random.set_rng_state(self._cpu)
            for generator, seed in self._cuda.values():
                generator.manual_seed(seed)
            try:
                yield
            finally:
                random.set_rng_state(current)
                for index, (generator, _) in self._cuda.items():
                    generator.manual_seed(after[index])
        return replaying()


def _draw_seed() -> int:
    """A seed for a CUDA generator, drawn from the default CPU generator."""
    from .data.sampler import _random_seed

    return _random_seed()


def _cuda_generator(device):
    from .. import random

    random.generator_for(device)
    return random._cuda_generators[device.index]
