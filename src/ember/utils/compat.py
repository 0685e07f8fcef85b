"""PyTorch coverage report: which public names of PyTorch's main namespaces ember has.

PyTorch is the oracle: the report needs it installed to enumerate the names. Run
``python -m ember.utils.compat`` to print the page, or ``python -m ember.utils.compat
docs/compat.md`` to write it.

>>> from ember.utils import compat
>>> rows = compat.report()                      # doctest: +SKIP
>>> rows[0].namespace, rows[0].percent > 0      # doctest: +SKIP
('torch', True)

A name is *left out on purpose* when it matches a pattern in ``LEFT_OUT`` (complex numbers,
sparse layouts, quantization, TorchScript, backend kernels, ...); the percentage counts
only the other names. Names that a PyTorch module merely imports (``math``, ``typing``
helpers, ``Tensor`` re-exported in ``torch.nn.functional``, docstring fragments) are not
PyTorch's API and are not counted.
"""
from __future__ import annotations

import importlib
import inspect
import sys
import types
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

__all__ = ["NAMESPACES", "LEFT_OUT", "Coverage", "report", "render", "main"]

# (PyTorch namespace, ember namespace); "torch.Tensor" is the Tensor class.
NAMESPACES = [
    ("torch", "ember"),
    ("torch.Tensor", "ember.Tensor"),
    ("torch.nn", "ember.nn"),
    ("torch.nn.functional", "ember.nn.functional"),
    ("torch.linalg", "ember.linalg"),
    ("torch.special", "ember.special"),
    ("torch.fft", "ember.fft"),
    ("torch.optim", "ember.optim"),
    ("torch.optim.lr_scheduler", "ember.optim.lr_scheduler"),
    ("torch.autograd", "ember.autograd"),
    ("torch.utils.data", "ember.utils.data"),
    ("torch.distributions", "ember.distributions"),
]

_FFT_COMPLEX = [f"torch.fft.{p}{k}" for p in ("", "i", "r", "ir", "h", "ih")
                for k in ("fft", "fft2", "fftn")]

