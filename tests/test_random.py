"""Random fills (Tensor.uniform_, normal_, ...) and sampling functions (bernoulli,
multinomial, poisson, normal): their statistics on 10,000 draws, seeding, in-place
semantics, and argument errors."""
import math

import numpy as np
import pytest

import ember

N = 10_000


def _stats(t):
    values = t.double().cpu().numpy()
    return values.mean(), values.std()


# ----------------------------------------------------------------------------- statistics
def test_uniform_statistics_and_range(device):
    t = ember.empty(N, device=device).uniform_(-2.0, 4.0)
    values = t.cpu().numpy()
    assert values.min() >= -2.0 and values.max() < 4.0
    mean, std = _stats(t)
    assert abs(mean - 1.0) < 0.1
    assert abs(std - 6 / math.sqrt(12)) < 0.1


def test_uniform_never_returns_upper_bound_in_half(device):
    t = ember.empty(N, dtype=ember.float16, device=device).uniform_(0.0, 1.0)
    assert float(t.max()) < 1.0


def test_normal_statistics(device):
    mean, std = _stats(ember.empty(N, dtype=ember.float64, device=device).normal_(3.0, 2.0))
    assert abs(mean - 3.0) < 0.1
    assert abs(std - 2.0) < 0.1


def test_log_normal_statistics(device):
    t = ember.empty(N, dtype=ember.float64, device=device).log_normal_(0.5, 0.25)
    logs = np.log(t.cpu().numpy())
    assert abs(logs.mean() - 0.5) < 0.02
    assert abs(logs.std() - 0.25) < 0.02


def test_exponential_statistics(device):
    t = ember.empty(N, device=device).exponential_(4.0)
    assert float(t.min()) >= 0.0
    mean, std = _stats(t)
    assert abs(mean - 0.25) < 0.02
    assert abs(std - 0.25) < 0.02


def test_cauchy_median_and_quartiles(device):
    values = ember.empty(N, dtype=ember.float64, device=device).cauchy_(1.0, 2.0).cpu().numpy()
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    assert abs(median - 1.0) < 0.15
    assert abs((q3 - q1) / 2 - 2.0) < 0.25  # the quartiles lie at median +- sigma


@pytest.mark.parametrize("dtype", [ember.float32, ember.int64])
def test_geometric_statistics(device, dtype):
    t = ember.empty(N, dtype=dtype, device=device).geometric_(0.25)
    values = t.cpu().numpy()
    assert values.min() >= 1
    assert np.all(values == np.round(values))
    assert abs(values.mean() - 4.0) < 0.2  # mean 1/p
    assert abs(values.var() - 12.0) < 1.5  # variance (1 - p) / p^2


@pytest.mark.parametrize("dtype", [ember.float32, ember.int32, ember.bool])
def test_bernoulli_number_p(device, dtype):
    t = ember.empty(N, dtype=dtype, device=device).bernoulli_(0.3)
    values = t.cpu().numpy().astype(np.float64)
    assert set(np.unique(values)) <= {0.0, 1.0}
    assert abs(values.mean() - 0.3) < 0.03


def test_bernoulli_tensor_p_broadcasts(device):
    p = ember.tensor([0.0, 0.2, 1.0], device=device)
    values = ember.empty(N, 3, device=device).bernoulli_(p).cpu().numpy()
    assert values[:, 0].sum() == 0 and values[:, 2].min() == 1
    assert abs(values[:, 1].mean() - 0.2) < 0.03


def test_random_ranges(device):
    values = ember.empty(N, dtype=ember.int64, device=device).random_(-3, 5).cpu().numpy()
    assert values.min() == -3 and values.max() == 4
    assert abs(values.mean() - 0.5) < 0.15
    values = ember.zeros(N, dtype=ember.int32, device=device).random_(7).cpu().numpy()
    assert values.min() == 0 and values.max() == 6
    values = ember.zeros(N, dtype=ember.uint8, device=device).random_().cpu().numpy()
    assert values.min() < 10 and values.max() > 245  # [0, 255]
    values = ember.zeros(N, device=device).random_().cpu().numpy()
    assert values.max() <= 2 ** 24 and values.max() > 2 ** 23  # [0, 2^24] for float32
    assert np.all(values == np.round(values))
    values = ember.zeros(N, dtype=ember.bool, device=device).random_().cpu().numpy()
    assert 0.4 < values.mean() < 0.6


def test_random_keyword_from(device):
    values = ember.zeros(N, dtype=ember.int64, device=device).random_(**{"from": 2, "to": 4})
    assert set(np.unique(values.cpu().numpy())) == {2, 3}


