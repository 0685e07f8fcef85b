"""Printing tensors the way PyTorch does: the same number formatting (4 decimals, integer
mode for whole floats, scientific notation for wide ranges), summarization past 1000
elements, 80-column wrapping, and the device/dtype/grad suffixes."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import dtypes


@dataclass
class PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """Set how tensors print: ``profile`` is 'default', 'short' or 'full'."""
    if profile == "default":
        PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, 1000
        PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    elif profile == "short":
        PRINT_OPTS.precision, PRINT_OPTS.threshold = 2, 1000
        PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 80
    elif profile == "full":
        PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, math.inf
        PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    return dict(PRINT_OPTS.__dict__)


class _Formatter:
    """Decides one width and style for all elements, from the values themselves."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.ravel()
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return
        absolute = np.abs(finite)
        low, high = absolute.min(), absolute.max()
        precision = PRINT_OPTS.precision
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = bool(high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4)
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        # The width follows the final mode, so an explicit sci_mode must come first.
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{precision}e}") for v in finite.tolist())
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in finite.tolist())
        else:
            self.max_width = max(len(f"{v:.{precision}f}") for v in finite.tolist())

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating:
            precision = PRINT_OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{precision}f}"
        else:
            text = f"{value}"
        return (self.max_width - len(text)) * " " + text


def _shown(length: int, summarize: bool) -> tuple:
    """The indices printed along a dimension of ``length``: all of them, or the first and
    last ``edgeitems`` when summarizing (with the ``...`` between them)."""
    edge = PRINT_OPTS.edgeitems
    if summarize and length > 2 * edge:
        return list(range(edge)), list(range(length - edge, length))
    return list(range(length)), None


def _summarized(array: np.ndarray) -> np.ndarray:
    """The values that a summarized print shows (for choosing the format)."""
    if array.ndim == 0:
        return array
    head, tail = _shown(array.shape[0], True)
    index = head + (tail or [])
    if array.ndim == 1:
        return array[index]
    if not index:
        return array.reshape(-1)[:0]
    return np.stack([_summarized(array[i]) for i in index])


def _vector(array: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    element_length = formatter.width() + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    head, tail = _shown(array.shape[0], summarize)
    data = [formatter.format(v) for v in array[head].tolist()]
    if tail is not None:
        # the ellipsis is padded like a value only when values surround it
        data += [" ..." if head else "..."] + [formatter.format(v) for v in array[tail].tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _format(array: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    if array.ndim == 0:
        return formatter.format(array.item())
    if array.ndim == 1:
        return _vector(array, indent, summarize, formatter)
    head, tail = _shown(array.shape[0], summarize)
    slices = [_format(array[i], indent + 1, summarize, formatter) for i in head]
    if tail is not None:
        slices += ["..."] + [_format(array[i], indent + 1, summarize, formatter) for i in tail]
    return "[" + ("," + "\n" * (array.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def array_str(array: np.ndarray, indent: int) -> str:
    """The bracketed values of an array, formatted and wrapped like PyTorch."""
    if array.dtype.itemsize == 2 and array.dtype.kind in "fV":  # float16, bfloat16
        array = array.astype(np.float32)
    summarize = array.size > PRINT_OPTS.threshold
    formatter = _Formatter(_summarized(array) if summarize else array,
                           array.dtype.kind in "fV")
    return _format(array, indent, summarize, formatter)


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t, prefix: str = "tensor(") -> str:
    indent = len(prefix)
    suffixes = []
    device = t._device
    if device.type != "cpu":
        suffixes.append(f"device='{device}'")
    array = t._host()
    dtype = t.dtype
    default = dtype in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool)
    if array.size == 0:
        if array.ndim != 1:
            suffixes.append(f"size={tuple(array.shape)}")
        if dtype is not dtypes.get_default_dtype():
            suffixes.append(f"dtype={dtype}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:  # as PyTorch: a summary would show no values
            suffixes.append(f"size={tuple(array.shape)}")
        if not default:
            suffixes.append(f"dtype={dtype}")
        body = array_str(array, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
