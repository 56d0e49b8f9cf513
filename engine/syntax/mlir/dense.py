"""`dense<...>` literals <-> numpy arrays, with a fast path for hex blobs.

MLIR writes a dense elements attribute as a splat (`dense<1.0>`), a nested list
(`dense<[[1, 2], [3, 4]]>`), or a hex string of the raw little-endian buffer (`dense<"0x...">`,
one byte per element for i1 and for sub-byte types). Floats may also be written as the hex bit
pattern of the element (`dense<0x7FC00000> : tensor<f32>` is NaN).
"""
from __future__ import annotations

import binascii
import re

import numpy as np

from ...ir.attributes import DenseElements
from ...ir.types import (
    ComplexType,
    FloatType,
    IndexType,
    IntegerType,
    QuantizedType,
    TensorType,
    Type,
    mlir_float,
)


class DenseFormatError(ValueError):
    """A dense literal that does not fit its type; `offset` is relative to the literal's start."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


def storage_element(t: Type) -> Type:
    """The element type whose numpy dtype stores a tensor of `t`'s elements."""
    return t.storage if isinstance(t, QuantizedType) else t


def storage_dtype(t: TensorType) -> np.dtype:
    return storage_element(t.element).numpy_dtype


_TOKEN = re.compile(
    r"\s*(?:(?P<open>[\[(])|(?P<close>[\])])|(?P<comma>,)|"
    r"(?P<scalar>[-+]?(?:0x[0-9A-Fa-f]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|nan)|true|false))"
)


def parse_dense_literal(body: str, ttype: TensorType) -> np.ndarray:
    """Decode the text between `dense<` and `>` into an array of the tensor type's storage dtype."""
    if not ttype.is_static:
        raise DenseFormatError(f"dense elements need a statically shaped type, not {ttype}")
    element = storage_element(ttype.element)
    dtype = element.numpy_dtype
    shape = tuple(ttype.shape)
    stripped = body.strip()
    if stripped.startswith('"'):
        return _parse_hex_blob(stripped, shape, dtype, element)
    if stripped == "":
        if ttype.num_elements != 0:
            raise DenseFormatError(f"empty dense literal for {ttype}")
        return np.zeros(shape, dtype)
    leaves, literal_shape = _parse_nested(stripped, isinstance(element, ComplexType))
    values = _convert_leaves(leaves, element, dtype)
    if literal_shape == () or (len(leaves) == 1 and literal_shape in ((), (1,)) and not shape == (1,)):
        if literal_shape != ():
            raise DenseFormatError(f"literal of shape {_shape_words(literal_shape)} does not fit {ttype}")
        return splat_array(values[0], shape, dtype)
    if literal_shape != shape:
        raise DenseFormatError(
            f"literal of shape {_shape_words(literal_shape)} does not match {ttype}"
        )
    return values.reshape(shape)


def _shape_words(shape: tuple[int, ...]) -> str:
    """`[2, 3]`; a deep literal's shape (5,000 nested brackets) as its ends and its rank."""
    if len(shape) <= 8:
        return f"[{', '.join(map(str, shape))}]"
    return f"[{', '.join(map(str, shape[:3]))}, ..., {', '.join(map(str, shape[-2:]))}] (rank {len(shape)})"


def splat_array(value, shape, dtype: np.dtype) -> np.ndarray:
    """A read-only array of `shape` holding one value, in the memory of that one value.

    A splat stays a splat (strides of 0) until an evaluator needs its data: `dense<0.0>` of a
    78 GiB tensor type parses, verifies, prints and draws without allocating the tensor.
    """
    return np.broadcast_to(np.array(value, dtype=dtype), shape)


def _parse_hex_blob(text: str, shape, dtype: np.dtype, element) -> np.ndarray:
    if not (text.startswith('"0x') and text.endswith('"')):
        raise DenseFormatError('expected a hex string "0x..." in dense literal')
    return _decode_hex(text, 3, len(text) - 1, shape, dtype, element)


def parse_hex_digits(text: str, start: int, end: int, ttype: TensorType) -> np.ndarray:
    """The array the hex digits `text[start:end]` of a `dense<"0x...">` literal spell, for a
    parser that found them in its source (error offsets are relative to `start - 3`, the quote)."""
    if not ttype.is_static:
        raise DenseFormatError(f"dense elements need a statically shaped type, not {ttype}")
    element = storage_element(ttype.element)
    return _decode_hex(text, start, end, tuple(ttype.shape), element.numpy_dtype, element)


HEX_SLICE = 1 << 18  # digits decoded at a time (cache-sized): the literal's text is never copied whole


