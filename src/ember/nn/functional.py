"""``ember.nn.functional``: the neural-network functions (activations, convolution,
pooling, normalization, dropout, losses, ...), registered by the op families in
``ember.ops``."""
from ..ops import NAMESPACES as _NAMESPACES

globals().update(_NAMESPACES["nn.functional"])
