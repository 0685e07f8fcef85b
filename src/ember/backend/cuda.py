"""The CUDA backend: the only module that imports CuPy, and only when a GPU is asked for.

``is_available()`` is cheap and never raises: without the CuPy package or the CUDA driver
library it answers False without importing CuPy.
"""
from __future__ import annotations

import contextlib
import ctypes.util
import importlib.util
import os
import warnings
from typing import Any

_cupy: Any = None
_available: bool | None = None
_reason = ""
# The test suite's strict stand-in for CuPy (backend/standin.py), for CPU-only machines.
STANDIN = os.environ.get("EMBER_TEST_STANDIN") == "1"


def _driver_present() -> bool:
    if ctypes.util.find_library("cuda"):
        return True
    for path in ("/dev/nvidiactl", "/dev/nvidia0", "/usr/lib/wsl/lib/libcuda.so"):
        if os.path.exists(path):
            return True
    return False


def is_available() -> bool:
    """True when CuPy is installed and sees at least one working GPU."""
    global _available, _reason
    if _available is None:
        _available = False
        if STANDIN:
            _available = _load() is not None
        elif importlib.util.find_spec("cupy") is None:
            _reason = "CuPy is not installed: pip install 'ember[cuda12]' or 'ember[cuda13]'"
        elif not _driver_present():
            _reason = "no NVIDIA driver was found on this machine"
        else:
            try:
                _available = _load().cuda.runtime.getDeviceCount() > 0
                if not _available:
                    _reason = "CuPy found no CUDA device"
            except Exception as error:  # any CUDA failure means "not available"
                _reason = f"CuPy could not use the GPU: {error}"
    return _available


_forbidden: str | None = None


def forbid(reason: str) -> None:
    """Make every later use of CUDA in this process raise RuntimeError(reason): a
    DataLoader worker calls it, since a forked child can't use its parent's CUDA context."""
    global _forbidden
    _forbidden = reason


def cupy():
    """The cupy module, or a RuntimeError that says why CUDA can't be used."""
    if _forbidden is not None:
        raise RuntimeError(_forbidden)
    if not is_available():
        raise RuntimeError(f"CUDA is not available: {_reason}")
    return _cupy


def _load():
    global _cupy
    if _cupy is None:
        if STANDIN:
            from . import standin

            _cupy = standin.cupy
        else:
            import cupy

            _cupy = cupy
    return _cupy


def _cupyx():
    if STANDIN:
        from . import standin

        return standin.cupyx
    import cupyx

    return cupyx


def scipy_special(name: str):
    """``cupyx.scipy.special.<name>``, or None where this CuPy has no such function."""
    if STANDIN:
        from . import standin

        return standin.cupyx_special(name)
    try:
        import cupyx.scipy.special as special
    except ImportError:
        return None
    return getattr(special, name, None)


def device_count() -> int:
    return _cupy.cuda.runtime.getDeviceCount() if is_available() else 0


def current_device() -> int:
    return cupy().cuda.runtime.getDevice()


def set_device(index: int) -> None:
    cupy().cuda.runtime.setDevice(index)


def synchronize(index: int | None = None) -> None:
    """Wait for the work queued on every stream of the GPU (the current one by default)."""
    cp = cupy()
    cp.cuda.Device(cp.cuda.runtime.getDevice() if index is None else index).synchronize()


_driver = None


def _driver_library():
    """libcuda through ctypes (for the one query CuPy doesn't offer), or None."""
    global _driver
    if _driver is None:
        _driver = False
        for name in ("libcuda.so.1", ctypes.util.find_library("cuda")):
            if name:
                try:
                    _driver = ctypes.CDLL(name)
                    break
                except OSError:
                    continue
    return _driver or None


def has_context(index: int) -> bool | None:
    """Whether the GPU's primary CUDA context exists yet (None when the driver can't say).
    Asking creates nothing."""
    driver = _driver_library()
    if driver is None:
        return None
    handle, flags, active = ctypes.c_int(), ctypes.c_uint(), ctypes.c_int()
    try:
        if driver.cuInit(0) != 0 or driver.cuDeviceGet(ctypes.byref(handle), index) != 0:
            return None
        if driver.cuDevicePrimaryCtxGetState(handle, ctypes.byref(flags),
                                             ctypes.byref(active)) != 0:
            return None
    except AttributeError:  # a driver library without these entry points
        return None
    return bool(active.value)