def _hex_bytes(text: str, start: int, end: int) -> np.ndarray:
    """The bytes `text[start:end]` spells, decoded straight from the source into one buffer the
    array then shares: a 128 MB literal costs its bytes once more, not copies of its text."""
    raw = np.empty((end - start) // 2, np.uint8)
    filled = 0
    for at in range(start, end, HEX_SLICE):
        digits = text[at:min(at + HEX_SLICE, end)]
        try:
            piece = binascii.a2b_hex(digits)  # plain digits only: faster than bytes.fromhex
        except ValueError:
            piece = None
        if piece is None or 2 * len(piece) != len(digits):
            # Digits spaced as bytes.fromhex allows, or bad ones: decode whole (ValueError if bad).
            return np.frombuffer(bytes.fromhex(text[start:end]), np.uint8)
        raw[filled:filled + len(piece)] = np.frombuffer(piece, np.uint8)
        filled += len(piece)
    return raw


def _decode_hex(text: str, start: int, end: int, shape, dtype: np.dtype, element) -> np.ndarray:
    try:
        raw = _hex_bytes(text, start, end)
    except ValueError:
        raise DenseFormatError("malformed hex digits in dense literal", 3) from None
    raw.flags.writeable = False
    itemsize = 2 * dtype.itemsize if isinstance(element, ComplexType) and dtype.kind != "c" else dtype.itemsize
    count = int(np.prod(shape, dtype=np.int64))
    if len(raw) == itemsize * count:
        return np.frombuffer(raw, dtype=dtype).reshape(shape)
    if len(raw) == itemsize:
        return splat_array(np.frombuffer(raw, dtype=dtype)[0], shape, dtype)
    raise DenseFormatError(
        f"hex literal has {len(raw)} bytes; {count} elements of {element} need {itemsize * count}"
    )


def _parse_nested(text: str, is_complex: bool):
    """Tokenise a nested list; return the scalar leaves and the shape the brackets imply."""
    leaves: list[str] = []
    # sizes[d] is the element count seen at depth d for the first list of that depth.
    sizes: list[int] = []
    counts: list[int] = []
    depth = 0
    pos = 0
    n = len(text)
    expect_value = True
    complex_parts: list[str] = []
    in_complex = False
    match = _TOKEN.match
    while pos < n:
        m = match(text, pos)
        if m is None:
            if text[pos:].strip() == "":
                break
            raise DenseFormatError(f"unexpected '{text[pos:pos + 10].strip()}' in dense literal", pos)
        pos = m.end()
        kind = m.lastgroup
        if kind == "open":
            if m.group("open") == "(":
                if not is_complex or in_complex:
                    raise DenseFormatError("'(' only starts a complex number (re,im)", m.start())
                in_complex = True
                complex_parts = []
                continue
            if not expect_value:
                raise DenseFormatError("expected ',' or ']'", m.start())
            if depth == len(counts):
                counts.append(0)
            counts[depth] = 0
            depth += 1
            if depth > len(sizes):
                sizes.append(-1)
        elif kind == "close":
            if m.group("close") == ")":
                if not in_complex or len(complex_parts) != 2:
                    raise DenseFormatError("a complex number is (real,imag)", m.start())
                in_complex = False
                leaves.append(complex_parts)  # type: ignore[arg-type]
                _count_leaf(counts, depth)
                expect_value = False
                continue
            if depth == 0:
                raise DenseFormatError("unbalanced ']'", m.start())
            depth -= 1
            count = counts[depth] if depth < len(counts) else 0
            if sizes[depth] == -1:
                sizes[depth] = count
            elif sizes[depth] != count:
                raise DenseFormatError("ragged nested list in dense literal", m.start())
            if depth > 0:
                counts[depth - 1] += 1
            expect_value = False
        elif kind == "comma":
            if expect_value and not in_complex:
                raise DenseFormatError("expected a value before ','", m.start())
            expect_value = True
        else:
            value = m.group("scalar")
            if in_complex:
                complex_parts.append(value)
                continue
            if is_complex:
                raise DenseFormatError("complex elements are written (real,imag)", m.start())
            leaves.append(value)
            _count_leaf(counts, depth)
            expect_value = False
    if depth != 0 or in_complex:
        raise DenseFormatError("unbalanced brackets in dense literal", len(text))
    return leaves, tuple(s for s in sizes)


def _count_leaf(counts: list[int], depth: int) -> None:
    if depth > 0:
        counts[depth - 1] += 1


def _convert_leaves(leaves, element, dtype: np.dtype) -> np.ndarray:
    if isinstance(element, ComplexType):
        part = element.element
        reals = _convert_leaves([p[0] for p in leaves], part, part.numpy_dtype)
        imags = _convert_leaves([p[1] for p in leaves], part, part.numpy_dtype)
        # Assign the parts: reals + 1j * imags would make the real part of (x, inf) NaN (0 * inf).
        out = np.empty(reals.shape, dtype)
        out.real, out.imag = reals, imags
        return out
    if isinstance(element, FloatType):
        out = np.empty(len(leaves), dtype=np.float64)
        hex_positions = []
        for i, s in enumerate(leaves):
            if "0x" in s:
                hex_positions.append(i)
                out[i] = 0.0
            elif s in ("true", "false"):
                raise DenseFormatError(f"'{s}' is not a {element} value")
            else:
                out[i] = float(s)
        with np.errstate(over="ignore"):  # a literal past the type's range becomes ±inf, as before; no warning
            result = out.astype(dtype)
        for i in hex_positions:
            result[i] = _float_from_bits(leaves[i], dtype, element)
        return result
    if isinstance(element, (IntegerType, IndexType)):
        if isinstance(element, IntegerType) and element.width == 1:
            values = []
            for s in leaves:
                if s in ("true", "false"):
                    values.append(s == "true")
                elif s in ("0", "1"):
                    values.append(s == "1")
                else:
                    raise DenseFormatError(f"'{s}' is not an i1 value (true or false)")
            return np.array(values, dtype=np.bool_)
        ints = []
        for s in leaves:
            if s in ("true", "false") or "." in s or "inf" in s or "nan" in s or (
                "e" in s.lower() and "0x" not in s.lower()
            ):
                raise DenseFormatError(f"'{s}' is not an integer")
            ints.append(int(s, 16) if "0x" in s.lower() else int(s, 10))
        if isinstance(element, IntegerType):
            lo, hi = element.min_value, element.max_value
            if element.signedness == "signless":
                # Signless literals may also be written as their unsigned value (255 : i8 is -1).
                hi = (1 << element.width) - 1
            for v in ints:
                if v < lo or v > hi:
                    raise DenseFormatError(f"integer {v} does not fit {element}")
            if hi > element.max_value:
                wrap = 1 << element.width
                ints = [v - wrap if v > element.max_value else v for v in ints]
        return np.array(ints, dtype=object).astype(dtype) if ints else np.zeros(0, dtype)
    raise DenseFormatError(f"no dense literal for element type {element}")


def _float_from_bits(text: str, dtype: np.dtype, element: FloatType):
    bits = int(text, 16)
    width = dtype.itemsize * 8
    if bits >= 1 << width:
        raise DenseFormatError(f"bit pattern {text} is wider than {element}")
    uint = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]
    return np.array([bits], dtype=uint).view(dtype)[0]


