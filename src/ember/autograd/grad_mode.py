"""``ember.autograd.grad_mode`` is ``ember.grad_mode``: the grad modes live below the
Tensor (which reads them), and autograd offers them under PyTorch's module path."""
import sys

from .. import grad_mode

sys.modules[__name__] = grad_mode
