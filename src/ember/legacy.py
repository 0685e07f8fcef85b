"""PyTorch's legacy typed constructors: ``FloatTensor``, ``LongTensor``, ...

``FloatTensor(2, 3)`` is an uninitialized 2x3 float32 tensor, ``FloatTensor([1, 2])`` a
float32 copy of the data, ``FloatTensor()`` an empty one; ``isinstance(t, FloatTensor)``
tells whether ``t`` is a CPU float32 tensor.

>>> import ember
>>> ember.LongTensor([1, 2])
tensor([1, 2])
>>> isinstance(ember.zeros(2), ember.FloatTensor)
True
"""
from __future__ import annotations

import numbers

from . import dtypes
from .creation import empty, tensor
from .tensor import Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
           "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


class _LegacyType(type):
    def __instancecheck__(cls, obj) -> bool:
        return (isinstance(obj, Tensor) and obj.dtype == cls.dtype
                and obj.device.type == "cpu")

    def __call__(cls, *args, device=None):
        if not args:
            return empty(0, dtype=cls.dtype, device=device)
        if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
            return empty(*args, dtype=cls.dtype, device=device)
        if len(args) == 1:
            data = args[0]
            if isinstance(data, Tensor):
                if data.dtype != cls.dtype:
                    raise TypeError(f"expected {cls.dtype} (got {data.dtype})")
                return data
            return tensor(data, dtype=cls.dtype, device=device)
        raise TypeError(f"{cls.__name__}() received an invalid combination of arguments: "
                        f"{tuple(type(a).__name__ for a in args)}; expected sizes (ints) "
                        "or one sequence of data")


def _make(name: str, dtype) -> type:
    return _LegacyType(name, (), {"dtype": dtype, "__doc__": f"A CPU {dtype} tensor: "
                                  f"``{name}(*sizes)`` or ``{name}(data)``."})


FloatTensor = _make("FloatTensor", dtypes.float32)
DoubleTensor = _make("DoubleTensor", dtypes.float64)
HalfTensor = _make("HalfTensor", dtypes.float16)
BFloat16Tensor = _make("BFloat16Tensor", dtypes.bfloat16)
LongTensor = _make("LongTensor", dtypes.int64)
IntTensor = _make("IntTensor", dtypes.int32)
ShortTensor = _make("ShortTensor", dtypes.int16)
CharTensor = _make("CharTensor", dtypes.int8)
ByteTensor = _make("ByteTensor", dtypes.uint8)
BoolTensor = _make("BoolTensor", dtypes.bool)