# reason -> patterns (fnmatch, against the qualified name, e.g. "torch.Tensor.to_sparse").
LEFT_OUT: dict[str, list[str]] = {
    "complex numbers (ember has real dtypes only)": [
        "*complex*", "torch.cfloat", "torch.cdouble", "torch.chalf", "*.Tensor.cfloat",
        "*.Tensor.cdouble", "*.Tensor.chalf", "*conj*", "*view_as_real*", "torch.polar",
        "torch.real", "torch.imag", "*.Tensor.real", "*.Tensor.imag", "*is_neg",
        "*resolve_neg", "*stft", "torch.linalg.eig", "torch.linalg.eigvals", *_FFT_COMPLEX,
        "torch.Tensor.eig",
    ],
    "sparse layouts": [
        "*sparse*", "*spmm", "torch.smm", "*.Tensor.smm", "torch.hspmm", "torch.dsmm",
        "torch.saddmm", "*sspaddmm", "*crow_indices*", "*ccol_indices*", "*row_indices*",
        "*col_indices*", "*indices_copy", "*values_copy", "*.Tensor.indices",
        "*.Tensor.values", "*coalesce*", "*.Tensor.dense_dim", "*.Tensor.to_dense",
        "torch.segment_reduce", "torch.nn.functional.embedding_bag", "torch.embedding_bag",
        "torch.hsmm",
        "torch.optim.SparseAdam",
    ],
    "quantization": [
        "*quant*", "*.q_*", "torch.qint*", "torch.quint*", "*qscheme", "torch.per_channel_*",
        "torch.per_tensor_*", "*int_repr", "*fake_quantize*", "*choose_qparams*",
        "*fbgemm*", "torch.ao", "torch.nn.intrinsic", "torch.nn.qat",
        "torch.nn.functional.scaled_mm", "torch.nn.functional.scaled_grouped_mm",
        "torch.nn.functional.ScalingType", "torch.nn.functional.SwizzleType",
    ],
    "TorchScript, torch.fx, torch.export and compiler internals": [
        # torch.onnx is an exporter, and a lazily loaded one: whether dir(torch) lists it
        # depends on what the process imported before
        "torch.onnx",
        "torch.*Type", "torch.Script*", "torch.Graph", "torch.Node", "torch.Block",
        "torch.Value", "torch.Use", "torch.AliasDb", "torch.*ArgumentSpec", "torch.Argument",
        "torch.Code", "torch.CompilationUnit", "torch.ConcreteModuleType*",
        "torch.DeepCopyMemoTable", "torch.ErrorReport", "torch.ExecutionPlan",
        "torch.FileCheck", "torch.FunctionSchema", "torch.Gradient",
        "torch.GraphExecutorState", "torch.IODescriptor", "torch.InferredType",
        "torch.JITException", "torch.LiteScriptModule", "torch.*Logger*", "torch.LoggerBase",
        "torch.OperatorInfo", "torch.PRIVATE_OPS", "torch.StaticModule", "torch.TracingState",
        "torch.AggregationType", "torch.AVG", "torch.SUM", "torch.Capsule",
        "torch.import_ir_module*", "torch.parse_ir", "torch.parse_schema",
        "torch.parse_type_comment", "torch.merge_type_from_type_comment",
        "torch.unify_type_list", "torch.fork", "torch.wait", "torch.Future", "torch.futures",
        "torch.jit", "torch.fx", "torch.export", "torch.compiler", "torch.package",
        "torch.library", "torch.classes", "torch.overrides", "torch.Tag", "torch.DispatchKey*",
        "torch.ExcludeDispatchKeyGuard", "torch.DisableTorchFunction*", "torch.Sym*",
        "torch.sym_*", "torch.while_loop", "torch.cond", "torch.PyTorchFile*",
        "torch.*StorageContext", "torch.ScriptModuleSerializer", "torch.Benchmark*",
        "torch.ThroughputBenchmark", "torch.TYPE_CHECKING", "torch.ModuleDict",
        "torch.ParameterDict", "torch.BufferDict", "torch.CallStack", "torch.FatalError",
        "torch.classproperty",
        "torch.get_file_path", "torch.typename",
        "torch.nn.functional.BroadcastingList*", "torch.nn.functional.DType",
        "torch.nn.functional.boolean_dispatch", "torch.nn.functional.assert_int_or_pair",
        "*handle_torch_function", "*has_torch_function*", "torch.autograd.is_tensor_like",
        "torch.slice_inverse", "*.Tensor.slice_inverse", "*.Tensor.module_load",
        "*.Tensor.as_subclass", "torch.nn.functional.GRID_SAMPLE_*",
        # first-class dimensions (functorch.dim): a tensor subclass of the compiler stack
        "*.Tensor.index",
    ],
    "functionalization copies of views (*_copy)": [
        "torch.*_copy", "torch.Tensor.narrow_copy",
    ],
    "backend kernels and fused internals (cuDNN, MIOpen, MKLDNN, native_*)": [
        "*cudnn*", "*miopen*", "*mkldnn*", "*native_*", "torch.batch_norm_*",
        "torch.conv_tbc", "torch.nn.functional.conv_tbc", "torch.grid_sampler*",
        "torch.affine_grid_generator", "torch.norm_except_dim", "torch.frobenius_norm",
        "torch.nuclear_norm", "torch.constant_pad_nd", "torch.convolution",
        "torch.thread_safe_generator", "torch.profiler_allow_*", "torch.is_vulkan_available",
        "torch.has_*", "torch.compiled_with_cxx11_abi", "torch.USE_*", "torch.cpp",
        "torch.unsafe_*", "*.Tensor.unsafe_*", "torch.nn.functional.grouped_mm",
        "torch.hash_tensor", "*.Tensor.hash_tensor", "*.Tensor.record_stream",
        "*.Tensor.const_data_ptr", "*.Tensor.dim_order", "torch.nonzero_static",
        "*.Tensor.nonzero_static",
    ],
    "other accelerators (MPS, XPU, MTIA, IPU, XLA, Vulkan, MAIA)": [
        "torch.mps", "torch.xpu", "torch.mtia", "*.Tensor.xpu", "*.Tensor.mtia",
        "*.Tensor.ipu", "*.Tensor.is_xpu", "*.Tensor.is_mps", "*.Tensor.is_mtia",
        "*.Tensor.is_ipu", "*.Tensor.is_xla", "*.Tensor.is_vulkan", "*.Tensor.is_maia",
        "*.Tensor.is_meta", "torch.get_autocast_ipu_dtype", "torch.get_autocast_xla_dtype",
        "torch.set_autocast_ipu_*", "torch.set_autocast_xla_*", "torch.is_autocast_ipu_*",
        "torch.is_autocast_xla_*",
    ],
    "storage objects (ember tensors wrap NumPy/CuPy arrays)": [
        "torch.*Storage", "torch.StorageBase", "torch.storage", "torch.is_storage",
        "torch.from_file", "*.Tensor.storage", "*.Tensor.untyped_storage",
        "*.Tensor.storage_type", "*.Tensor.set_", "*.Tensor.is_set_to",
        "*.Tensor.resize_as_sparse_",
    ],
    "dtypes NumPy has no equivalent for (sub-byte ints, float8, float4, bits)": [
        "torch.bits*", "torch.float8_*", "torch.float4_*", "torch.int[1-7]",
        "torch.uint[1-7]", "torch.bit",
    ],
    "nested and jagged tensors": [
        "torch.nested", "torch.jagged", "*.Tensor.is_nested", "*.Tensor.to_padded_tensor",
    ],
    "distributed internals": [
        "torch.is_distributed", "*.Tensor.is_distributed", "torch.distributed",
    ],
    "legacy autograd APIs (Variable-era, removed upstream)": [
        "*.Tensor.volatile", "*.Tensor.reinforce", "torch.autograd.NestedIOFunction",
        "torch.autograd.variable", "torch.nn.Container", "*.Tensor.map2_", "*.Tensor.map_",
        "*.Tensor.apply_",
    ],
    "removed from PyTorch (calling them raises there)": [
        "torch.symeig", "torch.eig", "torch.lstsq", "torch.solve", "torch.matrix_rank",
        "*.Tensor.symeig", "*.Tensor.lstsq", "*.Tensor.solve",
    ],
    "profilers, kineto and engine threading switches": [
        "torch.autograd.Profiler*", "torch.autograd.profiler*", "torch.autograd.DeviceType",
        "torch.autograd.kineto_available", "torch.autograd.*multithreading*",
        "torch.autograd.enforce_grad_layout_policy", "torch.autograd.is_view_replay_enabled",
        "torch.autograd.SavedTensor", "torch.profiler", "torch.monitor",
        "torch.autograd.ProfilerActivity",
    ],
    "forward-mode AD (ember is reverse-mode)": ["torch.autograd.forward_ad"],
    "DataPipes (deprecated and removed upstream)": [
        "torch.utils.data.*DataPipe*", "torch.utils.data.datapipes",
        "torch.utils.data.DataChunk", "torch.utils.data.functional_datapipe",
        "torch.utils.data.guaranteed_datapipes_determinism",
        "torch.utils.data.non_deterministic", "torch.utils.data.runtime_validation*",
        "torch.utils.data.argument_validation", "torch.utils.data.graph*",
    ],
    "Python-environment modules (hub, multiprocessing, testing, packaging)": [
        "torch.hub", "torch.multiprocessing", "torch.testing", "torch.version",
        "torch.torch_version", "torch.prepare_multiprocessing_environment",
        "torch.get_device_module",
    ],
}


