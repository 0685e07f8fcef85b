"""Layouts and views against PyTorch: the strides of copies (clone, contiguous and the
*_like factories keep a tensor's layout by default), indices with several ellipses, and
in-place writes into views whose elements share memory. Each case runs with T = ember
and T = torch (tests/ops/oracle.py); strides come back as tensors, so that they are
compared with the values."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from tests.ops.oracle import raises, table_tests

E = Ellipsis


def layout(T, t):
    """``t``'s strides, whether it is contiguous, and its values: what the cases compare."""
    return T.tensor(t.stride(), dtype=T.int64), T.tensor(t.is_contiguous()), t


# ----------------------------------------------------------------------------- inputs
def transposed(T):
    return T.arange(6.0).reshape(2, 3).t()


def permuted_3d(T):
    return T.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)


def permuted_4d(T):
    return T.arange(24.0).reshape(1, 2, 3, 4).permute(3, 1, 0, 2)


def size_one_inside(T):
    return T.arange(6.0).reshape(3, 1, 2).permute(2, 1, 0)


def nchw_channels_last(T):
    return T.arange(120.0).reshape(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(
        0, 3, 1, 2)


def stepped_transposed(T):
    return T.arange(24.0).reshape(4, 6)[:, ::2].t()  # neither dense nor row-major


def stepped_channels_last(T):
    return nchw_channels_last(T)[:, :, ::2]


def expanded_transposed(T):
    return transposed(T).unsqueeze(0).expand(2, 3, 2)  # stride 0 stays in place


def equal_strides(T):
    return T.arange(24.0).as_strided((3, 4), (4, 4))  # a tie: the smaller size goes inside


# (name, input, the strides PyTorch gives its copies)
LAYOUTS = [("transposed", transposed, (1, 3)), ("permuted 3-d", permuted_3d, (1, 12, 4)),
           ("permuted 4-d", permuted_4d, (1, 12, 24, 4)),
           ("size-1 dim inside", size_one_inside, (1, 2, 2)),
           ("channels_last input", nchw_channels_last, (60, 1, 15, 3)),
           ("sliced with a step", stepped_transposed, (1, 3)),
           ("channels_last sliced", stepped_channels_last, (30, 1, 15, 3)),
           ("expanded", expanded_transposed, (6, 1, 3)),
           ("equal strides", equal_strides, (1, 3))]


def _seeded(T, function, *args, **kwargs):
    T.manual_seed(0)
    return function(*args, **kwargs)


def _clone_gradient(T):
    x = T.arange(6.0, requires_grad=True)
    y = x.reshape(2, 3).t().clone()
    (y * T.arange(6.0).reshape(3, 2)).sum().backward()
    return layout(T, y.detach()) + (x.grad,)


COPIES = [(f"clone {name}", lambda T, make=make: layout(T, make(T).clone()), None)
          for name, make, _ in LAYOUTS]
COPIES += [(f"empty_like {name}",
            lambda T, make=make: T.tensor(T.empty_like(make(T)).stride()), None)
           for name, make, _ in LAYOUTS]
COPIES += [
    ("zeros_like", lambda T: layout(T, T.zeros_like(permuted_3d(T))), None),
    ("ones_like", lambda T: layout(T, T.ones_like(nchw_channels_last(T))), None),
    ("full_like", lambda T: layout(T, T.full_like(stepped_transposed(T), 2.5)), None),
    ("rand_like draws in memory order",
     lambda T: layout(T, _seeded(T, T.rand_like, T.empty(5, 7).t())), None),
    ("randn_like draws a non-contiguous tensor one by one",
     lambda T: layout(T, _seeded(T, T.randn_like, T.empty(5, 7).t())), None),
    ("randn_like float64", lambda T: layout(
        T, _seeded(T, T.randn_like, T.empty(4, 5, dtype=T.float64).t())), None),
    ("randn_like channels_last", lambda T: layout(
        T, _seeded(T, T.randn_like, nchw_channels_last(T))), None),
    ("randint_like", lambda T: layout(T, _seeded(T, T.randint_like, T.empty(5, 7).t(), 10)),
     None),
    ("randint_like low high", lambda T: layout(
        T, _seeded(T, T.randint_like, permuted_3d(T), 3, 9)), None),
    ("empty_like dtype keeps strides in elements",
     lambda T: T.tensor(T.empty_like(transposed(T), dtype=T.float64).stride()), None),
    ("zeros_like int to float16", lambda T: layout(
        T, T.zeros_like(T.arange(6, dtype=T.int32).reshape(2, 3).t(), dtype=T.float16)), None),
    ("clone gradient", _clone_gradient, None),
    # explicit memory formats
    ("clone channels_last", lambda T: layout(
        T, T.arange(120.0).reshape(2, 3, 4, 5).clone(memory_format=T.channels_last)), None),
    ("clone channels_last of a transposed", lambda T: layout(
        T, T.arange(120.0).reshape(2, 3, 5, 4).transpose(2, 3).clone(
            memory_format=T.channels_last)), None),
    ("clone channels_last_3d", lambda T: T.tensor(T.ones(2, 3, 4, 5, 6).clone(
        memory_format=T.channels_last_3d).stride()), None),
    ("clone channels_last size-1 and 0 dims", lambda T: (
        T.tensor(T.ones(2, 1, 1, 3).clone(memory_format=T.channels_last).stride()),
        T.tensor(T.ones(2, 0, 3, 4).clone(memory_format=T.channels_last).stride())), None),
    ("empty_like channels_last", lambda T: T.tensor(T.empty_like(
        T.ones(2, 3, 4, 5), memory_format=T.channels_last).stride()), None),
    ("zeros_like channels_last of channels_last sliced", lambda T: layout(
        T, T.zeros_like(stepped_channels_last(T), memory_format=T.channels_last)), None),
    ("clone channels_last of 3-d", lambda T: T.ones(2, 3, 4).clone(
        memory_format=T.channels_last), raises("required rank 4 tensor to use channels_last")),
    ("empty_like channels_last of 5-d", lambda T: T.empty_like(
        T.ones(2, 3, 4, 5, 6), memory_format=T.channels_last), raises("required rank 4")),
    ("clone channels_last_3d of 4-d", lambda T: T.ones(2, 3, 4, 5).clone(
        memory_format=T.channels_last_3d), raises("required rank 5")),
    ("clone memory_format int", lambda T: T.ones(2).clone(memory_format=1),
     raises("argument 'memory_format' must be")),
    ("contiguous channels_last", lambda T: layout(
        T, T.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=T.channels_last)),
     None),
    ("contiguous channels_last keeps a channels_last tensor", lambda T: (
        lambda x: T.tensor(x.contiguous(memory_format=T.channels_last) is x))(
            nchw_channels_last(T)), None),
    ("contiguous channels_last of 2-d", lambda T: T.ones(2, 3).contiguous(
        memory_format=T.channels_last), raises("required rank 4")),
    ("contiguous preserve_format", lambda T: transposed(T).contiguous(
        memory_format=T.preserve_format), raises("preserve memory format is unsupported")),
    ("empty channels_last", lambda T: T.tensor(T.empty(
        2, 3, 4, 5, memory_format=T.channels_last).stride()), None),
    ("empty channels_last_3d", lambda T: T.tensor(T.empty(
        (2, 3, 4, 5, 6), memory_format=T.channels_last_3d).stride()), None),
    ("empty channels_last of 3-d", lambda T: T.empty(2, 3, 4, memory_format=T.channels_last),
     raises("required rank 4")),
    ("empty preserve_format", lambda T: T.empty(2, 3, memory_format=T.preserve_format),
     raises("unsupported memory format")),
    ("contiguous channels_last_3d of 3-d", lambda T: T.ones(2, 3, 4).contiguous(
        memory_format=T.channels_last_3d), raises("required rank 5")),
    ("to channels_last", lambda T: layout(
        T, T.arange(120.0).reshape(2, 3, 4, 5).to(memory_format=T.channels_last)), None),
    ("to float64 channels_last", lambda T: layout(
        T, T.arange(120.0).reshape(2, 3, 4, 5).to(T.float64, memory_format=T.channels_last)),
     None),
    ("to contiguous_format of a channels_last tensor", lambda T: layout(
        T, nchw_channels_last(T).to(memory_format=T.contiguous_format)), None),
    ("to channels_last of 2-d", lambda T: T.ones(2, 3).to(memory_format=T.channels_last),
     raises("required rank 4")),
]

