"""ember's generators, sampling ops, nn.init, dropout and data utilities after a seed draw
what PyTorch draws after the same seed, and leave the generator in the same state."""
import math
import platform

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

_X86 = platform.machine().lower() in ("x86_64", "amd64")
_CAPABILITY = torch.backends.cpu.get_cpu_capability()
pytestmark = pytest.mark.skipif(_X86 and _CAPABILITY == "DEFAULT",
                                reason="PyTorch runs its x86 DEFAULT kernels, which round "
                                       "without fused multiply-adds")
cephes_normals = pytest.mark.skipif(
    not (_X86 and _CAPABILITY in ("AVX2", "AVX512")),
    reason="this PyTorch's float32 normal_ uses other float functions than the Cephes ones")


def _same(seed, mine, theirs, exact=True):
    ember.manual_seed(seed)
    got = mine(ember)
    torch.manual_seed(seed)
    want = theirs(torch)
    got = got if isinstance(got, (list, tuple)) else [got]
    want = want if isinstance(want, (list, tuple)) else [want]
    for a, b in zip(got, want, strict=True):
        a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
        b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
        if exact:
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert np.array_equal(ember.get_rng_state().numpy(), torch.get_rng_state().numpy())


def both(fn):
    return fn, fn


# ---------------------------------------------------------------- generator and state
def test_new_generator_starts_from_torchs_default_seed():
    g = ember.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed() == 67280421310721
    assert np.array_equal(ember.rand(5, generator=g).numpy(),
                          torch.rand(5, generator=torch.Generator()).numpy())


def test_states_are_interchangeable_with_torch():
    ember.manual_seed(3)
    ember.randn(5)  # leaves a cached scalar normal in the state
    torch.set_rng_state(torch.from_numpy(ember.get_rng_state().numpy()))
    assert np.array_equal(ember.randn(7).numpy(), torch.randn(7).numpy())
    torch.manual_seed(11)
    torch.rand(1000)
    ember.set_rng_state(ember.tensor(torch.get_rng_state().numpy()))
    assert ember.initial_seed() == 11
    assert np.array_equal(ember.rand(9).numpy(), torch.rand(9).numpy())


def test_negative_and_wide_seeds_wrap_like_torch():
    for seed in (-1, 2 ** 63 + 5, 2 ** 32 + 7):
        _same(seed, *both(lambda lib: lib.randint(0, 100, (6,))))
        assert ember.initial_seed() == torch.initial_seed()


@pytest.mark.parametrize("seed,error", [(2 ** 64, RuntimeError), (-(2 ** 63) - 1, RuntimeError),
                                        ("x", ValueError)])
def test_bad_seeds_raise(seed, error):
    with pytest.raises(error):
        ember.manual_seed(seed)


def test_generator_manual_seed_rejects_non_integers():
    with pytest.raises(TypeError, match="must be an integer"):
        ember.Generator().manual_seed(1.5)


def test_fork_rng_restores_the_cpu_state():
    ember.manual_seed(0)
    with ember.random.fork_rng():
        inside = ember.rand(4)
    after = ember.rand(4)
    assert np.array_equal(inside.numpy(), after.numpy())
    with ember.random.fork_rng(devices=[]):
        ember.randn(3)
    torch.manual_seed(0)
    torch.rand(4)
    assert np.array_equal(ember.rand(2).numpy(), torch.rand(2).numpy())


def test_fork_rng_restores_after_an_error_and_can_be_disabled():
    ember.manual_seed(1)
    state = ember.get_rng_state().numpy()
    with pytest.raises(KeyError), ember.random.fork_rng():
        ember.rand(3)
        raise KeyError("inside")
    assert np.array_equal(ember.get_rng_state().numpy(), state)
    with ember.random.fork_rng(enabled=False):
        ember.rand(3)
    assert not np.array_equal(ember.get_rng_state().numpy(), state)


def test_fork_rng_refuses_cuda_devices():
    with pytest.raises(RuntimeError, match="cannot fork CUDA generators"):
        with ember.random.fork_rng(devices=[0]):
            pass


# ----------------------------------------------------------------------- sampling ops
@cephes_normals
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_in_place_fills_on_a_transposed_tensor(dtype):
    def fills(lib):
        kind = getattr(lib, dtype)
        out = []
        for fill in (lambda t: t.uniform_(-2, 3), lambda t: t.normal_(1.0, 0.5),
                     lambda t: t.exponential_(2.0), lambda t: t.cauchy_(0.5, 2.0),
                     lambda t: t.log_normal_(0.0, 0.5), lambda t: t.geometric_(0.3),
                     lambda t: t.random_(0, 50), lambda t: t.random_(),
                     lambda t: t.bernoulli_(0.3),
                     lambda t: t.bernoulli_(lib.linspace(0, 1, 6, dtype=kind))):
            out.append(fill(lib.empty(6, 20, dtype=kind).t()).contiguous())
        return out
    _same(5, fills, fills)


