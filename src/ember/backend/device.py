"""ember.device: where a tensor's memory lives ('cpu', 'cuda', 'cuda:1')."""
from __future__ import annotations

__all__ = ["device"]

_TYPES = ("cpu", "cuda")


class device:
    """A device, as in PyTorch: ``device('cuda:1')``, ``device('cuda', 0)``, ``device('cpu')``.

    ``device('cuda')`` has no index and means the current CUDA device; a tensor's
    ``.device`` always carries its index (``cuda:0``).
    """

    __slots__ = ("type", "index")

    def __init__(self, type, index: int | None = None):
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(device, index): give the index in one place only")
            self.type: str = type.type
            self.index: int | None = type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string like 'cpu' or 'cuda:0', got {type!r}")
        text = type.strip()
        if ":" in text:
            if index is not None:
                raise ValueError(f"device({text!r}, {index}): the string already has an index")
            text, _, number = text.partition(":")
            if not number.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(number)
        if text not in _TYPES:
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {type}"
            )
        if index is not None:
            if not isinstance(index, int) or index < 0:
                raise RuntimeError(f"Device index must not be negative, got {index}")
            if text == "cpu" and index != 0:
                raise RuntimeError(f"CPU device index must be 0, got {index}")
        self.type = text
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, ValueError):
                return False
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (str(self),))


CPU = device("cpu")
