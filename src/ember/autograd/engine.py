"""The backward engine: walks the graph from the outputs to the leaves without recursion.

Each node runs once, after every node that feeds it a gradient has run (dependency
counting), so gradients from all paths are summed before they flow on. Saved values are
freed as each node finishes unless ``retain_graph``.

Without ``create_graph`` (the common case) gradients flow as raw arrays: each op's
formula runs on ``ArrayMath`` and makes no Tensor and no node; Tensors are made only where
a user sees a gradient (hooks, ``.grad``, the results of ``autograd.grad``). With
``create_graph`` gradients are Tensors and the formulas record their own graph.
"""
from __future__ import annotations

import threading

import numpy as np

from .. import backend, grad_mode, tracing
from ..tensor import Tensor, bump_version
from .anomaly import is_anomaly_enabled
from .backward_math import TENSOR_MATH, array_math
from .function import FREED, AccumulateGrad, _fit_gradients, _materialize, accumulator_of

_state = grad_mode._state
_ndarray = np.ndarray
# .grad is read, then stored or added into: one thread at a time
_grad_lock = threading.Lock()


def _roots(tensors, grad_tensors, who: str, arrays: bool):
    """The root nodes, their gradients (arrays when ``arrays``, else Tensors) and the
    gradients the caller handed in (their memory must not become a ``.grad``)."""
    roots, grads, given = [], [], []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{who}: expected Tensors as outputs, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn: "
                + why_no_grad(t))
        if g is None:
            if t._data.size != 1:
                raise RuntimeError(
                    "grad can be implicitly created only for scalar outputs (this output has "
                    f"shape {list(t.shape)}; reduce it first, e.g. y.sum().backward(), or pass "
                    "gradient= of that shape, e.g. y.backward(ember.ones_like(y)))")
            g = _ones_like(t)
            if not arrays:
                g = Tensor._make(g, t._device, False)
        elif not isinstance(g, Tensor):
            raise not_a_gradient(g)
        else:
            if g.shape != t.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {t.shape}.")
            if g._device != t._device:
                raise RuntimeError(
                    f"invalid gradient at index {i} - expected device {t._device} but got "
                    f"{g._device}")
            if g.dtype is not t.dtype:
                g = g.to(t.dtype)
            given.append(g)
            if arrays:
                g = g._data
        node = t.grad_fn if t.grad_fn is not None else accumulator_of(t)
        roots.append((node, t._output_nr))
        grads.append(g)
    return roots, grads, given


def not_a_gradient(g) -> TypeError:
    """The error for a gradient argument that is not a Tensor: PyTorch takes no numbers or
    lists there."""
    return TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__} "
                     "(wrap numbers and lists in ember.tensor(...), of the output's shape)")


def why_no_grad(t) -> str:
    """Which of the reasons applies when ``t`` has no graph to backpropagate through."""
    dtype = t._data.dtype
    if dtype.kind not in "fcV":
        return (f"it has dtype {t.dtype} and only floating point and complex tensors can "
                "require gradients; compute it from float tensors (e.g. x.float())")
    cut = t._cut or ("no_grad" if t._version_counter.no_grad else None)
    if cut == "detach":
        return ("it was computed from a tensor detached from the graph (.detach() or "
                "detach_()); backpropagate through the tensor before detach(), or drop the "
                "detach()")
    if cut == "no_grad":
        return ("it was computed under ember.no_grad() (or inference_mode), or from a tensor "
                "that was, and no_grad records no graph; run the forward outside the no_grad "
                "block")
    return ("none of the tensors it was computed from requires grad (a leaf made with "
            "requires_grad=False); create the inputs with requires_grad=True or call "
            "x.requires_grad_() on them")


def _ones_like(t):
    if t._device.type == "cpu":
        ones = np.empty(t._data.shape, t._data.dtype)  # (np.ones adds Python wrappers)
        ones.fill(1)
        return ones
    with backend.cuda.device_guard(t._device.index):  # on the tensor's own GPU
        return backend.cuda.cupy().ones(t._data.shape, t._data.dtype)


def dependencies(root_nodes):
    """How many edges point at each node reachable from the roots."""
    deps = {}
    roots = set(root_nodes)
    found = list(roots)  # every node to walk, in the order found (the loop walks it growing)
    get = deps.get
    walk = found.append
    # (one root is below no other node: only with several may a child be a root, walked
    # from the start already)
    several = len(roots) > 1
    for node in found:
        for child in node._next:
            if child is None:
                continue
            count = get(child)
            if count is None:  # first seen: walk it
                deps[child] = 1
                if not several or child not in roots:
                    walk(child)
            else:
                deps[child] = count + 1
    return deps