def create_context(index: int) -> None:
    """Make sure the GPU's CUDA context exists: the first CUDA call on a device creates
    it, which takes a large part of a second."""
    cupy().cuda.Device(index).synchronize()


def get_device_name(index: int | None = None) -> str:
    cp = cupy()
    properties = cp.cuda.runtime.getDeviceProperties(current_device() if index is None else index)
    name = properties["name"]
    return name.decode() if isinstance(name, bytes) else name


def device_guard(index: int):
    """Make ``index`` the current GPU inside a with-block (no-op when it already is)."""
    cp = cupy()
    if cp.cuda.runtime.getDevice() == index:
        return contextlib.nullcontext()
    return cp.cuda.Device(index)


def to_host(array):
    return _cupy.asnumpy(array)


def from_host(array, index: int | None):
    cp = cupy()
    with cp.cuda.Device(index):
        if array.dtype.kind != "V":
            return cp.asarray(array)
        try:  # bfloat16: CuPy builds that know ml_dtypes' type hold it
            return cp.asarray(array)
        except (TypeError, ValueError) as error:
            raise TypeError(f"this CuPy build cannot hold {array.dtype} arrays ({error}); "
                            "keep bfloat16 tensors on the CPU, or use float16 on CUDA") from None


def scatter_add(target, index, values) -> None:
    """``target[index] += values`` with repeated indices accumulated."""
    _cupy.add.at(target, index, values)


def array_device_index(array) -> int:
    return array.device.id


def memory_allocated() -> int:
    return cupy().get_default_memory_pool().used_bytes()


def empty_cache() -> None:
    cupy().get_default_memory_pool().free_all_blocks()


def view_reshape(array, shape):
    """Reshape without copying; ValueError when the strides don't allow it."""
    view = array.view()
    try:
        view.shape = shape
    except AttributeError as error:
        raise ValueError(str(error)) from None
    return view


# ----------------------------------------------------------------------------- fused kernels
# An elementwise formula (autograd/backward_math.py) runs on CuPy arrays as one kernel that
# cupy.fuse builds from the formula's own lines, traced on the CuPy namespace: one launch
# and one output instead of a launch and a temporary per NumPy-style step.
_fused: dict = {}


def fused(formula, namespace) -> FusedFormula:
    """The fused kernel of ``formula(namespace, *args)``, made on first use and kept: CuPy
    caches the compiled kernels inside the fused function (per dtypes and ndim), so it is
    decorated once per formula, never per call."""
    kernel = _fused.get(formula)
    if kernel is None:
        kernel = _fused[formula] = FusedFormula(formula, namespace)
    return kernel


def fused_formulas() -> dict:
    """Every formula fused so far in this process: ``{name: FusedFormula}``."""
    return {kernel.name: kernel for kernel in _fused.values()}


def _compile_errors() -> tuple:
    errors: tuple = (TypeError, ValueError, NotImplementedError, AttributeError)
    if not STANDIN:
        from cupy.cuda import compiler

        errors += (compiler.CompileException,)
    return errors


def _signature(args) -> tuple:
    return tuple((a.dtype.str, a.ndim) if hasattr(a, "dtype") else type(a) for a in args)


