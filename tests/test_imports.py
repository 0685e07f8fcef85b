"""The core's shape, checked: the four core modules import in one direction, nothing is
injected, CuPy stays in the backend, and no module reaches into another package's private
names."""
from __future__ import annotations

import ast
import pathlib

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "ember"
CORE = ("tensor", "autograd", "creation", "random")
# The deliberate lazy imports: Tensor.backward calls the engine, and ember.Tensor(data)
# builds through ember.tensor(); both run long after import time.
DELIBERATE = {("tensor", "autograd", "_autograd_backward"), ("tensor", "creation", "__init__")}


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: pathlib.Path):
    """(imported module, imported names, enclosing function or None, line) for each import."""
    tree = ast.parse(path.read_text())
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef,
                                                     ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.ImportFrom):
                base = package[:len(package) - child.level + 1] if child.level else []
                module = ".".join(base + ([child.module] if child.module else []))
                found.append((module, [a.name for a in child.names], function, child.lineno))
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    found.append((alias.name, [], function, child.lineno))
            visit(child, inner)

    visit(tree, None)
    return found


def _core_group(module: str):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "ember" and parts[1] in CORE else None


def _files():
    return sorted(SRC.rglob("*.py"))


def test_core_modules_import_in_one_direction():
    edges = {}
    for path in _files():
        group = _core_group(_module_name(path))
        if group is None:
            continue
        for module, names, function, line in _imports(path):
            targets = [module] + [f"{module}.{n}" for n in names]
            target = next((g for g in map(_core_group, targets) if g and g != group), None)
            if target is None or (group, target, function) in DELIBERATE:
                continue
            edges.setdefault((group, target), []).append(f"{path.name}:{line}")
    # a cycle among four nodes: look for a path back to the start
    graph = {g: {b for (a, b) in edges if a == g} for g in CORE}

    def reaches(start, goal, seen=()):
        return any(n == goal or (n not in seen and reaches(n, goal, seen + (n,)))
                   for n in graph[start])

    cycles = [(a, b, edges[(a, b)]) for (a, b) in edges if reaches(b, a)]
    assert not cycles, f"import cycles among {CORE}: {cycles}"


def test_no_module_gets_tensor_injected():
    offenders = []
    for path in _files():
        text = path.read_text()
        if "_Tensor = None" in text or "._Tensor = " in text:
            offenders.append(str(path.relative_to(SRC)))
    assert not offenders, f"Tensor injected at import time in {offenders}"


def test_cupy_is_imported_only_in_the_cuda_backend():
    offenders = [f"{path.relative_to(SRC)}:{line}" for path in _files()
                 if path.relative_to(SRC).as_posix() != "backend/cuda.py"
                 for module, _, _, line in _imports(path)
                 if module.split(".")[0] in ("cupy", "cupyx")]
    assert not offenders, f"CuPy imported outside backend/cuda.py: {offenders}"


def _package_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


# What is left of the private imports across packages: the function table that tensor.py
# owns, and a few helpers. This list may only shrink.
KNOWN_PRIVATE = {
    ("autograd/backward_math.py", "_in_float64"), ("creation.py", "_legacy_type_name"),
    ("nn/modules/container.py", "_legacy_type_name"), ("nn/modules/module.py", "_parse_to"),
    ("ops/arithmetic.py", "_F"), ("ops/registry.py", "_F"),
    ("ops/sampling.py", "_device"), ("ops/sampling.py", "_dtype_or_default"),
    ("ops/sampling.py", "_finish"), ("ops/sampling.py", "_shape"),
}


def test_no_module_imports_another_packages_private_names():
    offenders = []
    for path in _files():
        here = _module_name(path)
        if path.name == "__init__.py":
            here += ".__init__"
        for module, names, _, line in _imports(path):
            if not module.startswith("ember"):
                continue
            where = path.relative_to(SRC).as_posix()
            private = [n for n in names if n.startswith("_") and not n.startswith("__")
                       and (where, n) not in KNOWN_PRIVATE]
            if private and _package_of(module) != _package_of(here):
                offenders.append(f"{path.relative_to(SRC)}:{line} {module} {private}")
    assert not offenders, "private names imported across packages:\n" + "\n".join(offenders)
