"""``ember.nn``: modules, parameters, initialization and the functional API.

>>> model = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.ReLU())
>>> model
Sequential(
  (0): Linear(in_features=2, out_features=3, bias=True)
  (1): ReLU()
)
"""
from . import functional  # noqa: F401
from . import init  # noqa: F401
from .parameter import (Buffer, Parameter, UninitializedBuffer,  # noqa: F401
                        UninitializedParameter)
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from .modules import (activation, container, conv, dropout, linear, loss,  # noqa: F401
                      normalization, pooling, rnn, sparse, transformer)
from . import utils  # noqa: F401
# ember.nn.parallel is the package (DistributedDataParallel), not modules/parallel.py that the
# star import above bound to the same name.
from .parallel import DistributedDataParallel as _DistributedDataParallel  # noqa: F401,E402
