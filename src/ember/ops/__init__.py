"""Every op, one family per module; importing this package fills the registry."""
from . import registry  # noqa: F401  (first: the families register into it)
from . import elementwise, activations, reduce, linalg, shape, indexing, scatter  # noqa: F401
from . import conv, pooling, normalization, neural, losses  # noqa: F401
from .registry import NAMESPACES, OPS
from ..tensor import Tensor as _Tensor

# The most used operators go straight to their op functions (tensor.py's generic forms
# look the function up by name): one Python call less on every ``a * b``.
_Tensor.__add__ = elementwise.add
_Tensor.__sub__ = elementwise.sub
_Tensor.__mul__ = elementwise.mul
_Tensor.__truediv__ = elementwise.div
_Tensor.__neg__ = elementwise.neg
_Tensor.__matmul__ = linalg.matmul
_Tensor.__getitem__ = indexing._getitem

__all__ = ["OPS", "NAMESPACES"]
