"""The runnable examples in the docstrings of the misc modules."""
from __future__ import annotations

import doctest
import importlib

import pytest

import ember

MODULES = ["ember.runtime", "ember.memory", "ember.streams", "ember.accelerator", "ember.func",
           "ember.backends", "ember.return_types",
           "ember.signal.windows",
           "ember.masked", "ember.quasirandom", "ember.types", "ember.functional",
           "ember.ops.registry"]


@pytest.mark.parametrize("name", MODULES)
def test_module_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={"ember": ember}, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


@pytest.mark.parametrize("name", ["add", "ldexp", "rsub", "fill", "nextafter", "signbit", "angle",
                                  "frexp", "isin", "as_strided", "as_strided_scatter",
                                  "diagonal_scatter", "split_with_sizes", "unravel_index",
                                  "renorm", "trapezoid", "cumulative_trapezoid", "gradient",
                                  "histogram", "histogramdd", "index_put_", "binomial"])
def test_op_examples(name):
    function = getattr(ember, name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = finder.find(function, name, globs={"ember": ember})
    assert tests and any(t.examples for t in tests), f"{name} has no example"
    for test in tests:
        runner.run(test)
    assert runner.failures == 0


@pytest.mark.parametrize("method", ["new", "storage_offset", "is_contiguous", "is_inference",
                                    "grad_dtype", "register_post_accumulate_grad_hook", "resize_",
                                    "fill_diagonal_"])
def test_tensor_examples(method):
    function = getattr(ember.Tensor, method)
    function = getattr(function, "fget", function)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(function, method, globs={"ember": ember}):
        runner.run(test)
    assert runner.failures == 0
