"""The autograd graph as a TensorBoard ``GraphDef``.

Each ``grad_fn`` node (``AddmmBackward0``) is one TensorBoard node: the forward op it
records, with its backward's name. Edges follow ``next_functions``, so the picture reads
as data flows forward: parameters and inputs (``AccumulateGrad`` leaves) at the bottom,
the outputs at the top. With a model, forward hooks on its modules learn which module made
which node, and the module path becomes the node's name prefix (``Net/fc1/AddmmBackward0``);
the tensors the hooks see give the shapes and dtypes (the ``_output_shapes`` and ``dtype``
attributes). Every walk is iterative: graphs may be 100,000 nodes deep.
"""
from __future__ import annotations

from ...grad_mode import enable_grad
from ...nn.modules.module import Module
from ...tensor import Tensor
from ._proto import AttrValue, GraphDef, NodeDef, TensorShapeProto, VersionDef, types_pb2

_DATA_TYPES = {
    "float16": types_pb2.DT_HALF, "float32": types_pb2.DT_FLOAT,
    "float64": types_pb2.DT_DOUBLE, "bfloat16": types_pb2.DT_BFLOAT16,
    "int8": types_pb2.DT_INT8, "int16": types_pb2.DT_INT16, "int32": types_pb2.DT_INT32,
    "int64": types_pb2.DT_INT64, "uint8": types_pb2.DT_UINT8, "bool": types_pb2.DT_BOOL,
    "complex64": types_pb2.DT_COMPLEX64, "complex128": types_pb2.DT_COMPLEX128,
}


class _Leaf:
    """A leaf tensor given as an output: it has no ``grad_fn``, so stand in for its node."""

    next_functions = ()

    def __init__(self, variable):
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"


def _tensors_in(value) -> list:
    """The tensors in a (nested) tuple, list or dict, in order."""
    found, stack, seen = [], [value], set()
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            found.append(item)
        elif isinstance(item, (tuple, list, dict)) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(reversed(list(item.values() if isinstance(item, dict) else item)))
    return found


def _is_leaf_node(node) -> bool:
    return node.name() == "AccumulateGrad" and hasattr(node, "variable")


class _Record:
    """What is known about the graph's nodes: module scopes, output metadata, names."""

    def __init__(self):
        self.scope = {}  # id(node) -> module path, e.g. 'Net/fc1'
        self.meta = {}  # (id(node), output_nr) -> (shape, dtype, device)
        self.leaf_names = {}  # id(leaf tensor) -> (node name, parameter name)
        self.inputs = {}  # id(node) -> node name, for the model's inputs
        self.keep = []  # the nodes whose ids are keys above, kept alive while in use
        self._calls = []  # per module call in progress: its inputs' nodes

    def see(self, tensors) -> None:
        for t in tensors:
            node = t.grad_fn
            if node is not None:
                self.meta[(id(node), t.output_nr)] = (tuple(t.shape), t.dtype, t.device)
                self.keep.append(node)

    def enter(self, tensors) -> None:
        self.see(tensors)
        self._calls.append({id(t.grad_fn) for t in tensors if t.grad_fn is not None})

    def leave(self, scope: str, outputs) -> None:
        """Give ``scope`` to the nodes between the module's outputs and its inputs that no
        module inside it has claimed (those exited first and keep their deeper scope)."""
        boundary = self._calls.pop() if self._calls else set()
        self.see(outputs)
        stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
        visited = set()
        while stack:
            node = stack.pop()
            key = id(node)
            if key in visited or key in boundary:
                continue
            visited.add(key)
            if key not in self.scope:
                self.scope[key] = scope
                self.keep.append(node)
            stack.extend(n for n, _ in node.next_functions if n is not None)


def _join(scope: str, name: str) -> str:
    return "/".join(part for part in (scope, name) if part)


def _shape(shape) -> TensorShapeProto:
    if shape is None:
        return TensorShapeProto(unknown_rank=True)
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(d)) for d in shape])