def _needed(root_nodes, deps, targets):
    """The nodes from which some target node can be reached (only those need to run)."""
    order = []
    remaining = dict(deps)
    ready = [n for n in set(root_nodes) if remaining.get(n, 0) == 0]
    while ready:
        node = ready.pop()
        order.append(node)
        for child in node._next:
            if child is None:
                continue
            remaining[child] -= 1
            if remaining[child] == 0:
                ready.append(child)
    needed = set()
    for node in reversed(order):
        if node in targets or any(c is not None and c in needed for c in node._next):
            needed.add(node)
    return needed


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None,
                 accumulate=True, allow_unused=False, who="backward"):
    """The engine. With ``accumulate`` it fills leaves' ``.grad`` (``backward``); without,
    it returns the gradients of ``inputs`` (``autograd.grad``)."""
    tracer = tracing.current() if tracing.state.tracer is not None else None
    if tracer is not None:  # ember.compile records the plan, then this runs eagerly
        return tracer.record_backward(run_backward, tensors, grad_tensors, retain_graph,
                                      create_graph, inputs, accumulate, allow_unused, who)
    if retain_graph is None:
        retain_graph = create_graph
    arrays = not create_graph
    roots, root_grads, given = _roots(tensors, grad_tensors, who, arrays)
    root_nodes = [n for n, _ in roots]
    anomaly = is_anomaly_enabled()
    # From a single root, a chain of links (nodes with one edge) needs no dependency count:
    # every node of it has the previous one as its only producer in this graph (the others
    # lie below it). The count is taken where the chain ends, from the node there.
    walk = arrays and not anomaly and inputs is None and accumulate and len(roots) == 1
    deps = None if walk else dependencies(root_nodes)

    # What to capture: (node, output_nr) -> position in inputs.
    capture = {}
    targets = None
    if inputs is not None:
        targets = set()
        for i, t in enumerate(inputs):
            if not isinstance(t, Tensor):
                raise TypeError(f"{who}: inputs must be Tensors, got {type(t).__name__}")
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            node = t.grad_fn if t.grad_fn is not None else accumulator_of(t)
            capture.setdefault((node, t._output_nr), []).append(i)
            targets.add(node)
        needed = _needed(root_nodes, deps, targets)
    else:
        needed = None
    captured = [None] * (len(inputs) if inputs is not None else 0)

    # node -> its gradient (single-output nodes, the common case) or a list of them
    buffers = {}
    for (node, nr), g in zip(roots, root_grads):
        _add_to_buffer(buffers, node, nr, g)
    if len(root_nodes) == 1:
        ready = root_nodes if walk or root_nodes[0] not in deps else []
    else:
        ready = [n for n in dict.fromkeys(root_nodes) if deps.get(n, 0) == 0]
    # memory already handed out (the caller's gradients): copy before storing into .grad
    stored = {id(_owner(g._data, True) if arrays else _owner(g, False)) for g in given} \
        if given else set()

    previous = _state.enabled
    _state.enabled = create_graph
    pop_buffer = buffers.pop
    get_buffer = buffers.get
    # the common node needs none of the general loop's checks: one output, an array
    # backward, no hooks, nothing to capture
    plain = arrays and not anomaly and needed is None and not capture and accumulate
    try:
        while ready:
            node = ready.pop()
            grads = pop_buffer(node, None)
            children = node._next
            ran = False  # whether the plain branch ran the node (its results to route)
            while plain and grads is not None and node._plain:
                on_gpu = node.xp is not np  # (a CPU node computes with its class's NumPy math)
                if on_gpu:
                    node.math = array_math(node.xp)
                results = type(node).backward(node, grads)
                if type(results) is not tuple:
                    results = (results,)
                if len(results) != len(children):
                    results = _fit_gradients(node, results)
                if retain_graph:
                    if on_gpu:
                        del node.math
                elif node._saved:
                    node._saved = FREED
                ran = True
                # a chain's link (one child, the first, and empty edges for the rest: a
                # Python number's in ``y * 0.5``, a reduction's dims in ``y.sum()``): route
                # without the loop below, and where this node is its child's only
                # producer, go on with the child without the ready list
                n = len(children)
                if n != 1 and (children[1] is not None or
                               n > 2 and children.count(None) != n - 1):
                    break
                child = children[0]
                g = results[0]
                if child is None or g is not None and child._num_outputs != 1:
                    break
                if deps is None:  # from the root: each link is its child's only producer
                    if g is None:  # the chain passes no gradient on: done
                        ran = None
                        break
                    node, grads, children = child, g, child._next
                    ran = False
                    continue
                count = deps[child] - 1
                if count == 0 and g is not None and child not in buffers:
                    node, grads, children = child, g, child._next
                    ran = False
                    continue
                if g is not None:
                    previous_g = get_buffer(child)
                    buffers[child] = g if previous_g is None else previous_g + g
                deps[child] = count
                if count == 0:
                    ready.append(child)
                ran = None  # routed
                break
            if ran is None:
                continue  # the chain's last link was routed above
            if deps is None:  # the chain from the root ends here: count what lies below
                deps = dependencies([node])
            if not ran and grads is not None and (needed is None or node in needed):
                if node._num_outputs == 1:
                    grads = (grads,)
                if node._hooked or anomaly or (arrays and not node.array_backward):
                    # hooks and user Functions see Tensors
                    if arrays:
                        grads = _as_tensors(node, grads)
                    if node._hooked:
                        grads = _run_tensor_hooks(node, grads)
                    on_tensors = True
                else:
                    on_tensors = False
                if not accumulate and type(node) is AccumulateGrad and node.variable._hooks:
                    grads = [_run_leaf_hooks(node.variable, grads[0])]  # as .backward() would
                if capture:
                    for nr, g in enumerate(grads):
                        for i in capture.get((node, nr), ()):
                            captured[i] = g
                if type(node) is AccumulateGrad:
                    if accumulate and (targets is None or node in targets):
                        if node._hooked:
                            _accumulate_hooked(node, grads, create_graph, stored)
                        else:
                            _accumulate(node.variable, grads[0], create_graph, stored)
                    continue
                if not accumulate and node in targets and \
                        not any(c is not None and c in needed for c in children):
                    continue  # the gradient we wanted is captured; nothing below matters
                # only the gradients this pass wants (autograd.grad, backward(inputs=))
                wider = _narrow_needs(node, needed) if needed is not None else None
                # the namespace backward computes with, where the class's is not it (set
                # on the node for the call, removed after)
                math = TENSOR_MATH if on_tensors or not arrays else array_math(node.xp)
                if math is type(node).math:  # (a user Function on Tensors, a CPU node)
                    math = None
                else:
                    node.math = math
                try:
                    if on_tensors:
                        results = _call(node, grads, anomaly)
                        if arrays:
                            results = [r._data if r is not None else None for r in results]
                    else:
                        if node._num_outputs > 1 and node._materialize_grads:
                            grads = _materialize(node, grads, arrays)
                        results = type(node).backward(node, *grads)
                        if type(results) is not tuple:
                            results = (results,)
                        if len(results) != len(children):
                            results = _fit_gradients(node, results)
                finally:
                    if wider is not None:
                        node.needs_input_grad = wider
                    if math is not None:
                        node.__dict__.pop("math", None)
                if not retain_graph and node._saved:
                    node._saved = FREED
            elif not ran:  # nothing flows through this node: only release its children
                for child in children:
                    if child is not None:
                        count = deps[child] - 1
                        deps[child] = count
                        if count == 0:
                            ready.append(child)
                continue
            for child, nr, g in zip(children, node._nrs, results):
                if child is None:
                    continue
                if g is not None:
                    if child._num_outputs == 1:
                        previous_g = get_buffer(child)
                        buffers[child] = g if previous_g is None else previous_g + g
                    else:
                        _add_to_buffer(buffers, child, nr, g)
                count = deps[child] - 1
                deps[child] = count
                if count == 0:
                    ready.append(child)
    finally:
        _state.enabled = previous

    if arrays and capture:
        captured = [_as_tensor(g) if g is not None and not isinstance(g, Tensor) else g
                    for g in captured]
    if inputs is not None and accumulate:
        for t, g in zip(inputs, captured):  # non-leaf inputs get .grad like retain_grad
            if t.grad_fn is not None and g is not None:
                _accumulate(t, g, create_graph, stored)
    if not accumulate:
        for i, g in enumerate(captured):
            if g is None and not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
        return tuple(captured)
    return None


