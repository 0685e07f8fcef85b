"""Random programs of registered ops, run the same way by ember and by PyTorch.

A program is a list of instructions over numbered values (the leaves first, then each
instruction's result):
- ("unary", op, a, layout) and ("binary", op, a, b, layouts): elementwise ops of the
  registry (those whose samples come from its unary/binary builders). Each tensor operand
  is first mapped into the op's domain, ``low + (high - low) * sigmoid(value)`` with the
  bounds the op's own samples use, then given a layout: as is, negative strides, Fortran
  order or a stride-2 view. ``b`` may be a Python scalar where the op takes one.
- ("reduce", op, a, dim, keepdim): sum, mean, prod, amax, amin, logsumexp, var, std.
- ("view", kind, a, params): transpose, permute, a slice with a step, select, expand,
  unsqueeze, reshape(-1), flip.
Leaves are float64 with random shapes (0-d, zero-size dims, broadcasting partners), and
ember's leaves may themselves be non-contiguous: NumPy's flip (negative strides), Fortran
order or a stepped slice of a larger array.
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

import ember
from ember.ops import OPS

from .budget import hypothesis

st = hypothesis.strategies

REDUCTIONS = ("sum", "mean", "prod", "amax", "amin", "logsumexp", "var", "std")
# reductions PyTorch refuses over an empty dimension (IndexError)
NEEDS_ELEMENTS = ("amax", "amin")
# Ops whose result for a NaN input differs from PyTorch's: test_special_values.py has the
# strict xfail tests that show each; random graphs leave them out.
KNOWN_NAN_BUGS = ()
# Ops whose backward sends a NaN gradient elsewhere than PyTorch's does (see
# test_graphs._known_nan_gradient and the xfail tests of test_special_values.py).
KNOWN_NAN_GRADIENT_OPS: tuple = ()
# PyTorch's float64 Bessel functions of the first and second kind and its Airy Ai are
# accurate to about 2e-7 absolute (Ai(-2.226) is off by 1.3e-6; J0(5.5), near its zero,
# by 2e-5 relative); ember's match SciPy and mpmath. Compared with PyTorch, these get an
# absolute tolerance of 1e-5 (the deep profile, EMBER_HYPOTHESIS_PROFILE=deep, finds them).
TORCH_APPROXIMATE = ("special.bessel_j0", "special.bessel_j1", "special.bessel_y0",
                     "special.bessel_y1", "special.airy_ai")
VIEWS = ("transpose", "permute", "slice", "select", "expand", "unsqueeze", "reshape", "flip")
LAYOUTS = ("as is", "negative strides", "fortran", "strided")


# ----------------------------------------------------------------------------- the op pool
class _Recorder:
    """A stand-in for the op table's ``make``: records the domain each sample asks for."""

    def __init__(self):
        self.domains = []

    def __call__(self, shape, low=-2.0, high=2.0, requires_grad=True, dtype=None):
        self.domains.append((float(low), float(high)))
        return ember.zeros(shape, dtype=ember.float64).requires_grad_(requires_grad)


def _builder(info) -> str:
    function = info.samples
    while isinstance(function, functools.partial):
        function = function.func
    return getattr(function, "__qualname__", "").split(".")[0]


# elementwise ops with several outputs (the programs chain one tensor through each op)
MULTI_OUTPUT = ("frexp",)


def _elementwise():
    unary, binary = {}, {}
    for name, info in sorted(OPS.items()):
        if info.samples is None or info.torch is None or name in MULTI_OUTPUT:
            continue
        builder = _builder(info)
        if builder not in ("unary", "_samples_in", "binary"):
            continue
        recorder = _Recorder()
        samples = info.samples(recorder)
        if builder == "binary":
            scalars = [s.args[1] for s in samples if not isinstance(s.args[1], ember.Tensor)]
            binary[name] = (recorder.domains[0], recorder.domains[1], bool(scalars))
        else:
            unary[name] = recorder.domains[0]
    return unary, binary


UNARY, BINARY = _elementwise()


# ----------------------------------------------------------------------------- libraries
class Library:
    """The functions a program calls: ember's registry, or PyTorch's references to it."""

    def __init__(self, torch=None):
        self.torch = torch

    def op(self, name: str):
        info = OPS[name]
        if self.torch is None:
            return info.function
        reference = info.torch
        if callable(reference):
            return lambda *args, **kwargs: reference(self.torch, *args, **kwargs)
        target = self.torch
        for part in (reference if reference != "same" else name).split("."):
            target = getattr(target, part, None)
            if target is None:
                return getattr(self.torch.Tensor, reference)
        return target

    def stack(self, tensors, dim):
        return (self.torch or ember).stack(tensors, dim)


