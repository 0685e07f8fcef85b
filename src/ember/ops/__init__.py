"""Every op, one family per module; importing this package fills the registry."""
from ..tensor import Tensor as _Tensor
from . import (
    activations,
    arithmetic,
    aten_forms,
    comparison,
    composites,
    conv,
    decompositions,
    factories,
    fractional_pooling,
    grid_sampling,
    indexing,
    linear_cross_entropy,
    losses,
    matrices,
    multihead,
    neural,
    normalization,
    norms,
    pooling,
    products,
    reductions,
    registry,
    sampling,
    scatter,
    shape,
    sorting,
    unary,
)
from .registry import NAMESPACES, OPS

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
