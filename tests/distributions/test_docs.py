"""The examples in the docstrings of ember.distributions run and print what they say."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import ember
import ember.distributions as ED

MODULES = ["ember.distributions"] + [f"ember.distributions.{m.name}"
                                     for m in pkgutil.iter_modules(ED.__path__)]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    globs = dict(vars(module))
    globs["ember"] = ember
    globs.update({k: getattr(ED, k) for k in ED.__all__})
    registry = dict(ED.kl._KL_REGISTRY)  # an example registers a pair
    try:
        result = doctest.testmod(module, globs=globs, optionflags=doctest.ELLIPSIS)
    finally:
        ED.kl._KL_REGISTRY.clear()
        ED.kl._KL_REGISTRY.update(registry)
        ED.kl._KL_MEMOIZE.clear()
    assert result.failed == 0


def test_submodules_mirror_pytorch():
    """Every submodule of torch.distributions exists in ember.distributions, with the
    public classes PyTorch's defines there."""
    torch = pytest.importorskip("torch")
    TD = torch.distributions
    for name in dir(TD):
        theirs = getattr(TD, name)
        if not isinstance(theirs, type(TD)) or not theirs.__name__.startswith(
                "torch.distributions."):
            continue
        mine = getattr(ED, name, None)
        assert mine is not None and mine.__name__ == f"ember.distributions.{name}", name
        for member in getattr(theirs, "__all__", []):
            assert hasattr(mine, member), f"ember.distributions.{name}.{member}"


def _parameters(fn):
    import inspect
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return [(p.name, repr(p.default) if p.default is not inspect.Parameter.empty else None)
            for p in signature.parameters.values()]


def test_signatures_match_pytorch():
    """Constructors and public methods take PyTorch's parameter names and defaults."""
    torch = pytest.importorskip("torch")
    TD = torch.distributions
    methods = ("__init__", "sample", "rsample", "log_prob", "cdf", "icdf", "entropy",
               "enumerate_support", "expand", "log_abs_det_jacobian", "with_cache",
               "forward_shape", "inverse_shape")
    mismatches = []
    for name in ED.__all__:
        mine, theirs = getattr(ED, name), getattr(TD, name, None)
        if not isinstance(mine, type) or not isinstance(theirs, type):
            continue
        for method in methods:
            if method not in vars(theirs) or not hasattr(mine, method):
                continue
            expected = _parameters(getattr(theirs, method))
            got = _parameters(getattr(mine, method))
            if expected is not None and got is not None:
                # PyTorch's defaults print torch.Size(); ember's sample_shape=() is the same
                expected = [(n, "()" if d == "torch.Size([])" else d) for n, d in expected]
                if got != expected:
                    mismatches.append(f"{name}.{method}: {got} != {expected}")
    assert not mismatches, "\n".join(mismatches)