COPY_GUARDS = [
    ("clone contiguous", lambda T: layout(T, T.arange(6.0).reshape(2, 3).clone()), None),
    ("clone 0-d", lambda T: layout(T, T.tensor(3.0).clone()), None),
    ("clone expanded row", lambda T: layout(T, T.arange(3.0).expand(2, 3).clone()), None),
    ("clone sliced 1-d", lambda T: layout(T, T.arange(12.0)[::2].clone()), None),
    ("clone overlapping windows", lambda T: layout(T, T.arange(4.0).unfold(0, 2, 1).clone()),
     None),
    ("clone diagonal", lambda T: layout(T, T.arange(9.0).reshape(3, 3).diagonal().clone()),
     None),
    ("clone contiguous_format", lambda T: layout(
        T, transposed(T).clone(memory_format=T.contiguous_format)), None),
    ("zeros_like contiguous_format", lambda T: layout(
        T, T.zeros_like(permuted_3d(T), memory_format=T.contiguous_format)), None),
    ("contiguous of a transposed", lambda T: layout(T, transposed(T).contiguous()), None),
    ("rand_like contiguous", lambda T: layout(T, _seeded(T, T.rand_like, T.empty(4, 5))), None),
    ("randn_like contiguous", lambda T: layout(T, _seeded(T, T.randn_like, T.empty(5, 7))),
     None),
    ("to channels_last of a channels_last tensor is the tensor", lambda T: (
        lambda x: T.tensor(x.to(memory_format=T.channels_last) is x))(nchw_channels_last(T)),
     None),
    ("to contiguous_format of a transposed is the tensor", lambda T: (lambda x: T.tensor(
        x.to(memory_format=T.contiguous_format) is x))(transposed(T)), None),
    ("to contiguous_format is the tensor", lambda T: (lambda x: T.tensor(
        x.to(memory_format=T.contiguous_format) is x))(T.ones(2, 3)), None),
    ("to preserve_format is the tensor", lambda T: (lambda x: T.tensor(
        x.to(memory_format=T.preserve_format) is x))(transposed(T)), None),
]

