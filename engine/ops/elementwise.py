"""Element-wise arithmetic, logic, bit manipulation, comparison and selection.

Every evaluator here works on arrays of any shape (region bodies run vectorised, so operands may
carry extra leading dimensions and 0-d arrays mix with N-d ones) and returns an array of exactly
the result element type. Numerics follow XLA on the CPU: integer arithmetic wraps; division by
zero gives all bits set and remainder by zero gives the dividend; shifts by the bit width or more
saturate; maximum and minimum propagate NaN and order -0.0 below +0.0; floats narrower than f32
are computed in f32 and rounded once. Transcendental functions live in elementwise_math.py and
conversions in conversion.py; the helpers they share are defined here.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ..ir.dtypes import bit_width, compute_dtype, is_narrow_float, is_narrow_int, narrow, widen
from ..machine.backend import Backend
from .registry import OpCall, op
from .reuse import dead_operand

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
C128 = np.dtype(np.complex128)
BOOL = np.dtype(np.bool_)
# Float types numpy computes in natively (float8_e5m2 also has kind "f" but is an ml_dtypes type).

UNSIGNED_OF_SIZE = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


# -- shared helpers ----------------------------------------------------------------------------


def is_floating(dtype: np.dtype) -> bool:
    """f64, f32 and every narrow float (bf16, f16, f8, f6, f4)."""
    return dtype.kind == "f" or is_narrow_float(dtype)


def all_ones(dtype: np.dtype) -> np.ndarray:
    """The integer with every bit set: -1 for signed types, the maximum for unsigned ones."""
    return np.array(-1).astype(dtype)


def unsigned_bits(x: np.ndarray) -> tuple[np.ndarray, int]:
    """The two's complement bit patterns of integer `x` as uint64, and the type's bit width."""
    x = np.asarray(x)
    width = bit_width(x.dtype)
    if is_narrow_int(x.dtype):
        return (x.astype(np.int64) & ((1 << width) - 1)).astype(np.uint64), width
    if x.dtype == BOOL:
        return x.astype(np.uint64), 8
    return x.view(UNSIGNED_OF_SIZE[x.dtype.itemsize]).astype(np.uint64), width


def from_unsigned_bits(bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Integers of `dtype` from uint64 bit patterns (only the low bit_width(dtype) bits count)."""
    if is_narrow_int(dtype):
        return narrow(bits.astype(np.int64), dtype)
    if dtype == BOOL:
        return bits != 0
    return bits.astype(UNSIGNED_OF_SIZE[dtype.itemsize]).view(dtype)


def float_maximum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE maximum as XLA computes it: NaN wins, and +0.0 is above -0.0."""
    result = np.maximum(a, b)
    # Equal operands are equal zeros or the same number: pick the positive zero when one is.
    return np.where(a == b, np.where(np.signbit(a), b, a), result)


def float_minimum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    result = np.minimum(a, b)
    return np.where(a == b, np.where(np.signbit(a), a, b), result)


def _complex_greater(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Lexicographic (real, imaginary) order, the spec's order for complex maximum/minimum."""
    return (a.real > b.real) | ((a.real == b.real) & (a.imag > b.imag))


def _extremum(a: np.ndarray, b: np.ndarray, take_max: bool) -> np.ndarray:
    a, b = widen(a), widen(b)
    kind = a.dtype.kind
    if kind == "f":
        return float_maximum(a, b) if take_max else float_minimum(a, b)
    if kind == "c":
        greater = _complex_greater(a, b)
        nan = np.isnan(a) | np.isnan(b)
        picked = np.where(greater if take_max else _complex_greater(b, a), a, b)
        return np.where(nan, np.where(np.isnan(a), a, b), picked)
    return np.maximum(a, b) if take_max else np.minimum(a, b)


# -- arithmetic ----------------------------------------------------------------------------------


