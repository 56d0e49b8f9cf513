"""TPU arithmetic: f32 contractions as bf16 MXU passes, and subnormals flushed to zero.

Contractions (../shared/docs/tpu.md §4.1-4.3). An f32 dot runs on the MXU as bf16 x bf16 products
accumulated in f32. Each operand is split into bf16 parts the way XLA's dot-algorithm rewriter
does it (openxla/xla: xla/backends/gpu/transforms/dot_algorithm_rewriter.cc, the one public
implementation, whose default path is named after simulating TPU precision):

- 1 pass (DEFAULT, `BF16_BF16_F32`): each operand rounded to bf16 (round to nearest even,
  overflow to inf);
- 3 passes (HIGH, `BF16_BF16_F32_X3`): hi = truncate(x) (the low 16 bits masked off),
  lo = bf16(x - hi); `(lo.hi + hi.lo)`, NaN -> 0, `+ hi.hi`;
- 6 passes (HIGHEST, `BF16_BF16_F32_X6`): hi = truncate(x), mid = truncate(x - hi),
  lo = bf16(x - hi - mid); `((((mid.mid + hi.lo) + lo.hi) + hi.mid) + mid.hi)`, NaN -> 0,
  `+ hi.hi`.

NaN -> 0 (XLA's ReplaceNaNWithZeros) drops the NaN an infinite operand makes in the low passes
(inf x 0.0); the hi.hi pass still carries the infinity. Every sum is an f32 add.

One pass (`bf16_pass`) is modelled on the systolic array: the products of one K-chunk of the
MXU's width (128; 256 on v6e and TPU7x) are summed exactly and the sum rounded once to f32 (by way
of f64: `chunk_sum`), and the chunk sums are then added in K order in f32. bf16 x bf16 products
are exact in f32, so this is the whole model. How the real MXU adds within a chunk is not public
(tpu.md §4.3 suggests f32 sums in K order; the model here said so until issue 36): one rounding per
chunk is as plausible for a systolic array's wide accumulators and lets each pass be one f64 GEMM
per chunk at BLAS speed, where adding 128 products in order took numpy a call per product. The
two models differ only where a chunk's f32 partial sums would have rounded (in the last bits).
Whether the TPU splits operands inside HIGH/HIGHEST this way is not public either: dots are exact
to this stated model and approximate against a real TPU (tpu.md §6).

Subnormals (§4.5): a TPU computes with flush-to-zero and denormals-are-zero. `flush_subnormals`
turns subnormal f32/bf16 values into zeros of the same sign; inside the passes it is applied
where the device computes (split subtractions and roundings, each pass's result, each sum).
Partial sums inside one pass are not flushed (an approximation: they become subnormal only when
products of normal numbers cancel to below 2^-126). f16 is not flushed: a TPU computes f16 in f32,
where every f16 value, subnormal ones included, is a normal number, and converts the result back
(an inference; tpu.md §4.5 names f32 and bf16).
"""
from __future__ import annotations

import math
from math import prod
from typing import Any

import ml_dtypes
import numpy as np

from .. import blas

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)

# (unsigned view, the magnitude bits, one, the largest subnormal's bits, the sign bit) of the float
# types a TPU flushes, as numpy scalars of the unsigned type.
_FLUSHED = {
    dtype: (unsigned, unsigned.type(magnitude), unsigned.type(1), unsigned.type(largest_subnormal),
            unsigned.type(sign))
    for dtype, unsigned, magnitude, largest_subnormal, sign in (
        (F32, np.dtype(np.uint32), 0x7FFFFFFF, 0x007FFFFF, 0x80000000),
        (BF16, np.dtype(np.uint16), 0x7FFF, 0x007F, 0x8000),
    )
}
_smallest = np.minimum.reduce  # the ufunc itself: ndarray.min adds a Python call
# Zeroing an f32's low 16 bits truncates it to bf16 (XLA's kMaskBF16).
_BF16_HIGH_BITS = np.uint32(0xFFFF0000)


