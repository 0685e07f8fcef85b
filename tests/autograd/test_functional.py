"""ember.autograd.functional against torch.autograd.functional: values, structure
(tensors, tuples, lists), graphs with create_graph, and the errors of strict mode and bad
arguments."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from tests.conftest import requires_torch

pytestmark = requires_torch

RNG = np.random.default_rng(0)
A, B = RNG.normal(size=(3,)), RNG.normal(size=(2, 2))
VA, VB = RNG.normal(size=(3,)), RNG.normal(size=(2, 2))


def _compare(ours, theirs, check_graph=True, path="result"):
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _compare(a, b, check_graph, f"{path}[{i}]")
        return
    assert isinstance(ours, ember.Tensor), path
    assert tuple(ours.shape) == tuple(theirs.shape), path
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12,
                               atol=1e-14, err_msg=path)
    if check_graph:
        assert ours.requires_grad == theirs.requires_grad, path


def _both(call, check_graph=True):
    import torch

    results = [call(lib, lambda a: lib.tensor(a)) for lib in (ember, torch)]
    _compare(*results, check_graph=check_graph)


def _two_outputs(x, y):
    return x.exp()[:2] * y.sum(0), (y * y).sum() * x[0]


def _scalar(x, y):
    return (x.sin() * y.sum()).sum() + (x * x).sum() * y[0, 1]


CASES = {
    "jacobian": lambda lib, t: lib.autograd.functional.jacobian(
        lambda x: x ** 2 * x.sum(), t(A)),
    "jacobian_tuple": lambda lib, t: lib.autograd.functional.jacobian(
        _two_outputs, (t(A), t(B))),
    "jacobian_vectorize": lambda lib, t: lib.autograd.functional.jacobian(
        _two_outputs, (t(A), t(B)), vectorize=True),
    "jacobian_forward": lambda lib, t: lib.autograd.functional.jacobian(
        _two_outputs, (t(A), t(B)), vectorize=True, strategy="forward-mode"),
    "jacobian_forward_single": lambda lib, t: lib.autograd.functional.jacobian(
        lambda x: x.sin() * 2, t(A), vectorize=True, strategy="forward-mode"),
    "jacobian_unused_input": lambda lib, t: lib.autograd.functional.jacobian(
        lambda x, y: x * 2, (t(A), t(B))),
    "jacobian_scalar": lambda lib, t: lib.autograd.functional.jacobian(
        lambda x: (x ** 3).sum(), t(A)),
    "hessian": lambda lib, t: lib.autograd.functional.hessian(
        lambda x: (x.sin() * x).sum(), t(A)),
    "hessian_tuple": lambda lib, t: lib.autograd.functional.hessian(_scalar, (t(A), t(B))),
    "hessian_vectorize": lambda lib, t: lib.autograd.functional.hessian(
        _scalar, (t(A), t(B)), vectorize=True),
    "vjp": lambda lib, t: lib.autograd.functional.vjp(lambda x: x ** 2 * x.sum(), t(A),
                                                      t(VA)),
    "vjp_tuple": lambda lib, t: lib.autograd.functional.vjp(
        _two_outputs, (t(A), t(B)), (t(VA[:2]), t(2.0))),
    "vjp_scalar_no_v": lambda lib, t: lib.autograd.functional.vjp(_scalar, (t(A), t(B))),
    "jvp": lambda lib, t: lib.autograd.functional.jvp(lambda x: x ** 2 * x.sum(), t(A),
                                                      t(VA)),
    "jvp_tuple": lambda lib, t: lib.autograd.functional.jvp(_two_outputs, (t(A), t(B)),
                                                            (t(VA), t(VB))),
    "vhp": lambda lib, t: lib.autograd.functional.vhp(_scalar, (t(A), t(B)),
                                                      (t(VA), t(VB))),
    "hvp": lambda lib, t: lib.autograd.functional.hvp(_scalar, (t(A), t(B)),
                                                      (t(VA), t(VB))),
    "hvp_single": lambda lib, t: lib.autograd.functional.hvp(
        lambda x: (x.sin() * x).sum(), t(A), t(VA)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch(name):
    _both(CASES[name])


def test_forward_mode_outer_hessian_matches_pytorch_values():
    # PyTorch's forward-mode outer Jacobian leaves a graph on this result; ember's has none
    _both(lambda lib, t: lib.autograd.functional.hessian(
        _scalar, (t(A), t(B)), vectorize=True, outer_jacobian_strategy="forward-mode"),
        check_graph=False)


def _with_graph(name):
    def call(lib, t):
        x = t(A).requires_grad_()
        fn = lib.autograd.functional
        if name == "vjp":
            out = fn.vjp(lambda x: x ** 3, x, t(VA), create_graph=True)[1]
        elif name == "jvp":
            out = fn.jvp(lambda x: x ** 3, x, t(VA), create_graph=True)[1]
        elif name == "jacobian":
            out = fn.jacobian(lambda x: x ** 3 * x.sum(), x, create_graph=True)
        elif name == "hessian":
            out = fn.hessian(lambda x: (x ** 4).sum(), x, create_graph=True)
        elif name == "hvp":
            out = fn.hvp(lambda x: (x ** 4).sum(), x, t(VA), create_graph=True)[1]
        else:
            out = fn.vhp(lambda x: (x ** 4).sum(), x, t(VA), create_graph=True)[1]
        return out, lib.autograd.grad(out.sum(), x)[0]
    return call


@pytest.mark.parametrize("name", ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"])
def test_create_graph_lets_the_result_be_differentiated(name):
    _both(_with_graph(name))


def test_results_do_not_keep_the_graph_and_inputs_are_untouched():
    x = ember.tensor(A, requires_grad=True)
    out, grad = ember.autograd.functional.vjp(lambda x: x * x, x, ember.tensor(VA))
    assert not out.requires_grad and not grad.requires_grad
    assert x.grad is None
    jac = ember.autograd.functional.jacobian(lambda x: x * x, ember.tensor(A))
    assert not jac.requires_grad


def _raises(call):
    import torch

    errors = []
    for lib in (ember, torch):
        with pytest.raises((RuntimeError, TypeError, ValueError, AssertionError,
                            NotImplementedError)) as info:
            call(lib, lambda a: lib.tensor(a))
        errors.append(info.value)
    assert type(errors[0]) is type(errors[1])
    # (PyTorch's forward-mode message lacks a space: "isonly")
    assert str(errors[0]).replace("ember.Size", "torch.Size") == \
        str(errors[1]).replace("isonly", "is only")


ERRORS = {
    "strict_independent_output": lambda lib, t: lib.autograd.functional.vjp(
        lambda x: t(VA), t(A), t(VA), strict=True),
    "strict_unused_input": lambda lib, t: lib.autograd.functional.vjp(
        lambda x, y: x * 2, (t(A), t(B)), t(VA), strict=True),
    "strict_jacobian": lambda lib, t: lib.autograd.functional.jacobian(
        lambda x, y: x * 2, (t(A), t(B)), strict=True),
    "strict_linear_hessian": lambda lib, t: lib.autograd.functional.hessian(
        lambda x: (x * 2).sum(), t(A), strict=True),
    "strict_jvp": lambda lib, t: lib.autograd.functional.jvp(
        lambda x, y: x * 2, (t(A), t(B)), (t(VA), t(VB)), strict=True),
    "strict_vhp_linear": lambda lib, t: lib.autograd.functional.vhp(
        lambda x: (x * 2).sum(), t(A), t(VA), strict=True),
    "strict_create_graph": lambda lib, t: lib.autograd.functional.vjp(
        lambda x: x * 2, t(A), t(VA), strict=True, create_graph=True),
    "strict_and_vectorize": lambda lib, t: lib.autograd.functional.jacobian(
        lambda x: x * x, t(A), strict=True, vectorize=True),
    "forward_without_vectorize": lambda lib, t: lib.autograd.functional.jacobian(
        lambda x: x * x, t(A), strategy="forward-mode"),
    "forward_with_create_graph": lambda lib, t: lib.autograd.functional.jacobian(
        lambda x: x * x, t(A), strategy="forward-mode", vectorize=True, create_graph=True),
    "forward_with_strict": lambda lib, t: lib.autograd.functional.jacobian(
        lambda x: x * x, t(A), strategy="forward-mode", vectorize=True, strict=True),
    "bad_strategy": lambda lib, t: lib.autograd.functional.jacobian(
        lambda x: x * x, t(A), strategy="sideways"),
    "bad_outer_strategy": lambda lib, t: lib.autograd.functional.hessian(
        lambda x: (x * x).sum(), t(A), outer_jacobian_strategy="sideways"),
    "input_not_tensor": lambda lib, t: lib.autograd.functional.vjp(lambda x: x, 3.0),
    "input_tuple_not_tensor": lambda lib, t: lib.autograd.functional.jvp(
        lambda x, y: x, (t(A), 3)),
    "output_not_tensor": lambda lib, t: lib.autograd.functional.jacobian(
        lambda x: 3.0, t(A)),
    "v_missing": lambda lib, t: lib.autograd.functional.vjp(lambda x: x * 2, t(A)),
    "v_missing_jvp": lambda lib, t: lib.autograd.functional.jvp(lambda x: x * 2, t(A)),
    "v_wrong_size": lambda lib, t: lib.autograd.functional.vjp(lambda x: x * 2, t(A),
                                                               t(VB)),
    "v_wrong_length": lambda lib, t: lib.autograd.functional.jvp(
        _two_outputs, (t(A), t(B)), (t(VA),)),
    "v_tuple_wrong_size": lambda lib, t: lib.autograd.functional.hvp(
        _scalar, (t(A), t(B)), (t(VA), t(VA))),
    "v_two_for_one": lambda lib, t: lib.autograd.functional.vjp(
        lambda x: x * 2, t(A), (t(VA), t(VA))),
    "hessian_not_scalar": lambda lib, t: lib.autograd.functional.hessian(
        lambda x: x * x, t(A)),
    "hessian_tuple_output": lambda lib, t: lib.autograd.functional.hessian(
        lambda x: (x.sum(), x.sum()), t(A)),
    "vhp_not_scalar": lambda lib, t: lib.autograd.functional.vhp(
        lambda x: x * x, t(A), t(VA)),
    "hvp_tuple_output": lambda lib, t: lib.autograd.functional.hvp(
        lambda x: (x.sum(), x.sum()), t(A), t(VA)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_pytorch(name):
    _raises(ERRORS[name])


def test_non_strict_fills_in_zeros():
    x, y = ember.tensor(A), ember.tensor(B)
    _, (gx, gy) = ember.autograd.functional.vjp(lambda x, y: x * 2, (x, y), ember.tensor(VA))
    assert gy.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    out, jv = ember.autograd.functional.jvp(lambda x: ember.tensor(VA), x, ember.tensor(VA))
    assert jv.tolist() == [0.0, 0.0, 0.0]


def test_deep_chain_is_walked_without_recursion():
    def f(x):
        for _ in range(3000):
            x = x * 1.0001
        return x.sum()

    x = ember.tensor([1.0, 2.0], dtype=ember.float64)
    _, grad = ember.autograd.functional.vjp(f, x)
    np.testing.assert_allclose(grad.numpy(), [1.0001 ** 3000] * 2, rtol=1e-9)


def test_signatures_match_pytorch():
    import inspect

    import torch

    def signature(function):
        return [(p.name, p.kind, None if p.default is p.empty else repr(p.default))
                for p in inspect.signature(function).parameters.values()]

    ours, theirs = ember.autograd.functional, torch.autograd.functional
    assert sorted(ours.__all__) == sorted(theirs.__all__)
    for name in ours.__all__:
        assert signature(getattr(ours, name)) == signature(getattr(theirs, name)), name
    for name in ember.autograd.graph.__all__:
        if name not in ("Node", "GradientEdge"):
            assert signature(getattr(ember.autograd.graph, name)) == \
                signature(getattr(torch.autograd.graph, name)), name
