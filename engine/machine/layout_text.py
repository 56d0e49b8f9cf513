"""XLA's text for layouts and shapes: `{1,0:T(8,128)(2,1)S(1)}` and `bf16[4096,8192]{1,0:T(8,128)(2,1)}`.

The grammar is what XLA's `Layout::Print` emits (openxla/xla: xla/layout.cc; ../shared/docs/tpu.md
§1.1): the minor-to-major dims, then after one `:` the optional pieces in a fixed order —
tiles `T(..)(..)`, `L(n)` (tail padding alignment), `E(n)` (element size in bits), `S(n)` (memory
space). The pieces hlodbg does not model (dim-level types `D(..)`, sparse index/pointer types
`#(..)` / `*(..)`, split configs `SC(..)`, physical shapes `P(..)`, dynamic-shape metadata `M(n)`)
are refused by name rather than skipped, so a layout is never silently read as something else.
"""
from __future__ import annotations

import functools
from typing import Any, Optional

import numpy as np

from ..ir.errors import HlodbgError
from ..ir.types import FLOAT_TYPE_NAMES, FloatType, IntegerType

# Inside a tile, `*` (XLA's Tile::kCombineDimension): fold this dim into the next more minor one.
COMBINE = -1


class LayoutError(HlodbgError):
    """A layout or shape string hlodbg cannot read, or a layout that does not fit its shape."""

    def __init__(self, message: str, column: Optional[int] = None, pos=None):
        self.column = column  # 1-based, in the layout text, when the text is at fault
        super().__init__(message, pos)


# -- element type names ------------------------------------------------------------------------

@functools.cache
def xla_dtypes() -> dict[str, np.dtype]:
    """XLA's element type names -> numpy dtypes, made on first use (ml_dtypes loads late, engine/ir/ml_types.py)."""
    names: dict[str, np.dtype] = {"pred": np.dtype(np.bool_)}
    for width in (2, 4, 8, 16, 32, 64):
        names[f"s{width}"] = IntegerType(width).numpy_dtype
        names[f"u{width}"] = IntegerType(width, "unsigned").numpy_dtype
    for name in FLOAT_TYPE_NAMES:
        if name != "tf32":  # no XLA element type of its own (MLIR's tf32 is stored as f32)
            names[name.lower()] = FloatType(name).numpy_dtype  # f8E4M3FN -> f8e4m3fn, as XLA spells it
    names["c64"] = np.dtype(np.complex64)
    names["c128"] = np.dtype(np.complex128)
    return names


@functools.cache
def _xla_names() -> dict[np.dtype, str]:
    return {dtype: name for name, dtype in xla_dtypes().items()}


def xla_type_name(dtype) -> str:
    """XLA's name of a numpy element type: f32, bf16, s4, pred, f8e4m3fn, c64."""
    try:
        return _xla_names()[np.dtype(dtype)]
    except KeyError:
        raise LayoutError(f"no XLA element type for numpy dtype {np.dtype(dtype)}") from None


# -- layouts ----------------------------------------------------------------------------------

# Pieces XLA may print that hlodbg does not model: their prefix and what they are.
_UNMODELLED = (
    ("SC(", "split config SC(...)"),
    ("D(", "dim-level types D(...) (sparse arrays)"),
    ("#(", "sparse index type #(...)"),
    ("*(", "sparse pointer type *(...)"),
    ("P(", "physical shape P(...) (sparse arrays)"),
    ("M(", "dynamic-shape metadata M(...)"),
)


class TextReader:
    """A cursor over layout text that reports 1-based columns of the whole string it was given."""

    def __init__(self, text: str, start: int = 0, what: str = "layout"):
        self.text = text
        self.at = start
        self.what = what

    def error(self, expected: str) -> LayoutError:
        found = self.text[self.at] if self.at < len(self.text) else "end of text"
        found = repr(found) if found != "end of text" else found
        return LayoutError(f"bad {self.what} {self.text!r}: expected {expected} at column {self.at + 1}, "
                           f"found {found}", self.at + 1)

    def skip_spaces(self) -> None:
        while self.at < len(self.text) and self.text[self.at] == " ":
            self.at += 1

    def peek(self, token: str) -> bool:
        self.skip_spaces()
        return self.text.startswith(token, self.at)

    def take(self, token: str) -> bool:
        if self.peek(token):
            self.at += len(token)
            return True
        return False

    def expect(self, token: str, expected: Optional[str] = None) -> None:
        if not self.take(token):
            raise self.error(expected or repr(token))

    def integer(self, expected: str = "a number") -> int:
        self.skip_spaces()
        end = self.at
        while end < len(self.text) and self.text[end].isdigit():
            end += 1
        if end == self.at:
            raise self.error(expected)
        value = int(self.text[self.at:end])
        self.at = end
        return value

    def numbers(self, allow_combine: bool) -> tuple[int, ...]:
        """`a,b,...` up to the closing `)`; `*` where allowed."""
        out = []
        while True:
            if allow_combine and self.take("*"):
                out.append(COMBINE)
            else:
                out.append(self.integer("a tile size or '*'" if allow_combine else "a number"))
            if not self.take(","):
                return tuple(out)

    def refuse_unmodelled(self) -> None:
        self.skip_spaces()
        for prefix, what in _UNMODELLED:
            if self.text.startswith(prefix, self.at):
                raise LayoutError(f"layout {self.text!r}: {what} at column {self.at + 1} is not supported "
                                  "by hlodbg", self.at + 1)


