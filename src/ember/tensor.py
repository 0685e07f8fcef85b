"""The Tensor: an array (NumPy or CuPy) with a dtype, a device and its place in the graph.

There is no math here: ops live in ``ember.ops`` and reach the Tensor as methods through
the registry. What lives here is what a tensor *is*: its data, its autograd state
(requires_grad, grad, grad_fn, version counter, views), conversions and printing.
"""
from __future__ import annotations

import numbers
import threading
import warnings

import numpy as np

from . import backend, dtypes, grad_mode
from . import tracing as _tracing
from .backend import CPU
from .hooks import RemovableHandle

_state = grad_mode._state
_new = object.__new__
_FROM_NUMPY = dtypes._FROM_NUMPY

# The op functions (ember.add, ...) by name, filled in when ember.ops is imported.
_F = {}


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``ember.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"ember.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        result = tuple.__getitem__(self, item)
        return Size(result) if isinstance(item, slice) else result

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))


class _VersionCounter:
    """Shared by a tensor and its views; in-place changes bump it."""

    __slots__ = ("value",)
    no_grad = False
    inference = False
    unwritten = False

    def __init__(self) -> None:
        self.value = 0


class _NoGradCounter(_VersionCounter):
    """The counter of a tensor made while grad mode was off, so that an error can say so
    (the type carries the fact: nothing extra is stored per tensor)."""

    __slots__ = ()
    no_grad = True


class _InferenceCounter(_NoGradCounter):
    """The counter of a tensor made under ``inference_mode`` (and shared by its views)."""

    __slots__ = ()
    inference = True


class _Unwritten:
    """The counter of a new tensor until something needs its own: one read-only object at
    version 0 shared by all such tensors, so that making a tensor allocates no counter.
    ``counter_of`` swaps in a real one before a bump or before a view shares it; a write
    through this one raises AttributeError rather than change every tensor's version."""

    __slots__ = ()
    value = 0
    no_grad = False
    inference = False
    unwritten = True
    kind = _VersionCounter


class _UnwrittenNoGrad(_Unwritten):
    __slots__ = ()
    no_grad = True
    kind = _NoGradCounter


class _UnwrittenInference(_UnwrittenNoGrad):
    __slots__ = ()
    inference = True
    kind = _InferenceCounter


UNWRITTEN, UNWRITTEN_NO_GRAD, UNWRITTEN_INFERENCE = \
    _Unwritten(), _UnwrittenNoGrad(), _UnwrittenInference()


def counter_of(t):
    """``t``'s own version counter, made now if it still has the shared unwritten one: for
    whatever keeps or shares the counter (views, detach, saved outputs) or bumps it."""
    counter = t._version_counter
    if counter.unwritten:
        with _counter_lock:  # two threads must not each give t a counter of its own
            counter = t._version_counter
            if counter.unwritten:
                counter = t._version_counter = counter.kind()
    return counter


_counter_lock = threading.Lock()


def bump_version(t) -> None:
    """Record an in-place change of ``t``'s memory (seen by its views and saved values)."""
    counter_of(t).value += 1


# for the core's fast lane (autograd.function), which makes tensors as ``_make`` does
VersionCounter = _VersionCounter


