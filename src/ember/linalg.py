"""``ember.linalg``: matrix functions (inv, det, solve, cholesky, qr, svd, eigh, norms),
registered in ``ember.ops.linalg``."""
from .ops import NAMESPACES as _NAMESPACES

globals().update(_NAMESPACES["linalg"])
