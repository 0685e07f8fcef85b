"""Random number generation: one default Generator per device kind, seeded together by
``ember.manual_seed``. CPU generators reproduce PyTorch's CPU stream bit for bit (see
``ember._mt_stream``): after the same seed, ember and PyTorch draw the same numbers, and
their states are interchangeable. CUDA generators draw from CuPy."""
from __future__ import annotations

import contextlib
import operator
import secrets
import warnings

import numpy as np

from . import backend
from ._mt_stream import DEFAULT_SEED, TorchCompatibleGenerator

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "default_generator",
           "get_rng_state", "set_rng_state", "fork_rng"]


def _check_seed(seed) -> int:
    try:
        seed = operator.index(seed)
    except TypeError:
        raise TypeError(f"manual_seed(): the seed must be an integer, not "
                        f"{type(seed).__name__}") from None
    if not -(2 ** 63) <= seed < 2 ** 64:
        raise RuntimeError(f"manual_seed(): the seed must be within [-2^63, 2^64), got {seed}")
    return seed


class Generator:
    """A seeded source of random numbers, usable as ``generator=`` in rand/randn/randint/
    randperm, the in-place fills, nn.init, samplers and random_split. A CPU generator
    starts from PyTorch's default seed (67280421310721) and draws PyTorch's numbers.

    >>> import ember
    >>> g = ember.Generator().manual_seed(0)
    >>> ember.rand(3, generator=g)  # torch.rand(3, generator=...) gives the same
    tensor([0.4963, 0.7682, 0.0885])
    >>> state = g.get_state()  # 5,056 bytes, PyTorch's layout
    >>> a = ember.randn(2, generator=g)
    >>> bool((ember.randn(2, generator=g.set_state(state)) == a).all())
    True
    """

    def __init__(self, device="cpu"):
        self.device = backend.device(device)
        if self.device.type == "cpu":
            self._seed = DEFAULT_SEED
            self._rng = TorchCompatibleGenerator(DEFAULT_SEED)
        else:
            self._seed = DEFAULT_SEED
            self._rng = backend.cuda.RandomSource(self._seed, self.device.index or 0)

    def manual_seed(self, seed: int) -> Generator:
        """Seed the generator (negative seeds wrap to 64 bits, as in PyTorch); returns it."""
        seed = _check_seed(seed)
        if self.device.type == "cpu":
            self._rng.manual_seed(seed)
            self._seed = self._rng.initial_seed()
        else:
            self._seed = seed % (2 ** 64)
            self._rng = backend.cuda.RandomSource(self._seed, self.device.index or 0)
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the seed."""
        value = secrets.randbits(64)
        self.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """The generator's state as a uint8 tensor of PyTorch's 5,056-byte layout (CPU
        generators): ``torch.Generator.set_state`` accepts it, and ``set_state`` accepts
        PyTorch's."""
        from .tensor import Tensor

        self._require_cpu("get_state")
        return Tensor._make(self._rng.get_state(), backend.CPU)

    def set_state(self, new_state) -> Generator:
        """Restore a state from ``get_state()`` (or from PyTorch); returns the generator."""
        from .tensor import Tensor

        self._require_cpu("set_state")
        if not isinstance(new_state, Tensor) or new_state.dtype.name != "uint8":
            raise TypeError("RNG state must be an ember.ByteTensor (a uint8 tensor), got "
                            + (f"dtype {new_state.dtype.name}" if isinstance(new_state, Tensor)
                               else type(new_state).__name__))
        self._rng.set_state(np.ascontiguousarray(new_state._host()).reshape(-1))
        self._seed = self._rng.initial_seed()
        return self

    def _require_cpu(self, method: str) -> None:
        if self.device.type != "cpu":
            raise RuntimeError(f"Generator.{method}(): ember can save and restore only CPU "
                               "generators (CuPy does not expose cuRAND's state); reseed a "
                               "CUDA generator with manual_seed() instead")

    @property
    def rng(self):
        """The stream behind the generator: a ``TorchCompatibleGenerator`` on CPU, a CuPy
        random source on CUDA."""
        return self._rng


default_generator = Generator("cpu")
_cuda_generators: dict[int, Generator] = {}


def generator_for(device, generator: Generator | None = None):
    """The stream to draw from for ``device``: ``generator``'s, or the device's default
    one (a ``TorchCompatibleGenerator`` on CPU, a CuPy random source on CUDA)."""
    if generator is not None:
        if not isinstance(generator, Generator):
            raise TypeError(f"generator must be an ember.Generator, not "
                            f"{type(generator).__name__}")
        if generator.device.type != device.type:
            raise RuntimeError(f"Expected a '{device.type}' device type for generator but "
                               f"found '{generator.device.type}'")
        return generator.rng
    if device.type == "cpu":
        return default_generator.rng
    found = _cuda_generators.get(device.index)
    if found is None:
        found = _cuda_generators[device.index] = Generator(device)
        found.manual_seed(default_generator.initial_seed())
    return found.rng


def manual_seed(seed: int) -> Generator:
    """Seed every default generator (CPU and each GPU); returns the CPU one.

    >>> import ember
    >>> _ = ember.manual_seed(0)
    >>> ember.randint(0, 10, (5,))  # torch.manual_seed(0); torch.randint(0, 10, (5,))
    tensor([4, 9, 3, 0, 3])
    """
    seed = _check_seed(int(seed))
    default_generator.manual_seed(seed)
    for generator in _cuda_generators.values():
        generator.manual_seed(seed)
    return default_generator


def seed() -> int:
    """Seed every default generator from the operating system's entropy; returns it."""
    value = default_generator.seed()
    for generator in _cuda_generators.values():
        generator.manual_seed(value)
    return value


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    """The default CPU generator's state (a uint8 tensor, PyTorch's layout)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the default CPU generator's state (from ``get_rng_state``, or PyTorch's)."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type=None):
    """Restore the CPU generator's state when the block ends, so draws inside it do not
    change the numbers drawn after it.

    CUDA generators can only be reseeded (CuPy does not expose cuRAND's state), so they
    are not forked: ``devices=None`` forks the CPU generator only (with a warning once a
    CUDA generator is in use), and a list naming GPUs raises.

    >>> import ember
    >>> _ = ember.manual_seed(0)
    >>> with ember.random.fork_rng():
    ...     _ = ember.rand(5)
    >>> ember.rand(1)  # as if the block had not drawn
    tensor([0.4963])
    """
    if not enabled:
        yield
        return
    if devices is None:
        if _cuda_generators:
            warnings.warn(f"{_caller}: only the CPU generator is forked; CUDA generators "
                          "keep drawing (their cuRAND state cannot be saved)", stacklevel=3)
    elif list(devices):
        raise RuntimeError(f"{_caller}: ember cannot fork CUDA generators (CuPy does not "
                           f"expose cuRAND's state); pass {_devices_kw}=[] to fork the CPU "
                           "generator only")
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)