test_copies_match_torch, test_copies_still_match_torch = table_tests(COPIES, COPY_GUARDS)


# ----------------------------------------------------------------------------- ellipses
def cube(T):
    return T.arange(24.0).reshape(2, 3, 4)


def _read(index):
    return lambda T: layout(T, cube(T)[index(T) if callable(index) else index])


def _written(index, value):
    def case(T):
        y = T.zeros(2, 3, 4)
        y[index(T) if callable(index) else index] = value(T) if callable(value) else value
        return y
    return case


def _read_gradient(T):
    x = T.arange(24.0, requires_grad=True)
    y = x.reshape(2, 3, 4) * 1
    (y[E, 1, E] * T.arange(6.0).reshape(2, 3)).sum().backward()
    return x.grad


def _write_gradient(T):
    x = T.arange(24.0, requires_grad=True)
    v = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.reshape(2, 3, 4) * 1
    y[E, 0, E] = v * 2  # every y[..., 0] row gets 2 * v
    (y * T.arange(24.0).reshape(2, 3, 4)).sum().backward()
    return y.detach(), x.grad, v.grad


ELLIPSES = [
    ("two ellipses", _read((E, E)), None),
    ("three ellipses", _read((E, E, E)), None),
    ("int between", _read((E, 0, E)), None),
    ("int first", _read((0, E, E)), None),
    ("slice between", _read((E, slice(None, None, 2), E)), None),
    ("ints around", _read((E, 1, 2, E, 3)), None),
    ("ints and ellipses", _read((1, E, 2, E, 3)), None),
    ("one element", _read((E, 1, E, 1, E, 1, E)), None),
    ("all dims then ellipses", _read((E, 1, 2, 3, E)), None),
    ("list between", _read((E, [0, 1], E)), None),
    ("tensor between", _read(lambda T: (E, T.tensor([0, 2]), E)), None),
    ("mask between", _read(lambda T: (E, T.tensor([True, False, True, True]), E)), None),
    ("0-d", lambda T: T.tensor(5.0)[E, E], None),
    ("0-d None between", lambda T: T.tensor(5.0)[E, None, E], None),
    ("None between, values", lambda T: cube(T)[E, None, E], None),
    ("write int between", _written((E, 0, E), 1.0), None),
    ("write everything", _written((E, E), 2.0), None),
    ("write list between", _written((E, [0, 1], E), 3.0), None),
    ("write tensor value", _written((E, 1, E), lambda T: T.arange(6.0).reshape(2, 3)), None),
    ("read gradient", _read_gradient, None),
    ("write gradient", _write_gradient, None),
]

