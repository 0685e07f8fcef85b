"""Embedding and EmbeddingBag: lookup tables of learned vectors."""
from __future__ import annotations

from ... import creation
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _padding_index(padding_idx, num_embeddings: int):
    if padding_idx is None:
        return None
    if padding_idx > 0:
        if padding_idx >= num_embeddings:
            raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        if padding_idx < -num_embeddings:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = num_embeddings + padding_idx
    return padding_idx


class Embedding(Module):
    """out[...] = weight[input[...]]: a (num_embeddings, embedding_dim) table, N(0, 1)
    initialized; the row ``padding_idx`` starts at zero and gets no gradient."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None,
                 max_norm=None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight=None, _freeze: bool = False, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _padding_index(padding_idx, num_embeddings)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(creation.empty(num_embeddings, embedding_dim,
                                                   device=device, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            init._fill(self.weight, _row_zeroed(self.weight._data, self.padding_idx))

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx=None,
                        max_norm=None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, sparse: bool = False):
        """An Embedding whose table is ``embeddings`` (2-D); ``freeze`` stops its
        gradient."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                   _freeze=freeze, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq,
                   sparse=sparse)


def _row_zeroed(array, row: int):
    array = array.copy()
    array[row] = 0
    return array


class EmbeddingBag(Module):
    """Sums, means or maxes of bags of embeddings, without building the intermediate
    (bags given by a 2-D input, or by a 1-D input plus ``offsets``)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx=None, device=None, dtype=None):
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"mode has to be one of sum, mean or max, got {mode!r}")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _padding_index(padding_idx, num_embeddings)
        if _weight is None:
            self.weight = Parameter(creation.empty(num_embeddings, embedding_dim,
                                                   device=device, dtype=dtype))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            init._fill(self.weight, _row_zeroed(self.weight._data, self.padding_idx))

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, max_norm=None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False,
                        include_last_offset: bool = False, padding_idx=None):
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                  max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag
