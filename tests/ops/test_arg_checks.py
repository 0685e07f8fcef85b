"""Argument checks of the shape ops and einsum against PyTorch: floats and bools where ints
are required raise TypeError (never truncated), NumPy ints and one-element integer tensors
pass, dims 0 and -1 address a 0-d tensor, and einsum's equation errors are RuntimeErrors.
Each case is one call on library ``T``, compared by outcome: the exception type, or the
result's shapes, dtype and values."""
from __future__ import annotations

import re

import numpy as np
import pytest

import ember

from ..conftest import requires_torch

FLOATS = [
    "x.view(2.5, -1)", "x.view(2.0, -1)", "x.view((2, 3.0))", "x.view(-1.0)",
    "x.view(size=(2.0, 3))", "x.reshape(2.0, 3)", "x.reshape(shape=(2.0, 3))",
    "x.permute(1.0, 0.0)", "x.permute(dims=(1.0, 0))", "x.expand(2, 3.5)",
    "x.tile((2.5,))", "x.tile(2.0)", "x.repeat(2.5)", "x.repeat(2.5, 1)",
    "x.unfold(0, 2.0, 1)", "x.unfold(0, 2, 1.0)", "x.roll(1.5)", "x.roll((1.0,), (0,))",
    "x.roll(1, 0.0)", "T.split(T.ones(3), [1, 2.5])", "T.split(T.ones(3), [1, 2.0])",
    "x.split(2.5)", "x.split_with_sizes([1, 1.0])", "x.chunk(2.0)", "x.movedim(0, 0.5)",
    "x.movedim((0, 1.0), (1, 0))", "x.repeat_interleave(2.5)", "x.repeat_interleave(2.0)",
    "x.repeat_interleave(2, output_size=12.0)", "x.squeeze(0.0)", "x.squeeze((0.0,))",
    "x.unsqueeze(1.0)", "x.transpose(0.0, 1)", "x.flatten(0.0)", "x.flip(0.0)",
    "x.unflatten(1, (3, 1.0))", "x.tensor_split([1.0])", "x.tensor_split(2.0)",
    "x.rot90(1.0)", "x.as_strided((2, 2.0), (1, 1))", "x.as_strided((2, 2), (1, 1), 1.0)",
    "x.broadcast_to((2, 3.0))", "x.sum(0.0)", "x.sum((0.0,))", "x.resize_(2.0, 3)",
    "T.einsum(T.ones(2, 2), [0, 1.0])",
]

# PyTorch refuses a bool as an int, and as the first element of an int list; bools after
# the first pass as ints (its overload matching looks at the first element only).
BOOLS = [
    "x.view(True, -1)", "x.view(1, True, 6)", "x.view((6, True))", "x.reshape((True, 6))",
    "x.expand(True, 2, 3)", "x.expand((2, 3, True))", "x.tile((True,))", "x.tile((1, True))",
    "x.repeat(True, 1)", "x.unfold(0, True, 1)", "x.roll(True)", "x.permute((1, True))",
    "T.split(T.ones(3), [1, True, True])", "x.split(True)", "x.chunk(True)",
    "x.repeat_interleave(True)", "x.rot90(True)", "x.squeeze(True)", "x.transpose(True, 0)",
    "x.sum((0, True))", "x.tensor_split((1, True))", "x.movedim((0, 1), (1, True))",
]

INTS = [
    "x.view(np.int64(2), -1)", "x.view(T.tensor(2), -1)", "x.view(T.tensor([2]), -1)",
    "x.reshape(np.int64(2), 3)", "x.reshape(np.array(6))", "x.permute(T.tensor(1), 0)",
    "x.expand(np.int64(2), 3)", "x.tile((T.tensor(2),))", "x.repeat(T.tensor(2), 1)",
    "x.unfold(0, T.tensor(2), 1)", "x.unfold(0, 2, np.int64(1))", "x.roll(T.tensor(1), 0)",
    "x.roll(T.tensor([1]), 0)", "x.roll(np.int64(1))", "x.split(T.tensor(1))",
    "x.chunk(T.tensor(2))", "x.chunk(np.int64(2))", "x.movedim(T.tensor(0), 1)",
    "x.squeeze(T.tensor(0))", "x.unsqueeze(T.tensor(1))", "x.transpose(T.tensor(0), 1)",
    "x.sum(T.tensor(0))", "x.sum(T.tensor([0]))", "x.flip(T.tensor(0))",
    "x.repeat_interleave(np.int64(2))", "x.tensor_split((np.int64(2),))",
    "x.rot90(np.int64(1))", "T.split(T.ones(3), [1, np.int64(2)])",
    # what still raises: whole tensors and arrays as int lists, float tensors as ints
    "x.reshape(T.tensor([2, 3]))", "x.repeat(T.tensor([2, 1]))", "x.view(T.tensor(2.0), -1)",
    "x.unfold(0, T.tensor(2.0), 1)", "x.chunk(T.tensor(2.0))", "x.roll(T.tensor(1.0), 0)",
    "x.sum(T.tensor(0.0))", "x.reshape(np.array([3, 2]))", "x.flip(np.array([0]))",
]

ZERO_D = [
    "s.squeeze(0)", "s.squeeze(-1)", "s.squeeze((0,))", "s.squeeze((0, -1))", "s.squeeze(1)",
    "s.unsqueeze(0)", "s.unsqueeze(-1)", "s.transpose(0, 0)", "s.transpose(0, -1)",
    "s.swapaxes(0, -1)", "s.transpose(0, 1)", "s.flip(0)", "s.flip(-1)", "s.flip((0, -1))",
    "s.roll(1, 0)", "s.roll(1, -1)", "s.roll(1)", "s.sum(0)", "s.flatten(0, -1)",
    "s.flatten(1)", "s.movedim(0, -1)", "s.permute(())",
]