def test_bernoulli_function(device):
    p = ember.full((N,), 0.7, dtype=ember.float64, device=device)
    out = ember.bernoulli(p)
    assert out.dtype is ember.float64 and out.device == p.device
    assert abs(out.cpu().numpy().mean() - 0.7) < 0.03
    assert abs(ember.bernoulli(p, 0.1).cpu().numpy().mean() - 0.1) < 0.03
    assert abs(p.bernoulli().cpu().numpy().mean() - 0.7) < 0.03


def test_poisson_statistics(device):
    rates = ember.tensor([0.0, 0.5, 20.0], device=device).expand(N, 3).contiguous()
    counts = ember.poisson(rates)
    assert counts.dtype is ember.float32
    values = counts.cpu().numpy()
    assert values[:, 0].max() == 0
    assert np.all(values == np.round(values))
    assert abs(values[:, 1].mean() - 0.5) < 0.05
    assert abs(values[:, 2].mean() - 20.0) < 0.3
    assert abs(values[:, 2].var() - 20.0) < 2.0


def test_multinomial_with_replacement_frequencies(device):
    weights = ember.tensor([[1.0, 0.0, 3.0], [0.0, 5.0, 0.0]], device=device)
    draws = ember.multinomial(weights, N, replacement=True)
    assert draws.shape == (2, N) and draws.dtype is ember.int64
    first = np.bincount(draws[0].cpu().numpy(), minlength=3) / N
    assert first[1] == 0
    assert abs(first[0] - 0.25) < 0.03
    assert np.all(draws[1].cpu().numpy() == 1)


def test_multinomial_without_replacement(device):
    weights = ember.tensor([1.0, 2.0, 0.0, 4.0], device=device)
    draws = ember.multinomial(weights.expand(N, 4).contiguous(), 3)
    values = draws.cpu().numpy()
    assert np.all(np.sort(values, axis=1) == [0, 1, 3])  # distinct, never the zero weight
    first = np.bincount(values[:, 0], minlength=4) / N
    assert abs(first[3] - 4 / 7) < 0.03 and abs(first[0] - 1 / 7) < 0.03
    one_d = weights.multinomial(2)
    assert one_d.shape == (2,) and len(set(one_d.tolist())) == 2
    # once the positive categories are used up, zero-weight ones follow (as in PyTorch)
    assert sorted(ember.multinomial(ember.tensor([1.0, 0.0], device=device), 2).tolist()) \
        == [0, 1]


def test_normal_overloads(device):
    mean = ember.tensor([0.0, 10.0], dtype=ember.float64, device=device)
    std = ember.tensor([[1.0], [0.0]], dtype=ember.float64, device=device)
    both = ember.normal(mean, std)
    assert both.shape == (2, 2) and both.dtype is ember.float64
    assert both[1].tolist() == [0.0, 10.0]
    samples = ember.normal(mean.expand(N, 2), 2.0).cpu().numpy()
    assert abs(samples[:, 1].mean() - 10.0) < 0.1 and abs(samples[:, 1].std() - 2.0) < 0.1
    samples = ember.normal(1.0, ember.full((N,), 3.0, device=device)).cpu().numpy()
    assert abs(samples.mean() - 1.0) < 0.15 and abs(samples.std() - 3.0) < 0.15
    plain = ember.normal(2.0, 0.5, size=(N,), dtype=ember.float64, device=device)
    assert plain.dtype is ember.float64 and abs(float(plain.mean()) - 2.0) < 0.05


def test_normal_gradient_is_zero_like_pytorch():
    mean = ember.zeros(3, requires_grad=True)
    std = ember.ones(1, requires_grad=True)
    out = ember.normal(mean, std)
    assert type(out.grad_fn).__name__ == "NormalBackward3"
    out.sum().backward()
    assert mean.grad.tolist() == [0.0, 0.0, 0.0] and std.grad.tolist() == [0.0]


# ----------------------------------------------------------------------------- seeding
FILLS = [
    ("uniform_", (), ember.float32),
    ("normal_", (), ember.float32),
    ("log_normal_", (), ember.float32),
    ("exponential_", (), ember.float32),
    ("cauchy_", (), ember.float32),
    ("geometric_", (0.5,), ember.float32),
    ("bernoulli_", (), ember.float32),
    ("random_", (0, 100), ember.int64),
]


@pytest.mark.parametrize("name,args,dtype", FILLS, ids=[f[0] for f in FILLS])
def test_fills_reproducible_with_seed_and_generator(device, name, args, dtype):
    def draw(**kwargs):
        return getattr(ember.empty(50, dtype=dtype, device=device), name)(*args, **kwargs)

    ember.manual_seed(3)
    first = draw()
    ember.manual_seed(3)
    assert ember.equal(first, draw())
    assert not ember.equal(first, draw())
    g = ember.Generator(device).manual_seed(11)
    again = draw(generator=g)
    assert ember.equal(again, draw(generator=ember.Generator(device).manual_seed(11)))