class FusedFormula:
    """One elementwise formula as a ``cupy.fuse`` kernel.

    Should CuPy be unable to fuse the formula for some argument types (an older CuPy, a
    dtype its ufuncs lack), that call runs the same formula unfused, op by op, and the
    reason is kept in ``unfused`` (and warned about once): the results stay right, only
    slower. Inputs that are wrong anyway raise their own error from that unfused run.
    On CuPy before 14, whose fused kernels type scalar arguments as 64-bit, results come
    back with the dtypes eager gives (cast where they differ).
    """

    __slots__ = ("formula", "namespace", "name", "kernel", "unfused", "_errors", "casts",
                 "_dtypes")

    def __init__(self, formula, namespace):
        self.formula = formula
        self.namespace = namespace
        self.name = f"{formula.__module__}.{formula.__qualname__}"

        def traced(*args):
            return formula(namespace, *args)

        traced.__name__ = formula.__name__
        # a C identifier (a lambda's name is '<lambda>')
        kernel_name = "ember_" + "".join(c if c.isalnum() else "_" for c in
                                         formula.__name__.strip("_"))
        self.kernel = cupy().fuse(kernel_name=kernel_name)(traced)
        self.unfused: dict = {}
        self._errors = _compile_errors()
        self.casts = _fuse_widens_scalars()  # results are checked against eager's dtypes
        self._dtypes: dict = {}  # signature -> the dtypes eager's results have

    def __call__(self, *args):
        if self.unfused and _signature(args) in self.unfused:
            return self.formula(self.namespace, *args)
        try:
            out = self.kernel(*args)
        except self._errors as error:
            reason = f"{type(error).__name__}: {error}"
        else:
            return out if out is None or not self.casts else self._as_eager(args, out)
        out = self.formula(self.namespace, *args)  # wrong inputs raise their own error here
        self.unfused[_signature(args)] = reason
        warnings.warn(f"ember: cupy.fuse could not fuse {self.name} for {_signature(args)} "
                      f"({reason}); it runs unfused, one kernel per step", RuntimeWarning,
                      stacklevel=2)
        return out

    def _as_eager(self, args, out):
        """``out`` with the dtypes eager's results have, cast only where they differ."""
        key = _signature(args)
        dtypes = self._dtypes.get(key)
        if dtypes is None:
            dtypes = self._dtypes[key] = self._eager_dtypes(args)
        if type(out) is not tuple:
            return out if not dtypes or out.dtype == dtypes[0] else out.astype(dtypes[0])
        return tuple(r if i >= len(dtypes) or r.dtype == dtypes[i] else r.astype(dtypes[i])
                     for i, r in enumerate(out))

    def _eager_dtypes(self, args) -> tuple:
        """The result dtypes of the formula run on the host on one-element arrays of the
        arguments' dtypes and ndims (scalars as they are): eager's type promotion, Python
        numbers weak. Empty where that run fails (then nothing is cast)."""
        import numpy as np

        host = [np.ones((1,) * a.ndim, a.dtype) if isinstance(a, cupy().ndarray) else a
                for a in args]
        try:
            with np.errstate(all="ignore"):
                out = self.formula(type(self.namespace)(np), *host)
        except Exception:  # a formula that only runs on device arrays: keep its dtypes
            return ()
        results = out if type(out) is tuple else (out,)
        return tuple(getattr(r, "dtype", None) for r in results)

    def __repr__(self):
        return f"<FusedFormula {self.name}>"


def _fuse_widens_scalars() -> bool:
    """CuPy before 14 types a scalar argument of a fused kernel as a 64-bit array, so a
    float32 array times a Python float comes out float64 where eager keeps float32."""
    version = str(getattr(cupy(), "__version__", ""))
    major = version.split(".")[0]
    return major.isdigit() and int(major) < 14


_ATOMIC_MULTIPLY = r"""
__device__ void atomic_multiply(float* address, float value) {
    int* word = (int*)address;
    int old = *word, assumed;
    do {
        assumed = old;
        old = atomicCAS(word, assumed, __float_as_int(__int_as_float(assumed) * value));
    } while (assumed != old);
}
__device__ void atomic_multiply(double* address, double value) {
    unsigned long long* word = (unsigned long long*)address;
    unsigned long long old = *word, assumed;
    do {
        assumed = old;
        old = atomicCAS(word, assumed, (unsigned long long)__double_as_longlong(
            __longlong_as_double((long long)assumed) * value));
    } while (assumed != old);
}
__device__ void atomic_multiply(long long* address, long long value) {
    unsigned long long* word = (unsigned long long*)address;
    unsigned long long old = *word, assumed;
    do {
        assumed = old;
        old = atomicCAS(word, assumed, (unsigned long long)((long long)assumed * value));
    } while (assumed != old);
}
"""
_multiply_kernel = None