@cephes_normals
def test_integer_fills_and_sampling_functions():
    def draws(lib):
        weights = lib.tensor([[0.1, 0.0, 2.0, 1.0, 0.5], [1.0, 1.0, 1.0, 1.0, 1.0]])
        return [lib.empty(17, dtype=lib.int32).random_(-5, 5),
                lib.empty(9, dtype=lib.int64).random_(),
                lib.empty(9, dtype=lib.uint8).random_(),
                lib.bernoulli(lib.rand(3, 7)), lib.bernoulli(lib.zeros(40), p=0.25),
                lib.multinomial(weights, 3), lib.multinomial(weights, 8, replacement=True),
                lib.multinomial(weights[0], 1),
                lib.normal(lib.zeros(3, 20), lib.ones(20) * 2),
                lib.normal(lib.arange(20.0), 0.5), lib.normal(1.0, lib.ones(33)),
                lib.normal(2.0, 3.0, size=(5, 7)),
                lib.randint(3, 10**10, (6,)), lib.randperm(30, dtype=lib.float32),
                lib.rand_like(lib.zeros(3, 3, dtype=lib.float64)),
                lib.randn_like(lib.zeros(20)), lib.randint_like(lib.zeros(4), 7)]
    _same(7, draws, draws)


# ----------------------------------------------------------------------------- nn.init
@cephes_normals
@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.0, 0.5, -0.1, 0.1),
                                          (0.0, 1.0, 2.0, 3.0), (0.3, 0.02, 0.25, 0.4),
                                          (0.0, 1.0, -5.0, -4.5)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.filterwarnings("ignore:mean is more than 2 std")
def test_trunc_normal_(mean, std, a, b, dtype):
    def draw(lib):
        return lib.nn.init.trunc_normal_(lib.empty(50, 3, dtype=getattr(lib, dtype)), mean,
                                         std, a, b)
    _same(6, draw, draw)


@cephes_normals
def test_init_functions():
    def inits(lib):
        init = lib.nn.init
        return [init.xavier_uniform_(lib.empty(7, 5), gain=1.5),
                init.xavier_normal_(lib.empty(33, 17)),
                init.kaiming_uniform_(lib.empty(8, 3, 3, 3), a=math.sqrt(5)),
                init.kaiming_uniform_(lib.empty(8, 4), mode="fan_out", nonlinearity="relu"),
                init.kaiming_normal_(lib.empty(16, 8)),
                init.sparse_(lib.empty(10, 4), sparsity=0.3, std=0.05),
                init.uniform_(lib.empty(5), -0.3, 0.8), init.normal_(lib.empty(16), 0.1, 0.02)]
    _same(8, inits, inits)


@cephes_normals
def test_orthogonal_draws_torchs_normals():
    # the QR factorization runs through another LAPACK: equal to rounding
    _same(9, *both(lambda lib: lib.nn.init.orthogonal_(lib.empty(4, 6), gain=2.0)),
          exact=False)


def test_init_under_a_generator_leaves_the_default_one_alone():
    ember.manual_seed(0)
    state = ember.get_rng_state().numpy()
    g = ember.Generator().manual_seed(4)
    got = ember.nn.init.uniform_(ember.empty(5), generator=g)
    want = torch.nn.init.uniform_(torch.empty(5), generator=torch.Generator().manual_seed(4))
    assert np.array_equal(got.numpy(), want.numpy())
    assert np.array_equal(ember.get_rng_state().numpy(), state)


# ---------------------------------------------------------------------------- layers
@pytest.mark.parametrize("build", [
    lambda nn: nn.GRU(4, 3, num_layers=2, bidirectional=True),
    lambda nn: nn.RNN(3, 5),
    lambda nn: nn.LSTMCell(3, 4),
    lambda nn: nn.MultiheadAttention(8, 2),
    lambda nn: nn.Conv1d(4, 6, 3, groups=2),
    lambda nn: nn.Bilinear(3, 4, 5),
], ids=["GRU", "RNN", "LSTMCell", "MultiheadAttention", "Conv1d", "Bilinear"])
def test_more_layers_initialize_like_torch(build):
    _same(0, lambda lib: list(build(lib.nn).state_dict().values()),
          lambda lib: list(build(lib.nn).state_dict().values()))


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_dropout_family_masks(p):
    def masks(lib):
        F = lib.nn.functional
        x = lib.ones(2, 3, 4, 5)
        return [F.dropout(x, p), F.dropout2d(x, p), F.dropout1d(x[0], p),
                F.dropout3d(x, p), F.alpha_dropout(x, p, training=True)]
    _same(2, masks, masks, exact=False)