class Tensor:
    """A multi-dimensional array that can record the ops applied to it.

    >>> x = ember.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    # What every tensor sets lives in slots; what few tensors need (a .grad, a view's
    # base, hooks) reads the class defaults below until set, so making a tensor is cheap.
    __slots__ = ("_data", "_device", "_requires_grad", "grad_fn", "_version_counter",
                 "__dict__", "__weakref__")
    _output_nr = 0
    _grad = None
    _base = None
    _view_chain = ()
    _views = None  # (a base's) its views made with grad mode on, weakly: see _link_view
    _accumulator = None
    _hooks = None
    _retains_grad = False
    # set per leaf (grad_dtype, register_post_accumulate_grad_hook); the engine reads them
    _grad_dtype = None
    _post_accumulate_hooks = None
    # "detach" or "no_grad" on results of detach() and of ops on such tensors: why a float
    # tensor has no graph, for errors (tensors made under no_grad carry a _NoGradCounter)
    _cut = None
    __array_priority__ = 1000  # make ndarray <op> Tensor defer to Tensor's reflected ops

    def __init__(self, *args, device=None, dtype=None, requires_grad=False):
        # ember.Tensor(data) or ember.Tensor(2, 3), as in PyTorch (float32 by default).
        from .creation import empty
        from .creation import tensor as make

        if len(args) == 1 and not isinstance(args[0], int):
            source = make(args[0], dtype=dtype or dtypes.get_default_dtype(), device=device)
        else:
            source = empty(*(args or (0,)), dtype=dtype, device=device)  # Tensor(): (0,)
        _init(self, source._data, source._device, bool(requires_grad))

    @staticmethod
    def _make(data, device, requires_grad=False):
        """Internal constructor: no checks, no copies."""
        t = _new(Tensor)
        t._data = data
        t._device = device
        t._requires_grad = requires_grad
        t.grad_fn = None
        t._version_counter = UNWRITTEN if _state.enabled else (
            UNWRITTEN_INFERENCE if _state.inference else UNWRITTEN_NO_GRAD)
        return t

    # ----------------------------------------------------------------- basic properties
    @property
    def dtype(self) -> dtypes.dtype:
        try:
            return _FROM_NUMPY[self._data.dtype]
        except KeyError:  # (bfloat16 arrays from ml_dtypes before ember used the dtype)
            return dtypes.from_numpy(self._data.dtype)

    @property
    def device(self) -> backend.device:
        return self._device

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        """The shape, or the length of one dimension."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim, "size")]

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return int(self._data.nbytes)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind in "fV"

    def is_complex(self) -> bool:
        return False

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether the elements lie in memory in row-major order; with
        ``memory_format=ember.channels_last`` (4-D) or ``channels_last_3d`` (5-D), in that
        order with the channels last.

        >>> x = ember.ones(2, 3, 4, 5)
        >>> x.is_contiguous(), x.is_contiguous(memory_format=ember.channels_last)
        (True, False)
        """
        data = self._data
        name = getattr(memory_format, "_name", None)  # (ember.memory_format)
        if name in ("channels_last", "channels_last_3d"):
            if data.ndim != (4 if name == "channels_last" else 5):
                return False
            data = data.transpose((0,) + tuple(range(2, data.ndim)) + (1,))
        elif memory_format is not None and name not in ("contiguous_format", "preserve_format"):
            raise TypeError("is_contiguous(): argument 'memory_format' must be an "
                            f"ember.memory_format, not {type(memory_format).__name__}")
        return bool(data.flags.c_contiguous)

    @property
    def real(self) -> "Tensor":
        """The real part: the tensor itself (ember's tensors are real)."""
        return self

    @property
    def imag(self) -> "Tensor":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")

    def stride(self, dim: int | None = None):
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim, "stride")]

    def data_ptr(self) -> int:
        if isinstance(self._data, np.ndarray):
            return self._data.__array_interface__["data"][0]
        return self._data.data.ptr

    def get_device(self) -> int:
        return -1 if self._device.type == "cpu" else self._device.index

    @property
    def _version(self) -> int:
        counter = self._version_counter
        if counter.inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return counter.value

    # ----------------------------------------------------------------- autograd state
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Start (or stop) recording ops on this leaf tensor. Returns self."""
        requires_grad = bool(requires_grad)
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if requires_grad and self._version_counter.inference and not _state.inference:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed (it was made under ember.inference_mode(); clone it first: "
                "x = x.clone().requires_grad_())")
        if requires_grad and self._data.dtype.kind not in "fV":
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients "
                f"(this one is {self.dtype.name}; convert it first, e.g. x.float())")
        self._requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (its ``_base``), as in PyTorch.

        >>> a = ember.ones(3)
        >>> a[1:]._is_view(), (a + 1)._is_view()
        (True, False)
        """
        return self._base is not None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def grad(self):
        # (a non-leaf's .grad filled by backward(inputs=...) is read without a warning)
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead.", UserWarning,
                stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if _tracing.state.tracer is not None:
            tracer = _tracing.current()
            if tracer is not None:
                if value is None:  # clearing, as zero_grad does: replayed as this call
                    tracer.record_call(_clear_grad, self, (), {})
                    return
                tracer.unsafe("assigning a tensor to .grad (clear it with None, or use "
                              "optimizer.zero_grad(), in a compiled step)")
        if value is not None:
            # PyTorch's checks, in its order: self, type, dtype, device, size
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if not isinstance(value, Tensor):
                raise TypeError("assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            wanted = self.__dict__.get("_grad_dtype", self.dtype)  # None: any dtype
            if wanted is not None and value.dtype is not wanted:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value.dtype.name}' to a "
                    f"tensor with grad_dtype '{wanted.name}'. The gradient must match the "
                    "tensor's grad_dtype (defaults to the tensor's dtype); convert it, e.g. "
                    f"g.to(ember.{wanted.name}), or set the tensor's grad_dtype")
            if value._device != self._device:
                raise RuntimeError(
                    f"attempting to assign a gradient on device '{value._device}' to a tensor "
                    f"on device '{self._device}'. Please ensure that the gradient and the "
                    "tensor are on the same device")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a "
                    f"tensor of size '{list(self.shape)}'. Please ensure that the gradient and "
                    "the tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def data(self) -> "Tensor":
        """The same memory as a tensor outside the graph, with a version counter of its own
        (as in PyTorch): autograd does not see changes through it. Prefer ``detach()``."""
        out = Tensor._make(self._data, self._device, False)
        counter = self._version_counter
        out._version_counter = UNWRITTEN_INFERENCE if counter.inference else (
            UNWRITTEN_NO_GRAD if counter.no_grad else UNWRITTEN)
        return out

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Tensor.data must be set to a Tensor, not {type(value).__name__}")
        self._data = value._data
        self._device = value._device

    def detach(self) -> "Tensor":
        """A tensor sharing this one's memory and version counter, outside the graph."""
        out = Tensor._make(self._data, self._device, False)
        out._version_counter = counter_of(self)
        out._cut = "detach"
        return out

    def detach_(self) -> "Tensor":
        """Cut this tensor from the graph in place; it becomes a leaf."""
        if self._base is not None and self._base._requires_grad and self.grad_fn is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        self._cut = "detach"
        return self

    def retain_grad(self) -> None:
        """Fill ``.grad`` of this non-leaf tensor during backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        import weakref

        ref = weakref.ref(self)

        def retain(grad):
            tensor = ref()
            if tensor is not None:
                if tensor._grad is None:
                    tensor._grad = grad.detach().clone() if not _state.enabled else grad.clone()
                else:
                    tensor._grad = tensor._grad + grad
            return None

        retain._ember_retain = True
        self.grad_fn._register_tensor_hook(self._output_nr, retain)
        self._retains_grad = True

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def register_hook(self, hook) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient. Returns a handle with ``remove()``."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return RemovableHandle(self._hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        """Compute the gradient of this tensor w.r.t. the graph's leaves into their ``.grad``.

        ``gradient`` is required unless the tensor has one element. The graph's saved
        values are freed afterwards unless ``retain_graph=True``.
        """
        _autograd_backward()(self, gradient, retain_graph, create_graph, inputs=inputs)

    # ----------------------------------------------------------------- conversions
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The NumPy array behind a CPU tensor (shared memory)."""
        if _tracing.state.tracer is not None:
            _tracing.data_dependent("numpy()")
        if force:
            return backend.cuda.to_host(self._data) if self._device.type == "cuda" else self._data
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead.")
        if self._device.type != "cpu":
            raise TypeError(
                f"can't convert {self._device} device type tensor to numpy. Use Tensor.cpu() to "
                "copy the tensor to host memory first.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        if dtype is not None and array.dtype != dtype:
            return array.astype(dtype)
        return array.copy() if copy else array

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if _tracing.state.tracer is not None:
            _tracing.data_dependent("item()")
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.item() if self._device.type == "cpu" else self._host().item()

    def tolist(self):
        """Nested Python lists of Python numbers."""
        if _tracing.state.tracer is not None:
            _tracing.data_dependent("tolist()")
        return self._host().tolist()

    def _host(self) -> np.ndarray:
        return self._data if self._device.type == "cpu" else backend.cuda.to_host(self._data)

    def to(self, *args, **kwargs) -> "Tensor":
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other)``; returns self
        when nothing changes (unless ``copy=True``). Differentiable. ``memory_format=``
        (``ember.channels_last``, ``contiguous_format``) lays the result out so.

        >>> ember.ones(2, 3, 4, 5).to(memory_format=ember.channels_last).stride()
        (60, 1, 15, 3)
        """
        layout = kwargs.get("memory_format")
        device, dtype, copy = _parse_to(args, kwargs)
        target_device = self._device if device is None else backend.parse_device(device)
        target_dtype = self.dtype if dtype is None else dtypes.to_dtype(dtype)
        same = target_device == self._device and target_dtype is self.dtype and not copy
        if layout is None or getattr(layout, "_name", None) == "preserve_format":
            return self if same else _F["_to_copy"](self, target_dtype, target_device)
        if same:
            # PyTorch keeps the tensor when the format is the one its strides suggest
            if getattr(layout, "_name", None) == _suggested_format(self._data):
                return self
            return _F["clone"](self, memory_format=layout)
        return _F["_to_copy"](self, target_dtype, target_device).contiguous(
            memory_format=layout)

    def cuda(self, device=None, non_blocking: bool = False) -> "Tensor":
        target = "cuda" if device is None else (
            f"cuda:{device}" if isinstance(device, int) else device)
        return self.to(target)

    def cpu(self) -> "Tensor":
        return self.to(CPU)

    def type(self, dtype=None):
        if dtype is None:
            return _legacy_type_name(self)
        return self.to(dtypes.to_dtype(dtype))

    def float(self) -> "Tensor":
        return self.to(dtypes.float32)

    def double(self) -> "Tensor":
        return self.to(dtypes.float64)

    def half(self) -> "Tensor":
        return self.to(dtypes.float16)

    def bfloat16(self) -> "Tensor":
        return self.to(dtypes.bfloat16)

    def int(self) -> "Tensor":
        return self.to(dtypes.int32)

    def long(self) -> "Tensor":
        return self.to(dtypes.int64)

    def short(self) -> "Tensor":
        return self.to(dtypes.int16)

    def char(self) -> "Tensor":
        return self.to(dtypes.int8)

    def byte(self) -> "Tensor":
        return self.to(dtypes.uint8)

    def bool(self) -> "Tensor":
        return self.to(dtypes.bool)

    def type_as(self, other: "Tensor") -> "Tensor":
        return self.to(other.dtype)

    def __dlpack__(self, stream=None, **kwargs):
        if self._requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        if stream is None:
            return self._data.__dlpack__(**kwargs)
        return self._data.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    # ----------------------------------------------------------------- Python protocol
    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with more than one value is ambiguous "
                f"(it has {self._data.size}); use .any() or .all()")
        return bool(self.item())

    def __float__(self) -> float:
        if self._data.size != 1:
            raise _not_scalar()
        return float(self.item())

    def __int__(self) -> int:
        if self._data.size != 1:
            raise _not_scalar()
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self) -> complex:
        if self._data.size != 1:
            raise _not_scalar()
        return complex(self.item())

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __repr__(self) -> str:
        from ._tensor_str import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__
    __hash__ = object.__hash__

    def __reduce_ex__(self, protocol):
        raise TypeError(
            "ember tensors are not pickled (pickle can run code on load); use ember.save / "
            "ember.load, or send tensor.numpy() between processes")

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment")
        out = Tensor._make(self._data.copy(), self._device, self._requires_grad)
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = out
        return out

    @property
    def T(self) -> "Tensor":
        ndim = self._data.ndim
        if ndim > 2:
            warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse "
                          "their shape is deprecated; use x.mT or x.permute.", UserWarning,
                          stacklevel=2)
        elif ndim == 0:
            warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the "
                          "identity in these cases.", UserWarning, stacklevel=2)
        return _F["permute"](self, tuple(range(ndim - 1, -1, -1)))

    @property
    def mT(self) -> "Tensor":
        if self._data.ndim < 2:
            return _not_matrices(self, "mT", "This function is the identity in these cases.")
        return _F["transpose"](self, -2, -1)

    @property
    def H(self) -> "Tensor":
        ndim = self._data.ndim
        if ndim == 2:
            return _F["transpose"](self, 0, 1)
        if ndim == 0:
            warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                          UserWarning, stacklevel=2)
            return self
        hint = " For batches of matrices, consider using tensor.mH" if ndim > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{ndim}-D tensor.{hint}")

    @property
    def mH(self) -> "Tensor":  # real dtypes only: the conjugate is the tensor itself
        if self._data.ndim < 2:
            return _not_matrices(self, "mH", "Consider using x.conj().")
        return _F["transpose"](self, -2, -1)

    # ----------------------------------------------------------------- operators
    # The arithmetic, bitwise and ordering operators and the in-place forms are bound by
    # the op registry with their ops (``register_op(operators=..., inplace=...)``).
    def __pos__(self):
        return self

    def __eq__(self, other):
        return False if other is None else _equality(self, other, "eq")

    def __ne__(self, other):
        return True if other is None else _equality(self, other, "ne")

    # ----------------------------------------------------------------- in-place ops
    def zero_(self):
        """Set every element to 0 in place."""
        return _inplace(self, _F["_fill"], 0)

    def fill_(self, value):
        """Set every element to ``value`` in place."""
        return _inplace(self, _F["_fill"], value)

    def copy_(self, src, non_blocking: bool = False):
        """Copy ``src`` (broadcast, cast, moved to this tensor's device) into this tensor."""
        check_no_overlap(self._data, (src,))
        return _inplace(self, _F["_copy_into"], src)

    def is_pinned(self, device=None) -> bool:
        """Always False: ember never allocates page-locked host memory."""
        return False

    def share_memory_(self):
        """Returns self. ember's DataLoader workers send NumPy arrays (pickled batches)
        back to the main process rather than sharing tensor storage, so there is nothing to
        move into shared memory."""
        return self

    def is_shared(self) -> bool:
        """False: ember tensors live in ordinary process memory (see share_memory_)."""
        return False

    # ----------------------------------------------------------------- memory and metadata
    @property
    def layout(self):
        """``ember.strided``: ember tensors are dense arrays."""
        from .runtime import strided

        return strided

    @property
    def name(self):
        """None, as on PyTorch's tensors outside its experimental first-class dimensions."""
        return None

    def is_inference(self) -> bool:
        """Whether this tensor was made under ``ember.inference_mode()`` (or is a view of
        one).

        >>> import ember
        >>> with ember.inference_mode():
        ...     x = ember.ones(2)
        >>> x.is_inference(), ember.ones(2).is_inference()
        (True, False)
        """
        return self._version_counter.inference

    def storage_offset(self) -> int:
        """Where this tensor's first element sits in the memory it shares with its base,
        counted in elements.

        >>> import ember
        >>> ember.arange(10.0).view(2, 5)[1, 2:].storage_offset()
        7
        """
        return backend.storage_offset(self._data)

    def new(self, *args, **kwargs) -> "Tensor":
        """Legacy constructor with this tensor's dtype and device: ``x.new(2, 3)`` (an
        uninitialized 2x3), ``x.new([1, 2])`` (data), ``x.new()`` (empty).

        >>> import ember
        >>> ember.zeros(1, dtype=ember.float64).new([1, 2])
        tensor([1., 2.], dtype=ember.float64)
        """
        device = kwargs.pop("device", self._device)
        if kwargs:
            raise TypeError(f"new() got unexpected keyword arguments {sorted(kwargs)}")
        if len(args) == 1 and isinstance(args[0], Tensor):
            if args[0].dtype is not self.dtype:
                raise TypeError(f"expected {self.dtype} (got {args[0].dtype})")
            return args[0]
        if len(args) == 1 and isinstance(args[0], Size):
            args = tuple(args[0])
        if not args:
            return _F["new_empty"](self, (0,), device=device)
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return _F["new_empty"](self, args, device=device)
        if len(args) == 1:
            return _F["new_tensor"](self, args[0], device=device)
        raise TypeError(f"new() received an invalid combination of arguments: "
                        f"{tuple(type(a).__name__ for a in args)}")

    def new_empty_strided(self, size, stride, *, dtype=None, device=None,
                          requires_grad=False, layout=None, pin_memory=False) -> "Tensor":
        """An uninitialized tensor with the given sizes and strides, this tensor's dtype
        and device by default (see ``ember.empty_strided``)."""
        from .memory import empty_strided

        return empty_strided(size, stride, dtype=dtype or self.dtype,
                             device=device or self._device, requires_grad=requires_grad)

    @property
    def grad_dtype(self):
        """The dtype ``.grad`` is kept in (this tensor's dtype by default); leaf tensors
        only. ``backward()`` casts the accumulated gradient to it. ``None`` (PyTorch: any
        dtype) keeps gradients in the tensor's dtype, the one ember accumulates in.

        >>> import ember
        >>> x = ember.ones(2, requires_grad=True)
        >>> x.grad_dtype = ember.float64
        >>> (x * 3).sum().backward()
        >>> x.grad
        tensor([3., 3.], dtype=ember.float64)
        """
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self.__dict__.get("_grad_dtype", self.dtype)

    @grad_dtype.setter
    def grad_dtype(self, value) -> None:
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, dtypes.dtype):
            raise TypeError(f"grad_dtype must be an ember.dtype or None, got "
                            f"{type(value).__name__}")
        self.__dict__["_grad_dtype"] = value

    def register_post_accumulate_grad_hook(self, hook) -> RemovableHandle:
        """Call ``hook(tensor)`` after ``backward()`` has accumulated this leaf's ``.grad``
        (to step an optimizer per parameter, for instance). Returns a handle with
        ``remove()``.

        >>> import ember
        >>> w = ember.ones(2, requires_grad=True)
        >>> seen = []
        >>> handle = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad))
        >>> (w * 2).sum().backward()
        >>> seen
        [tensor([2., 2.])]
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        hooks = self.__dict__.setdefault("_post_accumulate_hooks", [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)


def _not_scalar() -> ValueError:
    return ValueError("only one element tensors can be converted to Python scalars")


def _not_matrices(t: Tensor, name: str, hint: str) -> Tensor:
    # PyTorch: deprecated identity on 0-d tensors, an error on 1-d ones
    if t._data.ndim == 0:
        warnings.warn(f"Tensor.{name} is deprecated on 0-D tensors. {hint}", UserWarning,
                      stacklevel=3)
        return t
    raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                       "Got 1-D tensor.")


def _equality(tensor, other, op: str):
    """``==`` / ``!=``: the op, or NotImplemented for an operand it can't compare (a
    string, a list), so that Python compares by identity, as in PyTorch."""
    try:
        return _F[op](tensor, other)
    except TypeError:
        if _comparable(other):
            raise
        return NotImplemented


def _comparable(other) -> bool:
    """Whether == should keep eq's TypeError for ``other`` rather than give NotImplemented
    (strings, lists, objects)."""
    return isinstance(other, (Tensor, np.ndarray, np.generic, numbers.Number))


def _clear_grad(tensor) -> None:
    tensor._grad = None


def _autograd_backward():
    """ember.autograd.backward, imported once on first use: the one deliberate upward
    import of this module (autograd is built on Tensor)."""
    global _BACKWARD
    if _BACKWARD is None:
        from .autograd import backward

        _BACKWARD = backward
    return _BACKWARD


_BACKWARD = None


def _init(t: Tensor, data, device, requires_grad: bool) -> None:
    t._data = data
    t._device = device
    t._requires_grad = False
    t.grad_fn = None
    t._version_counter = _VersionCounter()
    t.requires_grad_(requires_grad)


def _wrap_dim(dim: int, ndim: int, op: str) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
            f" in {op}")
    return dim % n


def _parse_to(args, kwargs):
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a._device, a.dtype
        elif isinstance(a, dtypes.dtype) or a in (float, int, bool):
            dtype = a
        elif isinstance(a, (str, backend.device, int)) and not isinstance(a, bool):
            device = a
        elif isinstance(a, bool):
            continue  # to(device, dtype, non_blocking) positional flag
        else:
            raise TypeError(f"to() received an invalid argument {a!r}: expected a device, dtype "
                            "or tensor")
    return device, dtype, copy




def _suggested_format(data) -> str:
    """The memory format PyTorch reads from an array's strides (``suggest_memory_format``):
    channels_last for a 4-D (channels_last_3d for a 5-D) array whose dims lie in memory
    channels first, then width, height (depth), batch; else contiguous_format, also in
    the cases the strides leave open (a stride-0 channel dim, size-1 dims of equal
    strides)."""
    if data.ndim not in (4, 5):
        return "contiguous_format"
    shape = data.shape
    strides = [s // data.itemsize for s in data.strides]
    if strides[1] == 0:
        return "contiguous_format"
    low = 0
    for d in (1, 3, 2, 0) if data.ndim == 4 else (1, 4, 3, 2, 0):
        if shape[d] == 0 or strides[d] < low or (d == 0 and low == strides[1]):
            return "contiguous_format"
        low = strides[d] * max(shape[d], 1)
    return "channels_last" if data.ndim == 4 else "channels_last_3d"


def _legacy_type_name(t: Tensor) -> str:
    prefix = "ember.cuda." if t._device.type == "cuda" else "ember."
    return prefix + t.dtype.scalar_name + "Tensor"


def check_no_overlap(target, sources) -> None:
    """Refuse an in-place write into ``target`` (an array) from a Tensor among ``sources``
    that shares part of its memory, as PyTorch does (``x[1:].add_(x[:-1])``)."""
    for source in sources:
        if isinstance(source, Tensor) and backend.partial_overlap(target, source._data):
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation.")


def check_writable(self: Tensor) -> None:
    """Refuse an in-place write PyTorch refuses: into an inference tensor outside
    ``inference_mode``; or one ember refuses where PyTorch's result would depend on the
    order it writes elements in: into a tensor two of whose elements share a memory
    location (an expanded view, unfold's windows with a step below their size, an
    overlapping as_strided). A view whose memory only carries NumPy's read-only flag (a
    view of such a view that doesn't overlap itself) gets a writable array over the same
    memory."""
    if self._version_counter.inference and not _state.inference:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed. It was "
            "made under ember.inference_mode(); make a clone to get a normal tensor before "
            "the in-place update (x = x.clone()), or do the update inside inference_mode.")
    flags = self._data.flags
    if flags.c_contiguous and getattr(flags, "writeable", True):
        return
    _check_layout(self)


def _check_layout(self: Tensor) -> None:
    data = self._data
    if backend.internal_overlap(data):
        expanded = any(s == 0 and n > 1 for s, n in zip(data.strides, data.shape))
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to "
            "a single memory location (" + ("it is an expanded view" if expanded else
                                            "its elements overlap: unfold's windows with a "
                                            "step below their size, or as_strided") + "). "
            "Please clone() the tensor before performing the operation.")
    target = backend.writable(data)
    if target is None:
        raise RuntimeError(
            "unsupported operation: the written-to tensor's memory is read-only (it shares "
            "a NumPy array that is not writeable). Please clone() the tensor before "
            "performing the operation.")
    self._data = target


def apply_inplace(self: Tensor, function, *args, **kwargs) -> Tensor:
    """Run ``function(self, *args)`` out of place, write the result into self's memory and
    make self the output of that graph node. The shared version counter goes up, so any
    node that saved the old value will refuse to backward."""
    grad_on = _state.enabled
    if _tracing.state.tracer is not None:
        _tracing.unsupported("an in-place op")
    check_writable(self)
    if grad_on and self.grad_fn is None and self._requires_grad:
        if self._base is not None:  # a view made under no_grad of a tensor requiring grad
            raise RuntimeError(
                "A view was created in no_grad mode and is being modified inplace with grad "
                "mode enabled. Given that this use case is ambiguous and error-prone, it is "
                "forbidden. You can clarify your code by moving both the view and the inplace "
                "either both inside the no_grad block (if you don't want the inplace to be "
                "tracked) or both outside (if you want the inplace to be tracked).")
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation. "
            "Change parameters inside `with torch.no_grad():` (here: `with ember.no_grad():`), "
            "or use an out-of-place op.")
    base = self._base
    if grad_on and base is not None and base.grad_fn is None and base._requires_grad:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place "
            "operation. Do it inside `with ember.no_grad():`, or clone the tensor first.")
    result = function(self, *args, **kwargs)
    if result.grad_fn is not None:
        _snapshot_saved(result.grad_fn, counter_of(self))
    if result.shape != self.shape:
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}")
    if result.dtype is not self.dtype:
        if not dtypes.can_cast(result.dtype, self.dtype):
            raise RuntimeError(
                f"result type {result.dtype.name} can't be cast to the desired output type "
                f"{self.dtype.name}")
        result = result.to(self.dtype)
    if self._data.ndim == 0 and isinstance(self._data, np.ndarray):
        self._data[()] = result._data
    else:
        self._data[...] = result._data
    bump_version(self)
    if result._requires_grad:
        if base is not None and (base._requires_grad or result._requires_grad):
            _F["_rebase_view"](self, result)
        else:
            self.grad_fn = result.grad_fn
            self._output_nr = result._output_nr
            self._requires_grad = True
        root = base if base is not None else self
        if root._views:
            _F["_refresh_views"](root, self)
    return self


_inplace = apply_inplace


def _snapshot_saved(node, counter) -> None:
    """The op about to be written in place may have saved the very tensor it overwrites
    (``y.pow_(2)`` saves y). Keep a copy of the old value for its backward, as PyTorch does,
    instead of failing the version check."""
    saved = node._saved
    if not saved:
        return
    saved = list(saved)  # flat (value, version) pairs
    for i in range(0, len(saved), 2):
        old = saved[i]
        if saved[i + 1] is not None and old._version_counter is counter:
            copy = Tensor._make(old._data.copy(), old._device, old._requires_grad)
            copy.grad_fn, copy._output_nr = old.grad_fn, old._output_nr
            if old.grad_fn is None and old._requires_grad:
                copy._accumulator = old._accumulator
            saved[i:i + 2] = (copy, 0)
    node._saved = tuple(saved)


def tensor_or_none(value):
    return value if isinstance(value, Tensor) else None
