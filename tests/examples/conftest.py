"""The example programs live in examples/, which is not a package: put it on sys.path so the
tests can import them as plain modules (train_digits, char_lm, ...)."""
from __future__ import annotations

import os
import sys

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples")
if EXAMPLES not in sys.path:
    sys.path.insert(0, EXAMPLES)
