"""Seeded tutorial code prints the same text under ember as under PyTorch: the numbers
drawn, the initial weights, the shuffled batches and the training losses."""
import contextlib
import io

import pytest

import ember

torch = pytest.importorskip("torch")


def tutorial(lib) -> None:
    nn = lib.nn
    lib.manual_seed(42)
    print(lib.rand(2, 3))
    print(lib.randn(2, 4, dtype=lib.float64))
    print(lib.randint(0, 10, (8,)), lib.randperm(6))

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(4 * 4, 16), nn.ReLU(), nn.Dropout(0.25), nn.Linear(16, 3))

        def forward(self, x):
            return self.linear_relu_stack(self.flatten(x))

    model = NeuralNetwork()
    for name, param in model.named_parameters():
        print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2].detach()} \n")

    images = lib.rand(40, 4, 4)
    labels = lib.randint(0, 3, (40,))
    loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(images, labels),
                                       batch_size=8, shuffle=True)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        model.train()
        for batch, (x, y) in enumerate(loader):
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if batch % 2 == 0:
                print(f"epoch {epoch} batch {batch} labels {y.tolist()} "
                      f"loss: {loss.item():>7.4f}")
    model.eval()
    with lib.no_grad():
        print(model(images[:4]).argmax(1))
    print(nn.functional.dropout(lib.ones(2, 6), 0.5))


def _printed(lib) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        tutorial(lib)
    return out.getvalue()


@pytest.fixture
def one_torch_thread():
    # PyTorch's thread pool is slow to start on a busy machine; one thread suffices here
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_seeded_tutorial_prints_what_torch_prints(one_torch_thread):
    # the dtype in a repr names the library: ember.float64 where PyTorch says torch.float64
    assert _printed(ember).replace("ember.", "torch.") == _printed(torch)
