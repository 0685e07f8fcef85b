"""``ember.backends``: PyTorch's device-selection idioms answered for ember's backends."""
import importlib.util

import ember


def test_the_device_selection_idiom_picks_what_ember_can_use():
    device = ("cuda" if ember.cuda.is_available() else
              "mps" if ember.backends.mps.is_available() else "cpu")
    assert device == ("cuda" if ember.cuda.is_available() else "cpu")
    assert ember.ones(2, device=device).device.type == device


def test_answers_are_ember_s_own():
    assert ember.backends.mps.is_available() is False and ember.backends.mps.is_built() is False
    assert ember.backends.cuda.is_built() is (importlib.util.find_spec("cupy") is not None)
    assert ember.backends.cudnn.is_available() is False  # GPU convolutions are CuPy products
    assert ember.backends.cudnn.version() is None


def test_switches_scripts_set_are_kept():
    cudnn = ember.backends.cudnn
    saved = cudnn.benchmark, cudnn.deterministic, ember.backends.cuda.matmul.allow_tf32
    try:
        cudnn.benchmark = True
        cudnn.deterministic = True
        ember.backends.cuda.matmul.allow_tf32 = True
        assert cudnn.benchmark and cudnn.deterministic
        x = ember.arange(6.0).reshape(2, 3)
        assert (x @ x.T).tolist() == [[5.0, 14.0], [14.0, 50.0]]
    finally:
        cudnn.benchmark, cudnn.deterministic, ember.backends.cuda.matmul.allow_tf32 = saved
