"""``ember.amp.GradScaler``: dynamic loss scaling for float16 training.

float16 gradients underflow to zero where float32 ones would not. The scaler multiplies
the loss by a large factor before backward, divides the gradients by it before the
optimizer steps, skips any step whose gradients hold inf or NaN (and halves the factor),
and doubles the factor after ``growth_interval`` clean steps in a row.
"""
from __future__ import annotations

import enum
import math
import warnings

import numpy as np

from .. import backend, dtypes
from ..creation import full
from ..tensor import Tensor

__all__ = ["GradScaler"]


class _Stage(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict:
    return {"stage": _Stage.READY, "found_inf": None}


class GradScaler:
    """Scale the loss, unscale and check the gradients, step, and adapt the scale.

    >>> import ember
    >>> model = ember.nn.Linear(3, 1)
    >>> opt = ember.optim.SGD(model.parameters(), lr=0.1)
    >>> scaler = ember.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    >>> loss = model(ember.randn(4, 3)).pow(2).mean()
    >>> scaler.scale(loss).backward()
    >>> scaler.step(opt)          # unscales the gradients; skipped if any is inf/NaN
    >>> scaler.update()           # adapt the scale for the next iteration
    >>> scaler.get_scale()
    65536.0
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            from .. import cuda

            if not cuda.is_available():
                warnings.warn("ember.amp.GradScaler is enabled, but CUDA is not available. "
                              "Disabling.", stacklevel=2)
                self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if not backoff_factor < 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._scale = np.float32(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._states: dict[int, dict] = {}

    # ------------------------------------------------------------------ scaling
    def scale(self, outputs):
        """``outputs`` (a Tensor or nested lists/tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * full((), float(self._scale), dtype=dtypes.float32,
                                  device=outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer) -> dict:
        return self._states.setdefault(id(optimizer), _fresh_state())

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, and note any inf/NaN.
        Call it before clipping gradients; ``step`` calls it when you have not."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] is _Stage.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = float(np.float32(1.0 / float(self._scale)))
        found_inf = False
        for group in optimizer.param_groups:
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                if grad.dtype is dtypes.float16:  # the parameters must stay float32
                    raise ValueError("Attempting to unscale FP16 gradients.")
                xp = backend.xp_of(grad._data)
                grad._data = grad._data * inv_scale
                found_inf = found_inf or not bool(xp.isfinite(grad._data).all())
        state["found_inf"] = found_inf
        state["stage"] = _Stage.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless done), then ``optimizer.step()`` unless a gradient is inf/NaN.
        Returns what ``optimizer.step`` returned, or None for a skipped step."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        state = self._state(optimizer)
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _Stage.READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _Stage.STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """Back off after a step with inf/NaN gradients, grow after ``growth_interval``
        clean ones; or set ``new_scale`` (a float or a one-element Tensor)."""
        if not self._enabled:
            return
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise ValueError("new_scale should be a float or a 1-element "
                                     "torch.cuda.FloatTensor or torch.FloatTensor with "
                                     "requires_grad=False.")
                new_scale = new_scale.item()
            self._scale = np.float32(new_scale)
        else:
            found = [s["found_inf"] for s in self._states.values()
                     if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale = np.float32(self._scale * np.float32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    with np.errstate(over="ignore"):  # growth past float32's max is refused
                        grown = np.float32(self._scale * np.float32(self._growth_factor))
                    if math.isfinite(grown):
                        self._scale = grown
                    self._growth_tracker = 0
        self._states = {}

    # ---------------------------------------------------------------- accessors
    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return float(self._scale) if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """The scale and its schedule ({} when disabled), for checkpoints."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was "
                               "saved from a disabled instance of GradScaler.")
        self._scale = np.float32(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
