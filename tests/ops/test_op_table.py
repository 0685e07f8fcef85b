"""The op table: every registered op, on every available device, checked by
- gradcheck and gradgradcheck in float64 (finite differences),
- PyTorch as an oracle (when installed) on the same random inputs with a random upstream
  gradient, in float64 and float32, including the result dtype.
Adding an op with samples to the registry adds its rows here."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.ops import OPS
from ember.ops.registry import Sample

from ..conftest import DEVICES, HAVE_TORCH
from .maker import Maker

TABLE = [(name, info) for name, info in sorted(OPS.items()) if info.samples is not None]


def _samples(info, device, dtype, seed_text):
    return info.samples(Maker(device, dtype, seed_text))


def _cases(predicate):
    cases = []
    for name, info in TABLE:
        if not predicate(info):
            continue
        count = len(_samples(info, "cpu", ember.float64, name))
        for i in range(count):
            for device in DEVICES:
                cases.append(pytest.param(name, i, device, id=f"{name}-{i}-{device}"))
    return cases


# ----------------------------------------------------------------------------- helpers
def _flatten(value):
    """Tensors (and numbers) in an op's output, in order."""
    if isinstance(value, ember.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            out.extend(_flatten(v))
        return out
    return [value]


def _leaves(value):
    """The tensors that require grad in nested arguments, in order."""
    if isinstance(value, ember.Tensor):
        return [value] if value.requires_grad else []
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _leaves(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _leaves(v)]
    return []


def _substitute(value, replacements):
    if isinstance(value, ember.Tensor):
        return next(replacements) if value.requires_grad else value
    if isinstance(value, tuple):
        return tuple(_substitute(v, replacements) for v in value)
    if isinstance(value, list):
        return [_substitute(v, replacements) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, replacements) for k, v in value.items()}
    return value


def _as_function(info, sample: Sample):
    def function(*tensors):
        replacements = iter(tensors)
        args = _substitute(sample.args, replacements)
        kwargs = _substitute(sample.kwargs, replacements)
        if info.gradcheck_wrapper is not None:
            return info.gradcheck_wrapper(info.function, *args, **kwargs)
        return info.function(*args, **kwargs)
    return function


def _processed(info, output):
    return info.output_process(output) if info.output_process else output


# ----------------------------------------------------------------------------- gradcheck
@pytest.mark.parametrize("name,index,device", _cases(lambda info: info.differentiable))
def test_gradcheck(name, index, device):
    info = OPS[name]
    sample = _samples(info, device, ember.float64, name)[index]
    inputs = _leaves((sample.args, sample.kwargs))
    if not inputs:
        pytest.skip("no differentiable input in this sample")
    assert ember.autograd.gradcheck(_as_function(info, sample), inputs, eps=1e-6,
                                    atol=1e-5, rtol=1e-3)


# Double backward that differs on the CUDA path (found on the CuPy stand-in; not yet
# explained, so it is marked rather than hidden).
KNOWN_CUDA_GRADGRAD: set = set()


@pytest.mark.parametrize("name,index,device", _cases(lambda info: info.gradgrad))
def test_gradgradcheck(name, index, device):
    info = OPS[name]
    if device == "cuda" and name in KNOWN_CUDA_GRADGRAD:
        pytest.xfail(f"{name}'s double backward on the CUDA path disagrees with finite "
                     "differences on the CuPy stand-in (CPU passes)")
    sample = _samples(info, device, ember.float64, name)[index]
    inputs = _leaves((sample.args, sample.kwargs))
    if not inputs:
        pytest.skip("no differentiable input in this sample")
    assert ember.autograd.gradgradcheck(_as_function(info, sample), inputs, eps=1e-6,
                                        atol=1e-5, rtol=1e-3)


# ----------------------------------------------------------------------------- oracle
def _to_torch(value, torch):
    if isinstance(value, ember.Tensor):
        t = torch.from_numpy(np.array(value.detach().cpu().numpy(), copy=True))
        return t.requires_grad_(value.requires_grad)
    if isinstance(value, ember.dtype):
        return getattr(torch, value.name)
    if isinstance(value, ember.device):
        return torch.device("cpu")
    if isinstance(value, tuple):
        return tuple(_to_torch(v, torch) for v in value)
    if isinstance(value, list):
        return [_to_torch(v, torch) for v in value]
    if isinstance(value, dict):
        return {k: _to_torch(v, torch) for k, v in value.items()}
    return value


def _torch_function(info, torch):
    reference = info.torch
    if callable(reference):
        return lambda *args, **kwargs: reference(torch, *args, **kwargs)
    target = torch
    for part in reference.split("."):
        target = getattr(target, part, None)
        if target is None:  # a method-only op in PyTorch (expand, view)
            return getattr(torch.Tensor, reference)
    return target


def _host(value):
    return value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)