@dataclass
class Coverage:
    """One namespace: what PyTorch has, and which of it ember has or leaves out."""

    namespace: str
    ember_namespace: str
    present: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    left_out: dict[str, list[str]] = field(default_factory=dict)   # reason -> names
    not_api: list[str] = field(default_factory=list)

    @property
    def counted(self) -> int:
        return len(self.present) + len(self.missing)

    @property
    def percent(self) -> float:
        return 100.0 * len(self.present) / self.counted if self.counted else 100.0


def _resolve(path: str):
    """A module or the Tensor class from a dotted path; None when ember has no such module."""
    if path.endswith(".Tensor"):
        return getattr(importlib.import_module(path[: -len(".Tensor")]), "Tensor")
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError:
        return None


def _not_api(namespace: str, obj) -> bool:
    """True for what a PyTorch module only imports: Python/NumPy modules, typing helpers,
    classes and modules defined elsewhere, docstring fragments."""
    if namespace == "torch.Tensor":
        return False
    if isinstance(obj, (str, dict)):   # docstring fragments
        return True
    if isinstance(obj, types.ModuleType):
        return not obj.__name__.startswith(namespace + ".")
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str):
        return False
    if not module.startswith("torch"):
        return inspect.isclass(obj) or callable(obj) or module.startswith("typing")
    if inspect.isclass(obj) and namespace != "torch":
        return not (module == namespace or module.startswith(namespace + "."))
    return False