def test_sampling_functions_reproducible(device):
    p = ember.full((100,), 0.5, device=device)
    w = ember.ones(4, 5, device=device)
    for draw in (lambda g: ember.bernoulli(p, generator=g),
                 lambda g: ember.poisson(p * 4, generator=g),
                 lambda g: ember.multinomial(w, 3, generator=g),
                 lambda g: ember.multinomial(w, 30, True, generator=g),
                 lambda g: ember.normal(p, 1.0, generator=g)):
        assert ember.equal(draw(ember.Generator(device).manual_seed(5)),
                           draw(ember.Generator(device).manual_seed(5)))


def test_default_generator_is_the_cpu_generator():
    assert ember.manual_seed(4) is ember.default_generator
    assert ember.default_generator.initial_seed() == 4
    assert ember.default_generator.device.type == "cpu"


def test_generator_state_round_trip():
    g = ember.Generator().manual_seed(7)
    state = g.get_state()
    assert state.dtype is ember.uint8
    first = ember.empty(20).uniform_(generator=g)
    g.set_state(state)
    assert ember.equal(first, ember.empty(20).uniform_(generator=g))
    ember.manual_seed(1)
    saved = ember.get_rng_state()
    a = ember.rand(5)
    ember.set_rng_state(saved)
    assert ember.equal(a, ember.rand(5))


def test_generator_of_another_device_kind_is_refused():
    if not ember.cuda.is_available():
        pytest.skip("needs a GPU")
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        ember.empty(3, device="cuda").uniform_(generator=ember.Generator("cpu"))


# ----------------------------------------------------------------------------- in place
@pytest.mark.parametrize("name,args,dtype", FILLS, ids=[f[0] for f in FILLS])
def test_fills_keep_dtype_device_and_bump_version(device, name, args, dtype):
    t = ember.zeros(2, 3, dtype=dtype, device=device)
    view = t[0]
    before = t._version
    out = getattr(t, name)(*args)
    assert out is t
    assert t.dtype is dtype and t.device.type == device and t.shape == (2, 3)
    assert t._version == before + 1 and view._version == t._version


def test_fill_through_view_writes_base(device):
    t = ember.zeros(4, 3, device=device)
    t[1].uniform_(5.0, 6.0)
    values = t.cpu().numpy()
    assert values[1].min() >= 5.0 and values[[0, 2, 3]].max() == 0.0


@pytest.mark.parametrize("name,args,dtype", FILLS, ids=[f[0] for f in FILLS])
def test_leaf_requiring_grad_is_refused_outside_no_grad(name, args, dtype):
    if not dtype.is_floating_point:
        pytest.skip("integer tensors can't require grad")
    w = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(w, name)(*args)
    with ember.no_grad():
        getattr(w, name)(*args)
    assert w.is_leaf and w.requires_grad and w.grad_fn is None


