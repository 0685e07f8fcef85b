"""``ember.functional``: the functions PyTorch's ``torch.functional`` module defines
(``einsum``, ``meshgrid``, ``broadcast_tensors``, ``split``, ``unique``, ``norm``,
``cdist``, ...), the same objects as their ``ember.<name>``.

>>> import ember
>>> ember.functional.broadcast_shapes((2, 1), (3,))
ember.Size([2, 3])
"""
from __future__ import annotations

_NAMES = ("atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
          "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "lu",
          "meshgrid", "norm", "pca_lowrank", "split", "svd_lowrank", "tensordot", "unique",
          "unique_consecutive", "unravel_index")

__all__ = list(_NAMES)


def __getattr__(name: str):
    if name in _NAMES:
        import ember

        try:
            return getattr(ember, name)
        except AttributeError:
            pass
    raise AttributeError(f"module 'ember.functional' has no attribute '{name}'")


def __dir__():
    return sorted(__all__)