ELLIPSIS_GUARDS = [
    ("one ellipsis", _read((E, 0)), None),
    ("one ellipsis first", _read((0, E)), None),
    ("too many indices", _read((E, 1, 2, 3, 4, E)), raises("too many indices")),
    # IndexError before the fix too (any second ellipsis), still one now: these index
    # past the last dim (PyTorch reads a size beyond its shape for the message)
    ("index after the second", _read((E, E, 0)), raises()),
    ("int after the second", _read((E, 0, E, 1)), raises()),
    ("None after the second", _read((None, E, E, None)), raises()),
    ("write after the second", _written((E, E, 0), 1.0), raises()),
]

test_ellipses_match_torch, test_ellipses_still_match_torch = table_tests(
    ELLIPSES, ELLIPSIS_GUARDS)


# ----------------------------------------------------------------------------- writes
def _through(view, write, grad=True):
    """Write into ``view(y)`` (y = x * 1, x a leaf): y and x's gradient."""
    def case(T):
        x = T.arange(6.0, requires_grad=grad)
        y = x * 1
        write(T, view(y))
        if not grad:
            return y
        (y * T.arange(1.0, 7.0)).sum().backward()
        return y.detach(), x.grad
    return case


WRITES = [
    ("add_ to a window of overlapping windows",
     _through(lambda y: y.unfold(0, 2, 1)[1], lambda T, v: v.add_(T.tensor([10.0, 20.0]))),
     None),
    ("mul_ a column of overlapping windows",
     _through(lambda y: y.unfold(0, 3, 1)[:, 0], lambda T, v: v.mul_(3)), None),
    ("fill_ an element of overlapping windows",
     _through(lambda y: y.unfold(0, 2, 1)[2, 1], lambda T, v: v.fill_(9.0)), None),
    ("setitem into a window of overlapping windows",
     _through(lambda y: y.unfold(0, 4, 1)[1], lambda T, v: v.__setitem__(slice(1, 3), 7.0)),
     None),
    ("copy_ into a window, no grad",
     _through(lambda y: y.unfold(0, 2, 1)[0], lambda T, v: v.copy_(T.tensor([5.0, 6.0])),
              grad=False), None),
    ("uniform_ into a window", lambda T: (
        lambda y: (T.manual_seed(0), y.unfold(0, 2, 1)[2].uniform_(), y)[2])(T.zeros(5)), None),
    ("one window of its whole dim",
     _through(lambda y: y[:2].unfold(0, 2, 1), lambda T, v: v.mul_(4)), None),
    ("a row of an expanded view",
     _through(lambda y: y[:3].expand(2, 3)[1], lambda T, v: v.sub_(1)), None),
    ("setitem into a row of an expanded view",
     _through(lambda y: y[:3].expand(2, 3)[0], lambda T, v: v.__setitem__(0, 8.0)), None),
    ("from_numpy of a broadcast array",
     lambda T: T.from_numpy(np.broadcast_to(np.zeros(3), (2, 3))).add_(1),
     raises("more than one element of the written-to tensor refers to a single memory")),
    ("as_tensor of a broadcast array",
     lambda T: T.as_tensor(np.broadcast_to(np.zeros(3), (2, 3))).mul_(2),
     raises("more than one element of the written-to tensor refers to a single memory")),
]

