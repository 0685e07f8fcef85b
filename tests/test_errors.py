"""The error catalog (docs/errors.md): each common mistake raises PyTorch's exception type
with a message that says what happened, where, and the fix."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd.anomaly import run_checked
from ember.autograd.backward_math import array_math
from ember.tensor import Tensor


def _on_fake_gpu(t):
    # A tensor labelled cuda:0 with host memory: device checks run before any kernel, so
    # the mismatch error can be tested on machines without a GPU.
    return Tensor._make(t._data, ember.device("cuda:0"), False)


# ----------------------------------------------------------------------------- autograd
def test_second_backward_names_the_node():
    x = ember.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"second time.*retain_graph=True.*MulBackward0"):
        y.backward()


def test_inplace_change_of_saved_tensor_names_op_shape_and_versions():
    x = ember.ones(3, requires_grad=True)
    a = x * 2
    y = a * a
    a.add_(1)
    with pytest.raises(RuntimeError, match=r"\[float32 \[3\]\].*version 1; expected version "
                                           r"0.*MulBackward0"):
        y.sum().backward()


def test_inplace_on_leaf_shows_no_grad_fix():
    w = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"leaf Variable that requires grad.*no_grad"):
        w.add_(1)


def test_backward_on_non_scalar_shows_shape_and_fixes():
    y = ember.ones(2, 3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=r"scalar outputs.*\[2, 3\].*\.sum\(\).*gradient="):
        y.backward()


@pytest.mark.parametrize("case, words", [
    ("no_grad", r"computed under ember.no_grad\(\).*outside the no_grad"),
    ("detach", r"detached from the graph.*before detach\(\)"),
    ("integer", r"dtype ember.int64.*floating point.*x.float\(\)"),
    ("no_input", r"none of the tensors it was computed from requires grad.*requires_grad=True"),
])
def test_backward_without_grad_says_which_reason(case, words):
    x = ember.ones(3, requires_grad=True)
    if case == "no_grad":
        with ember.no_grad():
            h = x * 2
        loss = (h * 3).sum()  # computed outside no_grad, from a no_grad result
    elif case == "detach":
        loss = ((x * 2).detach() + 1).sum()
    elif case == "integer":
        loss = ember.arange(3).sum()
    else:
        loss = (ember.ones(3) * 2).sum()
    with pytest.raises(RuntimeError, match="does not require grad and does not have a "
                                           "grad_fn: .*" + words):
        loss.backward()


def test_requires_grad_on_integer_tensor():
    with pytest.raises(RuntimeError, match=r"floating point and complex.*int64.*x.float\(\)"):
        ember.tensor([1, 2], requires_grad=True)


def test_numpy_on_tensor_that_requires_grad():
    with pytest.raises(RuntimeError, match=r"requires grad.*detach\(\).numpy\(\)"):
        ember.ones(2, requires_grad=True).numpy()


def test_grad_of_non_leaf_warns_with_retain_grad():
    y = ember.ones(3, requires_grad=True) * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match=r"not a leaf.*retain_grad\(\)"):
        assert y.grad is None


# ----------------------------------------------------------------------------- shapes
def test_matmul_mismatch_names_both_shapes():
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(2x3 and 4x5\)"):
        ember.ones(2, 3) @ ember.ones(4, 5)


def test_broadcast_failure_names_both_shapes_and_the_op():
    with pytest.raises(RuntimeError, match=r"add\(\).*\[2, 3\], \[4\]"):
        ember.ones(2, 3) + ember.ones(4)


class _Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(6, 2)  # the bug: should take 8 features

    def forward(self, x):
        return self.fc2(self.fc1(x))


class _Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = _Encoder()

    def forward(self, x):
        return self.encoder(x)


def test_linear_mismatch_in_a_module_names_the_path_and_in_features():
    with pytest.raises(RuntimeError) as info:
        _Model()(ember.ones(2, 4))
    message = str(info.value)
    assert message.startswith("in encoder.fc2 (Linear): linear(): input of shape [2, 8]")
    assert "in_features=6" in message
    assert message.count("encoder.fc2") == 1  # prefixed once, not at every level


class _Lookup(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 3)

    def forward(self, i):
        return self.emb(i)


def test_module_path_keeps_the_exception_type():
    with pytest.raises(IndexError, match=r"^in emb \(Embedding\): embedding\(\).*0 to 9"):
        _Lookup()(ember.tensor([12]))


# ----------------------------------------------------------------------------- devices
def test_two_devices_in_one_op_name_both_and_the_op():
    with pytest.raises(RuntimeError, match=r"same device.*cpu and cuda:0.*in Add"):
        ember.ones(3) + _on_fake_gpu(ember.ones(3))


class _Positional(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.table = ember.ones(3)  # the bug: a plain attribute, not a buffer

    def forward(self, x):
        return self.fc(x) + self.table


def test_device_mismatch_in_a_module_names_the_attribute_not_moved():
    model = nn.Sequential(_Positional())
    model[0].table = _on_fake_gpu(model[0].table)  # as if only it were on another device
    with pytest.raises(RuntimeError) as info:
        model(ember.ones(2, 3))
    message = str(info.value)
    assert message.startswith("in 0 (_Positional): Expected all tensors to be on the same")
    assert "Attribute 'table' is a plain tensor on cuda:0" in message
    assert "register_buffer('table', tensor)" in message


# ----------------------------------------------------------------------------- dtypes
def test_cross_entropy_float_targets_name_dtypes_and_shapes():
    with pytest.raises(RuntimeError, match=r"Long or Byte, but got Float.*int64.*shape \[4\]"
                                           r".*\[4, 3\].*target has shape \[5, 3\]"):
        F.cross_entropy(ember.randn(4, 3), ember.ones(5, 3))


def test_embedding_float_indices_name_accepted_dtypes():
    with pytest.raises(RuntimeError, match=r"embedding\(\).*int64 or int32.*float32"):
        nn.Embedding(10, 3)(ember.ones(4))


# ----------------------------------------------------------------------------- indices
def test_gather_out_of_range_is_a_runtime_error_like_pytorch():
    with pytest.raises(RuntimeError, match=r"gather\(\): index 5 is out of bounds for "
                                           r"dimension 1 with size 3 \(valid indices are 0 to 2"):
        ember.gather(ember.ones(3, 3), 1, ember.tensor([[5]]))


def test_index_out_of_range_on_index_ops_is_an_index_error():
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        ember.index_select(ember.ones(3), 0, ember.tensor([5]))
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        ember.ones(3)[ember.tensor([5])]


# ----------------------------------------------------------------------------- modules
def test_load_state_dict_mismatches_list_every_key():
    model = nn.Linear(3, 4)
    with pytest.raises(RuntimeError, match=r"size mismatch for weight.*\[5, 3\].*\[4, 3\]"):
        model.load_state_dict(nn.Linear(3, 5).state_dict())
    state = model.state_dict()
    del state["bias"]
    state["extra"] = ember.ones(1)
    with pytest.raises(RuntimeError, match=r'(?s)Missing key\(s\).*"bias".*Unexpected key\(s\)'
                                           r'.*"extra"'):
        model.load_state_dict(state)


def test_optimizer_rejects_a_non_leaf():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(ValueError, match=r"non-leaf Tensor.*Mul.*detach\(\).requires_grad_"):
        ember.optim.SGD([x * 2], lr=0.1)


def test_optimizer_warns_on_a_plain_tensor_without_requires_grad():
    with pytest.warns(UserWarning, match=r"shape \[3\].*does not require grad.*requires_grad_"):
        ember.optim.SGD([ember.ones(3)], lr=0.1)
    frozen = nn.Parameter(ember.ones(3), requires_grad=False)  # deliberate: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.optim.SGD([frozen], lr=0.1)


class _CudaInWorker(ember.utils.data.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return ember.ones(2).to("cuda")


def test_dataloader_worker_touching_cuda_says_what_to_do():
    loader = ember.utils.data.DataLoader(_CudaInWorker(), batch_size=1, num_workers=1)
    with pytest.raises(RuntimeError, match=r"DataLoader worker process 0 tried to use CUDA"
                                           r".*batch.to\('cuda'\)"):
        next(iter(loader))


# ----------------------------------------------------------------------------- anomaly
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_anomaly_names_node_and_user_line_and_explains_masked_branch():
    x = ember.tensor([4.0, 0.0, -1.0], requires_grad=True)
    with ember.autograd.detect_anomaly():
        y = ember.where(x > 0, ember.sqrt(x), ember.zeros(3))  # the unsafe branch
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    message = str(info.value)
    assert "Function 'SqrtBackward0' returned nan or inf values" in message
    assert "masked-branch trap" in message and "x_safe = where(mask, x, 1)" in message
    assert "test_errors.py" in message and "ember.sqrt(x)" in message
    assert "autograd/function.py" not in message  # the user's frames, not ember's


def test_anomaly_safe_branch_fix_gives_finite_grads():
    x = ember.tensor([4.0, 0.0, -1.0], requires_grad=True)
    with ember.autograd.detect_anomaly():
        mask = x > 0
        x_safe = ember.where(mask, x, ember.ones(3))
        ember.where(mask, ember.sqrt(x_safe), ember.zeros(3)).sum().backward()
    assert x.grad.tolist() == [0.25, 0.0, 0.0]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_anomaly_inf_with_nonzero_grad_is_not_called_the_trap():
    x = ember.zeros(2, requires_grad=True)
    with ember.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match="LogBackward0") as info:
            ember.log(x).sum().backward()
    assert "masked-branch" not in str(info.value)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("arrays", [True, False])
def test_run_checked_takes_arrays_and_tensors(arrays):
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with ember.autograd.detect_anomaly():
        node = ember.sqrt(x).grad_fn
    grad = np.zeros(2, np.float32)
    if arrays:
        node.math = array_math(np)
    else:
        grad = ember.tensor(grad)
    with pytest.raises(RuntimeError, match="SqrtBackward0.*masked-branch trap"):
        run_checked(node, [grad])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_anomaly_docstring_example_runs():
    import doctest

    import ember.autograd.anomaly as module

    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
