"""Keyword parity: the functions ember and PyTorch share accept PyTorch's documented
keywords (out=, dtype=, device=, requires_grad=, generator=, size=, keepdim=,
memory_format=) under the same names and defaults.

PyTorch's builtins carry their signature on the first line of their docstring; Python
functions are read with inspect.signature. A difference fails the test unless ALLOWED
lists it with its reason.
"""
import inspect
import re

import pytest

import ember
import ember.nn.functional as EF

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for the signatures")

KEYWORDS = ("out", "dtype", "device", "requires_grad", "generator", "size", "keepdim",
            "memory_format")

# PyTorch's memory_format defaults name its layout; ember's arrays have one layout, so
# ember writes None for "PyTorch's default".
_SAME_DEFAULT = {("None", "torch.preserve_format"), ("None", "torch.contiguous_format"),
                 ("None", "torch.strided")}

# "namespace.name: keyword" -> why ember differs. Each entry is checked to still differ;
# empty while every shared function matches.
ALLOWED: dict[str, str] = {}


def _torch_spelling(text: str) -> str:
    """ember.int64 -> torch.int64; torch.long -> torch.int64 (one dtype, two names)."""
    text = re.sub(r"^ember\.", "torch.", text)
    return {"torch.long": "torch.int64", "torch.float": "torch.float32",
            "torch.int": "torch.int32", "torch.double": "torch.float64"}.get(text, text)


def _split(params: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in params:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def torch_params(fn, name: str) -> dict[str, str | None] | None:
    """name -> default text (None: no default); "*size" for a variadic size."""
    try:
        sig = inspect.signature(fn)
        return {("*" + p.name if p.kind is p.VAR_POSITIONAL else p.name):
                (None if p.default is p.empty else repr(p.default))
                for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD}
    except (TypeError, ValueError):
        pass
    doc = (getattr(fn, "__doc__", None) or "").strip()
    first = doc.splitlines()[0] if doc else ""
    if not first.startswith(name + "("):
        return None
    depth, end = 0, None
    for i, ch in enumerate(first):
        depth += ch == "("
        depth -= ch == ")"
        if ch == ")" and depth == 0:
            end = i
            break
    if end is None:
        return None
    out = {}
    for part in _split(first[len(name) + 1:end]):
        if part in ("*", "/") or not part:
            continue
        key, _, default = part.partition("=")
        key = key.split(":")[0].strip()
        out[key] = default.strip() or None
    return out


def ember_params(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None, False
    params = {p.name: (None if p.default is p.empty else repr(p.default))
              for p in sig.parameters.values()
              if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    varkw = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    return params, varkw


def _pairs():
    for label, theirs, ours in (("torch", torch, ember),
                                ("torch.nn.functional", torch.nn.functional, EF),
                                ("torch.linalg", torch.linalg, ember.linalg),
                                ("torch.special", torch.special, ember.special),
                                ("torch.fft", torch.fft, getattr(ember, "fft", None))):
        if ours is None:
            continue
        for name in sorted(dir(theirs)):
            if name.startswith("_") or not hasattr(ours, name):
                continue
            t, e = getattr(theirs, name), getattr(ours, name)
            if inspect.isclass(t) or inspect.ismodule(t) or not callable(t):
                continue
            if not callable(e) or inspect.isclass(e):
                continue
            yield f"{label}.{name}", name, t, e


def compare(key: str, tp: dict, ep: dict, varkw: bool) -> dict[str, str]:
    """The differences between PyTorch's parameters ``tp`` and ember's ``ep``."""
    found = {}
    for kw in KEYWORDS:
        if kw in tp:
            tdef = tp[kw]
        elif kw == "size" and "*size" in tp:
            tdef = "<*size>"
        else:
            continue
        if kw not in ep:
            if not varkw:
                found[f"{key}: {kw}"] = "missing"
            continue
        if tdef in (None, "<*size>"):
            continue
        edef, tdef = _torch_spelling(ep[kw]), _torch_spelling(tdef)
        if edef != tdef and (edef, tdef) not in _SAME_DEFAULT:
            found[f"{key}: {kw}"] = f"default {edef} (PyTorch {tdef})"
    return found


def differences() -> dict[str, str]:
    found = {}
    for key, name, t, e in _pairs():
        tp = torch_params(t, name)
        ep, varkw = ember_params(e)
        if tp is not None and ep is not None:
            found.update(compare(key, tp, ep, varkw))
    return found


def test_no_undocumented_difference():
    new = {k: v for k, v in differences().items() if k not in ALLOWED}
    assert not new, "undocumented keyword differences:\n" + "\n".join(
        f"  {k} -> {v}" for k, v in sorted(new.items()))


def test_allowlist_is_current():
    # an entry whose difference is gone must leave the list
    stale = sorted(set(ALLOWED) - set(differences()))
    assert not stale, f"fixed, remove from ALLOWED: {stale}"


def test_parser_reads_builtin_docstrings():
    assert torch_params(torch.add, "add") is not None
    params = torch_params(torch.randn, "randn")
    assert "*size" in params and params["out"] == "None"


def test_compare_finds_each_kind_of_difference():
    def ours(input, *, dtype=None, keepdim=True):
        pass

    tp = torch_params(torch.sum, "sum")       # sum(input, *, dtype=None) -> Tensor
    assert compare("x", tp, *ember_params(ours)) == {}
    tp = {"input": None, "*size": None, "out": "None", "keepdim": "False",
          "memory_format": "torch.preserve_format", "dtype": "torch.long"}
    found = compare("f", tp, {"input": None, "keepdim": "True", "memory_format": "None",
                              "dtype": "ember.int64"}, False)
    assert found == {"f: out": "missing", "f: size": "missing",
                     "f: keepdim": "default True (PyTorch False)"}
    assert compare("f", tp, {}, True) == {}       # **kwargs accepts anything


def test_pairs_cover_the_common_functions():
    keys = {key for key, *_ in _pairs()}
    assert {"torch.add", "torch.randn", "torch.nn.functional.relu", "torch.linalg.inv",
            "torch.special.erf"} <= keys
    assert len(keys) > 400
