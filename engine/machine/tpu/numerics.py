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
MXU's width (128; 256 on v6e and TPU7x) are added one after the other in K order into an f32
partial sum starting from the chunk's first product, and the chunk sums are then added in K order.
bf16 x bf16 products are exact in f32, so this order is the whole model. Whether the real MXU
sums a chunk that way, and how the TPU splits operands inside HIGH/HIGHEST, is not public: dots
are exact to this stated model and approximate against a real TPU (tpu.md §6).

Subnormals (§4.5): a TPU computes with flush-to-zero and denormals-are-zero. `flush_subnormals`
turns subnormal f32/bf16 values into zeros of the same sign; inside the passes it is applied
where the device computes (split subtractions and roundings, each pass's result, each sum).
Partial sums inside one pass are not flushed (an approximation: they become subnormal only when
products of normal numbers cancel to below 2^-126). f16 is not flushed: a TPU computes f16 in f32,
where every f16 value, subnormal ones included, is a normal number, and converts the result back
(an inference; tpu.md §4.5 names f32 and bf16).
"""
from __future__ import annotations

from math import prod
from typing import Any

import ml_dtypes
import numpy as np

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
    """`[..., M, K] x [..., K, N]` of bf16-valued f32 arrays in f32, summed per K-chunk of
    `chunk` in K order, then chunk sums added in order (the module docstring's model)."""
    k_total = lhs.shape[-1]
    batch = lhs.shape[:-2]
    if batch != rhs.shape[:-2]:
        batch = np.broadcast_shapes(batch, rhs.shape[:-2])
    shape = batch + (lhs.shape[-2], rhs.shape[-1])
    if k_total == 0:
        return np.zeros(shape, F32)
    outputs = prod(shape)
    if outputs >= _PER_K_FROM:
        partials = _chunk_sums(lhs, rhs, shape, chunk)
    else:
        partials = [_accumulated(lhs[..., :, start:start + chunk], rhs[..., start:start + chunk, :], shape)
                    for start in range(0, k_total, chunk)]
    total = partials[0]
    for partial in partials[1:]:
        total = total + partial
    return total


# Below this many outputs a pass sums its products with one ufunc accumulate per block of rows
# (few Python steps); from it on, one in-place add per K offset over every chunk's outputs at
# once (numpy's own loops are long enough). Both add the products of a chunk one after the other
# in K order.
_PER_K_FROM = 256
# Elements of products (or chunk partial sums) materialised at once (bounded memory).
_BLOCK_ELEMENTS = 1 << 20


def _chunk_sums(lhs: np.ndarray, rhs: np.ndarray, shape: tuple, chunk: int) -> list[np.ndarray]:
    """The sum of each K-chunk's products, in K order from the chunk's first product.

    The chunks are independent, so offset j of every chunk is added in the same numpy call: K is
    cut into [chunks, width] (the last chunk filled up with -0.0 x +0.0 = -0.0 products; adding
    -0.0 leaves every f32 as it is, +0.0 and NaN included) and the products of a slab of offsets
    are made by one broadcast multiply."""
    k_total = lhs.shape[-1]
    width = min(chunk, k_total)
    chunks = -(-k_total // width)
    filler = chunks * width - k_total
    batch = len(shape) - 2
    # Both operands with every batch dim, so the chunk axes below line up under broadcasting.
    lhs = lhs.reshape((1,) * (batch - (lhs.ndim - 2)) + lhs.shape)
    rhs = rhs.reshape((1,) * (batch - (rhs.ndim - 2)) + rhs.shape)
    if filler:
        lhs = np.concatenate([lhs, np.full(lhs.shape[:-1] + (filler,), -0.0, F32)], axis=-1)
        rhs = np.concatenate([rhs, np.zeros(rhs.shape[:-2] + (filler, rhs.shape[-1]), F32)], axis=-2)
    # [width, chunks, ..., M, 1] and [width, chunks, ..., 1, N]
    left = np.moveaxis(lhs.reshape(lhs.shape[:-1] + (chunks, width)), (-1, -2), (0, 1))[..., None]
    right = np.moveaxis(rhs.reshape(rhs.shape[:-2] + (chunks, width, rhs.shape[-1])), (-2, -3), (0, 1))
    right = right[..., None, :]
    outputs = prod(shape)
    sums = []
    group = max(1, _BLOCK_ELEMENTS // outputs)  # chunks summed together
    for first in range(0, chunks, group):
        part = slice(first, min(first + group, chunks))
        in_group = part.stop - part.start
        slab = max(1, _BLOCK_ELEMENTS // (in_group * outputs))  # K offsets multiplied together
        partial = None
        for start in range(0, width, slab):
            products = np.multiply(left[start:start + slab, part], right[start:start + slab, part], dtype=F32,
                                   order="C")
            # Flat contiguous rows: numpy's one-dimensional add has the least overhead per call.
            rows = iter(products.reshape(len(products), -1))
            if partial is None:
                partial = next(rows).copy()
            for row in rows:
                partial += row
        sums.extend(partial.reshape((in_group,) + shape))
    return sums


def _accumulated(lhs: np.ndarray, rhs: np.ndarray, shape: tuple) -> np.ndarray:
    """sum_k lhs[..., m, k] * rhs[..., k, n] in f32, added in K order starting from the k=0 product
    (the exact products of bf16 values, so only the order of the additions matters), for few
    outputs: [..., M, N, K] products in blocks of rows; add.accumulate is sequential along K by
    definition."""
    width = lhs.shape[-1]
    rows = shape[-2]
    outputs = prod(shape)
    per_row = max(1, outputs // max(rows, 1) * width)
    step = max(1, _BLOCK_ELEMENTS // per_row)
    columns = np.swapaxes(rhs, -1, -2)  # [..., N, K]
    out = np.empty(shape, F32)
    for first in range(0, rows, step):
        block = slice(first, min(first + step, rows))
        products = np.multiply(lhs[..., block, None, :], columns[..., None, :, :], dtype=F32)
        out[..., block, :] = np.add.accumulate(products, axis=-1, dtype=F32)[..., -1]
    return out


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
