"""Lowering a record to one straight-line Python function of NumPy calls.

A trace (``trace._Held``) holds, per op, its class and arguments; replaying it op by op
still runs each op's Python (``forward``, ``save_for_backward``, ``backward``). Lowering runs
each op's own ``forward`` and each node's ``backward`` once more, on ``_Rec`` arrays: an
ndarray subclass that records every NumPy call made on it (ufuncs and operators through
``__array_ufunc__``, NumPy functions through ``__array_function__``, methods, indexing, and
array creation through ``ctx.xp``) as one line of Python source. Whatever turns a value into
Python (``bool``, ``float``, ``.item()``, iteration), makes a view the record cannot see, or
mixes in an array the record did not make, refuses: that op keeps an op-level call of its
own ``forward``/``backward`` in the generated function, and the others stay lowered.

So each op's forward and backward stay written once, in ``ember.ops``; the generated code is
what those methods did with the arrays, in the order they did it.
"""
from __future__ import annotations

import math
import operator
import re
import warnings

import numpy as np

from .. import random
from ..autograd.backward_math import ArrayMath

_FORWARD, _BACKWARD, _CALL, _COPY = 0, 1, 2, 3
_MAX_PASSES = 64
# Arrays at least this big are deleted after their last use in the generated function, so
# their memory goes back as eager's would (small ones are not worth the line).
_FREED_BYTES = 1 << 14
_NAME = re.compile(r"\b[vg]\d+\b")
_NAME_ANY = re.compile(r"\b[vga]\d+\b")
# the variables a line writes into: out=(v1, ), v1[...] = ..., v1 += ..., v1.fill(...)
_ASSIGN = re.compile(r"^((?:[vga]\d+, )*[vga]\d+,?) = ")
_WRITES = re.compile(r"out=\(([vga]\d+)|^([vga]\d+)\[|^([vga]\d+) \S+= |"
                     r"^([vga]\d+)\.(?:fill|sort|put|partition|itemset|resize|setfield)\(")


class _Refuse(BaseException):
    """Raised inside an op's Python while it is recorded (a BaseException, so an op's own
    ``except Exception`` does not swallow it)."""


# functions whose results have data-dependent shapes, or hand back Python values
_REFUSED = {np.nonzero, np.argwhere, np.flatnonzero, np.unique, np.extract, np.compress,
            np.count_nonzero, np.array_equal, np.array_equiv, np.allclose, np.trim_zeros,
            np.shares_memory, np.may_share_memory, np.histogram, np.bincount, np.copyto}
for _name in ("unique_values", "unique_counts", "unique_inverse", "unique_all"):
    if hasattr(np, _name):
        _REFUSED.add(getattr(np, _name))
# functions that read only shapes and dtypes (guarded by the trace's signature)
_METADATA = {np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj, np.isrealobj,
             np.can_cast}
# array creation without an array argument (so no __array_function__): recorded via ctx.xp
_CREATION = {"empty", "zeros", "ones", "full", "arange", "linspace", "eye", "identity",
             "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "tri",
             "indices", "empty_like", "zeros_like", "ones_like", "full_like"}
# methods that are NumPy's wrappers of one ufunc's reduce (numpy/_core/_methods.py)
_REDUCTIONS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}
_REDUCE_KEYWORDS = {"axis", "dtype", "keepdims"}
_FAST_ARITHMETIC = {np.add: "+", np.subtract: "-", np.multiply: "*", np.true_divide: "/"}


class _Rec(np.ndarray):
    """A view of a real array that records what is done with it (see the module doc)."""

    def __array_finalize__(self, obj):
        low = getattr(obj, "_low", None)
        if low is not None and not low.wrapping:
            low.refuse("a view or copy was made outside the recorded calls")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return self._low.ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return self._low.function(func, args, kwargs)

    # operators that NumPy does not route through a ufunc in the same way: recorded as
    # the operator, so the replay takes the path eager takes (x ** 2 is a square)
    def __pow__(self, other):
        return self._low.operator("**", operator.pow, self, other)

    def __rpow__(self, other):
        return self._low.operator("**", operator.pow, other, self)

    def __ipow__(self, other):
        return self._low.inplace("**=", operator.ipow, self, other)

    def __getitem__(self, index):
        return self._low.getitem(self, index)

    def __setitem__(self, index, value):
        self._low.setitem(self, index, value)

    @property
    def T(self):
        return self._low.attribute(self, "T")

    @property
    def mT(self):
        return self._low.attribute(self, "mT")

    @property
    def real(self):
        return self._low.attribute(self, "real")

    @property
    def imag(self):
        return self._low.attribute(self, "imag")

    @property
    def flat(self):
        self._low.refuse("ndarray.flat")

    def __setattr__(self, name, value):
        if name in ("shape", "strides", "dtype", "data"):
            self._low.refuse(f"ndarray.{name} assigned")
        object.__setattr__(self, name, value)

    def __copy__(self):
        return self._low.method(self, "copy", (), {})

    def __deepcopy__(self, memo=None):
        return self._low.method(self, "copy", (), {})


