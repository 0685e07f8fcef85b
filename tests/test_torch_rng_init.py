"""PyTorch's seeded initialization, rebuilt from ``ember._mt_stream`` draws in PyTorch's
order: ``nn.init``'s functions and the default initialization of Linear, Conv2d, LSTM,
Embedding and Transformer come out equal to the bit. The recipes here are the order in
which ember's layers must draw. The tests at the end check ember's own layers and
functions after ``ember.manual_seed``."""
import math
import platform

import numpy as np
import pytest

import ember
from ember import _mt_stream as mt

torch = pytest.importorskip("torch")

_X86 = platform.machine().lower() in ("x86_64", "amd64")
_CAPABILITY = torch.backends.cpu.get_cpu_capability()
pytestmark = pytest.mark.skipif(_X86 and _CAPABILITY == "DEFAULT",
                                reason="PyTorch runs its x86 DEFAULT kernels, which round "
                                       "without fused multiply-adds")
# float32 normal_ of 16 values or more is bit-equal where PyTorch runs its Cephes
# Box-Muller (its x86 AVX2 and AVX-512 kernels)
cephes_normals = pytest.mark.skipif(
    not (_X86 and _CAPABILITY in ("AVX2", "AVX512")),
    reason="this PyTorch's float32 normal_ uses other float functions than the Cephes ones")


def _pair(seed):
    torch.manual_seed(seed)
    return mt.TorchCompatibleGenerator(seed)


def _fans(shape):
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


_SQRT5 = math.sqrt(5)  # the slope nn.Linear and nn.Conv2d pass to kaiming_uniform_


def _kaiming_bound(fan_in, a=_SQRT5):
    # nn.init.kaiming_uniform_'s bound, computed in Python floats as PyTorch does
    std = math.sqrt(2.0 / (1 + a ** 2)) / math.sqrt(fan_in)
    return math.sqrt(3.0) * std


def _uniform(g, shape, low, high):
    return mt.uniform(g, int(np.prod(shape)), "float32", low, high).reshape(shape)


