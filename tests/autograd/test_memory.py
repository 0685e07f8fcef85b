"""Nothing leaks: a long training loop holds steady memory, graphs die with their last
tensor (by reference counting, no cycles), saved values are freed by backward, and a graph
kept alive by user code (`total_loss += loss`) is warned about once, naming the fix.
Measured with tracemalloc and weakref, never with timing."""
from __future__ import annotations

import gc
import tracemalloc
import warnings
import weakref

import pytest

import ember
from ember.autograd import graph_watch

nn = ember.nn


@pytest.fixture(autouse=True)
def _fresh_watch():
    graph_watch._reset()
    yield
    graph_watch._reset()


def _model_and_data(seed: int = 0):
    ember.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    return model, ember.randn(32, 8), ember.randn(32, 1)


# ----------------------------------------------------------------------------- steady state
@pytest.mark.slow
def test_training_loop_of_2000_steps_holds_steady_memory():
    model, x, y = _model_and_data()
    optimizer = ember.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    graphs = []

    def step(number):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        if number % 100 == 0:
            graphs.append(weakref.ref(loss.grad_fn))
        return loss.item()

    for number in range(200):  # warm-up: optimizer state, lazily made buffers
        step(number)
    gc.collect()
    objects_before = len(gc.get_objects())
    tracemalloc.start()
    try:
        for number in range(200, 2000):
            step(number)
        gc.collect()
        # bytes allocated during the 1,800 steps and still held at the end
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    objects_after = len(gc.get_objects())
    # A loop that keeps each step's graph holds about 3.7 KB more per step (6.7 MB here);
    # what stays is interpreter free lists and the last step's few tensors.
    assert held < 100_000, f"{held} bytes allocated during the loop are still held"
    assert objects_after - objects_before < 50
    assert [ref() for ref in graphs] == [None] * len(graphs), "a step's graph outlived it"
    assert len(graph_watch._roots) <= 2


def test_graph_dies_with_its_last_tensor_without_the_garbage_collector():
    model, x, y = _model_and_data()
    gc.disable()  # reference counting alone must free it: no cycles in the graph
    try:
        loss = nn.functional.mse_loss(model(x), y)
        nodes, stack = [], [loss.grad_fn]
        while stack:
            node = stack.pop()
            nodes.append(weakref.ref(node))
            stack.extend(edge[0] for edge in node.next_functions if edge[0] is not None
                         and type(edge[0]).__name__ != "AccumulateGrad")
        del node  # the walk's own reference
        assert len(nodes) >= 5
        loss.backward()
        assert all(ref() is not None for ref in nodes)  # loss still holds its graph
        del loss
        assert [ref() for ref in nodes] == [None] * len(nodes)
    finally:
        gc.enable()


def test_backward_frees_saved_values_while_the_graph_lives():
    x = ember.randn(1000, dtype=ember.float64, requires_grad=True)
    y = x.exp()  # exp saves its output for backward
    saved = weakref.ref(y._data)
    loss = y.sum()
    del y
    assert saved() is not None  # held by the graph only
    loss.backward()
    assert saved() is None, "backward kept a saved value alive"
    assert loss.grad_fn is not None  # the graph (without its values) is still there


def test_retain_graph_keeps_saved_values_until_the_graph_goes():
    x = ember.randn(1000, dtype=ember.float64, requires_grad=True)
    y = x.exp()
    saved = weakref.ref(y._data)
    loss = y.sum()
    del y
    loss.backward(retain_graph=True)
    assert saved() is not None
    loss.backward()
    assert saved() is None


# ----------------------------------------------------------------------------- the warning
def _leaky_loop(steps: int, keep):
    model, x, y = _model_and_data()
    optimizer = ember.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()  # the warning points at this line
        keep(loss)


def test_total_loss_plus_loss_is_warned_about_once_naming_item():
    total = [0]

    def accumulate(loss):
        total[0] += loss  # the mistake: total[0] becomes a tensor holding every graph

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _leaky_loop(4, accumulate)
        assert len(caught) == 1  # at the fourth step: three earlier graphs still alive
        _leaky_loop(30, accumulate)
    assert len(caught) == 1, [str(w.message) for w in caught]
    warning = caught[0]
    assert warning.category is UserWarning
    assert "loss.item()" in str(warning.message)
    assert "total_loss += loss" in str(warning.message)
    assert warning.filename == __file__  # points at the user's optimizer.step() line


def test_a_list_of_losses_is_warned_about_too():
    losses = []
    with pytest.warns(UserWarning, match=r"earlier training steps are still alive"):
        _leaky_loop(5, losses.append)


def test_the_fixed_loop_does_not_warn():
    total = [0.0]

    def accumulate(loss):
        total[0] += loss.item()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _leaky_loop(50, accumulate)
        _leaky_loop(50, lambda loss: total.__setitem__(0, total[0] + loss.detach()))


def test_ordinary_loops_that_hold_a_few_graphs_do_not_warn():
    model, x, y = _model_and_data()
    generator_model, _, _ = _model_and_data(1)
    first = ember.optim.SGD(model.parameters(), lr=0.01)
    second = ember.optim.Adam(generator_model.parameters(), lr=0.01)
    previous = best = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for number in range(60):
            # two optimizers (as in a GAN), several backward calls per step (gradient
            # accumulation, one backward per head), the previous and the best loss kept
            first.zero_grad()
            for micro in range(3):
                head_loss = nn.functional.mse_loss(model(x[micro::3]), y[micro::3])
                head_loss.backward()
            first.step()
            second.zero_grad()
            loss = nn.functional.mse_loss(generator_model(x), y)
            loss.backward()
            second.step()
            if best is None or loss.item() < best.item():
                best = loss
            previous = loss
            if number % 10 == 0:
                # a retained graph backpropagated twice is one graph
                again = nn.functional.mse_loss(model(x), y)
                again.backward(retain_graph=True)
                again.backward()
                first.step()
    assert previous is not None


def test_backward_without_an_optimizer_remembers_a_bounded_number_of_roots():
    x = ember.ones(3, requires_grad=True)
    kept = []
    for _ in range(500):
        loss = (x * 2).sum()
        loss.backward()
        kept.append(loss)  # kept alive, but no optimizer step ever checks
    assert len(graph_watch._roots) <= 64
