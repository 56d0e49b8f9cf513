"""CHLO element-wise ops (docs/generated/chlo.md): trigonometric and special functions, float
classification, next_after, and the broadcasting binary ops.

Special functions come from numpy and scipy.special, evaluated in the precision the backend's
`precise` gives (machine/backend.py): f32 in f32 (their float32 loops), f16 and bf16 widened to
f32 as XLA's decompositions upcast them, f64 in f64, complex64 in complex128; then rounded once to
the result type. Where XLA's decomposition defines a
value at a special point differently from scipy, XLA's value is used and the rule is written out
below: digamma is NaN at its poles, lgamma(-inf) is +inf, zeta and polygamma follow XLA's domain
rules, erf_inv and bessel_i1e keep the sign of zero. chlo.constant is evaluated in control.py.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ir.dtypes import widen
from ..ir.phrases import Phrase
from ..ir.types import TensorType
from . import elementwise as ew
from .elementwise import UNSIGNED_OF_SIZE, float_bits
from .elementwise_math import atan2
from .elementwise_provenance import (
    broadcast_source,
    combine_step,
    operand_names,
    select_provenance,
    short_name,
    trailing_dims,
    value_at,
)
from .provenance import ProvenanceQuery, explains
from .registry import OpCall, op


def _special():
    """scipy.special, imported on first use: importing it (and the scipy it pulls in) took a
    third of a second of every session's start, and few programs call a special function."""
    import scipy.special

    return scipy.special


def _real(call: OpCall, operand: np.ndarray, fn: Callable) -> np.ndarray:
    return call.backend.rounded(fn(call.backend.precise(np.asarray(operand))), call.result_dtype)


# -- trigonometric and hyperbolic -----------------------------------------------------------------


