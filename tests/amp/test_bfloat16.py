"""bfloat16 as a real dtype (through ml_dtypes), checked against PyTorch."""
import subprocess
import sys

import pytest

import ember

pytest.importorskip("ml_dtypes", reason="bfloat16 needs the ml_dtypes extra")
torch = pytest.importorskip("torch")

VALUES = [1.5, 2.25, 3.0001, -0.1, 1e5]


def _both(values=VALUES):
    return ember.tensor(values).bfloat16(), torch.tensor(values).bfloat16()


def test_cast_round_trip_and_repr_match_torch():
    e, t = _both()
    assert e.dtype is ember.bfloat16
    assert e.float().tolist() == t.float().tolist()
    assert repr(e).replace("ember", "torch") == repr(t)
    assert e.to(ember.bfloat16) is e


@pytest.mark.parametrize("a,b,expected", [
    ("bfloat16", "float16", "float32"), ("bfloat16", "float32", "float32"),
    ("bfloat16", "float64", "float64"), ("bfloat16", "int64", "bfloat16"),
    ("bfloat16", "bool", "bfloat16"), ("uint8", "bfloat16", "bfloat16"),
])
def test_promotion_matches_torch(a, b, expected):
    assert ember.promote_types(getattr(ember, a), getattr(ember, b)).name == expected
    assert str(torch.promote_types(getattr(torch, a), getattr(torch, b))) == "torch." + expected


def test_arithmetic_and_matmul_stay_bfloat16_and_round_like_torch():
    e, t = _both([[1.1, 2.3], [0.7, -4.9]])
    for f in (lambda x: x * 3, lambda x: x.exp(), lambda x: x @ x, lambda x: x.sum(),
              lambda x: x / 3, lambda x: x + 1):
        got, want = f(e), f(t)
        assert got.dtype is ember.bfloat16
        assert got.float().flatten().tolist() == pytest.approx(
            want.float().flatten().tolist(), rel=1e-2)


def test_backward_gives_bfloat16_grads():
    w = ember.randn(3, 4).bfloat16().requires_grad_()
    x = ember.randn(2, 4).bfloat16()
    ember.nn.functional.linear(x, w).sum().backward()
    assert w.grad.dtype is ember.bfloat16
    for row in w.grad.float().tolist():
        assert row == pytest.approx(x.float().sum(0).tolist(), rel=2e-2, abs=1e-2)


def test_finfo_matches_torch():
    e, t = ember.finfo(ember.bfloat16), torch.finfo(torch.bfloat16)
    assert (e.bits, e.eps, e.max, e.tiny) == (t.bits, t.eps, t.max, t.tiny)


def test_module_bfloat16_and_mixed_ops_promote():
    x = ember.ones(2, dtype=ember.bfloat16)
    assert (x + ember.ones(2, dtype=ember.float16)).dtype is ember.float32
    assert (x * 2.5).dtype is ember.bfloat16


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


def test_missing_package_names_it():
    # ml_dtypes made unimportable: naming the dtype works, using it says what to install
    result = _run(
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import ember\n"
        "b = ember.bfloat16\n"
        "assert repr(b) == 'ember.bfloat16' and b.is_floating_point and b.itemsize == 2\n"
        "for use in (lambda: ember.zeros(2, dtype=b), lambda: ember.ones(2).to(b),\n"
        "            lambda: ember.finfo(b)):\n"
        "    try:\n"
        "        use()\n"
        "    except ImportError as error:\n"
        "        assert 'pip install ml_dtypes' in str(error), error\n"
        "    else:\n"
        "        raise AssertionError('no ImportError')\n"
        "print('ok')\n")
    assert result.stdout.strip() == "ok", result.stderr


def test_ml_dtypes_is_imported_on_first_use():
    # (importing it takes most of a second: ``import ember`` must not pay for it)
    result = _run(
        "import sys, ember\n"
        "assert 'ml_dtypes' not in sys.modules\n"
        "b = ember.bfloat16\n"
        "assert b.is_signed and b.name == 'bfloat16' and 'ml_dtypes' not in sys.modules\n"
        "x = ember.ones(2, dtype=b)\n"
        "assert 'ml_dtypes' in sys.modules and x.dtype is b and type(b) is ember.dtype\n"
        "print('ok')\n")
    assert result.stdout.strip() == "ok", result.stderr


def test_bfloat16_arrays_made_before_the_dtype_is_used():
    result = _run(
        "import ml_dtypes, numpy as np, ember\n"
        "t = ember.from_numpy(np.ones(2, dtype=ml_dtypes.bfloat16))\n"
        "assert t.dtype is ember.bfloat16, t.dtype\n"
        "print('ok')\n")
    assert result.stdout.strip() == "ok", result.stderr


def test_module_bfloat16_casts_parameters():
    model = ember.nn.Linear(3, 2).bfloat16()
    assert model.weight.dtype is ember.bfloat16 and model.bias.dtype is ember.bfloat16
    assert model(ember.randn(4, 3).bfloat16()).dtype is ember.bfloat16