def _narrow_needs(node, needed):
    """Set ``node.needs_input_grad`` for one backward call: an input whose edge leads to no
    wanted gradient is not needed, as PyTorch's own nodes ask per call (so a derivative
    that is not implemented raises only when it is wanted). Returns the forward's value to
    restore, or None where nothing changed. User Functions keep theirs, as in PyTorch."""
    if node._custom:
        return None
    needs = node.needs_input_grad
    children = node._next
    if len(needs) != len(children):
        return None
    narrowed = tuple(need and child is not None and child in needed
                     for need, child in zip(needs, children))
    if narrowed == tuple(needs):
        return None
    node.needs_input_grad = narrowed
    return needs


def _add_to_buffer(buffers, node, nr, g) -> None:
    if node._num_outputs == 1:
        previous = buffers.get(node)
        buffers[node] = g if previous is None else previous + g
        return
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node._num_outputs
    buf[nr] = g if buf[nr] is None else buf[nr] + g


def _owner(g, arrays: bool):
    """The object that owns a gradient's memory (views are traced to their base)."""
    if arrays:
        base = getattr(g, "base", None)
        return base if base is not None else g
    return g._base if g._base is not None else g


def _as_tensor(g):
    """A gradient array as a Tensor on the array's device (no copy)."""
    if type(g) is not _ndarray:
        g = backend.xp_of(g).asarray(g)  # NumPy scalars, CuPy arrays
    return Tensor._make(g, backend.device_of_array(g), False)


