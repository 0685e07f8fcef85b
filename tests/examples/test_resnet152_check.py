"""examples/resnet152_check.py: the model has 152 weighted layers and its gradients match
finite differences."""
from __future__ import annotations

import resnet152_check


def test_counts_152_weighted_layers():
    model = resnet152_check.ResNet()
    assert resnet152_check.count_layers(model) == (152, 3)
    assert resnet152_check.count_layers(resnet152_check.ResNet((3, 4, 6, 3)))[0] == 50


def test_gradients_match_finite_differences():
    result = resnet152_check.check(device="cpu", samples=2, verbose=False)
    assert result["layers"] == 152
    assert len(result["results"]) == 6
    assert result["ok"], result["results"]
    assert result["max_relative_error"] < 1e-4


def test_a_wrong_gradient_is_caught(monkeypatch):
    # A hook that scales the fc weight's gradient by 1.001 after backward must be reported.
    original = resnet152_check.ResNet.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.fc.weight.register_hook(lambda grad: grad * 1.001)
    monkeypatch.setattr(resnet152_check.ResNet, "__init__", init)
    result = resnet152_check.check(device="cpu", samples=2, verbose=False,
                                   layers=(1, 1, 1, 1))
    assert not result["ok"]
    bad = [r for r in result["results"] if not r[5]]
    assert bad and all(r[0].startswith("fc") for r in bad)