def _recorded_method(name):
    def method(self, *args, **kwargs):
        return self._low.method(self, name, args, kwargs)
    method.__name__ = name
    return method


def _in_place_method(name):
    def method(self, *args, **kwargs):
        return self._low.method(self, name, args, kwargs, in_place=True)
    method.__name__ = name
    return method


def _escape(name):
    def method(self, *args, **kwargs):
        self._low.refuse(f"{name} read an array's value into Python")
    method.__name__ = name
    return method


for _name in ("all", "any", "argmax", "argmin", "argpartition", "argsort", "astype", "choose",
              "clip", "conj", "conjugate", "copy", "cumprod", "cumsum", "diagonal", "dot",
              "flatten", "max", "mean", "min", "prod", "ptp", "ravel", "repeat", "reshape",
              "round", "searchsorted", "squeeze", "std", "sum", "swapaxes", "take", "trace",
              "transpose", "var"):
    setattr(_Rec, _name, _recorded_method(_name))
for _name in ("fill", "sort", "put", "partition", "itemset", "resize", "setfield"):
    setattr(_Rec, _name, _in_place_method(_name))
for _name in ("__bool__", "__float__", "__int__", "__index__", "__complex__", "item",
              "tolist", "tobytes", "tofile", "__iter__", "__repr__", "__str__", "__format__",
              "__contains__", "__reduce__", "__reduce_ex__", "nonzero", "view", "getfield",
              "byteswap", "dump", "dumps", "__array__", "__dlpack__", "compress"):
    setattr(_Rec, _name, _escape(_name))


class _Value:
    """What ``Lowering.values`` holds for an ``a`` name (an ndarray form of a scalar)."""

    __slots__ = ("_a",)


def _same_value(a, b) -> bool:
    if isinstance(a, np.ndarray) != isinstance(b, np.ndarray):
        return False
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


_BITS = {np.dtype(np.float32): np.dtype(np.int32), np.dtype(np.float64): np.dtype(np.int64)}


def _masks_with_zero(args, real) -> bool:
    """``np.where(mask, x, 0.0)`` (a ReLU's gradient, say) on C-ordered arrays of one
    shape: ``_where_zero`` gives the same bits without NumPy's branch per element."""
    if len(args) != 3:
        return False
    mask, x, zero = args
    return (type(mask) is _Rec and type(x) is _Rec and not mask._scalar and not x._scalar
            and (type(zero) is float and zero == 0.0 and math.copysign(1.0, zero) > 0
                 or type(zero) is int and zero == 0)
            and mask._a.dtype == np.bool_ and x._a.dtype in _BITS
            and mask._a.shape == x._a.shape and mask._a.flags.c_contiguous
            and x._a.flags.c_contiguous and type(real) is np.ndarray
            and real.dtype == x._a.dtype and real.flags.c_contiguous)


def _where_zero(mask, x):
    """``np.where(mask, x, 0.0)``: x's bits where mask holds, +0.0's (all zero) elsewhere."""
    bits = _BITS[x.dtype]
    keep = np.negative(mask.view(np.int8), dtype=bits)  # 0 or all ones
    return np.bitwise_and(x.view(bits), keep).view(x.dtype)


class _XP:
    """``ctx.xp`` while an op is recorded: NumPy, with array creation recorded."""

    def __init__(self, low):
        self._low = low

    def __getattr__(self, name):
        if name == "random":
            self._low.refuse("an op drew random numbers")
        if name == "lib":
            self.lib = _Lib(self._low)
            return self.lib
        real = getattr(np, name)
        if name in _CREATION:
            low = self._low

            def create(*args, **kwargs):
                return low.record(low.const(real), args, kwargs, real)
            setattr(self, name, create)
            return create
        return real


