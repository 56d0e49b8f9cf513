"""XLA's shape text as the IR keeps it (an HLO instruction's `xla_shape` attribute): splitting a
tuple shape `(f32[2]{0}, (s32[], u32[]))` into its elements, for every layer that reads it (the
layout assignment, the HLO printer, the graph labels)."""
from __future__ import annotations

import re

_COMMENT = re.compile(r"/\*.*?\*/", re.S)


def tuple_shape_elements(text: str) -> list[str]:
    """The top-level element texts of a tuple shape's text, `(a, (b, c), d)` -> `a`, `(b, c)`, `d`
    (`()` has none). XLA's `/*index=5*/` comments in long tuples are left out; the text must be
    a tuple shape (start with `(` and end with `)`)."""
    inner = _COMMENT.sub("", text).strip()[1:-1]
    parts, depth, start = [], 0, 0
    for i, char in enumerate(inner):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(inner[start:i].strip())
            start = i + 1
    if inner.strip():
        parts.append(inner[start:].strip())
    return parts


__all__ = ["tuple_shape_elements"]
