"""``ember.viz.record(model)``: watch a forward pass through module forward hooks, so that
``ember.viz.graph`` knows which module made each node (for clusters) and the shape, dtype
and device of every module's inputs and outputs.

What is learnt is kept on the side, keyed weakly by graph node: it lives as long as the
graph does and needs no argument to ``graph``.
"""
from __future__ import annotations

import weakref

from ..autograd._describe import is_leaf_node, node_of

# node -> (module name, {module name: class name}) for the nodes a recorded module made
MODULE_OF = weakref.WeakKeyDictionary()
# node -> {output_nr: (shape, dtype, device)} seen at module boundaries
META = weakref.WeakKeyDictionary()
# AccumulateGrad node -> parameter name
LEAF_NAMES = weakref.WeakKeyDictionary()


class record:
    """Record which module of ``module`` made each autograd node during the forward passes
    run inside the ``with`` block.

    >>> model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(),
    ...                             ember.nn.Linear(4, 1))
    >>> with ember.viz.record(model):
    ...     loss = model(ember.randn(2, 3)).sum()
    >>> picture = ember.viz.graph(loss)   # nodes grouped by module: 0, 1, 2

    A node belongs to the innermost module whose forward made it: the nodes between a
    module's inputs and its outputs. Parameters are named by their dotted names.
    """

    def __init__(self, module):
        from ..nn import Module

        if not isinstance(module, Module):
            raise TypeError(f"ember.viz.record() takes an nn.Module, not {type(module).__name__}")
        self.module = module
        self._handles = []

    def __enter__(self):
        if self._handles:
            raise RuntimeError("this ember.viz.record is already active")
        named = list(self.module.named_modules())
        classes = {name: type(m).__name__ for name, m in named}
        params = {id(p): name for name, p in self.module.named_parameters()}
        for name, submodule in named:
            hook = _make_hook(name, classes, params)
            self._handles.append(submodule.register_forward_hook(hook, with_kwargs=True))
        return self

    def __exit__(self, *exc_info):
        for handle in self._handles:
            handle.remove()
        self._handles = []


def _tensors(value):
    """The Tensors in a module's arguments or output (tuples, lists and dicts, nested)."""
    from ..tensor import Tensor

    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            found.append(item)
        elif isinstance(item, (tuple, list)):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
    return found


def _note_meta(tensor) -> None:
    node = node_of(tensor)
    if node is None:
        return
    nr = tensor.output_nr if tensor.grad_fn is not None else 0
    META.setdefault(node, {})[nr] = (tuple(tensor.shape), tensor.dtype, tensor.device)


def _inside(owner: str, name: str) -> bool:
    return name == "" or owner == name or owner.startswith(name + ".")


def _make_hook(name, classes, params):
    def hook(module, args, kwargs, output):
        inputs = _tensors((args, kwargs))
        outputs = [t for t in _tensors(output) if t.requires_grad]
        for t in inputs + outputs:
            if t.requires_grad:
                _note_meta(t)
        stop = {t.grad_fn for t in inputs if t.grad_fn is not None}
        stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
        seen = set()
        while stack:
            node = stack.pop()
            if node in seen or node in stop:
                continue
            seen.add(node)
            if is_leaf_node(node):
                pname = params.get(id(node.variable))
                if pname is not None:
                    LEAF_NAMES.setdefault(node, pname)
                continue
            owner = MODULE_OF.get(node)
            if owner is None:
                MODULE_OF[node] = (name, classes)
            elif not _inside(owner[0], name):
                continue  # made outside this module's forward (by an earlier sibling)
            stack.extend(child for child, _ in node.next_functions if child is not None)
        return None

    return hook
