"""Recording what an op's own Python does with NumPy, as lines of Python source.

``_Rec`` is an ndarray subclass that records every NumPy call made on it (ufuncs and
operators through ``__array_ufunc__``, NumPy functions through ``__array_function__``,
methods, indexing, and array creation through the op's ``ctx.xp``) as one line of source,
computing the real result as it goes. Whatever turns a value into Python (``bool``,
``float``, ``.item()``, iteration), makes a view the record cannot see, or mixes in an
array the record did not make, raises ``_Refuse``. ``Lowering`` holds the lines and the
constants they use; ``lower`` drives it over a whole trace.
"""
from __future__ import annotations

import math
import operator
import re

import numpy as np

from .. import backend
from ..autograd.backward_math import ArrayMath

# Arrays at least this big are deleted after their last use in the generated function, so
# their memory goes back as eager's would (small ones are not worth the line).
_FREED_BYTES = 1 << 14
_NAME_ANY = re.compile(r"\b[vga]\d+\b")  # a variable of the generated code
_ASSIGN = re.compile(r"^((?:[vga]\d+, )*[vga]\d+,?) = ")  # the variables a line makes
# the variables a line writes into: out=(v1, ), v1[...] = ..., v1 += ..., v1.fill(...)
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
    """``np.where(mask, x, 0.0)`` through ``backend.where``, which masks the bits."""
    return backend.where(np, mask, x, 0.0)


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
