"""Every layer, one family per file."""
from .module import Module, register_module_forward_hook, register_module_forward_pre_hook
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .linear import Bilinear, Identity, LazyLinear, Linear
from .activation import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .sparse import Embedding, EmbeddingBag
from .shape import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .parallel import DataParallel  # noqa: F401
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from . import batchnorm, instancenorm  # noqa: F401  (PyTorch's module paths)
