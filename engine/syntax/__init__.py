"""Layer 2, syntax: the input languages (frontends), each in its own folder — `mlir/` reads and
prints StableHLO/MLIR text, `hlo/` reads XLA HLO text. A frontend is described in frontend.py; `frontend_for` picks one.

Imports only ir/.
"""
from __future__ import annotations

from .frontend import Frontend, parse_one
from .hlo import HLO
from .mlir import MLIR

FRONTENDS: tuple[Frontend, ...] = (MLIR, HLO)


def frontend_for(text: str, filename: str = "") -> Frontend:
    """The frontend whose language the text is in: the text's first words decide, then the
    file name's ending; MLIR otherwise, so its parser reports what it did not expect. The text
    comes first because names lie: JAX users save `lower(x).as_text()` (MLIR) as `out.txt`, and
    a `.hlo` file may hold either language."""
    for frontend in FRONTENDS:
        if frontend.recognizes(text):
            return frontend
    for frontend in FRONTENDS:
        if filename.endswith(frontend.suffixes):
            return frontend
    return MLIR


def looks_like_program(text: str) -> bool:
    """Whether some frontend recognizes the text (a one-line program rather than a path)."""
    return any(frontend.recognizes(text) for frontend in FRONTENDS)


__all__ = ["FRONTENDS", "Frontend", "frontend_for", "looks_like_program", "parse_one"]
