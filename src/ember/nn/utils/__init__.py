"""``ember.nn.utils``: gradient clipping, parameter/vector conversion, sequence packing and
padding, parametrizations (weight_norm, spectral_norm), functional_call."""
from . import fusion, parametrizations, parametrize, rnn, stateless
from .clip_grad import (
                        clip_grad_norm,
                        clip_grad_norm_,
                        clip_grad_value_,
                        clip_grads_with_norm_,
                        get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (
                        fuse_conv_bn_eval,
                        fuse_conv_bn_weights,
                        fuse_linear_bn_eval,
                        fuse_linear_bn_weights,
)
from .rnn import PackedSequence
from .weight_norm import remove_weight_norm, weight_norm
