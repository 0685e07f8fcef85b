"""Flatten parameters into one vector and back."""
from __future__ import annotations

from ... import grad_mode
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_device(param, old):
    device = param.device
    if old is not None and device != old:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return device


def parameters_to_vector(parameters) -> Tensor:
    """One 1-D tensor holding every parameter, flattened, in order (differentiable)."""
    import ember

    device = None
    flat = []
    for param in parameters:
        device = _check_device(param, device)
        flat.append(param.reshape(-1))
    return ember.cat(flat)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Make each parameter's data the matching slice of ``vec`` (the inverse of
    parameters_to_vector)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected ember.Tensor, but got: {type(vec).__name__}")
    parameters = list(parameters)
    total = sum(p.numel() for p in parameters)
    if vec.dim() != 1 or vec.numel() != total:
        raise RuntimeError(f"vector_to_parameters: vec must be 1-D with {total} elements (the "
                           f"parameters' total), got shape {list(vec.shape)}")
    device = None
    pointer = 0
    with grad_mode.no_grad():
        for param in parameters:
            device = _check_device(param, device)
            n = param.numel()
            param.data = vec[pointer:pointer + n].reshape(param.shape).data
            pointer += n
