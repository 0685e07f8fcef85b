"""Turning DOT text into pictures with Graphviz: the ``graphviz`` Python package (an extra:
``pip install graphviz``) driving the ``dot`` program (Debian: ``apt-get install graphviz``).
"""
from __future__ import annotations

import warnings

FORMATS = ("svg", "png", "pdf")


class GraphvizUnavailable(RuntimeError):
    """Graphviz (the Python package or the ``dot`` program) is not installed."""


def _import_graphviz():
    try:
        import graphviz
    except ImportError:
        raise ImportError("ember.viz renders pictures with the graphviz package: "
                          "pip install graphviz (and apt-get install graphviz for the "
                          "dot program)") from None
    return graphviz


def pipe(source: str, format: str = "svg") -> bytes:
    """The picture Graphviz's ``dot`` draws from ``source``, as bytes in ``format``.

    Raises GraphvizUnavailable when the package or the program is missing.
    """
    if format not in FORMATS:
        raise ValueError(f"unsupported format {format!r}; ember.viz renders "
                         f"{', '.join(FORMATS)} (or 'dot' for the text)")
    try:
        graphviz = _import_graphviz()
    except ImportError:
        raise GraphvizUnavailable("the graphviz Python package is not installed: pip install "
                                  "graphviz (and apt-get install graphviz for the dot "
                                  "program)") from None
    try:
        return graphviz.pipe("dot", format, source.encode("utf-8"), quiet=True)
    except graphviz.ExecutableNotFound:
        raise GraphvizUnavailable("the Graphviz program 'dot' was not found on PATH: "
                                  "apt-get install graphviz (Debian/Ubuntu)") from None


_told = False


def tell_once(message: str) -> None:
    """Warn that Graphviz is missing, once per process."""
    global _told
    if not _told:
        _told = True
        warnings.warn(message, UserWarning, stacklevel=3)