def _as_tensors(node, grads):
    return [_as_tensor(g) if g is not None else None for g in grads]


def _run_tensor_hooks(node, grads):
    hooks = node.__dict__.get("_tensor_hooks") if type(node) is not AccumulateGrad else None
    if not hooks:
        return grads
    grads = list(grads)
    for nr, hook_list in hooks.items():
        for hook in list(hook_list):
            if grads[nr] is None:
                continue
            out = hook(grads[nr])
            if out is not None:
                grads[nr] = _check_hook_result(hook, grads[nr], out)
    return grads


def _check_hook_results(hook, values, out) -> tuple:
    """A node hook's replacement gradients, checked as PyTorch does: a tuple with one entry
    per value, each None or a Tensor like the value it replaces."""
    if not isinstance(out, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(out).__name__}'")
    if len(out) != len(values):
        raise RuntimeError(
            f"hook '{getattr(hook, '__name__', '<unknown>')}' has returned an incorrect number "
            f"of values (got {len(out)}, but expected {len(values)})")
    for value, new in zip(values, out):
        if new is not None:
            if value is None:
                raise RuntimeError("can't replace a None gradient with a non-None value")
            _check_hook_result(hook, value, new)
    return out


def _check_hook_result(hook, grad, out):
    """A tensor hook may replace a gradient only by a Tensor of its type and size (as in
    PyTorch): anything else would flow on silently."""
    name = getattr(hook, "__name__", "<unknown>")
    if not isinstance(out, Tensor):
        raise TypeError(f"expected Tensor, but hook '{name}' returned "
                        f"'{type(out).__name__}' (return a Tensor, or None to keep the "
                        "gradient)")
    if out.dtype is not grad.dtype or out._device != grad._device:
        was, got = grad.type(), out.type()
        if was == got:  # the same type on another GPU
            was, got = grad._device, out._device
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {was} got {got})")
    if out._data.shape != grad._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value (was "
                           f"{list(grad.shape)} got {list(out.shape)})")
    return out


def _call(node, grads, anomaly):
    pre = node.__dict__.get("_pre_hooks")
    if pre:
        for hook in pre:
            out = hook(tuple(grads))
            if out is not None:
                grads = list(_check_hook_results(hook, grads, out))
    if anomaly:
        from .anomaly import run_checked

        results = run_checked(node, grads)
    else:
        results = node._run_backward(grads)
    if node._custom:
        results = _validate(node, results)
    post = node.__dict__.get("_post_hooks")
    if post:
        for hook in post:
            out = hook(tuple(results), tuple(grads))
            if out is not None:
                results = _check_hook_results(hook, results, out)
    return results


def _validate(node, results):
    """User Functions: check each returned gradient against its input's shape and dtype."""
    checked = list(results)
    for i, (g, edge) in enumerate(zip(results, node._edges)):
        if g is None:
            continue
        if edge is None:
            if node._input_meta[i] is None:
                raise RuntimeError(
                    f"function {node.name()} returned a gradient different than None at "
                    f"position {i + 1}, but the corresponding forward input was not a Variable")
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"function {node.name()} returned a gradient of type "
                            f"{type(g).__name__} at index {i}; expected a Tensor or None")
        meta = node._input_meta[i]
        if g.shape != meta[0]:
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"{list(g.shape)} but expected shape compatible with {list(meta[0])}")
        if g.dtype is not meta[1]:
            checked[i] = g.to(meta[1])
    return tuple(checked)


