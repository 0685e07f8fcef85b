"""Every layer, one family per file."""
from . import batchnorm, instancenorm
from .activation import *  # noqa: F403
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import *  # noqa: F403
from .cross_map_lrn import CrossMapLRN2d
from .dropout import *  # noqa: F403
from .fold import *  # noqa: F403
from .fractional_pooling import FractionalMaxPool2d, FractionalMaxPool3d
from .linear import Bilinear, Identity, LazyLinear, Linear
from .linear_cross_entropy import LinearCrossEntropyLoss, LinearCrossEntropyOptions
from .loss import *  # noqa: F403
from .module import Module, register_module_forward_hook, register_module_forward_pre_hook
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .parallel import DataParallel
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .shape import *  # noqa: F403
from .sparse import Embedding, EmbeddingBag
from .transformer import *  # noqa: F403
