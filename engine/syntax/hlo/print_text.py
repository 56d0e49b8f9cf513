"""Text pieces of XLA's HLO printing that the printer (printer.py) puts together: names, quoted
strings, frontend attributes, tuple shapes, and the check that a written attribute still says what
the IR says."""
from __future__ import annotations

import re

from ...ir.errors import HlodbgError, SourcePos, SourceText


def hlo_name(name: str) -> str:
    """A name as an HLO identifier `[a-zA-Z_][a-zA-Z0-9_.-]*` (MLIR names may be `0` or `x#1`)."""
    cleaned = "".join(c if c.isalnum() or c in "_.-" else "." for c in name.lstrip("%"))
    return cleaned if cleaned[:1].isalpha() or cleaned[:1] == "_" else "v" + cleaned


def same_value(name: str, raised: str, written: str) -> bool:
    """Whether an attribute as XLA wrote it still says what the IR says (then the written form,
    e.g. replica groups as an iota or mesh axes, is printed rather than the raised list)."""
    from .attr_values import DECODERS

    decoder = DECODERS[_SPELLING_DECODERS[name]]

    def decoded(text: str):
        return decoder(text, SourcePos(SourceText(text, "<printer>"), 0), name)

    try:
        return decoded(raised) == decoded(written)
    except HlodbgError:
        return False


_SPELLING_DECODERS = {"replica_groups": "replica_groups"}


def tuple_element_texts(shape: str) -> list[str]:
    """The element shapes of a tuple shape's text, `(f32[2]{0}, (s32[], u32[]))` -> two texts."""
    inner = re.sub(r"/\*.*?\*/", "", shape).strip()[1:-1]
    parts, depth, start = [], 0, 0
    for i, c in enumerate(inner):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(inner[start:i].strip())
            start = i + 1
    parts.append(inner[start:].strip())
    return [p for p in parts if p]


def strip_layouts(shape: str) -> str:
    return re.sub(r"\{[^{}]*\}", "", shape)


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def frontend_attributes_text(values: dict) -> str:
    """`{k="v",k2={brace blob}}`: values XLA wrote as brace blobs go back unquoted."""
    items = []
    for key, value in dict(values).items():
        value = str(value)
        items.append(f"{key}={value}" if value.startswith("{") and value.endswith("}") else f"{key}={quoted(value)}")
    return "{" + ",".join(items) + "}"


__all__ = ["frontend_attributes_text", "hlo_name", "quoted", "same_value", "strip_layouts", "tuple_element_texts"]