ERRORS = [
    "T.squeeze(T.ones(1, 3), (0, 0))", "T.squeeze(T.ones(1, 3), (0, -2))",
    "x.split([7, -1])", "x.split([-1, 3])", "x.split([3, -1], 1)", "x.split([1, 2])",
    "x.flip(0, 0)", "x.roll([])", "x.roll((), ())", "x.roll((1, 2))",
]

EINSUM = [
    "T.einsum('ij,jk->ik', T.ones(2, 2))", "T.einsum('ij', T.ones(2, 2), T.ones(2))",
    "T.einsum('i$->i', T.ones(2, 2))", "T.einsum('i1', T.ones(2, 2))",
    "T.einsum('ij, j$->i', T.ones(2, 2), T.ones(2, 2))", "T.einsum('ij->i$', T.ones(2, 2))",
    "T.einsum('ij->i->j', T.ones(2, 2))", "T.einsum('ij,jk->i,k', T.ones(2, 2), T.ones(2, 2))",
    "T.einsum('ij->ii', T.ones(2, 2))", "T.einsum('ij->k', T.ones(2, 2))",
    "T.einsum('ij,jk->ik', T.ones(2, 3), T.ones(2, 2))", "T.einsum('ii->i', T.ones(2, 3))",
    "T.einsum('ijj', T.ones(2, 3, 4))", "T.einsum('i.j->i', T.ones(2, 2))",
    "T.einsum('ij->.i', T.ones(2, 2))", "T.einsum('ij->....i', T.ones(2, 2))",
    "T.einsum('i...j...->i', T.ones(2, 2))",
    "T.einsum('...ij,...ij->ij', T.ones(3, 2, 2), T.ones(2, 2, 2))",
    "T.einsum('...ij,...ij->ij', T.ones(2, 3, 2, 2), T.ones(4, 2, 2))",
    "T.einsum()", "T.einsum('ij')", "T.einsum(T.ones(2, 2), [0, 60])",
    "T.einsum('i j->ji', T.ones(2, 3))", "T.einsum('ij,->i', T.ones(2, 2), T.ones(2, 2))",
]

# where ember's message should hold PyTorch's (up to spaces; ember may name the op first
# or add detail after it)
SAME_MESSAGE = set(EINSUM) | set(ERRORS[:5])


def _outcome(T, case: str):
    x, s = T.ones(2, 3), T.ones(())  # noqa: F841 (read by eval)
    try:
        result = eval(case)
    except Exception as error:  # the type is the outcome
        return type(error), str(error).splitlines()[0]
    results = result if isinstance(result, (tuple, list)) else (result,)
    return "ok", [(tuple(r.shape), str(r.dtype).split(".")[-1], np.asarray(r.tolist()).tolist())
                  for r in results]


@requires_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", FLOATS + BOOLS + INTS + ZERO_D + ERRORS + EINSUM)
def test_outcome_matches_torch(case):
    import torch

    ours, theirs = _outcome(ember, case), _outcome(torch, case)
    if theirs[0] == "ok":
        assert ours == theirs, f"{case}: ember {ours}, torch {theirs}"
        return
    assert ours[0] is theirs[0], f"{case}: ember {ours}, torch {theirs}"
    if case in SAME_MESSAGE:
        assert theirs[1].replace(" ", "") in ours[1].replace(" ", ""), (ours, theirs)


@pytest.mark.parametrize("case", FLOATS)
def test_float_ints_raise_type_error_naming_the_argument(case):
    kind, message = _outcome(ember, case)
    assert kind is TypeError, (case, kind, message)
    assert re.search(r"must be (int|tuple of ints)|dim must be an int", message), message
    assert "float" in message, message


def test_messages_name_the_argument_and_position():
    x = ember.ones(2, 3)
    with pytest.raises(TypeError, match=r"view\(\): argument 'size' must be tuple of ints, "
                                        r"but found element of type float at pos 0"):
        x.view(2.5, -1)
    with pytest.raises(TypeError, match=r"permute\(\): argument 'dims' must be tuple of ints, "
                                        r"but found element of type float at pos 1"):
        x.permute(1, 0.0)
    with pytest.raises(TypeError, match=r"unfold\(\): argument 'size' must be int, not bool"):
        x.unfold(0, True, 1)
    with pytest.raises(TypeError, match=r"chunk\(\): argument 'chunks' must be int, not "
                                        r"Tensor\(float32\)"):
        x.chunk(ember.tensor(2.0))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        ember.squeeze(ember.ones(1, 3), (0, -2))
    with pytest.raises(RuntimeError, match="only non-negative entries"):
        ember.ones(6).split([7, -1])


def test_ember_is_stricter_or_looser_than_torch_on_purpose():
    x = ember.ones(2, 3)
    # torch.Tensor.split truncates a float tensor through int(); ember refuses it
    with pytest.raises(TypeError, match="split_size"):
        x.split(ember.tensor(1.5))
    # a NumPy int split size: torch's Python-side split rejects it, ember takes it
    assert [tuple(p.shape) for p in x.split(np.int64(1))] == [(1, 3), (1, 3)]
    # a bool tensor is no dim (torch reads tensor(True) as dim 1)
    with pytest.raises(TypeError, match="dim must be an int"):
        x.sum(ember.tensor(True))


def test_zero_d_views_pass_gradients():
    s = ember.tensor(3.0, requires_grad=True)
    for f in (lambda t: t.transpose(0, -1), lambda t: t.squeeze(0), lambda t: t.flip(-1),
              lambda t: t.squeeze((0,))):
        s.grad = None
        (f(s) * 2).backward()
        assert s.grad.item() == 2.0
    assert s.transpose(0, 0)._base is s  # still a view
