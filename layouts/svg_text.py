"""Text and numbers as an SVG document holds them: escaped for XML, short and exact enough.

Apart from svg.py so that drawings without a graph (the op diagrams, the memory picture) use them
without loading the graph's modules.
"""
from __future__ import annotations

import re

# Characters XML 1.0 forbids even when escaped; MLIR strings can hold them (`"\00"`).
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_ATTRIBUTE_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def escape_text(text: object) -> str:
    """Character data for an element: markup escaped, characters XML cannot hold replaced."""
    return _INVALID_XML.sub("\ufffd", str(text)).translate(_TEXT_ESCAPES)


def escape_attribute(text: object) -> str:
    """A double-quoted attribute value; newlines survive as character references."""
    return _INVALID_XML.sub("\ufffd", str(text)).translate(_ATTRIBUTE_ESCAPES)


def number(value: float) -> str:
    """At most two decimals and no trailing zeros: `12`, `3.5`, `-0.25`."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


__all__ = ["escape_attribute", "escape_text", "number"]
