"""Module: registration, traversal, state_dict, device/dtype moves, hooks, repr."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import ember
import ember.nn as nn

from .compare import same_keys, same_repr


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.block = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
        self.register_buffer("steps", ember.zeros(2))
        self.register_buffer("scratch", ember.ones(1), persistent=False)
        self.scale = nn.Parameter(ember.ones(1))

    def forward(self, x):
        return self.block(self.act(self.fc1(x))) * self.scale


def test_registration_and_traversal():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "block.0.weight", "block.0.bias"]
    assert [n for n, _ in net.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "block"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "block", "block.0",
                                                   "block.1"]
    assert len(list(net.parameters(recurse=False))) == 1
    assert net.get_submodule("block.0") is net.block[0]
    assert net.get_parameter("block.0.bias") is net.block[0].bias
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        net.get_submodule("block.nope")
    with pytest.raises(AttributeError, match="is not an nn.Parameter"):
        net.get_parameter("steps")
    assert "fc1" in dir(net) and "steps" in dir(net)


def test_shared_parameters_are_listed_once_unless_asked():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]


def test_setattr_and_delattr():
    net = Net()
    net.fc1 = None
    assert net.fc1 is None and "fc1" in net._modules
    with pytest.raises(TypeError, match="cannot assign 'int' as child module"):
        net.block = 3
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter"):
        net.scale = ember.ones(1)
    net.steps = ember.ones(2)
    assert net._buffers["steps"] is net.steps
    del net.steps
    assert "steps" not in net._buffers
    net.plain = 3
    assert net.plain == 3
    net.buf = nn.Buffer(ember.ones(2), persistent=False)
    assert "buf" in net._buffers and "buf" not in net.state_dict()
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        net.missing
    with pytest.raises(AttributeError, match="before Module.__init__"):
        class Early(nn.Module):
            def __init__(self):
                self.w = nn.Parameter(ember.ones(1))
        Early()


def test_parameter_is_leaf_tensor_subclass():
    p = nn.Parameter(ember.ones(2, 3))
    assert isinstance(p, ember.Tensor) and p.is_leaf and p.requires_grad
    assert repr(p).startswith("Parameter containing:\ntensor(")
    q = nn.Parameter(ember.ones(2), requires_grad=False)
    assert not q.requires_grad
    y = (p * 2).sum()
    assert type(p * 2) is ember.Tensor
    y.backward()
    np.testing.assert_allclose(p.grad.numpy(), 2.0)
    clone = copy.deepcopy(p)
    assert isinstance(clone, nn.Parameter) and clone is not p


def test_state_dict_round_trip_keeps_parameter_identity():
    net = Net()
    other = Net()
    state = other.state_dict()
    assert list(state) == ["scale", "steps", "fc1.weight", "fc1.bias", "block.0.weight",
                           "block.0.bias"]
    assert "scratch" not in state
    assert not state["fc1.weight"].requires_grad
    weight = net.fc1.weight
    result = net.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert net.fc1.weight is weight
    np.testing.assert_array_equal(weight.detach().numpy(), other.fc1.weight.detach().numpy())
    assert weight.requires_grad
    kept = net.state_dict(keep_vars=True)
    assert kept["fc1.weight"] is weight
    assert list(net.state_dict(prefix="model.")) == ["model." + k for k in state]


def test_load_state_dict_strict_errors_list_keys():
    net = Net()
    state = net.state_dict()
    del state["fc1.bias"]
    state["block.9.weight"] = ember.ones(1)
    state["extra"] = ember.ones(1)
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(state)
    text = str(info.value)
    assert text.startswith("Error(s) in loading state_dict for Net:")
    assert 'Missing key(s) in state_dict: "fc1.bias".' in text
    # PyTorch's order: each module reports its own unexpected keys, root first
    assert 'Unexpected key(s) in state_dict: "extra", "block.9.weight".' in text
    result = net.load_state_dict(state, strict=False)
    assert result.missing_keys == ["fc1.bias"]
    assert result.unexpected_keys == ["extra", "block.9.weight"]
    state = net.state_dict()
    state["fc1.weight"] = ember.ones(2, 2)
    with pytest.raises(RuntimeError, match="size mismatch for fc1.weight: copying a param "
                                           "with shape"):
        net.load_state_dict(state, strict=False)


def test_train_eval_requires_grad_zero_grad_apply():
    net = Net()
    assert net.training and net.block[1].training
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net(ember.ones(2, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(not p.grad.numpy().any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Tanh", "Sequential", "Net"]


def test_apply_conversions_keep_parameter_objects():
    net = Net()
    weight = net.fc1.weight
    net(ember.ones(1, 3)).sum().backward()
    net.double()
    assert net.fc1.weight is weight and weight.dtype is ember.float64
    assert weight.grad.dtype is ember.float64
    assert net.steps.dtype is ember.float64
    net.to(ember.float32)
    assert weight.dtype is ember.float32
    net.to("cpu", dtype=ember.float64)
    assert weight.dtype is ember.float64
    net.float()
    net.register_buffer("count", ember.tensor(3))
    net.double()
    assert net.count.dtype is ember.int64  # only floating-point tensors change dtype
    net.to(ember.ones(1, dtype=ember.float64))
    assert weight.dtype is ember.float64
    with pytest.raises(TypeError, match="only accepts floating point"):
        net.to(ember.int32)


def test_forward_hooks_fire_with_arguments():
    lin = nn.Linear(2, 2)
    calls = []

    def pre(module, args):
        calls.append(("pre", module, args))
        return (args[0] * 2,)

    def post(module, args, output):
        calls.append(("post", args, output))
        return output + 1

    def post_kwargs(module, args, kwargs, output):
        calls.append(("post_kwargs", kwargs))

    h1 = lin.register_forward_pre_hook(pre)
    h2 = lin.register_forward_hook(post)
    h3 = lin.register_forward_hook(post_kwargs, with_kwargs=True)
    x = ember.ones(1, 2)
    out = lin(x)
    expected = ember.nn.functional.linear(x * 2, lin.weight, lin.bias) + 1
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy())
    assert calls[0][0] == "pre" and calls[0][1] is lin and calls[0][2][0] is x
    np.testing.assert_allclose(calls[1][1][0].numpy(), 2.0)  # the hook's replaced args
    assert calls[2] == ("post_kwargs", {})
    for h in (h1, h2, h3):
        h.remove()
    calls.clear()
    lin(x)
    assert calls == []


def test_forward_pre_hook_with_kwargs():
    lin = nn.Linear(2, 2)

    def pre(module, args, kwargs):
        return (args[0] * 0,), kwargs

    lin.register_forward_pre_hook(pre, with_kwargs=True)
    np.testing.assert_allclose(lin(ember.ones(1, 2)).detach().numpy(),
                               lin.bias.detach().numpy()[None])


def test_full_backward_hooks_match_torch():
    torch = pytest.importorskip("torch")
    records = {}

    def make(lib, nn_mod):
        model = nn_mod.Linear(3, 2).double()

        def hook(module, grad_input, grad_output):
            records.setdefault(lib, []).append(("hook", grad_input, grad_output))

        def pre(module, grad_output):
            records.setdefault(lib, []).append(("pre", grad_output))
        model.register_full_backward_hook(hook)
        model.register_full_backward_pre_hook(pre)
        return model

    tm, em = make("torch", torch.nn), make("ember", nn)
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = np.arange(6.0).reshape(2, 3)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    (tm(tx) ** 2).sum().backward()
    (em(ex) ** 2).sum().backward()
    t_rec, e_rec = records["torch"], records["ember"]
    assert [r[0] for r in e_rec] == [r[0] for r in t_rec] == ["pre", "hook"]
    np.testing.assert_allclose(e_rec[0][1][0].numpy(), t_rec[0][1][0].numpy())
    assert len(e_rec[1][1]) == len(t_rec[1][1]) == 1
    np.testing.assert_allclose(e_rec[1][1][0].numpy(), t_rec[1][1][0].numpy())
    np.testing.assert_allclose(e_rec[1][2][0].numpy(), t_rec[1][2][0].numpy())
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy())


def test_backward_hook_can_replace_grad_input_and_grad_output():
    lin = nn.Linear(2, 2)
    x = ember.ones(1, 2, requires_grad=True)
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0] * 0,))
    lin(x).sum().backward()
    assert not x.grad.numpy().any()
    assert lin.weight.grad.numpy().any()  # parameter gradients are not affected

    lin2 = nn.Linear(2, 2)
    x2 = ember.ones(1, 2, requires_grad=True)
    lin2.register_full_backward_pre_hook(lambda m, go: (go[0] * 0,))
    lin2(x2).sum().backward()
    assert not x2.grad.numpy().any() and not lin2.weight.grad.numpy().any()


def test_backward_hook_without_input_grad_gets_none():
    lin = nn.Linear(2, 2)
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))
    lin(ember.ones(1, 2)).sum().backward()
    assert len(seen) == 1 and seen[0][0] == (None,)
    np.testing.assert_allclose(seen[0][1][0].numpy(), 1.0)


def test_global_forward_hook():
    seen = []
    handle = nn.modules.register_module_forward_hook(lambda m, a, o: seen.append(type(m)))
    try:
        nn.Sequential(nn.ReLU())(ember.ones(1))
    finally:
        handle.remove()
    assert seen == [nn.ReLU, nn.Sequential]


def test_repr_and_keys_match_torch():
    torch = pytest.importorskip("torch")
    tn, en = torch.nn, nn
    for build in [
        lambda m: m.Sequential(m.Linear(2, 3), m.ReLU(), m.Sequential(m.Linear(3, 1),
                                                                      m.Sigmoid())),
        lambda m: m.ModuleList([m.Linear(2, 2) for _ in range(3)] + [m.ReLU()]),
        lambda m: m.ModuleDict({"a": m.Linear(1, 1), "b": m.Tanh()}),
    ]:
        t, e = build(tn), build(en)
        same_repr(t, e)
        same_keys(t, e)


def test_parameter_containers():
    torch = pytest.importorskip("torch")
    tp = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2, 3)), torch.ones(4)])
    ep = nn.ParameterList([nn.Parameter(ember.ones(2, 3)), ember.ones(4)])
    same_repr(tp, ep)
    assert isinstance(ep[1], nn.Parameter) and len(ep) == 2
    assert list(ep.state_dict()) == ["0", "1"]
    td = torch.nn.ParameterDict({"w": torch.nn.Parameter(torch.ones(2))})
    ed = nn.ParameterDict({"w": nn.Parameter(ember.ones(2))})
    same_repr(td, ed)
    ed["b"] = ember.zeros(3)
    assert list(ed.keys()) == ["w", "b"] and isinstance(ed["b"], nn.Parameter)
    assert [n for n, _ in ed.named_parameters()] == ["w", "b"]


def test_sequential_indexing_slicing_append():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear)
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and len(sub) == 2
    assert list(sub._modules) == ["1", "2"]  # PyTorch keeps the original keys
    seq.append(nn.Sigmoid())
    assert len(seq) == 4 and isinstance(list(seq)[3], nn.Sigmoid)
    del seq[0]
    assert list(seq._modules) == ["0", "1", "2"]
    with pytest.raises(IndexError):
        seq[10]
    out = nn.Sequential(nn.Linear(2, 2))(ember.ones(3, 2))
    assert out.shape == (3, 2)


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.ReLU()])
    ml.append(nn.Tanh())
    ml.extend([nn.Sigmoid()])
    ml.insert(0, nn.Identity())
    assert [type(m).__name__ for m in ml] == ["Identity", "ReLU", "Tanh", "Sigmoid"]
    assert isinstance(ml[-1], nn.Sigmoid)
    md = nn.ModuleDict({"a": nn.ReLU()})
    md["b"] = nn.Tanh()
    assert list(md.keys()) == ["a", "b"] and "a" in md and len(md) == 2
    assert md.pop("a").__class__ is nn.ReLU


def test_call_without_hooks_goes_to_forward():
    class Count(nn.Module):
        def forward(self, x, scale=1):
            return x * scale
    m = Count()
    assert m(ember.ones(1), scale=3).item() == 3


def test_missing_forward_raises():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(ember.ones(1))


def test_deepcopy_module_is_independent():
    net = Net()
    clone = copy.deepcopy(net)
    assert clone.fc1.weight is not net.fc1.weight
    np.testing.assert_array_equal(clone.fc1.weight.detach().numpy(),
                                  net.fc1.weight.detach().numpy())
    with ember.no_grad():
        clone.fc1.weight.fill_(0)
    assert net.fc1.weight.detach().numpy().any()


def test_load_state_dict_assign_replaces_tensors():
    net = nn.Linear(2, 2)
    frozen = nn.Linear(2, 2).requires_grad_(False)
    new_weight = ember.ones(2, 2, dtype=ember.float64)
    frozen.load_state_dict({"weight": new_weight, "bias": ember.zeros(2)}, assign=True)
    assert isinstance(frozen.weight, nn.Parameter) and frozen.weight.dtype is ember.float64
    assert not frozen.weight.requires_grad
    net.load_state_dict(frozen.state_dict(), assign=True)
    assert net.weight.requires_grad


def test_state_dict_and_load_hooks():
    lin = nn.Linear(2, 2)
    seen = []
    lin.register_state_dict_pre_hook(lambda m, prefix, keep_vars: seen.append(("pre", prefix)))
    lin.register_state_dict_post_hook(
        lambda m, sd, prefix, md: seen.append(("post", prefix, list(sd))))
    nn.Sequential(lin).state_dict()
    assert seen == [("pre", "0."), ("post", "0.", ["0.weight", "0.bias"])]

    def forgive(module, keys):
        keys.unexpected_keys.clear()
    lin.register_load_state_dict_post_hook(forgive)
    state = lin.state_dict()
    state["junk"] = ember.ones(1)
    result = lin.load_state_dict(state)  # the hook emptied the list: no strict error
    assert result.unexpected_keys == []


def test_always_call_forward_hook_runs_when_forward_fails():
    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    seen = []
    m = Broken()
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(ember.ones(1))
    assert seen == [None]


def test_train_calls_overridden_train_of_children():
    class FrozenNorm(nn.BatchNorm1d):
        def train(self, mode=True):
            return super().train(False)

    model = nn.Sequential(nn.Linear(2, 2), FrozenNorm(2))
    model.train()
    assert model.training and model[0].training and not model[1].training


def test_small_model_trains_like_a_pytorch_tutorial():
    torch = ember  # the tutorial spelling
    torch.manual_seed(0)
    x = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = torch.tensor([0, 1, 1, 0])
    model = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 2))
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(200):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.05
    assert (model(x).argmax(dim=1) == y).all()


def test_extra_state_round_trip():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(1, 1)
            self.calls = 0

        def get_extra_state(self):
            return {"calls": self.calls}

        def set_extra_state(self, state):
            self.calls = state["calls"]

    a, b = Counter(), Counter()
    a.calls = 5
    state = a.state_dict()
    assert list(state) == ["_extra_state", "lin.weight", "lin.bias"]
    b.load_state_dict(state)
    assert b.calls == 5
    del state["_extra_state"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        b.load_state_dict(state)


def test_data_parallel_wraps_like_torch():
    torch = pytest.importorskip("torch")
    e = nn.DataParallel(nn.Linear(2, 2))
    t = torch.nn.DataParallel(torch.nn.Linear(2, 2))
    same_repr(t, e)
    same_keys(t, e)
    assert e(ember.ones(3, 2)).shape == (3, 2)


def test_gradient_penalty_double_backward_matches_torch():
    torch = pytest.importorskip("torch")
    from .compare import copy_weights

    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    e = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    t, e = t.double(), e.double()
    copy_weights(t, e)
    x = np.random.default_rng(0).uniform(-1, 1, (5, 3))
    results = []
    for lib, model in ((torch, t), (ember, e)):
        inp = lib.tensor(x, requires_grad=True)
        (grad,) = lib.autograd.grad(model(inp).sum(), inp, create_graph=True)
        ((grad * grad).sum()).backward()
        results.append([None if p.grad is None else p.grad.detach().numpy()
                        for p in model.parameters()])
    for a, b in zip(*results):
        if a is None:  # the last bias does not reach d(output)/d(input)
            assert b is None or not b.any()
        else:
            np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_missing_super_init_is_explained():
    class Forgot(nn.Module):
        def __init__(self):
            pass

        def forward(self, x):
            return x

    with pytest.raises(AttributeError, match="must call super\\(\\).__init__\\(\\)"):
        Forgot()(ember.ones(1))


def test_unexpected_keys_match_torch_for_none_entries_and_deep_names():
    torch = pytest.importorskip("torch")
    t_model = torch.nn.Sequential(torch.nn.Linear(2, 2, bias=False))
    e_model = nn.Sequential(nn.Linear(2, 2, bias=False))
    t_state = {"0.weight": torch.ones(2, 2), "0.bias": torch.ones(2),
               "0.weight.extra": torch.ones(1), "1.weight": torch.ones(1)}
    e_state = {k: ember.tensor(v.numpy()) for k, v in t_state.items()}
    expected = t_model.load_state_dict(t_state, strict=False)
    got = e_model.load_state_dict(e_state, strict=False)
    assert got.unexpected_keys == expected.unexpected_keys
    assert got.missing_keys == expected.missing_keys
