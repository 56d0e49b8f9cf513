"""The literal of an HLO `constant(...)` -> a numpy array (hlo_text.md §5).

    scalar  1  -2.5e-3  true  -inf  nan  -nan(0x7f)  (1, -2)      (complex: re, im)
    array   one brace level per dimension, elements in row-major order whatever the layout:
            { { 1, 2, 3 }, { 4, 5, 6 } }     empty: {}
    tuple   ( literal, literal )             for a tuple shape
    elided  {...}  (or `...` among the elements): the printer left the values out

The elements of a large literal are split with str.split and converted by numpy in one call, so a
100 MB constant costs seconds, not minutes; only when that fails (a NaN payload, a typo) does a
per-element pass run, which also finds the offending element's position for the error.
Values are range-checked per type as XLA's parser does (an f16 literal above 65504 is an error,
not an infinity).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Optional, Union

import ml_dtypes
import numpy as np

from ...ir.errors import ParseError, SourcePos
from .lexer import Cursor
from .literal_bulk import bulk_items, only_characters
from .shapes import parse_shape
from .tree import HloShape

# XLA element type -> numpy storage (ml_dtypes for the narrow types, as engine/ir/types.py does).
_DTYPES = {
    "pred": np.dtype(np.bool_),
    "s1": np.dtype(ml_dtypes.int1), "s2": np.dtype(ml_dtypes.int2),
    "s4": np.dtype(ml_dtypes.int4), "s8": np.dtype(np.int8), "s16": np.dtype(np.int16),
    "s32": np.dtype(np.int32), "s64": np.dtype(np.int64),
    "u1": np.dtype(ml_dtypes.uint1), "u2": np.dtype(ml_dtypes.uint2),
    "u4": np.dtype(ml_dtypes.uint4), "u8": np.dtype(np.uint8), "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32), "u64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "c64": np.dtype(np.complex64), "c128": np.dtype(np.complex128),
    "f4e2m1fn": np.dtype(ml_dtypes.float4_e2m1fn),
    "f8e3m4": np.dtype(ml_dtypes.float8_e3m4),
    "f8e4m3": np.dtype(ml_dtypes.float8_e4m3),
    "f8e4m3fn": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8e4m3b11fnuz": np.dtype(ml_dtypes.float8_e4m3b11fnuz),
    "f8e4m3fnuz": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "f8e5m2": np.dtype(ml_dtypes.float8_e5m2),
    "f8e5m2fnuz": np.dtype(ml_dtypes.float8_e5m2fnuz),
    "f8e8m0fnu": np.dtype(ml_dtypes.float8_e8m0fnu),
}
_COMPLEX_PART = {"c64": "f32", "c128": "f64"}
_INT_BOUNDS = {"pred": (0, 1), "s1": (-1, 0), "u1": (0, 1), "s2": (-2, 1), "u2": (0, 3),
               "s4": (-8, 7), "u4": (0, 15)}

_COMMENT = re.compile(r"/\*(?:[^*]|\*(?!/))*\*/")
_BRACE = re.compile(r"[{}]")
_BLANK = re.compile(r"\s*")
_COMMA_GAP = re.compile(r"\s*,\s*")
_NAN_PAYLOAD = re.compile(r"\s*(-?)nan\(0x([0-9A-Fa-f]+)\)\s*")
_FLOAT = re.compile(r"\s*-?(?:inf|nan|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*")
_INTEGER = re.compile(r"\s*-?\d+\s*")
_COMPLEX_ITEM = re.compile(r"\s*\(([^(),]*),([^(),]*)\)\s*")
# The characters of literals the fast numpy conversions may see: numpy also accepts '1_0',
# 'Infinity', 'NaN', so a literal with any other character takes the exact per-element pass.
_FLOAT_TEXT = "0123456789eE.-,infa{} \t\r\n"
_INT_TEXT = "0123456789-,{} \t\r\n"
# Below this many characters the exact pass is as fast as the bulk one.
_BULK_SIZE = 4096


@dataclass(frozen=True)
class ElidedLiteral:
    """`{...}`: the printer left the values out (post-optimization text elides constants over
    ten elements). The lowering turns it into the IR's ElidedElements."""

    shape: HloShape
    pos: SourcePos


def literal_dtype(element: str) -> Optional[np.dtype]:
    """The numpy dtype an XLA element type's values are stored in (None for token/opaque)."""
    return _DTYPES.get(element)


