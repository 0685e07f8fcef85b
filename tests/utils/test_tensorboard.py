"""ember.utils.tensorboard: every summary is read back with tensorboard's own event reader,
and the autograd graph is found in the GraphDef, backward nodes, scopes and shapes."""
from __future__ import annotations

import doctest
import glob
import importlib.util
import io
import os
import re
import socket
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from tests.conftest import requires_torch

HAVE_TENSORBOARD = importlib.util.find_spec("tensorboard") is not None
requires_tensorboard = pytest.mark.skipif(
    not HAVE_TENSORBOARD, reason="tensorboard is not installed (pip install tensorboard)")

if HAVE_TENSORBOARD:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.plugins.hparams import metadata as hparams_metadata
    from tensorboard.util import tensor_util

    from ember.utils.tensorboard import SummaryWriter
    from ember.utils.tensorboard.summary import make_histogram

ALL = {"scalars": 0, "histograms": 0, "images": 0, "tensors": 0}
SRC = os.path.dirname(os.path.dirname(ember.__file__))


def read(log_dir):
    acc = EventAccumulator(str(log_dir), size_guidance=ALL)
    acc.Reload()
    return acc


def event_files(log_dir):
    return sorted(glob.glob(os.path.join(str(log_dir), "events.out.tfevents.*")))


def run_python(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=SRC)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120, check=False)