def _metadata_attrs(metas: list) -> dict:
    """``_output_shapes`` (TensorBoard labels edges with it) and ``dtype`` from the known
    (shape, dtype, device) of each output; None where unknown."""
    attrs = {}
    if any(m is not None for m in metas):
        attrs["_output_shapes"] = AttrValue(list=AttrValue.ListValue(
            shape=[_shape(m[0] if m is not None else None) for m in metas]))
    types = [_DATA_TYPES.get(m[1].name) if m is not None else None for m in metas]
    if len(types) == 1 and types[0] is not None:
        attrs["dtype"] = AttrValue(type=types[0])
    elif types and all(t is not None for t in types):
        attrs["dtypes"] = AttrValue(list=AttrValue.ListValue(type=types))
    return attrs


def _learn_from_node(record: _Record, node) -> None:
    """Nodes that keep their outputs' (shape, dtype) (those with several outputs, user
    Functions) fill in what no tensor showed."""
    known = getattr(node, "_output_meta", None)
    if not isinstance(known, (list, tuple)):
        return
    device = getattr(node, "_device", "")
    for nr, item in enumerate(known):
        if isinstance(item, tuple) and len(item) == 2 and hasattr(item[1], "name"):
            record.meta.setdefault((id(node), nr), (tuple(item[0]), item[1], device))