_EXTRA_NOT_API = {"torch.optim.lr_scheduler.inf", "torch.optim.lr_scheduler.TYPE_CHECKING",
                  "torch.nn.functional.TYPE_CHECKING",
                  "torch.nn.common_types", "torch.nn.factory_kwargs"}


def _reason(qualified: str) -> str | None:
    for reason, patterns in LEFT_OUT.items():
        if any(fnmatchcase(qualified, p) for p in patterns):
            return reason
    return None


def _coverage(namespace: str, ember_namespace: str) -> Coverage:
    theirs = _resolve(namespace)
    ours = _resolve(ember_namespace)
    cov = Coverage(namespace, ember_namespace)
    for name in sorted(n for n in dir(theirs) if not n.startswith("_")):
        qualified = f"{namespace}.{name}"
        try:
            obj = getattr(theirs, name)
        except Exception:   # a lazily failing attribute is not usable API
            obj = None
        if qualified in _EXTRA_NOT_API or _not_api(namespace, obj):
            cov.not_api.append(name)
        elif ours is not None and hasattr(ours, name):
            cov.present.append(name)
        elif (reason := _reason(qualified)) is not None:
            cov.left_out.setdefault(reason, []).append(name)
        else:
            cov.missing.append(name)
    return cov


def report() -> list[Coverage]:
    """Coverage of each namespace in ``NAMESPACES``. Needs PyTorch installed."""
    try:
        importlib.import_module("torch")
    except ImportError as exc:
        raise ImportError("the coverage report enumerates PyTorch's names: "
                          "pip install torch") from exc
    # torch loads some submodules lazily, so dir(torch) depends on what the process
    # imported before: load them, so every run lists the same names
    for lazy in ("torch.onnx",):
        try:
            importlib.import_module(lazy)
        except ImportError:
            pass
    return [_coverage(t, e) for t, e in NAMESPACES]


def _names(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) if names else "(none)"


def render(rows: list[Coverage]) -> str:
    """The Markdown page (docs/compat.md)."""
    torch = importlib.import_module("torch")
    version = torch.__version__.split("+")[0]
    out = [
        "# PyTorch coverage",
        "",
        f"Which public names of PyTorch {version}'s main namespaces ember has. This page is",
        "generated by `python -m ember.utils.compat docs/compat.md` (a test keeps it in sync).",
        "*Counted* names are PyTorch's names minus those left out on purpose (each with its",
        "reason below); names a PyTorch module only imports (`math`, `typing` helpers,",
        "`Tensor` re-exported in submodules) are not counted.",
        "",
        "Keyword parity: the functions of `ember`, `ember.nn.functional`, `ember.linalg`,",
        "`ember.special` and `ember.fft` accept PyTorch's `out=`, `dtype=`, `device=`,",
        "`requires_grad=`, `generator=`, `size=`, `keepdim=` and `memory_format=` where PyTorch",
        "documents them, with the same defaults (`tests/test_keyword_parity.py` compares each",
        "signature with PyTorch's). `out=` writes the result into the given tensor (resizing",
        "it when its shape differs, as PyTorch does) and is refused when autograd would record",
        "the call; `torch.FloatTensor`-style constructors and `set_default_device` exist too.",
        "",
        "| namespace | PyTorch names | counted | ember has | missing | left out | coverage |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        total = r.counted + sum(map(len, r.left_out.values()))
        left = sum(map(len, r.left_out.values()))
        out.append(f"| `{r.namespace}` | {total} | {r.counted} | {len(r.present)} | "
                   f"{len(r.missing)} | {left} | {r.percent:.1f}% |")
    for r in rows:
        out += ["", f"## `{r.namespace}`", "",
                f"ember has {len(r.present)} of {r.counted} counted names "
                f"({r.percent:.1f}%) in `{r.ember_namespace}`.", "",
                f"**Missing** ({len(r.missing)}): {_names(r.missing)}", ""]
        if r.left_out:
            out += ["**Left out on purpose:**", "", "| reason | names |", "|---|---|"]
            for reason, names in r.left_out.items():
                out.append(f"| {reason} | {_names(names)} |")
            out.append("")
        if r.not_api:
            out += [f"Not counted (imported helpers): {_names(r.not_api)}", ""]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    page = render(report())
    if args:
        with open(args[0], "w", encoding="utf-8") as fh:
            fh.write(page)
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