EMBER = Library()


def _into_domain(x, domain):
    low, high = domain
    return low + (high - low) * x.sigmoid()


def _layout(x, layout: str, library: Library):
    """The same values as ``x``, laid out differently in memory (a view of a copy)."""
    if layout == "as is" or x.dim() == 0:
        return x
    if layout == "negative strides":  # as ember's leaves from NumPy's flip; for PyTorch a
        return x.flip(0).contiguous().flip(0)  # copy, ember's flip copies too
    if layout == "fortran" and x.dim() >= 2:
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    if layout == "strided":
        return library.stack([x, x], -1).select(-1, 0)
    return x


def _view(x, kind: str, params):
    if kind == "transpose":
        return x.transpose(*params)
    if kind == "permute":
        return x.permute(*params)
    if kind == "slice":
        dim, start, step = params
        return x[(slice(None),) * dim + (slice(start, None, step),)]
    if kind == "select":
        return x.select(*params)
    if kind == "expand":
        return x.unsqueeze(0).expand(params, *x.shape)
    if kind == "unsqueeze":
        return x.unsqueeze(params)
    if kind == "reshape":
        return x.reshape(-1)
    if kind == "flip":
        return x.flip(params)
    raise AssertionError(kind)


def step(instruction, values, library: Library):
    """Run one instruction on the values so far."""
    kind, name = instruction[0], instruction[1]
    if kind == "unary":
        _, _, a, layout = instruction
        x = _layout(_into_domain(values[a], UNARY[name]), layout, library)
        return library.op(name)(x)
    if kind == "binary":
        _, _, a, b, layouts = instruction
        first_domain, second_domain, _ = BINARY[name]
        x = _layout(_into_domain(values[a], first_domain), layouts[0], library)
        if isinstance(b, tuple):  # ("scalar", value)
            y = b[1]
        else:
            y = _layout(_into_domain(values[b], second_domain), layouts[1], library)
        return library.op(name)(x, y)
    if kind == "reduce":
        _, _, a, dim, keepdim = instruction
        if dim is None:
            return library.op(name)(values[a])
        return library.op(name)(values[a], dim, keepdim=keepdim)
    _, _, a, params = instruction
    return _view(values[a], name, params)


def run(program, leaves, library: Library = EMBER):
    values = list(leaves)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's and PyTorch's warnings about nan and dof
        for instruction in program:
            values.append(step(instruction, values, library))
    return values[-1]


def differentiable(program) -> bool:
    """Whether every op of the program carries gradients. ember's floor_divide has none
    (its result doesn't require grad); PyTorch's result does, with a backward that raises."""
    return all(instruction[0] == "view" or OPS[instruction[1]].differentiable
               for instruction in program)


def describe(program, leaves) -> str:
    lines = [f"leaf {i}: shape {list(t.shape)} strides {t._data.strides}"
             for i, t in enumerate(leaves)]
    lines += [f"v{len(leaves) + i} = {instruction}" for i, instruction in enumerate(program)]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- strategies
_SIZES = st.sampled_from([1, 2, 3, 1, 2, 3, 0])


@st.composite
def shapes(draw, max_dims: int = 3):
    return tuple(draw(_SIZES) for _ in range(draw(st.sampled_from(range(max_dims + 1)))))


@st.composite
def broadcast_partner(draw, shape):
    """A shape that broadcasts with ``shape``: a suffix of it with some sizes set to 1,
    possibly with a leading size-1 or size-2 dimension before it."""
    keep = draw(st.integers(0, len(shape)))
    partner = [1 if draw(st.booleans()) else size for size in shape[len(shape) - keep:]]
    if len(shape) < 3 and draw(st.booleans()):
        partner = [draw(st.sampled_from([1, 2]))] + partner
    return tuple(partner)


def make_leaf(values: np.ndarray, layout: str) -> ember.Tensor:
    """A float64 leaf holding ``values``, stored with the given layout."""
    if values.ndim == 0:
        array = np.array(values)
    elif layout == "negative strides":
        array = np.flip(np.flip(values).copy())
    elif layout == "fortran":
        array = np.asfortranarray(values)
    elif layout == "strided":
        wide = np.empty(values.shape + (2,))
        wide[..., 0] = values
        array = wide[..., 0]
    else:
        array = np.array(values)
    assert np.array_equal(array, values)
    return ember.from_numpy(array).requires_grad_(True)


