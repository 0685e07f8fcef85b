"""``ember.func``: function transforms with PyTorch's ``torch.func`` names: ``grad``,
``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``, ``vmap`` and
``functional_call``.

They are built on ember's reverse-mode autograd: ``grad`` and ``vjp`` run one backward;
``jvp`` (forward mode) is the transpose of a vjp, taken by a second backward through the
first (so the function's ops need double derivatives, which ember's have); ``jacrev``
stacks one vjp per output element and ``jacfwd`` one jvp per input element. ``vmap`` calls
the function once per batch element and stacks the results: the same numbers as
PyTorch's batching rules, at the cost of a Python loop.

>>> import ember
>>> from ember.func import grad, vmap
>>> grad(lambda x: (x ** 3).sum())(ember.tensor([1.0, 2.0]))
tensor([ 3., 12.])
>>> vmap(ember.dot)(ember.ones(3, 2), ember.ones(3, 2))
tensor([2., 2., 2.])
"""
from __future__ import annotations

import functools

from . import autograd
from .creation import zeros_like
from .grad_mode import enable_grad, is_grad_enabled
from .nn.utils.stateless import functional_call
from .ops import NAMESPACES
from .tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call"]

_stack = NAMESPACES["ember"]["stack"]
_movedim = NAMESPACES["ember"]["movedim"]


# ----------------------------------------------------------------------------- trees
def _leaves(tree) -> list:
    """The tensors of a nest of tuples, lists and dicts, in order."""
    out, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, Tensor):
            out.append(node)
        elif isinstance(node, (tuple, list)):
            stack.extend(reversed(node))
        elif isinstance(node, dict):
            stack.extend(reversed(list(node.values())))
    return out


def _rebuild(tree, leaves):
    """``tree`` with its tensors replaced, in order, by ``leaves``."""
    iterator = iter(leaves)

    def walk(node):
        if isinstance(node, Tensor):
            return next(iterator)
        if isinstance(node, (tuple, list)):
            items = [walk(v) for v in node]
            return type(node)(items) if not hasattr(node, "_fields") else type(node)(*items)
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        return node

    return walk(tree)


def _track(tree):
    """Fresh differentiable stand-ins for the tensors of ``tree``: leaves of their own, or
    (inside an outer transform) identity nodes so that outer levels see through them."""
    def stand_in(t: Tensor) -> Tensor:
        if not t.is_floating_point():
            raise RuntimeError(f"only floating-point tensors can be differentiated, got "
                               f"{t.dtype}")
        if t.requires_grad:
            return t.view_as(t)
        return t.detach().requires_grad_(True)

    return _rebuild(tree, [stand_in(t) for t in _leaves(tree)])


def _outer(tree) -> bool:
    return any(t.requires_grad for t in _leaves(tree)) and is_grad_enabled()


def _grads(outputs, inputs, cotangents, keep: bool) -> list:
    grads = autograd.grad(outputs, inputs, cotangents, create_graph=True, allow_unused=True)
    out = [zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]
    return out if keep else [g.detach() for g in out]


def _argnums(argnums, count: int) -> tuple:
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    for n in nums:
        if not isinstance(n, int) or not -count <= n < count:
            raise RuntimeError(f"Got argnums={argnums} but only {count} positional inputs")
    return tuple(n % count for n in nums), single


