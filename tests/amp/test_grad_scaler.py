"""GradScaler against torch.amp.GradScaler('cpu'): the same scales, the same skipped
steps, the same parameters."""
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _pair(seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((3, 2)).astype(np.float32)
    e = ember.nn.Parameter(ember.tensor(w))
    t = torch.nn.Parameter(torch.tensor(w))
    return e, t


def _train(lib, param, scaler, steps, poison):
    opt = lib.optim.SGD([param], lr=0.1)
    scales, results = [], []
    x = lib.ones(4, 3)
    for i in range(steps):
        opt.zero_grad()
        loss = (x @ param).pow(2).mean()
        if i in poison:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        results.append(scaler.step(opt))
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, results


def test_scale_sequence_and_skipped_steps_match_torch():
    e, t = _pair()
    kwargs = dict(init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                  growth_interval=3)
    ours = _train(ember, e, ember.amp.GradScaler("cpu", **kwargs), 12, {2, 3, 8})
    theirs = _train(torch, t, torch.amp.GradScaler("cpu", **kwargs), 12, {2, 3, 8})
    assert ours[0] == theirs[0]
    assert ours[0][2] == 2.0 ** 15 and ours[0][3] == 2.0 ** 14
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-7)


def test_inf_step_leaves_parameters_unchanged():
    e, _ = _pair()
    before = e.detach().numpy().copy()
    scaler = ember.amp.GradScaler("cpu")
    opt = ember.optim.SGD([e], lr=0.1)
    (e.sum() * float("nan")).backward()
    assert scaler.step(opt) is None
    scaler.update()
    np.testing.assert_array_equal(e.detach().numpy(), before)
    assert scaler.get_scale() == 2.0 ** 15


def test_growth_stops_at_float32_max():
    e, _ = _pair()
    scaler = ember.amp.GradScaler("cpu", init_scale=2.0 ** 127, growth_interval=1)
    opt = ember.optim.SGD([e], lr=0.0)
    scaler.scale(e.sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 2.0 ** 127 and math.isfinite(scaler.get_scale())


def test_unscale_before_clipping_and_misuse_errors():
    e, _ = _pair()
    scaler = ember.amp.GradScaler("cpu", init_scale=4.0)
    opt = ember.optim.SGD([e], lr=0.1)
    scaler.scale(e.sum()).backward()
    assert e.grad.tolist() == [[4.0, 4.0]] * 3
    scaler.unscale_(opt)
    assert e.grad.tolist() == [[1.0, 1.0]] * 3
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)
    scaler.update()
    with pytest.raises(AssertionError, match="No inf checks"):
        scaler.update()
    with pytest.raises(RuntimeError, match="Closure"):
        scaler.step(opt, closure=lambda: None)
    with pytest.raises(ValueError, match="iterable of Tensors"):
        scaler.scale(3.0)


def test_fp16_parameters_are_refused():
    p = ember.nn.Parameter(ember.ones(2, dtype=ember.float16))
    scaler = ember.amp.GradScaler("cpu", init_scale=2.0)
    opt = ember.optim.SGD([p], lr=0.1)
    scaler.scale(p.sum()).backward()
    with pytest.raises(ValueError, match="FP16 gradients"):
        scaler.step(opt)


def test_state_dict_round_trip_matches_torch_keys():
    ours = ember.amp.GradScaler("cpu", init_scale=8.0, growth_interval=5)
    theirs = torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=5)
    assert ours.state_dict() == theirs.state_dict()
    other = ember.amp.GradScaler("cpu")
    other.load_state_dict(ours.state_dict())
    assert other.get_scale() == 8.0 and other.get_growth_interval() == 5
    with pytest.raises(RuntimeError, match="empty"):
        other.load_state_dict({})


def test_disabled_scaler_is_a_pass_through():
    e, _ = _pair()
    scaler = ember.amp.GradScaler("cpu", enabled=False)
    loss = e.sum()
    assert scaler.scale(loss) is loss
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {}


def test_bad_factors_raise():
    with pytest.raises(AssertionError, match="growth factor"):
        ember.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(AssertionError, match="backoff factor"):
        ember.amp.GradScaler("cpu", backoff_factor=1.5)


def test_scales_lists_of_outputs():
    scaler = ember.amp.GradScaler("cpu", init_scale=2.0)
    a, b = scaler.scale([ember.ones(1), ember.ones(1, dtype=ember.float16)])
    assert a.tolist() == [2.0] and b.dtype is ember.float16