class _Lib:
    """``ctx.xp.lib`` while an op is recorded: ``stride_tricks.as_strided`` is recorded
    (strides computed from a recorded array's strides hold at replay: the signature guards
    the inputs' layouts, and NumPy lays out results from those)."""

    def __init__(self, low):
        self.stride_tricks = _StrideTricks(low)

    def __getattr__(self, name):
        return getattr(np.lib, name)


class _StrideTricks:
    def __init__(self, low):
        real = np.lib.stride_tricks.as_strided
        self.as_strided = lambda *a, **k: low.record(low.const(real), a, k, real)

    def __getattr__(self, name):
        return getattr(np.lib.stride_tricks, name)


class Lowering:
    """One pass over a record: the recorded source lines and the constants they use."""

    def __init__(self):
        self.lines = []
        self.names = {}          # global name of the generated function -> object
        self.ids = {}            # id(constant) -> its global name
        self.n = 0
        self.wrapping = False
        self.refusal = None
        self.shape_dependent = False
        self.as_array = {}       # variable name -> name of its ndarray form
        self.big = set()         # variables deleted after their last use
        self.values = {}         # variable name -> its _Rec (the real value is ._a)
        self.errors = np.geterr()
        self.xp = _XP(self)
        self.math = ArrayMath(self.xp)

    # ---------------------------------------------------------------- values and code
    def refuse(self, why: str, shape: bool = False):
        """Stop recording this op; ``shape``: its output shape may depend on values."""
        if self.refusal is None:
            self.refusal = why
            self.shape_dependent = shape
        raise _Refuse(why)

    def const(self, obj) -> str:
        name = self.ids.get(id(obj))
        if name is None:
            name = f"_k{len(self.names)}"
            self.names[name] = obj
            self.ids[id(obj)] = name
        return name

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def wrap(self, value, code=None):
        """A new variable holding ``value`` (an ndarray, or a NumPy scalar at replay)."""
        name = f"v{self.n}"
        self.n += 1
        if code is not None:
            self.emit(f"{name} = {code}")
        array = value if isinstance(value, np.ndarray) else np.asarray(value)
        self.wrapping = True
        try:
            rec = array.view(_Rec)
        finally:
            self.wrapping = False
        rec._low, rec._v, rec._a = self, name, value
        self.values[name] = rec
        if array.nbytes >= _FREED_BYTES:
            self.big.add(name)
        rec._scalar = not isinstance(value, np.ndarray)
        return rec

    def wrap_value(self, array):
        """A stand-in holding ``array`` for ``verify`` (not a variable of the code)."""
        holder = _Value()
        holder._a = array
        return holder

    def verify(self, start: int) -> str | None:
        """Run the lines recorded since ``start`` on the recorded inputs and check that
        they give every variable they make the value the op's own code gave it; the reason
        when not (the op wrote through a view the record could not see, say)."""
        lines = self.lines[start:]
        if not lines:
            return None
        made, written = set(), set()
        for line in lines:
            body = line.rsplit("\n", 1)[-1].strip()  # (the line under a ``with``)
            assigned = _ASSIGN.match(body)
            if assigned:
                made.update(_NAME_ANY.findall(assigned.group(1)))
            for match in _WRITES.finditer(body):
                written.update(g for g in match.groups() if g)
        namespace = dict(self.names)
        for line in lines:
            for name in _NAME_ANY.findall(line):
                if name not in made and name in self.values:
                    namespace[name] = self.values[name]._a
        if written - made:  # it would write into an earlier op's array: not rerun here
            return None
        try:
            exec(compile("\n".join(lines), "<ember.compile check>", "exec"), namespace)
        except Exception as e:
            return f"its recorded NumPy calls fail on their own ({type(e).__name__})"
        for name in made:
            rec = self.values.get(name)
            if rec is None or name not in namespace:
                continue
            if not _same_value(namespace[name], rec._a):
                return ("its recorded NumPy calls do not give what its code computed (it "
                        "wrote through a view the record could not see)")
        return None

    def own(self, rec) -> None:
        if rec.__dict__.get("_low") is not self:
            self.refuse("an array from outside this record")

    def expr(self, obj) -> str:
        """Source for an operand: a variable, or a constant bound in the function."""
        t = type(obj)
        if t is _Rec:
            self.own(obj)
            return obj._v
        if obj is None or t is bool or t is int or t is str:
            return repr(obj)
        if obj is Ellipsis:
            return "..."
        if t is tuple:
            return "(" + "".join(self.expr(v) + ", " for v in obj) + ")"
        if t is list:
            return "[" + ", ".join(self.expr(v) for v in obj) + "]"
        if t is dict:
            return "{" + ", ".join(f"{self.expr(k)}: {self.expr(v)}" for k, v in obj.items()) \
                + "}"
        if t is slice:
            return f"slice({self.expr(obj.start)}, {self.expr(obj.stop)}, {self.expr(obj.step)})"
        if isinstance(obj, np.ndarray):
            base = obj
            while base is not None:
                if type(base) is _Rec:
                    self.refuse("a view of a recorded array escaped the record")
                base = base.base
            if obj.flags.writeable:  # it may hold values the record never saw
                self.refuse("an array made outside the recorded calls joined them")
            return self.const(obj)
        if isinstance(obj, (list, tuple, dict)):
            self.refuse(f"a {t.__name__} operand")
        return self.const(obj)

    def unwrap(self, obj):
        t = type(obj)
        if t is _Rec:
            return obj._a
        if t is tuple:
            return tuple(self.unwrap(v) for v in obj)
        if t is list:
            return [self.unwrap(v) for v in obj]
        if t is dict:
            return {k: self.unwrap(v) for k, v in obj.items()}
        if t is slice:
            return slice(self.unwrap(obj.start), self.unwrap(obj.stop), self.unwrap(obj.step))
        return obj

    def arguments(self, args, kwargs) -> str:
        parts = [self.expr(a) for a in args]
        parts += [f"{k}={self.expr(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def array(self, rec) -> str:
        """The name of ``rec`` as an ndarray (NumPy hands back scalars for 0-d results)."""
        self.own(rec)
        if not rec._scalar:
            return rec._v
        name = self.as_array.get(rec._v)
        if name is None:
            name = self.as_array[rec._v] = f"a{self.n}"
            self.n += 1
            self.values[name] = self.wrap_value(np.asarray(rec._a))
            self.emit(f"{name} = {self.const(np.asarray)}({rec._v})")
        return name

    def array_value(self, rec):
        return rec._a if not rec._scalar else np.asarray(rec._a)

    # ---------------------------------------------------------------- recorded calls
    def _run(self, function, args, kwargs):
        """Call ``function`` on the real arrays; the prefix that runs its line under the
        op's ``np.errstate``, if it had one."""
        errors = np.geterr()
        args, kwargs = self.unwrap(args), self.unwrap(kwargs)
        real = function(*args, **kwargs)
        if errors != self.errors:  # the op ran this under np.errstate
            prefix = f"with {self.const(np.errstate)}(**{self.const(errors)}):\n        "
        else:
            prefix = ""
        return real, prefix

    def record(self, code_of_function, args, kwargs, function):
        """``function(*args, **kwargs)``: its result becomes new variables."""
        code = f"{code_of_function}({self.arguments(args, kwargs)})"
        real, prefix = self._run(function, args, kwargs)
        return self.result(real, code, prefix)

    def result(self, real, code, prefix=""):
        if real is None:
            self.emit(prefix + code)
            return None
        if isinstance(real, (np.ndarray, np.generic)):
            rec = self.wrap(real)
            self.emit(f"{prefix}{rec._v} = {code}")
            return rec
        if type(real) in (tuple, list) and real and all(
                isinstance(r, (np.ndarray, np.generic)) for r in real):
            recs = [self.wrap(r) for r in real]
            self.emit(prefix + "".join(r._v + ", " for r in recs) + f"= {code}")
            return type(real)(recs)
        self.refuse(f"a NumPy call returned a {type(real).__name__} (a value in Python)")

    def _out(self, out) -> None:
        for o in out if type(out) is tuple else (out,):
            if type(o) is not _Rec or o._scalar:
                self.refuse("a NumPy call wrote into an array the record does not hold")
            self.own(o)

    def ufunc(self, ufunc, method, inputs, kwargs):
        out = kwargs.get("out")
        if type(out) is tuple and all(o is None for o in out):  # out=(None,): no out
            kwargs = {k: v for k, v in kwargs.items() if k != "out"}
            out = None
        if out is not None:
            self._out(out)
        function = ufunc if method == "__call__" else getattr(ufunc, method)
        if method == "__call__" and len(inputs) == 2 and not kwargs and \
                ufunc in _FAST_ARITHMETIC:
            return self._arithmetic(ufunc, inputs)
        code = f"{self.const(ufunc)}" + ("" if method == "__call__" else f".{method}")
        code = f"{code}({self.arguments(inputs, kwargs)})"
        real, prefix = self._run(function, inputs, kwargs)
        if out is not None:
            self.emit(prefix + code)
            if method == "at":
                return None
            outs = out if type(out) is tuple else (out,)
            return outs[0] if len(outs) == 1 else outs
        return self.result(real, code, prefix)

    def _arithmetic(self, ufunc, inputs):
        """``a + b`` and kin: NumPy scalars use the operator (NumPy's fast scalar path);
        arrays call the ufunc, a Python float as the 0-d array of the array's dtype
        (exact for float32/float64, as the ops' own operand cache does)."""
        a, b = inputs
        arrays = [type(v) is _Rec and not v._scalar for v in inputs]
        floats = all(getattr(v, "dtype", np.dtype("f8")).kind == "f" or type(v) is float
                     for v in inputs)
        if not any(arrays) and floats and (type(a) is _Rec or type(b) is _Rec):
            code = f"{self.expr(a)} {_FAST_ARITHMETIC[ufunc]} {self.expr(b)}"
        else:
            operands = []
            for v, other in ((a, b), (b, a)):
                if (type(v) is float and -1e38 < v < 1e38 or
                        type(v) is int and -16777216 < v < 16777216) and v != 0 and \
                        type(other) is _Rec and not other._scalar and \
                        other.dtype in (np.float32, np.float64):
                    constant = np.array(v, other.dtype)
                    constant.flags.writeable = False
                    operands.append(self.const(constant))
                else:
                    operands.append(self.expr(v))
            code = f"{self.const(ufunc)}({operands[0]}, {operands[1]})"
        real, prefix = self._run(ufunc, inputs, {})
        return self.result(real, code, prefix)

    def operator(self, symbol, function, a, b):
        code = f"({self.expr(a)} {symbol} {self.expr(b)})"
        real, prefix = self._run(function, (a, b), {})
        return self.result(real, code, prefix)

    def inplace(self, symbol, function, target, value):
        self._out(target)
        code = f"{target._v} {symbol} {self.expr(value)}"
        _, prefix = self._run(function, (target, value), {})
        self.emit(prefix + code)
        return target

    def function(self, func, args, kwargs):
        if func in _REFUSED or func is np.where and len(args) + len(kwargs) == 1:
            self.refuse(f"numpy.{func.__name__} (a data-dependent shape or a value in Python)",
                        shape=True)
        if func in _METADATA:
            return func(*self.unwrap(args), **self.unwrap(kwargs))
        out = kwargs.get("out")
        if out is not None:
            self._out(out)
        code = f"{self.const(func)}({self.arguments(args, kwargs)})"
        real, prefix = self._run(func, args, kwargs)
        if out is not None:
            self.emit(prefix + code)
            return out
        if func is np.where and not kwargs and _masks_with_zero(args, real):
            code = f"{self.const(_where_zero)}({args[0]._v}, {args[1]._v})"
        return self.result(real, code, prefix)

    def method(self, rec, name, args, kwargs, in_place=False):
        self.own(rec)
        reduce = _REDUCTIONS.get(name)
        if reduce is not None and len(args) <= 1 and set(kwargs) <= (
                _REDUCE_KEYWORDS if name in ("sum", "prod") else {"axis", "keepdims"}):
            # x.sum(...) is NumPy's Python wrapper around np.add.reduce: call that
            kwargs = dict(kwargs)
            kwargs["axis"] = args[0] if args else kwargs.get("axis")  # (reduce's is 0)
            code = f"{self.const(reduce)}.reduce({self.array(rec)}, " \
                   f"{self.arguments((), kwargs)})"
            real, prefix = self._run(reduce.reduce, (self.array_value(rec),), kwargs)
            return self.result(real, code, prefix)
        if in_place:
            self._out(rec)
        code = f"{self.array(rec)}.{name}({self.arguments(args, kwargs)})"
        real, prefix = self._run(getattr(self.array_value(rec), name), args, kwargs)
        if in_place:
            self.emit(prefix + code)
            return None
        return self.result(real, code, prefix)

    def attribute(self, rec, name):
        self.own(rec)
        code = f"{self.array(rec)}.{name}"
        return self.result(getattr(self.array_value(rec), name), code)

    def getitem(self, rec, index):
        self.own(rec)
        for part in index if type(index) is tuple else (index,):
            if isinstance(part, np.ndarray) and part.dtype == bool or type(part) is list and \
                    any(type(v) is bool for v in part):
                self.refuse("a boolean-mask index: a data-dependent shape", shape=True)
        code = f"{self.array(rec)}[{self.expr(index)}]"
        real = self.array_value(rec)[self.unwrap(index)]
        return self.result(real, code)

    def setitem(self, rec, index, value):
        self._out(rec)
        code = f"{rec._v}[{self.expr(index)}] = {self.expr(value)}"
        rec._a[self.unwrap(index)] = self.unwrap(value)
        self.emit(code)


# ---------------------------------------------------------------------- op-level calls
def _fallback_forward(rcls, spec, kwargs, multi, needs):
    """An op whose forward could not be lowered: its own forward, called on the arrays."""
    ctx = object.__new__(rcls)
    ctx.needs_input_grad = needs
    forward, ndarray, asarray = rcls.forward, np.ndarray, np.asarray
    template = [v for _, v in spec]
    positions = [i for i, (is_slot, _) in enumerate(spec) if is_slot]

    expected = []  # [(shape, dtype)] per output, once recorded: the lowered code after it
    #                relies on them

    def call(*arrays):
        args = list(template)
        for i, a in zip(positions, arrays):
            args[i] = a
        r = forward(ctx, *args, **kwargs)
        if multi:
            r = tuple(x if type(x) is ndarray else asarray(x) for x in r)
            if expected and [(x.shape, x.dtype) for x in r] != expected:
                raise ShapeChanged(rcls.__name__)
            return r
        r = r if type(r) is ndarray else asarray(r)
        if expected and (r.shape, r.dtype) != expected[0]:
            raise ShapeChanged(rcls.__name__)
        return r
    call.expected = expected
    return call, ctx


class ShapeChanged(Exception):
    """An op-level call in a lowered replay gave another shape or dtype than recorded."""


def _fallback_backward(ctx, meta, n_results):
    backward = type(ctx).backward

    def call(*grads):
        if meta is not None:
            grads = [g if g is not None else np.zeros(m[0], m[1].numpy)
                     for g, m in zip(grads, meta)]
        r = backward(ctx, *grads)
        if type(r) is not tuple:
            r = (r,)
        return tuple(r) + (None,) * (n_results - len(r))
    return call


def _owner_id(g):
    base = getattr(g, "base", None)
    return id(base if base is not None else g)


def _copy(target, source, tensor):
    target[...] = source
    tensor._version_counter.value += 1


# ---------------------------------------------------------------------- the pass
def lower(held, accumulate, rebuild):
    """The generated replay function of ``held`` (a finished record), or None where it
    cannot be lowered at all (a GPU trace); ops that refuse stay op-level calls."""
    for step in held.program:
        if step[0] == _FORWARD and (step[7] is not np or step[8] is not None):
            return None
        if step[0] == _BACKWARD and any(not given and spec[2] is not np
                                        for _, (given, spec) in step[1][0]):
            return None
    fallback = {}
    classes = {step[9]: step[1] for step in held.program if step[0] == _FORWARD}
    state = random.default_generator.get_state()
    try:
        with warnings.catch_warnings():  # eager already warned about these values
            warnings.simplefilter("ignore")
            for _ in range(_MAX_PASSES):
                low = Lowering()
                refused = _one_pass(held, low, fallback, accumulate, rebuild)
                if refused is None:
                    break
                # a backward refused: that op, and (so that a pass is not needed per op)
                # the other ops of its class, run op-level in the next pass
                index, why, shape = refused
                cls = classes[index]
                for i, c in classes.items():
                    if c is cls and i not in fallback:
                        fallback[i] = (why if i == index else
                                       f"another {cls.__name__}'s backward refused: {why}",
                                       shape)
            else:
                return None
    finally:
        random.default_generator.set_state(state)
    names = {step[9]: step[1].__name__ for step in held.program if step[0] == _FORWARD}
    source = "def _replay(flat):\n" + "".join(f"    {line}\n" for line in _freeing(low))
    namespace = dict(low.names)
    exec(compile(source, "<ember.compile replay>", "exec"), namespace)
    replay = namespace["_replay"]
    replay.source = source
    replay.lowered = sum(1 for s in held.program if s[0] == _FORWARD) - len(fallback)
    replay.fallback = [(names[i], fallback[i][0]) for i in sorted(fallback)]
    return replay


def _freeing(low) -> list:
    """The lines with ``del`` after the last use of each big variable."""
    last = {}
    for i, line in enumerate(low.lines):
        for name in _NAME.findall(line):
            if name in low.big:
                last[name] = i
    dels = {}
    for name, i in last.items():
        dels.setdefault(i, []).append(name)
    out = []
    for i, line in enumerate(low.lines):
        out.append(line)
        if i in dels and not line.startswith("return"):
            out.append("del " + ", ".join(sorted(dels[i])))
    return out


def _lowered_forward(low, rcls, args, kwargs, multi, needs):
    """Record one op's forward: (ctx, result, None), or (None, None, (why, shape-dependent))
    where it refuses."""
    ctx = object.__new__(rcls)
    ctx.needs_input_grad = needs
    ctx.xp, ctx.math = low.xp, low.math
    try:
        result = rcls.forward(ctx, *args, **kwargs)
        if low.refusal is not None:
            return None, None, (low.refusal, low.shape_dependent)
        if ctx.out_device is not None:
            return None, None, ("its outputs go to another device", False)
        if not all(type(r) is _Rec and r.__dict__.get("_low") is low
                   for r in (result if multi else (result,))):
            return None, None, ("it returned an array the record did not make", False)
    except _Refuse:
        return None, None, (low.refusal, low.shape_dependent)
    except Exception as e:
        return None, None, (f"{type(e).__name__}: {e}", False)
    return ctx, result, None


def _one_pass(held, low, fallback, accumulate, rebuild):
    """Record the whole program once. An op whose forward refuses runs op-level in this
    pass; one whose backward refuses is returned ((index, why, shape-dependent)), for
    another pass with it op-level. None when done."""
    env = {}
    for slot, position in held.inputs:
        env[slot] = low.wrap(held.arrays[slot], f"flat[{position}]._data")
    externals = [(slot, t) for slot, t, *_ in held.externals]
    for slot, t in externals:
        env[slot] = low.wrap(held.arrays[slot], f"{low.const(t)}._data")
    ctxs = {}
    tainted = set()  # slots computed by op-level calls whose shapes may change
    rerunnable = True  # nothing the replay did so far would change state if run again
    for step in held.program:
        kind = step[0]
        if kind == _FORWARD:
            _, rcls, spec, kwargs, out, multi, needs, _, _, index = step
            if index not in fallback and any(is_slot and v in tainted for is_slot, v in spec):
                # its input's shape may change from call to call: the lowered code would
                # keep the recorded shape, so this op runs op-level too
                fallback[index] = ("it reads the output of an op-level call", True)
            if index not in fallback:
                lines, as_array = len(low.lines), dict(low.as_array)
                args = [env[v] if is_slot else v for is_slot, v in spec]
                ctx, result, refused = _lowered_forward(low, rcls, args, kwargs, multi, needs)
                if refused is None:
                    why = low.verify(lines)
                    if why is not None:
                        refused = (why, False)
                if refused is None:
                    ctxs[index] = (True, ctx)
                else:  # forget its lines; it runs op-level, and the pass goes on
                    del low.lines[lines:]
                    low.as_array = as_array
                    low.refusal, low.shape_dependent = None, False
                    fallback[index] = refused
            if index in fallback:
                fn, ctx = _fallback_forward(rcls, spec, kwargs, multi, needs)
                ctxs[index] = (False, ctx)
                arrays = [env[v] for is_slot, v in spec if is_slot]
                code = f"{low.const(fn)}({', '.join(low.array(a) for a in arrays)})"
                real = fn(*(low.array_value(a) for a in arrays))
                result = low.result(real, code)
                if fallback[index][1] or not rerunnable:
                    tainted.update(out if multi else (out,))
                else:  # guarded: a new shape stops the replay, and the call runs eagerly
                    fn.expected.extend((r.shape, r.dtype) for r in (real if multi else (real,)))
            for slot, r in zip(out if multi else (out,), result if multi else (result,)):
                env[slot] = r
        elif kind == _BACKWARD:
            rerunnable = False
            refused = _backward(step[1], low, env, ctxs, accumulate)
            if refused is not None:
                return refused
        elif kind == _COPY:
            rerunnable = False
            _, target, source, tensor = step
            low.emit(f"{low.const(_copy)}({low.array(env[target])}, "
                     f"{low.array(env[source])}, {low.const(tensor)})")
        else:
            _, function, obj, args, kwargs = step
            if getattr(function, "__name__", "") != "zero_grad":  # zero_grad twice is once
                rerunnable = False
            low.emit(f"{low.const(function)}({low.const(obj)}, *{low.const(args)}, "
                     f"**{low.const(kwargs)})")
            for slot, t in externals:  # an optimizer may rebind a parameter's data
                env[slot] = low.wrap(t._data, f"{low.const(t)}._data")
    if held.output[0] == "c":  # a constant (None, a number): no Tensor to make
        low.emit(f"return {low.const(held.output[1])}")
        return None
    slots = {}
    _template_slots(held.output, slots)
    pairs = ", ".join(f"{slot}: {low.array(env[slot])}" for slot in slots)
    low.emit(f"return {low.const(rebuild)}({low.const(held.output)}, {{{pairs}}}, flat)")
    return None


def _template_slots(template, slots):
    kind = template[0]
    if kind == "t":
        slots[template[1]] = True
    elif kind in ("seq", "dict"):
        for t in template[2]:
            _template_slots(t, slots)


def _backward(plan, low, env, ctxs, accumulate):
    root_plan, steps, nbuffers = plan
    buffers = [None] * nbuffers
    stored = f"stored{low.n}"
    low.n += 1
    low.emit(f"{stored} = set()")

    def add(slot, g):
        current = buffers[slot]
        buffers[slot] = g if current is None else current + g

    for slot, (given, spec) in root_plan:
        if given:
            g = env[spec]
            low.emit(f"{stored}.add({low.const(_owner_id)}({low.array(g)}))")
        else:
            shape, dtype, _ = spec
            ones = np.ones(shape, dtype)  # copied on each call: the gradient may be kept
            g = low.wrap(ones.copy(), f"{low.const(ones)}.copy()")
        add(slot, g)
    for step in steps:
        if step[0]:
            g = buffers[step[1]]
            if g is not None:
                leaf = low.const(step[2]) if step[3] is None else f"flat[{step[3]}]"
                low.emit(f"{low.const(accumulate)}({leaf}, {low.array(g)}, {stored})")
            continue
        _, index, ins, outs, meta, n_edges = step
        grads = [buffers[b] for b in ins]
        if all(g is None for g in grads):
            continue
        lowered, ctx = ctxs[index]
        if lowered:
            try:
                if meta is not None:
                    grads = [g if g is not None else
                             low.record(low.const(np.zeros), (m[0], m[1].numpy), {}, np.zeros)
                             for g, m in zip(grads, meta)]
                start = len(low.lines)
                results = type(ctx).backward(ctx, *grads)
                if type(results) is not tuple:
                    results = (results,)
                if low.refusal is not None:
                    return index, f"{low.refusal} (in backward)", False
                why = low.verify(start)
                if why is not None:
                    return index, f"{why} (in backward)", False
                if not all(r is None or type(r) is _Rec and r.__dict__.get("_low") is low
                           for r in results):
                    return (index, "its backward returned an array the record did not make",
                            False)
            except _Refuse:
                return index, f"{low.refusal} (in backward)", False
            except Exception as e:
                return index, f"{type(e).__name__} in backward: {e}", False
        else:
            fn = _fallback_backward(ctx, meta, n_edges)
            operands = ", ".join(low.array(g) if g is not None else "None" for g in grads)
            code = f"{low.const(fn)}({operands})"
            real = fn(*(low.array_value(g) if g is not None else None for g in grads))
            names = [f"g{low.n + i}" for i in range(len(real))]
            low.n += len(real)
            low.emit("".join(n + ", " for n in names) + f"= {code}")
            results = []
            for name, r in zip(names, real):
                if r is None:
                    results.append(None)
                    continue
                rec = low.wrap(r if type(r) is np.ndarray or isinstance(r, np.generic)
                               else np.asarray(r), name)
                if rec._v in low.big:
                    low.big.add(name)
                results.append(rec)
        for i, b in enumerate(outs):
            if b is not None and i < len(results) and results[i] is not None:
                add(b, results[i])
    return None
