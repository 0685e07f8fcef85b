"""``ember.linalg``: matrix functions (inv, det, solve, cholesky, qr, svd, eigh, norms),
registered in ``ember.ops.decompositions``, ``ember.ops.products``,
``ember.ops.matrices`` and ``ember.ops.norms``."""
from .ops import NAMESPACES as _NAMESPACES

globals().update(_NAMESPACES["linalg"])
