"""ember.load against hostile files: truncated at every boundary, corrupted byte by byte,
crafted headers (oversized, lying about sizes, wrong JSON types, smuggled objects), and
streams that can't be measured. Each is refused with a LoadError (a RuntimeError) naming
the file, without running code or allocating what the header claims. And ember.save
under kill -9: the target is always a whole old or a whole new file."""
from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest

import ember
from ember.serialization import LoadError

safetensors_numpy = pytest.importorskip("safetensors.numpy")


def _good_file() -> bytes:
    buffer = io.BytesIO()
    ember.save({"a": ember.arange(12.0).reshape(3, 4), "b": [ember.ones(5, dtype=ember.int64)],
                "step": 7, "lr": float("inf")}, buffer)
    return buffer.getvalue()


def _with_header(header: dict, data: bytes = b"") -> bytes:
    raw = json.dumps(header).encode()
    return len(raw).to_bytes(8, "little") + raw + data


def _refused(payload: bytes, match: str | None = None) -> LoadError:
    with pytest.raises(LoadError, match=match) as info:
        ember.load(io.BytesIO(payload))
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ValueError)
    return info.value


def test_load_error_is_pytorchs_runtime_error(tmp_path):
    path = tmp_path / "broken.pt"
    path.write_bytes(b"\x00" * 3)
    with pytest.raises(RuntimeError, match="broken.pt"):
        ember.load(path)


