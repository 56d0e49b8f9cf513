"""The layout XLA's TPU compiler gives a value nobody chose one for — approximate.

TPU layout assignment is closed source. These rules are inferred from public dumps and docs
(../shared/docs/tpu.md §2.1-2.3, marked [I] there): they reproduce every layout observed, but a
real compiler may choose differently for intermediates, so whatever shows them calls them
"default" (approximate) and every one can be overridden (`--layout`, `mhlo.layout_mode`).

Memory is rows of 128 lanes x 32-bit words, so a type of `bits` packs `pack = 32 / bits` values
per word (1 for f32, 2 for bf16, 4 for 8-bit and pred, 8 for 4-bit); tiles hold at least
`pack * sublane_factor` rows (Mosaic's tiling factor; sublane_factor is 2 before TPU v4):

- rank >= 2: `T(r,128)` on the two most-minor physical dims with `r = next_pow2(s)` clamped to
  [pack * sublane_factor, 8] for a physical second-minor size `s` (up to 8 * pack with large
  second-minor tiling, on by default from TPU7x), then `(pack,1)` for packed types and `E(n)` for
  sub-byte ones: f32 `T(8,128)`, bf16 `T(8,128)(2,1)`, s8 `T(8,128)(4,1)`, s4 `T(8,128)(8,1)E(4)`;
- rank 1: `T(128 r)` with `r` from the number of 128-element rows, then `(128)(pack,1)`:
  f32[4] `T(128)`, bf16[4096] `T(1024)(128)(2,1)`, pred[1] `T(512)(128)(4,1)`;
- scalars: `T(128 * pack * sublane_factor)` (f32 `T(128)`, bf16 `T(256)`, pred `T(512)`), so every
  scalar takes 512 bytes;
- dim order: row-major unless that pads a lot: when (padding of the minor dim to 128) x (padding of
  the second-minor dim to 8) is 1.25 or more, bigger dims go more minor (f32[16,8] -> {0,1}), the
  rule pytorch/xla's TPU layout manager uses and TPU v5e dumps agree with.

Types a TPU has no hardware for (tpu.md §4.9) get the 32-bit rule at their natural width: 64-bit
integers, f64 and c128 (which the TPU numerics refuse unless `--allow-f64`), and c64 — how XLA
really lays those out is not public. f6 types (no TPU support) take one byte like the 8-bit ones,
2-bit integers pack 16 per word with `E(2)`.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional, Sequence

import numpy as np

from ...ir.dtypes import bit_width
from ..layout import Layout
from .generations import TpuGeneration

LANES = 128  # the minor tile: one row of a vector register
SUBLANES = 8  # the second-minor tile of 32-bit types: the rows of a vector register
MAX_PADDING_FACTOR = 1.25  # above this, the dim order is changed to pad less


def storage_bits(dtype) -> int:
    """Bits a TPU stores one element in: pred and f6 take a byte, 2- and 4-bit types pack."""
    dtype = np.dtype(dtype)
    bits = bit_width(dtype)
    if dtype == np.bool_ or bits not in (2, 4):
        return dtype.itemsize * 8
    return bits


def _next_pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(value, high))


def default_minor_to_major(shape: Sequence[int]) -> tuple[int, ...]:
    """Descending, unless the two minor dims would pad by MAX_PADDING_FACTOR or more: then the
    bigger dims are made more minor (a stable sort, so equal dims keep the descending order)."""
    rank = len(shape)
    descending = tuple(range(rank - 1, -1, -1))
    if rank < 2:
        return descending
    if _padding_factor(shape[-1], LANES) * _padding_factor(shape[-2], SUBLANES) < MAX_PADDING_FACTOR:
        return descending
    return tuple(sorted(descending, key=lambda d: -shape[d]))


def _padding_factor(size: int, align: int) -> float:
    remainder = size % align
    return 1.0 + ((align - remainder) / size if remainder and size else 0.0)


def default_tiles(shape: Sequence[int], dtype, generation: TpuGeneration,
                  minor_to_major: Sequence[int], large_second_minor: Optional[bool] = None
                  ) -> tuple[tuple[tuple[int, ...], ...], int]:
    """(tiles, element size in bits for E(n) or 0) for `shape` in the dim order `minor_to_major`."""
    bits = storage_bits(dtype)
    pack = max(1, 32 // bits)
    min_rows = pack * generation.sublane_factor
    if large_second_minor is None:
        large_second_minor = generation.large_second_minor
    max_rows = SUBLANES * pack if large_second_minor and pack > 1 else SUBLANES
    element_bits = bits if bits < 8 else 0
    packing = ((pack, 1),) if pack > 1 else ()
    rank = len(shape)
    if rank == 0:
        return ((LANES * min_rows,),), element_bits
    if rank == 1:
        rows = _clamp(_next_pow2(-(-shape[0] // LANES)), min_rows, SUBLANES)
        inner = ((LANES,),) + packing if pack > 1 else ()
        return ((LANES * rows,),) + inner, element_bits
    second_minor = shape[minor_to_major[1]]
    rows = _clamp(_next_pow2(second_minor), min_rows, max(max_rows, min_rows))
    return ((rows, LANES),) + packing, element_bits


def default_layout(shape: Sequence[int], dtype, generation: TpuGeneration,
                   large_second_minor: Optional[bool] = None,
                   minor_to_major: Optional[Sequence[int]] = None) -> Layout:
    """The layout a TPU of `generation` would give a `shape` array of `dtype` (approximate; see the
    module docstring). `minor_to_major` fixes the dim order (a layout given without tiles);
    `large_second_minor` overrides the generation's large second-minor tiling."""
    shape = tuple(int(d) for d in shape)
    order = tuple(minor_to_major) if minor_to_major is not None else None
    return _default_layout(shape, np.dtype(dtype), generation, large_second_minor, order)


@lru_cache(maxsize=4096)
def _default_layout(shape: tuple[int, ...], dtype: np.dtype, generation: TpuGeneration,
                    large_second_minor: Optional[bool], minor_to_major: Optional[tuple[int, ...]]) -> Layout:
    # One Layout object per answer: a Layout keeps the store/load plans of the shapes it has laid
    # out, so every value, run and device of the same shape and type reuses them.
    order = minor_to_major if minor_to_major is not None else default_minor_to_major(shape)
    tiles, element_bits = default_tiles(shape, dtype, generation, order, large_second_minor)
    return Layout(order, tiles, element_size_in_bits=element_bits)


__all__ = ["default_layout", "default_minor_to_major", "default_tiles", "storage_bits"]
