"""Gather/scatter-style indexing: gather, scatter, scatter_add, scatter_reduce, index_select, index_add, index_copy, index_fill, masked_select, masked_scatter, take, take_along_dim, nonzero, unique, bincount, histc, searchsorted, bucketize."""
from __future__ import annotations
