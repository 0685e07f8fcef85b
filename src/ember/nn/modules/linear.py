"""Identity, Linear, Bilinear, LazyLinear."""
from __future__ import annotations

import math

from ... import creation
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]


def _factory(device, dtype) -> dict:
    return {"device": device, "dtype": dtype}


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b, with W of shape (out_features, in_features).

    W ~ kaiming_uniform(a=sqrt(5)), i.e. U(-1/sqrt(in), 1/sqrt(in)); b ~ U(-1/sqrt(in),
    1/sqrt(in)), as in PyTorch."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(creation.empty(out_features, in_features,
                                               **_factory(device, dtype)))
        if bias:
            self.bias = Parameter(creation.empty(out_features, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """y_k = x1^T A_k x2 + b_k, with A of shape (out, in1, in2); A and b ~ U(-1/sqrt(in1),
    1/sqrt(in1))."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(creation.empty(out_features, in1_features, in2_features,
                                               **_factory(device, dtype)))
        if bias:
            self.bias = Parameter(creation.empty(out_features, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(Linear):
    """A Linear whose ``in_features`` is read from the first input; it becomes a Linear
    after that forward."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self._factory = _factory(device, dtype)
        self.weight = UninitializedParameter(creation.empty(0, **self._factory))
        if bias:
            self.bias = UninitializedParameter(creation.empty(0, **self._factory))
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if not isinstance(self.weight, UninitializedParameter):
            super().reset_parameters()

    def forward(self, input):
        if isinstance(self.weight, UninitializedParameter):
            self.in_features = input.shape[-1]
            dtype = self.weight.dtype  # the factory dtype, as in PyTorch
            self.weight.materialize((self.out_features, self.in_features),
                                    device=input.device, dtype=dtype)
            if self.bias is not None:
                self.bias.materialize((self.out_features,), device=input.device,
                                      dtype=dtype)
            self.reset_parameters()
            self.__dict__.pop("_factory", None)
            self.__class__ = self.cls_to_become
        elif type(self) is LazyLinear:  # materialized by load_state_dict
            self.in_features = self.weight.shape[1]
            self.__dict__.pop("_factory", None)
            self.__class__ = self.cls_to_become
        return F.linear(input, self.weight, self.bias)
