"""``ember.autograd.functional``: derivatives of whole functions — Jacobians, Hessians and
their products with vectors — built on ``ember.autograd.grad``.

Each takes ``func`` and ``inputs`` (a Tensor or a tuple of Tensors passed to ``func`` as
positional arguments) and answers in the same structure. Results carry no graph unless
``create_graph=True``; ``strict=True`` raises where an output does not depend on an input
instead of answering with zeros. Forward-mode products (``jvp``, ``hvp``) use the double
backward trick: the transpose of a vector-Jacobian product is differentiated again.

>>> from ember.autograd.functional import jacobian, hessian
>>> x = ember.tensor([1.0, 2.0])
>>> jacobian(lambda x: x ** 2, x)
tensor([[2., 0.],
        [0., 4.]])
>>> hessian(lambda x: (x ** 3).sum(), x)
tensor([[ 6.,  0.],
        [ 0., 12.]])
"""
from __future__ import annotations

from .. import creation, grad_mode
from ..tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# ----------------------------------------------------------------------------- helpers
def _as_tuple(value, what: str, who: str):
    """(whether ``value`` was a tuple, it as a tuple), checking it holds Tensors."""
    was_tuple = isinstance(value, tuple)
    values = value if was_tuple else (value,)
    for i, item in enumerate(values):
        if not isinstance(item, Tensor):
            where = f"value at index {i}" if was_tuple else f"given {what}"
            raise TypeError(f"The {what} given to {who} must be either a Tensor or a tuple of "
                            f"Tensors but the {where} has type {type(item)}.")
    return was_tuple, values


def _unpack(result, was_tuple):
    """Undo ``_as_tuple``: ``was_tuple`` is one flag, or (outer, inner) for nested
    results (Jacobians: outputs, then inputs)."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = type(result)(row[0] for row in result)
        return result if outer else result[0]
    return result if was_tuple else result[0]


def _fresh(tensors, create_graph: bool, need_graph: bool):
    """New Tensor objects for the inputs, so that the function's use of them is told
    apart from the same tensors captured from outside; they stay connected to the caller's
    graph only with ``create_graph``."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(need_graph) for t in tensors)


def _plain(values, create_graph: bool):
    """Drop the history of the results unless the caller asked for a graph."""
    if create_graph:
        return values
    return tuple(v.detach() if isinstance(v, Tensor) else _plain(v, False) for v in values)


def _check_v(v, reference, reference_is_tuple: bool) -> None:
    if len(v) != len(reference):
        if reference_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(reference)} "
                               f"but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (given, expected) in enumerate(zip(v, reference)):
        if given.size() != expected.size():
            prefix = f"Entry {i} in " if reference_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {expected.size()} but "
                               f"got {given.size()}.")


_INDEPENDENT = {
    "outputs": lambda i: (f"Output {i} of the user-provided function does not require "
                          "gradients. The outputs must be computed in a differentiable manner "
                          "from the input when running in strict mode."),
    "grad_inputs": lambda i: (f"The gradient with respect to input {i} is independent of the "
                              "inputs of the user-provided function. This is not allowed in "
                              "strict mode."),
    "jacobian": lambda i: ("While computing the hessian, found that the jacobian of the "
                           f"user-provided function with respect to input {i} is independent "
                           "of the input. This is not allowed in strict mode. You should "
                           "ensure that your function is twice differentiable and that the "
                           "jacobian depends on the inputs (this would be violated by a "
                           "linear function for example)."),
}


def _strict_check(values, kind: str, strict: bool) -> None:
    """In strict mode, every value must exist and require grad."""
    if not strict:
        return
    for i, value in enumerate(values):
        if value is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not value.requires_grad:
            raise RuntimeError(_INDEPENDENT[kind](i))