def _run_leaf_hooks(variable, grad):
    """A leaf's tensor hooks, in order; each may replace the gradient."""
    if not isinstance(grad, Tensor):
        grad = _as_tensor(grad)
    wanted = variable._grad_dtype
    if wanted is not None and grad.dtype is not wanted:
        grad = grad.to(wanted)  # hooks see the gradient in grad_dtype, as in PyTorch
    for hook in list(variable._hooks):
        out = hook(grad)
        if out is not None:
            grad = _check_hook_result(hook, grad, out)
    return grad


def _accumulate_hooked(node, grads, create_graph, stored):
    """A leaf whose AccumulateGrad node has hooks, in PyTorch's order: the tensor's hooks,
    the node's pre-hooks (which may replace the gradient), the accumulation, the node's
    post-hooks (``hook((), grad_outputs)``)."""
    variable = node.variable
    grads = list(grads)
    if variable._hooks:
        grads[0] = _run_leaf_hooks(variable, grads[0])
    for hook in list(node.__dict__.get("_pre_hooks", ())):
        out = hook(tuple(grads))
        if out is not None:
            grads = list(_check_hook_results(hook, grads, out))
    if grads[0] is not None:
        _accumulate(variable, grads[0], create_graph, stored, hooks_ran=True)
    for hook in list(node.__dict__.get("_post_hooks", ())):
        hook((), tuple(grads))


def _accumulate(variable, grad, create_graph, stored, hooks_ran=False):
    """Add a gradient (an array, or a Tensor under create_graph or after hooks) into
    ``variable.grad``."""
    if variable._hooks and not hooks_ran:
        grad = _run_leaf_hooks(variable, grad)
    if isinstance(grad, Tensor):
        if create_graph or grad._requires_grad or variable._grad is not None and \
                variable._grad._requires_grad:
            _accumulate_tensor(variable, grad, create_graph, stored)
            return
        grad = grad._data
    data = variable._data
    if type(grad) is not type(data):
        grad = backend.xp_of(data).asarray(grad)
    wanted = data.dtype if variable._grad_dtype is None else variable._grad_dtype.numpy
    if grad.dtype != wanted:
        grad = grad.astype(wanted)
    if grad.shape != data.shape:
        raise RuntimeError(
            f"the gradient for a tensor of shape {list(variable.shape)} came out with shape "
            f"{list(grad.shape)}")
    with _grad_lock:  # two threads may backpropagate into one leaf
        current = variable._grad
        if current is None:
            # Never let two .grad tensors (or a .grad and the gradient the caller passed in)
            # share memory: a later in-place change to one would show in the other. PyTorch's
            # layout contract: a .grad is laid out like its tensor, so optimizer updates walk
            # both in the same order.
            owner = id(_owner(grad, True))
            if owner in stored or (not grad.flags.c_contiguous and data.flags.c_contiguous):
                grad = backend.c_order(grad)
                owner = id(grad)
            variable._grad = Tensor._make(grad, variable._device, False)
            stored.add(owner)
        else:
            current._data += grad
            bump_version(current)
    if variable._post_accumulate_hooks:
        _post_accumulate(variable)


def accumulate_grad(variable, grad, stored) -> None:
    """Add the array ``grad`` into ``variable.grad`` as ``backward`` does (a new ``.grad``
    laid out like the tensor, or an in-place add); ``stored``: ids of the memory already
    handed out, which a new ``.grad`` must not share (``ember.compile``'s replay)."""
    _accumulate(variable, grad, False, stored)


def _post_accumulate(variable) -> None:
    """``register_post_accumulate_grad_hook``'s hooks, once ``.grad`` holds the sum."""
    for hook in list(variable._post_accumulate_hooks):
        hook(variable)


def _accumulate_tensor(variable, grad, create_graph, stored):
    wanted = variable.dtype if variable._grad_dtype is None else variable._grad_dtype
    if grad.dtype is not wanted:
        grad = grad.to(wanted)
    if grad._data.shape != variable._data.shape:
        raise RuntimeError(
            f"the gradient for a tensor of shape {list(variable.shape)} came out with shape "
            f"{list(grad.shape)}")
    with _grad_lock:
        current = variable._grad
        if current is None:
            owner = id(_owner(grad, False)) if create_graph else id(_owner(grad._data, True))
            if not create_graph:
                if owner in stored or (not grad._data.flags.c_contiguous
                                       and variable._data.flags.c_contiguous):
                    grad = grad.detach().clone()  # a fresh, C-ordered copy
                    owner = id(grad._data)
                elif grad._requires_grad:
                    grad = grad.detach()
            variable._grad = grad
            stored.add(owner)
        elif create_graph or current._requires_grad:
            variable._grad = current + grad
        else:
            current._data += grad._data
            bump_version(current)
    if variable._post_accumulate_hooks:
        _post_accumulate(variable)
