"""Constants back into XLA's literal syntax (the inverse of literals.py; hlo_text.md §5).

XLA prints a literal in logical row-major order, one brace level per dimension: `1` for a scalar,
`{1, 2}` for rank 1, `{ { 1, 2 }, { 3, 4 } }` from rank 2 on; a pred scalar `true`/`false` and
pred array elements `1`/`0`, complex
elements `(re, im)`, NaNs with a non-default payload `nan(0x..)`. An elided constant is `{...}`.
Floats are written as XLA writes them, with the digits that always read back to the same value of
their own type, so parsing the print gives the same bits.
"""
from __future__ import annotations

import math

import numpy as np

from ...ir.attributes import DenseElements, ElidedElements
from ...ir.ml_types import finfo, ml_dtypes

ELIDED = "{...}"


def literal_text(value: DenseElements) -> str:
    """The text between a constant's parentheses."""
    if isinstance(value, ElidedElements):
        return ELIDED
    array = np.asarray(value.array)
    shape = tuple(value.type.shape)
    if array.shape != shape:  # a splat as parsed: one value standing for all
        array = np.broadcast_to(array.reshape(-1)[:1].reshape(()), shape) if array.size == 1 else array.reshape(shape)
    if array.ndim == 0:
        if array.dtype == np.bool_:  # XLA writes a scalar pred as a word, pred array elements as 1 and 0
            return "true" if array[()] else "false"
        return element_text(array[()], array.dtype)
    return _nested(array, outer=True)


def _nested(array: np.ndarray, outer: bool) -> str:
    """`{1, 2}` at rank 1; inside a higher rank each level is spaced: `{ { 1, 2 }, { 3, 4 } }`."""
    if array.shape[0] == 0:
        return "{}"
    if array.ndim == 1:
        items = ", ".join(element_text(x, array.dtype) for x in array)
    else:
        items = ", ".join(_nested(sub, outer=False) for sub in array)
    return "{" + items + "}" if outer and array.ndim == 1 else "{ " + items + " }"


def element_text(x, dtype: np.dtype) -> str:
    kind = dtype.kind
    if kind in "iub" or _is_narrow_integer(dtype):
        return str(int(x))
    if kind == "c":
        part = np.dtype(np.float32) if dtype == np.complex64 else np.dtype(np.float64)
        return f"({float_text(x.real, part)}, {float_text(x.imag, part)})"
    return float_text(x, dtype)


def _is_narrow_integer(dtype: np.dtype) -> bool:
    """ml_dtypes' int4/uint4/int2/... (numpy sees them as opaque 'V' types)."""
    try:
        ml_dtypes().iinfo(dtype)
        return True
    except (TypeError, ValueError):
        return False


def float_text(x, dtype: np.dtype) -> str:
    """A float of `dtype` (numpy's or an ml_dtypes one) as XLA writes it: `%.Ng` with N the type's
    max_digits10 (9 for f32, 17 for f64, 4 for bf16), the fewest digits that always read back."""
    value = np.asarray(x, dtype=dtype)
    with np.errstate(invalid="ignore"):  # a NaN with a payload widens with a warning, still a NaN
        wide = float(value.astype(np.float64))
    if np.isnan(wide):
        return _nan_text(value, dtype)
    if np.isinf(wide):
        return "inf" if wide > 0 else "-inf"
    digits = max_digits10(dtype)
    # XLA (observed, jaxlib 0.10.2): f32 and f64 in six significant digits when those read back,
    # else in digits10 (6, 15) when those do, else in max_digits10; the narrower types always in
    # max_digits10.
    tries = (6, int(np.finfo(dtype).precision)) if np.dtype(dtype) in _WIDE else ()
    for n in tries:
        text = f"{wide:.{n}g}"
        if np.asarray(float(text)).astype(dtype) == value:
            return text
    return f"{wide:.{digits}g}"


_WIDE = (np.dtype(np.float32), np.dtype(np.float64))


def max_digits10(dtype: np.dtype) -> int:
    """ceil(1 + p·log10 2) for p significand bits: enough decimal digits to read any value back."""
    return math.ceil(1 + (int(finfo(dtype).nmant) + 1) * math.log10(2))


def _nan_text(value: np.ndarray, dtype: np.dtype) -> str:
    """`nan` for the default quiet NaN, `-nan` for its negation, `nan(0x..)` with another payload."""
    info = finfo(dtype)
    bits = int(info.bits)
    if bits < 8 or not np.isinf(np.array(np.inf).astype(dtype)):
        return "nan"  # formats without infinities have one NaN encoding and no payloads
    raw = int(value.reshape(1).view(np.dtype(f"u{bits // 8}"))[0])
    mantissa = int(info.nmant)
    payload = raw & ((1 << mantissa) - 1)
    sign = "-" if raw >> (bits - 1) else ""
    if payload == 1 << (mantissa - 1):
        return sign + "nan"
    return f"{sign}nan(0x{payload:x})"


__all__ = ["ELIDED", "element_text", "float_text", "literal_text"]