def scatter_reduce(target, index, values, op: str) -> None:
    """``target[index] = op(target[index], values)`` with repeated indices all applied.
    cupyx covers add/maximum/minimum with atomics; multiply has no CUDA atomic, so it runs
    a compare-and-swap loop per element (in float32, float64 or int64)."""
    global _multiply_kernel
    cp = cupy()
    if op != "multiply":
        cupyx = _cupyx()
        scatter = {"add": cupyx.scatter_add, "maximum": cupyx.scatter_max,
                   "minimum": cupyx.scatter_min}[op]
        scatter(target, index, values)
        return
    if STANDIN:  # no kernels to compile on the stand-in: the host's multiply.at
        from . import standin

        standin.multiply_at(target, index, values)
        return
    if _multiply_kernel is None:
        _multiply_kernel = cp.ElementwiseKernel(
            "T value, int64 position", "raw T target",
            "atomic_multiply(&target[position], value)", "ember_scatter_multiply",
            preamble=_ATOMIC_MULTIPLY)
    positions = cp.arange(target.size, dtype=cp.int64).reshape(target.shape)[index]
    if target.dtype in (cp.float32, cp.float64):
        work_dtype = target.dtype
    else:  # float16 in float64, integers and bools in int64
        work_dtype = cp.float64 if target.dtype.kind in "fV" else cp.int64
    work = target if target.dtype == work_dtype and target.flags.c_contiguous else \
        cp.ascontiguousarray(target, dtype=work_dtype)
    values = cp.broadcast_to(cp.asarray(values, dtype=work_dtype), positions.shape)
    _multiply_kernel(values, positions, work)
    if work is not target:
        target[...] = work.astype(target.dtype)


def linalg_errstate():
    """CuPy's linalg routines report singular / non-positive-definite inputs (as
    numpy.linalg.LinAlgError) only inside ``cupyx.errstate(linalg='raise')``."""
    return _cupyx().errstate(linalg="raise")


def pinned_copy(array):
    """A NumPy copy of the host array ``array`` in page-locked (pinned) memory, from which
    copies to the GPU are faster and can be asynchronous (DataLoader(pin_memory=True))."""
    import numpy as np

    memory = cupy().cuda.alloc_pinned_memory(max(array.nbytes, 1))
    pinned = np.frombuffer(memory, dtype=array.dtype, count=array.size).reshape(array.shape)
    pinned[...] = array
    return pinned


def as_strided(array, shape, strides, writeable: bool = True):
    """A view of ``array``'s memory with the given shape and byte strides (CuPy arrays
    have no read-only flag, so ``writeable`` is not enforced here)."""
    if STANDIN:
        # the stand-in keeps a NumPy array underneath: make the view over its owner, as
        # CuPy's views keep pointing into the allocation they came from
        from . import cpu, standin

        return standin.ndarray(cpu.as_strided(array._a, shape, strides), array._device)
    return cupy().lib.stride_tricks.as_strided(array, shape, strides)


def writable(array):
    """``array``: CuPy arrays have no read-only flag (the stand-in's NumPy data, which may
    carry one, gets the CPU's answer)."""
    if STANDIN:
        from . import cpu, standin

        data = cpu.writable(array._a)
        if data is None or data is array._a:
            return None if data is None else array
        return standin.ndarray(data, array._device)
    return array


class RandomSource:
    """NumPy's Generator methods that ember uses, drawn on the GPU. CuPy's own Generator
    lacks some of them (permutation), so this wraps CuPy's complete RandomState."""

    def __init__(self, seed: int, index: int):
        cp = cupy()
        with cp.cuda.Device(index):
            self._state = cp.random.RandomState(seed % (2 ** 63))
        self._index = index

    def _draw(self, method: str, *args, **kwargs):
        _draws[0] += 1
        with device_guard(self._index):
            return getattr(self._state, method)(*args, **kwargs)

    def random(self, size=None, dtype=float):
        return self._draw("random_sample", size=size, dtype=dtype)

    def standard_normal(self, size=None, dtype=float):
        return self._draw("standard_normal", size=size, dtype=dtype)

    def standard_exponential(self, size=None, dtype=float):
        return self._draw("standard_exponential", size=size, dtype=dtype)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float):
        return self._draw("uniform", low, high, size=size, dtype=dtype)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=float):
        return self._draw("normal", loc, scale, size=size, dtype=dtype)

    def integers(self, low, high=None, size=None, dtype="int64", endpoint=False):
        if endpoint:  # NumPy's closed range [low, high]
            low, high = (0, low) if high is None else (low, high)
            high += 1
        return self._draw("randint", low, high, size=size, dtype=dtype)

    def poisson(self, lam=1.0, size=None):
        return self._draw("poisson", lam, size=size)

    def permutation(self, n):
        return self._draw("permutation", n)


_draws = [0]


def draw_count() -> int:
    """How many draws the GPU generators have made: a CUDA graph would replay a draw's
    numbers, so ember.compile captures only calls that make none."""
    return _draws[0]