def test_truncated_at_every_boundary():
    data = _good_file()
    header_end = 8 + int.from_bytes(data[:8], "little")
    cuts = sorted({0, 1, 7, 8, 9, header_end // 2, header_end - 1, header_end,
                   header_end + 1, (header_end + len(data)) // 2, len(data) - 1})
    for cut in cuts:
        error = _refused(data[:cut])
        assert "truncated" in str(error) or "not an ember/safetensors file" in str(error), cut


def test_random_corruption_never_escapes_as_another_error():
    # Flip bytes anywhere in a valid file: each result loads (the flip hit tensor bytes) or
    # raises a RuntimeError that says what is wrong, never a KeyError, TypeError, OverflowError
    # or a crash.
    data = _good_file()
    rng = random.Random(0)
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(300):
        corrupt = bytearray(data)
        for _ in range(rng.choice((1, 1, 2, 8))):
            corrupt[rng.randrange(len(corrupt))] = rng.randrange(256)
        try:
            ember.load(io.BytesIO(bytes(corrupt)), map_location="cpu")
            outcomes["loaded"] += 1
        except RuntimeError as error:
            assert str(error).startswith("ember.load: "), repr(error)
            outcomes["refused"] += 1
    assert outcomes["loaded"] > 0 and outcomes["refused"] > 0


@pytest.mark.parametrize("length", [0, (1 << 64) - 1, 100 * 1024 * 1024 + 1])
def test_impossible_header_lengths(length):
    _refused(length.to_bytes(8, "little") + b"{}", "header length")


def test_header_longer_than_the_file_is_refused_before_reading_it():
    # 100 MiB is within safetensors' header limit, but the file holds 2 bytes after it
    payload = (100 * 1024 * 1024).to_bytes(8, "little") + b"{}"
    tracemalloc.start()
    try:
        _refused(payload, "header should be 104857600 bytes but only 2 follow")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"loading a 10-byte file allocated {peak} bytes"


class _Pipe(io.RawIOBase):
    """A stream that can't seek, like a pipe or a socket."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def readable(self):
        return True

    def seekable(self):
        return False

    def readinto(self, buffer):
        chunk = self._data.read(len(buffer))
        buffer[:len(chunk)] = chunk
        return len(chunk)


@pytest.mark.parametrize("wrap", [io.BytesIO, _Pipe, lambda d: io.BufferedReader(_Pipe(d))])
def test_claimed_sizes_are_checked_before_allocating(wrap):
    # a 4 TiB tensor in a file of a few dozen bytes, from a seekable and a non-seekable stream
    header = {"t": {"dtype": "F32", "shape": [1 << 40], "data_offsets": [0, 4 << 40]}}
    payload = _with_header(header, b"\0" * 16)
    tracemalloc.start()
    try:
        with pytest.raises(LoadError, match="truncated: its header describes"):
            ember.load(wrap(payload))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_a_stream_that_cannot_seek_still_loads():
    data = _good_file()
    loaded = ember.load(io.BufferedReader(_Pipe(data)))
    assert loaded["step"] == 7 and loaded["a"].tolist() == ember.load(io.BytesIO(data))[
        "a"].tolist()


@pytest.mark.parametrize("entry,match", [
    ({"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]}, "corrupt header entry"),
    ({"dtype": "F32", "shape": [True, 2], "data_offsets": [0, 8]}, "corrupt header entry"),
    ({"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}, "corrupt header entry"),
    ({"dtype": "F32", "shape": [2], "data_offsets": [0, 1e400]}, "corrupt header entry"),
    ({"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}, "corrupt header entry"),
    ({"dtype": "F32", "shape": [2], "data_offsets": [0, 8, 16]}, "corrupt header entry"),
    ({"dtype": "F32", "shape": "22", "data_offsets": [0, 8]}, "corrupt header entry"),
    ({"dtype": 7, "shape": [2], "data_offsets": [0, 8]}, "corrupt header entry"),
    ({"dtype": "F32", "shape": [2]}, "corrupt header entry"),
    ([1, 2, 3], "corrupt header entry"),
    ({"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}, "dtype C64"),
    ({"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}, "needs 12 bytes"),
    ({"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}, "starts at byte 4"),
])
def test_crafted_header_entries(entry, match):
    _refused(_with_header({"t": entry}, b"\0" * 8), match)


def test_overlapping_tensors_are_refused():
    header = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
              "b": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    _refused(_with_header(header, b"\0" * 8), "gaps or overlaps")


def test_header_of_the_wrong_json_type():
    _refused(_with_header([]), "a JSON object was expected")  # type: ignore[arg-type]
    _refused(_with_header({"__metadata__": ["not", "an", "object"]}), "__metadata__")
    raw = b'{"t": ' * 50000 + b"1" + b"}" * 50000
    _refused(len(raw).to_bytes(8, "little") + raw, "corrupt header")


def _crafted(structure) -> bytes:
    metadata = {"ember": json.dumps({"version": 1, "object": structure})}
    return safetensors_numpy.save({"t": np.ones(2, np.float32)}, metadata=metadata)


@pytest.mark.parametrize("structure,match", [
    ({"dtype": "np"}, "unknown node kind 'dtype'"),          # ember.dtypes.np is NumPy itself
    ({"dtype": "__builtins__"}, "unknown node kind 'dtype'"),
    ({"dtype": "promote_types"}, "unknown node kind 'dtype'"),
    ({"device": "quantum:3"}, "is not a device"),
    ({"tensor": "t", "scalar": True}, "holds 2 values"),
    ({"dict": [[[1], 2]]}, "unhashable dict key"),
    ({"tuple": 3}, "unknown node kind 'tuple'"),
    ({"float": "1e999"}, "unknown node kind 'float'"),
    ({"module": "os", "call": "system"}, "unexpected node"),
])
def test_structure_cannot_name_anything_but_data(structure, match):
    _refused(_crafted(structure), match)


def test_structure_dtypes_and_devices_that_exist_still_load():
    assert ember.load(io.BytesIO(_crafted({"dtype": "float16"}))) is ember.float16
    assert ember.load(io.BytesIO(_crafted({"device": "cpu"}))) == ember.device("cpu")


# ----------------------------------------------------------------------------- kill -9
_SAVER = textwrap.dedent("""
    import sys
    import ember
    path, first = sys.argv[1], int(sys.argv[2])
    i = first
    while True:
        # about 8 MB a save: long enough that kills land mid-write
        state = {"step": i, "weights": [ember.full((256, 1024), float(i)) for _ in range(8)]}
        ember.save(state, path)
        print(i, flush=True)
        i += 1
""")


def _check_whole(path) -> int:
    state = ember.load(path)
    step = state["step"]
    assert len(state["weights"]) == 8
    for weight in state["weights"]:
        values = weight.numpy()
        assert weight.shape == (256, 1024) and values.min() == values.max() == float(step)
    return step


def test_kill_9_mid_save_leaves_the_old_or_the_new_file_whole(tmp_path):
    # Five saver processes in turn write over one target and are SIGKILLed at random
    # moments. After each kill the target is the last save the process reported finished
    # or the one after it (renamed in before the report), never a partial file. Killed
    # saves leave their temporary file; the next finished save of the target removes them.
    work = tmp_path / "work"
    work.mkdir()
    path = work / "ckpt.pt"
    script = tmp_path / "saver.py"
    script.write_text(_SAVER)
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    rng = random.Random(0)
    step, litter_seen = 0, 0
    for _ in range(5):
        process = subprocess.Popen([sys.executable, str(script), str(path), str(step + 1)],
                                   env=environment, stdout=subprocess.PIPE, text=True)
        try:
            reported = [int(process.stdout.readline())]  # one whole save exists now
            for _ in range(rng.randrange(3)):  # let some more finish
                reported.append(int(process.stdout.readline()))
            signal_at = rng.uniform(0.0, 0.15)
            try:
                process.wait(timeout=signal_at)
            except subprocess.TimeoutExpired:
                pass
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            reported += [int(line) for line in process.stdout.read().split()]
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
        step = _check_whole(path)
        assert step in (reported[-1], reported[-1] + 1), (step, reported[-1])
        leftovers = [name for name in os.listdir(work) if name != "ckpt.pt"]
        assert all(name.startswith(".ckpt.pt.") and name.endswith(".tmp")
                   for name in leftovers), leftovers
        litter_seen += len(leftovers)
    ember.save({"step": 0}, path)  # a finished save clears the dead processes' files
    print("temporary files left by killed saves:", litter_seen)
    assert os.listdir(work) == ["ckpt.pt"], os.listdir(work)


def test_a_live_saver_keeps_its_temporary_file(tmp_path):
    # Only files of processes that are gone are removed: a save in progress elsewhere
    # (here: this process's parent, which is alive) keeps its temporary file.
    from ember import serialization

    path = tmp_path / "model.pt"
    live = tmp_path / (serialization._temporary_prefix(str(path)).replace(
        f"-{os.getpid()}.", f"-{os.getppid()}.") + "abc123.tmp")
    live.write_bytes(b"partial")
    other_target = tmp_path / (serialization._temporary_prefix(str(tmp_path / "other.pt"))
                               .replace(f"-{os.getpid()}.", "-999999999.") + "x.tmp")
    other_target.write_bytes(b"partial")
    ember.save({"v": 1}, path)
    assert sorted(os.listdir(tmp_path)) == sorted(["model.pt", live.name, other_target.name])