def dense_from_text(body: str, ttype: TensorType) -> DenseElements:
    return DenseElements(ttype, parse_dense_literal(body, ttype))


# ---------------------------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------------------------

HEX_THRESHOLD = 100  # beyond this many elements a literal is written as a hex blob


def format_dense(attr: DenseElements) -> str:
    return f"{format_dense_body(attr)} : {attr.type}"


def format_dense_body(attr: DenseElements) -> str:
    if attr.resource is not None:
        return f"dense_resource<{attr.resource}>"
    array = attr.array
    element = storage_element(attr.type.element)
    if array.size == 0:
        return "dense<>"
    if attr.is_splat:
        return f"dense<{_format_scalar(array.reshape(-1)[0], element)}>"
    if array.size > HEX_THRESHOLD:
        return f'dense<"0x{np.ascontiguousarray(array).tobytes().hex().upper()}">'
    return f"dense<{_format_nested(array, element)}>"


def _format_nested(array: np.ndarray, element) -> str:
    if array.ndim == 0:
        return _format_scalar(array[()], element)
    return "[" + ", ".join(_format_nested(sub, element) for sub in array) + "]"


def _format_scalar(value, element) -> str:
    if isinstance(element, IntegerType):
        if element.width == 1:
            return "true" if value else "false"
        return str(int(value))
    if isinstance(element, IndexType):
        return str(int(value))
    if isinstance(element, ComplexType):
        part = element.element
        return f"({_format_scalar(np.real(value), part)},{_format_scalar(np.imag(value), part)})"
    if isinstance(element, FloatType):
        return format_float_element(value, element)
    raise TypeError(f"cannot print {element} element")


def format_float_element(value, element: FloatType) -> str:
    """As MLIR prints it (types.mlir_float), or the bit pattern if not finite."""
    scalar = np.array(value, dtype=element.numpy_dtype)
    with np.errstate(invalid="ignore"):  # a signalling NaN (nan(0x1)) raises the flag on widening
        as_double = float(scalar.astype(np.float64))
    if not np.isfinite(as_double) or (as_double == 0.0 and np.signbit(as_double) and element.name.endswith("FNUZ")):
        bits = scalar.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[scalar.itemsize])
        width = scalar.itemsize * 2
        return f"0x{int(bits):0{width}X}"
    return mlir_float(as_double, element)


