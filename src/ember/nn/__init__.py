"""``ember.nn``: modules, parameters, initialization and the functional API.

>>> model = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.ReLU())
>>> model
Sequential(
  (0): Linear(in_features=2, out_features=3, bias=True)
  (1): ReLU()
)
"""
from . import (
                        attention,
                        functional,
                        grad,
                        init,
                        utils,
)
from .modules import *  # noqa: F403
from .modules import (
                        Module,
                        activation,
                        container,
                        conv,
                        dropout,
                        linear,
                        loss,
                        normalization,
                        pooling,
                        rnn,
                        sparse,
                        transformer,
)

# ember.nn.parallel is the package (DistributedDataParallel), not modules/parallel.py that the
# star import above bound to the same name.
from .parallel import DistributedDataParallel as _DistributedDataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
