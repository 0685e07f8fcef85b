"""The named results (``ember.return_types``): PyTorch's class names, fields and printing."""
import pickle
import re

import pytest

import ember
from ember import return_types

SQUARE = [[2.0, 1.0], [1.0, 3.0]]

# (what, call on a library T); the result's class must be named as PyTorch names it
CALLS = [
    ("max(dim)", lambda T: T.max(T.tensor([[1.0, 5.0], [4.0, 2.0]]), 1)),
    ("min(dim)", lambda T: T.tensor([[1.0, 5.0], [4.0, 2.0]]).min(1)),
    ("sort", lambda T: T.sort(T.tensor([3.0, 1.0, 2.0]))),
    ("topk", lambda T: T.topk(T.tensor([3.0, 1.0, 2.0]), 2)),
    ("median(dim)", lambda T: T.median(T.tensor([[3.0, 1.0, 2.0]]), 1)),
    ("nanmedian(dim)", lambda T: T.nanmedian(T.tensor([[3.0, 1.0, 2.0]]), 1)),
    ("kthvalue", lambda T: T.kthvalue(T.tensor([3.0, 1.0, 2.0]), 2)),
    ("mode", lambda T: T.mode(T.tensor([3.0, 1.0, 1.0]))),
    ("cummax", lambda T: T.cummax(T.tensor([3.0, 1.0, 2.0]), 0)),
    ("cummin", lambda T: T.cummin(T.tensor([3.0, 1.0, 2.0]), 0)),
    ("aminmax", lambda T: T.aminmax(T.tensor([3.0, 1.0, 2.0]))),
    ("frexp", lambda T: T.frexp(T.tensor([3.0, 1.0, 2.0]))),
    ("histogram", lambda T: T.histogram(T.tensor([3.0, 1.0, 2.0]), 2)),
    ("linalg.slogdet", lambda T: T.linalg.slogdet(T.tensor(SQUARE))),
    ("linalg.qr", lambda T: T.linalg.qr(T.tensor(SQUARE))),
    ("linalg.svd", lambda T: T.linalg.svd(T.tensor(SQUARE))),
    ("linalg.eigh", lambda T: T.linalg.eigh(T.tensor(SQUARE))),
    ("svd", lambda T: T.svd(T.tensor(SQUARE))),
    ("linalg.lu_factor", lambda T: T.linalg.lu_factor(T.tensor(SQUARE))),
    ("linalg.lu", lambda T: T.linalg.lu(T.tensor(SQUARE))),
    ("linalg.lstsq", lambda T: T.linalg.lstsq(T.tensor(SQUARE), T.tensor([[1.0], [2.0]]))),
    ("linalg.inv_ex", lambda T: T.linalg.inv_ex(T.tensor(SQUARE))),
    ("linalg.cholesky_ex", lambda T: T.linalg.cholesky_ex(T.tensor(SQUARE))),
    ("linalg.solve_ex", lambda T: T.linalg.solve_ex(T.tensor(SQUARE), T.tensor([1.0, 2.0]))),
    ("geqrf", lambda T: T.geqrf(T.tensor(SQUARE))),
    ("linalg.ldl_factor", lambda T: T.linalg.ldl_factor(T.tensor(SQUARE))),
    ("lu_unpack", lambda T: T.lu_unpack(*T.linalg.lu_factor(T.tensor(SQUARE)))),
]


@pytest.mark.parametrize("what,call", CALLS, ids=[c[0] for c in CALLS])
def test_result_class_named_and_printed_as_torch(what, call):
    torch = pytest.importorskip("torch")
    expected, got = call(torch), call(ember)
    assert type(got).__name__ == type(expected).__name__
    assert getattr(return_types, type(got).__name__) is type(got)
    fields = re.findall(r"^(\w+)=", repr(expected), re.M)
    assert list(got._fields) == fields
    if not what.startswith(("linalg", "svd", "geqrf")):  # (decompositions' signs may differ)
        # the same text, but for the library's own name (ember.return_types, ember.int32)
        assert repr(got).replace("ember.", "torch.") == repr(expected)


def test_a_result_prints_one_field_per_line():
    result = ember.tensor([[1.0, 5.0], [4.0, 2.0]]).max(1)
    assert str(result) == ("ember.return_types.max(\nvalues=tensor([5., 4.]),\n"
                           "indices=tensor([1, 0]))")
    values, indices = result
    assert result.values is values and result[1] is indices


def test_a_result_class_pickles_by_its_module_name():
    cls = return_types.result_type("sort", ["values", "indices"])
    assert pickle.loads(pickle.dumps(cls)) is cls
    assert pickle.loads(pickle.dumps(cls(1, 2))) == (1, 2)


def test_a_name_keeps_one_set_of_fields():
    assert return_types.result_type("max", ["values", "indices"]) is return_types.max
    with pytest.raises(ValueError, match="exists with fields"):
        return_types.result_type("max", ["a", "b"])


def test_incompatible_keys_print_under_their_name():
    m = ember.nn.Linear(2, 2)
    result = m.load_state_dict({"weight": m.weight.detach()}, strict=False)
    assert repr(result) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])"
    assert repr(m.load_state_dict(m.state_dict())) == "<All keys matched successfully>"