@op("chlo.acos")
def acos(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _real(call, operand, np.arccos)


@op("chlo.acosh")
def acosh(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _real(call, operand, np.arccosh)


@op("chlo.asin")
def asin(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _real(call, operand, np.arcsin)


@op("chlo.asinh")
def asinh(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _real(call, operand, np.arcsinh)


@op("chlo.atan")
def atan(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _real(call, operand, np.arctan)


@op("chlo.atanh")
def atanh(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _real(call, operand, np.arctanh)


@op("chlo.cosh")
def cosh(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _real(call, operand, np.cosh)


@op("chlo.sinh")
def sinh(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _real(call, operand, np.sinh)


@op("chlo.tan")
def tan(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _real(call, operand, np.tan)


@op("chlo._asin_acos_kernel")
def asin_acos_kernel(call: OpCall, operand: np.ndarray) -> np.ndarray:
    if np.asarray(operand).dtype.kind != "c":
        raise call.error(f"operates on complex tensors, not {call.operand_types[0]}")
    return call.backend.rounded(asin_acos_w(call.backend.precise(np.asarray(operand))), call.result_dtype)


def asin_acos_w(z: np.ndarray) -> np.ndarray:
    """The kernel w of chlo.md: asin(z) = atan2(Re z, Re w) + i sign(Im z) Im w.

    With x = |Re z|, y = |Im z| and A = (|z+1| + |z-1|) / 2 (Hull et al.), Re w = sqrt(A^2 - x^2)
    and Im w = log(A + sqrt(A^2 - 1)); both are formed without cancellation.
    """
    x, y = np.abs(z.real), np.abs(z.imag)
    r = np.hypot(x + 1.0, y)  # |z + 1|
    s = np.hypot(x - 1.0, y)  # |z - 1|
    a = 0.5 * (r + s)
    # A - x and A - 1 in forms that do not cancel (half the sums of y^2/(r +- ...) terms).
    yy = y * y
    with np.errstate(all="ignore"):
        a_minus_x = np.where(
            x <= 1.0,
            0.5 * (yy / (r + x + 1.0) + (s + 1.0 - x)),
            0.5 * (yy / (r + x + 1.0) + yy / (s + x - 1.0)),
        )
        real = np.sqrt((a + x) * a_minus_x)
        a_minus_one = np.where(
            x < 1.0,
            0.5 * (yy / (r + x + 1.0) + yy / (s + 1.0 - x)),
            0.5 * (yy / (r + x + 1.0) + (s + x - 1.0)),
        )
        imag = np.log1p(a_minus_one + np.sqrt(a_minus_one * (a + 1.0)))
    # Huge arguments: A ~ |z|, Re w ~ y, Im w ~ log(2|z|).
    huge = np.maximum(x, y) >= np.sqrt(np.finfo(x.dtype).max) / 8
    real = np.where(huge, y, real)
    imag = np.where(huge, np.log(2.0) + np.log(np.hypot(x, y)), imag)
    w = np.empty(z.shape, z.dtype)
    w.real = real
    w.imag = imag
    return w


# -- special functions ------------------------------------------------------------------------------


@op("chlo.erf")
def erf(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _real(call, operand, _special().erf)


@op("chlo.erfc")
def erfc(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _real(call, operand, _special().erfc)


@op("chlo.erf_inv")
def erf_inv(call: OpCall, operand: np.ndarray) -> np.ndarray:
    # XLA returns -0.0 for -0.0 (scipy returns +0.0).
    return _real(call, operand, lambda x: np.where(x == 0, x, _special().erfinv(x)))


@op("chlo.bessel_i1e")
def bessel_i1e(call: OpCall, operand: np.ndarray) -> np.ndarray:
    # i1e is odd: XLA keeps the sign of zero (scipy returns +0.0 for -0.0).
    return _real(call, operand, lambda x: np.where(x == 0, x, _special().i1e(x)))


@op("chlo.lgamma")
def lgamma(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _real(call, operand, log_gamma)


def log_gamma(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)|; +inf at the poles and at both infinities (XLA: lgamma(-inf) = +inf)."""
    return np.where(np.isinf(x), np.inf, _special().gammaln(x))


@op("chlo.digamma")
def digamma(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _real(call, operand, digamma_with_xla_poles)


def digamma_with_xla_poles(x: np.ndarray) -> np.ndarray:
    """psi(x), NaN at the poles 0, -1, -2, ... (XLA's rule; scipy gives +-inf at 0)."""
    pole = (x <= 0) & (x == np.floor(x))
    return np.where(pole, np.nan, _special().psi(x))


@op("chlo.zeta")
def zeta(call: OpCall, x: np.ndarray, q: np.ndarray) -> np.ndarray:
    return call.backend.rounded(hurwitz_zeta(call.backend.precise(np.asarray(x)), call.backend.precise(np.asarray(q))), call.result_dtype)


def hurwitz_zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """zeta(x, q) = sum over n >= 0 of (q + n)^-x, with XLA's rules outside its domain.

    NaN for x < 1, for q <= 0 with non-integer x, for infinite x and for q = +inf (XLA's series
    gives NaN there); at the poles (integer q <= 0) +inf for even integer x and NaN otherwise;
    +inf for x = 1.
    """
    value = _special().zeta(x, q)
    value = np.where(np.isinf(x) | (q == np.inf), np.nan, value)
    value = np.where(x < 1, np.nan, value)
    x_integer = x == np.floor(x)
    q_nonpositive = q <= 0
    value = np.where(q_nonpositive & ~x_integer, np.nan, value)
    pole = q_nonpositive & (q == np.floor(q))
    even = x_integer & (np.fmod(x, 2.0) == 0)
    value = np.where(pole, np.where(even, np.inf, np.nan), value)
    return np.where(x == 1, np.inf, value)


@op("chlo.polygamma")
def polygamma(call: OpCall, n: np.ndarray, x: np.ndarray) -> np.ndarray:
    return call.backend.rounded(polygamma_of_naturals(call.backend.precise(np.asarray(n)), call.backend.precise(np.asarray(x))), call.result_dtype)


def polygamma_of_naturals(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x) for natural n >= 1, digamma for n = 0, else NaN."""
    sign = 2.0 * np.fmod(n, 2.0) - 1.0
    result = sign * _special().gamma(n + 1.0) * hurwitz_zeta(n + 1.0, x)
    result = np.where(n == 0, digamma_with_xla_poles(x), result)
    natural = (n == np.floor(n)) & (n >= 0)
    return np.where(natural, result, np.nan)


# -- classification, construction and simple arithmetic --------------------------------------------


@op("chlo.is_inf")
def is_inf(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return np.asarray(np.isinf(widen(operand)))


@op("chlo.is_pos_inf")
def is_pos_inf(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return np.asarray(widen(operand) == np.inf)


@op("chlo.is_neg_inf")
def is_neg_inf(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return np.asarray(widen(operand) == -np.inf)


@op("chlo.conj")
def conj(call: OpCall, operand: np.ndarray) -> np.ndarray:
    x = np.asarray(operand)
    return np.conj(x).astype(call.result_dtype) if x.dtype.kind == "c" else x


@op("chlo.square")
def square(call: OpCall, operand: np.ndarray) -> np.ndarray:
    x = widen(np.asarray(operand))
    if x.dtype.kind != "c":
        return call.backend.rounded(x * x, call.result_dtype)
    # XLA's decomposition of complex square (chlo.md defines square as x * x and leaves the
    # corner cases to the implementation; this is what jnp.square gives on the CPU), computed in
    # the operand's own precision because that is where XLA's parts overflow:
    # - real = (re - im)(re + im): no cancellation of re^2 - im^2, and no overflow of re^2 where
    #   the difference is representable: (3e19 + 2e19i)^2 in complex64 is 5e38 -> inf, but
    #   (2e19 + 1e19i)^2 has the finite real part 3e38 although re^2 = 4e38 overflows;
    # - real = 0 exactly when |re| == |im| and re is finite, because re + im may overflow while
    #   re - im is 0, and 0 * inf would be NaN: (1e308 + 1e308i)^2 = 0 + inf i, not NaN + inf i;
    #   an infinite re keeps the product, so (inf + inf i)^2 = NaN + inf i;
    # - imag = 2 (re im): overflows to a signed infinity like the product does.
    re, im = x.real, x.imag
    result = np.empty(x.shape, x.dtype)
    balanced = np.isfinite(re) & (np.abs(re) == np.abs(im))
    result.real = np.where(balanced, np.zeros((), re.dtype), (re - im) * (re + im))
    result.imag = np.asarray(2, re.dtype) * (re * im)
    return result.astype(call.result_dtype)


@op("chlo.constant_like")
def constant_like(call: OpCall, operand: np.ndarray) -> np.ndarray:
    value = call.cached("value", lambda: _splat_value(call))
    return np.full(np.shape(operand), value, call.result_dtype)


CONSTANT_LIKE_VALUE = Phrase("every element is the constant {value}: the operand gives only the shape")


@explains("chlo.constant_like")
def constant_like_provenance(q: ProvenanceQuery):
    """No operand element: the operand's values never reach the result."""
    value = getattr(q.attr("value"), "array", q.attr("value"))
    return q.answer([], [(CONSTANT_LIKE_VALUE, {"value": np.asarray(value).reshape(-1)[0]})])


def _splat_value(call: OpCall) -> np.ndarray:
    attr = call.attr("value")
    if attr is None:
        raise call.error("constant_like needs a value attribute")
    array = getattr(attr, "array", None)
    value = np.asarray(array if array is not None else attr)
    if value.size != 1:
        raise call.error(f"constant_like value must be a single element, got {value.size}")
    return value.reshape(()).astype(call.result_dtype)


@op("chlo.next_after")
def next_after(call: OpCall, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return next_representable(np.asarray(x), np.asarray(y), call.result_dtype)


def next_representable(x: np.ndarray, y: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The float after x in the direction of y (C's nextafter), on the bit patterns of `dtype`.

    x = y gives y (so nextafter(-0.0, 0.0) is 0.0), from zero the result is the smallest
    subnormal with y's sign, and any NaN operand gives NaN, as in XLA's decomposition.
    """
    x, y = np.broadcast_arrays(x.astype(dtype), y.astype(dtype))
    xb, width = float_bits(x)
    yb, _ = float_bits(y)
    sign_bit = np.uint64(1 << (width - 1))
    x_magnitude, y_magnitude = xb & ~sign_bit, yb & ~sign_bit
    toward_zero = (x_magnitude > y_magnitude) | ((xb & sign_bit) != (yb & sign_bit))
    one = np.uint64(1)
    result = np.where(toward_zero, xb - one, xb + one)
    result = np.where(x_magnitude == 0, np.where(y_magnitude == 0, yb, (yb & sign_bit) | one), result)
    xw, yw = widen(x), widen(y)
    result = np.where(xw == yw, yb, result)
    nan_bits, _ = float_bits(np.asarray(np.nan).astype(dtype))
    result = np.where(np.isnan(xw) | np.isnan(yw), nan_bits, result)
    return result.astype(UNSIGNED_OF_SIZE[dtype.itemsize]).view(dtype)


# -- broadcasting binary ops ----------------------------------------------------------------------


def _align(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Place the lower-rank operand's dimensions at `broadcast_dimensions` of the result.

    Without the attribute (or for equal ranks) numpy's trailing alignment is the CHLO rule.
    Region bodies may run these ops on batched operands: leading dimensions beyond the declared
    rank are kept in front.
    """
    dims = call.attr("broadcast_dimensions")
    if dims is None:
        return lhs, rhs
    ranks = [_declared_rank(t) for t in call.operand_types[:2]]
    if None in ranks or ranks[0] == ranks[1]:
        return lhs, rhs
    low, high = (0, 1) if ranks[0] < ranks[1] else (1, 0)
    operands = [np.asarray(lhs), np.asarray(rhs)]
    operands[low] = _expand(call, operands[low], ranks[low], ranks[high], tuple(int(d) for d in dims))
    return operands[0], operands[1]


def _declared_rank(t: Any) -> int | None:
    return len(t.shape) if isinstance(t, TensorType) and t.shape is not None else None


def _expand(call: OpCall, x: np.ndarray, rank: int, target_rank: int, dims: tuple[int, ...]) -> np.ndarray:
    if len(dims) != rank or any(not 0 <= d < target_rank for d in dims) or len(set(dims)) != rank:
        raise call.error(f"broadcast_dimensions {list(dims)} do not map a rank-{rank} operand into rank {target_rank}")
    lead = x.ndim - rank
    # Put the operand's dimensions in the order of their result positions, then insert 1s.
    order = sorted(range(rank), key=lambda i: dims[i])
    x = x.transpose(tuple(range(lead)) + tuple(lead + i for i in order))
    shape = [1] * target_rank
    for k, i in enumerate(order):
        shape[dims[i]] = x.shape[lead + k]
    return x.reshape(x.shape[:lead] + tuple(shape))


BROADCAST_RULE = Phrase("{op} broadcasts its operands to the result shape {shape}, then combines the elements at the same index")


def broadcast_mapping(q: ProvenanceQuery, k: int) -> tuple[tuple[int, ...], bool]:
    """The result dimensions operand `k`'s dimensions stand for, and whether broadcast_dimensions said so.

    As `_align` evaluates it: broadcast_dimensions place the lower-rank operand when the ranks
    differ; otherwise the operand's dimensions line up with the trailing result dimensions.
    """
    rank, result_rank = len(q.operand_shape(k)), len(q.result_shape(q.result))
    dims = q.attr("broadcast_dimensions")
    other = len(q.operand_shape(1 - k))
    if dims is not None and rank < other:
        return tuple(int(d) for d in dims), True
    return trailing_dims(rank, result_rank), False


def chlo_broadcast_provenance(q: ProvenanceQuery):
    """chlo.broadcast_*(lhs, rhs): each operand's element at the result index mapped through the broadcast."""
    names = operand_names(q.op)
    steps = [(BROADCAST_RULE, {"op": q.op.name, "shape": q.result_shape(q.result)})]
    sources, inputs = [], []
    for k in range(2):
        dims, by_attribute = broadcast_mapping(q, k)
        source, lines = broadcast_source(q, k, names[k], dims, by_attribute)
        steps += lines
        sources.append(source)
        inputs.append((names[k], source.index, value_at(q, k, source.index)))
    steps.append(combine_step(q, inputs, short_name(q.op)))
    return q.answer(sources, steps)


def _integer_shift(base: Callable) -> Callable:
    """A shift runs on integers. chlo.md lets its operands be any tensor, so the verifier accepts
    floats, but what shifting them means is nowhere defined (their legalization, to a stablehlo
    shift, needs integers): running one is an error, not a guess."""
    def shift(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        if np.asarray(lhs).dtype.kind not in "iub":
            raise call.error(f"shifts integers; its operands are {call.op.operand_types[0]}, which a shift "
                             "has no meaning for (chlo.md admits the type, StableHLO's shifts do not)")
        return base(call, lhs, rhs)

    return shift


def _broadcasting(name: str, base: Callable) -> Callable:
    if name.startswith("shift_"):
        base = _integer_shift(base)

    def evaluate(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        lhs, rhs = _align(call, lhs, rhs)
        return base(call, lhs, rhs)

    evaluate.__name__ = evaluate.__qualname__ = f"broadcast_{name}"
    explains(f"chlo.broadcast_{name}")(chlo_broadcast_provenance)
    return op(f"chlo.broadcast_{name}")(evaluate)


for _name, _base in {
    "add": ew.add, "subtract": ew.subtract, "multiply": ew.multiply, "divide": ew.divide,
    "remainder": ew.remainder, "power": ew.power, "maximum": ew.maximum, "minimum": ew.minimum,
    "and": ew.and_, "or": ew.or_, "xor": ew.xor, "shift_left": ew.shift_left,
    "shift_right_arithmetic": ew.shift_right_arithmetic, "shift_right_logical": ew.shift_right_logical,
    "atan2": atan2, "compare": ew.compare, "complex": ew.complex_, "next_after": next_after, "polygamma": polygamma,
    "zeta": zeta,
}.items():
    _broadcasting(_name, _base)


@op("chlo.broadcast_select")
def broadcast_select(call: OpCall, pred: np.ndarray, on_true: np.ndarray, on_false: np.ndarray) -> np.ndarray:
    # numpy-style broadcasting of all three operands (the op has no broadcast_dimensions).
    return np.asarray(np.where(pred, on_true, on_false), call.result_dtype)


explains("chlo.broadcast_select")(select_provenance)  # numpy-style: its default index mapping


@op("chlo.mulhi")
def mulhi(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The high half of each full 2N-bit product of N-bit integers (signed or unsigned)."""
    x, y = np.asarray(lhs), np.asarray(rhs)
    bits = call.operand_types[0].element.width  # i2/i4 are stored in a byte: the type says N
    if bits > 32:
        # 128-bit products: Python integers (floor shift keeps the sign of signed products).
        high = [(int(a) * int(b)) >> bits for a, b in zip(x.reshape(-1).tolist(), y.reshape(-1).tolist())]
        return np.array(high, dtype=call.result_dtype).reshape(x.shape)
    wide = np.dtype(np.uint64 if call.operand_types[0].element.is_unsigned else np.int64)
    return (x.astype(wide) * y.astype(wide) >> wide.type(bits)).astype(call.result_dtype)
