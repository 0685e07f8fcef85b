"""``ember.special``: special functions (erf, erfc, erfinv, expit, logit, ...), registered with
the elementwise ops."""
from .ops import NAMESPACES as _NAMESPACES

globals().update(_NAMESPACES["special"])
