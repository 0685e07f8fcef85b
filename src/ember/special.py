"""``ember.special``: the special functions of ``torch.special`` (erf, expit, gammaln, digamma,
polygamma, gammainc, zeta, i0e, Bessel and Airy functions, ...), registered with the ops.
See docs/special.md.

>>> import ember
>>> ember.special.gammaln(ember.tensor([0.5, 4.0]))
tensor([0.5724, 1.7918])
"""
from .ops import NAMESPACES as _NAMESPACES

globals().update(_NAMESPACES["special"])
