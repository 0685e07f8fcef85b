"""Every op, one family per module; importing this package fills the registry."""
from . import registry  # noqa: F401  (first: the families register into it)
from . import comparison, unary, arithmetic, activations  # noqa: F401
from . import reductions, sorting, products, matrices, decompositions, norms  # noqa: F401
from . import shape, indexing, scatter  # noqa: F401
from . import conv, pooling, normalization, neural, losses  # noqa: F401
from . import factories, sampling  # noqa: F401
from .registry import NAMESPACES, OPS
from ..tensor import Tensor as _Tensor

# The most used operators go straight to their op functions (tensor.py's generic forms
# look the function up by name): one Python call less on every ``a * b``.
_Tensor.__add__ = arithmetic.add
_Tensor.__sub__ = arithmetic.sub
_Tensor.__mul__ = arithmetic.mul
_Tensor.__truediv__ = arithmetic.div
_Tensor.__neg__ = unary.neg
_Tensor.__matmul__ = products.matmul
_Tensor.__getitem__ = indexing._getitem

__all__ = ["OPS", "NAMESPACES"]
