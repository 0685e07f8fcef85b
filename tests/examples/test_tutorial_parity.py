"""Beginner-tutorial style scripts (tensors, autograd, a model, a training loop, saving,
printing) run under ember and under PyTorch: every printed line must be the same."""
from __future__ import annotations

import contextlib
import io
import re
import tempfile

import pytest

import ember

torch = pytest.importorskip("torch")

TENSORS = '''
import numpy as np
torch.manual_seed(0)
data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
print(x_data)
print(torch.from_numpy(np.array(data)))
x_ones = torch.ones_like(x_data)
print(f"Ones Tensor: \\n {x_ones} \\n")
x_rand = torch.rand_like(x_data, dtype=torch.float)
print(f"Random Tensor: \\n {x_rand} \\n")
shape = (2, 3,)
print(torch.rand(shape), torch.ones(shape), torch.zeros(shape))
tensor = torch.rand(3, 4)
print(f"Shape of tensor: {tensor.shape}")
print(f"Datatype of tensor: {tensor.dtype}")
print(f"Device tensor is stored on: {tensor.device}")
tensor = torch.ones(4, 4)
print(f"First row: {tensor[0]}")
print(f"First column: {tensor[:, 0]}")
print(f"Last column: {tensor[..., -1]}")
tensor[:, 1] = 0
print(tensor)
print(torch.cat([tensor, tensor, tensor], dim=1))
print(torch.stack([tensor[0], tensor[1]]), torch.stack([tensor[0], tensor[1]], dim=1).shape)
y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)
y3 = torch.rand_like(y1)
print(torch.matmul(tensor, tensor.T, out=y3), y1, y2)
z3 = torch.rand_like(tensor)
print(torch.mul(tensor, tensor, out=z3), tensor * tensor, tensor.mul(tensor))
agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item), agg)
tensor.add_(5)
print(tensor)
t = torch.ones(5)
n = t.numpy()
t.add_(1)
print(f"t: {t}")
print(f"n: {n}")
n = np.ones(5)
t = torch.from_numpy(n)
np.add(n, 1, out=n)
print(f"t: {t}")
print(f"n: {n}")
x = torch.randn(3, 5)
print(x.T, x.mT.shape, x.ndim, x.numel(), x.is_contiguous(), x.T.is_contiguous())
print(x.copy_(torch.zeros(3, 5)))
'''

AUTOGRAD = '''
torch.manual_seed(0)
x = torch.ones(5)
y = torch.zeros(3)
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(w, b, z, loss)
print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")
print(z.grad_fn.name(), loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name())
loss.backward()
print(w.grad, b.grad)
z = torch.matmul(x, w) + b
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad, z.grad_fn)
z = torch.matmul(x, w) + b
z_det = z.detach()
print(z_det.requires_grad, z_det.is_leaf, z.is_leaf, w.is_leaf)
inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\\nSecond call\\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\\nCall after zeroing gradients\\n{inp.grad}")
a = torch.tensor([2., 3.], requires_grad=True)
c = torch.tensor([6., 4.], requires_grad=True)
Q = 3 * a ** 3 - c ** 2
print(Q)
Q.backward(gradient=torch.tensor([1., 1.]))
print(9 * a ** 2 == a.grad, -2 * c == c.grad, a.grad, c.grad)
s = (a * 2).sum()
print(s, s.grad_fn)
print((a * 2).mean().grad_fn, a.exp().grad_fn, a[0].grad_fn, a.view(2, 1).grad_fn)
print(a.detach().requires_grad_(), torch.is_grad_enabled())
with torch.set_grad_enabled(False):
    print((a * 2).requires_grad)
x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y)
y.backward(torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float))
print(x.grad)
'''

