"""Adam, AdamW and SGD with momentum take one fused kernel per parameter on CUDA; their
steps match the CPU's (to the bit on the stand-in, whose fuse runs the formula itself)."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.backend import cuda

requires_cuda = pytest.mark.skipif(not cuda.is_available(), reason="no CUDA device (and no "
                                   "stand-in: EMBER_TEST_STANDIN=1 makes one)")

OPTIMIZERS = {
    "adam": lambda p: ember.optim.Adam(p, lr=0.01),
    "adam amsgrad": lambda p: ember.optim.Adam(p, lr=0.01, amsgrad=True, betas=(0.8, 0.9)),
    "adam l2": lambda p: ember.optim.Adam(p, lr=0.01, weight_decay=0.1),
    "adam maximize": lambda p: ember.optim.Adam(p, lr=0.01, maximize=True),
    "adamw": lambda p: ember.optim.AdamW(p, lr=0.02, weight_decay=0.05),
    "adamw amsgrad": lambda p: ember.optim.AdamW(p, lr=0.02, amsgrad=True),
    "sgd momentum": lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9),
    "sgd nesterov": lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                              weight_decay=0.01),
    "sgd dampening": lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.5),
}
FORMULAS = {"adam": "_adam_update", "adam amsgrad": "_amsgrad_update",
            "adam l2": "_adam_update", "adam maximize": "_adam_update",
            "adamw": "_adam_update", "adamw amsgrad": "_amsgrad_update",
            "sgd momentum": "_momentum_update", "sgd nesterov": "_nesterov_update",
            "sgd dampening": None}


def _run(name, device, dtype, steps=4):
    rng = np.random.default_rng(0)
    params = [ember.tensor(rng.standard_normal(shape).astype(dtype), device=device,
                           requires_grad=True) for shape in ((3, 4), (5,), ())]
    optimizer = OPTIMIZERS[name](params)
    for step in range(steps):
        for i, p in enumerate(params):
            grad = np.random.default_rng(10 * step + i).standard_normal(p.shape)
            p.grad = ember.tensor(grad.astype(dtype), device=device)
        optimizer.step()
    state = [{k: v.cpu().numpy() for k, v in optimizer.state[p].items()
              if isinstance(v, ember.Tensor)} for p in params]
    return [p.detach().cpu().numpy() for p in params], state


@requires_cuda
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_cuda_fused_step_matches_the_cpu_step(name, dtype):
    kernel_calls = _fused_calls(name)
    cpu_params, cpu_state = _run(name, "cpu", dtype)
    cuda_params, cuda_state = _run(name, "cuda", dtype)
    for got, expected in zip(cuda_params + [v for s in cuda_state for v in s.values()],
                             cpu_params + [v for s in cpu_state for v in s.values()]):
        assert got.dtype == expected.dtype
        if cuda.STANDIN:
            assert got.tobytes() == expected.tobytes(), name
        else:
            tolerance = {np.float32: 1e-5, np.float64: 1e-12}[dtype]
            np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)
    if kernel_calls is not None:
        # 3 parameters x 4 steps (SGD's first step only copies the gradient)
        fused = 9 if name.startswith("sgd") else 12
        assert _fused_calls(name) - kernel_calls == fused


def _fused_calls(name):
    """How often the stand-in's fused function of the optimizer's formula ran (None where
    the optimizer has none, or off the stand-in)."""
    if not cuda.STANDIN or FORMULAS[name] is None:
        return None
    from ember.backend import standin

    made = [f for f in standin.FUSED if f.function.__name__ == FORMULAS[name]]
    return made[0].calls if made else 0


def test_sgd_momentum_of_a_0d_parameter_with_weight_decay_or_maximize_keeps_its_buffer():
    # grad + weight_decay * param (or -grad) of 0-d arrays is a NumPy scalar: the buffer
    # made from it must still be an array that the next steps update in place
    for options, expected in (({"weight_decay": 0.01}, (0.7141347527, 1.3801624775)),
                              ({"maximize": True}, (1.2804999351, -1.3550000191))):  # torch 2.13
        p = ember.tensor(1.0, requires_grad=True)
        optimizer = ember.optim.SGD([p], lr=0.1, momentum=0.9, **options)
        for _ in range(3):
            p.grad = ember.tensor(0.5)
            optimizer.step()
        np.testing.assert_allclose(p.item(), expected[0], rtol=1e-6)
        np.testing.assert_allclose(optimizer.state[p]["momentum_buffer"].item(), expected[1],
                                   rtol=1e-6)
