"""ember.autocast's region semantics: nesting, enabled=False, decorators, the weight-cast
cache, float64 left alone, backward dtypes, and argument errors."""
import pytest

import ember

pytest.importorskip("ml_dtypes", reason="bfloat16 needs the ml_dtypes extra")
F = ember.nn.functional


def test_region_casts_products_and_keeps_losses_float32():
    a, b = ember.randn(3, 4), ember.randn(4, 2)
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled("cpu") and not ember.is_autocast_enabled("cuda")
        assert ember.get_autocast_dtype("cpu") is ember.bfloat16
        c = a @ b
        loss = F.cross_entropy(c, ember.tensor([0, 1, 1]))
        relu = F.relu(c)
    assert (c.dtype, loss.dtype, relu.dtype) == (ember.bfloat16, ember.float32, ember.bfloat16)
    assert (a @ b).dtype is ember.float32 and not ember.is_autocast_enabled("cpu")


def test_float64_and_integers_are_left_alone():
    with ember.autocast("cpu"):
        assert (ember.randn(2, 2, dtype=ember.float64) @ ember.randn(2, 2, dtype=ember.float64)
                ).dtype is ember.float64
        assert (ember.ones(2, 2, dtype=ember.int64) @ ember.ones(2, 2, dtype=ember.int64)
                ).dtype is ember.int64


def test_nested_disabled_region_and_restore():
    a = ember.randn(2, 2)
    with ember.autocast("cpu", dtype=ember.float16):
        with ember.autocast("cpu", enabled=False):
            assert (a @ a).dtype is ember.float32
        assert (a @ a).dtype is ember.float16
    assert (a @ a).dtype is ember.float32


def test_decorator_and_promote_ops():
    @ember.autocast("cpu")
    def f(x, y):
        return ember.cat([x @ y, y]), ember.stack([x.bfloat16(), x.bfloat16()])

    x = ember.randn(2, 2)
    widened, low = f(x, x)
    assert widened.dtype is ember.float32 and low.dtype is ember.bfloat16


def test_backward_gives_each_leaf_its_own_dtype():
    w = ember.randn(4, 3, requires_grad=True)
    x = ember.randn(2, 3)
    with ember.autocast("cpu"):
        out = F.linear(x, w)
        loss = F.mse_loss(out, ember.zeros(2, 4))
    loss.backward()
    assert out.dtype is ember.bfloat16 and w.grad.dtype is ember.float32


def test_leaf_weights_are_cast_once_per_region():
    w = ember.randn(3, 3, requires_grad=True)
    x = ember.randn(3, 3)
    with ember.autocast("cpu"):
        first = (x @ w).grad_fn.next_functions[1][0]
        second = (x @ w).grad_fn.next_functions[1][0]
    assert first is second  # the same cast node: w was converted once
    with ember.autocast("cpu", cache_enabled=False):
        third = (x @ w).grad_fn.next_functions[1][0]
        fourth = (x @ w).grad_fn.next_functions[1][0]
    assert third is not fourth and third is not first


def test_cuda_region_leaves_cpu_tensors_alone():
    with pytest.warns(UserWarning) if not ember.cuda.is_available() else _nothing():
        region = ember.autocast("cuda")
    with region:
        assert (ember.randn(2, 2) @ ember.randn(2, 2)).dtype is ember.float32


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_bad_arguments():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        ember.autocast("tpu")
    with pytest.raises(ValueError, match="dtype"):
        ember.autocast("cpu", dtype="bfloat16")
    with pytest.warns(UserWarning, match="Disabling autocast"):
        region = ember.autocast("cpu", dtype=ember.float64)
    with region:
        assert not ember.is_autocast_enabled("cpu")


def test_aliases():
    assert ember.amp.autocast is ember.autocast
    assert ember.cpu.amp.autocast(dtype=ember.bfloat16).device_type == "cpu"
    assert ember.cuda.amp.autocast(enabled=False).device_type == "cuda"
    assert issubclass(ember.cuda.amp.GradScaler, ember.amp.GradScaler)


def test_docstring_examples_run():
    import doctest

    from ember.amp import autocast_mode, cpu, cuda, grad_scaler

    for module in (autocast_mode, grad_scaler, cpu, cuda):
        result = doctest.testmod(module, extraglobs={"ember": ember})
        assert result.failed == 0, module.__name__


def test_docs_page_examples_run():
    import pathlib
    import re

    page = pathlib.Path(__file__).resolve().parents[2] / "docs" / "amp.md"
    for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S):
        exec(compile(block, str(page), "exec"), {})


@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs CUDA (or EMBER_TEST_STANDIN=1)")
def test_cuda_policies_on_cuda_tensors():
    a = ember.randn(4, 4, device="cuda")
    with ember.autocast("cuda"):
        products = (a @ a, F.linear(a, a), ember.mm(a, a))
        wide = (F.softmax(a, dim=1), a.sum(), a.exp(), F.layer_norm(a, (4,)))
        kept = F.softmax(a, dim=1, dtype=ember.float64)
        mixed = ember.cat([a.half(), a])
        cpu = ember.randn(2, 2) @ ember.randn(2, 2)
    assert all(p.dtype is ember.float16 and p.device.type == "cuda" for p in products)
    assert all(w.dtype is ember.float32 for w in wide)
    assert kept.dtype is ember.float64 and mixed.dtype is ember.float32
    assert cpu.dtype is ember.float32
    with ember.autocast("cuda"):
        assert F.softmax(products[0], dim=1).dtype is ember.float32


def test_layer_norm_keeps_a_bfloat16_activation_with_float32_parameters():
    torch = pytest.importorskip("torch")
    model = ember.nn.Sequential(ember.nn.Linear(6, 4), ember.nn.LayerNorm(4))
    reference = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.LayerNorm(4))
    with ember.autocast("cpu"):
        ours = model(ember.randn(2, 6))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        theirs = reference(torch.randn(2, 6))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] == "bfloat16"
    ours.float().sum().backward()
    assert model[1].weight.grad.dtype is ember.float32
