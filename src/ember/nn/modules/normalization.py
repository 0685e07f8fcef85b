"""Normalization modules: BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm, GroupNorm,
RMSNorm, LocalResponseNorm."""
from __future__ import annotations

import numbers
import warnings

from ... import creation, dtypes, tracing
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm",
           "SyncBatchNorm"]


def _affine_parameters(module: Module, shape: tuple, affine: bool, bias: bool,
                       factory: dict) -> None:
    """Register ``weight`` (and ``bias``) of ``shape``, or None for each when not affine;
    their values are set by the module's reset_parameters."""
    module.register_parameter(
        "weight", Parameter(creation.empty(tuple(shape), **factory)) if affine else None)
    module.register_parameter(
        "bias", Parameter(creation.empty(tuple(shape), **factory)) if affine and bias else None)


class _NormBase(Module):
    """Shared state of batch and instance norm: affine weight/bias, running statistics."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, (num_features,), affine, bias, factory)
        if track_running_stats:
            self.register_buffer("running_mean", creation.zeros(num_features, **factory))
            self.register_buffer("running_var", creation.ones(num_features, **factory))
            self.register_buffer("num_batches_tracked",
                                 creation.tensor(0, dtype=dtypes.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


def _count_batch(module) -> None:
    init._fill(module.num_batches_tracked, module.num_batches_tracked._data + 1)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            tracer = tracing.current()
            if tracer is not None:  # ember.compile replays the count
                tracer.record_call(_count_batch, self, (), {})
            else:
                _count_batch(self)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch_stats = self.training or (self.running_mean is None
                                            and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Normalize (N, C) or (N, C, L) input per channel over the batch (and length):
    y = (x - mean) / sqrt(var + eps) * weight + bias. Training uses the batch statistics
    and updates running_mean/running_var (with unbiased var) by ``momentum`` (None: a
    cumulative average); eval uses the running ones."""

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """BatchNorm over (N, C, H, W) input, per channel."""

    def _check_input_dim(self, input) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """BatchNorm over (N, C, D, H, W) input, per channel."""

    def _check_input_dim(self, input) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    _spatial = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def forward(self, input):
        batched = self._spatial + 2
        if input.dim() not in (batched - 1, batched):
            raise ValueError(f"expected {batched - 1}D or {batched}D input (got "
                             f"{input.dim()}D input)")
        channel_dim = input.dim() - self._spatial - 1
        if input.size(channel_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={channel_dim} to match num_features "
                    f"({self.num_features}), but got: {input.size(channel_dim)}.")
            warnings.warn(f"input's size at dim={channel_dim} does not match num_features. "
                          "You can silence this warning by not passing in num_features, "
                          "which is not used because affine=False", stacklevel=2)
        unbatched = input.dim() == batched - 1
        if unbatched:
            input = input.unsqueeze(0)
        out = F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                              self.bias, self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Normalize each (sample, channel) of (N, C, L) input over its length."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Normalize each (sample, channel) of (N, C, H, W) input over H and W."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Normalize each (sample, channel) of (N, C, D, H, W) input over D, H and W."""

    _spatial = 3


def _shape_tuple(normalized_shape) -> tuple:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


class LayerNorm(Module):
    """Normalize over the last ``len(normalized_shape)`` dimensions:
    y = (x - mean) / sqrt(var + eps) * weight + bias (biased variance)."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, factory)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Split the C channels of (N, C, *) input into ``num_groups`` groups and normalize
    each (sample, group) over its channels and positions; then a per-channel affine."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        factory = {"device": device, "dtype": dtype}
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, (num_channels,), affine, bias, factory)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """y = x / sqrt(mean(x^2) + eps) * weight over the last ``len(normalized_shape)``
    dimensions; eps=None uses the dtype's machine epsilon."""

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(creation.empty(tuple(self.normalized_shape), device=device,
                                                   dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Normalize each position by the activity of ``size`` neighbouring channels:
    b_c = a_c / (k + alpha/n * sum a^2)^beta."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _LazyNormMixin:
    """A norm layer whose ``num_features`` is read from the first input's channel
    dimension; it then becomes the plain class, initialized like it."""

    cls_to_become = None

    def _lazy_init(self) -> None:
        from ..parameter import UninitializedBuffer, UninitializedParameter

        if self.affine:
            self.weight = UninitializedParameter(self.weight)
            if self.bias is not None:
                self.bias = UninitializedParameter(self.bias)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(self.running_mean)
            self.running_var = UninitializedBuffer(self.running_var)

    def forward(self, input):
        from ..parameter import is_lazy

        target = self.cls_to_become
        loaded = next((t for t in (self.weight, self.running_mean)
                       if t is not None and not is_lazy(t)), None)
        if self.num_features == 0 and loaded is not None:  # materialized by load_state_dict
            self.num_features = loaded.shape[0]
            self.__class__ = target
        elif self.num_features == 0:
            spatial = getattr(target, "_spatial", None)
            if spatial is None or input.dim() == spatial + 2:
                channel_dim = 1
            else:
                channel_dim = 0  # unbatched instance-norm input
            self.num_features = input.shape[channel_dim]
            for tensor in (self.weight, self.bias, self.running_mean, self.running_var):
                if is_lazy(tensor):
                    tensor.materialize((self.num_features,), device=input.device)
            self.__class__ = target
            self.reset_parameters()
        return target.forward(self, input)


def _lazy_norm(base, doc: str):
    # PyTorch's lazy norms default to affine=True, track_running_stats=True, instance
    # norms included.
    def __init__(self, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True):
        base.__init__(self, 0, eps, momentum, affine, track_running_stats, device, dtype,
                      bias=bias)
        self._lazy_init()

    return type("Lazy" + base.__name__, (_LazyNormMixin, base),
                {"__init__": __init__, "cls_to_become": base, "__doc__": doc,
                 "__module__": __name__})


LazyBatchNorm1d = _lazy_norm(BatchNorm1d, "BatchNorm1d with num_features from the input.")
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, "BatchNorm2d with num_features from the input.")
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, "BatchNorm3d with num_features from the input.")
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d,
                                "InstanceNorm1d with num_features from the input.")
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d,
                                "InstanceNorm2d with num_features from the input.")
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d,
                                "InstanceNorm3d with num_features from the input.")
__all__ += ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
            "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over (N, C, *) input. PyTorch synchronizes the batch statistics across
    processes; ember runs in one process, so this is BatchNorm over the local batch."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group=None,
                 device=None, dtype=None, *, bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """Replace every BatchNorm*d in ``module`` by a SyncBatchNorm holding the same
        parameters and running statistics (the Parameter objects are kept)."""
        if isinstance(module, _BatchNorm) and not isinstance(module, cls):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group,
                            bias=module.bias is not None or not module.affine)
            for name in ("weight", "bias"):
                if name in module._parameters:
                    converted._parameters[name] = module._parameters[name]
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                converted._buffers[name] = module._buffers.get(name)
            converted.training = module.training
            return converted
        for name, child in list(module._modules.items()):
            if child is not None:
                module._modules[name] = cls.convert_sync_batchnorm(child, process_group)
        return module
