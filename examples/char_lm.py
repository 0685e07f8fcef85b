"""Train a character-level LSTM language model with ember on text every Python installation
has offline: the standard library's own source files. It predicts the next character,
prints the training loss as it falls, and at the end samples new "Python" from the model.

    python examples/char_lm.py [--device cuda] [--steps 500] [--seq-len 64] [--hidden 256]
                               [--temperature 0.8] [--plot char_lm.png]

The corpus is ``--corpus-kb`` KB (default 300) of the .py files directly under
``os.path.dirname(os.__file__)``: the first 16 KB of each, in sorted file-name order, so the
same Python version always gives the same text. Every 20th block of 1000 characters is held
out to measure the loss on text the model did not train on. Characters outside printable
ASCII become '?'.
"""
from __future__ import annotations

import math
import os
import string
import time

import numpy as np
from _common import History, parser, progress

import ember
from ember import nn

ALPHABET = sorted(set(string.printable) - set("\x0b\x0c\r")) + ["?"]


def stdlib_text(max_bytes: int = 300_000, per_file: int = 16_000) -> str:
    """Deterministic corpus: the first ``per_file`` characters of each of the stdlib's
    top-level .py files, in sorted file-name order, until ``max_bytes`` characters (the cap
    per file keeps one big module from being most of the text)."""
    root = os.path.dirname(os.__file__)
    pieces, size = [], 0
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if not name.endswith(".py") or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(per_file)
        pieces.append(text)
        size += len(text)
        if size >= max_bytes:
            break
    if not pieces:
        raise SystemExit(f"no .py files found under {root}")
    return "".join(pieces)[:max_bytes]


def split(data: np.ndarray, block: int = 1000, every: int = 20):
    """(train, held_out): every ``every``-th block of ``block`` characters is held out, so
    both halves sample the same mix of files."""
    blocks = np.arange(len(data)) // block
    held = blocks % every == every - 1
    return data[~held], data[held]


class Vocabulary:
    """Maps characters to indices and back; unknown characters map to '?'."""

    def __init__(self, alphabet=ALPHABET):
        self.chars = list(alphabet)
        self.index = {c: i for i, c in enumerate(self.chars)}
        self.unknown = self.index["?"]

    def __len__(self):
        return len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        return np.array([self.index.get(c, self.unknown) for c in text], dtype=np.int64)

    def decode(self, indices) -> str:
        return "".join(self.chars[int(i)] for i in indices)


class CharLSTM(nn.Module):
    """Embedding -> LSTM -> Linear over the vocabulary (next-character logits)."""

    def __init__(self, vocab_size: int, hidden: int = 256, embedding: int = 64,
                 layers: int = 1):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embedding)
        self.lstm = nn.LSTM(embedding, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab_size)

    def forward(self, x, state=None):
        output, state = self.lstm(self.embed(x), state)
        return self.head(output), state


def batches(data: np.ndarray, seq_len: int, batch_size: int, rng: np.random.Generator):
    """Endless random windows: inputs (B, L) and targets shifted by one character."""
    while True:
        starts = rng.integers(0, len(data) - seq_len - 1, size=batch_size)
        window = data[starts[:, None] + np.arange(seq_len + 1)]
        yield window[:, :-1], window[:, 1:]


@ember.no_grad()
def sample(model, vocab: Vocabulary, prompt: str, length: int, temperature: float,
           device: str, seed: int) -> str:
    """Continue ``prompt`` by ``length`` characters, drawing each next character from
    softmax(logits / temperature) with a seeded NumPy generator (the same seed gives the same
    text)."""
    model.eval()
    rng = np.random.default_rng(seed)
    x = ember.tensor(vocab.encode(prompt)[None], device=device)
    logits, state = model(x)
    out = []
    for _ in range(length):
        scaled = logits[0, -1].double() / temperature
        probs = ember.softmax(scaled, dim=0).cpu().numpy()
        nxt = int(rng.choice(len(probs), p=probs / probs.sum()))
        out.append(nxt)
        logits, state = model(ember.tensor([[nxt]], device=device), state)
    model.train()
    return prompt + vocab.decode(out)