MODEL = '''
nn = torch.nn
torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"Using {device} device", torch.cuda.is_available())
class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    def forward(self, x):
        x = self.flatten(x)
        return self.linear_relu_stack(x)
model = NeuralNetwork().to("cpu")
print(model)
logits = model(torch.rand(1, 28, 28))
print(logits)
pred_probab = nn.Softmax(dim=1)(logits)
print(pred_probab)
print(f"Predicted class: {pred_probab.argmax(1)}")
input_image = torch.rand(3, 28, 28)
flat_image = nn.Flatten()(input_image)
print(input_image.size(), flat_image.size())
layer1 = nn.Linear(in_features=28*28, out_features=20)
hidden1 = layer1(flat_image)
print(f"Before ReLU: {hidden1}\\n\\n")
hidden1 = nn.ReLU()(hidden1)
print(f"After ReLU: {hidden1}")
seq_modules = nn.Sequential(nn.Flatten(), layer1, nn.ReLU(), nn.Linear(20, 10))
print(nn.Softmax(dim=1)(seq_modules(torch.rand(3, 28, 28))))
print(f"Model structure: {model}\\n\\n")
for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \\n")
print(sum(p.numel() for p in model.parameters()), list(dict(model.named_children())))
print(nn.Softmax(dim=1), nn.ReLU(inplace=True), nn.Dropout(0.2), nn.Conv2d(1, 6, 5))
print(nn.MaxPool2d(2), nn.BatchNorm2d(6), nn.Embedding(10, 3), nn.LSTM(4, 8, 2))
w = torch.empty(3, 5)
print(nn.init.xavier_uniform_(w), nn.init.kaiming_normal_(w, mode="fan_out"))
print(nn.init.normal_(w, std=0.02), nn.init.uniform_(w, -0.1, 0.1))
print(nn.Dropout(0.5)(torch.ones(8)))
'''

OPTIM = '''
from importlib import import_module
torch.set_default_dtype(torch.float64)  # (float32 products round by the BLAS's own order)
nn = torch.nn
data = import_module(torch.__name__ + ".utils.data")
torch.manual_seed(0)
X, Y = torch.randn(300, 20), torch.randint(0, 4, (300,))
train_dataloader = data.DataLoader(data.TensorDataset(X, Y), batch_size=32, shuffle=True)
test_dataloader = data.DataLoader(
    data.TensorDataset(torch.randn(200, 20), torch.randint(0, 4, (200,))), batch_size=32)
model = nn.Sequential(nn.Flatten(), nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4))
batch_size = 32
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
print(loss_fn, optimizer, sep="\\n")
def train_loop(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        loss = loss_fn(model(X), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if batch % 5 == 0:
            loss, current = loss.item(), batch * batch_size + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")
def test_loop(dataloader, model, loss_fn):
    model.eval()
    size, num_batches = len(dataloader.dataset), len(dataloader)
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \\n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \\n")
for t in range(3):
    print(f"Epoch {t+1}\\n-------------------------------")
    train_loop(train_dataloader, model, loss_fn, optimizer)
    test_loop(test_dataloader, model, loss_fn)
print("Done!", len(train_dataloader), len(test_dataloader))
xb, yb = next(iter(train_dataloader))
print(xb.shape, yb.shape, yb.dtype, yb[:8])
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
print(opt)
loss_fn(model(xb), yb).backward()
opt.step()
sched.step()
print(sched.get_last_lr(), model[3].bias)
'''

SAVE_LOAD = '''
import os
nn = torch.nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
p = os.path.join(TMP, "model_weights.pth")
torch.save(model.state_dict(), p)
for k, v in model.state_dict().items():
    print(k, v.size(), v)
model2 = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
print(model2.load_state_dict(torch.load(p, weights_only=True)))
print(model2.eval(), model2.training, model2[0].training)
x = torch.rand(2, 4)
print(torch.equal(model(x), model2(x)), model2(x))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
print(opt.state_dict())
print(model.train())
model(x).sum().backward()
opt.step()
sd = opt.state_dict()
print(sd["param_groups"], sorted(sd["state"]), sd["state"][0])
opt2 = torch.optim.SGD(model2.parameters(), lr=0.5, momentum=0.9)
opt2.load_state_dict(sd)
print(opt2.param_groups[0]["lr"])
torch.save({"epoch": 3, "model_state_dict": model.state_dict(),
            "optimizer_state_dict": opt.state_dict(), "loss": 0.25}, p)
ck = torch.load(p, weights_only=True)
print(ck["epoch"], ck["loss"], ck["optimizer_state_dict"]["state"][1])
'''

