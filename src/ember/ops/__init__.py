"""Every op, one family per module; importing this package fills the registry."""
from . import registry  # noqa: F401  (first: the families register into it)
from . import elementwise, activations, reduce, linalg, shape, indexing, scatter  # noqa: F401
from . import conv, pooling, normalization, neural, losses  # noqa: F401
from .registry import NAMESPACES, OPS

__all__ = ["OPS", "NAMESPACES"]
