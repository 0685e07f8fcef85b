"""Convolution modules: Conv1d/2d/3d (with padding modes) and ConvTranspose1d/2d/3d."""
from __future__ import annotations

import math

from ... import creation
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._utils import _ntuple, _reverse_repeat_tuple
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _dims = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        name = type(self).__name__
        if groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups}")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad takes the last dimension first, each as (before, after).
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        factory = {"device": device, "dtype": dtype}
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(creation.empty(tuple(shape), **factory))
        if bias:
            self.bias = Parameter(creation.empty(out_channels, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # kaiming_uniform(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv_forward(self, input, weight, bias, conv):
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice,
                           mode=self.padding_mode)
            zero = _ntuple(self._dims)(0)
            return conv(padded, weight, bias, self.stride, zero, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation,
                    self.groups)


def _conv_init(cls_dims, in_channels, out_channels, kernel_size, stride, padding,
               dilation):
    tup = _ntuple(cls_dims)
    return (tup(kernel_size), tup(stride), padding if isinstance(padding, str) else
            tup(padding), tup(dilation))


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L) input: out[n, o] = bias[o] +
    sum_c weight[o, c] * input[n, c] (cross-correlation). Cost O(N C_out C_in/groups K
    L_out)."""

    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device=None, dtype=None):
        k, s, p, d = _conv_init(1, in_channels, out_channels, kernel_size, stride, padding,
                                dilation)
        super().__init__(in_channels, out_channels, k, s, p, d, False, (0,), groups, bias,
                         padding_mode, device, dtype)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias, F.conv1d)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W) input (cross-correlation).
    Cost O(N C_out C_in/groups K_h K_w H_out W_out)."""

    _dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device=None, dtype=None):
        k, s, p, d = _conv_init(2, in_channels, out_channels, kernel_size, stride, padding,
                                dilation)
        super().__init__(in_channels, out_channels, k, s, p, d, False, (0, 0), groups, bias,
                         padding_mode, device, dtype)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias, F.conv2d)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input. Cost O(N C_out
    C_in/groups K_d K_h K_w D_out H_out W_out)."""

    _dims = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device=None, dtype=None):
        k, s, p, d = _conv_init(3, in_channels, out_channels, kernel_size, stride, padding,
                                dilation)
        super().__init__(in_channels, out_channels, k, s, p, d, False, (0, 0, 0), groups,
                         bias, padding_mode, device, dtype)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias, F.conv3d)


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 output_padding, groups, bias, padding_mode, device, dtype):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        tup = _ntuple(self._dims)
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple, not "
                             f"{padding!r}")
        super().__init__(in_channels, out_channels, tup(kernel_size), tup(stride),
                         tup(padding), tup(dilation), True, tup(output_padding), groups, bias,
                         padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        """The output_padding that makes the output exactly ``output_size``."""
        if output_size is None:
            return self.output_padding
        dims = self._dims
        output_size = list(output_size)
        if len(output_size) == dims + 2 or len(output_size) == dims + 1:
            output_size = output_size[-dims:]
        if len(output_size) != dims:
            raise ValueError(f"ConvTranspose{dims}D: for {input.dim()}D input, output_size "
                             f"must have {dims} or {dims + 2} elements (got "
                             f"{len(output_size)})")
        result = []
        for d in range(dims):
            size_in = input.shape[input.dim() - dims + d]
            smallest = ((size_in - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            largest = smallest + self.stride[d] - 1
            if not smallest <= output_size[d] <= largest:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{smallest} to {largest} (for an input of {list(input.shape[2:])})")
            result.append(output_size[d] - smallest)
        return tuple(result)


class ConvTranspose1d(_ConvTransposeNd):
    """The gradient of Conv1d w.r.t. its input ("deconvolution") over (N, C_in, L).
    L_out = (L-1) stride - 2 padding + dilation (K-1) + output_padding + 1."""

    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, output_padding=0, groups: int = 1, bias: bool = True,
                 dilation=1, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """The gradient of Conv2d w.r.t. its input over (N, C_in, H, W). Each spatial size is
    (in-1) stride - 2 padding + dilation (K-1) + output_padding + 1."""

    _dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, output_padding=0, groups: int = 1, bias: bool = True,
                 dilation=1, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    """The gradient of Conv3d w.r.t. its input over (N, C_in, D, H, W)."""

    _dims = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, output_padding=0, groups: int = 1, bias: bool = True,
                 dilation=1, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)


class _LazyConvMixin:
    """A convolution whose ``in_channels`` is read from the first input; after that forward
    it becomes the plain class (``cls_to_become``), initialized like it."""

    cls_to_become = None

    def _lazy_init(self) -> None:
        from ..parameter import UninitializedParameter

        self.weight = UninitializedParameter(self.weight)
        if self.bias is not None:
            self.bias = UninitializedParameter(self.bias)

    def reset_parameters(self) -> None:
        from ..parameter import UninitializedParameter

        if self.in_channels == 0 or isinstance(self.weight, UninitializedParameter):
            return
        super().reset_parameters()

    def forward(self, input, *args, **kwargs):
        from ..parameter import UninitializedParameter

        target = self.cls_to_become
        if isinstance(self.weight, UninitializedParameter):
            batched = input.dim() == self._dims + 2
            self.in_channels = input.shape[1] if batched else input.shape[0]
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            dtype = self.weight.dtype  # the factory dtype, as in PyTorch
            self.weight.materialize(shape + tuple(self.kernel_size), device=input.device,
                                    dtype=dtype)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,), device=input.device, dtype=dtype)
            self.__class__ = target
            self.reset_parameters()
        else:  # materialized by load_state_dict
            self.in_channels = self.weight.shape[0] if self.transposed else \
                self.weight.shape[1] * self.groups
            self.__class__ = target
        return target.forward(self, input, *args, **kwargs)


def _lazy(base, doc: str):
    def __init__(self, out_channels: int, kernel_size, *args, **kwargs):
        base.__init__(self, 0, out_channels, kernel_size, *args, **kwargs)
        self._lazy_init()

    return type("Lazy" + base.__name__, (_LazyConvMixin, base),
                {"__init__": __init__, "cls_to_become": base, "__doc__": doc,
                 "__module__": __name__})


LazyConv1d = _lazy(Conv1d, "Conv1d with in_channels inferred from the first input.")
LazyConv2d = _lazy(Conv2d, "Conv2d with in_channels inferred from the first input.")
LazyConv3d = _lazy(Conv3d, "Conv3d with in_channels inferred from the first input.")
LazyConvTranspose1d = _lazy(ConvTranspose1d,
                            "ConvTranspose1d with in_channels inferred from the first input.")
LazyConvTranspose2d = _lazy(ConvTranspose2d,
                            "ConvTranspose2d with in_channels inferred from the first input.")
LazyConvTranspose3d = _lazy(ConvTranspose3d,
                            "ConvTranspose3d with in_channels inferred from the first input.")
__all__ += ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
            "LazyConvTranspose2d", "LazyConvTranspose3d"]