PRINTING = '''
import numpy as np
torch.manual_seed(0)
print(torch.rand(2, 3))
print(torch.ones_like(torch.rand(2, 2)), torch.zeros(2, 3, dtype=torch.int16))
x = torch.randn(2, 3)
print(x.T)
t = torch.tensor([[1, 2], [3, 4]])
print(torch.cat([t, t, t], dim=1), t.sum().item(), t.sum(), t.float().mean().item())
print(torch.randn(4, 4).view(-1, 8).size(), torch.arange(12).reshape(3, 4)[1:, ::2])
a = torch.randn(3, 3)
print(torch.where(a > 0, a, torch.zeros_like(a)), torch.where(a > 0))
m = torch.max(a, 1)
print(m, m.values, m.indices, m[0], type(m).__name__)
print(torch.min(a, dim=0, keepdim=True), a.sort(dim=1), torch.topk(torch.arange(10.), 3))
print(a.argmax(), a.argmax(dim=1), torch.argmax(a, 1, keepdim=True))
print(torch.kthvalue(torch.tensor([3., 1., 2.]), 2), torch.std_mean(torch.tensor([1., 2., 3.])))
print(a.numpy().dtype, type(a.numpy()).__name__, torch.from_numpy(np.arange(4)))
print(torch.from_numpy(np.arange(4.0, dtype=np.float32)), a.to("cpu").device)
print(torch.cuda.is_available(), torch.device("cpu"), repr(torch.device("cpu")))
print(torch.device("cuda", 0), repr(torch.device("cuda:1")), torch.device("cpu").type)
print(torch.tensor(3.5), torch.tensor(3), torch.tensor(True), torch.tensor([]))
print(torch.randint(0, 10, (2, 5)), torch.randperm(8), torch.randint(10, (3,)))
print(torch.empty(3).uniform_(0, 1), torch.empty(3).normal_(0, 1))
print(torch.normal(0.0, 1.0, size=(2, 2)), torch.rand(2, dtype=torch.float64))
print(torch.multinomial(torch.tensor([0.1, 0.5, 0.4]), 5, replacement=True))
print(torch.bernoulli(torch.full((5,), 0.5)))
print(torch.linspace(0, 1, 5), torch.arange(0, 1, 0.25))
print(torch.eye(3), torch.full((2, 2), 7), torch.full((2, 2), 7.0))
print(torch.tensor([1e-5, 1e5, 1.0]), torch.tensor([1e-10, 1.0]))
print(torch.tensor([1.123456789, 2.0], dtype=torch.float64), torch.randn(2, 2).double())
print(torch.tensor([1, 2], dtype=torch.uint8), torch.tensor([1., 2.], dtype=torch.float16))
print(torch.zeros(2, 3).shape, torch.Size([2, 3]), torch.zeros(0, 3))
print(x.flatten(), x.permute(1, 0).shape, torch.chunk(torch.arange(6), 3))
print(torch.rand(2, 2, requires_grad=True), torch.rand(2, 2, requires_grad=True) * 2)
print(torch.float, torch.long, torch.get_default_dtype(), x.type(), x.long().type())
print(torch.tensor([[1.5, float("nan")], [float("inf"), -float("inf")]]))
print(torch.arange(1000.0))
print(torch.randn(20, 20))
print(torch.Tensor([1, 2]), torch.LongTensor([1, 2]), torch.tensor([1, 2, 3]) / 2)
print(torch.tensor([[0.1234, 12345.678]]), torch.tensor([100000000.]), torch.tensor([1.2e-5]))
torch.set_printoptions(precision=2)
print(torch.tensor([1.23456]))
torch.set_printoptions(profile="default")
print(torch.tensor([1.23456]), x.std(), x.var(dim=0), x.norm())
'''

