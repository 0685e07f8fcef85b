"""Random graphs of registered ops (see programs.py) over random shapes and layouts: the
forward values, shapes, requires_grad and errors match PyTorch (when installed), the
gradients of a random upstream gradient match PyTorch's, and gradcheck in float64 agrees
with finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import ember

from ..conftest import HAVE_TORCH
from .budget import examples, hypothesis
from .programs import (
    KNOWN_NAN_GRADIENT_OPS,
    NEEDS_ELEMENTS,
    TORCH_APPROXIMATE,
    Library,
    describe,
    differentiable,
    programs,
    run,
)

given, note, event = hypothesis.given, hypothesis.note, hypothesis.event

if HAVE_TORCH:
    import torch

    TORCH = Library(torch)

_BUILTIN_ERRORS = (IndexError, ValueError, TypeError, RuntimeError)


def _builtin(error_type):
    return next(t for t in error_type.__mro__ if t in _BUILTIN_ERRORS + (Exception,))


def _host(t) -> np.ndarray:
    return t.detach().cpu().numpy() if HAVE_TORCH and isinstance(t, torch.Tensor) \
        else t.detach().numpy()


def _close(ours, theirs, what: str, rtol=1e-6, atol=1e-9):
    np.testing.assert_allclose(np.asarray(ours, dtype=np.float64),
                               np.asarray(theirs, dtype=np.float64), rtol=rtol, atol=atol,
                               equal_nan=True, err_msg=what)


def _check_error(program, leaves, arrays, error):
    """ember refused the program's last instruction: PyTorch must refuse it the same way."""
    if HAVE_TORCH:
        t_leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
        try:
            run(program, t_leaves, TORCH)
        except Exception as torch_error:
            expected = _builtin(type(torch_error))
            assert isinstance(error, expected), (
                f"ember raised {type(error).__name__}: {error}; PyTorch raised "
                f"{type(torch_error).__name__}: {torch_error}")
            return
        raise AssertionError(f"ember raised {type(error).__name__}: {error}, PyTorch did not")
    # without PyTorch: only its documented refusal, a reduction of nothing to a max or min
    # (IndexError over an empty dim, RuntimeError over all of an empty tensor)
    last = program[-1]
    assert last[0] == "reduce" and last[1] in NEEDS_ELEMENTS and \
        isinstance(error, (IndexError, RuntimeError)), \
        f"ember raised {type(error).__name__}: {error}"


def _known_nan_gradient(program, ours, theirs) -> bool:
    """Known differences in where a NaN gradient goes (test_special_values.py has a strict
    xfail test for each): PyTorch's relu and sign backward select (0 where the slope is 0,
    and sign/abs at a NaN input), where ember's multiply, so NaN * 0 stays NaN. True when
    every difference has a NaN on one side only (other paths may add finite gradients to
    the same element)."""
    if not any(i[0] != "view" and i[1] in KNOWN_NAN_GRADIENT_OPS for i in program):
        return False
    with np.errstate(invalid="ignore"):
        differs = ~(np.isclose(ours, theirs, rtol=1e-6, atol=1e-8) |
                    (np.isnan(ours) & np.isnan(theirs)))
    one_nan = np.isnan(ours) != np.isnan(theirs)  # a NaN on one side only
    return bool(differs.any()) and bool(one_nan[differs].all())


def _small_enough(leaves, out) -> bool:
    return sum(t.numel() for t in leaves) <= 30 and out.numel() <= 30


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's, where PyTorch gives nan too
@examples(1500)
@given(programs())
def test_random_graphs_match_pytorch_and_finite_differences(case):
    program, leaves, arrays, seed, error = case
    note(describe(program, leaves))
    event(f"{len(program)} instructions")
    for instruction in program:
        event(f"op kind: {instruction[0]}")
    event(f"first leaf {leaves[0].dim()}-d")
    if any(0 in t.shape for t in leaves):
        event("a zero-size leaf")
    if error is not None:
        event(f"refused with {type(error).__name__}: {str(error)[:60]}")
        _check_error(program, leaves, arrays, error)
        return
    out = run(program, leaves)
    rng = np.random.default_rng(seed)
    upstream = rng.standard_normal(tuple(out.shape))
    grads = None
    if out.requires_grad and differentiable(program):
        grads = ember.autograd.grad(out, leaves, ember.tensor(upstream), allow_unused=True)
        grads = [np.zeros(t.shape) if g is None else _host(g) for g, t in zip(grads, leaves)]
        for g, t in zip(grads, leaves):
            assert g.shape == tuple(t.shape)

    if HAVE_TORCH:
        t_leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
        t_out = run(program, t_leaves, TORCH)
        assert tuple(out.shape) == tuple(t_out.shape), (out.shape, t_out.shape)
        assert out.dtype.name == str(t_out.dtype).removeprefix("torch."), (out.dtype, t_out.dtype)
        if differentiable(program):
            assert out.requires_grad == t_out.requires_grad
        approximate = any(i[0] != "view" and i[1] in TORCH_APPROXIMATE for i in program)
        _close(_host(out), _host(t_out), "forward values differ from PyTorch",
               atol=1e-5 if approximate else 1e-9)
        if grads is not None:
            t_grads = torch.autograd.grad(t_out, t_leaves, torch.tensor(upstream),
                                          allow_unused=True)
            for k, (g, tg, t) in enumerate(zip(grads, t_grads, t_leaves)):
                tg = np.zeros(tuple(t.shape)) if tg is None else _host(tg)
                if _known_nan_gradient(program, g, tg):
                    event("known bug: where a NaN gradient goes")
                    continue
                _close(g, tg, f"gradient of leaf {k} differs from PyTorch",
                       atol=1e-5 if approximate else 1e-8)

    if grads is not None and _small_enough(leaves, out) and \
            np.isfinite(_host(out)).all() and all(np.isfinite(g).all() for g in grads):
        event("gradcheck ran")
        # central differences carry the output's rounding over 2*eps: a special function's
        # value of 6e9 (a few ulps off) is 1e-5-exact in no difference, so the absolute
        # tolerance grows with the output where that noise exceeds it
        noise = 1e-14 * float(np.abs(_host(out)).max(initial=0.0)) / 1e-6
        ember.autograd.gradcheck(lambda *xs: run(program, xs), leaves, eps=1e-6,
                                 atol=max(1e-5, noise), rtol=1e-3)
