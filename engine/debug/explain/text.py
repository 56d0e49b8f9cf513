"""How explain's sentences fill their fields."""
from __future__ import annotations

import re
import unicodedata
from typing import Any

from ...ir.phrases import Phrase


def say(phrase: Phrase, lang: str, **fields: Any) -> str:
    """`phrase` in `lang`, with lists of dimensions and sizes written as [1, 2], the notation of
    MLIR and of the spec (a Phrase's own fields would read (1, 2), as indices do)."""
    return phrase.say(lang, **{k: brackets(v) for k, v in fields.items()})


def brackets(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(brackets(v)) for v in value) + "]"
    return value


# -- wrapping for terminals: Japanese has no spaces between words and its characters are two
# columns wide, so lines break between any two CJK characters and are measured in columns.

_CJK = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_TOKENS = re.compile(rf"\s+|[{_CJK}]|[^\s{_CJK}]+")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_NO_LINE_START = set("、。，．）」』】〕：；！？ー・")
_NO_LINE_END = set("（「『【〔")


def columns(text: str) -> int:
    """How many terminal columns `text` takes (wide CJK characters two, combining marks none)."""
    return sum(0 if unicodedata.combining(ch) or unicodedata.category(ch) == "Mn"
               else 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def wrap(text: str, width: int, indent: str = "", continuation: str = "") -> list[str]:
    """`text` in lines of at most `width` columns (a word longer than a line is cut), the first
    line starting with `indent`, the others with `continuation`."""
    lines: list[str] = []
    line, has_content, space = indent, False, False
    for token in _TOKENS.findall(text):
        if token.isspace():
            space = has_content
            continue
        piece = (" " if space else "") + token
        if has_content and columns(line + piece) > width:
            carried = ""
            if token in _NO_LINE_START and not space and _CJK_CHAR.match(line[-1]):
                line, carried = line[:-1], line[-1]  # a closing mark never starts a line: take a character with it
            while line[-1:] in _NO_LINE_END and len(line.strip()) > 1:
                line, carried = line[:-1], line[-1] + carried  # nor does an opening mark end one
            lines.append(line)
            line, piece = continuation, carried + token
        while columns(line + piece) > width and len(piece) > 1 and not has_content:
            cut = _fitting(piece, width - columns(line))
            lines.append(line + piece[:cut])
            line, piece = continuation, piece[cut:]
        line += piece
        has_content, space = True, False
    lines.append(line)
    return lines


def _fitting(text: str, room: int) -> int:
    """How many leading characters of `text` fit in `room` columns (at least one)."""
    used = 0
    for i, ch in enumerate(text):
        used += columns(ch)
        if used > room:
            return max(i, 1)
    return len(text)


def paragraphs(text: str) -> list[str]:
    """A multi-line text (plain words from a TOML file) as one line per paragraph: lines joined
    with a space, or with none where Japanese meets Japanese (it has no spaces between words)."""
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        joined = lines[0] if lines else ""
        for line in lines[1:]:
            glue = "" if _CJK_CHAR.match(joined[-1]) and _CJK_CHAR.match(line[0]) else " "
            joined += glue + line
        if joined:
            out.append(" ".join(joined.split()))
    return out