# ----------------------------------------------------------------------------- CUDA graphs
def graphs_supported() -> bool:
    """Whether CUDA is usable and this CuPy can capture streams into CUDA graphs (ROCm
    builds cannot)."""
    if not is_available():
        return False
    return STANDIN or not getattr(cupy().cuda.runtime, "is_hip", False)


class CapturedGraph:
    """The GPU work of ``fn(env)`` captured once as a CUDA graph through CuPy's stream
    capture; ``launch()`` reruns that work, on the same memory, as one call.

    ``env`` is a list of arrays: the ones it holds before the capture are read by the graph
    in place (refill them between launches); the ones ``fn`` puts into it are where each
    launch leaves its results. While ``fn`` is captured nothing runs on the GPU, and the
    memory it allocates comes from a pool of the graph's own, so no allocation made later
    can reuse its temporaries (a launch writes them again). ``fn`` must not synchronize
    with the host; if it does, the capture raises and nothing is kept. (On the CuPy
    stand-in work runs at once and cannot be recorded: ``fn`` runs now, and each launch
    runs it again and writes its results into the arrays of the first run, as the GPU
    would.)"""

    def __init__(self, fn, env: list, index: int):
        self.index = index
        self._fn = fn
        self._graph = None
        self._given = list(env)
        self._env = env
        with device_guard(index):
            if STANDIN:
                fn(env)
                return
            cp = cupy()
            self._pool = cp.cuda.MemoryPool()
            stream = cp.cuda.Stream(non_blocking=True)
            with cp.cuda.using_allocator(self._pool.malloc), stream:
                stream.begin_capture()
                try:
                    fn(env)
                finally:
                    graph = stream.end_capture()
            self._graph = graph

    def launch(self) -> None:
        """Run the captured work on the current stream."""
        with device_guard(self.index):
            if self._graph is not None:
                self._graph.launch()
                return
            fresh = list(self._given)
            self._fn(fresh)
            for given, fixed, new in zip(self._given, self._env, fresh):
                if given is None and fixed is not None and new is not fixed:
                    fixed[...] = new


# ----------------------------------------------------------------------------- NCCL
# ember.distributed's 'nccl' backend: communicators and collectives through CuPy's NCCL
# binding. Collectives run on the current stream, in place on C-contiguous arrays; an event
# recorded after them tells when they are done.

_NCCL_OPS = ("sum", "prod", "max", "min")


def nccl():
    """``cupy.cuda.nccl``, or an error that says what is missing."""
    cupy()  # RuntimeError naming the reason when CUDA can't be used
    try:
        from cupy.cuda import nccl as module
    except ImportError as error:
        raise ImportError("CuPy cannot load NCCL, which the 'nccl' backend needs: pip install "
                          f"nvidia-nccl-cu12 (or -cu13, matching CuPy) ({error})") from error
    if not getattr(module, "available", False):
        raise ImportError("this CuPy build has no NCCL support, which the 'nccl' backend "
                          "needs: pip install nvidia-nccl-cu12 (or -cu13, matching CuPy)")
    return module


def nccl_version() -> int:
    return nccl().get_version()


def nccl_unique_id() -> bytes:
    """A fresh NCCL id (128 bytes) for rank 0 to hand to the others."""
    raw = nccl().get_unique_id()
    if isinstance(raw, bytes):
        return raw
    return bytes((b + 256) % 256 for b in raw)  # older CuPy: a tuple of signed chars


def nccl_communicator(world_size: int, unique_id: bytes, rank: int, index: int):
    """This process's NCCL communicator on GPU ``index`` (blocks until every rank joins)."""
    module = nccl()
    with cupy().cuda.Device(index):
        try:
            try:
                return module.NcclCommunicator(world_size, bytes(unique_id), rank)
            except TypeError:  # CuPy before 13 takes the id as a tuple of signed chars
                signed = tuple(b - 256 if b > 127 else b for b in unique_id)
                return module.NcclCommunicator(world_size, signed, rank)
        except module.NcclError as error:
            raise RuntimeError(
                f"NCCL could not set up rank {rank} of {world_size} on cuda:{index}: {error} "
                "(NCCL needs one GPU per rank, and every rank must join)") from None


