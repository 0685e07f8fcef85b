"""What ``explain`` and ``ember.viz`` say about a graph: its nodes, walked without recursion,
the names users gave its tensors, and short summaries of shapes and values."""
from __future__ import annotations

import math

from .. import backend
from ..backend import CPU
from .function import AccumulateGrad


def walk(roots, edges: dict | None = None) -> list:
    """Every node reachable from ``roots`` through ``next_functions``, each once, nearest
    first (breadth first). Iterative: graphs can be 100,000 nodes deep. ``edges``, when
    given, is filled with each node's ``next_functions``."""
    order, seen = [], set()
    for node in roots:
        if node is not None and node not in seen:
            seen.add(node)
            order.append(node)
    i = 0
    while i < len(order):
        node = order[i]
        kids = node.next_functions
        if edges is not None:
            edges[node] = kids
        for child, _ in kids:
            if child is not None and child not in seen:
                seen.add(child)
                order.append(child)
        i += 1
    return order


def node_of(tensor):
    """The node a tensor's gradient flows into: its grad_fn, or its leaf's AccumulateGrad
    (None when it does not require grad)."""
    from .function import accumulator_of

    if tensor.grad_fn is not None:
        return tensor.grad_fn
    if tensor.requires_grad:
        return accumulator_of(tensor)
    return None


def names_by_node(params) -> dict:
    """{(node, output_nr): name} for a {name: tensor} mapping (``dict(model.named_parameters())``
    or any tensors of the graph, leaves or not)."""
    from ..tensor import Tensor

    if params is None:
        return {}
    if not hasattr(params, "items"):
        raise TypeError(f"params must be a dict of name -> Tensor (for example "
                        f"dict(model.named_parameters())), not {type(params).__name__}")
    names: dict = {}
    for name, tensor in params.items():
        if not isinstance(tensor, Tensor):
            raise TypeError(f"params[{name!r}] is a {type(tensor).__name__}, not a Tensor")
        node = node_of(tensor)
        if node is not None:
            names.setdefault((node, tensor.output_nr if tensor.grad_fn is not None else 0),
                             str(name))
    return names


def is_leaf_node(node) -> bool:
    return type(node) is AccumulateGrad


def format_shape(shape) -> str:
    """``[2, 3]``, as PyTorch's messages write shapes; ``[]`` for a scalar."""
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def format_number(value: float) -> str:
    if value != value:
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.4g}"


def summarize(tensor, limit: int = 4) -> str:
    """A short summary of a tensor's values: all of them when there are at most ``limit``,
    else mean, std, min and max (and how many are nan or inf)."""
    import numpy as np

    data = tensor._data
    if tensor._device is not CPU:
        xp = backend.xp_for_device(tensor._device)
        if data.size <= limit:
            data = backend.move(data, tensor._device, CPU)
        else:  # reduce on the device; copy only the few numbers back
            return _stats(xp, data, lambda v: float(v))
    data = np.asarray(data)
    if data.size <= limit:
        values = data.reshape(-1)
        if data.dtype.kind == "c":
            text = [str(complex(v)) for v in values]
        else:
            text = [format_number(float(v)) for v in values]
        return text[0] if data.ndim == 0 else "[" + ", ".join(text) + "]"
    return _stats(np, data, float)


def _stats(xp, data, to_float) -> str:
    if data.dtype.kind == "b":
        return f"{int(to_float(xp.count_nonzero(data)))} of {data.size} true"
    values = xp.abs(data) if data.dtype.kind == "c" else data.astype("float64")
    finite = xp.isfinite(values)
    bad = data.size - int(to_float(xp.count_nonzero(finite)))
    if bad:
        values = values[finite]
    prefix = "|z| " if data.dtype.kind == "c" else ""
    if values.size == 0:
        return f"{bad} nan/inf"
    mean, std = to_float(values.mean()), to_float(values.std())
    low, high = to_float(values.min()), to_float(values.max())
    if low == high:
        text = f"{prefix}all {format_number(low)}"
    else:
        text = (f"{prefix}mean {format_number(mean)}, std {format_number(std)}, "
                f"min {format_number(low)}, max {format_number(high)}")
    return text + (f", {bad} nan/inf" if bad else "")


def describe(tensor) -> str:
    """``[3] [2, 2.667, 3.333]``: shape then values."""
    return f"{format_shape(tensor.shape)} {summarize(tensor)}"