@ember.no_grad()
def evaluate_loss(model, data: np.ndarray, seq_len: int, device: str,
                  windows: int = 32) -> float:
    """Mean cross-entropy on ``windows`` fixed, evenly spaced windows of ``data``."""
    model.eval()
    starts = np.linspace(0, len(data) - seq_len - 2, windows).astype(np.int64)
    window = data[starts[:, None] + np.arange(seq_len + 1)]
    x = ember.tensor(window[:, :-1], device=device)
    y = ember.tensor(window[:, 1:], device=device)
    logits, _ = model(x)
    loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    model.train()
    return loss.item()


def run(device: str = "cpu", steps: int = 500, seq_len: int = 64, hidden: int = 256,
        batch_size: int = 32, lr: float = 3e-3, corpus_kb: int = 300, seed: int = 0,
        temperature: float = 0.8, sample_length: int = 300, plot: str | None = None,
        log_every: int = 25, prompt: str = "def ") -> dict:
    """Train for ``steps`` Adam steps; returns the first/last training losses, the held-out
    loss before/after and the sampled text."""
    for name, value in (("steps", steps), ("seq_len", seq_len), ("hidden", hidden),
                        ("batch_size", batch_size), ("corpus_kb", corpus_kb)):
        if value < 1:
            raise SystemExit(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    if temperature <= 0:
        raise SystemExit(f"--temperature must be positive, got {temperature}")
    ember.manual_seed(seed)
    vocab = Vocabulary()
    text = stdlib_text(corpus_kb * 1000)
    data = vocab.encode(text)
    train, held_out = split(data)
    if len(held_out) < seq_len + 2:
        raise SystemExit(f"--corpus-kb {corpus_kb} holds out only {len(held_out)} characters, "
                         f"fewer than --seq-len {seq_len} + 2: use more text or shorter "
                         f"sequences")
    print(f"corpus: {len(text)} characters of the standard library's source "
          f"({len(vocab)}-symbol vocabulary); device {device}", flush=True)
    model = CharLSTM(len(vocab), hidden).to(device)
    optimizer = ember.optim.Adam(model.parameters(), lr=lr)
    scheduler = ember.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps,
                                                           eta_min=lr / 10)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(seed)
    stream = batches(train, seq_len, batch_size, rng)
    history = History()
    start = time.perf_counter()
    held_before = evaluate_loss(model, held_out, seq_len, device)
    print(f"held-out loss before training {held_before:.3f} "
          f"(uniform guess: {math.log(len(vocab)):.3f})", flush=True)
    losses, running = [], []
    for step in progress(range(1, steps + 1), steps, "LSTM"):
        x, y = next(stream)
        x = ember.tensor(x, device=device)
        y = ember.tensor(y, device=device)
        optimizer.zero_grad()
        logits, _ = model(x)
        loss = loss_fn(logits.reshape(-1, len(vocab)), y.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        running.append(losses[-1])
        if step % log_every == 0 or step == steps:
            held = evaluate_loss(model, held_out, seq_len, device)
            history.add_loss("LSTM", step, sum(running) / len(running), held)
            running = []
    held_after = evaluate_loss(model, held_out, seq_len, device)
    print(f"trained {steps} steps in {time.perf_counter() - start:.1f} s: held-out loss "
          f"{held_before:.3f} -> {held_after:.3f} "
          f"({held_after / math.log(2):.2f} bits per character)", flush=True)
    text_out = sample(model, vocab, prompt, sample_length, temperature, device, seed)
    print(f"--- sample (temperature {temperature}) ---\n{text_out}\n---", flush=True)
    history.plot_losses(plot, "character LSTM", x_label="step")
    return {"first_loss": losses[0], "last_loss": losses[-1], "held_out_before": held_before,
            "held_out_after": held_after, "sample": text_out, "losses": losses}


def main() -> None:
    args = parser(__doc__.splitlines()[0])
    args.add_argument("--steps", type=int, default=500)
    args.add_argument("--seq-len", type=int, default=64)
    args.add_argument("--hidden", type=int, default=256)
    args.add_argument("--batch-size", type=int, default=32)
    args.add_argument("--lr", type=float, default=3e-3)
    args.add_argument("--corpus-kb", type=int, default=300)
    args.add_argument("--temperature", type=float, default=0.8)
    args.add_argument("--sample-length", type=int, default=300)
    options = args.parse_args()
    run(options.device, options.steps, options.seq_len, options.hidden, options.batch_size,
        options.lr, options.corpus_kb, options.seed, options.temperature,
        options.sample_length, options.plot)


if __name__ == "__main__":
    main()
