"""The examples in the docstrings of the newer optim modules run and print what they
show."""
from __future__ import annotations

import doctest
import importlib

import pytest

import ember

MODULES = ["ember.optim.asgd", "ember.optim.adafactor", "ember.optim.muon",
           "ember.optim.lbfgs", "ember.optim.swa_utils", "ember.optim.swap",
           "ember.optim.optimizer", "ember.optim.lr_scheduler", "ember.optim.adagrad"]


@pytest.mark.parametrize("name", MODULES)
def test_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={"ember": ember}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