def _compare(ours, theirs, atol, rtol, what):
    ours_flat, theirs_flat = _flatten(ours), _flatten(theirs)
    assert len(ours_flat) == len(theirs_flat), f"{what}: {len(ours_flat)} outputs vs " \
                                               f"{len(theirs_flat)} from PyTorch"
    for k, (a, b) in enumerate(zip(ours_flat, theirs_flat)):
        if isinstance(a, ember.Tensor):
            assert a.dtype.name == str(b.dtype).replace("torch.", ""), \
                f"{what}[{k}]: dtype {a.dtype.name} vs PyTorch {b.dtype}"
            assert tuple(a.shape) == tuple(b.shape), \
                f"{what}[{k}]: shape {tuple(a.shape)} vs PyTorch {tuple(b.shape)}"
        np.testing.assert_allclose(_host(a).astype(np.float64) if _host(a).dtype != bool
                                   else _host(a), _host(b).astype(np.float64)
                                   if _host(b).dtype != bool else _host(b),
                                   atol=atol, rtol=rtol, equal_nan=True,
                                   err_msg=f"{what}[{k}] differs from PyTorch")


def _oracle(name, index, device, dtype, atol, rtol):
    import torch

    info = OPS[name]
    sample = _samples(info, device, dtype, name)[index]
    inputs = _leaves((sample.args, sample.kwargs))
    output = info.function(*sample.args, **sample.kwargs)
    t_args, t_kwargs = _to_torch(sample.args, torch), _to_torch(sample.kwargs, torch)
    t_inputs = _leaves_torch((t_args, t_kwargs))
    t_output = _torch_function(info, torch)(*t_args, **t_kwargs)
    _compare(_processed(info, output), _processed(info, t_output), atol, rtol, f"{name} output")

    if not info.differentiable or not inputs:
        return
    ours = [o for o in _flatten(output) if isinstance(o, ember.Tensor) and o.requires_grad]
    theirs = [o for o in _flatten(t_output) if hasattr(o, "requires_grad") and o.requires_grad]
    assert len(ours) == len(theirs), f"{name}: differentiable outputs differ in number"
    if not ours:
        return
    rng = np.random.default_rng(index)
    upstream = [rng.standard_normal(tuple(o.shape)) for o in ours]
    grads = ember.autograd.grad(
        ours, inputs, [ember.tensor(u, dtype=o.dtype, device=device) for u, o in
                       zip(upstream, ours)], allow_unused=True)
    t_grads = torch.autograd.grad(
        theirs, t_inputs, [torch.tensor(u, dtype=o.dtype) for u, o in zip(upstream, theirs)],
        allow_unused=True)
    for k, (g, tg) in enumerate(zip(grads, t_grads)):
        g = np.zeros(tuple(inputs[k].shape)) if g is None else _host(g)
        tg = np.zeros(tuple(inputs[k].shape)) if tg is None else _host(tg)
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), np.asarray(tg, np.float64),
                                   atol=atol, rtol=rtol,
                                   err_msg=f"{name}: gradient of input {k} differs from PyTorch")


def _leaves_torch(value):
    if hasattr(value, "requires_grad") and hasattr(value, "grad_fn"):
        return [value] if value.requires_grad else []
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _leaves_torch(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _leaves_torch(v)]
    return []


oracle = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")


@oracle
@pytest.mark.parametrize("name,index,device", _cases(lambda info: info.torch is not None))
def test_against_torch_float64(name, index, device):
    info = OPS[name]
    _oracle(name, index, device, ember.float64, info.atol, info.rtol)


@oracle
@pytest.mark.parametrize("name,index,device",
                         _cases(lambda info: info.torch is not None and info.float32))
def test_against_torch_float32(name, index, device):
    info = OPS[name]
    _oracle(name, index, device, ember.float32, max(info.atol, 1e-4), max(info.rtol, 1e-4))


# ----------------------------------------------------------------------------- the checker
def test_gradcheck_catches_a_wrong_backward():
    class WrongExp(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.exp() * 1.01  # off by 1%

    x = ember.rand(3, dtype=ember.float64, requires_grad=True)
    with pytest.raises(ember.autograd.gradcheck_module.GradcheckError, match="Jacobian mismatch"):
        ember.autograd.gradcheck(WrongExp.apply, (x,))
    assert not ember.autograd.gradcheck(WrongExp.apply, (x,), raise_exception=False)


def test_gradgradcheck_catches_a_wrong_double_backward():
    class FirstOrderOnly(ember.autograd.Function):
        # the backward is right, but built from a detached value, so its own
        # derivative (the second derivative of x**3) comes out wrong
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x.detach() ** 2

    x = ember.rand(3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(FirstOrderOnly.apply, (x,))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        ember.autograd.gradgradcheck(FirstOrderOnly.apply, (x,))


def test_every_registered_op_has_samples_or_a_reason():
    missing = [name for name, info in OPS.items() if info.samples is None]
    assert not missing, f"ops registered without test samples: {missing}"
