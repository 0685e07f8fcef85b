"""Variable-length sequences: padding them into one batch tensor, and PackedSequence (the
time-major concatenation of only the valid steps), which the recurrent layers accept."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "unpack_sequence", "pad_sequence", "unpad_sequence", "invert_permutation"]


def _ember():
    import ember

    return ember


class PackedSequence(namedtuple("PackedSequence",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A batch of sequences of different lengths, packed: ``data`` holds, for each time
    step t, the step-t rows of the sequences longer than t (longest first);
    ``batch_sizes[t]`` counts them. ``sorted_indices`` maps packed order to the original
    batch order (None when the batch was already sorted by decreasing length).
    Build one with ``pack_padded_sequence`` or ``pack_sequence``."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> "PackedSequence":
        """Move/cast ``data`` (and the index tensors to data's device)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        device = data.device
        sorted_indices = None if self.sorted_indices is None else self.sorted_indices.to(device)
        unsorted = None if self.unsorted_indices is None else self.unsorted_indices.to(device)
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted)

    def cuda(self, *args, **kwargs) -> "PackedSequence":
        return self.to("cuda")

    def cpu(self) -> "PackedSequence":
        return self.to("cpu")

    def double(self) -> "PackedSequence":
        return self.to(_ember().float64)

    def float(self) -> "PackedSequence":
        return self.to(_ember().float32)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def invert_permutation(permutation):
    """The permutation p^-1 with p^-1[p[i]] = i (None stays None)."""
    if permutation is None:
        return None
    inverse = np.empty(permutation.numel(), dtype=np.int64)
    inverse[permutation.cpu().numpy()] = np.arange(permutation.numel())
    return _ember().tensor(inverse, device=permutation.device)


def _lengths_array(lengths) -> np.ndarray:
    if isinstance(lengths, Tensor):
        return np.asarray(lengths.cpu().numpy(), dtype=np.int64).reshape(-1)
    return np.asarray(list(lengths), dtype=np.int64).reshape(-1)


def _pack_time_major(input, batch_sizes):
    """Concatenate input[t, :batch_sizes[t]] over t (input already in packed order)."""
    return _ember().cat([input[t, :int(b)] for t, b in enumerate(batch_sizes)], 0)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) (``batch_first``: (B, T, *)) whose sequence b has
    ``lengths[b]`` valid steps. With ``enforce_sorted`` the lengths must already be in
    decreasing order; otherwise the batch is sorted and the order is remembered."""
    ember = _ember()
    lengths = _lengths_array(lengths)
    batch_dim = 0 if batch_first else 1
    if lengths.size != input.shape[batch_dim]:
        raise ValueError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                         f"{lengths.size} (batch_size={input.shape[batch_dim]})")
    if lengths.size and lengths.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if lengths.size and lengths.max() > input.shape[1 - batch_dim]:
        raise RuntimeError(f"pack_padded_sequence: a length of {lengths.max()} exceeds the "
                           f"padded length {input.shape[1 - batch_dim]}")
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        sorted_indices = None
    else:
        order = np.argsort(-lengths, kind="stable")
        sorted_indices = ember.tensor(order, device=input.device)
        lengths = lengths[order]
        input = input.index_select(batch_dim, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    steps = np.arange(int(lengths.max()) if lengths.size else 0)
    batch_sizes = (lengths[None, :] > steps[:, None]).sum(1).astype(np.int64)
    data = _pack_time_major(input, batch_sizes)
    return PackedSequence(data, ember.tensor(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None):
    """Undo ``pack_padded_sequence``: returns (padded (T, B, *) or (B, T, *), lengths), in
    the original batch order; padded steps hold ``padding_value``."""
    ember = _ember()
    from ... import creation

    batch_sizes = sequence.batch_sizes.cpu().numpy().astype(np.int64)
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_len}")
    else:
        total_length = max_len
    data = sequence.data
    batch = int(batch_sizes[0])
    trailing = tuple(data.shape[1:])
    rows, offset = [], 0
    for b in batch_sizes:
        b = int(b)
        step = data[offset:offset + b]
        offset += b
        if b < batch:
            fill = creation.full((batch - b,) + trailing, padding_value, dtype=data.dtype,
                                 device=data.device)
            step = ember.cat([step, fill], 0)
        rows.append(step)
    for _ in range(total_length - max_len):
        rows.append(creation.full((batch,) + trailing, padding_value, dtype=data.dtype,
                                  device=data.device))
    padded = ember.stack(rows, 0)
    lengths = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(1).astype(np.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu().numpy()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, ember.tensor(lengths)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of shape (L_i, *) into (max L, B, *) (``batch_first``: (B, max L, *)),
    filling the missing steps with ``padding_value`` after (``padding_side='right'``) or
    before ('left') each sequence. Differentiable w.r.t. the sequences."""
    ember = _ember()
    from ... import creation

    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = [sequences[i] for i in range(sequences.shape[0])]
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for s in sequences:
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: every sequence must have the trailing shape "
                               f"{trailing}, got {tuple(s.shape[1:])}")
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = max_len - s.shape[0]
        if missing == 0:
            padded.append(s)
            continue
        fill = creation.full((missing,) + trailing, padding_value, dtype=s.dtype,
                             device=s.device)
        padded.append(ember.cat([s, fill] if padding_side == "right" else [fill, s], 0))
    return ember.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The list of sequences ``padded[:lengths[b], b]`` (the inverse of pad_sequence)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[b, :int(n)] for b, n in enumerate(_lengths_array(lengths))]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) tensors (``enforce_sorted``: given longest first)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences in a PackedSequence (the inverse of pack_sequence)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