# ----------------------------------------------------------------------------- reverse mode
def grad_and_value(func, argnums=0, has_aux: bool = False):
    """Like :func:`grad`, but the wrapped function returns ``(gradient, value)`` (with
    ``has_aux``: ``(gradient, (value, aux))``)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums, single = _argnums(argnums, len(args))
        keep = _outer([args[n] for n in nums])
        with enable_grad():
            args = list(args)
            for n in nums:
                args[n] = _track(args[n])
            result = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should "
                                       "be a tuple: (output, aux) if has_aux is True")
                result, aux = result
            if not isinstance(result, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(result).__name__}")
            if result.numel() != 1 or result.dim() != 0:
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {result.dim()} dims. Maybe you wanted to use the vjp or "
                    "jacrev APIs instead?")
            trees = [args[n] for n in nums]
            inputs = _leaves(trees)
            flat = _grads([result], inputs, None, keep) if result.requires_grad else \
                [zeros_like(x) for x in inputs]
        grads = _rebuild(trees, flat)
        value = result if keep else result.detach()
        gradient = grads[0] if single else tuple(grads)
        return (gradient, (value, aux)) if has_aux else (gradient, value)

    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """The gradient of a function that returns a scalar tensor, w.r.t. its argument
    ``argnums`` (an int, or a tuple of ints for a tuple of gradients). Arguments may be
    nests of tuples, lists and dicts of tensors; the gradient has the same structure.
    ``grad(grad(f))`` gives second derivatives.

    >>> import ember
    >>> from ember.func import grad
    >>> grad(grad(lambda x: x ** 3))(ember.tensor(2.0))
    tensor(12.)
    """
    transformed = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gradient, value = transformed(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def vjp(func, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` gives the vector-Jacobian
    product for each primal (a tuple), ``cotangents`` shaped like the output.

    >>> import ember
    >>> from ember.func import vjp
    >>> out, vjp_fn = vjp(ember.sin, ember.tensor([0.0, 1.0]))
    >>> vjp_fn(ember.ones(2))
    (tensor([1.0000, 0.5403]),)
    """
    keep = _outer(primals)
    with enable_grad():
        tracked = _track(primals)
        output = func(*tracked)
    aux = None
    if has_aux:
        output, aux = output
    inputs = _leaves(tracked)
    outputs = _leaves(output)
    if not outputs:
        raise RuntimeError("vjp(f, *primals): Expected f to return a Tensor or a nest of "
                           "Tensors")

    def vjp_fn(cotangents):
        flat = _leaves(cotangents)
        if len(flat) != len(outputs):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function: got "
                               f"{len(flat)} cotangents for {len(outputs)} outputs")
        for c, o in zip(flat, outputs):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: cotangent has shape {list(c.shape)} "
                                   f"and output has shape {list(o.shape)}")
        with enable_grad():
            live = [(o, c) for o, c in zip(outputs, flat) if o.requires_grad]
            grads = _grads([o for o, _ in live], inputs, [c for _, c in live],
                           keep or _outer(flat)) if live else [zeros_like(x) for x in inputs]
        return _rebuild(tuple(tracked), grads)

    value = output if keep else _rebuild(output, [o.detach() for o in outputs])
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