def _linear(g, fan_in, fan_out):
    """nn.Linear's reset_parameters: kaiming_uniform_(a=sqrt(5)) for the weight, then
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
    bound = _kaiming_bound(fan_in)
    weight = _uniform(g, (fan_out, fan_in), -bound, bound)
    bias_bound = 1 / math.sqrt(fan_in)
    return weight, _uniform(g, (fan_out,), -bias_bound, bias_bound)


def _xavier(g, shape, gain=1.0):
    fan_in, fan_out = _fans(shape)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return _uniform(g, shape, -bound, bound)


def _assert_state_dict(mine, module, g):
    theirs = {k: v.detach().numpy() for k, v in module.state_dict().items()}
    assert sorted(mine) == sorted(theirs)
    for name, value in theirs.items():
        assert np.array_equal(mine[name], value), name
    assert np.array_equal(g.get_state(), torch.get_rng_state().numpy())


# ------------------------------------------------------------------------ the recipes
def test_linear_recipe():
    g = _pair(0)
    weight, bias = _linear(g, 20, 7)
    _assert_state_dict({"weight": weight, "bias": bias}, torch.nn.Linear(20, 7), g)


def test_conv2d_recipe():
    g = _pair(1)
    fan_in = 3 * 3 * 3
    bound = _kaiming_bound(fan_in)
    weight = _uniform(g, (8, 3, 3, 3), -bound, bound)
    bias = _uniform(g, (8,), -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in))
    _assert_state_dict({"weight": weight, "bias": bias}, torch.nn.Conv2d(3, 8, 3), g)


def test_lstm_recipe():
    g = _pair(2)
    lstm = torch.nn.LSTM(5, 6, num_layers=2, bidirectional=True)
    bound = 1 / math.sqrt(6)  # every parameter, in registration order
    mine = {name: _uniform(g, tuple(p.shape), -bound, bound)
            for name, p in lstm.named_parameters()}
    _assert_state_dict(mine, lstm, g)


@cephes_normals
def test_embedding_recipe():
    g = _pair(3)
    weight = mt.normal(g, 40, "float32").reshape(10, 4)
    _assert_state_dict({"weight": weight}, torch.nn.Embedding(10, 4), g)


def test_transformer_recipe():
    """Each layer is built once (its MultiheadAttention draws its out_proj Linear, then
    xavier for in_proj_weight; biases are zeroed), cloned num_layers times, and at the end
    every parameter with two or more dims is redrawn with xavier_uniform_."""
    g = _pair(4)
    d, ff = 8, 16
    model = torch.nn.Transformer(d_model=d, nhead=2, num_encoder_layers=2,
                                 num_decoder_layers=1, dim_feedforward=ff, dropout=0.0)

    def attention(prefix):
        out_weight, _ = _linear(g, d, d)
        return {prefix + "in_proj_weight": _xavier(g, (3 * d, d)),
                prefix + "in_proj_bias": np.zeros(3 * d, np.float32),
                prefix + "out_proj.weight": out_weight,
                prefix + "out_proj.bias": np.zeros(d, np.float32)}

    def feed_forward():
        (w1, b1), (w2, b2) = _linear(g, d, ff), _linear(g, ff, d)
        return {"linear1.weight": w1, "linear1.bias": b1, "linear2.weight": w2,
                "linear2.bias": b2}

    def norms(*names):
        out = {}
        for name in names:
            out[f"{name}weight"] = np.ones(d, np.float32)
            out[f"{name}bias"] = np.zeros(d, np.float32)
        return out

    encoder = {**attention("self_attn."), **feed_forward(), **norms("norm1.", "norm2.")}
    decoder = {**attention("self_attn."), **attention("multihead_attn."), **feed_forward(),
               **norms("norm1.", "norm2.", "norm3.")}
    mine = {f"encoder.layers.{i}.{k}": v for i in range(2) for k, v in encoder.items()}
    mine.update({f"decoder.layers.0.{k}": v for k, v in decoder.items()})
    mine.update({f"encoder.norm.{k}": v for k, v in norms("").items()})
    mine.update({f"decoder.norm.{k}": v for k, v in norms("").items()})
    for name, p in model.named_parameters():
        if p.dim() > 1:
            mine[name] = _xavier(g, tuple(p.shape))
    _assert_state_dict(mine, model, g)


@cephes_normals
@pytest.mark.parametrize("shape", [(7,), (5, 3), (16, 8), (33, 17), (8, 3, 3, 3)])
def test_nn_init_recipes(shape):
    n = int(np.prod(shape))
    fan_in, fan_out = _fans(shape) if len(shape) > 1 else (shape[0], shape[0])
    cases = [
        (lambda t: torch.nn.init.uniform_(t, -0.3, 0.8), lambda g: _uniform(g, shape, -0.3, 0.8)),
        (lambda t: torch.nn.init.normal_(t, 0.1, 0.02),
         lambda g: mt.normal(g, n, "float32", 0.1, 0.02).reshape(shape)),
    ]
    if len(shape) > 1:
        gain = math.sqrt(2.0)  # calculate_gain("relu")
        normal_std = gain / math.sqrt(fan_in)
        xavier_std = 1.5 * math.sqrt(2.0 / float(fan_in + fan_out))
        cases += [
            (lambda t: torch.nn.init.xavier_uniform_(t, gain=1.5),
             lambda g: _xavier(g, shape, 1.5)),
            (lambda t: torch.nn.init.xavier_normal_(t, gain=1.5),
             lambda g: mt.normal(g, n, "float32", 0.0, xavier_std).reshape(shape)),
            (lambda t: torch.nn.init.kaiming_uniform_(t, nonlinearity="relu"),
             lambda g: _uniform(g, shape, -math.sqrt(3.0) * normal_std,
                                math.sqrt(3.0) * normal_std)),
            (lambda t: torch.nn.init.kaiming_normal_(t, nonlinearity="relu"),
             lambda g: mt.normal(g, n, "float32", 0.0, normal_std).reshape(shape)),
        ]
    for seed, (theirs, mine) in enumerate(cases):
        g = _pair(seed)
        want = theirs(torch.empty(shape)).numpy()
        assert np.array_equal(mine(g), want)
        assert np.array_equal(g.get_state(), torch.get_rng_state().numpy())


@cephes_normals
def test_sparse_init_recipe():
    """nn.init.sparse_: normal_(0, std), then per column a randperm of the rows whose
    first ceil(sparsity * rows) entries are zeroed."""
    g = _pair(5)
    rows, cols = 10, 4
    want = torch.nn.init.sparse_(torch.empty(rows, cols), sparsity=0.3, std=0.05).numpy()
    mine = mt.normal(g, rows * cols, "float32", 0.0, 0.05).reshape(rows, cols)
    for col in range(cols):
        mine[mt.randperm(g, rows)[:math.ceil(0.3 * rows)], col] = 0
    assert np.array_equal(mine, want)
    assert np.array_equal(g.get_state(), torch.get_rng_state().numpy())


def _trunc_normal(g, n, mean, std, a, b):
    """nn.init.trunc_normal_: when [a, b] holds more than 30% of the mass, normal_ and
    redraw a whole normal_ for the values outside, until none is; otherwise uniform
    candidates on [a, b], each kept when log(u) <= its log density (relative to the
    peak), with u from a second uniform_ of the same size, and rejected ones redrawn."""
    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    lo, hi = np.float32(a), np.float32(b)
    if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
        result = mt.normal(g, n, "float32", mean, std)
        while True:
            outside = (result < lo) | (result > hi)
            if not outside.any():
                return result
            result = np.where(outside, mt.normal(g, n, "float32", mean, std), result)
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def rejected(candidates):
        log_density = ((candidates - np.float32(mean)) / np.float32(std)) ** 2
        log_density = log_density * np.float32(-0.5) - np.float32(log_peak)
        log_u = torch.from_numpy(mt.uniform(g, n, "float32")).log_().numpy()
        return log_u > log_density

    result = mt.uniform(g, n, "float32", a, b)
    pending = rejected(result)
    while pending.any():
        candidates = mt.uniform(g, n, "float32", a, b)
        result = np.where(pending, candidates, result)
        pending = np.where(pending, rejected(candidates), pending)
    return result


@cephes_normals
@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.0, 0.5, -0.1, 0.1),
                                          (0.0, 1.0, 2.0, 3.0), (0.3, 0.02, 0.25, 0.4)])
def test_trunc_normal_recipe(mean, std, a, b):
    g = _pair(6)
    want = torch.nn.init.trunc_normal_(torch.empty(50), mean, std, a, b).numpy()
    assert np.array_equal(_trunc_normal(g, 50, mean, std, a, b), want)
    assert np.array_equal(g.get_state(), torch.get_rng_state().numpy())


def test_orthogonal_draws_a_normal_then_factors_it():
    g = _pair(7)
    want = torch.nn.init.orthogonal_(torch.empty(6, 4)).numpy()
    q, r = np.linalg.qr(mt.normal(g, 24, "float32").reshape(6, 4).astype(np.float64))
    q *= np.sign(np.diag(r))
    np.testing.assert_allclose(q, want, atol=1e-5)  # LAPACKs round differently
    assert np.array_equal(g.get_state(), torch.get_rng_state().numpy())


def test_data_loader_shuffle_and_random_split_recipes():
    """A shuffling DataLoader's iterator draws two random_() int64 values from the default
    generator (its base seed, then the sampler's seed) and shuffles with randperm from a
    generator seeded with the second; random_split is one randperm of the total."""
    g = _pair(0)
    dataset = torch.utils.data.TensorDataset(torch.arange(100))
    loader = torch.utils.data.DataLoader(dataset, batch_size=10, shuffle=True)
    order = torch.cat([batch[0] for batch in loader]).numpy()
    _, sampler_seed = mt.random_full(g, 2, "int64")
    assert np.array_equal(mt.randperm(mt.TorchCompatibleGenerator(int(sampler_seed)), 100),
                          order)
    parts = torch.utils.data.random_split(range(10), [7, 3])
    assert np.array_equal(mt.randperm(g, 10), parts[0].indices + parts[1].indices)
    assert np.array_equal(g.get_state(), torch.get_rng_state().numpy())


# ------------------------------------------------- ember's own layers (integration)


def _params(module):
    return {k: v.detach().numpy() for k, v in module.state_dict().items()}


@pytest.mark.parametrize("build", [
    lambda nn: nn.Linear(20, 7),
    lambda nn: nn.Conv2d(3, 8, 3),
    lambda nn: nn.LSTM(5, 6, num_layers=2),
    lambda nn: nn.Embedding(10, 4),
    lambda nn: nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2,
                              num_decoder_layers=1, dim_feedforward=16, dropout=0.0),
], ids=["Linear", "Conv2d", "LSTM", "Embedding", "Transformer"])
def test_ember_layers_initialize_like_torch(build):
    torch.manual_seed(0)
    want = _params(build(torch.nn))
    ember.manual_seed(0)
    got = _params(build(ember.nn))
    assert sorted(got) == sorted(want)
    for name in want:
        assert np.array_equal(got[name], want[name]), name


@pytest.mark.parametrize("n", [1, 7, 16, 17, 1000, 10007])
def test_ember_creation_functions_draw_torch_numbers(n):
    for dtype in ("float32", "float64"):
        torch.manual_seed(n)
        kind = getattr(torch, dtype)
        want = [torch.rand(n, dtype=kind), torch.randn(n, dtype=kind),
                torch.randint(0, 10, (n,)), torch.randperm(n),
                torch.empty(n).bernoulli_(0.3), torch.nn.functional.dropout(torch.ones(n), 0.2)]
        ember.manual_seed(n)
        got = [ember.rand(n, dtype=getattr(ember, dtype)),
               ember.randn(n, dtype=getattr(ember, dtype)), ember.randint(0, 10, (n,)),
               ember.randperm(n), ember.empty(n).bernoulli_(0.3),
               ember.nn.functional.dropout(ember.ones(n), 0.2)]
        for mine, theirs in zip(got, want):
            assert np.array_equal(mine.numpy(), theirs.numpy())
        assert np.array_equal(ember.get_rng_state().numpy(), torch.get_rng_state().numpy())


def _train(lib, dropout: float):
    lib.manual_seed(0)
    x, y = lib.randn(64, 10), lib.randn(64, 1)
    model = lib.nn.Sequential(lib.nn.Linear(10, 32), lib.nn.ReLU(), lib.nn.Dropout(dropout),
                              lib.nn.Linear(32, 1))
    optimizer = lib.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(20):
        optimizer.zero_grad()
        loss = lib.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_seeded_mlp_trains_like_torch(dropout):
    np.testing.assert_allclose(_train(ember, dropout), _train(torch, dropout), rtol=1e-5)