def _dims(draw, ndim: int):
    if ndim == 0:
        return draw(st.sampled_from([0, -1]))
    dims = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    dims = [d - ndim if draw(st.booleans()) else d for d in dims]
    return dims[0] if len(dims) == 1 and draw(st.booleans()) else tuple(dims)


def _instruction(draw, values):
    """One instruction over the values so far (their shapes are known: they were run)."""
    a = draw(st.integers(0, len(values) - 1))
    shape = tuple(values[a].shape)
    ndim = len(shape)
    kind = draw(st.sampled_from(["unary", "binary", "reduce", "view"]))
    if kind == "unary":
        name = draw(st.sampled_from(sorted(UNARY)))
        if name in KNOWN_NAN_BUGS and bool(values[a].isnan().any()):
            hypothesis.assume(False)  # reported, with its own xfail test
        return ("unary", name, a, draw(st.sampled_from(LAYOUTS)))
    if kind == "binary":
        name = draw(st.sampled_from(sorted(BINARY)))
        partners = [i for i, v in enumerate(values) if _broadcasts(shape, tuple(v.shape))]
        if BINARY[name][2] and draw(st.integers(0, 3)) == 0:
            low, high = BINARY[name][1]
            fraction = draw(st.floats(0.05, 0.95))
            b = ("scalar", round(low + (high - low) * fraction, 3))
            integers = [i for i in range(math.ceil(low), math.floor(high) + 1)
                        if low < i < high]
            if integers and draw(st.booleans()):
                b = ("scalar", draw(st.sampled_from(integers)))
        else:
            b = draw(st.sampled_from(partners))
            if name in KNOWN_NAN_BUGS and (bool(values[a].isnan().any()) or
                                           bool(values[b].isnan().any())):
                hypothesis.assume(False)  # reported, with its own xfail test
        return ("binary", name, a, b, (draw(st.sampled_from(LAYOUTS)),
                                       draw(st.sampled_from(LAYOUTS))))
    if kind == "reduce":
        name = draw(st.sampled_from(REDUCTIONS))
        if name != "logsumexp" and draw(st.integers(0, 3)) == 0:
            return ("reduce", name, a, None, False)
        dim = _dims(draw, ndim)
        if name == "prod" and isinstance(dim, tuple):  # PyTorch's prod takes one dim
            dim = dim[0]
        return ("reduce", name, a, dim, draw(st.booleans()))
    views = [v for v in VIEWS if ndim >= 1 or v in ("expand", "unsqueeze", "reshape")]
    view = draw(st.sampled_from(views))
    if view == "transpose":
        params = (draw(st.integers(-ndim, ndim - 1)), draw(st.integers(-ndim, ndim - 1)))
    elif view == "permute":
        params = tuple(draw(st.permutations(range(ndim))))
    elif view == "slice":
        dim = draw(st.integers(0, ndim - 1))
        params = (dim, draw(st.integers(0, shape[dim])), draw(st.integers(1, 3)))
    elif view == "select":
        candidates = [d for d in range(ndim) if shape[d] > 0]
        if not candidates:
            return ("view", "reshape", a, None)
        dim = draw(st.sampled_from(candidates))
        params = (dim, draw(st.integers(-shape[dim], shape[dim] - 1)))
    elif view == "expand":
        params = draw(st.sampled_from([1, 2, 2, 0]))
    elif view == "unsqueeze":
        params = draw(st.integers(-ndim - 1, ndim))
    elif view == "flip":
        params = tuple(draw(st.lists(st.integers(0, ndim - 1), min_size=1, unique=True)))
    else:
        params = None
    return ("view", view, a, params)


def _broadcasts(a, b) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


@st.composite
def programs(draw, max_ops: int = 4):
    """(program, leaves, leaf values, seed, error): ember's leaves and a program over them.
    ``error`` is the exception ember raised at the program's last instruction, if any
    (the program stops there)."""
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    first = draw(shapes())
    leaf_shapes = [first] + ([draw(broadcast_partner(first))] if draw(st.booleans()) else [])
    arrays = [rng.uniform(-2.0, 2.0, size=s) for s in leaf_shapes]
    leaves = [make_leaf(a, draw(st.sampled_from(LAYOUTS))) for a in arrays]
    values, program, error = list(leaves), [], None
    with ember.no_grad():
        for _ in range(draw(st.sampled_from(range(1, max_ops + 1)))):
            instruction = _instruction(draw, values)
            program.append(instruction)
            try:
                values.append(run([instruction], values))
            except Exception as raised:  # compared with PyTorch by the test
                error = raised
                break
    return program, leaves, arrays, seed, error
