"""gradcheck / gradgradcheck: compare backward against central finite differences.

Both build full Jacobians, one column per perturbed input element and one row per
backward with a one-hot gradient, so keep the inputs small (tens of elements) and in
float64.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import grad_mode

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised when an analytical gradient disagrees with the numerical one."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _host(array) -> np.ndarray:
    return array if isinstance(array, np.ndarray) else array.get()


def _differentiable_outputs(outputs):
    from ..tensor import Tensor

    return [o for o in outputs if isinstance(o, Tensor) and o.is_floating_point()]


def _evaluate(func, inputs):
    with grad_mode.no_grad():
        outputs = _differentiable_outputs(_as_tuple(func(*inputs)))
    # copy: an output may be a view of an input that is about to be perturbed
    return [_host(o._data).astype(np.float64).ravel().copy() for o in outputs]


def _numerical_jacobians(func, inputs, targets, eps):
    """jacobians[i][o]: (numel of input i, numel of output o), by central differences."""
    jacobians = []
    for t in targets:
        data = t._data
        flat_size = data.size
        columns = None
        for j in range(flat_size):
            index = np.unravel_index(j, data.shape)
            original = data[index].item()
            data[index] = original + eps
            plus = _evaluate(func, inputs)
            data[index] = original - eps
            minus = _evaluate(func, inputs)
            data[index] = original
            if columns is None:
                columns = [np.zeros((flat_size, p.size)) for p in plus]
            for o, (p, m) in enumerate(zip(plus, minus)):
                columns[o][j] = (p - m) / (2 * eps)
        jacobians.append(columns or [])
    return jacobians


def _analytical_jacobians(func, inputs, targets):
    from . import grad as autograd_grad

    outputs = _differentiable_outputs(_as_tuple(func(*inputs)))
    jacobians = [[np.zeros((t.numel(), o.numel())) for o in outputs] for t in targets]
    for o, out in enumerate(outputs):
        if not out.requires_grad:
            continue  # stays zero: the numerical Jacobian must be zero too
        for k in range(out.numel()):
            onehot = np.zeros(out.numel(), dtype=out._data.dtype)
            onehot[k] = 1
            grad_out = _from_host(onehot.reshape(out._data.shape), out._device)
            grads = autograd_grad(out, targets, grad_out, retain_graph=True, allow_unused=True)
            for i, g in enumerate(grads):
                if g is not None:
                    if g.shape != targets[i].shape:
                        raise GradcheckError(
                            f"gradient for input {i} has shape {list(g.shape)}, expected "
                            f"{list(targets[i].shape)}")
                    jacobians[i][o][:, k] = _host(g._data).astype(np.float64).ravel()
    return jacobians


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, **ignored) -> bool:
    """Check ``func``'s gradients w.r.t. every input that requires grad against finite
    differences. Returns True, or raises GradcheckError (False with
    ``raise_exception=False``) naming the output, the input and both Jacobians."""
    inputs = _as_tuple(inputs)
    targets = [t for t in inputs if getattr(t, "requires_grad", False)]
    if not targets:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    for t in targets:
        if t.dtype.name != "float64":
            warnings.warn(f"an input to gradcheck is {t.dtype.name}, not float64: finite "
                          "differences in low precision fail for the wrong reasons",
                          UserWarning, stacklevel=2)
    analytical = _analytical_jacobians(func, inputs, targets)
    numerical = _numerical_jacobians(func, inputs, targets, eps)
    for i, (a_cols, n_cols) in enumerate(zip(analytical, numerical)):
        for o, (a, n) in enumerate(zip(a_cols, n_cols)):
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                message = (f"Jacobian mismatch for output {o} with respect to input {i},\n"
                           f"numerical:{n}\nanalytical:{a}\n")
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, raise_exception: bool = True, seed: int = 0,
                  **ignored) -> bool:
    """Check second derivatives: gradcheck of (inputs, grad_outputs) -> input gradients,
    the backward itself built with ``create_graph=True``."""
    from . import grad as autograd_grad

    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(_as_tuple(func(*inputs)))
    outputs = [o for o in outputs if o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = []
        for o in outputs:
            g = _from_host(rng.standard_normal(o._data.shape).astype(o._data.dtype), o._device)
            g.requires_grad_(True)
            grad_outputs.append(g)
    grad_outputs = list(_as_tuple(grad_outputs))
    n_inputs = len(inputs)

    def first_derivative(*args):
        with grad_mode.enable_grad():
            return _first_derivative(*args)

    def _first_derivative(*args):
        outs = _differentiable_outputs(_as_tuple(func(*args[:n_inputs])))
        outs = [o for o in outs if o.requires_grad]
        diff = [a for a in args[:n_inputs] if getattr(a, "requires_grad", False)]
        grads = autograd_grad(outs, diff, args[n_inputs:], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception)


def _from_host(array: np.ndarray, device):
    from .. import backend
    from ..tensor import Tensor

    return Tensor._make(backend.move(array, backend.CPU, device), device)
