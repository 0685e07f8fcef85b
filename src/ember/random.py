"""Random number generation: one default Generator per device kind, seeded together by
``ember.manual_seed``. CPU draws come from NumPy's PCG64; CUDA draws from CuPy's."""
from __future__ import annotations

import numpy as np

from . import backend

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "default_generator",
           "get_rng_state", "set_rng_state"]


class Generator:
    """A seeded source of random numbers (``ember.Generator().manual_seed(0)``), usable as
    ``generator=`` in rand/randn/randint/randperm, samplers and random_split."""

    def __init__(self, device="cpu"):
        self.device = backend.device(device)
        self._seed = int(np.random.SeedSequence().entropy % (2 ** 63))
        self._rng = None
        self._reset()

    def _reset(self) -> None:
        if self.device.type == "cpu":
            self._rng = np.random.Generator(np.random.PCG64(self._seed))
        else:
            self._rng = backend.cuda.RandomSource(self._seed, self.device.index or 0)

    def manual_seed(self, seed: int) -> "Generator":
        self._seed = int(seed) % (2 ** 64)
        self._reset()
        return self

    def seed(self) -> int:
        self._seed = int(np.random.SeedSequence().entropy % (2 ** 63))
        self._reset()
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """The generator's state as a uint8 tensor (CPU generators)."""
        import json

        from .tensor import Tensor

        self._require_cpu("get_state")
        state = json.dumps(self._rng.bit_generator.state).encode()
        return Tensor._make(np.frombuffer(state, dtype=np.uint8).copy(), backend.CPU)

    def set_state(self, state) -> "Generator":
        import json

        self._require_cpu("set_state")
        raw = bytes(np.asarray(state.numpy() if hasattr(state, "numpy") else state,
                               dtype=np.uint8))
        try:
            self._rng.bit_generator.state = json.loads(raw.decode())
        except (ValueError, TypeError, KeyError, UnicodeDecodeError):
            raise RuntimeError("Generator.set_state(): the tensor is not a state returned by "
                               "get_state() of an ember CPU generator") from None
        return self

    def _require_cpu(self, method: str) -> None:
        if self.device.type != "cpu":
            raise RuntimeError(f"Generator.{method}(): ember can save and restore only CPU "
                               "generators (CuPy does not expose cuRAND's state); reseed a "
                               "CUDA generator with manual_seed() instead")

    @property
    def rng(self):
        return self._rng


default_generator = Generator("cpu")
_cuda_generators: dict[int, Generator] = {}


def generator_for(device, generator: Generator | None = None):
    """The NumPy/CuPy random generator to draw from for ``device``."""
    if generator is not None:
        return generator.rng
    if device.type == "cpu":
        return default_generator.rng
    found = _cuda_generators.get(device.index)
    if found is None:
        found = _cuda_generators[device.index] = Generator(device)
        found.manual_seed(default_generator.initial_seed())
    return found.rng


def manual_seed(seed: int) -> Generator:
    """Seed every default generator (CPU and each GPU); returns the CPU one."""
    seed = int(seed)
    default_generator.manual_seed(seed)
    for generator in _cuda_generators.values():
        generator.manual_seed(seed)
    return default_generator


def seed() -> int:
    value = default_generator.seed()
    for generator in _cuda_generators.values():
        generator.manual_seed(value)
    return value


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state) -> None:
    default_generator.set_state(state)