# ----------------------------------------------------------------------------- forward mode
def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product (forward mode),
    ``primals`` and ``tangents`` tuples of the same structure.

    >>> import ember
    >>> from ember.func import jvp
    >>> jvp(lambda x: x ** 2, (ember.tensor([1.0, 3.0]),), (ember.ones(2),))[1]
    tensor([2., 6.])
    """
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be "
                           "tuples")
    flat_primals, flat_tangents = _leaves(primals), _leaves(tangents)
    if len(flat_primals) != len(flat_tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           "the same python structure")
    for p, t in zip(flat_primals, flat_tangents):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to "
                               f"have the same shape, got {list(p.shape)} and "
                               f"{list(t.shape)}")
    keep = _outer(primals) or _outer(tangents)
    with enable_grad():
        tracked = _track(primals)
        output = func(*tracked)
        aux = None
        if has_aux:
            output, aux = output
        inputs = _leaves(tracked)
        outputs = _leaves(output)
        # J v is the gradient w.r.t. u of <J^T u, v>, for any u: run the vjp on a dummy u
        dummies = [zeros_like(o).requires_grad_(True) for o in outputs]
        live = [i for i, o in enumerate(outputs) if o.requires_grad]
        if not live:
            products = [zeros_like(o) for o in outputs]
        else:
            back = autograd.grad([outputs[i] for i in live], inputs,
                                 [dummies[i] for i in live], create_graph=True,
                                 allow_unused=True)
            pairs = [(g * t).sum() for g, t in zip(back, flat_tangents)
                     if g is not None and g.requires_grad]
            if not pairs:
                products = [zeros_like(o) for o in outputs]
            else:
                total = pairs[0]
                for p in pairs[1:]:
                    total = total + p
                products = autograd.grad(total, dummies, create_graph=keep, allow_unused=True)
                products = [zeros_like(o) if g is None else g
                            for g, o in zip(products, outputs)]
    if not keep:
        outputs = [o.detach() for o in outputs]
        products = [p.detach() for p in products]
    result = (_rebuild(output, outputs), _rebuild(output, products))
    return result + (aux,) if has_aux else result


# ----------------------------------------------------------------------------- Jacobians
def _jacobian(func, argnums, has_aux: bool, forward: bool):
    name = "jacfwd" if forward else "jacrev"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums, single = _argnums(argnums, len(args))
        keep = _outer(args)
        with enable_grad():
            args = list(args)
            for n in nums:
                args[n] = _track(args[n])
            result = func(*args, **kwargs)
            aux = None
            if has_aux:
                result, aux = result
            if not isinstance(result, Tensor):
                raise RuntimeError(f"{name}(f, ...)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(result).__name__}")
            inputs = [args[n] for n in nums]
            for x in inputs:
                if not isinstance(x, Tensor):
                    raise RuntimeError(f"{name}: argument {nums} must be Tensors")
            blocks = _jacobian_blocks(result, inputs, keep)
        jac = blocks[0] if single else tuple(blocks)
        return (jac, aux) if has_aux else jac

    return wrapper


def _jacobian_blocks(result, inputs, keep: bool) -> list:
    """d result / d input for each input, shaped ``result.shape + input.shape``, one row per
    output element (a vjp each)."""
    flat = result.reshape(-1)
    rows = [[] for _ in inputs]
    for i in range(flat.shape[0]):
        if result.requires_grad:
            grads = autograd.grad(flat[i], inputs, retain_graph=True, create_graph=keep,
                                  allow_unused=True)
        else:
            grads = [None] * len(inputs)
        for k, (g, x) in enumerate(zip(grads, inputs)):
            rows[k].append(zeros_like(x) if g is None else g)
    out = []
    for k, x in enumerate(inputs):
        if rows[k]:
            block = _stack(rows[k]).reshape(tuple(result.shape) + tuple(x.shape))
        else:
            block = zeros_like(x).reshape((0,) + tuple(x.shape)).reshape(
                tuple(result.shape) + tuple(x.shape))
        out.append(block if keep else block.detach())
    return out


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None,
           _preallocate_and_copy: bool = False):
    """The Jacobian of ``func`` w.r.t. argument ``argnums`` by reverse mode (one vjp per
    output element), shaped ``output.shape + input.shape``.

    >>> import ember
    >>> from ember.func import jacrev
    >>> jacrev(lambda x: x ** 2)(ember.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    return _jacobian(func, argnums, has_aux, forward=False)


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """The Jacobian of ``func`` w.r.t. argument ``argnums``, shaped ``output.shape +
    input.shape``. ember computes it by reverse mode as well (the numbers are the same);
    ``hessian`` composes it with ``jacrev``.

    >>> import ember
    >>> from ember.func import jacfwd
    >>> jacfwd(ember.sin)(ember.tensor([0.0]))
    tensor([[1.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    return _jacobian(func, argnums, has_aux, forward=True)


def hessian(func, argnums=0):
    """The Hessian of a scalar function w.r.t. argument ``argnums``: ``jacfwd(jacrev(f))``,
    shaped ``input.shape + input.shape``.

    >>> import ember
    >>> from ember.func import hessian
    >>> hessian(lambda x: (x ** 3).sum())(ember.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


# ----------------------------------------------------------------------------- vmap
def _dims_like(in_dims, args, what: str):
    """One in_dim (int or None) per tensor of ``args``, following the nest of in_dims."""
    out = []
    stack = [(in_dims, args)]
    while stack:
        dims, node = stack.pop()
        if isinstance(node, Tensor):
            if dims is not None and not isinstance(dims, int):
                raise ValueError(f"vmap({what}): in_dims for a Tensor must be an int or None, "
                                 f"got {dims!r}")
            out.append(dims)
        elif isinstance(node, (tuple, list, dict)):
            values = list(node.values()) if isinstance(node, dict) else list(node)
            if isinstance(dims, (tuple, list)):
                if len(dims) != len(values):
                    raise ValueError(f"vmap({what}, in_dims={in_dims}, ...)(<inputs>): in_dims "
                                     f"is not compatible with the structure of `inputs`")
                pairs = list(zip(dims, values))
            elif isinstance(dims, dict):
                pairs = [(dims[k], v) for k, v in node.items()]
            else:
                pairs = [(dims, v) for v in values]
            stack.extend(reversed(pairs))
        elif dims is not None and not isinstance(dims, (tuple, list, dict)):
            raise ValueError(f"vmap({what}, in_dims={in_dims}, ...)(<inputs>): Got in_dim="
                             f"{dims} for an input but the input is of type "
                             f"{type(node).__name__}. We cannot vmap over non-Tensor arguments")
    return out


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """Map ``func`` over a dim of its inputs: ``vmap(f)(x)[i] == f(x[i])``. ``in_dims``
    picks the mapped dim of each argument (None: not mapped), ``out_dims`` where the batch
    dim goes in the outputs. ember runs ``func`` once per batch element and stacks the
    results, so ``func`` sees unbatched tensors (any ember code works in it).

    >>> import ember
    >>> from ember.func import vmap
    >>> vmap(lambda row, w: (row * w).sum(), in_dims=(0, None))(ember.ones(3, 2),
    ...                                                           ember.tensor([1.0, 2.0]))
    tensor([3., 3., 3.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")
    name = getattr(func, "__name__", repr(func))

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if isinstance(in_dims, (tuple, list)) and len(in_dims) != len(args):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                             f"compatible with the structure of `inputs`. in_dims has "
                             f"{len(in_dims)} entries but inputs has {len(args)}")
        tensors = _leaves(args)
        per_tensor = _dims_like(tuple(dims), args, name)
        sizes = set()
        for t, d in zip(tensors, per_tensor):
            if d is None:
                continue
            if not -t.dim() <= d < max(t.dim(), 1) or t.dim() == 0:
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim="
                                 f"{d} for an input but the input is of dimension {t.dim()}")
            sizes.add(t.shape[d])
        if not sizes:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one "
                             "input must be a Tensor mapped over a dim (in_dims not all None)")
        if len(sizes) > 1:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Expected all "
                             f"tensors to have the same size in the mapped dimension, got "
                             f"sizes {sorted(sizes)} for the mapped dimension")
        batch = sizes.pop()
        results = []
        for i in range(batch):
            pieces = [t if d is None else t.select(d, i) for t, d in zip(tensors, per_tensor)]
            results.append(func(*_rebuild(args, pieces), **kwargs))
        return _stack_outputs(results, out_dims, name)

    return wrapper


def _stack_outputs(results, out_dims, name: str):
    first = results[0]
    leaves = _leaves(first)
    if isinstance(first, Tensor):
        structure_ok = True
    else:
        structure_ok = isinstance(first, (tuple, list, dict)) and len(leaves) > 0
    if not structure_ok:
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(first).__name__}. Did you mean to set out_dims= to None for "
                         "output?")
    columns = [_leaves(r) for r in results]
    dims = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(leaves)
    if len(dims) != len(leaves):
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): out_dims is not "
                         f"compatible with the structure of `outputs`")
    stacked = []
    for k, d in enumerate(dims):
        values = [c[k] for c in columns]
        if d is None:
            stacked.append(values[0])
            continue
        out = _stack(values)
        stacked.append(_movedim(out, 0, d) if d != 0 else out)
    return _rebuild(first, stacked)
