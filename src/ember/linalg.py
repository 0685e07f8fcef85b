"""``ember.linalg``: matrix functions (inv, det, solve, cholesky, qr, svd, eigh, norms,
LU and LDL factorizations, lstsq, matrix_exp, cond, householder_product and the ``*_ex``
forms that report ``info``), registered in ``ember.ops.decompositions``,
``ember.ops.factorizations``, ``ember.ops.matrix_functions``, ``ember.ops.products``,
``ember.ops.matrices`` and ``ember.ops.norms``. See docs/linalg.md."""
from .ops import NAMESPACES as _NAMESPACES

globals().update(_NAMESPACES["linalg"])
