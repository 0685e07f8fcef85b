"""Padding variable-length sequences into one batch tensor."""
from __future__ import annotations

from ...tensor import Tensor

__all__ = ["pad_sequence"]


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of shape (L_i, *) into (max L, B, *) (``batch_first``: (B, max L, *)),
    filling the missing steps with ``padding_value`` after (``padding_side='right'``) or
    before ('left') each sequence. Differentiable w.r.t. the sequences."""
    import ember
    from ... import creation

    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0)) if hasattr(sequences, "unbind") else \
            [sequences[i] for i in range(sequences.shape[0])]
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
