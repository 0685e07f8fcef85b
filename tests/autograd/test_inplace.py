"""In-place ops, version counters shared by views, and their errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember


def test_inplace_on_leaf_requiring_grad_raises_with_the_fix():
    w = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"leaf Variable that requires grad.*no_grad\(\)"):
        w.add_(1)
    with ember.no_grad():
        w.add_(1)
        w -= 0.5
    assert w.tolist() == [1.5, 1.5, 1.5]


def test_version_counter_shared_by_views():
    x = ember.zeros(2, 3)
    v = x[0]
    r = x.view(6)
    t = x.t()
    assert x._version == 0
    v.add_(1)
    assert x._version == v._version == r._version == t._version == 1
    assert x.tolist() == [[1, 1, 1], [0, 0, 0]]
    r[5] = 9
    assert x[1, 2].item() == 9 and x._version == 2


def test_new_tensors_share_one_read_only_counter_until_a_change():
    # no counter is made per op: new tensors read one shared, read-only version 0
    a, b = ember.ones(2) + 1, ember.ones(2) * 2
    assert a._version_counter is b._version_counter and a._version == 0
    with pytest.raises(AttributeError):  # a write through it would change every tensor
        a._version_counter.value += 1
    a.add_(1)  # the change gives a its own counter first
    assert a._version == 1 and b._version == 0
    c = ember.ones(2) - 1
    d = c.detach()  # sharing a counter gives both the same real one
    e = c[1:]
    d.mul_(3)
    assert c._version == d._version == e._version == 1
    with ember.no_grad():
        f = ember.ones(2) + 1
    f.add_(1)
    assert f._version == 1 and f._version_counter.no_grad and not f.is_inference()
    with ember.inference_mode():
        g = ember.ones(2) + 1
    assert g.is_inference() and not (ember.ones(2) + 1).is_inference()


def test_no_module_shares_a_counter_without_counter_of():
    # ``t._version_counter = other._version_counter`` would share the read-only one: a
    # bump through one tensor would then miss the other (a silent wrong version check)
    import pathlib
    import re

    src = pathlib.Path(ember.__file__).parent
    pattern = re.compile(r"_version_counter\s*=\s*[\w.\[\]]+\._version_counter\b")
    offenders = [f"{path.relative_to(src)}:{n}" for path in src.rglob("*.py")
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if pattern.search(line)]
    assert offenders == []


INFERENCE_CASES = {
    "in-place outside inference_mode": lambda lib, t, w: t.add_(1),
    "assignment outside inference_mode": lambda lib, t, w: t.__setitem__(0, 3.0),
    "its version": lambda lib, t, w: t._version,
    "saved for backward": lambda lib, t, w: (w * t).sum().backward(),
    "requires_grad_ outside inference_mode": lambda lib, t, w: t.requires_grad_(),
}


@pytest.mark.parametrize("case", sorted(INFERENCE_CASES))
def test_inference_tensors_refuse_what_pytorch_refuses(case):
    torch = pytest.importorskip("torch")
    for lib in (torch, ember):
        with lib.inference_mode():
            t = lib.ones(2) + 1
        w = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="[Ii]nference tensor"):
            INFERENCE_CASES[case](lib, t, w)


def test_inference_tensors_allow_what_pytorch_allows():
    with ember.inference_mode():
        t = ember.ones(2) + 1
        t.add_(1)  # in-place inside inference_mode
    w = ember.ones(2, requires_grad=True)
    (w + t).sum().backward()  # an addition saves nothing
    assert w.grad.tolist() == [1.0, 1.0] and t.tolist() == [3.0, 3.0]
    c = t.clone()  # a clone is a normal tensor
    c.add_(1)
    assert c._version == 1 and not c.is_inference()
    (w * c).sum().backward()
    assert w.grad.tolist() == [5.0, 5.0]


def test_is_view_and_base_as_in_pytorch():
    a = ember.ones(3)
    b = a[1:]
    d = b.view(2)  # a view of a view has the first tensor as its base
    assert not a._is_view() and b._is_view() and d._is_view()
    assert b._base is a and d._base is a
    assert not (a + 1)._is_view() and not b.clone()._is_view()


def test_modified_saved_tensor_raises_naming_op_and_versions():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    z = y.exp()
    y.mul_(3)  # exp saved its output, not y: still fine
    z.sum().backward()
    a = ember.ones(3, requires_grad=True)
    b = a.exp()
    c = b.exp()
    b.add_(1)
    with pytest.raises(RuntimeError, match=r"ExpBackward0.*version 1; expected version 0"):
        c.sum().backward()


def test_inplace_ops_track_gradients():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    y.mul_(2)
    y += 1
    y.pow_(2)
    y.sum().backward()
    # d/dx (2x + 1)^2 = 4 (2x + 1)
    assert x.grad.tolist() == [12.0, 20.0, 28.0]
    assert y.grad_fn.name() == "PowBackward0"


def test_inplace_through_view_updates_base_gradient():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (ember, torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        w = lib.tensor([5.0, 6.0], requires_grad=True)
        y = x * 1
        y[0] = w * 2
        y[1].mul_(w)
        (y * y).sum().backward()
        results.append((x.grad.tolist(), w.grad.tolist(), y.grad_fn.name()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1])
    assert results[0][2] == "CopySlices"


def test_setitem_with_tensor_value_requiring_grad():
    w = ember.tensor(2.0, requires_grad=True)
    y = ember.zeros(3)
    y[1] = w
    (y * ember.tensor([1.0, 5.0, 1.0])).sum().backward()
    assert w.grad.item() == 5.0


def test_zero_fill_copy():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.zero_()
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    z = ember.empty(2, 2)
    z.fill_(3)
    z.copy_(ember.tensor([1, 2]))  # broadcast and cast int64 -> float32
    assert z.tolist() == [[1.0, 2.0], [1.0, 2.0]] and z.dtype is ember.float32
    src = ember.tensor([1.0, 2.0], requires_grad=True)
    dst = ember.zeros(2, 2)
    dst.copy_(src)
    dst.sum().backward()
    assert src.grad.tolist() == [2.0, 2.0]


def test_inplace_dtype_and_shape_rules():
    i = ember.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.add_(0.5)
    f = ember.zeros(3)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        f.add_(ember.ones(2, 3))
    f.add_(ember.tensor([1, 2, 3]))
    assert f.tolist() == [1.0, 2.0, 3.0]


def test_products_keep_only_what_their_gradients_read():
    # as in PyTorch: x * 0.5 reads no tensor back, y * w reads w for y's gradient only
    torch = pytest.importorskip("torch")

    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        y = x * 1.0
        z = y * 0.5 + y / 4.0
        y.add_(1)  # z's backward reads neither y nor its version
        z.sum().backward()
        assert x.grad.tolist() == [0.75, 0.75, 0.75]
        w = lib.full((3,), 2.0)  # needs no gradient: y is not kept for it
        y2 = x * 1.0
        out = w * y2
        y2.add_(1)
        out.sum().backward()
        assert x.grad.tolist() == [2.75, 2.75, 2.75]
        w.add_(1)  # but w is kept for y2's gradient
        y3 = x * 1.0
        out = y3 * w
        w.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()
