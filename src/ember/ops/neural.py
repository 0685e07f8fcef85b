"""Other nn.functional ops: softmax family, dropout family, embedding, one_hot, linear, bilinear, attention, distances."""
from __future__ import annotations
