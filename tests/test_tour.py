"""``python -m ember``, the tour: it prints the tutorial's values as PyTorch does and writes
its picture, backward table, TensorBoard log and model into the one folder it names."""
from __future__ import annotations

import importlib.util

import pytest

import ember
from ember.__main__ import main

TUTORIAL_LINES = [
    "X tensor([1., 2., 3.], requires_grad=True)",
    "Y tensor(19.6667, grad_fn=<MeanBackward0>)",
    "tensor([2.0000, 2.6667, 3.3333])",
    "tensor(22.)\ntensor(22.)\ntensor(22.)",
    "after requires_grad_(False): False tensor(41.)",
    "tensor([5., 7., 9.], grad_fn=<AddBackward0>)",
    "tensor([25., 49., 81.], grad_fn=<PowBackward0>)",
    "tensor(51.6667, grad_fn=<MeanBackward0>)",
    "tensor([ 6.6667,  9.3333, 12.0000])",
]


def test_tour_prints_the_tutorial_and_writes_its_folder(tmp_path, capsys):
    out = main(["--out", str(tmp_path / "tour"), "--device", "cpu", "--epochs", "1"])
    text = capsys.readouterr().out
    for line in TUTORIAL_LINES:
        assert line in text
    assert "tensor([1., 1., 1.])" in text
    assert "MeanBackward0 (y)" in text and "AccumulateGrad (x)" in text
    assert "CPU only here" in text
    assert f"tensorboard --logdir {out / 'runs'}" in text
    assert text.rstrip().endswith(f"Everything is in {out}")
    picture = out / "tutorial_graph.svg"
    if not picture.exists():  # no Graphviz binary: the DOT text instead
        picture = out / "tutorial_graph.dot"
    assert "MeanBackward0" in picture.read_text()
    assert "PowBackward0" in (out / "tutorial_backward.txt").read_text()
    assert list(out.glob("chain_rule_graph.*"))
    assert "<table" in (out / "tutorial_backward.html").read_text()
    events = list((out / "runs").glob("events.out.tfevents.*"))
    assert events and events[0].stat().st_size > 0
    if importlib.util.find_spec("sklearn") is not None:
        assert "test accuracy after 1 epochs:" in text
        state = ember.load(out / "digits_mlp.safetensors")
        assert tuple(state["0.weight"].shape) == (64, 64)
    else:
        assert "pip install scikit-learn" in text


def test_tour_writes_a_tensorboard_graph_and_scalars(tmp_path, capsys):
    pytest.importorskip("sklearn", reason="the digits data comes with scikit-learn")
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator",
        reason="reading the log needs the tensorboard package")
    out = main(["--out", str(tmp_path), "--device", "cpu", "--epochs", "2"])
    capsys.readouterr()
    acc = event_accumulator.EventAccumulator(str(out / "runs"))
    acc.Reload()
    assert "digits/loss" in acc.Tags()["scalars"]
    assert [e.step for e in acc.Scalars("digits/test_accuracy")] == [1, 2]
    ops = [node.op for node in acc.Graph().node]
    assert ops[0] == "AccumulateGrad" and "MeanBackward0" in ops and "PowBackward0" in ops


@pytest.mark.parametrize("argv, message", [
    (["--device", "tpu"], "--device"),
    (["--epochs", "0"], "--epochs must be at least 1"),
])
def test_tour_rejects_bad_options(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["--out", str(tmp_path)] + argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_tour_refuses_cuda_without_a_gpu(tmp_path, capsys):
    if ember.cuda.is_available():
        pytest.skip("a GPU is available here")
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path), "--device", "cuda"])
    assert "no GPU is available" in capsys.readouterr().err