WRITE_GUARDS = [
    ("add_ to a diagonal",
     _through(lambda y: y.reshape(2, 3)[:, :2].diagonal(), lambda T, v: v.add_(1)), None),
    ("mul_ windows that don't overlap",
     _through(lambda y: y.unfold(0, 2, 2), lambda T, v: v.mul_(T.tensor([2.0, 3.0]))), None),
    ("mul_ windows with gaps",
     _through(lambda y: y.unfold(0, 2, 3), lambda T, v: v.mul_(T.tensor([2.0, 3.0]))), None),
    ("as_strided that doesn't overlap",
     _through(lambda y: y.as_strided((2, 3), (1, 2)), lambda T, v: v.mul_(2), grad=False),
     None),
    ("an expanded view with no repeated dim",
     _through(lambda y: y.reshape(6, 1).expand(6, 1), lambda T, v: v.add_(1)), None),
    ("as_strided with stride 0",
     lambda T: T.zeros(4).as_strided((3, 2), (0, 1)).add_(1),
     raises("more than one element of the written-to tensor refers to a single memory")),
]

test_writes_match_torch, test_writes_still_match_torch = table_tests(WRITES, WRITE_GUARDS)


# PyTorch writes into overlapping views (unfold with a step below the size, as_strided) in
# whatever order its kernels visit the elements, so the results depend on that order; ember
# refuses every such write, as it does for expanded views
def _windows(device):
    return ember.arange(5.0, device=device).unfold(0, 2, 1)


OVERLAPPING_WRITES = {
    "add_": lambda v: v.add_(1),
    "__iadd__": lambda v: v.__iadd__(1),
    "mul_ by a tensor": lambda v: v.mul_(ember.ones(2, device=v.device)),
    "exp_": lambda v: v.exp_(),
    "clamp_": lambda v: v.clamp_(0, 1),
    "fill_": lambda v: v.fill_(1.0),
    "zero_": lambda v: v.zero_(),
    "copy_": lambda v: v.copy_(ember.ones(4, 2, device=v.device)),
    "setitem": lambda v: v.__setitem__(0, 5.0),
    "setitem everything": lambda v: v.__setitem__(E, 5.0),
    "setitem list": lambda v: v.__setitem__([0, 2], 5.0),
    "setitem tracked": lambda v: v.__setitem__(0, ember.ones(2, device=v.device,
                                                               requires_grad=True)),
    "index_fill_": lambda v: v.index_fill_(0, ember.tensor([0], device=v.device), 1.0),
    "masked_fill_": lambda v: v.masked_fill_(ember.ones(4, 2, dtype=ember.bool,
                                                        device=v.device), 1.0),
    "uniform_": lambda v: v.uniform_(),
    "normal_": lambda v: v.normal_(),
    "bernoulli_": lambda v: v.bernoulli_(),
    "random_": lambda v: v.random_(3),
    "out=": lambda v: ember.add(ember.ones(4, 2, device=v.device), 1, out=v),
    "relu inplace": lambda v: ember.nn.functional.relu(v, inplace=True),
    "detached": lambda v: v.detach().add_(1),
    "under no_grad": lambda v: ember.no_grad()(lambda: v.mul_(2))(),
    "nn.init.constant_": lambda v: ember.nn.init.constant_(v, 1.0),
    "nn.init.normal_": lambda v: ember.nn.init.normal_(v),
}


@pytest.mark.parametrize("write", list(OVERLAPPING_WRITES), ids=list(OVERLAPPING_WRITES))
def test_writes_into_overlapping_windows_are_refused(write, device):
    windows = _windows(device)
    with pytest.raises(RuntimeError, match="refers to a single memory location") as error:
        OVERLAPPING_WRITES[write](windows)
    assert "Please clone() the tensor" in str(error.value)
    assert windows._base.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]  # nothing was written


