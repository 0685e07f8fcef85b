"""Which ops autocast casts, and to what: PyTorch's lists, per device type, by ember's
public op names.

``lower``: run in the autocast dtype (float16 or bfloat16); ``fp32``: run in float32;
``promote``: run in the widest floating type among the inputs; ``lower_result``: run in
float32 and round the result to the autocast dtype (PyTorch composes these from float32
steps that end in a listed product). ``CONDITIONAL`` holds ops whose policy depends on
the call, as PyTorch's depends on which kernel the call reaches.
"""
from __future__ import annotations

_NN = "nn.functional."

_CONV = [_NN + n for n in ("conv1d", "conv2d", "conv3d", "conv_transpose1d",
                           "conv_transpose2d", "conv_transpose3d")]

_LOSSES = [_NN + n for n in (
    "mse_loss", "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss",
    "poisson_nll_loss", "smooth_l1_loss", "cross_entropy", "l1_loss", "huber_loss",
    "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
    "kl_div", "multilabel_margin_loss", "binary_cross_entropy_with_logits")]

CPU = {
    "lower": _CONV + [
        "bmm", "mm", "linalg.vecdot", "baddbmm", "addmm", "addbmm", "matmul",
        _NN + "linear", _NN + "prelu", _NN + "scaled_dot_product_attention",
        # PyTorch builds these from bmm/mm (the RNN layers from linear)
        "tensordot", "linalg.multi_dot", "rnn_tanh", "rnn_relu"],
    "fp32": _LOSSES + [
        _NN + "ctc_loss", _NN + "binary_cross_entropy", _NN + "avg_pool3d",
        _NN + "max_unpool2d", _NN + "max_unpool3d",
        _NN + "adaptive_avg_pool3d", _NN + "adaptive_max_pool3d",
        "prod", "quantile", "nanquantile", "cdist", "trace", "cholesky_solve", "inverse",
        "pinverse", "linalg.matrix_rank", "linalg.solve", "linalg.cholesky",
        "linalg.svdvals", "linalg.eigvalsh", "linalg.inv", "linalg.qr", "linalg.svd",
        "linalg.eigh",
        # PyTorch builds these from max_unpool2d and avg_pool3d
        _NN + "max_unpool1d", _NN + "lp_pool3d",
        _NN + "grid_sample", _NN + "fractional_max_pool2d", _NN + "fractional_max_pool3d",
        _NN + "fractional_max_pool2d_with_indices",
        _NN + "fractional_max_pool3d_with_indices"],
    "promote": ["cat", "stack", "index_copy"],
    "lower_result": ["linalg.pinv"],  # svd in float32, then a matmul
}

CUDA = {
    "lower": _CONV + [
        _NN + "prelu", "addmm", "addmv", "matmul", "einsum", "mm", "mv", "linalg.vecdot",
        _NN + "linear", "addbmm", "baddbmm", "bmm", "linalg.multi_dot",
        _NN + "scaled_dot_product_attention",
        "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"],
    "fp32": _LOSSES + [
        "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
        "reciprocal", "rsqrt", "sinh", "tan", "pow", _NN + "softplus", _NN + "layer_norm",
        _NN + "group_norm", _NN + "cosine_similarity", "dist", "cdist", "logsumexp",
        _NN + "interpolate", "norm",
        # PyTorch's fp32_set_opt_dtype: float32 unless the call names a dtype
        "prod", _NN + "softmax", _NN + "log_softmax", "cumprod", "cumsum",
        "linalg.vector_norm", "linalg.matrix_norm", "sum"],
    "promote": ["atan2", _NN + "bilinear", "cross", "dot", "index_put", "scatter_add",
                "tensordot", "cat", "stack", _NN + "grid_sample"],
}



def _argument(args, kwargs, index, name, default=None):
    return args[index] if len(args) > index else kwargs.get(name, default)


def _unweighted(policy):
    # with weight=, PyTorch's Python code computes the loss from elementwise ops
    return lambda args, kwargs: None if kwargs.get("weight") is not None else policy


def _cpu_pad(args, kwargs):
    mode = _argument(args, kwargs, 2, "mode", "constant")
    pad = _argument(args, kwargs, 1, "pad", ())
    if mode == "replicate" or (mode == "reflect" and len(pad) <= 4):
        return "fp32"  # reflection_pad1d/2d and replication_pad*d are on the fp32 list
    return None


def _cpu_max_pool3d(args, kwargs):
    # max_pool3d_with_indices is not on the list
    return None if _argument(args, kwargs, 6, "return_indices", False) else "fp32"


def _cpu_local_response_norm(args, kwargs):
    return "fp32" if args[0].ndim > 3 else None  # avg_pool3d above 3-D, avg_pool2d below


def _cpu_einsum(args, kwargs):
    # PyTorch contracts pairs of operands with bmm; one operand is a diagonal or a sum
    return "lower" if len(args) > 2 or (len(args) == 2 and isinstance(args[1], (list, tuple))
                                        and len(args[1]) > 1) else None


def _cpu_inner(args, kwargs):
    # PyTorch's inner of two vectors is a dot, which CPU autocast leaves alone; ember
    # builds it from a matmul, so it runs as it is ("keep": autocast off inside). Higher
    # dimensions go through matmul in PyTorch too.
    return "keep" if len(args) == 2 and all(getattr(a, "ndim", 0) <= 1 for a in args) \
        else None


def _cpu_lstm(args, kwargs):
    # PyTorch runs the padded form as one mkldnn_rnn_layer per layer (listed); the packed
    # form (data, batch_sizes, [h, c], ...) and projections are composed of smaller steps
    if len(args) < 8 or not isinstance(args[1], (list, tuple)):
        return None
    params, has_biases, num_layers, bidirectional = args[2], args[3], args[4], args[7]
    groups = num_layers * (2 if bidirectional else 1)
    return None if len(params) == groups * ((4 if has_biases else 2) + 1) else "lower"


def _keep(args, kwargs):
    return "keep"  # PyTorch computes it natively, uncast; ember composes it of listed ops


CONDITIONAL = {
    "cpu": {
        "lstm": _cpu_lstm,
        "linalg.lstsq": _keep,
        "linalg.lu_solve": _keep,
        "einsum": _cpu_einsum,
        "inner": _cpu_inner,
        _NN + "pad": _cpu_pad,
        _NN + "max_pool3d": _cpu_max_pool3d,
        _NN + "local_response_norm": _cpu_local_response_norm,
        _NN + "l1_loss": _unweighted("fp32"),
        _NN + "mse_loss": _unweighted("fp32"),
        _NN + "huber_loss": _unweighted("fp32"),
        _NN + "smooth_l1_loss": _unweighted("fp32"),
    },
    "cuda": {
        _NN + "l1_loss": _unweighted("fp32"),
        _NN + "mse_loss": _unweighted("fp32"),
        _NN + "huber_loss": _unweighted("fp32"),
        _NN + "smooth_l1_loss": _unweighted("fp32"),
    },
}
POLICIES = {"cpu": CPU, "cuda": CUDA}


def policy(device_type: str, op: str, args=(), kwargs=None) -> str | None:
    """The policy of ``op`` called with ``args``/``kwargs`` on ``device_type``."""
    when = CONDITIONAL[device_type].get(op)
    if when is not None:
        return when(args, kwargs or {})
    for name, ops in POLICIES[device_type].items():
        if op in ops:
            return name
    return None


def listed(op: str) -> bool:
    return any(op in CONDITIONAL[d] or any(op in ops for ops in POLICIES[d].values())
               for d in POLICIES)
