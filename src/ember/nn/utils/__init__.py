"""``ember.nn.utils``: gradient clipping, parameter/vector conversion, sequence packing and
padding, parametrizations (weight_norm, spectral_norm), functional_call."""
from . import parametrizations, parametrize, rnn, stateless  # noqa: F401
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,  # noqa: F401
                        clip_grads_with_norm_, get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .rnn import PackedSequence  # noqa: F401