def _grads(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` over the outputs that require grad (None where an input is
    unused, or for every input when no output requires grad)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
             if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    from . import grad

    return grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs),
                retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)


_MISSING = {
    "back": lambda i: (f"The output of the user-provided function is independent of input "
                       f"{i}. This is not allowed in strict mode."),
    "back_trick": lambda i: (f"The gradient with respect to the input is independent of entry "
                             f"{i} in the grad_outputs when using the double backward trick to "
                             "compute forward mode gradients. This is not allowed in strict "
                             "mode."),
    "double_back": lambda i: (f"The jacobian of the user-provided function is independent of "
                              f"input {i}. This is not allowed in strict mode."),
    "double_back_trick": lambda i: (
        f"The hessian of the user-provided function is independent of entry {i} in the "
        "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
        "double backward trick to replace forward mode AD."),
}


def _zeros_for_missing(grads, references, strict, create_graph, stage):
    """Zeros where a gradient is None (strict mode raises instead)."""
    filled = []
    for i, (g, reference) in enumerate(zip(grads, references)):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING[stage](i))
            g = creation.zeros_like(reference)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        filled.append(g)
    return tuple(filled)


def _vector(v, reference, reference_is_tuple, create_graph, who, none_message):
    if v is None:
        if len(reference) != 1 or reference[0].nelement() != 1:
            raise RuntimeError(none_message)
        return None
    _, v = _as_tuple(v, "v", who)
    v = _fresh(v, create_graph, need_graph=False)
    _check_v(v, reference, reference_is_tuple)
    return v


_V_FOR_INPUT = ("The vector v can only be None if the input to the user-provided function is "
                "a single Tensor with a single element.")


def _single_output(outputs, outputs_tuple, who):
    if outputs_tuple:
        raise RuntimeError(f"The function given to {who} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {who} should "
                           "contain a single element")


# ----------------------------------------------------------------------------- products
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Jacobian product ``v^T J`` of ``func`` at ``inputs``: returns
    ``(func(*inputs), vjp)``, the product shaped like ``inputs``. ``v`` (shaped like the
    output) may be left out when the output has a single element.

    >>> x = ember.tensor([1.0, 2.0])
    >>> ember.autograd.functional.vjp(lambda x: x ** 2, x, ember.tensor([1.0, 0.5]))
    (tensor([1., 4.]), tensor([2., 2.]))
    """
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs),
                                           "outputs of the user-provided function", "vjp")
        _strict_check(outputs, "outputs", strict)
        v = _vector(v, outputs, outputs_tuple, create_graph, "vjp",
                    "The vector v can only be None if the user-provided function returns a "
                    "single Tensor with a single element.")
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        result = _zeros_for_missing(_grads(outputs, inputs, v, create_graph=create_graph),
                                    inputs, strict, create_graph, "back")
    return (_unpack(_plain(outputs, create_graph), outputs_tuple),
            _unpack(_plain(result, create_graph), inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Jacobian-vector product ``J v`` of ``func`` at ``inputs``: returns
    ``(func(*inputs), jvp)``, the product shaped like the output. ``v`` (shaped like
    ``inputs``) may be left out when the input has a single element.

    >>> x = ember.tensor([1.0, 2.0])
    >>> ember.autograd.functional.jvp(lambda x: x ** 2, x, ember.tensor([1.0, 1.0]))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        v = _vector(v, inputs, inputs_tuple, create_graph, "jvp", _V_FOR_INPUT)
        outputs_tuple, outputs = _as_tuple(func(*inputs),
                                           "outputs of the user-provided function", "jvp")
        _strict_check(outputs, "outputs", strict)
        # u -> u^T J is linear in u; its gradient with respect to u is J v
        dummies = tuple(creation.zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grads(outputs, inputs, dummies, create_graph=True)
        _strict_check(grad_inputs, "grad_inputs", strict)
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        result = _zeros_for_missing(_grads(grad_inputs, dummies, v, create_graph=create_graph),
                                    outputs, strict, create_graph, "back_trick")
    return (_unpack(_plain(outputs, create_graph), outputs_tuple),
            _unpack(_plain(result, create_graph), outputs_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Hessian product ``v^T H`` of a scalar ``func`` at ``inputs``: returns
    ``(func(*inputs), vhp)`` shaped like ``inputs``.

    >>> x = ember.tensor([1.0, 2.0])
    >>> ember.autograd.functional.vhp(lambda x: (x ** 3).sum(), x, ember.tensor([1.0, 1.0]))
    (tensor(9.), tensor([ 6., 12.]))
    """
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Hessian-vector product ``H v`` of a scalar ``func`` at ``inputs`` (through the
    double backward trick): returns ``(func(*inputs), hvp)`` shaped like ``inputs``. For a
    twice-differentiable function ``H`` is symmetric, so this equals ``vhp``.

    >>> x = ember.tensor([1.0, 2.0])
    >>> ember.autograd.functional.hvp(lambda x: (x ** 3).sum(), x, ember.tensor([1.0, 0.0]))
    (tensor(9.), tensor([6., 0.]))
    """
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph, strict, who):
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", who)
        inputs = _fresh(inputs, create_graph, need_graph=True)
        v = _vector(v, inputs, inputs_tuple, create_graph, who, _V_FOR_INPUT)
        outputs_tuple, outputs = _as_tuple(func(*inputs),
                                           "outputs of the user-provided function", who)
        _strict_check(outputs, "outputs", strict)
        _single_output(outputs, outputs_tuple, who)
        jac = _grads(outputs, inputs, create_graph=True)
        _strict_check(jac, "jacobian", strict)
        if who == "hvp":
            dummies = tuple(creation.zeros_like(x, requires_grad=True) for x in inputs)
            double_back = _grads(jac, inputs, dummies, create_graph=True)
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        if who == "vhp":
            result = _zeros_for_missing(_grads(jac, inputs, v, create_graph=create_graph),
                                        inputs, strict, create_graph, "double_back")
        else:
            result = _zeros_for_missing(
                _grads(double_back, dummies, v, create_graph=create_graph), inputs, strict,
                create_graph, "double_back_trick")
    return (_unpack(_plain(outputs, create_graph), outputs_tuple),
            _unpack(_plain(result, create_graph), inputs_tuple))



# ----------------------------------------------------------------------------- matrices
def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for one input and one output a Tensor of
    shape ``output.shape + input.shape``; with tuples, ``result[i][j]`` is output ``i``'s
    Jacobian with respect to input ``j``.

    ``strategy="reverse-mode"`` builds it a row (one backward) per output element;
    ``"forward-mode"`` a column per input element (through the double backward trick,
    since ember's autograd is reverse-mode) and, as in PyTorch, needs ``vectorize=True``.
    ``vectorize`` changes no value (ember has no vmap to batch the passes).

    >>> x, y = ember.tensor([1.0, 2.0]), ember.tensor(3.0)
    >>> jacobian(lambda x, y: x * y, (x, y))
    (tensor([[3., 0.],
            [0., 3.]]), tensor([1., 2.]))
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `strict=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or "
                                      "forward-over-reverse Hessian is only implemented for "
                                      "`vectorize=True`.")
        return _jacobian_by_columns(func, inputs)
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs),
                                           "outputs of the user-provided function", "jacobian")
        _strict_check(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either "
                               "set `strict=False` or `vectorize=False`.")
        rows_of = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(out.nelement()):
                grads = _grads((flat[k],), inputs, retain_graph=True,
                               create_graph=create_graph)
                for j, (g, x) in enumerate(zip(grads, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {j}. This is not allowed in strict mode.")
                        g = creation.zeros_like(x)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(
                            "The jacobian of the user-provided function is independent of "
                            f"input {i}. This is not allowed in strict mode when "
                            "create_graph=True.")
                    rows[j].append(g)
            rows_of.append(tuple(_stack(r, x, out.shape + x.shape)
                                 for r, x in zip(rows, inputs)))
        result = _plain(tuple(rows_of), create_graph)
    return _unpack(result, (outputs_tuple, inputs_tuple))


def _stack(rows, like, shape):
    if not rows:  # an output with no elements
        return creation.zeros(shape, dtype=like.dtype, device=like.device)
    from .. import stack

    return stack(rows, 0).view(shape)


def _jacobian_by_columns(func, inputs):
    """The Jacobian a column at a time: ``J e_k`` for each input element ``k``, each from
    one backward through the graph of ``u -> u^T J`` (the double backward trick)."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, False, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs", "jacobian")
        dummies = tuple(creation.zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grads(outputs, inputs, dummies, create_graph=True)
        columns_of = [[[] for _ in inputs] for _ in outputs]
        for j, x in enumerate(inputs):
            for k in range(x.nelement()):
                tangent = [None] * len(inputs)
                for m, other in enumerate(inputs):
                    tangent[m] = creation.zeros_like(other)
                tangent[j].view(-1)[k] = 1.0
                pairs = [(g, t) for g, t in zip(grad_inputs, tangent) if g is not None]
                if pairs and any(g.requires_grad for g, _ in pairs):
                    columns = _grads(tuple(g for g, _ in pairs), dummies,
                                     tuple(t for _, t in pairs), retain_graph=True)
                else:
                    columns = (None,) * len(outputs)
                for i, (column, out) in enumerate(zip(columns, outputs)):
                    columns_of[i][j].append(creation.zeros_like(out) if column is None
                                            else column.detach())
    result = []
    for out, per_input in zip(outputs, columns_of):
        row = []
        for x, columns in zip(inputs, per_input):
            shape = out.shape + x.shape
            if not columns or out.nelement() == 0:
                row.append(creation.zeros(shape, dtype=out.dtype, device=out.device))
                continue
            from .. import stack

            stacked = stack([c.reshape(-1) for c in columns], -1)  # (out numel, x numel)
            row.append(stacked.reshape(shape))
        result.append(row)
    # lists, not tuples, as PyTorch's forward-mode path answers
    return _unpack(result, (outputs_tuple, inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs``: for one input a Tensor of shape
    ``input.shape + input.shape``; with a tuple, ``result[i][j]`` holds the second
    derivatives with respect to inputs ``i`` and ``j``. It is the Jacobian of the gradient;
    ``outer_jacobian_strategy`` picks how that outer Jacobian is taken (see ``jacobian``).

    >>> hessian(lambda x, y: (x * y).sum(), (ember.tensor([1.0]), ember.tensor([2.0])))
    ((tensor([[0.]]), tensor([[1.]])), (tensor([[1.]]), tensor([[0.]])))
    """
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or '
                             '"reverse-mode".')

    def scalar_function(*args):
        out = func(*args)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _strict_check(outs, "outputs", strict)
        _single_output(outs, out_tuple, "hessian")
        return out.squeeze()

    def gradient(*args):
        jac = jacobian(scalar_function, args, create_graph=True)
        _strict_check(jac, "jacobian", strict)
        return jac

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack(result, (inputs_tuple, inputs_tuple))
