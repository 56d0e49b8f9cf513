"""XLA layouts: which byte of a device buffer holds which element of an array.

A layout (`{1,0:T(8,128)(2,1)}`, XLA's syntax; layout_text.py reads and prints it) is
- `minor_to_major`: the logical dims from fastest- to slowest-varying in memory;
- `tiles`, applied in turn, each to the most-minor dims of the shape the previous one produced
  (openxla/xla docs/tiled_layout.md; ../shared/docs/tpu.md §1.2-1.4): pad every tiled dim up to a
  multiple of its tile size, split it into (tile count, tile size), move the tile sizes to the
  minor end. A dim shorter than the tile counts as 1 (a scalar under `T(128)` takes 128 slots),
  and `*` folds a dim into the next more-minor one before tiling. A second tile rearranges data
  inside the first's tiles: `(2,1)` after `(8,128)` puts rows 2i and 2i+1 of a column next to each
  other, so two bf16 share a 32-bit word;
- `L(n)`: the element count is padded up to a multiple of n; `E(n)`: elements take n bits (s4 is
  `E(4)`, two per byte, the lower linear index in the low nibble); `S(n)`: the memory space, which
  is metadata only (it never moves a byte).

Sizes are what XLA's `ShapeUtil::ArraySize` reports (only the first tile pads). A layout whose
later tiles would pad further is refused for that shape (LayoutError): XLA assumes they never do
("We assume the sub-tiles won't cause additional padding", xla/shape_util.cc), so its sizes and
offsets would disagree for such a layout, and no TPU layout is like that.

`store` gives the exact bytes of the physical buffer (padding zero, words little-endian) and
`load` reads a logical array back, both vectorised: a tiling is a reshape and a transpose, so
an aligned array costs one copy each way (padding adds one).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Optional, Sequence

import numpy as np

from ..ir.dtypes import bit_width
from .layout_text import (
    COMBINE,
    LayoutError,
    TextReader,
    layout_text,
    read_layout_fields,
    read_shape_head,
    shape_text,
    tile_text,
)

# Arrays of at most this many elements are stored and loaded through a cached slot map (one
# numpy scatter/gather): for them numpy's per-call overhead, not the copying, is the cost.
SMALL = 2048
# ... whose padded buffer holds at most this many elements (a slot map indexes the whole buffer).
SMALL_BUFFER = 1 << 16
# From this many elements on, a small array whose tiling is a view of its padded form (one tiling,
# one tile across every minor dim: most activations of a small model) is copied through that view
# instead (one strided copy beats the slot map's scatter/gather; below it numpy's call overhead wins).
VIEWED_FROM = 256


@dataclass(frozen=True, repr=False)
class Layout:
    minor_to_major: tuple[int, ...]
    tiles: tuple[tuple[int, ...], ...] = ()
    tail_padding_alignment: int = 1  # L(n)
    element_size_in_bits: int = 0  # E(n); 0 = the element type's natural size
    memory_space: int = 0  # S(n); 0 = the device's main memory (HBM)
    # The plans of the shapes stored in this layout so far (store/load run for every op result).
    _plans: dict = field(default_factory=dict, init=False, compare=False, hash=False, repr=False)

    def plan(self, shape: tuple[int, ...]) -> "_Plan":
        try:
            return self._plans[shape]
        except KeyError:
            pass
        if len(self._plans) >= 64:
            self._plans.clear()
        plan = self._plans[shape] = _Plan(self, shape)
        return plan

    # -- text ---------------------------------------------------------------------------------
    @staticmethod
    def parse(text: str) -> "Layout":
        """`{1,0:T(8,128)(2,1)}`, `1,0:T(8,128)`, `{}`, `{:T(128)}`, with `*`, L(n), E(n), S(n)."""
        reader = TextReader(text.strip())
        layout = Layout(*read_layout_fields(reader))
        if reader.at != len(reader.text):
            raise reader.error("end of the layout")
        layout.check_fields()
        return layout

    def __str__(self) -> str:
        return layout_text(self)

    def __repr__(self) -> str:
        return f"Layout({layout_text(self)!r})"

    @staticmethod
    def row_major(rank: int) -> "Layout":
        """`{rank-1,...,1,0}` without tiles: XLA's default layout, a host copy's and the CPU's."""
        return Layout(tuple(range(rank - 1, -1, -1)))

    def check_fields(self) -> None:
        """What can be checked without a shape: tile sizes, L, E, S."""
        for tile in self.tiles:
            if not tile:
                raise LayoutError(f"layout {self}: an empty tile")
            if any(d != COMBINE and d < 1 for d in tile):
                raise LayoutError(f"layout {self}: tile sizes must be positive, got {tile_text(tile)}")
            if tile[-1] == COMBINE:
                raise LayoutError(f"layout {self}: the last dim of tile {tile_text(tile)} is '*', but there "
                                  "is no more-minor dim to combine it with")
        if self.tail_padding_alignment < 1:
            raise LayoutError(f"layout {self}: L(n) needs n >= 1")

    def validate(self, rank: int) -> None:
        """LayoutError unless this layout fits arrays of `rank` dims."""
        self.check_fields()
        if sorted(self.minor_to_major) != list(range(rank)):
            raise LayoutError(f"layout {self}: minor_to_major must be a permutation of 0..{rank - 1} for a "
                              f"rank-{rank} array, got ({','.join(map(str, self.minor_to_major))})"
                              if rank else f"layout {self}: a scalar has no dims, so minor_to_major must be empty")
        # The first tile may reach past a short shape (missing major dims count as 1: a scalar
        # has T(128)); each later tile covers at most the dims the tiling before it produced.
        allowed = max(rank, 1)
        for n, tile in enumerate(self.tiles):
            if len(tile) > allowed:
                where = f"a rank-{rank} array" if n == 0 else f"the {allowed} dims tile {n} produces"
                raise LayoutError(f"layout {self}: tile {tile_text(tile)} has {len(tile)} dims, more than "
                                  f"{where}")
            tiled = len(tile) - tile.count(COMBINE)
            allowed = max(allowed, len(tile)) - len(tile) + 2 * tiled

    # -- sizes (ShapeUtil::ArraySize) ---------------------------------------------------------
    def element_bits(self, dtype) -> int:
        """Bits an element takes in the buffer: E(n), else the type's byte size (pred: one byte)."""
        dtype = np.dtype(dtype)
        natural = dtype.itemsize * 8
        bits = self.element_size_in_bits
        if bits == 0 or bits == natural:
            return natural
        if bits > natural or bits < bit_width(dtype) or natural > 8:
            raise LayoutError(f"layout {self}: E({bits}) does not fit {_type_name(dtype)} "
                              f"({bit_width(dtype)}-bit values, stored in {natural} bits)")
        return bits

    def physical_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """The shape after every tile (tpu.md §1.4), major to minor; its row-major order is memory order."""
        return self.plan(tuple(shape)).tiled_shape

    def physical_elements(self, shape: Sequence[int]) -> int:
        """Element slots of the buffer, padding included, rounded up to L(n)."""
        return self.plan(tuple(shape)).slots

    def physical_bytes(self, shape: Sequence[int], dtype) -> int:
        return -(-self.physical_elements(shape) * self.element_bits(dtype) // 8)

    # -- where an element is ------------------------------------------------------------------
    def linear_index(self, index: Sequence[int], shape: Sequence[int]) -> int:
        """The element slot of logical `index` under the whole tiling."""
        return self.plan(tuple(shape)).trace(tuple(index))[0]

    def logical_index(self, linear: int, shape: Sequence[int]) -> Optional[tuple[int, ...]]:
        """The logical index stored in element slot `linear`, or None for a padding slot."""
        return self.plan(tuple(shape)).untrace(linear)

    def locate(self, index: Sequence[int], shape: Sequence[int], dtype) -> "ElementLocation":
        """Everything the UI shows about where element `index` lives in the buffer."""
        plan = self.plan(tuple(shape))
        index = tuple(int(i) for i in index)
        linear, tile_index, tile_offset = plan.trace(index)
        bits = self.element_bits(dtype)
        first_bit = linear * bits
        word = first_bit // 32
        mates: tuple[tuple[int, ...], ...] = ()
        if bits < 32:
            slots = range(word * 32 // bits, min(-(-(word + 1) * 32 // bits), plan.slots))
            mates = tuple(m for m in (plan.untrace(s) for s in slots if s != linear) if m is not None)
        tile_grid = plan.first_tile_grid
        return ElementLocation(
            index=index, tile_index=tile_index, tile_offset=tile_offset,
            tile_number=_ravel(tile_index, tile_grid) if tile_grid else 0,
            linear_index=linear, byte_offset=first_bit // 8, bit_offset=first_bit % 8, bits=bits,
            word_index=word, word_mates=mates)

    # -- storage ------------------------------------------------------------------------------
    def store(self, array: np.ndarray) -> np.ndarray:
        """The bytes of `array`'s buffer in this layout: uint8, exactly physical_bytes long,
        padding zero, multi-byte elements little-endian."""
        array = np.asarray(array)
        shape = array.shape
        plan = self._plans.get(shape) or self.plan(shape)
        dtype = array.dtype
        bits = self.element_size_in_bits
        if not bits or bits == dtype.itemsize * 8 or self.element_bits(dtype) == dtype.itemsize * 8:
            size = plan.size
            strides = plan.view_strides_of(dtype) if size >= VIEWED_FROM else None
            if strides is None and size <= SMALL and plan.slots <= SMALL_BUFFER:
                return plan.slot_map(dtype).store(array)
            out = np.zeros(plan.slots * dtype.itemsize, np.uint8)
            if strides is not None:
                plan.store_into(out, dtype, strides, array)
            else:
                # Writing straight into the buffer's typed view: the only copy of an aligned array.
                _copy(out.view(dtype)[:plan.tiled_size].reshape(plan.tiled_shape), plan.tiled(array), plan.squeezed)
            return out
        bits = self.element_bits(dtype)
        return _pack(np.ascontiguousarray(plan.tiled(array)).reshape(-1).view(np.uint8), bits,
                     -(-plan.slots * bits // 8))

    def slot_map(self, shape: Sequence[int], dtype) -> Optional["SlotMap"]:
        """The SlotMap that store and load use for `shape` arrays of `dtype` (small ones of the
        type's own width), else None."""
        dtype = np.dtype(dtype)
        plan = self.plan(tuple(shape))
        if self.element_size_in_bits and self.element_bits(dtype) != dtype.itemsize * 8:
            return None
        if plan.size > SMALL or plan.view_strides_of(dtype) is not None:
            return None
        if plan.slots > SMALL_BUFFER:
            return None  # a small array padded far (its buffer is stored the general way)
        return plan.slot_map(dtype)

    def load(self, buffer: np.ndarray, shape: Sequence[int], dtype) -> np.ndarray:
        """The logical array `store` wrote into `buffer` (for a `shape` array of `dtype`)."""
        if not isinstance(dtype, np.dtype):
            dtype = np.dtype(dtype)
        if type(shape) is not tuple:
            shape = tuple(shape)
        plan = self._plans.get(shape) or self.plan(shape)
        natural = dtype.itemsize * 8
        bits = self.element_size_in_bits
        bits = natural if not bits or bits == natural else self.element_bits(dtype)
        if type(buffer) is not np.ndarray or buffer.dtype != np.uint8 or buffer.ndim != 1:
            buffer = np.asarray(buffer, np.uint8).reshape(-1)
        if buffer.size * 8 < plan.tiled_size * bits:
            raise LayoutError(f"a buffer of {buffer.size} bytes is too short for "
                              f"{format_shape(dtype, shape, self)}")
        if bits == natural:
            size = plan.size
            strides = plan.view_strides_of(dtype) if size >= VIEWED_FROM else None
            if strides is not None and buffer.flags.c_contiguous:
                return plan.load_from(buffer, dtype, strides)
            if size <= SMALL and plan.slots <= SMALL_BUFFER:
                return plan.slot_map(dtype).load(buffer)
            elements = buffer[:plan.tiled_size * dtype.itemsize].view(dtype)
        else:
            elements = _unpack(buffer, bits, plan.tiled_size).view(dtype)
        return plan.untiled(elements)


@dataclass(frozen=True)
class ElementLocation:
    """Where one element of an array is in its buffer."""

    index: tuple[int, ...]  # logical
    tile_index: tuple[int, ...]  # the tile in the first tiling's grid (untiled major dims first)
    tile_offset: tuple[int, ...]  # the offset inside that tile
    tile_number: int  # that tile's position in memory order
    linear_index: int  # element slot under the whole tiling
    byte_offset: int
    bit_offset: int  # inside the byte, for elements narrower than a byte (E(4): 0 or 4)
    bits: int  # how many bits the element takes
    word_index: int  # the 32-bit word holding (the start of) the element
    word_mates: tuple[tuple[int, ...], ...]  # logical indices of the other elements in that word


# -- the plan of one (layout, shape): every tiling step worked out once --------------------------

class _Step:
    """One tile applied to a shape: prepend `lead` 1-dims, keep `head`, fold the tiled dims into
    groups (a `*` folds a dim into the next), pad each group to a multiple of its tile size, split
    it into (count, tile size) and move the tile sizes to the minor end."""

    __slots__ = ("lead", "head", "groups", "tile", "folded", "counts", "padded", "split", "perm", "inverse_perm", "out")

    def __init__(self, lead: int, head: tuple[int, ...], groups: tuple[tuple[int, ...], ...],
                 tile: tuple[int, ...]):
        self.lead, self.head, self.groups, self.tile = lead, head, groups, tile
        self.folded = head + tuple(prod(g) for g in groups)
        self.counts = tuple(-(-prod(g) // t) for g, t in zip(groups, tile))
        self.padded = head + tuple(c * t for c, t in zip(self.counts, tile))
        self.split = head + tuple(d for c, t in zip(self.counts, tile) for d in (c, t))
        h, k = len(head), len(tile)
        self.perm = tuple(range(h)) + tuple(h + 2 * i for i in range(k)) + tuple(h + 2 * i + 1 for i in range(k))
        self.inverse_perm = tuple(self.perm.index(i) for i in range(len(self.perm)))
        self.out = head + self.counts + tile


class _Plan:
    """How arrays of one shape are laid out: the dim order, the tiling steps, the sizes."""

    def __init__(self, layout: Layout, shape: tuple[int, ...]):
        layout.validate(len(shape))
        self.layout = layout
        self.shape = shape
        self.order = tuple(reversed(layout.minor_to_major))  # physical major -> minor
        self.inverse_order = tuple(int(i) for i in np.argsort(self.order)) if shape else ()
        self.physical = tuple(shape[d] for d in self.order)
        self.transposed = self.order != tuple(range(len(shape)))
        steps: list[_Step] = []
        current = self.physical
        for tile in layout.tiles:
            lead = max(0, len(tile) - len(current))
            current = (1,) * lead + current
            head, tiled = current[:len(current) - len(tile)], current[len(current) - len(tile):]
            groups, sizes, pending = [], [], ()
            for size, t in zip(tiled, tile):
                pending += (size,)
                if t != COMBINE:
                    groups.append(pending)
                    sizes.append(t)
                    pending = ()
            step = _Step(lead, head, tuple(groups), tuple(sizes))
            if steps and prod(step.padded) != prod(step.folded):
                raise LayoutError(f"layout {layout}: tile {tile_text(tile)} pads the shape "
                                  f"{_dims(current)} the tiles before it produce; XLA assumes sub-tiles "
                                  f"add no padding, so {_dims(shape)} cannot use it")
            steps.append(step)
            current = step.out
        self.steps = tuple(steps)
        self.tiled_shape = current
        self.tiled_size = prod(current)
        self.squeezed = tuple(d for d in current if d != 1)
        align = layout.tail_padding_alignment
        self.slots = -(-self.tiled_size // align) * align
        first = steps[0] if steps else None
        self.first_tile_grid = first.head + first.counts if first else ()
        self.aligned = first is None or first.padded == first.folded
        self.unpadded = tuple(slice(0, n) for n in first.folded) if first else ()
        self.size = prod(shape)
        self._gather: Optional[np.ndarray] = None
        self._slot_of: Optional[np.ndarray] = None
        self._slot_maps: dict[np.dtype, SlotMap] = {}
        # The element strides of the unpadded array inside a one-tiling buffer, when the tiling is
        # a view of it: small arrays are stored and loaded by one strided copy through them.
        # Only small arrays use them (view_strides_of); a big or far-padded one never builds the view.
        small = VIEWED_FROM <= self.size <= SMALL and self.tiled_size <= SMALL_BUFFER
        view = self._padded_view(np.empty(self.tiled_size, np.uint8)) if small else None
        self.view_strides: Optional[dict[int, tuple[int, ...]]] = None  # element size -> byte strides
        if view is not None and self.size:
            strides = view[self.unpadded].strides
            self.view_strides = {size: tuple(s * size for s in strides) for size in (1, 2, 4, 8, 16)}

    # -- arrays -------------------------------------------------------------------------------
    def tiled(self, array: np.ndarray) -> np.ndarray:
        """`array` rearranged into tiled_shape (a view when no padding or `*` merge is needed)."""
        x = array.transpose(self.order) if self.transposed else array
        if not self.steps:
            return x
        first = self.steps[0]
        x = x.reshape(first.folded)
        if not self.aligned:
            padded = np.zeros(first.padded, x.dtype)
            padded[self.unpadded] = x
            x = padded
        return self._forward(x)

    def _forward(self, x: np.ndarray, views_only: bool = False) -> np.ndarray:
        for n, step in enumerate(self.steps):
            if n:
                x = x.reshape(step.folded, copy=False) if views_only else x.reshape(step.folded)
            x = (x.reshape(step.split, copy=False) if views_only else x.reshape(step.split)).transpose(step.perm)
        return x

    def untiled(self, elements: np.ndarray) -> np.ndarray:
        """The logical array whose tiled form is the flat `elements` (tiled_size of them)."""
        if not self.steps:
            x = elements.reshape(self.physical)
        else:
            first = self.steps[0]
            padded = np.empty(first.padded, elements.dtype)
            try:
                # Tiling `padded` in place gives a view to pour the elements into: one copy.
                # (numpy runs this copy along the destination's 128 contiguous lanes by itself)
                self._forward(padded, views_only=True)[...] = elements.reshape(self.tiled_shape)
            except ValueError:  # a `*` in a later tile merges dims a view cannot: scatter
                padded.reshape(-1)[self.gather()] = elements
            x = padded
            if not self.aligned:
                # Copy out of the padded block so a small array does not keep its padding alive.
                x = padded[self.unpadded].copy()
            x = x.reshape(self.physical)
        # Contiguous like every array an evaluator makes (a column-major result would otherwise
        # come back as a transposed view).
        return np.ascontiguousarray(x.transpose(self.inverse_order)) if self.transposed else x

    def _padded_view(self, elements: np.ndarray) -> Optional[np.ndarray]:
        """The flat tiled `elements` seen as the one tiling's padded array (physical dims folded),
        a view; None when the tiling is no view of it (several tilings, or tiles side by side in
        a dim other than the most major one: the usual small array has one tile per minor dim)."""
        if len(self.steps) != 1:
            return None
        step = self.steps[0]
        try:
            return elements.reshape(step.out).transpose(step.inverse_perm).reshape(step.padded, copy=False)
        except ValueError:
            return None

    def view_strides_of(self, dtype: np.dtype) -> Optional[tuple[int, ...]]:
        """The byte strides of a `dtype` array inside its buffer when it is stored through a view
        (a one-tiling plan of VIEWED_FROM..SMALL elements, every tile column but the most major
        one single), else None."""
        if self.view_strides is None or not VIEWED_FROM <= self.size <= SMALL:
            return None
        return self.view_strides.get(dtype.itemsize)

    def store_into(self, buffer: np.ndarray, dtype: np.dtype, strides: tuple[int, ...], array: np.ndarray) -> None:
        """Write `array` into the zeroed uint8 `buffer` through its view of byte `strides`: one
        strided copy, the padding untouched."""
        source = array.transpose(self.order) if self.transposed else array
        folded = self.steps[0].folded
        np.ndarray(folded, dtype, buffer, 0, strides)[...] = source.reshape(folded)

    def load_from(self, buffer: np.ndarray, dtype: np.dtype, strides: tuple[int, ...]) -> np.ndarray:
        """The logical array in the contiguous uint8 `buffer`, read through its view of byte
        `strides`: one strided copy, the array's own (never a view of the buffer)."""
        x = np.ndarray(self.steps[0].folded, dtype, buffer, 0, strides).reshape(self.physical)
        if self.transposed:
            x = x.transpose(self.inverse_order)
        return np.array(x, order="C")

    def gather(self) -> np.ndarray:
        """For each slot of the tiled array, the flat index into the first step's padded array."""
        if self._gather is None:
            first = self.steps[0]
            self._gather = np.ascontiguousarray(
                self._forward(np.arange(prod(first.padded)).reshape(first.padded))).reshape(-1)
        return self._gather

    def slot_map(self, dtype: np.dtype) -> "SlotMap":
        slot_map = self._slot_maps.get(dtype)
        if slot_map is None:
            slot_map = self._slot_maps[dtype] = SlotMap(self, dtype)
        return slot_map

    def slot_of(self) -> np.ndarray:
        """For each element of the array, in row-major logical order, its slot in the buffer."""
        if self._slot_of is None:
            ids = np.arange(1, self.size + 1, dtype=np.int64).reshape(self.shape)  # 0 marks padding
            tiled = np.ascontiguousarray(self.tiled(ids)).reshape(-1)
            slots = np.flatnonzero(tiled)
            slot_of = np.empty(self.size, np.intp)
            slot_of[tiled[slots] - 1] = slots
            self._slot_of = slot_of
        return self._slot_of

    # -- single elements ----------------------------------------------------------------------
    def trace(self, index: tuple[int, ...]) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
        """(linear slot, tile index and offset in the first tiling) of a logical index."""
        if len(index) != len(self.shape) or any(not 0 <= i < d for i, d in zip(index, self.shape)):
            raise LayoutError(f"index ({','.join(map(str, index))}) is outside "
                              f"{_dims(self.shape)}")
        idx = tuple(index[d] for d in self.order)
        tile_index: tuple[int, ...] = ()
        tile_offset: tuple[int, ...] = ()
        for n, step in enumerate(self.steps):
            idx = (0,) * step.lead + idx
            h = len(step.head)
            rest, folded = idx[h:], []
            for group in step.groups:
                folded.append(_ravel(rest[:len(group)], group))
                rest = rest[len(group):]
            quotients = tuple(i // t for i, t in zip(folded, step.tile))
            remainders = tuple(i % t for i, t in zip(folded, step.tile))
            if n == 0:
                tile_index, tile_offset = idx[:h] + quotients, remainders
            idx = idx[:h] + quotients + remainders
        return _ravel(idx, self.tiled_shape), tile_index, tile_offset

    def untrace(self, linear: int) -> Optional[tuple[int, ...]]:
        """The logical index in slot `linear`; None for padding."""
        if not 0 <= linear < self.tiled_size:
            return None
        idx = _unravel(linear, self.tiled_shape)
        for step in reversed(self.steps):
            h, k = len(step.head), len(step.tile)
            quotients, remainders = idx[h:h + k], idx[h + k:]
            unfolded: tuple[int, ...] = idx[:h]
            for q, r, t, group in zip(quotients, remainders, step.tile, step.groups):
                i = q * t + r
                if i >= prod(group):
                    return None
                unfolded += _unravel(i, group)
            idx = unfolded[step.lead:]
        return tuple(idx[self.inverse_order[d]] for d in range(len(self.shape)))


class SlotMap:
    """Small `shape` arrays of `dtype` in one layout, element by element: store scatters them into
    a zeroed buffer, load gathers them back (one numpy call each, the cost being numpy's call
    overhead). Layout.store/load use it for such arrays, and a caller storing many arrays of one
    value (the TPU backend) keeps it to skip their look-ups and checks."""

    __slots__ = ("shape", "dtype", "nbytes", "used", "slots")

    def __init__(self, plan: _Plan, dtype: np.dtype):
        self.shape, self.dtype = plan.shape, dtype
        self.nbytes = plan.slots * dtype.itemsize  # the whole buffer, tail padding included
        self.used = plan.tiled_size * dtype.itemsize
        self.slots = plan.slot_of()

    def store(self, array: np.ndarray) -> np.ndarray:
        out = np.zeros(self.nbytes, np.uint8)
        out.view(self.dtype)[self.slots] = array.reshape(-1)
        return out

    def load(self, buffer: np.ndarray) -> np.ndarray:
        """From a flat uint8 `buffer` of at least `used` bytes."""
        return buffer[:self.used].view(self.dtype)[self.slots].reshape(self.shape)


def _copy(destination: np.ndarray, source: np.ndarray, squeezed: tuple[int, ...]) -> None:
    """destination[...] = source, for a contiguous destination of tiled shape whose minor-most dim
    is often a short packing dim (the 2 of bf16's `(2,1)`): numpy would copy 2 elements per inner
    loop (4x slower on big arrays), so such a dim is copied one index at a time, with the 128
    lanes as the inner loop."""
    if len(squeezed) >= 2 and squeezed[-1] <= 8 and squeezed[-2] >= 4 * squeezed[-1]:
        destination = destination.reshape(squeezed)  # dropping 1-dims is always a view
        source = source.reshape(squeezed)
        for i in range(squeezed[-1]):
            destination[..., i] = source[..., i]
    else:
        destination[...] = source


# -- packing elements narrower than a byte ------------------------------------------------------

def _pack(values: np.ndarray, bits: int, nbytes: int) -> np.ndarray:
    """One byte per element -> `bits` per element, the lower index in the lower bits, zero-padded
    to `nbytes`. ml_dtypes keeps a sub-byte value in the low bits of its byte."""
    values = values & ((1 << bits) - 1)
    out = np.zeros(nbytes, np.uint8)
    if bits == 4:
        n = values.size
        out[:n // 2] = values[0:n - n % 2:2] | (values[1:n - n % 2:2] << 4)
        if n % 2:
            out[n // 2] = values[-1]
        return out
    # Any other width: as a little-endian bit stream.
    stream = np.unpackbits(values[:, None], axis=1, bitorder="little")[:, :bits].reshape(-1)
    packed = np.packbits(stream, bitorder="little")
    out[:packed.size] = packed
    return out


def _unpack(buffer: np.ndarray, bits: int, count: int) -> np.ndarray:
    """`count` elements of `bits` each from `buffer` (as _pack wrote them), one byte per element."""
    if bits == 4:
        data = buffer[:-(-count // 2)]
        out = np.empty(data.size * 2, np.uint8)
        out[0::2] = data & 0xF
        out[1::2] = data >> 4
        return out[:count]
    stream = np.unpackbits(buffer[:-(-count * bits // 8)], bitorder="little")[:count * bits]
    return np.packbits(stream.reshape(count, bits), axis=1, bitorder="little").reshape(-1)


# -- small helpers ----------------------------------------------------------------------------

def _ravel(index: Sequence[int], shape: Sequence[int]) -> int:
    linear = 0
    for i, d in zip(index, shape):
        linear = linear * d + i
    return linear


def _unravel(linear: int, shape: Sequence[int]) -> tuple[int, ...]:
    out = []
    for d in reversed(shape):
        out.append(linear % d if d else 0)
        linear = linear // d if d else 0
    return tuple(reversed(out))


def _dims(shape: Sequence[int]) -> str:
    return "[" + ",".join(map(str, shape)) + "]"


def _type_name(dtype: np.dtype) -> str:
    try:
        return shape_text(dtype, ())[:-2]
    except LayoutError:
        return str(dtype)


# -- shapes -------------------------------------------------------------------------------------

def parse_shape(text: str) -> tuple[np.dtype, tuple[int, ...], Optional[Layout]]:
    """`f32[3,5]{1,0:T(2,2)}` -> (float32, (3, 5), Layout); the layout is None when absent."""
    reader = TextReader(text.strip(), what="shape")
    dtype, dims = read_shape_head(reader)
    layout = None
    if reader.peek("{"):
        reader.what = "layout"
        layout = Layout(*read_layout_fields(reader))
        layout.validate(len(dims))
    if reader.at != len(reader.text):
        raise reader.error("end of the shape")
    return dtype, dims, layout


def format_shape(dtype, shape: Sequence[int], layout: Optional[Layout] = None) -> str:
    """`f32[3,5]{1,0:T(2,2)}`; without a layout, `f32[3,5]`."""
    return shape_text(dtype, shape) + (str(layout) if layout is not None else "")


__all__ = ["COMBINE", "ElementLocation", "Layout", "LayoutError", "SlotMap", "format_shape", "parse_shape"]