def test_gumbel_softmax_noise():
    def draw(lib):
        return lib.nn.functional.gumbel_softmax(lib.zeros(4, 6), tau=0.5)
    _same(3, draw, draw, exact=False)


# ------------------------------------------------------------------------ utils.data
def test_samplers_loaders_and_splits():
    def orders(lib):
        data = lib.utils.data
        dataset = data.TensorDataset(lib.arange(50))
        shuffled = [b[0].tolist() for b in data.DataLoader(dataset, batch_size=8,
                                                           shuffle=True)]
        return [lib.tensor(sum(shuffled, [])),
                lib.tensor(list(data.RandomSampler(range(10), replacement=True,
                                                   num_samples=70))),
                lib.tensor(list(data.RandomSampler(range(10), num_samples=25))),
                lib.tensor(list(data.SubsetRandomSampler([3, 4, 5, 6, 7]))),
                lib.tensor(list(data.WeightedRandomSampler([0.1, 0.5, 0.2, 0.2], 9))),
                lib.tensor(list(data.WeightedRandomSampler([1, 2, 3, 4], 3, False))),
                lib.tensor(data.random_split(range(12), [0.5, 0.25, 0.25])[1].indices)]
    _same(4, orders, orders)


def test_sampler_with_its_own_generator():
    mine = list(ember.utils.data.RandomSampler(range(9),
                                               generator=ember.Generator().manual_seed(5)))
    theirs = list(torch.utils.data.RandomSampler(range(9),
                                                 generator=torch.Generator().manual_seed(5)))
    assert mine == theirs


def test_docstring_examples_hold():
    import doctest

    from ember import random
    from ember.nn import init

    for module in (random, init):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_generator_argument_is_checked():
    with pytest.raises(TypeError, match="must be an ember.Generator"):
        ember.rand(2, generator=np.random.default_rng(0))
    with pytest.raises(TypeError, match="must be an ember.Generator"):
        ember.nn.init.uniform_(ember.empty(2), generator=torch.Generator())


def test_rand_and_randn_refuse_integer_dtypes():
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        ember.rand(2, dtype=ember.int64)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        ember.randn(2, dtype=ember.int64)


def test_float16_draws_and_empty_shapes():
    def draws(lib):
        return [lib.rand(17, dtype=lib.float16), lib.randn(33, dtype=lib.float16),
                lib.empty(5, dtype=lib.float16).uniform_(-1, 1), lib.rand(0, 3),
                lib.randn(2, 0), lib.randperm(0), lib.randperm(1)]
    _same(12, draws, draws)


# ----------------------------------------------- every layer's default initialization
def _lazy(build, *shape):
    def run(nn, lib):
        module = build(nn)
        module(lib.ones(*shape))  # the parameters are drawn at the first call
        return module
    return run


