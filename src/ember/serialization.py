"""``ember.save`` / ``ember.load``: checkpoints that can never run code.

A file is one standard safetensors file (https://huggingface.co/docs/safetensors): an
8-byte little-endian header length, a JSON header naming each tensor's dtype, shape and
byte range, then the raw bytes. ember puts every tensor of the saved object there (CUDA
tensors copied to the host) and writes the object's structure -- nested dicts, lists,
tuples, numbers, strings, booleans and None, with references to the tensors -- as JSON into
the header's ``__metadata__`` under the key ``"ember"``. Loading parses JSON and copies
bytes; there is no pickle anywhere, so a crafted file can at worst fail to load.

Tensor names follow the object's keys (``"fc.weight"``, ``"state.0.exp_avg"``), so the
file of a state dict opens with ``safetensors.torch.load_file`` in PyTorch as the same state
dict, and a plain safetensors file written by PyTorch or Hugging Face tools loads here as a
dict of name -> tensor.

Writes are atomic: the bytes go to a temporary file in the target's directory, are
fsync'ed, and replace the target with ``os.replace``; a crash mid-save leaves the previous
file intact (and its temporary file, which the next save of that path removes).
"""
from __future__ import annotations

import io
import json
import math
import os
import re
import socket
import struct
import tempfile
from collections import OrderedDict

import numpy as np

from . import backend, dtypes
from .tensor import Tensor

__all__ = ["save", "load", "LoadError"]


class LoadError(RuntimeError, ValueError):
    """A file ``ember.load`` refuses: truncated, corrupt, foreign (a pickle, a zip) or
    crafted. It is a RuntimeError, as PyTorch raises for an unreadable checkpoint, and a
    ValueError, so either ``except`` catches it. The message names the file and the
    problem."""

_FORMAT_KEY = "ember"
_FORMAT_VERSION = 1

# safetensors dtype names <-> NumPy dtypes that ember has.
_TO_SAFETENSORS = {np.dtype(np.bool_): "BOOL", np.dtype(np.uint8): "U8", np.dtype(np.int8): "I8",
                   np.dtype(np.int16): "I16", np.dtype(np.int32): "I32",
                   np.dtype(np.int64): "I64", np.dtype(np.float16): "F16",
                   np.dtype(np.float32): "F32", np.dtype(np.float64): "F64",
                   np.dtype(np.uint16): "U16", np.dtype(np.uint32): "U32",
                   np.dtype(np.uint64): "U64"}
_FROM_SAFETENSORS = {name: dtype for dtype, name in _TO_SAFETENSORS.items()}
_HEADER_LIMIT = 100 * 1024 * 1024  # safetensors' own limit on the JSON header


