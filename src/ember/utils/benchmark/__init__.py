"""``ember.utils.benchmark``: honest timing, with PyTorch's ``torch.utils.benchmark`` API.

``Timer`` waits for the GPU around every timed block, warms up, and times the first run
(and any CUDA context it had to create) apart from the statistics. ``Measurement`` holds
the times (median, mean, IQR); ``Compare`` prints many of them as a table.
``python -m ember.utils.benchmark matmul`` sweeps matrix sizes on every device and says
where the GPU starts to win. See docs/benchmarking.md.

>>> import ember
>>> from ember.utils.benchmark import Timer
>>> x = ember.randn(128, 128)
>>> m = Timer("x @ x", globals={"x": x}, device="cpu").blocked_autorange(min_run_time=0.01)
>>> m.median > 0 and m.first_call > 0
True
"""
from .compare import Colorize, Compare
from .measurement import (
                          Measurement,
                          TaskSpec,
                          ordered_unique,
                          select_unit,
                          trim_sigfig,
                          unit_to_english,
)
from .sweep import MatmulSweep, matmul_sweep
from .timer import Timer, timer

__all__ = ["Timer", "timer", "Measurement", "TaskSpec", "Compare", "Colorize", "select_unit",
           "unit_to_english", "trim_sigfig", "ordered_unique", "matmul_sweep", "MatmulSweep"]