def flushes(dtype: np.dtype) -> bool:
    """Whether values of `dtype` are flushed (f32, bf16)."""
    return dtype in _FLUSHED


def flush_subnormals(x: Any) -> Any:
    """`x` with its subnormal elements replaced by zeros of the same sign (DAZ/FTZ).

    Anything but an f32/bf16 array comes back as it is, and so does an array without
    subnormals (no copy)."""
    if not isinstance(x, np.ndarray):
        return x
    spec = _FLUSHED.get(x.dtype)
    if spec is None or not x.size:
        return x
    if not x.ndim:  # a 0-d array's bits are a numpy scalar, whose wrap-around below would warn
        flat = x.reshape(1)
        flushed = flush_subnormals(flat)
        return x if flushed is flat else flushed.reshape(())
    unsigned, magnitude_bits, one, largest_subnormal, sign = spec
    bits = x.view(unsigned)
    # Subnormal: a magnitude in [1, largest subnormal]; minus one (zero wraps around), below it.
    below = bits & magnitude_bits
    below -= one
    if _smallest(below, axis=None) >= largest_subnormal:  # one reduction, no mask, for the usual array without any
        return x
    subnormal = below < largest_subnormal
    return np.where(subnormal, bits & sign, bits).view(x.dtype)


def bf16_rounded(x: np.ndarray) -> np.ndarray:
    """f32 `x` rounded to bf16 (nearest even, overflow to inf), as f32 values."""
    return x.astype(BF16).astype(F32)


def bf16_truncated(x: np.ndarray) -> np.ndarray:
    """f32 `x` with its low 16 bits masked off: bf16 by truncation, as f32 values."""
    return (np.ascontiguousarray(x, F32).view(np.uint32) & _BF16_HIGH_BITS).view(F32)


def split_to_bf16(x: np.ndarray, parts: int, flush: bool = True) -> list[np.ndarray]:
    """f32 `x` as `parts` (1, 2 or 3) bf16-valued f32 arrays, high part first, split as XLA's
    rewriter splits: every part but the last truncated, the last rounded. With `flush`, every
    subtraction and rounding flushes subnormal results as the device does."""
    ftz = flush_subnormals if flush else (lambda a: a)
    x = np.asarray(x, F32)
    if parts == 1:
        return [ftz(bf16_rounded(x))]
    pieces = []
    rest = x
    for _ in range(parts - 1):
        high = bf16_truncated(rest)
        pieces.append(ftz(bf16_rounded(high)))
        rest = ftz(rest - high)
    pieces.append(ftz(bf16_rounded(rest)))
    return pieces