# --------------------------------------------------------------------------- saving
class _Encoder:
    """Turns an object into JSON-able structure plus a name -> array table."""

    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}
        self.names_by_id: dict[int, str] = {}
        self.keep_alive: list = []

    def _name(self, path: list) -> str:
        base = ".".join(str(p) for p in path) if path else "tensor"
        name, n = base, 1
        while name in self.arrays:
            name = f"{base}#{n}"
            n += 1
        return name

    def encode(self, obj, path: list[str]):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return obj
        if isinstance(obj, float):
            if math.isfinite(obj):
                return obj
            return {"float": repr(obj)}  # 'inf', '-inf', 'nan'
        if isinstance(obj, Tensor):
            return self._tensor(obj, path)
        if isinstance(obj, np.ndarray):
            if obj.dtype not in _TO_SAFETENSORS:
                raise TypeError(f"ember.save can't store a NumPy array of dtype {obj.dtype} at "
                                f"{_where(path)}")
            entry = {"ndarray": self._store(obj, obj, path)}
            if obj.ndim == 0:
                entry["scalar"] = True
            return entry
        if isinstance(obj, np.generic):
            return self.encode(obj.item(), path)
        if isinstance(obj, dtypes.dtype):
            return {"dtype": obj.name}
        if isinstance(obj, backend.device):
            return {"device": str(obj)}
        if isinstance(obj, tuple):
            return {"tuple": [self.encode(v, path + [i]) for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return [self.encode(v, path + [i]) for i, v in enumerate(obj)]
        if isinstance(obj, dict):
            items = [[self._key(k, path), self.encode(v, path + [k])]
                     for k, v in obj.items()]
            return {"odict" if isinstance(obj, OrderedDict) else "dict": items}
        raise TypeError(
            f"ember.save can't store an object of type {type(obj).__module__}."
            f"{type(obj).__qualname__} at {_where(path)}: only tensors, NumPy arrays, dicts, "
            "lists, tuples, numbers, strings, booleans and None are stored (ember never "
            "pickles, so that loading a file can't run code); save a state_dict() instead")

    def _key(self, key, path):
        if isinstance(key, Tensor) or isinstance(key, (list, dict)):
            raise TypeError(f"ember.save: dict keys must be numbers, strings, booleans, None or "
                            f"tuples of those (found {type(key).__name__} at {_where(path)})")
        return self.encode(key, path)

    def _store(self, source, array: np.ndarray, path: list[str]) -> str:
        name = self.names_by_id.get(id(source))
        if name is None:
            name = self._name(path)
            # ascontiguousarray makes 0-d arrays 1-d; keep shape [] so PyTorch's
            # load_file sees the same state dict (files with [1] still load via "scalar").
            self.arrays[name] = np.ascontiguousarray(array).reshape(array.shape)
            self.names_by_id[id(source)] = name
            self.keep_alive.append(source)
        return name

    def _tensor(self, t: Tensor, path: list[str]):
        host = t._host()
        entry = {"tensor": self._store(t, host, path)}
        if host.ndim == 0:
            entry["scalar"] = True
        if t._device.type != "cpu":
            entry["device"] = str(t._device)
        if t._requires_grad:
            entry["requires_grad"] = True
        if type(t) is not Tensor and type(t).__name__ == "Parameter":
            entry["parameter"] = True
        return entry


def _where(path: list) -> str:
    return "obj" + "".join(f"[{p!r}]" for p in path)


def _serialize(arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> bytes:
    """The safetensors bytes, written by the safetensors package itself."""
    from safetensors.numpy import save as safetensors_save

    return safetensors_save(arrays, metadata=metadata)


def save(obj, f, pickle_module=None, pickle_protocol=None,
         _use_new_zipfile_serialization=True) -> None:
    """Save ``obj`` (tensors, state dicts, optimizer states: nested dicts/lists/tuples of
    tensors, NumPy arrays, numbers, strings, booleans, None) to the path or binary
    file-like ``f``, as one safetensors file.

    The write is atomic for paths: a temporary file in the same directory is written,
    fsync'ed and renamed over ``f``. A tensor that appears twice is stored once and comes
    back as one tensor. ``pickle_module``/``pickle_protocol`` exist for PyTorch's
    signature and must stay None (ember never pickles).

    >>> import io
    >>> buffer = io.BytesIO()
    >>> ember.save({"w": ember.ones(2), "step": 3}, buffer)
    >>> _ = buffer.seek(0); ember.load(buffer)
    {'w': tensor([1., 1.]), 'step': 3}
    """
    if pickle_module is not None or pickle_protocol is not None:
        raise ValueError("ember.save never pickles (a pickle can run code when loaded); "
                         "leave pickle_module and pickle_protocol unset")
    encoder = _Encoder()
    structure = encoder.encode(obj, [])
    metadata = {"format": "pt", _FORMAT_KEY: json.dumps(
        {"version": _FORMAT_VERSION, "object": structure}, separators=(",", ":"),
        allow_nan=False)}
    data = _serialize(encoder.arrays, metadata)
    if hasattr(f, "write"):
        f.write(data)
        if hasattr(f, "flush"):
            f.flush()
        return
    path = os.fspath(f)
    directory = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(prefix=_temporary_prefix(path), suffix=".tmp",
                                             dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    _fsync_directory(directory)
    _remove_stale_temporaries(path)


# A save killed mid-write (kill -9, power loss) leaves its temporary file behind:
# ".<name>.<host>-<pid>.<random>.tmp" next to the target. The next save of that target
# removes those whose process, on this host, no longer runs.
def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname()) or "host"


def _temporary_prefix(path: str) -> str:
    return f".{os.path.basename(path)}.{_host()}-{os.getpid()}."


def _remove_stale_temporaries(path: str) -> None:
    if os.name != "posix":  # os.kill(pid, 0) only probes a process on POSIX
        return
    directory = os.path.dirname(os.path.abspath(path))
    pattern = re.compile(re.escape(f".{os.path.basename(path)}.{_host()}-") +
                         r"(\d+)\.[A-Za-z0-9_]+\.tmp")
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        match = pattern.fullmatch(name)
        if match is None or _process_exists(int(match.group(1))):
            continue
        try:
            os.unlink(os.path.join(directory, name))
        except OSError:
            pass


def _process_exists(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: it exists under another user
        return True
    return True


def _fsync_directory(directory: str) -> None:
    """Make the rename itself durable (POSIX); not possible on every platform."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


# --------------------------------------------------------------------------- loading
def _describe(f) -> str:
    return repr(os.fspath(f)) if not hasattr(f, "read") else f"the {type(f).__name__} object"


def _foreign_format_hint(first: bytes) -> str:
    if first[:2] == b"PK":
        return (" It looks like a zip archive, such as a checkpoint written by torch.save; "
                "ember does not unpickle those (unpickling can run code). Convert it in "
                "PyTorch with safetensors.torch.save_file(state_dict, path).")
    if first[:1] == b"\x80":
        return (" It looks like a pickle; ember never unpickles (that can run code). Save "
                "tensors with ember.save or safetensors instead.")
    return ""


def _parse_header(handle, source: str) -> tuple[dict, int]:
    first = handle.read(8)
    if first is None or len(first) < 8:
        raise LoadError(f"ember.load: {source} is not an ember/safetensors file: it is "
                        f"{0 if not first else len(first)} bytes long, shorter than the "
                        "8-byte header length" + _foreign_format_hint(first or b""))
    (length,) = struct.unpack("<Q", first)
    if length == 0 or length > _HEADER_LIMIT:
        raise LoadError(f"ember.load: {source} is not an ember/safetensors file (its first 8 "
                        f"bytes give a header length of {length})"
                        + _foreign_format_hint(first))
    available = _remaining_bytes(handle)
    if available is not None and available < length:  # before reading (and allocating)
        hint = _foreign_format_hint(first)
        if hint:
            raise LoadError(f"ember.load: {source} is not an ember/safetensors file." + hint)
        raise LoadError(f"ember.load: {source} is truncated: its header should be {length} "
                        f"bytes but only {available} follow")
    raw = handle.read(length)
    if raw is None or len(raw) != length:
        hint = _foreign_format_hint(first)
        if hint:
            raise LoadError(f"ember.load: {source} is not an ember/safetensors file." + hint)
        raise LoadError(f"ember.load: {source} is truncated: its header should be {length} "
                        f"bytes but only {0 if raw is None else len(raw)} follow")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise LoadError(f"ember.load: {source} has a corrupt header (not valid JSON: {error})"
                        + _foreign_format_hint(first)) from None
    if not isinstance(header, dict):
        raise LoadError(f"ember.load: {source} has a corrupt header (a JSON object was "
                        f"expected, found {type(header).__name__})")
    return header, 8 + length


def _is_count(value) -> bool:
    """A size or offset from a header: a non-negative int (JSON floats and booleans are
    refused rather than rounded)."""
    return type(value) is int and value >= 0


def _check_entries(header: dict, source: str) -> list[tuple[str, str, list[int], int, int]]:
    entries = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = info["dtype"]
            shape = list(info["shape"])
            begin, end = info["data_offsets"]
        except (TypeError, KeyError, ValueError):
            raise LoadError(f"ember.load: {source} has a corrupt header entry for tensor "
                            f"{name!r}: {info!r:.200}") from None
        if not isinstance(dtype, str) or not all(_is_count(v) for v in shape + [begin, end]) \
                or not begin <= end:
            raise LoadError(f"ember.load: {source} has a corrupt header entry for tensor "
                            f"{name!r}: {info!r:.200}")
        entries.append((name, dtype, shape, begin, end))
    entries.sort(key=lambda e: e[3])
    position = 0
    for name, dtype, shape, begin, end in entries:
        if begin != position:
            raise LoadError(f"ember.load: {source} has a corrupt header: tensor {name!r} starts "
                            f"at byte {begin}, expected {position} (gaps or overlaps)")
        position = end
        if dtype == "BF16":
            itemsize = 2
        elif dtype in _FROM_SAFETENSORS:
            itemsize = _FROM_SAFETENSORS[dtype].itemsize
        else:
            raise LoadError(f"ember.load: tensor {name!r} in {source} has dtype {dtype}, which "
                            "ember does not have (it has BOOL, U8, I8, I16, I32, I64, F16, "
                            "BF16, F32, F64)")
        if math.prod(shape) * itemsize != end - begin:
            raise LoadError(f"ember.load: {source} has a corrupt header: tensor {name!r} of "
                            f"dtype {dtype} and shape {shape} needs {math.prod(shape) * itemsize}"
                            f" bytes but its data range holds {end - begin}")
    return entries


def _bfloat16_numpy():
    """ml_dtypes' bfloat16 (ember.bfloat16's NumPy type), or None without the extra."""
    try:
        return np.dtype(dtypes.ml_dtypes().bfloat16)
    except ImportError:
        return None


def _read_arrays(handle, entries, source: str) -> dict[str, np.ndarray]:
    """The tensors' arrays. BF16 becomes ember.bfloat16 where ml_dtypes is installed;
    otherwise it is widened to float32 (the same values)."""
    bfloat16 = _bfloat16_numpy() if any(entry[1] == "BF16" for entry in entries) else None
    arrays = {}
    for name, dtype, shape, begin, end in entries:
        raw_dtype = np.dtype(np.uint16) if dtype == "BF16" else _FROM_SAFETENSORS[dtype]
        array = np.empty(shape, dtype=raw_dtype)
        view = memoryview(array.reshape(-1)).cast("B")
        got = 0
        while got < end - begin:
            chunk = handle.readinto(view[got:])
            if not chunk:
                raise LoadError(f"ember.load: {source} is truncated: tensor {name!r} needs "
                                f"{end - begin} bytes but the file ends after {got}")
            got += chunk
        if dtype == "BF16" and bfloat16 is not None:
            array = array.view(bfloat16)
        elif dtype == "BF16":  # bfloat16 is the top half of a float32
            array = (array.astype(np.uint32) << 16).view(np.float32)
        arrays[name] = array
    return arrays


def _location_of(entry) -> str:
    return entry.get("device", "cpu")


def _target_device(map_location, saved: str):
    """The device a tensor saved on ``saved`` goes to under ``map_location``; None means
    "call the function" (handled by the caller)."""
    if map_location is None:
        return saved
    if isinstance(map_location, dict):
        return map_location.get(saved, saved)
    if isinstance(map_location, (str, backend.device)):
        return map_location
    raise TypeError("map_location should be None, a device (or its name), a dict mapping "
                    f"saved devices to devices, or a function; got {type(map_location).__name__}")


def _make_tensor(array: np.ndarray, entry: dict, map_location):
    saved = _location_of(entry)
    t = Tensor._make(array, backend.CPU, False)
    if callable(map_location) and not isinstance(map_location, (str, backend.device, dict)):
        result = map_location(t, saved)
        if result is not None:
            if not isinstance(result, Tensor):
                raise TypeError("map_location function must return a tensor or None, got "
                                f"{type(result).__name__}")
            t = result
        else:
            t = _move(t, saved)
    else:
        t = _move(t, _target_device(map_location, saved))
    if entry.get("requires_grad"):
        t.requires_grad_(True)
    if entry.get("parameter"):
        try:
            from .nn import Parameter
        except ImportError:
            return t
        return Parameter(t, requires_grad=bool(entry.get("requires_grad", False)))
    return t


def _move(t: Tensor, target) -> Tensor:
    target_device = backend.device(target) if not isinstance(target, backend.device) else target
    if target_device.type == "cpu":
        return t
    from .backend import cuda

    if not cuda.is_available():
        raise RuntimeError(
            f"Attempting to deserialize a tensor on the CUDA device {target_device} but "
            "ember.cuda.is_available() is False. If you are running on a CPU-only machine, "
            "please use ember.load with map_location='cpu' to map your tensors to the CPU.")
    return t.to(target_device)


class _Decoder:
    def __init__(self, arrays: dict[str, np.ndarray], map_location, source: str):
        self.arrays = arrays
        self.map_location = map_location
        self.source = source
        self.made: dict[str, object] = {}

    def fail(self, what: str):
        raise LoadError(f"ember.load: {self.source} has a corrupt ember structure: {what}")

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict) or len(node) == 0:
            self.fail(f"unexpected node {node!r:.80}")
        if "tensor" in node or "ndarray" in node:
            name = node.get("tensor", node.get("ndarray"))
            if name not in self.arrays:
                self.fail(f"it refers to a tensor {name!r} that the file does not contain")
            key = ("ndarray:" if "ndarray" in node else "tensor:") + name
            if key not in self.made:
                array = self.arrays[name]
                if node.get("scalar"):
                    if array.size != 1:
                        self.fail(f"the scalar tensor {name!r} holds {array.size} values")
                    array = array.reshape(())
                self.made[key] = array if "ndarray" in node else _make_tensor(
                    array, node, self.map_location)
            return self.made[key]
        if len(node) != 1:
            self.fail(f"unexpected node {node!r:.80}")
        (kind, value), = node.items()
        if kind == "tuple" and isinstance(value, list):
            return tuple(self.decode(v) for v in value)
        if kind in ("dict", "odict") and isinstance(value, list):
            result = OrderedDict() if kind == "odict" else {}
            for pair in value:
                if not isinstance(pair, list) or len(pair) != 2:
                    self.fail(f"a dict item is {pair!r:.80}")
                key = self.decode(pair[0])
                value = self.decode(pair[1])
                try:
                    result[key] = value
                except TypeError:
                    self.fail(f"unhashable dict key {key!r:.80}")
            return result
        if kind == "float" and value in ("inf", "-inf", "nan"):
            return float(value)
        if kind == "dtype" and isinstance(value, str) and \
                isinstance(getattr(dtypes, value, None), dtypes.dtype):
            return getattr(dtypes, value)
        if kind == "device" and isinstance(value, str):
            try:
                return backend.device(value)
            except (RuntimeError, ValueError, TypeError):
                self.fail(f"{value!r:.40} is not a device")
        self.fail(f"unknown node kind {kind!r:.40}")


def load(f, map_location=None, pickle_module=None, *, weights_only: bool = True,
         mmap=None, **pickle_load_args):
    """Load an object saved by ``ember.save`` from a path or binary file-like object, or a
    plain safetensors file (e.g. from PyTorch or Hugging Face), which loads as a dict of
    name -> tensor (BF16 tensors come back as ember.bfloat16 where ml_dtypes is installed,
    else widened to float32).

    ``map_location`` moves tensors as in PyTorch: a device or its name ('cpu', 'cuda:0'),
    a dict mapping saved device names to devices, or a function ``(tensor_on_cpu,
    saved_device_name) -> tensor or None`` (None keeps the saved device). Without it,
    tensors return to the device they were saved from.

    The format holds only data, so loading never runs code whatever ``weights_only`` says
    (the argument exists for PyTorch's signature, as does ``mmap``: the tensors are always
    read into memory). A corrupt, truncated, crafted or foreign file raises ``LoadError``
    (a RuntimeError and a ValueError) naming the file and the problem; every size its header
    claims is checked against the bytes that follow before anything is allocated.

    >>> import io
    >>> try:
    ...     ember.load(io.BytesIO(b"eight bytes and then nothing"))
    ... except ember.serialization.LoadError as error:
    ...     print(str(error)[:60])
    ember.load: the BytesIO object is not an ember/safetensors f
    """
    if pickle_module is not None or pickle_load_args:
        raise ValueError("ember.load never unpickles (that can run code); leave pickle_module "
                         "and the pickle arguments unset")
    if not (map_location is None or callable(map_location)
            or isinstance(map_location, (str, dict, backend.device))):
        raise TypeError("map_location should be None, a device (or its name), a dict mapping "
                        "saved devices to devices, or a function; got "
                        f"{type(map_location).__name__}")
    source = _describe(f)
    if hasattr(f, "read"):
        if not (hasattr(f, "readinto") and _seekable(f)):
            # a pipe or socket can't say how long it is: take what it holds, so that sizes
            # claimed by its header are checked against bytes that exist
            f = io.BytesIO(f.read())
        return _load_from(f, map_location, source)
    path = os.fspath(f)
    try:
        handle = open(path, "rb")
    except IsADirectoryError:
        raise IsADirectoryError(f"ember.load: {source} is a directory, not a file") from None
    with handle:
        return _load_from(handle, map_location, source)


def _seekable(handle) -> bool:
    try:
        return bool(handle.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _remaining_bytes(handle) -> int | None:
    """Bytes left after the current position, where the handle can tell."""
    try:
        if not handle.seekable():
            return None
        position = handle.tell()
        end = handle.seek(0, os.SEEK_END)
        handle.seek(position)
        return end - position
    except (AttributeError, OSError):
        return None


def _load_from(handle, map_location, source: str):
    header, data_start = _parse_header(handle, source)
    entries = _check_entries(header, source)
    needed = entries[-1][4] if entries else 0
    available = _remaining_bytes(handle)
    if available is not None and available < needed:  # before allocating anything
        raise LoadError(f"ember.load: {source} is truncated: its header describes {needed} "
                        f"bytes of tensor data but only {available} follow")
    arrays = _read_arrays(handle, entries, source)
    if handle.read(1):
        raise LoadError(f"ember.load: {source} has bytes after its last tensor (corrupt or not "
                        "a safetensors file)")
    metadata = header.get("__metadata__") or {}
    if not isinstance(metadata, dict):
        raise LoadError(f"ember.load: {source} has a corrupt header (__metadata__ is not an "
                        "object)")
    text = metadata.get(_FORMAT_KEY)
    if text is None:  # a plain safetensors file: name -> tensor, in file order
        return {name: _make_tensor(arrays[name], {}, map_location) for name in header
                if name != "__metadata__"}
    try:
        document = json.loads(text)
        version = document["version"]
        structure = document["object"]
    except (TypeError, ValueError, KeyError, RecursionError):
        raise LoadError(f"ember.load: {source} has a corrupt ember structure (its metadata "
                        "is not the JSON ember writes)") from None
    if version != _FORMAT_VERSION:
        raise LoadError(f"ember.load: {source} was written in ember format version {version}; "
                        f"this ember reads version {_FORMAT_VERSION}")
    try:
        return _Decoder(arrays, map_location, source).decode(structure)
    except RecursionError:
        raise LoadError(f"ember.load: {source} has a corrupt ember structure (nested too "
                        "deeply)") from None
