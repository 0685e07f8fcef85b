"""Layers equal PyTorch's: outputs, input gradients and parameter gradients in float64;
constructor defaults, initialization bounds, repr and state_dict keys."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
import ember.nn as nn

from .compare import Const, check_module, same_keys, same_repr

torch = pytest.importorskip("torch")


def rand(*shape, low=-2.0, high=2.0, seed=0):
    return np.random.default_rng(seed + sum(shape)).uniform(low, high, shape)


# (id, builder taking the nn namespace, inputs as numpy arrays/plain values)
CASES = [
    ("Identity", lambda m: m.Identity(3, unused=1), [rand(2, 3)]),
    ("Linear", lambda m: m.Linear(3, 4), [rand(2, 3)]),
    ("Linear-nobias-3d", lambda m: m.Linear(3, 2, bias=False), [rand(2, 5, 3)]),
    ("Bilinear", lambda m: m.Bilinear(2, 3, 4), [rand(5, 2), rand(5, 3)]),
    ("Conv1d", lambda m: m.Conv1d(2, 4, 3, stride=2, padding=1), [rand(2, 2, 7)]),
    ("Conv1d-same-reflect", lambda m: m.Conv1d(2, 2, 4, padding="same",
                                               padding_mode="reflect"), [rand(1, 2, 6)]),
    ("Conv2d", lambda m: m.Conv2d(2, 4, (3, 2), stride=(1, 2), padding=1, dilation=1),
     [rand(2, 2, 5, 4)]),
    ("Conv2d-groups-nobias", lambda m: m.Conv2d(4, 2, 3, groups=2, bias=False),
     [rand(1, 4, 4, 4)]),
    ("Conv2d-dilation", lambda m: m.Conv2d(1, 2, 2, dilation=2), [rand(1, 1, 5, 5)]),
    ("Conv2d-replicate", lambda m: m.Conv2d(1, 2, 3, padding=1, padding_mode="replicate"),
     [rand(1, 1, 4, 4)]),
    ("Conv2d-circular", lambda m: m.Conv2d(1, 2, 3, padding=(1, 2),
                                           padding_mode="circular"), [rand(1, 1, 4, 4)]),
    ("Conv2d-unbatched", lambda m: m.Conv2d(2, 3, 2), [rand(2, 4, 4)]),
    ("Conv3d", lambda m: m.Conv3d(1, 2, 2, padding=1), [rand(1, 1, 3, 3, 3)]),
    ("Conv3d-circular", lambda m: m.Conv3d(1, 1, 2, padding=1, padding_mode="circular"),
     [rand(1, 1, 2, 3, 3)]),
    ("Conv3d-reflect-same", lambda m: m.Conv3d(1, 1, 3, padding="same",
                                               padding_mode="reflect"), [rand(1, 1, 3, 3, 3)]),
    ("ConvTranspose1d", lambda m: m.ConvTranspose1d(2, 3, 3, stride=2, padding=1,
                                                    output_padding=1), [rand(2, 2, 4)]),
    ("ConvTranspose2d", lambda m: m.ConvTranspose2d(2, 4, 3, stride=2, groups=2),
     [rand(1, 2, 3, 3)]),
    ("MaxPool1d", lambda m: m.MaxPool1d(2), [rand(2, 2, 6)]),
    ("MaxPool2d", lambda m: m.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
     [rand(1, 2, 5, 5)]),
    ("AvgPool1d", lambda m: m.AvgPool1d(3, stride=2, padding=1), [rand(2, 2, 6)]),
    ("AvgPool2d", lambda m: m.AvgPool2d(2, count_include_pad=False, padding=1),
     [rand(1, 2, 4, 5)]),
    ("AdaptiveAvgPool1d", lambda m: m.AdaptiveAvgPool1d(3), [rand(2, 2, 7)]),
    ("AdaptiveAvgPool2d", lambda m: m.AdaptiveAvgPool2d((2, 3)), [rand(1, 2, 5, 7)]),
    ("AdaptiveMaxPool2d", lambda m: m.AdaptiveMaxPool2d(2), [rand(1, 2, 5, 5)]),
    ("BatchNorm1d", lambda m: m.BatchNorm1d(3), [rand(4, 3)]),
    ("BatchNorm1d-3d-momentum-none", lambda m: m.BatchNorm1d(3, momentum=None),
     [rand(2, 3, 4)]),
    ("BatchNorm2d", lambda m: m.BatchNorm2d(2), [rand(2, 2, 3, 3)]),
    ("BatchNorm2d-noaffine-nostats", lambda m: m.BatchNorm2d(2, affine=False,
                                                             track_running_stats=False),
     [rand(2, 2, 3, 3)]),
    ("BatchNorm3d", lambda m: m.BatchNorm3d(2), [rand(2, 2, 2, 2, 2)]),
    ("LayerNorm", lambda m: m.LayerNorm(4), [rand(3, 4)]),
    ("LayerNorm-2d-nobias", lambda m: m.LayerNorm((2, 3), bias=False), [rand(2, 2, 3)]),
    ("GroupNorm", lambda m: m.GroupNorm(2, 4), [rand(2, 4, 3)]),
    ("InstanceNorm2d", lambda m: m.InstanceNorm2d(2, affine=True), [rand(2, 2, 3, 3)]),
    ("InstanceNorm1d", lambda m: m.InstanceNorm1d(2), [rand(2, 2, 5)]),
    ("RMSNorm", lambda m: m.RMSNorm(4, eps=1e-6), [rand(3, 4)]),
    ("Embedding", lambda m: m.Embedding(5, 3, padding_idx=1),
     [np.array([[0, 1, 4], [2, 1, 0]])]),
    ("EmbeddingBag", lambda m: m.EmbeddingBag(5, 3, mode="sum"),
     [np.array([[0, 1, 4], [2, 3, 0]])]),
    ("Flatten", lambda m: m.Flatten(), [rand(2, 2, 3)]),
    ("Unflatten", lambda m: m.Unflatten(1, (2, -1)), [rand(2, 6)]),
    ("Upsample-nearest", lambda m: m.Upsample(scale_factor=2), [rand(1, 1, 2, 3)]),
    ("Upsample-bilinear", lambda m: m.Upsample(size=(3, 5), mode="bilinear",
                                               align_corners=True), [rand(1, 1, 2, 3)]),
    ("PixelShuffle", lambda m: m.PixelShuffle(2), [rand(1, 4, 2, 3)]),
    ("Dropout-eval", lambda m: m.Dropout(0.3).eval(), [rand(2, 3)]),
    ("Dropout1d-eval", lambda m: m.Dropout1d().eval(), [rand(2, 2, 3)]),
    ("Dropout3d-eval", lambda m: m.Dropout3d().eval(), [rand(2, 2, 1, 2, 2)]),
    ("AlphaDropout-eval", lambda m: m.AlphaDropout(0.2).eval(), [rand(2, 3)]),
    ("ConvTranspose3d", lambda m: m.ConvTranspose3d(2, 1, 2, stride=2), [rand(1, 2, 2, 2, 2)]),
    ("MaxPool3d", lambda m: m.MaxPool3d(2), [rand(1, 1, 4, 4, 2)]),
    ("AvgPool3d", lambda m: m.AvgPool3d(2, stride=1), [rand(1, 1, 3, 3, 3)]),
    ("AdaptiveAvgPool3d", lambda m: m.AdaptiveAvgPool3d((1, 2, 2)), [rand(1, 1, 3, 3, 3)]),
    ("AdaptiveMaxPool1d", lambda m: m.AdaptiveMaxPool1d(3), [rand(2, 2, 7)]),
    ("InstanceNorm3d", lambda m: m.InstanceNorm3d(2, track_running_stats=True),
     [rand(2, 2, 2, 2, 2)]),
    ("LocalResponseNorm", lambda m: m.LocalResponseNorm(3), [rand(2, 4, 3)]),
    ("PixelUnshuffle", lambda m: m.PixelUnshuffle(2), [rand(1, 1, 4, 6)]),
    ("UpsamplingNearest2d", lambda m: m.UpsamplingNearest2d(scale_factor=2),
     [rand(1, 1, 2, 2)]),
    ("UpsamplingBilinear2d", lambda m: m.UpsamplingBilinear2d(size=(3, 3)),
     [rand(1, 1, 2, 2)]),
    ("CosineSimilarity", lambda m: m.CosineSimilarity(dim=1), [rand(3, 4), rand(3, 4, seed=1)]),
    ("ZeroPad2d", lambda m: m.ZeroPad2d((1, 0, 2, 1)), [rand(1, 1, 2, 3)]),
    ("ConstantPad1d", lambda m: m.ConstantPad1d(2, 3.5), [rand(1, 2, 3)]),
    ("ReflectionPad2d", lambda m: m.ReflectionPad2d(1), [rand(1, 1, 3, 3)]),
    ("ReplicationPad1d", lambda m: m.ReplicationPad1d((2, 1)), [rand(1, 2, 3)]),
    ("CircularPad2d", lambda m: m.CircularPad2d(1), [rand(1, 1, 3, 3)]),
    ("ReflectionPad3d", lambda m: m.ReflectionPad3d(1), [rand(1, 1, 2, 3, 3)]),
    ("Unfold", lambda m: m.Unfold(2, padding=1), [rand(1, 2, 3, 3)]),
    ("Fold", lambda m: m.Fold((3, 4), 2), [rand(1, 8, 6)]),
    ("LPPool2d", lambda m: m.LPPool2d(2, 2), [rand(1, 1, 4, 4, low=0.1)]),
    ("LPPool1d", lambda m: m.LPPool1d(3, 2, stride=1), [rand(1, 2, 4, low=0.1)]),
    ("LPPool3d", lambda m: m.LPPool3d(2, 2), [rand(1, 1, 2, 2, 4, low=0.1)]),
    ("AdaptiveMaxPool3d", lambda m: m.AdaptiveMaxPool3d((1, 2, 2)), [rand(1, 2, 3, 3, 3)]),
    ("ChannelShuffle", lambda m: m.ChannelShuffle(2), [rand(1, 4, 2, 2)]),
    ("FeatureAlphaDropout-eval", lambda m: m.FeatureAlphaDropout().eval(),
     [rand(2, 2, 3)]),
    ("PairwiseDistance", lambda m: m.PairwiseDistance(p=3.0, keepdim=True),
     [rand(3, 4), rand(3, 4, seed=1)]),
    ("Dropout2d-eval", lambda m: m.Dropout2d().eval(), [rand(2, 2, 3, 3)]),
]

ACTIVATIONS = [
    ("ReLU", lambda m: m.ReLU()), ("ReLU6", lambda m: m.ReLU6()),
    ("LeakyReLU", lambda m: m.LeakyReLU(0.2)), ("ELU", lambda m: m.ELU(alpha=0.7)),
    ("SELU", lambda m: m.SELU()), ("CELU", lambda m: m.CELU(1.3)),
    ("GELU", lambda m: m.GELU()), ("GELU-tanh", lambda m: m.GELU(approximate="tanh")),
    ("SiLU", lambda m: m.SiLU()), ("Mish", lambda m: m.Mish()),
    ("Softplus", lambda m: m.Softplus(beta=2, threshold=3)), ("Softsign", lambda m: m.Softsign()),
    ("Hardtanh", lambda m: m.Hardtanh(-0.5, 1.5)), ("Hardsigmoid", lambda m: m.Hardsigmoid()),
    ("Hardswish", lambda m: m.Hardswish()), ("LogSigmoid", lambda m: m.LogSigmoid()),
    ("Sigmoid", lambda m: m.Sigmoid()), ("Tanh", lambda m: m.Tanh()),
    ("Threshold", lambda m: m.Threshold(0.1, 20.0)), ("GLU", lambda m: m.GLU()),
    ("PReLU", lambda m: m.PReLU()), ("PReLU-channels", lambda m: m.PReLU(3, init=0.1)),
    ("Softmax", lambda m: m.Softmax(dim=1)), ("LogSoftmax", lambda m: m.LogSoftmax(dim=-1)),
    ("Softmin", lambda m: m.Softmin(dim=0)), ("Softmax2d", lambda m: m.Softmax2d()),
    ("Hardshrink", lambda m: m.Hardshrink(0.3)), ("Softshrink", lambda m: m.Softshrink()),
    ("Tanhshrink", lambda m: m.Tanhshrink()), ("RReLU-eval", lambda m: m.RReLU(0.1, 0.3).eval()),
]
CASES += [(name, build, [rand(2, 3, 4)]) for name, build in ACTIVATIONS]


@pytest.mark.parametrize("name,build,inputs", CASES, ids=[c[0] for c in CASES])
def test_layer_matches_torch(name, build, inputs):
    torch.manual_seed(0)
    t = build(torch.nn)
    e = build(nn)
    same_repr(t, e)
    same_keys(t, e)
    check_module(t, e, *inputs)
    # training-mode layers with running statistics must update them identically
    for key, value in t.state_dict().items():
        np.testing.assert_allclose(e.state_dict()[key].numpy(), value.numpy(), rtol=1e-7,
                                   atol=1e-12, err_msg=key)


def test_batchnorm_eval_uses_running_stats():
    t, e = torch.nn.BatchNorm2d(2).double(), nn.BatchNorm2d(2).double()
    x = rand(3, 2, 2, 2)
    for _ in range(2):  # two training steps move the running stats
        check_module(t, e, x)
    t.eval()
    e.eval()
    check_module(t, e, rand(2, 2, 2, 2, seed=3))
    assert e.num_batches_tracked.item() == 2


def test_batchnorm_cumulative_average_with_momentum_none():
    e = nn.BatchNorm1d(2, momentum=None).double()
    batches = [rand(4, 2, seed=s) for s in range(3)]
    for b in batches:
        e(ember.tensor(b))
    expected = np.mean([b.mean(0) for b in batches], axis=0)
    np.testing.assert_allclose(e.running_mean.numpy(), expected, rtol=1e-12)


def test_batchnorm_input_dims_checked():
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(2)(ember.ones(2, 2))


LOSSES = [
    ("MSELoss", lambda m: m.MSELoss(), [rand(3, 4), rand(3, 4, seed=1)]),
    ("L1Loss-sum", lambda m: m.L1Loss(reduction="sum"), [rand(3, 4), rand(3, 4, seed=1)]),
    ("SmoothL1Loss", lambda m: m.SmoothL1Loss(beta=0.5), [rand(3, 4), rand(3, 4, seed=1)]),
    ("HuberLoss", lambda m: m.HuberLoss(delta=0.7, reduction="none"),
     [rand(3, 4), rand(3, 4, seed=1)]),
    ("CrossEntropyLoss", lambda m: m.CrossEntropyLoss(label_smoothing=0.1),
     [rand(4, 3), np.array([0, 2, 1, 2])]),
    ("CrossEntropyLoss-ignore", lambda m: m.CrossEntropyLoss(ignore_index=1),
     [rand(4, 3), np.array([0, 1, 1, 2])]),
    ("NLLLoss", lambda m: m.NLLLoss(), [rand(4, 3, high=-0.1), np.array([0, 2, 1, 2])]),
    ("BCELoss", lambda m: m.BCELoss(), [rand(3, 2, low=0.05, high=0.95),
                                        rand(3, 2, low=0, high=1, seed=1)]),
    ("BCEWithLogitsLoss", lambda m: m.BCEWithLogitsLoss(),
     [rand(3, 2), rand(3, 2, low=0, high=1, seed=1)]),
    ("KLDivLoss", lambda m: m.KLDivLoss(reduction="batchmean"),
     [rand(3, 4, high=-0.1), rand(3, 4, low=0.1, high=1, seed=1)]),
    ("PoissonNLLLoss", lambda m: m.PoissonNLLLoss(), [rand(3, 4), rand(3, 4, low=0, high=3)]),
    ("GaussianNLLLoss", lambda m: m.GaussianNLLLoss(),
     [rand(3, 4), rand(3, 4, seed=1), rand(3, 4, low=0.1, high=1, seed=2)]),
    ("MarginRankingLoss", lambda m: m.MarginRankingLoss(margin=0.2),
     [rand(5), rand(5, seed=1), Const(np.array([1.0, -1, 1, -1, 1]))]),
    ("HingeEmbeddingLoss", lambda m: m.HingeEmbeddingLoss(),
     [rand(5), Const(np.array([1.0, -1, 1, -1, 1]))]),
    ("SoftMarginLoss", lambda m: m.SoftMarginLoss(),
     [rand(5), Const(np.array([1.0, -1, 1, -1, 1]))]),
    ("MultiMarginLoss", lambda m: m.MultiMarginLoss(), [rand(4, 3), np.array([0, 2, 1, 2])]),
    ("TripletMarginLoss", lambda m: m.TripletMarginLoss(),
     [rand(3, 4), rand(3, 4, seed=1), rand(3, 4, seed=2)]),
    ("MultiLabelMarginLoss", lambda m: m.MultiLabelMarginLoss(),
     [rand(2, 4), np.array([[3, 0, -1, 1], [1, 2, 3, -1]])]),
    ("MultiLabelSoftMarginLoss", lambda m: m.MultiLabelSoftMarginLoss(),
     [rand(2, 4), Const(np.array([[1.0, 0, 0, 1], [0, 1, 1, 0]]))]),
    ("CosineEmbeddingLoss", lambda m: m.CosineEmbeddingLoss(margin=0.1),
     [rand(3, 4), rand(3, 4, seed=1), Const(np.array([1.0, -1, 1]))]),
]


@pytest.mark.parametrize("name,build,inputs", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_matches_torch(name, build, inputs):
    t, e = build(torch.nn), build(nn)
    same_repr(t, e)
    check_module(t, e, *inputs)


def test_ctc_loss_matches_torch():
    # PyTorch's CTC backward returns the gradient w.r.t. the logits of a log_softmax
    # input, so compare the gradient w.r.t. those logits.
    logits = np.random.default_rng(0).standard_normal((6, 2, 4))
    targets = np.array([[1, 2, 2], [3, 1, 0]])

    def call(m, x, tg):
        return m(x.log_softmax(-1), tg, (6, 5), (3, 2))

    check_module(torch.nn.CTCLoss(), nn.CTCLoss(), logits, targets, call=call)


def test_weighted_losses_keep_weight_buffer():
    w = ember.tensor([1.0, 2.0, 0.5])
    loss = nn.CrossEntropyLoss(weight=w)
    assert loss.weight is w and "weight" in dict(loss.named_buffers())
    tw = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)
    check_module(torch.nn.CrossEntropyLoss(weight=tw), nn.CrossEntropyLoss(
        weight=ember.tensor([1.0, 2.0, 0.5], dtype=ember.float64)),
        rand(4, 3), np.array([0, 2, 1, 2]))


@pytest.mark.parametrize("build", [
    lambda m: m.Linear(30, 40), lambda m: m.Conv2d(6, 8, 3), lambda m: m.Conv1d(4, 6, 5),
    lambda m: m.ConvTranspose2d(6, 4, 3), lambda m: m.Bilinear(20, 10, 30),
], ids=["Linear", "Conv2d", "Conv1d", "ConvTranspose2d", "Bilinear"])
def test_default_initialization_bounds(build):
    module = build(nn)
    w = module.weight.detach().numpy()
    fan_in = w[0].size if not isinstance(module, nn.modules.conv._ConvTransposeNd) else \
        w.shape[1] * int(np.prod(w.shape[2:]))
    if isinstance(module, nn.Bilinear):
        fan_in = w.shape[1]
    bound = 1 / math.sqrt(fan_in)
    assert np.abs(w).max() <= bound
    assert np.abs(w).max() > 0.9 * bound  # really uniform over the whole interval
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound
    b = module.bias.detach().numpy()
    assert np.abs(b).max() <= bound and np.abs(b).std() > 0


def test_other_default_initializations():
    emb = nn.Embedding(100, 30, padding_idx=3).weight.detach().numpy()
    assert abs(emb.std() - 1) < 0.05 and not emb[3].any()
    assert nn.PReLU().weight.item() == pytest.approx(0.25)
    bn = nn.BatchNorm1d(3)
    assert bn.weight.detach().numpy().tolist() == [1, 1, 1]
    assert bn.num_batches_tracked.dtype is ember.int64
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"]


def test_embedding_from_pretrained_and_padding_grad():
    table = ember.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    emb = nn.Embedding.from_pretrained(table)
    assert not emb.weight.requires_grad
    np.testing.assert_array_equal(emb(ember.tensor([2, 0])).numpy(), [[5, 6], [1, 2]])
    trainable = nn.Embedding.from_pretrained(table, freeze=False, padding_idx=0)
    trainable(ember.tensor([0, 1, 0])).sum().backward()
    np.testing.assert_array_equal(trainable.weight.grad.numpy(), [[0, 0], [1, 1], [0, 0]])


def test_lazy_linear_materializes():
    lazy = nn.LazyLinear(3)
    out = lazy(ember.ones(2, 5))
    assert out.shape == (2, 3) and type(lazy) is nn.Linear and lazy.in_features == 5
    assert lazy.weight.shape == (3, 5) and isinstance(lazy.weight, nn.Parameter)


@pytest.mark.parametrize("name,shape,weight_shape", [
    ("LazyConv1d", (2, 3, 6), (4, 3, 2)), ("LazyConv2d", (3, 5, 5), (4, 3, 2, 2)),
    ("LazyConvTranspose2d", (1, 3, 4, 4), (3, 4, 2, 2)),
])
def test_lazy_conv_materializes_like_torch(name, shape, weight_shape):
    lazy = getattr(nn, name)(4, 2)
    reference = getattr(torch.nn, name)(4, 2)
    same_repr(reference, lazy)
    out = lazy(ember.ones(*shape))
    reference(torch.ones(*shape))
    assert type(lazy).__name__ == name[4:] and lazy.weight.shape == weight_shape
    same_repr(reference, lazy)
    assert out.shape == tuple(reference(torch.ones(*shape)).shape)
    bound = 1 / math.sqrt(int(np.prod(weight_shape[1:])))
    assert np.abs(lazy.weight.detach().numpy()).max() <= bound


@pytest.mark.parametrize("name,shape", [
    ("LazyBatchNorm1d", (4, 3)), ("LazyBatchNorm2d", (2, 3, 2, 2)),
    ("LazyBatchNorm3d", (2, 3, 1, 2, 2)), ("LazyInstanceNorm1d", (2, 3, 4)),
    ("LazyInstanceNorm2d", (2, 3, 2, 2)),
])
def test_lazy_norm_materializes_like_torch(name, shape):
    t, e = getattr(torch.nn, name)().double(), getattr(nn, name)().double()
    same_repr(t, e)
    x = rand(*shape)
    t(torch.tensor(x))
    e(ember.tensor(x))
    same_repr(t, e)
    same_keys(t, e)
    for key, value in t.state_dict().items():
        np.testing.assert_allclose(e.state_dict()[key].numpy(), value.numpy(), rtol=1e-7,
                                   err_msg=key)


def test_dropout_training_statistics():
    x = ember.ones(200, 50)
    y = nn.Dropout(0.3)(x).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.03
    np.testing.assert_allclose(y[kept], 1 / 0.7)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_conv_arguments_checked():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(3, 4, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="not supported for strided"):
        nn.Conv1d(1, 1, 3, stride=2, padding="same")


def test_max_unpool_inverts_max_pool():
    tp, ep = torch.nn.MaxPool2d(2, return_indices=True), nn.MaxPool2d(2, return_indices=True)
    tu, eu = torch.nn.MaxUnpool2d(2), nn.MaxUnpool2d(2)
    same_repr(tu, eu)
    x = rand(1, 2, 4, 4)

    def call(unpool, inp):
        pool = tp if isinstance(inp, torch.Tensor) else ep
        out, idx = pool(inp)
        return unpool(out, idx)

    check_module(tu, eu, x, call=call)


def test_conv_transpose_output_size():
    t = torch.nn.ConvTranspose2d(2, 3, 3, stride=2).double()
    e = nn.ConvTranspose2d(2, 3, 3, stride=2).double()
    x = rand(1, 2, 3, 3)

    def call(m, inp):
        return m(inp, output_size=[8, 8])

    check_module(t, e, x, call=call)
    with pytest.raises(ValueError, match="valid sizes range from 7 to 8"):
        e(ember.tensor(x), output_size=[9, 9])


def test_rrelu_training_draws_slopes_in_range():
    y = nn.RReLU(0.1, 0.3)(-ember.ones(2000)).numpy()
    assert (-y >= 0.1).all() and (-y <= 0.3).all() and abs(-y.mean() - 0.2) < 0.01


def test_adaptive_log_softmax_matches_torch():
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)
    e = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)
    same_repr(t, e)
    same_keys(t, e)
    target = Const(np.array([0, 4, 9, 2, 7, 5]))
    check_module(t, e, rand(6, 8), target)
    x = rand(6, 8)
    check_module(t, e, x, call=lambda m, inp: m.log_prob(inp))
    np.testing.assert_array_equal(e.predict(ember.tensor(x)).numpy(),
                                  t.predict(torch.tensor(x)).numpy())
    with pytest.raises(RuntimeError, match="Target values should be in \\[0, 9\\]"):
        e(ember.tensor(x), ember.tensor([0, 1, 2, 3, 4, 10]))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])


def test_sync_batchnorm_is_local_batchnorm():
    t = torch.nn.SyncBatchNorm.convert_sync_batchnorm(torch.nn.Sequential(
        torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3)))
    e = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.Conv2d(2, 3, 1),
                                                               nn.BatchNorm2d(3)))
    same_repr(t, e)
    same_keys(t, e)
    t.eval()  # PyTorch's SyncBatchNorm trains only inside a process group
    e.eval()
    check_module(t, e, rand(2, 2, 3, 3))
    local = nn.SyncBatchNorm(3).double()
    reference = nn.BatchNorm2d(3).double()
    x = ember.tensor(rand(2, 3, 2, 2))
    np.testing.assert_allclose(local(x).detach().numpy(), reference(x).detach().numpy())


def test_embedding_max_norm_matches_torch():
    t = torch.nn.Embedding(6, 3, max_norm=1.0)
    e = nn.Embedding(6, 3, max_norm=1.0)
    idx = np.array([[0, 2, 2], [5, 1, 0]])
    check_module(t, e, Const(idx))
    for key, value in t.state_dict().items():  # the looked-up rows were renormalized
        np.testing.assert_allclose(e.state_dict()[key].numpy(), value.numpy(), rtol=1e-10)


def test_lazy_modules_accept_a_state_dict_before_their_first_forward():
    for lazy, source, x in [
        (nn.LazyLinear(3), nn.Linear(2, 3), ember.ones(1, 2)),
        (nn.LazyConv2d(4, 3), nn.Conv2d(2, 4, 3), ember.ones(1, 2, 5, 5)),
        (nn.LazyBatchNorm1d(), nn.BatchNorm1d(3).eval(), ember.ones(4, 3)),
    ]:
        lazy.load_state_dict(source.state_dict())
        lazy.train(source.training)
        np.testing.assert_array_equal(lazy(x).detach().numpy(), source(x).detach().numpy())
        assert type(lazy) is type(source) and repr(lazy) == repr(source)
