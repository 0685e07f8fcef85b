"""The op catalog, generated from the registry: ``python -m ember.ops.catalog > docs/ops.md``.
A test keeps docs/ops.md equal to this output, so the list never drifts from the code."""
from __future__ import annotations

import inspect

from .registry import OPS

_TITLES = {"ember": "ember", "linalg": "ember.linalg", "nn.functional": "ember.nn.functional",
           "special": "ember.special", "fft": "ember.fft"}


def _signature(info) -> str:
    try:
        text = str(inspect.signature(info.function))
    except (TypeError, ValueError):
        text = "(...)"
    return text.replace("|", "\\|")


def markdown() -> str:
    lines = [
        "# Ops",
        "",
        "Generated from the op registry by `python -m ember.ops.catalog > docs/ops.md`.",
        "Every op here is tested by the op table on every available device: gradcheck and, "
        "where marked, gradgradcheck in float64, and PyTorch as an oracle in float64 and "
        "float32. All ops run on the CPU (NumPy) and on CUDA (CuPy) through the same code.",
        "",
    ]
    for namespace, title in _TITLES.items():
        entries = sorted((name, info) for name, info in OPS.items()
                         if info.namespace == namespace)
        if not entries:
            continue
        lines += [f"## {title} ({len(entries)} ops)", "",
                  "| op | signature | gradient | double backward | Tensor methods | summary |",
                  "|---|---|---|---|---|---|"]
        for name, info in entries:
            short = name.split(".")[-1]
            first_paragraph = info.doc.split("\n\n")[0] if info.doc else ""
            summary = " ".join(first_paragraph.split()).replace("|", "\\|")
            methods = ", ".join(f"`{m}`" for m in info.methods if not m.startswith("__"))
            lines.append(
                f"| `{short}` | `{short}{_signature(info)}` | "
                f"{'yes' if info.differentiable else 'no'} | "
                f"{'yes' if info.gradgrad else 'no'} | {methods} | {summary} |")
        lines.append("")
    lines.append(f"{len(OPS)} ops in all; devices: cpu, cuda.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import ember  # noqa: F401  (fills the registry)

    print(markdown(), end="")