def bf16_pass(lhs: np.ndarray, rhs: np.ndarray, chunk: int) -> np.ndarray:
    """`[..., M, K] x [..., K, N]` of bf16-valued f32 arrays in f32: each K-chunk of `chunk`
    summed exactly and rounded to f32 once (`chunk_sum`), then the chunk sums added in K order
    (the module docstring's model).

    The chunks go to `chunk_sum` together, as a leading batch dim (as many at once as
    _CHUNK_SUM_BYTES allows): K is cut into [chunks, width], the last chunk filled up with
    -0.0 x +0.0 = -0.0 products, which leave every exact sum as it is, and a sum of -0.0
    products -0.0."""
    k_total = lhs.shape[-1]
    batch = lhs.shape[:-2]
    if batch != rhs.shape[:-2]:
        batch = np.broadcast_shapes(batch, rhs.shape[:-2])
    shape = batch + (lhs.shape[-2], rhs.shape[-1])
    if k_total == 0:
        return np.zeros(shape, F32)
    width = min(chunk, k_total)
    chunks = -(-k_total // width)
    filler = chunks * width - k_total
    lhs = lhs.reshape((1,) * (len(batch) - (lhs.ndim - 2)) + lhs.shape)
    rhs = rhs.reshape((1,) * (len(batch) - (rhs.ndim - 2)) + rhs.shape)
    if filler:
        lhs = np.concatenate([lhs, np.full(lhs.shape[:-1] + (filler,), -0.0, F32)], axis=-1)
        rhs = np.concatenate([rhs, np.zeros(rhs.shape[:-2] + (filler, rhs.shape[-1]), F32)], axis=-2)
    left = np.moveaxis(lhs.reshape(lhs.shape[:-1] + (chunks, width)), -2, 0)  # [chunks, ..., M, width]
    right = np.moveaxis(rhs.reshape(rhs.shape[:-2] + (chunks, width, rhs.shape[-1])), -3, 0)  # [chunks, ..., width, N]
    group = max(1, _CHUNK_SUM_BYTES // (8 * max(prod(shape), 1)))
    total = None
    for first in range(0, chunks, group):
        for partial in chunk_sum(left[first:first + group], right[first:first + group]):
            total = partial if total is None else total + partial
    return total


# Bytes of f64 chunk sums made at once (bounded memory).
_CHUNK_SUM_BYTES = 64 << 20


def chunk_sum(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The f32 `[..., M, K] x [..., K, N]` of bf16-valued f32 arrays, K at most 256: every output
    the exact sum of its products rounded to f64 and then to f32, whatever order BLAS adds in.

    The products of bf16 values have 16 significant bits and are exact in f64, and so is their sum
    when they span few enough binades (`_F64_SPAN`): then one f64 GEMM gives the exact sum, and
    rounding it is the model's rounding. Where that is not proved (a row and a column whose finite
    non-zero values span too many binades between them), the GEMM's error is bounded (at most
    K * 2^-53 * sum |product|, in any order of additions), and only an output whose bound reaches
    a point where f32 rounding changes is summed again by `math.fsum` (the exact sum rounded to
    f64). Zero sums are signed as IEEE signs them (`_sign_zeros`). NaN and infinities come out as
    from any order of additions."""
    left, right = lhs.astype(np.float64), rhs.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):  # inf x 0 and f32 overflow are the model's own
        wide = blas.matmul(left, right)
        out = wide.astype(F32)
    terms = int(lhs.shape[-1])
    doubtful = _doubtful(lhs, rhs, out.shape, _F64_SPAN - max(terms - 1, 0).bit_length())
    if doubtful[0].size:
        _settle_doubtful(left, right, wide, out, doubtful)
    zero = out == 0
    if zero.any():
        _sign_zeros(lhs, rhs, out, zero)
    return out


# Bits of an f64 significand beyond a bf16 x bf16 product's 16: an exact sum of n products needs
# their exponents to span at most this minus ceil(log2(n)) binades.
_F64_SPAN = 53 - 16
# Products looked at once when outputs are summed again one by one (bounded memory).
_SETTLED_PRODUCTS = 1 << 20


def _binades(x: np.ndarray, axis: int) -> np.ndarray:
    """Along `axis`, the exponent of the largest finite non-zero magnitude minus the smallest's (0
    where fewer than two), from the f32 exponent bits. A subnormal counts as exponent 1: its lowest
    bit sits where a bf16 value of that exponent has its own.

    Read from the magnitudes' bits, which order as the magnitudes do, in a few integer passes: one
    less than a zero wraps above everything, so the smallest `bits - 1` below the infinities' is
    the smallest finite non-zero; two to the 23 more than an infinity or NaN sets the sign bit, so
    as signed integers the largest `bits + 2^23` is the largest finite."""
    bits = x.view(np.uint32) & np.uint32(0x7FFFFFFF)
    low = np.min(bits - np.uint32(1), axis=axis)
    high = np.max((bits + np.uint32(1 << 23)).view(np.int32), axis=axis)
    usable = low < np.uint32(0x7F7FFFFF)  # some finite non-zero value along the axis
    low_exponent = np.maximum(((low + np.uint32(1)) >> np.uint32(23)).astype(np.int16), 1)
    high_exponent = np.maximum((high >> 23).astype(np.int16) - 1, 1)
    return np.where(usable, high_exponent - low_exponent, 0)


def _doubtful(lhs: np.ndarray, rhs: np.ndarray, shape: tuple, limit: int) -> tuple:
    """np.nonzero form of the outputs whose row and column span more than `limit` binades between
    them, found from the rows that can take part at all (most sums are proved exact at once)."""
    row_spans, column_spans = _binades(lhs, axis=-1), _binades(rhs, axis=-2)
    if not row_spans.size or not column_spans.size or int(row_spans.max()) + int(column_spans.max()) <= limit:
        return tuple(np.zeros(0, np.intp) for _ in shape)
    batch = shape[:-2]
    row_spans = np.broadcast_to(row_spans, batch + row_spans.shape[-1:]).reshape(-1, shape[-2])
    column_spans = np.broadcast_to(column_spans, batch + column_spans.shape[-1:]).reshape(-1, shape[-1])
    batches, rows = np.nonzero(row_spans + column_spans.max(axis=-1, keepdims=True) > limit)
    pairs, columns = np.nonzero(row_spans[batches, rows][:, None] + column_spans[batches] > limit)
    return (*np.unravel_index(batches[pairs], batch), rows[pairs], columns) if batch else (rows[pairs], columns)


def _products(left: np.ndarray, right: np.ndarray, where: tuple) -> np.ndarray:
    """[P, K]: the f64 products of the outputs at `where` (an np.nonzero of the output shape)."""
    batch = np.broadcast_shapes(left.shape[:-2], right.shape[:-2])
    rows = np.broadcast_to(left, batch + left.shape[-2:])[where[:-1]]
    columns = np.moveaxis(np.broadcast_to(right, batch + right.shape[-2:]), -1, -2)[(*where[:-2], where[-1])]
    with np.errstate(invalid="ignore", over="ignore"):
        return rows * columns


def _settle_doubtful(left: np.ndarray, right: np.ndarray, wide: np.ndarray, out: np.ndarray, where: tuple) -> None:
    """The doubtful outputs at `where`: those whose GEMM error bound reaches a point where f32
    rounding changes are math.fsum's exact sums, rounded.

    The bound needs each output's sum of product magnitudes, for which the product of its row's
    and its column's Euclidean norms stands in (Cauchy-Schwarz: never smaller, at most sqrt(K)
    times larger), from two passes over the operands rather than a GEMM or a gather of every
    doubtful output's products. A larger bound only sends more outputs to fsum, which is exact
    whatever the bound; a near tie is rare enough that few go."""
    terms = left.shape[-1]
    batch = np.broadcast_shapes(left.shape[:-2], right.shape[:-2])
    with np.errstate(invalid="ignore", over="ignore"):
        row_norms = np.sqrt(np.einsum("...ik,...ik->...i", left, left))
        column_norms = np.sqrt(np.einsum("...kj,...kj->...j", right, right))
        magnitudes = (np.broadcast_to(row_norms, batch + row_norms.shape[-1:])[where[:-1]]
                      * np.broadcast_to(column_norms, batch + column_norms.shape[-1:])[(*where[:-2], where[-1])])
    error = magnitudes * (terms * 2.0 ** -53 * 1.01)
    near = _may_round_otherwise(wide[where], out[where], error) & np.isfinite(magnitudes)
    again = tuple(w[near] for w in where)
    for first in range(0, again[0].size, _block(terms)):
        at = tuple(w[first:first + _block(terms)] for w in again)
        sums = [math.fsum(row) for row in _products(left, right, at).tolist()]
        with np.errstate(over="ignore"):
            out[at] = np.array(sums).astype(F32)


def _block(terms: int) -> int:
    return max(1, _SETTLED_PRODUCTS // max(terms, 1))


def _sign_zeros(lhs: np.ndarray, rhs: np.ndarray, out: np.ndarray, zero: np.ndarray) -> None:
    """Zero outputs signed as IEEE signs sums: -0.0 when every product is -0.0, else +0.0 (BLAS
    starts from +0.0 and loses the first). The common zeros come from a row or a column of zeros
    (a mask, a gradient that is zero): every product is a zero, -0.0 where the signs differ, which
    flags per row and column decide unless both hold zeros of both signs. The other zeros (sums
    that cancel, rows and columns of zeros of both signs) are settled from their own products."""
    negative_left, negative_right = np.signbit(lhs), np.signbit(rhs)
    left_negative, left_positive = np.all(negative_left, axis=-1)[..., :, None], np.all(~negative_left, axis=-1)[..., :, None]
    right_negative, right_positive = np.all(negative_right, axis=-2)[..., None, :], np.all(~negative_right, axis=-2)[..., None, :]
    all_zero = (np.all(lhs == 0, axis=-1)[..., :, None] | np.all(rhs == 0, axis=-2)[..., None, :]) & zero
    decided = all_zero & (left_negative | left_positive | right_negative | right_positive)
    negative = (left_positive & right_negative) | (left_negative & right_positive)
    out[decided] = np.broadcast_to(np.where(negative, np.float32(-0.0), np.float32(0.0)), out.shape)[decided]
    undecided = zero & ~decided
    if undecided.any():
        where = np.nonzero(undecided)
        for first in range(0, where[0].size, _block(lhs.shape[-1])):
            at = tuple(w[first:first + _block(lhs.shape[-1])] for w in where)
            products = _products(lhs, rhs, at)
            all_negative_zero = np.all((products == 0) & np.signbit(products), axis=-1)
            out[at] = np.where(all_negative_zero, np.float32(-0.0), out[at])


def _may_round_otherwise(wide: np.ndarray, out: np.ndarray, error: np.ndarray) -> np.ndarray:
    """Whether a sum within `error` of `wide` (and one f64 rounding beyond) may round to another
    f32 than `out`: the interval reaches the midpoint towards a neighbouring f32."""
    with np.errstate(invalid="ignore", over="ignore"):
        value = out.astype(np.float64)
        below = np.nextafter(out, np.float32(-np.inf)).astype(np.float64)
        above = np.nextafter(out, np.float32(np.inf)).astype(np.float64)
        slack = error + np.abs(wide) * 2.0 ** -52
        return (wide - slack <= (value + below) / 2) | (wide + slack >= (value + above) / 2)


def nan_to_zero(x: np.ndarray) -> np.ndarray:
    """XLA's ReplaceNaNWithZeros: `select(inf >= |x|, x, 0)`."""
    return np.where(np.abs(x) <= np.float32(np.inf), x, np.float32(0))