def _nccl_type(module, dtype):
    name = {"b": "NCCL_INT8", "B": "NCCL_UINT8", "?": "NCCL_UINT8", "i": "NCCL_INT32",
            "I": "NCCL_UINT32", "l": "NCCL_INT64", "q": "NCCL_INT64", "L": "NCCL_UINT64",
            "Q": "NCCL_UINT64", "e": "NCCL_FLOAT16", "f": "NCCL_FLOAT32",
            "d": "NCCL_FLOAT64"}.get(dtype.char)
    if name is None and dtype.name == "bfloat16":
        name = "NCCL_BFLOAT16"
    if name is None or not hasattr(module, name):
        raise TypeError(f"NCCL cannot reduce {dtype} arrays")
    return getattr(module, name)


def _nccl_op(module, op: str):
    if op not in _NCCL_OPS:
        raise ValueError(f"NCCL reductions are {_NCCL_OPS}, not {op!r}")
    return getattr(module, "NCCL_" + op.upper())


def _stream_ptr() -> int:
    return _cupy.cuda.get_current_stream().ptr


def nccl_all_reduce(comm, array, op: str) -> None:
    module = nccl()
    comm.allReduce(array.data.ptr, array.data.ptr, array.size, _nccl_type(module, array.dtype),
                   _nccl_op(module, op), _stream_ptr())


def nccl_broadcast(comm, array, root: int) -> None:
    raw = array.reshape(-1).view(_cupy.uint8)
    comm.broadcast(raw.data.ptr, raw.data.ptr, raw.size, nccl().NCCL_UINT8, root, _stream_ptr())


def nccl_all_gather(comm, output, input) -> None:
    """``output`` holds world_size copies of ``input``'s size, rank by rank."""
    send = input.reshape(-1).view(_cupy.uint8)
    receive = output.reshape(-1).view(_cupy.uint8)
    comm.allGather(send.data.ptr, receive.data.ptr, send.size, nccl().NCCL_UINT8, _stream_ptr())


def nccl_reduce_scatter(comm, output, input, op: str) -> None:
    module = nccl()
    comm.reduceScatter(input.data.ptr, output.data.ptr, output.size,
                       _nccl_type(module, input.dtype), _nccl_op(module, op), _stream_ptr())


def nccl_check(comm) -> None:
    """Raise RuntimeError when NCCL reported an asynchronous error on ``comm``."""
    try:
        comm.check_async_error()
    except nccl().NcclError as error:
        raise RuntimeError(f"NCCL failed: {error}") from None


def nccl_abort(comm) -> None:
    comm.abort()


def nccl_destroy(comm) -> None:
    comm.destroy()


def record_event():
    """An event recorded on the current stream: done once the work queued before it is."""
    event = cupy().cuda.Event(block=False, disable_timing=True)
    event.record()
    return event


def event_done(event) -> bool:
    return event.done


def pci_bus_id(index: int) -> str:
    """The GPU's PCI bus id (which physical GPU a device index is, across processes)."""
    return cupy().cuda.Device(index).pci_bus_id


def new_stream(index: int, priority: int = 0):
    """A new non-default stream on GPU ``index`` (lower priority numbers run first)."""
    cp = cupy()
    with cp.cuda.Device(index):
        return cp.cuda.Stream(non_blocking=False, priority=priority)


def current_stream(index: int):
    cp = cupy()
    with cp.cuda.Device(index):
        return cp.cuda.get_current_stream()


def new_event(enable_timing: bool, blocking: bool, interprocess: bool):
    return cupy().cuda.Event(block=blocking, disable_timing=not enable_timing,
                             interprocess=interprocess)


def elapsed_ms(start, end) -> float:
    return float(cupy().cuda.get_elapsed_time(start, end))


def storage_of(array):
    """See backend.cpu.storage_of (CuPy views keep their base too)."""
    from .cpu import _flat

    root = array
    while root.base is not None and isinstance(root.base, type(array)):
        root = root.base
    data = array.data
    start = data.mem.ptr
    size = getattr(data.mem, "size", None)
    if size is None or (root.data.ptr == start and root.dtype == array.dtype
                        and (root.flags.c_contiguous or root.flags.f_contiguous)):
        return _flat(root, array, data.ptr - start)
    # CuPy's as_strided leaves no base: the storage is then the whole allocation
    xp = cupy()
    flat = xp.ndarray((size // array.itemsize,), array.dtype,
                      memptr=xp.cuda.MemoryPointer(data.mem, 0))
    return flat, (data.ptr - start) // array.itemsize


def storage_offset(array) -> int:
    """See backend.cpu.storage_offset (counted from the start of the allocation)."""
    data = array.data
    return (data.ptr - data.mem.ptr) // array.itemsize
