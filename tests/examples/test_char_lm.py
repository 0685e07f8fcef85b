"""examples/char_lm.py: the corpus is deterministic, the loss falls within a few steps, and
sampling is reproducible for a seed."""
from __future__ import annotations

import math

import char_lm


def test_corpus_is_deterministic_and_encodable():
    a, b = char_lm.stdlib_text(20_000), char_lm.stdlib_text(20_000)
    assert a == b and len(a) == 20_000
    vocab = char_lm.Vocabulary()
    codes = vocab.encode(a)
    assert codes.min() >= 0 and codes.max() < len(vocab)
    assert vocab.decode(vocab.encode("def f(x):\n    return x")) == "def f(x):\n    return x"
    assert vocab.decode(vocab.encode("\u00e9")) == "?"


def test_loss_falls_and_sampling_is_seeded():
    kwargs = dict(device="cpu", steps=12, seq_len=16, hidden=32, batch_size=8,
                  corpus_kb=30, sample_length=20, log_every=6, lr=1e-2)
    result = char_lm.run(**kwargs)
    assert result["held_out_before"] > math.log(len(char_lm.Vocabulary())) - 0.1
    assert result["held_out_after"] < result["held_out_before"] - 0.5
    assert sum(result["losses"][-3:]) < sum(result["losses"][:3])
    assert result["sample"].startswith("def ") and len(result["sample"]) == 24
    again = char_lm.run(**kwargs)
    assert again["sample"] == result["sample"]


def test_bad_options_are_refused():
    import pytest

    with pytest.raises(SystemExit, match="--steps must be at least 1"):
        char_lm.run(steps=0)
    with pytest.raises(SystemExit, match="--temperature must be positive"):
        char_lm.run(steps=1, temperature=0.0)
    with pytest.raises(SystemExit, match="holds out only"):
        char_lm.run(steps=1, corpus_kb=1, seq_len=64)