def _binary(call: OpCall, ufunc: Any, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """A ufunc in the compute dtype, rounded or wrapped once to the result type.

    A dead operand's buffer (see reuse.py) takes the result when the ufunc computes in the
    result type itself: the same ufunc on the same values, so the same bits.
    """
    memo = getattr(call, "memo", None)  # stand-in calls (tools, tests) carry none: the general path
    native = memo.get("native", None) if memo is not None else False
    if native is None:
        native = memo["native"] = _native_types(call)
    if native and lhs.dtype is rhs.dtype and not getattr(call, "reuse", None):
        # Operands and result of one type arithmetic is done in (f32, i32, f64...): widen and
        # narrow would do nothing. The same ufunc on the same arrays, so the same bits; a 0-d
        # result comes back from numpy as a scalar and is kept an array.
        out = ufunc(lhs, rhs)
        return out if type(out) is np.ndarray else np.asarray(out)
    a, b = widen(lhs), widen(rhs)
    out = dead_operand(call, (lhs, rhs))
    if out is not None and a.dtype == b.dtype == out.dtype:
        return ufunc(a, b, out=out)
    return narrow(ufunc(a, b), call.result_dtype)


def _native_types(call: OpCall) -> bool:
    """Whether `call`'s operands and result all have one element type that is its own compute
    type, and the op's ufunc keeps it (division of integers makes floats: not native)."""
    dtype = call.result_dtype
    same = all(getattr(t, "numpy_dtype", None) == dtype for t in call.operand_types)
    return same and compute_dtype(dtype) == dtype and call.op.name != "stablehlo.divide"


def native_ufunc(ufunc: Any, scalar: Callable, unless: Callable[[OpCall], bool] = lambda call: False) -> Callable:
    """Gives an evaluator built on `_binary(call, ufunc, ...)` its direct form (registry.py:
    `direct_form`): for a call of native types (`_native_types`), `ufunc` itself, which is what
    `_binary` calls there. Plain runs of small arrays call it straight from their block code,
    without `_binary`'s per-call checks (engine/run/block_code.py). Its scalar form is `scalar`,
    the Python operator numpy's scalars implement with the same loops (tests/test_plan.py
    checks every native type, overflow, NaN and signed zeros), seven times cheaper on them than
    the ufunc on 0-d arrays."""

    def mark(evaluator: Callable) -> Callable:
        evaluator.direct_form = lambda call: ufunc if _native_types(call) and not unless(call) else None
        evaluator.scalar_form = lambda call: scalar if _native_types(call) and not unless(call) else None
        return evaluator

    return mark


@native_ufunc(np.add, operator.add)
@op("stablehlo.add")
def add(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    # numpy's add on booleans is logical or, the spec's addition of i1.
    return _binary(call, np.add, lhs, rhs)


@native_ufunc(np.subtract, operator.sub)
@op("stablehlo.subtract")
def subtract(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return _binary(call, np.subtract, lhs, rhs)


@native_ufunc(np.multiply, operator.mul, unless=lambda call: call.result_dtype == np.complex64)
@op("stablehlo.multiply")
def multiply(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    if call.result_dtype == np.complex64:
        return complex64_multiply(lhs, rhs)
    # numpy's multiply on booleans is logical and, the spec's multiplication of i1.
    return _binary(call, np.multiply, lhs, rhs)


def complex64_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """XLA CPU's complex64 product: re = fma(ar, br, -(ai*bi)), im = fma(ai, br, ar*bi).

    A product of two f32 values is exact in f64, so adding the rounded f32 product in f64 and
    rounding once to f32 gives the fused result (barring a rare double rounding).
    """
    a = a.astype(np.complex64)
    b = b.astype(np.complex64)
    ar, ai = a.real.astype(np.float64), a.imag.astype(np.float64)
    br = b.real.astype(np.float64)
    real = ar * br + (-(a.imag * b.imag)).astype(np.float64)
    imag = ai * br + (a.real * b.imag).astype(np.float64)
    out = np.empty(np.broadcast(a, b).shape, dtype=np.complex64)
    out.real = real.astype(np.float32)
    out.imag = imag.astype(np.float32)
    return out



@op("stablehlo.divide")
def divide(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    a, b = widen(lhs), widen(rhs)
    if a.dtype.kind in "iu":
        return narrow(integer_divide(a, b), call.result_dtype)
    return _binary(call, np.divide, a, b)


def integer_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Quotient rounded toward zero; x/0 is all ones and INT_MIN/-1 is INT_MIN, as in XLA."""
    zero = b == 0
    invalid = zero
    if a.dtype.kind == "i":
        invalid = zero | ((a == np.iinfo(a.dtype).min) & (b == -1))
    safe = np.where(invalid, np.ones((), b.dtype), b)
    remainder = np.fmod(a, safe)
    quotient = (a - remainder) // safe  # exact: a - remainder is a multiple of safe
    return np.where(zero, all_ones(a.dtype), quotient)


@op("stablehlo.remainder")
def remainder(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    a, b = widen(lhs), widen(rhs)
    if a.dtype.kind in "iu":
        return narrow(integer_remainder(a, b), call.result_dtype)
    # fmod: the result has the sign of the dividend, as the spec and C's fmod define it.
    return narrow(np.fmod(a, b), call.result_dtype)


def integer_remainder(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Remainder with the dividend's sign; x%0 is x and INT_MIN%-1 is 0, as in XLA."""
    zero = b == 0
    minus_one = (b == -1) if a.dtype.kind == "i" else np.zeros((), BOOL)
    safe = np.where(zero | minus_one, np.ones((), b.dtype), b)
    r = np.fmod(a, safe)
    r = np.where(minus_one, np.zeros((), a.dtype), r)
    return np.where(zero, a, r)


@op("stablehlo.power")
def power(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    dtype = call.result_dtype
    a, b = widen(lhs), widen(rhs)
    if a.dtype.kind in "iu":
        return narrow(integer_power(a, b), dtype)
    if a.dtype.kind == "c":
        return complex_power(call.backend, a, b).astype(dtype)
    return call.backend.rounded(np.power(call.backend.precise(a), call.backend.precise(b)), dtype)


def integer_power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """Exponentiation by squaring with wrap-around; negative exponents give 0 except for 1 and -1."""
    base, exponent = np.broadcast_arrays(base, exponent)
    dtype = base.dtype
    negative = exponent < 0
    e = np.where(negative, np.zeros((), exponent.dtype), exponent)
    result = np.ones(base.shape, dtype)
    factor = np.array(base, copy=True)
    one = np.ones((), exponent.dtype)
    while True:
        result = np.where((e & one) != 0, result * factor, result)
        e = e >> one
        if not e.any():
            break
        factor = factor * factor
    if dtype.kind == "i":
        odd = (exponent & one) != 0
        reciprocal = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0)).astype(dtype)
        result = np.where(negative, reciprocal, result)
    return result


def complex_power(backend: Backend, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a**b in XLA's polar form, every step rounded to the component type as XLA's code is.

    (x+iy)**(c+id) = |a|**c * exp(-d arg a) * cis(c arg a + d log|a|), and 0**(c+0i) is 1 for
    c = 0 and 0 for c > 0 (Kahan); other powers of 0 follow the formula (NaN for c < 0).
    Rounding each step like XLA matters where the formula cancels: (1+1j)**2 is -8.7e-8+2j in
    complex64, not 0+2j.
    """
    x, y, c, d = a.real, a.imag, b.real, b.imag
    modulus_sq = x * x + y * y
    angle = backend.staged(np.arctan2, y, x)
    half = np.asarray(0.5, x.dtype)
    coefficient = backend.staged(np.power, modulus_sq, half * c) * backend.staged(np.exp, -d * angle)
    q = c * angle + half * d * backend.staged(np.log, modulus_sq)
    zero_base = (modulus_sq == 0) & (d == 0) & (c >= 0)
    result = np.empty(np.broadcast_shapes(a.shape, b.shape), a.dtype)
    result.real = np.where(zero_base, np.where(c == 0, 1, 0).astype(x.dtype), coefficient * backend.staged(np.cos, q))
    result.imag = np.where(zero_base, np.zeros((), x.dtype), coefficient * backend.staged(np.sin, q))
    return result


@op("stablehlo.maximum")
def maximum(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return narrow(_extremum(lhs, rhs, True), call.result_dtype)


@op("stablehlo.minimum")
def minimum(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return narrow(_extremum(lhs, rhs, False), call.result_dtype)


@op("stablehlo.clamp")
def clamp(call: OpCall, low: np.ndarray, operand: np.ndarray, high: np.ndarray) -> np.ndarray:
    # min(max(operand, low), high) with the NaN-propagating maximum and minimum, as XLA does.
    return narrow(_extremum(_extremum(operand, low, True), high, False), call.result_dtype)


@op("stablehlo.abs")
def abs_(call: OpCall, operand: np.ndarray) -> np.ndarray:
    x = widen(operand)
    if x.dtype.kind == "c":
        return call.backend.rounded(np.abs(call.backend.precise(x)), call.result_dtype)
    # Integer abs wraps: abs(INT_MIN) is INT_MIN, as numpy and XLA both compute it.
    return narrow(np.abs(x), call.result_dtype)


@op("stablehlo.negate")
def negate(call: OpCall, operand: np.ndarray) -> np.ndarray:
    x = widen(operand)
    out = dead_operand(call, (operand,))
    if out is not None and x.dtype == out.dtype:
        return np.negative(x, out=out)
    return narrow(np.negative(x), call.result_dtype)


@op("stablehlo.sign")
def sign(call: OpCall, operand: np.ndarray) -> np.ndarray:
    x = widen(operand)
    dtype = call.result_dtype
    if x.dtype.kind in "iu":
        return narrow(np.sign(x), dtype)
    if x.dtype.kind == "c":
        # x / |x| component by component (XLA's form: sign(inf + 1j) is nan + 0j); zero stays zero.
        wide = call.backend.precise(x)
        magnitude = np.abs(wide)
        unit = np.empty(wide.shape, wide.dtype)
        unit.real = wide.real / magnitude
        unit.imag = wide.imag / magnitude
        return call.backend.rounded(np.where(magnitude == 0, wide, unit), dtype)
    # NaN and signed zeros are returned as they are; everything else becomes +-1.
    unit = np.copysign(np.ones((), x.dtype), x)
    return narrow(np.where(np.isnan(x) | (x == 0), x, unit), dtype)


# -- complex parts ------------------------------------------------------------------------------


@op("stablehlo.complex")
def complex_(call: OpCall, real: np.ndarray, imag: np.ndarray) -> np.ndarray:
    # Assigning the parts (rather than real + 1j * imag) keeps infinities and signed zeros intact.
    result = np.empty(np.broadcast_shapes(np.shape(real), np.shape(imag)), call.result_dtype)
    result.real = real
    result.imag = imag
    return result


@op("stablehlo.real")
def real(call: OpCall, operand: np.ndarray) -> np.ndarray:
    x = np.asarray(operand)
    return (x.real if x.dtype.kind == "c" else x).astype(call.result_dtype)


@op("stablehlo.imag")
def imag(call: OpCall, operand: np.ndarray) -> np.ndarray:
    x = np.asarray(operand)
    if x.dtype.kind == "c":
        return x.imag.astype(call.result_dtype)
    return np.zeros(x.shape, call.result_dtype)


# -- logic and bits -----------------------------------------------------------------------------


@native_ufunc(np.bitwise_and, operator.and_)
@op("stablehlo.and")
def and_(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return _binary(call, np.bitwise_and, lhs, rhs)


@native_ufunc(np.bitwise_or, operator.or_)
@op("stablehlo.or")
def or_(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return _binary(call, np.bitwise_or, lhs, rhs)


@native_ufunc(np.bitwise_xor, operator.xor)
@op("stablehlo.xor")
def xor(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return _binary(call, np.bitwise_xor, lhs, rhs)


@op("stablehlo.not")
def not_(call: OpCall, operand: np.ndarray) -> np.ndarray:
    # invert is logical not on booleans and bitwise not on integers.
    return narrow(np.invert(widen(operand)), call.result_dtype)


def _shift_amounts(amount: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Shift amounts as uint64 and where they are out of range.

    XLA reads the amount as unsigned, so a negative amount is a huge one: out of range too.
    """
    bits, _ = unsigned_bits(amount)
    out_of_range = bits >= np.uint64(width)
    return np.where(out_of_range, np.uint64(0), bits), out_of_range


@op("stablehlo.shift_left")
def shift_left(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    dtype = call.result_dtype
    bits, width = unsigned_bits(lhs)
    amount, out_of_range = _shift_amounts(rhs, width)
    shifted = np.where(out_of_range, np.uint64(0), bits << amount)
    return from_unsigned_bits(shifted, dtype)


@op("stablehlo.shift_right_logical")
def shift_right_logical(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    dtype = call.result_dtype
    bits, width = unsigned_bits(lhs)
    amount, out_of_range = _shift_amounts(rhs, width)
    shifted = np.where(out_of_range, np.uint64(0), bits >> amount)
    return from_unsigned_bits(shifted, dtype)


@op("stablehlo.shift_right_arithmetic")
def shift_right_arithmetic(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    dtype = call.result_dtype
    bits, width = unsigned_bits(lhs)
    amount, out_of_range = _shift_amounts(rhs, width)
    # Sign-extend the width-bit pattern to int64 (unsigned types shift their top bit in too),
    # shift, and keep the low bits; out-of-range shifts leave only copies of the sign bit.
    signed = _sign_extend(bits, width)
    fill = np.where(signed < 0, np.int64(-1), np.int64(0))
    shifted = np.where(out_of_range, fill, signed >> amount.astype(np.int64))
    return from_unsigned_bits(shifted.view(np.uint64), dtype)


def _sign_extend(bits: np.ndarray, width: int) -> np.ndarray:
    """width-bit patterns (uint64) as signed int64 values."""
    if width == 64:
        return bits.view(np.int64)
    value = bits.astype(np.int64)
    return np.where(value >= (1 << (width - 1)), value - (1 << width), value)


@op("stablehlo.popcnt")
def popcnt(call: OpCall, operand: np.ndarray) -> np.ndarray:
    bits, _ = unsigned_bits(operand)
    return narrow(np.bitwise_count(bits).astype(np.int64), call.result_dtype)


@op("stablehlo.count_leading_zeros")
def count_leading_zeros(call: OpCall, operand: np.ndarray) -> np.ndarray:
    bits, width = unsigned_bits(operand)
    return narrow(leading_zeros(bits, width), call.result_dtype)


def leading_zeros(bits: np.ndarray, width: int) -> np.ndarray:
    """Leading zeros of width-bit patterns (width a power of two), by binary search on halves."""
    mask = np.uint64((1 << width) - 1) if width < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    count = np.zeros(bits.shape, np.int64)
    step = width // 2
    while step >= 1:
        top_empty = (bits >> np.uint64(width - step)) == 0
        count += np.where(top_empty, step, 0)
        bits = np.where(top_empty, (bits << np.uint64(step)) & mask, bits)
        step //= 2
    return count + ((bits >> np.uint64(width - 1)) == 0)


# -- comparison and selection ---------------------------------------------------------------------


@op("stablehlo.compare")
def compare(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    memo = getattr(call, "memo", None)  # stand-in calls (tools, tests) carry none: the general path
    plain = memo.get("plain_compare") if memo is not None else None
    if plain is not None and type(lhs) is np.ndarray and lhs.dtype is rhs.dtype:
        # Decided once per op: a real type compared as it is (not TOTALORDER, not widened):
        # the ufunc the general path below would call, on the same arrays.
        out = plain(lhs, rhs)
        return out if type(out) is np.ndarray else np.asarray(out)
    direction = call.attr("comparison_direction")
    compare_type = call.attr("compare_type")
    ufunc = _COMPARISONS.get(str(direction))
    if ufunc is None:
        raise call.error(f"unknown comparison_direction {direction}")
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    if lhs.dtype.kind == "c":
        return complex_compare(str(direction), lhs, rhs)
    if memo is not None and "plain_compare" not in memo:
        as_is = compute_dtype(lhs.dtype) == lhs.dtype and not (
            compare_type is not None and str(compare_type) == "TOTALORDER" and is_floating(lhs.dtype))
        memo["plain_compare"] = ufunc if as_is and lhs.dtype == rhs.dtype else None
    return np.asarray(ufunc(_comparable(lhs, compare_type), _comparable(rhs, compare_type)))


def _compare_direct_form(call: OpCall) -> Any:
    """compare's direct form (registry.py): the ufunc its plain path calls, for operands of one
    real type compared as it is (not TOTALORDER on floats, not widened)."""
    dtype = getattr(call.operand_types[0], "numpy_dtype", None)
    if dtype is None or getattr(call.operand_types[1], "numpy_dtype", None) != dtype or dtype.kind == "c":
        return None
    compare_type = call.attr("compare_type")
    if compute_dtype(dtype) != dtype or (compare_type is not None and str(compare_type) == "TOTALORDER" and is_floating(dtype)):
        return None
    return _COMPARISONS.get(str(call.attr("comparison_direction")))


compare.direct_form = _compare_direct_form
compare.scalar_form = lambda call: (_SCALAR_COMPARISONS[str(call.attr("comparison_direction"))]
                                    if _compare_direct_form(call) is not None else None)


_COMPARISONS = {
    "EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal,
    "GT": np.greater, "LE": np.less_equal, "LT": np.less,
}
# The same comparisons as numpy's scalars make them (compare's scalar form, registry.py).
_SCALAR_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "EQ": operator.eq, "NE": operator.ne, "GE": operator.ge,
    "GT": operator.gt, "LE": operator.le, "LT": operator.lt,
}


def complex_compare(direction: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The spec's lexicographic order on (real, imaginary) pairs.

    XLA's CPU backend differs for GE and LE, which it decides on the real parts alone.
    """
    ra, rb, ia, ib = a.real, b.real, a.imag, b.imag
    if direction == "EQ":
        return (ra == rb) & (ia == ib)
    if direction == "NE":
        return (ra != rb) | (ia != ib)
    same = ra == rb
    part = _COMPARISONS[direction]
    strict = np.greater if direction in ("GE", "GT") else np.less
    return strict(ra, rb) | (same & part(ia, ib))


def _comparable(x: np.ndarray, compare_type: Any) -> np.ndarray:
    """Values whose numpy order is the order `compare_type` asks for.

    The spec ties SIGNED/UNSIGNED to the signedness of the element type, so only TOTALORDER
    needs a different view: integer keys ordering the float bit patterns.
    """
    if compare_type is not None and str(compare_type) == "TOTALORDER" and is_floating(x.dtype):
        return total_order_key(x)
    return widen(x)


def total_order_key(x: np.ndarray) -> np.ndarray:
    """int64 keys ordering floats as -NaN < -Inf < ... < -0.0 < +0.0 < ... < +Inf < +NaN.

    The bit pattern read as a signed integer orders the positive floats; flipping the magnitude
    bits of the negative ones reverses their order and puts -0.0 just below +0.0.
    """
    bits, width = float_bits(x)
    signed = _sign_extend(bits, width)
    return np.where(signed < 0, signed ^ np.int64((1 << (width - 1)) - 1), signed)


def float_bits(x: np.ndarray) -> tuple[np.ndarray, int]:
    """The bit patterns of floats `x` as uint64 (sub-byte floats sit in the low bits of a byte)."""
    width = bit_width(x.dtype)
    bits = x.view(UNSIGNED_OF_SIZE[x.dtype.itemsize]).astype(np.uint64)
    if width < 8 * x.dtype.itemsize:
        bits = bits & np.uint64((1 << width) - 1)
    return bits, width


@op("stablehlo.select")
def select(call: OpCall, pred: np.ndarray, on_true: np.ndarray, on_false: np.ndarray) -> np.ndarray:
    # Selection copies values, so filling a dead branch's buffer with the other branch's picks
    # gives the same bits as np.where.
    out = dead_operand(call, (pred, on_true, on_false))
    if out is not None and out.dtype != BOOL:
        if out is on_true and np.asarray(on_false).dtype == out.dtype:
            np.copyto(out, on_false, where=np.logical_not(pred))
            return out
        if out is on_false and np.asarray(on_true).dtype == out.dtype:
            np.copyto(out, on_true, where=pred)
            return out
    return np.asarray(np.where(pred, on_true, on_false), call.result_dtype)