# (minor_to_major, tiles, tail padding alignment, element size in bits, memory space)
LayoutFields = tuple[tuple[int, ...], tuple[tuple[int, ...], ...], int, int, int]


def read_layout_fields(reader: TextReader) -> LayoutFields:
    """The layout at the reader: `{...}`, or the same without braces (then up to the end)."""
    braced = reader.take("{")
    minor_to_major: tuple[int, ...] = ()
    reader.skip_spaces()
    if reader.at < len(reader.text) and reader.text[reader.at].isdigit():
        minor_to_major = reader.numbers(allow_combine=False)
    tiles: list[tuple[int, ...]] = []
    tail, bits, space = 1, 0, 0
    if reader.take(":"):
        reader.refuse_unmodelled()
        if reader.take("T"):
            reader.expect("(", "'(' after T")
            while True:
                tiles.append(reader.numbers(allow_combine=True))
                reader.expect(")", "',' or ')' in a tile")
                if not reader.take("("):
                    break
        reader.refuse_unmodelled()
        if reader.take("L("):
            tail = reader.integer("the tail padding alignment")
            reader.expect(")")
        reader.refuse_unmodelled()
        if reader.take("E("):
            bits = reader.integer("the element size in bits")
            reader.expect(")")
        reader.refuse_unmodelled()
        if reader.take("S("):
            space = reader.integer("the memory space")
            reader.expect(")")
        reader.refuse_unmodelled()
    if braced:
        reader.expect("}", "'}' (after the minor-to-major dims: ',' or ':'; after a piece: the next of "
                           "T(...), L(n), E(n), S(n) in that order)")
    elif reader.at != len(reader.text):
        raise reader.error("',', ':' or the next of T(...), L(n), E(n), S(n) in that order")
    reader.skip_spaces()
    return minor_to_major, tuple(tiles), tail, bits, space


def layout_text(layout: Any) -> str:
    """XLA's text of a layout (anything with Layout's fields): `{1,0:T(8,128)(2,1)S(1)}`."""
    pieces = []
    if layout.tiles:
        pieces.append("T" + "".join(tile_text(tile) for tile in layout.tiles))
    if layout.tail_padding_alignment != 1:
        pieces.append(f"L({layout.tail_padding_alignment})")
    if layout.element_size_in_bits:
        pieces.append(f"E({layout.element_size_in_bits})")
    if layout.memory_space:
        pieces.append(f"S({layout.memory_space})")
    dims = ",".join(str(d) for d in layout.minor_to_major)
    return "{" + dims + (":" + "".join(pieces) if pieces else "") + "}"


def tile_text(tile) -> str:
    return "(" + ",".join("*" if d == COMBINE else str(d) for d in tile) + ")"


# -- shapes -----------------------------------------------------------------------------------

def read_shape_head(reader: TextReader) -> tuple[np.dtype, tuple[int, ...]]:
    """`f32[3,5]` at the reader (a layout may follow)."""
    start = reader.at
    while reader.at < len(reader.text) and reader.text[reader.at].isalnum():
        reader.at += 1
    name = reader.text[start:reader.at]
    if name not in xla_dtypes():
        reader.at = start
        raise reader.error("an XLA element type (" + ", ".join(xla_dtypes()) + ")")
    reader.expect("[")
    dims: tuple[int, ...] = ()
    if not reader.peek("]"):
        if reader.peek("<=") or reader.peek("?"):
            raise LayoutError(f"shape {reader.text!r}: dynamic dimensions (column {reader.at + 1}) are not "
                              "supported by hlodbg", reader.at + 1)
        dims = reader.numbers(allow_combine=False)
    reader.expect("]", "',' or ']' in the dimensions")
    return xla_dtypes()[name], dims


def shape_text(dtype, shape) -> str:
    """`f32[3,5]`."""
    return f"{xla_type_name(dtype)}[{','.join(str(int(d)) for d in shape)}]"


__all__ = ["COMBINE", "LayoutError", "LayoutFields", "TextReader", "layout_text", "xla_dtypes",
           "read_layout_fields", "read_shape_head", "shape_text", "tile_text", "xla_type_name"]
