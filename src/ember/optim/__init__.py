"""``ember.optim``: optimizers and learning-rate schedulers.

Optimizers update parameters in place from their ``.grad``:

>>> w = ember.tensor([1.0, -2.0], requires_grad=True)
>>> opt = ember.optim.Adam([w], lr=0.1)
>>> for _ in range(3):
...     opt.zero_grad()
...     (w * w).sum().backward()
...     opt.step()
"""
from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, Adamax, AdamW, NAdam, RAdam
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .swap import swap_in_optimizer_params_and_state

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "ASGD",
           "Adafactor", "LBFGS", "Muon",
           "Rprop", "Adagrad", "Adadelta", "lr_scheduler", "swa_utils",
           "swap_in_optimizer_params_and_state"]
