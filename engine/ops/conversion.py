"""Element type conversions: convert, bitcast_convert, reduce_precision.

convert follows XLA on the CPU where the spec leaves it to the implementation: float to integer
truncates toward zero, saturates out-of-range values and sends NaN to 0; complex to a real type
(bool included) takes the real part; an f64 operand is rounded straight to f16 and the f8/f4
types but through f32 to bf16 (rounding twice), as XLA's CPU backend does (Backend.converted). bitcast_convert reinterprets little-endian bit patterns,
splitting or joining the last dimension when the widths differ.
"""
from __future__ import annotations

import numpy as np

from ..ir.dtypes import bit_width, element_dtype, integer_bounds, is_narrow_int, narrow, widen
from ..ir.ml_types import finfo, is_bfloat16
from ..ir.phrases import Phrase
from ..ir.types import TensorType
from ..machine.backend import Backend
from .elementwise import BOOL, F32, F64, UNSIGNED_OF_SIZE, is_floating
from .provenance import ProvenanceQuery, Source, explains
from .registry import OpCall, op


@op("stablehlo.convert")
def convert(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return convert_array(call.backend, np.asarray(operand), call.result_dtype)


def convert_array(backend: Backend, x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`x` converted to `dtype` the way XLA's CPU backend converts."""
    if x.dtype == dtype:
        return x
    if x.dtype.kind == "c" and dtype.kind != "c":
        # XLA drops the imaginary part first, even for bool: convert(2j) is false.
        x = x.real
    if dtype == BOOL:
        return np.asarray(widen(x) != 0)
    value = widen(x)
    if dtype.kind == "c":
        return value.astype(dtype)
    if is_floating(dtype):
        return backend.converted(value, dtype)
    if is_floating(value.dtype):
        return float_to_integer(value, dtype)
    return narrow(value, dtype) if is_narrow_int(dtype) else value.astype(dtype)


def float_to_integer(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Truncate toward zero, saturating at the type's bounds; NaN becomes 0."""
    low, high = integer_bounds(dtype)
    v = value.astype(F64)  # f32 and narrower are exact in f64, and so are both bounds below
    nan = np.isnan(v)
    below = v < float(low)
    above = v >= float(high + 1)  # a power of two, exact where high itself may not be
    target = np.dtype(np.int64) if is_narrow_int(dtype) else dtype
    inside = np.trunc(np.where(nan | below | above, 0.0, v)).astype(target)
    result = np.where(below, np.asarray(low, target), np.where(above, np.asarray(high, target), inside))
    return narrow(result, dtype)


# -- bitcast_convert -------------------------------------------------------------------------------


@op("stablehlo.bitcast_convert")
def bitcast_convert(call: OpCall, operand: np.ndarray) -> np.ndarray:
    x = np.asarray(operand)
    dtype = call.result_dtype
    if x.dtype == dtype:
        return x
    in_rank, out_rank = _rank(call.operand_types[0]), _rank(call.result_type)
    if in_rank is None or out_rank is None:
        raise call.error("bitcast_convert needs ranked operand and result types")
    if _byte_aligned(x.dtype) and _byte_aligned(dtype):
        return _bitcast_bytes(x, dtype, out_rank - in_rank)
    return _bitcast_bits(call, x, dtype, out_rank - in_rank)


def _rank(t) -> int | None:
    return len(t.shape) if isinstance(t, TensorType) and t.shape is not None else None


def _byte_aligned(dtype: np.dtype) -> bool:
    return bit_width(dtype) % 8 == 0  # i1 is one bit wide, as the spec counts it


def _bitcast_bytes(x: np.ndarray, dtype: np.dtype, rank_change: int) -> np.ndarray:
    """Reinterpret the little-endian bytes (numpy's host order on x86 and ARM) of `x`."""
    # C order for `view`; np.ascontiguousarray would also turn a 0-d operand into shape (1,),
    # and a scalar split into its parts must become shape (k,), not (1, k).
    x = np.asarray(x, order="C")
    if rank_change > 0:  # every element splits into the new last dimension
        return x.reshape(x.shape + (1,)).view(dtype)
    if rank_change < 0:  # the last dimension joins into one element
        return x.view(dtype).reshape(x.shape[:-1])
    return x.view(dtype)


def _bitcast_bits(call: OpCall, x: np.ndarray, dtype: np.dtype, rank_change: int) -> np.ndarray:
    """Bit-level reinterpretation for widths under a byte (i1, i2, i4, f4, f6), via uint64 patterns.

    Element 0 of a split takes the least significant bits, as little-endian storage orders them.
    """
    bits, width = _pattern(x)
    out_width = bit_width(dtype)
    if rank_change > 0:
        parts = width // out_width
        shifts = np.arange(parts, dtype=np.uint64) * np.uint64(out_width)
        bits = (bits[..., None] >> shifts) & np.uint64((1 << out_width) - 1)
    elif rank_change < 0:
        parts = x.shape[-1] if x.ndim else 1
        shifts = np.arange(parts, dtype=np.uint64) * np.uint64(width)
        bits = np.bitwise_or.reduce(bits << shifts, axis=-1)
    elif width != out_width:
        raise call.error(f"cannot bitcast {width}-bit elements to {out_width}-bit ones without a shape change")
    return _from_pattern(bits, dtype)


def _pattern(x: np.ndarray) -> tuple[np.ndarray, int]:
    """The bit patterns of `x` as uint64 and their width."""
    width = bit_width(x.dtype)
    if x.dtype == BOOL:
        return x.astype(np.uint64), width
    if is_narrow_int(x.dtype):
        return (x.astype(np.int64) & ((1 << width) - 1)).astype(np.uint64), width
    # Sub-byte floats keep their encoding in the low bits of a byte.
    return x.view(UNSIGNED_OF_SIZE[x.dtype.itemsize]).astype(np.uint64) & np.uint64((1 << width) - 1), width


def _from_pattern(bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype == BOOL:
        return bits != 0
    if is_narrow_int(dtype):
        return narrow(bits.astype(np.int64), dtype)
    return bits.astype(UNSIGNED_OF_SIZE[dtype.itemsize]).view(dtype)


# -- reduce_precision ------------------------------------------------------------------------------

# (exponent bits, mantissa bits) of the IEEE-like formats XLA rounds on their own bit patterns.
_LAYOUTS = {
    np.dtype(np.float64): (11, 52),
    np.dtype(np.float32): (8, 23),
    np.dtype(np.float16): (5, 10),
}
BF16_LAYOUT = (8, 7)  # bf16's, not in the table: its dtype is made when ml_dtypes is first needed (ml_types.py)


@op("stablehlo.reduce_precision")
def reduce_precision(call: OpCall, operand: np.ndarray) -> np.ndarray:
    exponent_bits = int(call.attr("exponent_bits"))
    mantissa_bits = int(call.attr("mantissa_bits"))
    if exponent_bits < 1 or mantissa_bits < 0:
        raise call.error(f"exponent_bits must be >= 1 and mantissa_bits >= 0, got {exponent_bits} and {mantissa_bits}")
    x = np.asarray(operand)
    layout = BF16_LAYOUT if is_bfloat16(x.dtype) else _LAYOUTS.get(x.dtype)
    if layout is not None:
        return reduce_bits(x, layout, exponent_bits, mantissa_bits)
    # f8/f6/f4 layouts differ from IEEE (no infinities, other biases), so like XLA on the CPU we
    # reduce their exact values in the narrowest IEEE type holding them all (f16, else f32) and
    # convert back. The spec does not say which subnormals the reduced format has; this answer
    # is XLA's: e.g. an f8E4M3FN subnormal reduced to e4m3 becomes 0 (f16's exponent is wider,
    # so the e4m3 range check applies and flushes it), and a value past the reduced range is
    # an infinity, which types without one (f8E4M3FN, ...) turn into NaN or their largest value
    # as their conversion from f16 does.
    wide_dtype = np.dtype(np.float16) if _fits_in_f16(x.dtype) else F32
    wide = reduce_bits(x.astype(wide_dtype), _LAYOUTS[wide_dtype], exponent_bits, mantissa_bits)
    return call.backend.rounded(wide, x.dtype)


def _fits_in_f16(dtype: np.dtype) -> bool:
    info = finfo(dtype)
    half = finfo(np.float16)
    return (info.nmant <= half.nmant and float(info.max) <= float(half.max)
            and float(info.smallest_subnormal) >= float(half.smallest_subnormal))


def reduce_bits(x: np.ndarray, layout: tuple[int, int], exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """XLA's reduce_precision on the bit patterns of `x`.

    The mantissa is rounded to nearest even at `mantissa_bits`; then values whose exponent is
    above the reduced range become infinities and values at or below its smallest normal
    exponent become zeros (the reduced format has no subnormals). NaNs pass through unchanged, also
    with no mantissa bits (`e5m0`): XLA on the CPU (jax.jit) keeps them NaN, and the spec does not
    say otherwise. StableHLO's reference interpreter alone makes them +inf there, which its
    interpret/reduce_precision.mlir expects; test_ops_conversion.py pins XLA's answer.
    """
    E, M = layout
    uint = UNSIGNED_OF_SIZE[x.dtype.itemsize]
    bits = x.view(uint).astype(np.uint64)
    if mantissa_bits < M:
        drop = M - mantissa_bits
        bias = np.uint64((1 << (drop - 1)) - 1)
        odd = (bits >> np.uint64(drop)) & np.uint64(1)
        bits = (bits + odd + bias) & ~np.uint64((1 << drop) - 1)
    if exponent_bits < E:
        exponent_mask = np.uint64(((1 << E) - 1) << M)
        sign_mask = np.uint64(1 << (E + M))
        type_bias = (1 << (E - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = bits & exponent_mask
        overflow = exponent > np.uint64((type_bias + reduced_bias) << M)
        underflow = exponent <= np.uint64((type_bias - reduced_bias) << M)
        sign = bits & sign_mask
        bits = np.where(overflow, sign | exponent_mask, np.where(underflow, sign, bits))
    result = (bits & np.uint64((1 << (E + M + 1)) - 1)).astype(uint).view(x.dtype)
    return np.where(np.isnan(widen(x)), x, result)


# -- element provenance of bitcast_convert ---------------------------------------------------------

BIT_PATTERN = Phrase("bit pattern")
SAME_BITS = Phrase("result{result} has the bits of operand{operand}, read as {type}")
SPLIT_PART = Phrase("operand{operand} is {in_width} bits wide and splits into {parts} results of {out_width} bits; "
                    "result{result} is part {part}: bits {low}..{high}, least significant first")
JOINED_PARTS = Phrase("{parts} operand elements of {in_width} bits join into one of {out_width} bits: "
                      "operand{first} .. operand{last}, element k giving bits k·{in_width} upwards")


@explains("stablehlo.bitcast_convert")
def bitcast_convert_provenance(q: ProvenanceQuery):
    """Equal widths: the same index. A narrower result splits each operand element along a new
    last dimension (part k = bits k·w upwards); a wider one joins the operand's last dimension."""
    in_width = bit_width(element_dtype(q.op.operand_types[0]))
    out_width = bit_width(element_dtype(q.op.result_types[0]))
    in_rank, out_rank = len(q.operand_shape(0)), len(q.result_shape(0))
    if in_rank == out_rank:
        return q.answer([Source(0, q.index, BIT_PATTERN)],
                        [(SAME_BITS, {"result": q.index, "operand": q.index, "type": q.op.result_types[0].element})])
    if out_rank > in_rank:  # narrower: index[-1] picks the part
        source, part = q.index[:-1], q.index[-1]
        step = (SPLIT_PART, {"operand": source, "in_width": in_width, "parts": in_width // out_width,
                             "out_width": out_width, "result": q.index, "part": part,
                             "low": part * out_width, "high": (part + 1) * out_width - 1})
        return q.answer([Source(0, source, BIT_PATTERN)], [step])
    parts = q.operand_shape(0)[-1]
    sources = [Source(0, q.index + (k,), BIT_PATTERN) for k in range(parts)]
    step = (JOINED_PARTS, {"parts": parts, "in_width": in_width, "out_width": out_width,
                           "first": q.index + (0,), "last": q.index + (parts - 1,)})
    return q.answer(sources, [step])