def parse_literal(text: str, pos: SourcePos,
                  shape: HloShape) -> Union[np.ndarray, tuple, ElidedLiteral]:
    """The value of a constant's literal `text` (starting at `pos`) for `shape`: an array of the
    shape's element type, a tuple of those for a tuple shape, or ElidedLiteral for `{...}`."""
    return _Literal(text, pos).value(0, len(text), shape)


class _Literal:
    def __init__(self, text: str, pos: SourcePos):
        # XLA prints index comments inside literals (`{ /*i0=0*/ {1} }`): blanked out, so the
        # offsets of everything else stay true.
        if "/*" in text:
            text = _COMMENT.sub(lambda m: " " * len(m.group(0)), text)
            if "/*" in text:
                raise ParseError("unterminated '/*' comment in the literal",
                                 SourcePos(pos.source, pos.offset + text.index("/*")))
        self.text = text
        self.pos = pos

    def fail(self, message: str, offset: int) -> ParseError:
        return ParseError(message, SourcePos(self.pos.source, self.pos.offset + offset))

    def value(self, start: int, end: int, shape: HloShape):
        if self.text.find("...", start, end) >= 0:
            return ElidedLiteral(shape, SourcePos(self.pos.source, self.pos.offset + start))
        if shape.is_tuple:
            return self._tuple(start, end, shape)
        dtype = literal_dtype(shape.element or "")
        if dtype is None:
            raise self.fail(f"a constant of type {shape.element} cannot have a literal", start)
        if any(d is None for d in shape.dims) or any(shape.bounded):
            raise self.fail(f"a constant needs static dimensions, not {shape.text(False)}", start)
        dims = tuple(int(d) for d in shape.dims)
        first = _BLANK.match(self.text, start, end).end()
        if dims and 0 not in dims and first < end and not _BRACE.search(self.text, first, end):
            # `f32[3] constant(1)` (XLA's builder tests): XLA's parser fills the elements in order
            # from what is written and leaves the rest zero, so this is {1, 0, 0}, not a splat.
            values = np.zeros(dims, dtype=dtype)
            values.flat[0] = self.value(start, end, dataclasses.replace(shape, dims=(), bounded=(), layout=None))
            return values
        complex_part = _COMPLEX_PART.get(shape.element)
        if complex_part:
            leaves = self._leaves(start, end, dims)
            values = np.empty(len(leaves) and int(np.prod(dims)), dtype=dtype)
            values.real, values.imag = self._complex(leaves, dims[-1] if dims else 1,
                                                     complex_part)
            return values.reshape(dims)
        items = None
        if dims and 0 not in dims and shape.element != "pred" and end - start > _BULK_SIZE:
            items = bulk_items(self.text[start:end], dims)
        if items is None:
            leaves = self._leaves(start, end, dims)
            items = self._items(leaves, dims[-1] if dims else 1)
            leaves_of = lambda: leaves  # noqa: E731
        else:
            leaves_of = lambda: self._leaves(start, end, dims)  # noqa: E731
        return self._convert(items, leaves_of, self.text[start:end], shape.element,
                             dtype).reshape(dims)

    # -- structure --------------------------------------------------------------------------------

    def _tuple(self, start: int, end: int, shape: HloShape) -> tuple:
        """`( literal, literal )`: the elements split at top-level commas."""
        text = self.text
        first = _BLANK.match(text, start, end).end()
        if not text.startswith("(", first):
            raise self.fail(f"expected '(' opening a tuple literal for {shape.text(False)}", first)
        parts, depth, piece_start = [], 0, first + 1
        for m in re.finditer(r"[(){},]", text[first:end]):
            i = first + m.start()
            ch = m.group(0)
            if ch in "({":
                depth += 1
            elif ch in ")}":
                depth -= 1
                if depth == 0:
                    close = i
                    break
            elif depth == 1:
                parts.append((piece_start, i))
                piece_start = i + 1
        else:
            raise self.fail("the tuple literal's '(' is never closed", first)
        if _BLANK.match(text, close + 1, end).end() != end:
            raise self.fail("unexpected text after the tuple literal", close + 1)
        if _BLANK.match(text, piece_start, close).end() != close or parts:
            parts.append((piece_start, close))
        if len(parts) != len(shape.elements):
            raise self.fail(f"the tuple literal has {len(parts)} element(s), its shape "
                            f"{shape.text(False)} {len(shape.elements)}", first)
        return tuple(self.value(s, e, sub) for (s, e), sub in zip(parts, shape.elements))

    def _leaves(self, start: int, end: int, dims: tuple[int, ...]) -> list[tuple[int, int]]:
        """The (start, end) of each innermost brace group's content, checking that the braces
        nest once per dimension with the right number of groups at each level."""
        text = self.text
        rank = len(dims)
        if rank == 0:
            brace = _BRACE.search(text, start, end)
            if brace:
                raise self.fail("a scalar literal has no braces", brace.start())
            return [(start, end)]
        first = _BLANK.match(text, start, end).end()
        if not text.startswith("{", first) or first >= end:
            raise self.fail(f"expected '{{' opening a literal of rank {rank}", first)
        leaves: list[tuple[int, int]] = []
        counts: list[int] = []      # groups seen inside each open group
        opens: list[int] = []       # where each open group starts
        prev_end, prev = first, ""
        for m in _BRACE.finditer(text, first, end):
            at, ch = m.start(), m.group(0)
            depth = len(opens)
            if depth == rank:  # inside a leaf: only its closing brace may come
                if ch == "{":
                    raise self.fail(f"too many brace levels for a literal of rank {rank}", at)
                leaves.append((prev_end, at))
            elif depth > 0:
                gap = _COMMA_GAP if prev == "}" and ch == "{" else _BLANK
                gap_ok = gap.fullmatch(text, prev_end, at) is not None
                if not gap_ok:
                    raise self.fail(f"expected '{{' or '}}' at brace level {depth} (rank {rank})",
                                    _BLANK.match(text, prev_end, at).end())
            elif prev:  # a second top-level group
                raise self.fail("unexpected text after the literal", at)
            if ch == "{":
                if counts:
                    counts[-1] += 1
                counts.append(0)
                opens.append(at)
            else:
                level = len(opens) - 1
                inner = counts.pop()
                if level < rank - 1 and inner != dims[level]:
                    raise self.fail(f"expected {dims[level]} group(s) in dimension {level}, "
                                    f"found {inner}", opens[-1])
                opens.pop()
            prev, prev_end = ch, at + 1
        if opens:
            raise self.fail("the literal's '{' is never closed", opens[-1])
        rest = _BLANK.match(text, prev_end, end).end()
        if rest != end:
            raise self.fail("unexpected text after the literal", rest)
        if not leaves and 0 not in dims:
            raise self.fail(f"expected {dims[0]} element(s) in dimension 0, found 0", first)
        return leaves

    def _items(self, leaves: list[tuple[int, int]], per_leaf: int) -> list[str]:
        """The element texts of all leaves, each leaf checked to hold `per_leaf` of them."""
        text = self.text
        items: list[str] = []
        for start, end in leaves:
            chunk = text[start:end]
            found = chunk.split(",") if chunk.strip() else []
            if len(found) != per_leaf:
                raise self.fail(f"expected {per_leaf} element(s) here, found {len(found)}", start)
            items.extend(found)
        return items

    def _located_items(self, leaves: list[tuple[int, int]]):
        """(offset, text) of every element: the slow path, for errors and NaN payloads."""
        for start, end in leaves:
            chunk = self.text[start:end]
            if not chunk.strip():
                continue
            for piece in chunk.split(","):
                yield start, piece
                start += len(piece) + 1

    # -- values -----------------------------------------------------------------------------------

    def _convert(self, items: list, leaves_of, written: str, element: str,
                 dtype: np.dtype) -> np.ndarray:
        """`items` (str or bytes) as `element` values; `leaves_of()` gives the leaf spans for
        the exact pass that locates errors; `written` is the items' text, checked for
        characters numpy would accept but HLO does not ('1_0', 'Infinity')."""
        if element == "pred":
            return self._pred(items, leaves_of())
        if dtype.kind in "iu" or element in _INT_BOUNDS:
            return self._integers(items, leaves_of, written, element, dtype)
        return self._floats(items, leaves_of, written, element, dtype)

    def _pred(self, items: list[str], leaves) -> np.ndarray:
        words = np.array([s.strip() for s in items], dtype=str)
        truth = (words == "true") | (words == "1")
        bad = ~(truth | (words == "false") | (words == "0"))
        if bad.any():
            offset, item = list(self._located_items(leaves))[int(np.argmax(bad))]
            raise self.fail(f"expected true or false, found '{item.strip()}'",
                            offset + len(item) - len(item.lstrip()))
        return truth

    def _integers(self, items: list, leaves_of, written: str, element: str,
                  dtype: np.dtype) -> np.ndarray:
        lo, hi = _INT_BOUNDS.get(element) or (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
        wide_dtype = np.uint64 if element == "u64" else np.int64
        try:
            if not only_characters(written, _INT_TEXT):
                raise ValueError("not HLO integer syntax")
            wide = np.array(items, dtype=wide_dtype)
            if wide.size and (wide.min() < lo or wide.max() > hi):
                raise ValueError("out of range")
        except (ValueError, OverflowError):
            values = []
            for offset, item in self._located_items(leaves_of()):
                at = offset + len(item) - len(item.lstrip())
                if not _INTEGER.fullmatch(item):
                    raise self.fail(f"expected an integer for {element}, found "
                                    f"'{_clip(item.strip())}'", at) from None
                if not lo <= int(item) <= hi:
                    raise self.fail(f"{item.strip()} is out of range for {element} "
                                    f"[{lo}, {hi}]", at) from None
                values.append(int(item))
            wide = np.array(values, dtype=wide_dtype)
        return wide.astype(dtype)

    def _floats(self, items: list, leaves_of, written: str, element: str,
                dtype: np.dtype) -> np.ndarray:
        payloads: list[tuple[int, int, int]] = []  # (index, sign, payload)
        try:
            if not only_characters(written, _FLOAT_TEXT):
                raise ValueError("not HLO float syntax, or NaN payloads")
            wide = np.array(items, dtype=np.float64)
        except ValueError:
            wide = np.empty(len(items), dtype=np.float64)
            leaves = leaves_of()
            for index, (offset, item) in enumerate(self._located_items(leaves)):
                at = offset + len(item) - len(item.lstrip())
                payload = _NAN_PAYLOAD.fullmatch(item)
                if payload:
                    payloads.append((index, bool(payload.group(1)), int(payload.group(2), 16)))
                    wide[index] = np.nan
                elif _FLOAT.fullmatch(item):
                    wide[index] = float(item)
                else:
                    raise self.fail(f"expected a number for {element}, found "
                                    f"'{_clip(item.strip())}'", at) from None
        self._check_float_range(wide, leaves_of, element, dtype)
        values = wide.astype(dtype)
        if payloads:
            _set_nan_payloads(values, payloads, element,
                              lambda i: self._item_offset(leaves_of(), i), self.fail)
        return values

    def _check_float_range(self, wide: np.ndarray, leaves_of, element: str, dtype: np.dtype):
        if wide.size == 0:
            return
        info = ml_dtypes.finfo(dtype)
        # Out of range = rounds to infinity (or to NaN, for types without one), as XLA's parser
        # decides: a value a little past the largest finite one rounds down to it and is kept
        # (XLA's own tests write bf16 3.39e+38 for bf16's largest, 3.3895e+38). A number past the
        # largest double is already infinite here, but was not written as `inf`.
        with np.errstate(over="ignore", invalid="ignore"):
            too_big = np.isfinite(wide) & ~np.isfinite(wide.astype(dtype).astype(np.float64))
        infinite = np.flatnonzero(np.isinf(wide))
        if infinite.size:  # one pass over the items' text (masks hold many -inf)
            texts = [item for _, item in self._located_items(leaves_of())]
            for index in infinite:
                if "inf" not in texts[index]:
                    too_big[index] = True
        problems = [(too_big, f"is out of range for {element} (largest {float(info.max)})")]
        if not np.isinf(np.array(np.inf).astype(dtype)):
            problems.append((np.isinf(wide), f"is not representable: {element} has no infinity"))
        if not np.isnan(np.array(np.nan).astype(dtype)):
            problems.append((np.isnan(wide), f"is not representable: {element} has no NaN"))
        for mask, why in problems:
            if mask.any():
                index = int(np.argmax(mask))
                offset = self._item_offset(leaves_of(), index)
                raise self.fail(f"{_clip(self._item_text(leaves_of, index))} {why}", offset)

    def _item_text(self, leaves_of, index: int) -> str:
        offset = self._item_offset(leaves_of(), index)
        return re.split(r"[,})]", self.text[offset:offset + 40], maxsplit=1)[0].strip()

    def _item_offset(self, leaves, index: int) -> int:
        for i, (offset, item) in enumerate(self._located_items(leaves)):
            if i == index:
                return offset + len(item) - len(item.lstrip())
        return leaves[0][0] if leaves else 0

    def _complex(self, leaves, per_leaf: int, part: str) -> tuple[np.ndarray, np.ndarray]:
        """`(re, im)` elements: each part parsed like a float of the component type."""
        text = self.text
        reals, imags, real_spans, imag_spans = [], [], [], []
        for start, end in leaves:
            i, found = start, 0
            if text[start:end].strip():
                while True:
                    m = _COMPLEX_ITEM.match(text, i, end)
                    if not m:
                        raise self.fail("expected a complex element '(real, imaginary)'",
                                        _BLANK.match(text, i, end).end())
                    reals.append(m.group(1))
                    imags.append(m.group(2))
                    real_spans.append((m.start(1), m.end(1)))
                    imag_spans.append((m.start(2), m.end(2)))
                    found += 1
                    i = m.end()
                    if i >= end:
                        break
                    if text[i] != ",":
                        raise self.fail("expected ',' between complex elements", i)
                    i += 1
            if found != per_leaf:
                raise self.fail(f"expected {per_leaf} element(s) here, found {found}", start)
        dtype = _DTYPES[part]
        spans = real_spans + imag_spans
        parts = reals + imags
        both = self._floats(parts, lambda: spans, ",".join(parts), part, dtype)
        return both[:len(reals)], both[len(reals):]


def _set_nan_payloads(values: np.ndarray, payloads, element: str, offset_of, fail) -> None:
    """`nan(0x7f)`: a NaN whose mantissa bits are the payload (XLA prints non-default NaNs so)."""
    dtype = values.dtype
    info = ml_dtypes.finfo(dtype)
    bits = int(info.bits)
    mantissa = int(info.nmant)
    if not np.isinf(np.array(np.inf).astype(dtype)):
        raise fail(f"{element} has no NaN payloads (only IEEE-style types have them)",
                   offset_of(payloads[0][0]))
    unsigned = np.dtype(f"u{max(bits, 8) // 8}")
    raw = values.view(unsigned) if bits >= 8 else None
    for index, negative, payload in payloads:
        if not 0 < payload < (1 << mantissa):
            raise fail(f"NaN payload {payload:#x} does not fit the {mantissa} mantissa bits of "
                       f"{element} (and cannot be 0)", offset_of(index))
        exponent = ((1 << (bits - 1 - mantissa)) - 1) << mantissa
        raw[index] = (int(negative) << (bits - 1)) | exponent | payload


def _clip(text: str) -> str:
    return text if len(text) <= 30 else text[:27] + "..."


def parse_shaped_literal(text: str, pos: SourcePos) -> tuple[HloShape, object]:
    """A literal that carries its shape, as custom-call's `literal=` writes it:
    `f32[] 0.1`, `s32[2]{0} {1, 2}`, or a tuple `( s32[2] {1, 2}, pred[] 1 )`.
    Returns (shape, value) with the value as parse_literal gives it."""
    cur = Cursor(pos.source, pos.offset, pos.offset + len(text))
    shape, value = _shaped(cur, depth=0)
    if not cur.at_end():
        cur.expected("the end of the literal")
    return shape, value


def _shaped(cur: Cursor, depth: int) -> tuple[HloShape, object]:
    cur.skip()
    if cur.accept("("):  # a tuple of shaped literals
        if depth >= 64:
            cur.fail("tuple literals are nested more than 64 deep")
        start = cur.pos - 1
        parts = []
        if not cur.accept(")"):
            while True:
                parts.append(_shaped(cur, depth + 1))
                if cur.accept(")"):
                    break
                cur.expect(",", "',' or ')' in the tuple literal")
        shape = HloShape(None, elements=tuple(s for s, _ in parts), pos=cur.at(start))
        return shape, tuple(v for _, v in parts)
    shape = parse_shape(cur, "the literal's shape")
    value_start, value_end = cur.value_extent("the literal's value after its shape")
    literal_text = cur.text[value_start:value_end]
    return shape, parse_literal(literal_text, cur.at(value_start), shape)
