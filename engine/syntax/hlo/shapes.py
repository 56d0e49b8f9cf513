"""HLO shapes: `f32[2,<=8,?]{2,1,0:T(8,128)S(1)}`, `pred[]`, `token[]`, tuples `(f32[2], ())`.

Grammar from hlo_text.md §4 (XLA's ParseShape / ParseDimensionSizes / ParseLayout). The layout is
kept as its exact brace text; only its minor-to-major list is checked here (its length must be the
rank, as XLA requires), the tiles and memory spaces are read by engine/machine/layout_text.py.
"""
from __future__ import annotations

import re

from .lexer import ELEMENT_TYPES, Cursor
from .tree import HloShape

_ELEMENT = re.compile(r"[a-z][a-z0-9]*(?=\[)")
_PLAIN_DIMS = re.compile(r"(\d+(?:,\d+)*)?\]")
_DIM = re.compile(r"\s*(?:(<=)\s*)?(\d+|\?)\s*")
_MINOR_TO_MAJOR = re.compile(r"\{\s*((?:\d+\s*(?:,\s*\d+\s*)*)?)(?=[:}])")
# Deeper is surely not a program, and would exhaust Python's stack.
_MAX_TUPLE_NESTING = 64
_LAYOUT_START = re.compile(r"\{\s*(?:\d|:|\})")


def starts_shape(cur: Cursor) -> bool:
    """Whether a shape begins at the cursor: `(` or an element type name followed by `[`."""
    cur.skip()
    if cur.text.startswith("(", cur.pos) and cur.pos < cur.end:
        return True
    m = _ELEMENT.match(cur.text, cur.pos, cur.end)
    return bool(m) and m.group(0) in ELEMENT_TYPES


def parse_shape(cur: Cursor, what: str = "a shape", depth: int = 0) -> HloShape:
    cur.skip()
    start = cur.pos
    if cur.accept("("):
        if depth >= _MAX_TUPLE_NESTING:
            cur.fail(f"tuple shapes are nested more than {_MAX_TUPLE_NESTING} deep", start)
        elements: list[HloShape] = []
        if not cur.accept(")"):
            while True:
                elements.append(parse_shape(cur, "a tuple element shape", depth + 1))
                if cur.accept(")"):
                    break
                cur.expect(",", "',' or ')' in a tuple shape")
        return HloShape(None, elements=tuple(elements), pos=cur.at(start))
    m = _ELEMENT.match(cur.text, cur.pos, cur.end)
    if not m or m.group(0) not in ELEMENT_TYPES:
        if cur.text.startswith("b(", cur.pos):
            cur.fail("buffer shapes 'b(...)' (printed by the newest XLA) are not supported: "
                     "print the module with an XLA that writes plain array shapes")
        if m:
            cur.fail(f"unknown element type '{m.group(0)}' (expected one of XLA's primitive "
                     f"types: pred, s8..s64, u8..u64, f16, bf16, f32, f64, c64, c128, f8*, ...)")
        cur.expected(what)
    element = m.group(0)
    cur.pos = m.end() + 1  # past '['
    dims, bounded = _dimensions(cur)
    layout = _layout(cur, len(dims))
    return HloShape(element, tuple(dims), tuple(bounded), layout, pos=cur.at(start))


def _dimensions(cur: Cursor) -> tuple[list, list]:
    """`2,<=8,?]` after the `[`: sizes (None for `?`) and which ones are `<=` bounds."""
    text = cur.text
    plain = _PLAIN_DIMS.match(text, cur.pos, cur.end)
    if plain:  # the common `2,3]`: one regex step
        cur.pos = plain.end()
        dims: list = [int(d) for d in plain.group(1).split(",")] if plain.group(1) else []
        return dims, [False] * len(dims)
    dims = []
    bounded: list = []
    if cur.accept("]"):
        return dims, bounded
    while True:
        m = _DIM.match(text, cur.pos, cur.end)
        if not m:
            cur.expected("a dimension size (an integer, '<=N' or '?')")
        dims.append(None if m.group(2) == "?" else int(m.group(2)))
        bounded.append(bool(m.group(1)))
        cur.pos = m.end()
        if cur.accept("]"):
            return dims, bounded
        cur.expect(",", "',' or ']' in the dimensions")


def _layout(cur: Cursor, rank: int):
    """The layout's brace text after the dims, or None. A `{` is a layout only when an integer,
    `:` or `}` follows (else it opens a computation body: `-> f32[2] {`)."""
    text = cur.text
    m = _LAYOUT_START.match(text, cur.pos, cur.end)
    if not m:
        return None
    start = cur.pos
    end = cur.group_end(start)
    m2m = _MINOR_TO_MAJOR.match(text, start, end)
    if not m2m:
        cur.fail("expected a layout: '{' minor-to-major dimensions [':' tiles, memory space...] '}'",
                 start)
    listed = [int(d) for d in m2m.group(1).split(",") if d.strip()]
    # `{}` (and `{:S(1)}`) is how scalars print; an empty list means "no minor-to-major given".
    if listed and sorted(listed) != list(range(rank)):
        cur.fail(f"the layout's minor-to-major {{{m2m.group(1).strip()}}} must be a permutation "
                 f"of the {rank} dimension(s) 0..{rank - 1}", start)
    cur.pos = end
    return text[start:end]
