"""grad_fn names that tutorials print: basic indexing is named after its last step that
changes something, as PyTorch names it, and log1p's node is Log1PBackward0."""
from __future__ import annotations

import pytest

import ember
from tests.conftest import requires_torch

E = Ellipsis
INDICES = [(slice(None),), (None,), (E, None), (0, None), (None, 0), (slice(1, None), None),
           (None, slice(1, None)), (0, slice(None)), (slice(None), 0), (slice(None), None),
           (0,), (E,), (slice(None), slice(None)), (None, slice(None), 1),
           (1, slice(None), None), (slice(0, 3),), (slice(None, 100),), (E, 0), (0, E),
           (E, slice(1, 2)), (None, E, None), (slice(None, None, 2),), (E, E), (E, None, E)]


def _name(lib, index):
    node = lib.ones(3, 4, requires_grad=True)[index].grad_fn
    return node.name() if node is not None else None


@requires_torch
@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_basic_index_node_names_match_torch(index):
    import torch

    assert _name(ember, index) == _name(torch, index)


def test_narrow_and_select_keep_their_names():
    x = ember.ones(3, 4, requires_grad=True)
    assert x.narrow(0, 0, 3).grad_fn.name() == "SliceBackward0"  # (even when it keeps all)
    assert x.select(1, 2).grad_fn.name() == "SelectBackward0"


@requires_torch
@pytest.mark.parametrize("op", ["log1p", "log2", "log10"])
def test_log_family_names_match_torch(op):
    import torch

    def name(lib):
        return getattr(lib.ones(2, requires_grad=True), op)().grad_fn.name()

    assert name(ember) == name(torch)