def test_fill_of_non_leaf_gives_zero_gradient_like_pytorch():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    y.normal_()
    assert type(y.grad_fn).__name__ == "NormalBackward0"
    (y * 3).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_saved_tensor_overwritten_by_fill_is_detected():
    x = ember.ones(3, requires_grad=True)
    y = x.exp()  # exp saves its output
    y.uniform_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_nn_init_style_code_under_no_grad():
    layer = ember.nn.Linear(20, 30)
    with ember.no_grad():
        layer.weight.normal_(0.0, 0.02)
        layer.bias.uniform_(-0.1, 0.1)
    assert abs(float(layer.weight.std()) - 0.02) < 0.005
    assert layer.weight.requires_grad and layer.weight.is_leaf
    assert float(layer.bias.abs().max()) < 0.1


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("call,error,match", [
    (lambda: ember.empty(3).uniform_(2, 1), RuntimeError,
     r"uniform_ expects to return a \[from, to\) range, but found from=2 > to=1"),
    (lambda: ember.empty(3).normal_(0, -1), RuntimeError, "normal expects std >= 0.0"),
    (lambda: ember.empty(3).log_normal_(0, 0), RuntimeError, "log_normal_ expects std > 0.0"),
    (lambda: ember.empty(3).exponential_(0), RuntimeError, "exponential_ expects lambda > 0.0"),
    (lambda: ember.empty(3).cauchy_(0, -1), RuntimeError, "cauchy_ expects sigma > 0.0"),
    (lambda: ember.empty(3).geometric_(1.0), RuntimeError,
     r"geometric_ expects p to be in \(0, 1\)"),
    (lambda: ember.empty(3).bernoulli_(1.5), RuntimeError,
     r"bernoulli_ expects p to be in \[0, 1\]"),
    (lambda: ember.empty(3).bernoulli_(ember.tensor([0.5, -0.1, 0.2])), RuntimeError,
     r"all elements of p to be in \[0, 1\]"),
    (lambda: ember.empty(3).bernoulli_(ember.tensor([0.5, 0.1])), RuntimeError,
     "can't be broadcast"),
    (lambda: ember.empty(3).random_(5, 3), RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=3"),
    (lambda: ember.zeros(3, dtype=ember.uint8).random_(0, 300), RuntimeError,
     "doesn't fit uint8"),
    (lambda: ember.zeros(3).random_(0, 2 ** 25), RuntimeError, "doesn't fit float32"),
    (lambda: ember.zeros(3).random_(**{"from": 2}), TypeError, "'from' needs 'to'"),
    (lambda: ember.zeros(3).random_(0, 2.5), TypeError, "argument 'to' must be an integer"),
    (lambda: ember.zeros(3, dtype=ember.int64).uniform_(), NotImplementedError,
     '"check_uniform_bounds" not implemented for \'Long\''),
    (lambda: ember.zeros(3, dtype=ember.int64).normal_(), NotImplementedError,
     '"normal_kernel_cpu" not implemented for \'Long\''),
    (lambda: ember.empty(3).uniform_("a"), TypeError, "argument 'from' must be a number"),
    (lambda: ember.empty(3).uniform_(generator=3), TypeError, "must be an ember.Generator"),
    (lambda: ember.bernoulli(ember.tensor([0.5, 2.0])), RuntimeError, r"in \[0, 1\]"),
    (lambda: ember.bernoulli(ember.tensor([1, 0])), RuntimeError,
     '"bernoulli" is not defined for int64'),
    (lambda: ember.bernoulli([0.5]), TypeError, "argument 'input' must be a Tensor"),
    (lambda: ember.poisson(ember.tensor([1.0, -1.0])), RuntimeError,
     "invalid Poisson rate, expected every rate in input to be non-negative"),
    (lambda: ember.multinomial(ember.tensor([[0.0, 0.0]]), 1), RuntimeError,
     r"invalid multinomial distribution \(sum of probabilities <= 0\)"),
    (lambda: ember.multinomial(ember.tensor([1.0, -1.0, 3.0]), 1), RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    (lambda: ember.multinomial(ember.tensor([1.0, float("nan")]), 1), RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    (lambda: ember.multinomial(ember.tensor([1.0, 0.0, 1.0]), 4), RuntimeError,
     "cannot sample n_sample > prob_dist.size"),
    (lambda: ember.multinomial(ember.tensor([1.0, 1.0]), 0), RuntimeError,
     "cannot sample n_sample <= 0 samples"),
    (lambda: ember.multinomial(ember.ones(2, 2, 2), 1), RuntimeError,
     "prob_dist must be 1 or 2 dim"),
    (lambda: ember.multinomial(ember.tensor([1, 2]), 1), RuntimeError,
     "multinomial only supports floating-point dtypes for input"),
    (lambda: ember.multinomial(ember.tensor([1.0, 2.0]), 1.5), TypeError,
     "argument 'num_samples' must be int"),
    (lambda: ember.normal(ember.zeros(2), ember.tensor([1.0, -1.0])), RuntimeError,
     r"normal expects all elements of std >= 0.0"),
    (lambda: ember.normal(ember.tensor([1, 2]), 1.0), RuntimeError,
     "normal expects a floating-point tensor for 'mean'"),
    (lambda: ember.normal(ember.zeros(2), ember.ones(3)), RuntimeError,
     "can't be broadcast together"),
    (lambda: ember.normal(0.0, 1.0), TypeError, "argument 'size' is required"),
    (lambda: ember.normal(0.0, -1.0, size=(2,)), RuntimeError, "normal expects std >= 0.0"),
])
def test_argument_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_bad_argument_leaves_tensor_and_version_untouched():
    t = ember.zeros(3)
    with pytest.raises(RuntimeError):
        t.uniform_(1, 0)
    assert t._version == 0 and t.tolist() == [0.0, 0.0, 0.0]


def test_set_state_refuses_foreign_tensors():
    # PyTorch's checks and messages: the size of its state layout, then its contents
    with pytest.raises(RuntimeError, match="CPUGeneratorImplState of size 5056"):
        ember.Generator().set_state(ember.tensor([1, 2, 3], dtype=ember.uint8))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        ember.Generator().set_state(ember.zeros(5056, dtype=ember.uint8))
    with pytest.raises(TypeError, match="RNG state must be"):
        ember.Generator().set_state(ember.zeros(5056))


def test_rand_stays_below_one_in_half():
    assert float(ember.rand(N, dtype=ember.float16).max()) < 1.0