_LAYERS = {
    "Linear": lambda nn: nn.Linear(5, 3),
    "Bilinear": lambda nn: nn.Bilinear(3, 4, 5),
    "Conv1d": lambda nn: nn.Conv1d(4, 6, 3),
    "Conv2d": lambda nn: nn.Conv2d(2, 4, (3, 2), groups=2),
    "Conv3d": lambda nn: nn.Conv3d(2, 3, 2),
    "ConvTranspose1d": lambda nn: nn.ConvTranspose1d(4, 6, 3),
    "ConvTranspose2d": lambda nn: nn.ConvTranspose2d(4, 2, 3, groups=2),
    "ConvTranspose3d": lambda nn: nn.ConvTranspose3d(2, 3, 2),
    "Embedding": lambda nn: nn.Embedding(10, 4, padding_idx=2),
    "EmbeddingBag": lambda nn: nn.EmbeddingBag(10, 4),
    "RNN": lambda nn: nn.RNN(3, 4, num_layers=2, nonlinearity="relu"),
    "LSTM": lambda nn: nn.LSTM(3, 4, proj_size=2),
    "GRU": lambda nn: nn.GRU(3, 4, bidirectional=True),
    "RNNCell": lambda nn: nn.RNNCell(3, 4),
    "LSTMCell": lambda nn: nn.LSTMCell(3, 4),
    "GRUCell": lambda nn: nn.GRUCell(3, 4),
    "MultiheadAttention": lambda nn: nn.MultiheadAttention(8, 2, kdim=5, vdim=6,
                                                           add_bias_kv=True),
    "Transformer": lambda nn: nn.Transformer(8, 2, 1, 1, 16),
    "AdaptiveLogSoftmaxWithLoss": lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 8]),
    "PReLU": lambda nn: nn.PReLU(3),
    "LayerNorm": lambda nn: nn.LayerNorm(4),
    "GroupNorm": lambda nn: nn.GroupNorm(2, 4),
    "RMSNorm": lambda nn: nn.RMSNorm(4),
    "BatchNorm1d": lambda nn: nn.BatchNorm1d(3),
    "BatchNorm2d": lambda nn: nn.BatchNorm2d(3),
    "BatchNorm3d": lambda nn: nn.BatchNorm3d(3),
    "SyncBatchNorm": lambda nn: nn.SyncBatchNorm(3),
    "InstanceNorm1d": lambda nn: nn.InstanceNorm1d(3, affine=True),
    "InstanceNorm2d": lambda nn: nn.InstanceNorm2d(3, affine=True),
    "InstanceNorm3d": lambda nn: nn.InstanceNorm3d(3, affine=True),
}
_LAZY = {
    "LazyLinear": _lazy(lambda nn: nn.LazyLinear(3), 2, 5),
    "LazyConv1d": _lazy(lambda nn: nn.LazyConv1d(4, 3), 1, 2, 6),
    "LazyConv2d": _lazy(lambda nn: nn.LazyConv2d(4, 3), 1, 2, 5, 5),
    "LazyConv3d": _lazy(lambda nn: nn.LazyConv3d(2, 2), 1, 2, 3, 3, 3),
    "LazyConvTranspose1d": _lazy(lambda nn: nn.LazyConvTranspose1d(4, 3), 1, 2, 6),
    "LazyConvTranspose2d": _lazy(lambda nn: nn.LazyConvTranspose2d(4, 3), 1, 2, 5, 5),
    "LazyConvTranspose3d": _lazy(lambda nn: nn.LazyConvTranspose3d(2, 2), 1, 2, 3, 3, 3),
    "LazyBatchNorm1d": _lazy(lambda nn: nn.LazyBatchNorm1d(), 2, 3),
    "LazyBatchNorm2d": _lazy(lambda nn: nn.LazyBatchNorm2d(), 2, 3, 2, 2),
    "LazyBatchNorm3d": _lazy(lambda nn: nn.LazyBatchNorm3d(), 2, 3, 2, 2, 2),
    "LazyInstanceNorm1d": _lazy(lambda nn: nn.LazyInstanceNorm1d(affine=True), 2, 3, 4),
    "LazyInstanceNorm2d": _lazy(lambda nn: nn.LazyInstanceNorm2d(affine=True), 2, 3, 2, 2),
    "LazyInstanceNorm3d": _lazy(lambda nn: nn.LazyInstanceNorm3d(affine=True),
                                2, 3, 2, 2, 2),
}
_BASES = {"RNNBase", "RNNCellBase"}  # built through their subclasses


def test_the_layer_table_covers_every_layer_that_initializes():
    import inspect

    layers = {name for name, c in vars(ember.nn).items()
              if inspect.isclass(c) and issubclass(c, ember.nn.Module)
              and (hasattr(c, "reset_parameters") or hasattr(c, "_reset_parameters"))}
    assert layers - set(_LAYERS) - set(_LAZY) - _BASES == set()


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(_LAYERS) + sorted(_LAZY))
def test_every_layer_initializes_like_torch(name):
    if name in _LAYERS:
        def build(lib):
            return _LAYERS[name](lib.nn)
    else:
        def build(lib):
            return _LAZY[name](lib.nn, lib)
    _same(1, lambda lib: list(build(lib).state_dict().values()),
          lambda lib: list(build(lib).state_dict().values()))


# ------------------------------------------------- item sizes, float32 and float64
@cephes_normals
@pytest.mark.parametrize("n", [1, 7, 16, 17, 1000, 10007])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fills_and_init_at_every_size(n, dtype):
    def draws(lib):
        kind = getattr(lib, dtype)
        init = lib.nn.init
        return [lib.empty(n, dtype=kind).normal_(0.5, 2.0),
                lib.empty(n, dtype=kind).uniform_(-3.0, 1.5),
                lib.bernoulli(lib.full((n,), 0.4, dtype=kind)),
                init.uniform_(lib.empty(n, dtype=kind), -0.2, 0.2),
                init.normal_(lib.empty(n, dtype=kind), 0.0, 0.02),
                init.xavier_uniform_(lib.empty(n, 1, dtype=kind)),
                init.kaiming_normal_(lib.empty(1, n, dtype=kind)),
                init.trunc_normal_(lib.empty(n, dtype=kind), std=0.02)]
    _same(n, draws, draws)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_poisson_and_bernoulli_of_a_tensor(dtype, transposed):
    rates = np.concatenate([np.linspace(0, 30, 61), [100.0, 1000.0, 0.001]]).reshape(8, 8)

    def draws(lib):
        r = lib.tensor(rates, dtype=getattr(lib, dtype))
        p = lib.linspace(0, 1, 64, dtype=getattr(lib, dtype)).reshape(8, 8)
        if transposed:
            r, p = r.t(), p.t()
        return [lib.poisson(r), lib.bernoulli(p), lib.poisson(lib.zeros(3))]
    _same(5, draws, draws)