def _postorder(roots, stop: dict) -> list:
    """Every node reachable from ``roots``, each after the nodes it depends on."""
    order, state = [], set()
    stack = [(node, False) for node in reversed(roots)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in state:
            continue
        state.add(id(node))
        stack.append((node, True))
        if id(node) not in stop:
            for nxt, _ in reversed(node.next_functions):
                if nxt is not None and id(nxt) not in state:
                    stack.append((nxt, False))
    return order


def build(outputs: list, record: _Record, verbose: bool = False) -> GraphDef:
    """The GraphDef of the graph behind ``outputs`` (tensors that require grad)."""
    roots, output_edges = [], []
    for t in outputs:
        node = t.grad_fn if t.grad_fn is not None else _Leaf(t)
        roots.append(node)
        output_edges.append((node, t.output_nr if t.grad_fn is not None else 0, t))
    order = _postorder(roots, record.inputs)
    names, taken, counters = {}, set(), {}

    def unique(base: str) -> str:
        name, k = base, counters.get(base, 0)
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        counters[base] = k
        taken.add(name)
        return name

    outputs_used = {}
    for node in order:
        for nxt, nr in node.next_functions:
            if nxt is not None:
                outputs_used[id(nxt)] = max(outputs_used.get(id(nxt), 0), nr)
    for node, nr, _ in output_edges:
        outputs_used[id(node)] = max(outputs_used.get(id(node), 0), nr)
    for node in order:  # leaves and inputs first, so parameters keep their plain names
        key = id(node)
        if key in record.inputs:
            names[key] = unique(record.inputs[key])
        elif _is_leaf_node(node) and id(node.variable) in record.leaf_names:
            names[key] = unique(record.leaf_names[id(node.variable)][0])
    nodes = []
    for node in order:
        key = id(node)
        attrs = {}
        if key in record.inputs:
            op = "Input"
        elif _is_leaf_node(node):
            op = "AccumulateGrad"
            v = node.variable
            record.meta[(key, 0)] = (tuple(v.shape), v.dtype, v.device)
            attrs["requires_grad"] = AttrValue(b=bool(v.requires_grad))
            if id(v) in record.leaf_names:
                attrs["parameter"] = AttrValue(s=record.leaf_names[id(v)][1].encode())
        else:
            op = node.name()
            _learn_from_node(record, node)
            # The forward op this node records: its public name where the op has one,
            # else its class (``Add`` for ``AddBackward0``, a user Function's own name).
            forward = getattr(node, "op_name", None) or type(node).__name__
            attrs["forward_op"] = AttrValue(s=forward.encode())
        if key not in names:
            names[key] = unique(_join(record.scope.get(key, ""), op))
        metas = [record.meta.get((key, nr)) for nr in range(outputs_used.get(key, 0) + 1)]
        attrs.update(_metadata_attrs(metas))
        inputs = [] if key in record.inputs else [
            names[id(nxt)] + (f":{nr}" if nr else "")
            for nxt, nr in node.next_functions if nxt is not None]
        device = next((str(m[2]) for m in metas if m is not None), "")
        nodes.append(NodeDef(name=names[key], op=op, input=inputs, device=device, attr=attrs))
    for i, (node, nr, t) in enumerate(output_edges):
        name = unique("output" if len(output_edges) == 1 else f"output_{i}")
        nodes.append(NodeDef(
            name=name, op="Output", input=[names[id(node)] + (f":{nr}" if nr else "")],
            device=str(t.device),
            attr=_metadata_attrs([(tuple(t.shape), t.dtype, t.device)])))
    if verbose:
        for n in nodes:
            shapes = n.attr["_output_shapes"].list.shape if "_output_shapes" in n.attr else []
            shown = ", ".join("?" if s.unknown_rank else str([d.size for d in s.dim])
                              for s in shapes)
            print(f"{n.name} = {n.op}({', '.join(n.input)})" + (f"  # {shown}" if shown else ""))
    return GraphDef(node=nodes, versions=VersionDef(producer=22))


def _name_params(record: _Record, params, root: str = "") -> None:
    if params is None:
        return
    if not isinstance(params, dict):
        raise TypeError("params must be a dict of name -> Tensor, such as "
                        f"dict(model.named_parameters()), got {type(params).__name__}")
    for pname, tensor in params.items():
        if not isinstance(tensor, Tensor):
            raise TypeError(f"params[{pname!r}] is a {type(tensor).__name__}, not a Tensor")
        record.leaf_names.setdefault(
            id(tensor), (_join(root, str(pname).replace(".", "/")), str(pname)))


def graph_of_tensors(outputs, params=None, verbose: bool = False) -> GraphDef:
    """The graph behind one output tensor or several (a tuple or list)."""
    tensors = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    tracked = [t for t in tensors if t.grad_fn is not None or t.requires_grad]
    if not tracked:
        raise RuntimeError(
            "add_graph got tensors that are not part of an autograd graph (none requires grad "
            "or has a grad_fn): compute them from tensors with requires_grad=True, outside "
            "ember.no_grad()")
    record = _Record()
    record.see(tracked)
    _name_params(record, params)
    return build(tracked, record, verbose)


def graph_of_model(model, input_to_model, params=None, verbose: bool = False) -> GraphDef:
    """Run ``model`` on ``input_to_model`` with hooks on its modules and return the graph of
    what it computed, module paths as name prefixes.

    The floating-point input tensors enter as fresh leaves that require grad (through a
    clone, so that the model may change them in place): the ops on them join the graph,
    as the forward ops do in a traced graph."""
    if input_to_model is None:
        raise TypeError(
            "add_graph(model) needs input_to_model, an example input to run the model on "
            "(or pass an output tensor instead: add_graph(model(x)))")
    if isinstance(input_to_model, (tuple, list)):
        args, labels = list(input_to_model), [f"input_{i}" for i in range(len(input_to_model))]
    else:
        args, labels = [input_to_model], ["input"]
    record = _Record()
    prepared = []
    with enable_grad():
        for arg, label in zip(args, labels):
            if isinstance(arg, Tensor) and arg.is_floating_point():
                copy = arg.detach().requires_grad_(True).clone()
                record.inputs[id(copy.grad_fn)] = label
                record.see([copy])
                arg = copy
            prepared.append(arg)
    root = type(model).__name__
    handles = []
    if isinstance(model, Module):
        for pname, p in model.named_parameters():
            owner, _, leaf = pname.rpartition(".")
            record.leaf_names[id(p)] = (_join(_join(root, owner.replace(".", "/")), leaf), pname)
        for name, module in model.named_modules():
            scope = _join(root, name.replace(".", "/"))
            handles.append(module.register_forward_pre_hook(
                lambda m, a, kw: record.enter(_tensors_in((a, kw))), with_kwargs=True))
            handles.append(module.register_forward_hook(
                lambda m, a, kw, out, scope=scope: record.leave(scope, _tensors_in(out)),
                with_kwargs=True))
    elif not callable(model):
        raise TypeError(f"add_graph needs an nn.Module, a callable or output tensors, got "
                        f"{type(model).__name__}")
    try:
        with enable_grad():
            output = model(*prepared)
    finally:
        for handle in handles:
            handle.remove()
    _name_params(record, params, root)
    tracked = [t for t in _tensors_in(output) if t.grad_fn is not None or t.requires_grad]
    if not tracked:
        raise RuntimeError(
            f"add_graph: {root} returned no tensor that is part of an autograd graph (none "
            "requires grad), so there is no graph to draw; give it parameters that require "
            "grad or a floating-point input")
    return build(tracked, record, verbose)