FORMATTING = '''
torch.manual_seed(0)
t = torch.tensor(1.5)
print(f"{t:.2f}", f"{t}", "{}".format(t), int(t), float(t), round(t.item(), 3))
x = torch.randn(2, 3)
print(len(x), list(x), [r.shape for r in x], x.shape[0], x.size(1), x.shape == (2, 3))
print(torch.Size([2, 3]) + (4,), torch.Size([2, 3])[1:], tuple(x.shape), list(x.size()))
print(x.shape.numel())
print(repr(x), str(x), x.data, x.grad_fn)
print(torch.tensor(2.0) ** 0.5, 2 ** torch.tensor(3), -torch.tensor([1, 2]), ~torch.tensor([True]))
print(x > 0, (x > 0).sum(), (x > 0).float().mean(), x[x > 0].shape)
print(x.max(), x.min(), x.max().item() > 0, x.abs().sum(dim=1))
print(x.reshape(-1), x.view(3, 2), x.contiguous().view(6), x.unsqueeze(1).shape)
print(torch.zeros(2, 3).dtype, torch.zeros(2, 3).to(torch.int64), torch.zeros(2, dtype=torch.bool))
print(x[0, 1], x[0][1], x[:, None].shape, x[[0, 1], [1, 2]], x[torch.tensor([1, 0])])
i = torch.tensor([[1, 2], [3, 4]])
print(i * 2.5, i / i, i // 3, i % 3, i @ i, i.T @ i, i.float() @ i.float())
print(torch.tensor([[1, 2], [3, 4]], dtype=torch.float32).mean(), i.sum(dim=0), i.prod())
print(torch.ones(2, 2) + torch.arange(2), torch.arange(3)[:, None] * torch.arange(3))
print(torch.tensor([0.1, 0.2, 0.3]).sum(), torch.tensor([1/3]))
print(torch.tensor([2/3], dtype=torch.float64))
print(torch.zeros(3, 4, 5)[..., 0].shape, torch.ones(2, 3, 4).sum((0, 2)))
print(torch.tensor([[1, 2, 3], [4, 5, 6]]).numpy(), torch.tensor([1.5]).numpy())
print(torch.nn.functional.one_hot(torch.tensor([0, 2]), 3), torch.tensor([3, 1]).argsort())
print(torch.tensor([1, 2, 3]).float().requires_grad_())
print(torch.tensor([[1., -1.], [1., -1.]]), torch.tensor([[1., 2.], [3., 4.]]) * 1e-3)
print(torch.tensor([123456.7, 0.001]), torch.tensor([1e20, 1.0]), torch.tensor([-0.0, 0.0]))
'''

SCRIPTS = {"tensors": TENSORS, "autograd": AUTOGRAD, "model": MODEL, "optim": OPTIM,
           "save_load": SAVE_LOAD, "printing": PRINTING, "formatting": FORMATTING}


def _output(script, lib):
    """What ``script`` prints with ``torch`` bound to ``lib``, addresses blanked; the
    random state and print options are restored afterwards."""
    state = lib.get_rng_state()
    buffer = io.StringIO()
    try:
        with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(buffer):
            exec(script, {"torch": lib, "TMP": tmp, "__name__": "tutorial"})
    finally:
        lib.set_rng_state(state)
        lib.set_printoptions(profile="default")
        lib.set_default_dtype(lib.float32)
    text = buffer.getvalue().replace(lib.__name__, "torch")
    return re.sub(r"object at 0x[0-9a-f]+", "object at 0x...", text).splitlines()


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_tutorial_prints_as_torch(name):
    assert _output(SCRIPTS[name], ember) == _output(SCRIPTS[name], torch)