# Passes -> (parts per operand, the (lhs part, rhs part) products summed before NaN -> 0, in order).
# Part 0 is hi; hi.hi is always added last.
PASS_PLANS = {
    1: (1, ()),
    3: (2, ((1, 0), (0, 1))),
    6: (3, ((1, 1), (0, 2), (2, 0), (0, 1), (1, 0))),
}


def mxu_matmul(lhs: np.ndarray, rhs: np.ndarray, passes: int, chunk: int, flush: bool = True) -> np.ndarray:
    """The f32 `[..., M, K] x [..., K, N]` of f32 operands in `passes` (1, 3 or 6) bf16 passes."""
    ftz = flush_subnormals if flush else (lambda a: a)
    parts, low_terms = PASS_PLANS[passes]
    lhs_parts = split_to_bf16(lhs, parts, flush)
    rhs_parts = split_to_bf16(rhs, parts, flush)

    def dot(i: int, j: int) -> np.ndarray:
        return ftz(bf16_pass(lhs_parts[i], rhs_parts[j], chunk))

    result = dot(0, 0)
    if not low_terms:
        return result
    low = None
    for i, j in low_terms:
        term = dot(i, j)
        low = term if low is None else ftz(low + term)
    return ftz(nan_to_zero(low) + result)


__all__ = [
    "BF16", "PASS_PLANS", "bf16_pass", "bf16_rounded", "bf16_truncated", "flush_subnormals", "flushes",
    "mxu_matmul", "nan_to_zero", "split_to_bf16",
]