def test_writes_into_overlapping_as_strided_are_refused(device):
    base = ember.zeros(5, device=device)
    with pytest.raises(RuntimeError, match="its elements overlap"):
        base.as_strided((3, 2), (1, 1)).add_(1)
    with pytest.raises(RuntimeError, match="its elements overlap"):
        base.as_strided((2, 3), (2, 1))[...] = 1.0  # one shared element: base[2]
    base[:4].as_strided((2, 2), (1, 2)).add_(1)  # every element once
    assert base.tolist() == [1.0, 1.0, 1.0, 1.0, 0.0]
    # i * 2 + j * 3 for i < 3, j < 2 lands on six distinct elements: writable
    base = ember.zeros(8, device=device)
    base.as_strided((3, 2), (2, 3)).add_(ember.arange(1.0, 7.0, device=device).reshape(3, 2))
    assert base.tolist() == [1.0, 0.0, 3.0, 2.0, 5.0, 4.0, 0.0, 6.0]


def test_read_only_numpy_memory_is_not_written():
    array = np.arange(3.0)
    array.flags.writeable = False
    t = ember.from_numpy(array)
    with pytest.raises(RuntimeError, match="read-only"):
        t.add_(1)
    with pytest.raises(RuntimeError, match="read-only"):
        t[0] = 5.0
    assert array.tolist() == [0.0, 1.0, 2.0]


# ----------------------------------------------------------------------------- devices
@pytest.mark.parametrize("name, make, expected", LAYOUTS, ids=[name for name, *_ in LAYOUTS])
def test_copies_keep_the_layout_on_every_device(name, make, expected, device):
    ember.set_default_device(device)  # made there: a move to a device makes a new layout
    try:
        x = make(ember)
    finally:
        ember.set_default_device(None)
    assert x.device.type == device
    for copy in (x.clone(), ember.empty_like(x), ember.zeros_like(x), ember.rand_like(x),
                 ember.randn_like(x), ember.full_like(x, 2.0), ember.randint_like(x, 4)):
        assert copy.device == x.device and copy.stride() == expected, name
    assert x.clone().tolist() == x.tolist()
    assert ember.full_like(x, 2.0).eq(2).all().item()


def test_channels_last_on_every_device(device):
    x = ember.arange(120.0, device=device).reshape(2, 3, 4, 5)
    for copy in (x.clone(memory_format=ember.channels_last),
                 x.contiguous(memory_format=ember.channels_last),
                 ember.empty_like(x, memory_format=ember.channels_last),
                 ember.empty(2, 3, 4, 5, device=device, memory_format=ember.channels_last)):
        assert copy.stride() == (60, 1, 15, 3)
        assert copy.is_contiguous(memory_format=ember.channels_last)
    assert x.clone(memory_format=ember.channels_last).tolist() == x.tolist()


def test_clone_gradient_on_every_device(device):
    x = ember.arange(6.0, device=device, requires_grad=True)
    y = x.reshape(2, 3).t().clone()
    assert y.stride() == (1, 3)
    (y * ember.arange(6.0, device=device).reshape(3, 2)).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]


def test_several_ellipses_on_every_device(device):
    x = ember.arange(24.0, device=device).reshape(2, 3, 4)
    assert x[E, 0, E].tolist() == x[..., 0].tolist()
    assert x[E, [1, 2], E].tolist() == x[..., [1, 2]].tolist()
    x[E, 1, E] = 0.0
    assert x[..., 1].eq(0).all().item()
    with pytest.raises(IndexError, match="too many indices"):
        x[E, E, 0]


def test_writes_through_views_of_overlapping_views_on_every_device(device):
    x = ember.arange(4.0, device=device)
    windows = x.unfold(0, 2, 1)
    windows[1].add_(10)
    windows[2][1] = 7.0
    assert x.tolist() == [0.0, 11.0, 12.0, 7.0]
    row = ember.zeros(3, device=device).expand(2, 3)[0]
    row.add_(1)
    assert row._base.tolist() == [1.0, 1.0, 1.0]