def decode_png(data: bytes) -> np.ndarray:
    """A small reader for the unfiltered 8-bit PNGs the writer makes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks[kind] = chunks.get(kind, b"") + body
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    channels = {0: 1, 2: 3, 6: 4}[color]
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(height, -1)
    assert depth == 8 and (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(height, width, channels)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        x = x.view(-1, 4)
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def graph_nodes(log_dir) -> dict:
    return {n.name: n for n in read(log_dir).Graph().node}


def shapes(node) -> list:
    return [[d.size for d in s.dim] if not s.unknown_rank else None
            for s in node.attr["_output_shapes"].list.shape]


# ----------------------------------------------------------------------------- import
def test_missing_tensorboard_gives_an_import_error_naming_the_pip_package():
    result = run_python(
        "import sys; sys.modules['tensorboard'] = None\n"
        "import ember\n"
        "try:\n"
        "    import ember.utils.tensorboard\n"
        "except ImportError as e:\n"
        "    print('IMPORTERROR', e)\n")
    assert result.returncode == 0, result.stderr
    assert "IMPORTERROR" in result.stdout
    assert "pip install tensorboard" in result.stdout


@requires_tensorboard
def test_neither_torch_nor_tensorflow_is_imported_and_ember_alone_skips_tensorboard():
    result = run_python(
        "import sys, ember\n"
        "print('tb with ember:', 'tensorboard' in sys.modules)\n"
        "from ember.utils.tensorboard import SummaryWriter\n"
        "print('torch:', 'torch' in sys.modules, 'tensorflow:', 'tensorflow' in sys.modules)\n")
    assert result.returncode == 0, result.stderr
    assert "tb with ember: False" in result.stdout
    assert "torch: False tensorflow: False" in result.stdout


# ----------------------------------------------------------------------------- writer
@requires_tensorboard
class TestWriter:
    def test_default_log_dir_is_runs_datetime_hostname_comment(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        with SummaryWriter(comment="_lr0.1") as writer:
            log_dir = writer.get_logdir()
        parent, name = os.path.split(log_dir)
        assert parent == "runs"
        assert re.fullmatch(r"[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_" + re.escape(
            socket.gethostname()) + "_lr0.1", name), name
        assert len(event_files(tmp_path / log_dir)) == 1

    def test_comment_is_ignored_when_log_dir_is_given(self, tmp_path):
        with SummaryWriter(tmp_path / "exp", comment="_x") as writer:
            assert writer.get_logdir() == str(tmp_path / "exp")
        assert len(event_files(tmp_path / "exp")) == 1

    def test_context_manager_closes_and_a_later_add_opens_a_new_file(self, tmp_path):
        with SummaryWriter(tmp_path) as writer:
            writer.add_scalar("a", 1.0, 0)
        assert writer.file_writer is None and writer.all_writers is None
        writer.add_scalar("a", 2.0, 1)
        writer.close()
        writer.close()  # closing twice is harmless
        assert len(event_files(tmp_path)) == 2
        assert [(e.step, e.value) for e in read(tmp_path).Scalars("a")] == [(0, 1.0), (1, 2.0)]

    def test_flush_makes_events_readable_before_close(self, tmp_path):
        writer = SummaryWriter(tmp_path, flush_secs=1000, max_queue=1000,
                               filename_suffix=".ember")
        for step in range(20):
            writer.add_scalar("loss", 1.0 / (step + 1), step)
        writer.flush()
        assert len(read(tmp_path).Scalars("loss")) == 20
        assert event_files(tmp_path)[0].endswith(".ember")
        writer.close()

    def test_purge_step_hides_the_crashed_runs_later_steps(self, tmp_path):
        with SummaryWriter(tmp_path) as writer:
            for step in range(10):
                writer.add_scalar("loss", float(step), step)
        with SummaryWriter(tmp_path, purge_step=5) as writer:
            for step in range(5, 8):
                writer.add_scalar("loss", 100.0 + step, step)
        events = [(e.step, e.value) for e in read(tmp_path).Scalars("loss")]
        assert events == [(s, float(s)) for s in range(5)] + [(s, 100.0 + s) for s in (5, 6, 7)]

    def test_walltime_and_tensor_steps(self, tmp_path):
        with SummaryWriter(tmp_path) as writer:
            writer.add_scalar("a", 3.0, ember.tensor(7), walltime=1234.5)
            writer.add_scalar("a", 4.0, np.int64(8))
        first, second = read(tmp_path).Scalars("a")
        assert (first.step, first.wall_time, second.step) == (7, 1234.5, 8)


# ----------------------------------------------------------------------------- scalars
@requires_tensorboard
class TestScalars:
    def test_scalars_of_every_kind_read_back(self, tmp_path):
        with SummaryWriter(tmp_path) as writer:
            writer.add_scalar("v", 1.5, 0)
            writer.add_scalar("v", ember.tensor(2.5), 1)
            writer.add_scalar("v", ember.tensor([3.5], requires_grad=True), 2)
            writer.add_scalar("v", np.float64(4.5), 3)
            writer.add_scalar("v", 5, 4)
            writer.add_scalar("v", True, 5)
        assert [(e.step, e.value) for e in read(tmp_path).Scalars("v")] == [
            (0, 1.5), (1, 2.5), (2, 3.5), (3, 4.5), (4, 5.0), (5, 1.0)]

    def test_new_style_and_double_precision(self, tmp_path):
        value = 0.1 + 1e-12
        with SummaryWriter(tmp_path) as writer:
            writer.add_scalar("f", value, 0, new_style=True)
            writer.add_scalar("d", value, 0, new_style=True, double_precision=True)
        acc = read(tmp_path)
        assert acc.SummaryMetadata("d").plugin_data.plugin_name == "scalars"
        as_float = tensor_util.make_ndarray(acc.Tensors("f")[0].tensor_proto)
        as_double = tensor_util.make_ndarray(acc.Tensors("d")[0].tensor_proto)
        assert as_float.dtype == np.float32 and as_float == np.float32(value)
        assert as_double.dtype == np.float64 and as_double == value

    def test_bad_scalars_raise_pytorchs_errors(self, tmp_path):
        with SummaryWriter(tmp_path) as writer:
            with pytest.raises(AssertionError, match="one element"):
                writer.add_scalar("v", ember.ones(3), 0)
            with pytest.raises(NotImplementedError, match="str"):
                writer.add_scalar("v", "1.0", 0)
            with pytest.raises(TypeError, match="tag must be a str"):
                writer.add_scalar(3, 1.0, 0)

    def test_add_scalars_writes_one_run_per_tag(self, tmp_path):
        with SummaryWriter(tmp_path) as writer:
            for step in range(3):
                writer.add_scalars("loss/run", {"train": step * 1.0, "test": step * 2.0}, step)
            with pytest.raises(TypeError, match="tag_scalar_dict"):
                writer.add_scalars("x", [1.0], 0)
        for tag, scale in (("train", 1.0), ("test", 2.0)):
            run = tmp_path / f"loss_run_{tag}"
            assert len(event_files(run)) == 1
            events = read(run).Scalars("loss/run")
            assert [(e.step, e.value) for e in events] == [(s, s * scale) for s in range(3)]


# ----------------------------------------------------------------------------- histograms
@requires_tensorboard
class TestHistograms:
    def test_histogram_reads_back_with_its_statistics(self, tmp_path):
        values = ember.randn(1000)
        with SummaryWriter(tmp_path) as writer:
            writer.add_histogram("w", values, 3)
        acc = read(tmp_path)
        assert acc.Tags()["distributions"] == ["w"]
        event = acc.Histograms("w")[0]
        h, v = event.histogram_value, values.numpy().astype(np.float64)
        assert event.step == 3
        assert (h.min, h.max, h.num) == (v.min(), v.max(), 1000)
        assert h.sum == pytest.approx(v.sum()) and h.sum_squares == pytest.approx(v @ v)
        assert sum(h.bucket) == 1000 and h.bucket[0] == 0
        assert h.bucket_limit[0] <= v.min() and h.bucket_limit[-1] >= v.max()

    def test_empty_end_bins_are_dropped_with_one_empty_bucket_on_the_left(self):
        h = make_histogram(np.array([0.5, 1.5, 1.5, 3.5]), bins=[0, 1, 2, 3, 4])
        assert list(h.bucket_limit) == [0, 1, 2, 3, 4]
        assert list(h.bucket) == [0, 1, 2, 0, 1]
        h = make_histogram(np.array([1.0, 2.0, 6.0]), bins=[-10, -5, 0, 5, 10, 15])
        assert list(h.bucket_limit) == [0, 5, 10]
        assert list(h.bucket) == [0, 2, 1]

    def test_max_bins_merges_neighbours(self):
        values = np.arange(100.0)
        h = make_histogram(values, bins=10, max_bins=3)
        assert sum(h.bucket) == 100 and len(h.bucket) <= 4 + 1
        assert h.bucket_limit[-1] == 99.0

    @requires_torch
    @pytest.mark.parametrize("bins,max_bins", [("tensorflow", None), (30, None), (30, 7),
                                               ("auto", None), ([-3, 0, 0.5, 4], None)])
    def test_histograms_match_pytorchs(self, bins, max_bins):
        from torch.utils.tensorboard.summary import make_histogram as torch_histogram

        from ember.utils.tensorboard.summary import tensorflow_bins

        values = np.random.default_rng(1).normal(size=500)
        ours = make_histogram(values, bins, max_bins)
        theirs = torch_histogram(values, tensorflow_bins() if bins == "tensorflow" else bins,
                                 max_bins)
        assert list(ours.bucket) == list(theirs.bucket)
        np.testing.assert_allclose(ours.bucket_limit, theirs.bucket_limit)
        assert (ours.min, ours.max, ours.num) == (theirs.min, theirs.max, theirs.num)

    @requires_torch
    def test_default_bins_are_pytorchs(self, tmp_path):
        from torch.utils.tensorboard import SummaryWriter as TorchWriter

        from ember.utils.tensorboard.summary import tensorflow_bins

        with TorchWriter(tmp_path) as torch_writer:
            assert tensorflow_bins() == torch_writer.default_bins

    def test_bad_histograms_raise(self, tmp_path):
        with SummaryWriter(tmp_path) as writer:
            with pytest.raises(ValueError, match="no element"):
                writer.add_histogram("h", ember.zeros(0))
            with pytest.raises(ValueError, match="1 NaN or infinite"):
                writer.add_histogram("h", ember.tensor([1.0, float("nan"), 2.0]))
            with pytest.raises(ValueError, match="none of the 2 values"):
                writer.add_histogram("h", np.array([10.0, 11.0]), bins=[0, 1, 2])
            with pytest.raises(ValueError, match="max_bins"):
                writer.add_histogram("h", np.ones(3), max_bins=0)


# ----------------------------------------------------------------------------- images
@requires_tensorboard
class TestImages:
    def test_chw_float_image_round_trips_through_png(self, tmp_path):
        img = ember.rand(3, 5, 7)
        with SummaryWriter(tmp_path) as writer:
            writer.add_image("rgb", img, 2)
        event = read(tmp_path).Images("rgb")[0]
        assert (event.step, event.height, event.width) == (2, 5, 7)
        pixels = decode_png(event.encoded_image_string)
        expected = (img.numpy().transpose(1, 2, 0) * 255).clip(0, 255).astype(np.uint8)
        np.testing.assert_array_equal(pixels, expected)

    def test_layouts_grayscale_uint8_and_batches(self, tmp_path):
        gray = np.linspace(0, 1, 12).reshape(3, 4)
        hwc = np.random.default_rng(0).integers(0, 256, (4, 6, 4), dtype=np.uint8)
        batch = ember.rand(3, 1, 2, 5)
        with SummaryWriter(tmp_path) as writer:
            writer.add_image("gray", gray, 0, dataformats="HW")
            writer.add_image("gray_wh", gray.T, 0, dataformats="WH")
            writer.add_image("rgba", hwc, 0, dataformats="HWC")
            writer.add_images("batch", batch, 0)
        acc = read(tmp_path)
        g = decode_png(acc.Images("gray")[0].encoded_image_string)
        assert g.shape == (3, 4, 3) and (g[..., 0] == g[..., 2]).all()
        np.testing.assert_array_equal(g[..., 0], (gray * 255).astype(np.uint8))
        np.testing.assert_array_equal(
            decode_png(acc.Images("gray_wh")[0].encoded_image_string), g)
        np.testing.assert_array_equal(decode_png(acc.Images("rgba")[0].encoded_image_string), hwc)
        grid = decode_png(acc.Images("batch")[0].encoded_image_string)
        assert grid.shape == (2, 15, 3)
        np.testing.assert_array_equal(
            grid[:, 5:10, 1], (batch.numpy()[1, 0] * 255).astype(np.uint8))

    @requires_torch
    def test_pixels_match_pytorchs_images(self):
        pytest.importorskip("PIL", reason="PyTorch's image summary needs pillow")
        from PIL import Image
        from torch.utils.tensorboard.summary import image as torch_image

        from ember.utils.tensorboard.summary import image

        rng = np.random.default_rng(2)
        cases = [(rng.random((3, 6, 9)) * 1.2 - 0.1, "CHW"), (rng.random((5, 4, 1)), "HWC"),
                 (rng.random((10, 3, 4, 4)), "NCHW"), (rng.random((4, 7)), "HW")]
        for array, layout in cases:
            ours = image("t", array, layout).value[0].image
            theirs = torch_image("t", array, dataformats=layout).value[0].image
            assert (ours.height, ours.width, ours.colorspace) == (
                theirs.height, theirs.width, theirs.colorspace)
            decoded = np.asarray(Image.open(io.BytesIO(theirs.encoded_image_string)))
            np.testing.assert_array_equal(decode_png(ours.encoded_image_string), decoded)

    def test_bad_images_raise(self, tmp_path):
        with SummaryWriter(tmp_path) as writer:
            with pytest.raises(AssertionError, match="size of input tensor and input format"):
                writer.add_image("i", np.zeros((4, 4)), 0)
            with pytest.raises(AssertionError, match="same dimension shorthand"):
                writer.add_image("i", np.zeros((3, 4, 4)), 0, dataformats="CHH")
            with pytest.raises(ValueError, match="got 2"):
                writer.add_image("i", np.zeros((2, 4, 4)), 0)
            with pytest.raises(ValueError, match="does not describe an image"):
                writer.add_image("i", np.zeros((3, 4, 4)), 0, dataformats="CHX")


# ----------------------------------------------------------------------------- text, hparams
@requires_tensorboard
class TestTextAndHparams:
    def test_text_reads_back(self, tmp_path):
        with SummaryWriter(tmp_path) as writer:
            writer.add_text("notes", "lr **0.1** — ünïcode", 4)
            with pytest.raises(TypeError, match="text_string must be a str"):
                writer.add_text("notes", 3)
        acc = read(tmp_path)
        assert acc.SummaryMetadata("notes/text_summary").plugin_data.plugin_name == "text"
        event = acc.Tensors("notes/text_summary")[0]
        assert event.step == 4
        assert event.tensor_proto.string_val[0].decode() == "lr **0.1** — ünïcode"

    def test_hparams_read_back_with_their_types_and_metrics(self, tmp_path):
        with SummaryWriter(tmp_path) as writer:
            writer.add_hparams({"lr": 0.1, "batch": 64, "opt": "sgd", "nesterov": True,
                                "wd": ember.tensor(1e-4), "skip": None},
                               {"hparam/accuracy": 0.75}, run_name="trial",
                               hparam_domain_discrete={"opt": ["sgd", "adam"]}, global_step=9)
        run = tmp_path / "trial"
        acc = read(run)
        content = acc.SummaryMetadata(hparams_metadata.EXPERIMENT_TAG).plugin_data.content
        experiment = hparams_metadata.parse_experiment_plugin_data(content)
        types = {i.name: i.type for i in experiment.hparam_infos}
        # DATA_TYPE_STRING = 1, DATA_TYPE_BOOL = 2, DATA_TYPE_FLOAT64 = 3
        assert types == {"lr": 3, "batch": 3, "wd": 3, "opt": 1, "nesterov": 2}
        opt = next(i for i in experiment.hparam_infos if i.name == "opt")
        assert [v.string_value for v in opt.domain_discrete.values] == ["sgd", "adam"]
        assert [m.name.tag for m in experiment.metric_infos] == ["hparam/accuracy"]
        content = acc.SummaryMetadata(hparams_metadata.SESSION_START_INFO_TAG).plugin_data.content
        start = hparams_metadata.parse_session_start_info_plugin_data(content)
        assert start.hparams["lr"].number_value == 0.1
        assert start.hparams["batch"].number_value == 64
        assert start.hparams["opt"].string_value == "sgd"
        assert start.hparams["nesterov"].bool_value is True
        assert start.hparams["wd"].number_value == pytest.approx(1e-4)
        assert "skip" not in start.hparams
        assert [(e.step, e.value) for e in acc.Scalars("hparam/accuracy")] == [(9, 0.75)]
        assert hparams_metadata.SESSION_END_INFO_TAG in acc.Tags()["tensors"]

    def test_bad_hparams_raise(self, tmp_path):
        with SummaryWriter(tmp_path) as writer:
            with pytest.raises(TypeError, match="should be dictionary"):
                writer.add_hparams([("lr", 0.1)], {})
            with pytest.raises(ValueError, match="'opt'.*list"):
                writer.add_hparams({"opt": [1, 2]}, {"m": 1.0})
            with pytest.raises(TypeError, match=r"hparam_domain_discrete\[lr\]"):
                writer.add_hparams({"lr": 0.1}, {"m": 1.0},
                                   hparam_domain_discrete={"lr": ["a"]})
        assert [d for d in os.listdir(tmp_path) if os.path.isdir(tmp_path / d)] == []


# ----------------------------------------------------------------------------- the graph
@requires_tensorboard
class TestGraph:
    def test_model_graph_has_backward_nodes_module_scopes_and_shapes(self, tmp_path):
        model = Net()
        with SummaryWriter(tmp_path) as writer:
            writer.add_graph(model, ember.randn(5, 4))
        nodes = graph_nodes(tmp_path)
        assert set(nodes) == {
            "input", "Net/ViewBackward0", "Net/fc1/weight", "Net/fc1/bias",
            "Net/fc1/TBackward0", "Net/fc1/AddmmBackward0", "Net/ReluBackward0",
            "Net/fc2/weight", "Net/fc2/bias", "Net/fc2/TBackward0", "Net/fc2/AddmmBackward0",
            "Net/LogSoftmaxBackward0", "output"}
        fc1 = nodes["Net/fc1/AddmmBackward0"]
        assert fc1.op == "AddmmBackward0"
        # PyTorch's graph: Addmm(bias, input, weight^T)
        assert set(fc1.input) == {"Net/ViewBackward0", "Net/fc1/TBackward0", "Net/fc1/bias"}
        assert shapes(fc1) == [[5, 8]] and fc1.attr["dtype"].type == 1  # DT_FLOAT
        assert fc1.device == "cpu"
        weight = nodes["Net/fc1/weight"]
        assert (weight.op, shapes(weight), list(weight.input)) == ("AccumulateGrad", [[8, 4]], [])
        assert weight.attr["parameter"].s == b"fc1.weight"
        assert nodes["Net/ReluBackward0"].input == ["Net/fc1/AddmmBackward0"]
        assert nodes["input"].op == "Input" and shapes(nodes["input"]) == [[5, 4]]
        assert nodes["output"].input == ["Net/LogSoftmaxBackward0"]
        assert shapes(nodes["output"]) == [[5, 3]]
        # add_graph leaves the model as it found it: no hooks, no gradients.
        assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())
        assert all(p.grad is None for p in model.parameters())

    def test_graph_matches_the_autograd_graph_of_the_same_forward(self, tmp_path):
        model = Net()
        x = ember.randn(5, 4, requires_grad=True)
        out = model(x)
        expected, stack, seen = [], [out.grad_fn], set()
        while stack:
            node = stack.pop()
            if id(node) not in seen:
                seen.add(id(node))
                expected.append(node.name())
                stack.extend(n for n, _ in node.next_functions if n is not None)
        with SummaryWriter(tmp_path) as writer:
            writer.add_graph(model, x)
        ops = [n.op for n in graph_nodes(tmp_path).values() if n.op not in ("Input", "Output")]
        expected.remove("AccumulateGrad")  # x's leaf: add_graph shows it as the input
        assert sorted(ops) == sorted(expected)

    def test_nested_sequential_scopes_and_a_module_called_twice(self, tmp_path):
        shared = nn.Linear(3, 3)
        model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(shared, shared))
        with SummaryWriter(tmp_path) as writer:
            writer.add_graph(model, ember.randn(4, 2))
        nodes = graph_nodes(tmp_path)
        assert {"Sequential/0/AddmmBackward0", "Sequential/1/ReluBackward0",
                "Sequential/2/0/AddmmBackward0", "Sequential/2/0/AddmmBackward0_1",
                "Sequential/2/0/weight", "Sequential/0/weight"} <= set(nodes)
        assert "Sequential/2/0/AddmmBackward0" in nodes["Sequential/2/0/AddmmBackward0_1"].input
        assert shapes(nodes["Sequential/1/ReluBackward0"]) == [[4, 3]]

    def test_tutorial_graph_from_an_output_tensor(self, tmp_path):
        x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = ((x + 2) ** 2 + 3).mean()
        with SummaryWriter(tmp_path) as writer:
            writer.add_graph(y, params={"x": x})
        nodes = graph_nodes(tmp_path)
        assert set(nodes) == {"x", "AddBackward0", "PowBackward0", "AddBackward0_1",
                              "MeanBackward0", "output"}
        assert nodes["AddBackward0"].input == ["x"]
        assert nodes["PowBackward0"].input == ["AddBackward0"]
        assert nodes["AddBackward0_1"].input == ["PowBackward0"]
        assert nodes["MeanBackward0"].input == ["AddBackward0_1"]
        assert shapes(nodes["x"]) == [[3]] and shapes(nodes["MeanBackward0"]) == [[]]
        assert nodes["AddBackward0"].attr["forward_op"].s == b"Add"

    def test_graph_of_several_outputs_after_backward_with_a_multi_output_node(self, tmp_path):
        w = ember.randn(4, 6, requires_grad=True)
        a, b = w.chunk(2)
        loss = (a * b).sum()
        loss.backward()  # the graph's saved values are freed; its structure remains
        with SummaryWriter(tmp_path) as writer:
            writer.add_graph((loss, a))
        nodes = graph_nodes(tmp_path)
        split = next(n for n in nodes.values() if n.op == "SplitBackward0")
        mul = nodes["MulBackward0"]
        assert list(mul.input) == [split.name, split.name + ":1"]
        assert shapes(split) == [[2, 6], [2, 6]]
        assert len(split.attr["dtypes"].list.type) == 2
        assert nodes["output_0"].input == ["SumBackward0"]
        assert nodes["output_1"].input == [split.name]
        assert nodes["AccumulateGrad"].op == "AccumulateGrad"

    def test_in_place_on_the_input_and_keyword_free_tuple_inputs(self, tmp_path):
        class TwoInputs(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 2)

            def forward(self, x, idx):
                x.relu_()
                return self.lin(x)[idx]

        with SummaryWriter(tmp_path) as writer:
            writer.add_graph(TwoInputs(), (ember.randn(4, 3), ember.tensor([0, 2])))
        nodes = graph_nodes(tmp_path)
        assert nodes["TwoInputs/ReluBackward0"].input == ["input_0"]
        assert "input_1" not in nodes  # an integer index is no graph input
        assert shapes(nodes["output"]) == [[2, 2]]

    def test_deep_graph_is_walked_without_recursion(self, tmp_path):
        x = ember.zeros(1, requires_grad=True)
        y = x
        for _ in range(3 * sys.getrecursionlimit()):
            y = y * 1.0
        with SummaryWriter(tmp_path) as writer:
            writer.add_graph(y)
        nodes = graph_nodes(tmp_path)
        assert len(nodes) == 3 * sys.getrecursionlimit() + 2

    def test_verbose_prints_the_nodes(self, tmp_path, capsys):
        with SummaryWriter(tmp_path) as writer:
            writer.add_graph(nn.Linear(2, 1), ember.randn(3, 2), verbose=True)
        printed = capsys.readouterr().out
        # PyTorch's graph: Addmm(bias, input, weight^T)
        assert "Linear/AddmmBackward0 = AddmmBackward0(Linear/bias, input, " \
            "Linear/TBackward0)  # [3, 1]" in printed

    def test_bad_graph_calls_raise(self, tmp_path):
        class Broken(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(2, 2)

            def forward(self, x):
                raise ValueError("broken forward")

        broken = Broken()
        with SummaryWriter(tmp_path) as writer:
            with pytest.raises(TypeError, match="needs input_to_model"):
                writer.add_graph(Net())
            with pytest.raises(RuntimeError, match="not part of an autograd graph"):
                writer.add_graph(ember.ones(3))
            with pytest.raises(TypeError, match="takes no input_to_model"):
                writer.add_graph(ember.ones(3, requires_grad=True) * 2, ember.ones(3))
            with pytest.raises(RuntimeError, match="no graph to draw"):
                writer.add_graph(nn.Embedding(4, 2).requires_grad_(False), ember.tensor([1]))
            with pytest.raises(TypeError, match="nn.Module, a callable or output tensors"):
                writer.add_graph(3, ember.ones(2))
            with pytest.raises(TypeError, match="params must be a dict"):
                writer.add_graph(ember.ones(2, requires_grad=True) * 2, params=[1])
            with pytest.raises(ValueError, match="broken forward"):
                writer.add_graph(broken, ember.ones(1, 2))
        assert not broken._forward_hooks and not broken.lin._forward_pre_hooks

    def test_every_event_file_loads_with_tensorboards_loader(self, tmp_path):
        with SummaryWriter(tmp_path) as writer:
            writer.add_graph(Net(), ember.randn(2, 4))
            writer.add_scalar("loss", 0.5, 1)
        (path,) = event_files(tmp_path)
        events = list(EventFileLoader(path).Load())
        assert events[0].file_version == "brain.Event:2"
        assert sum(e.HasField("graph_def") for e in events) == 1
        tags = [v.tag for e in events for v in e.summary.value]
        assert tags.count("loss") == 1  # (the loader also files the graph as a summary)


@requires_tensorboard
def test_docstring_examples_run():
    import ember.utils.tensorboard as package
    from ember.utils.tensorboard import writer

    for module in (package, writer):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0, module.__name__


@requires_tensorboard
@pytest.mark.cuda
@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_tensors_are_logged_from_the_host(tmp_path):
    model = Net().to("cuda")
    x = ember.randn(5, 4, device="cuda")
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalar("s", ember.tensor(2.0, device="cuda"), 0)
        writer.add_histogram("h", x, 0)
        writer.add_image("i", ember.rand(3, 4, 4, device="cuda"), 0)
        writer.add_graph(model, x)
    acc = read(tmp_path)
    assert acc.Scalars("s")[0].value == 2.0 and acc.Histograms("h")[0].histogram_value.num == 20
    nodes = {n.name: n for n in acc.Graph().node}
    assert nodes["Net/fc1/AddmmBackward0"].device == "cuda:0"
