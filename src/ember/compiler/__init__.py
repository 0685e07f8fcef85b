"""``ember.compile``: record the array work of one call, then replay it without Tensors
(see ``trace`` for the record and its guards, ``lower`` for the straight-line replay)."""
from .trace import CompiledFunction, CompiledModule, compile

__all__ = ["CompiledFunction", "CompiledModule", "compile"]
