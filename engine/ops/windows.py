"""Windowed reductions: reduce_window and select_and_scatter.

Both walk the window one position at a time, vectorised over every window at once: for window
offset `o`, the strided view `padded[o * window_dilation :: stride]` holds element `o` of every
window, so a window of W positions costs W numpy operations (or W region calls for a general
body) however many windows there are. This is XLA CPU's order: the accumulator starts at the
init value and takes the window's elements in row-major order, rounding narrow floats after
each step. Padding and base-dilation holes hold the init value, as the spec says (XLA CPU
skips them instead, which only differs when the init value is not the body's identity).

Scans (the windows JAX emits for cumsum/cumprod/cummax/cumlogsumexp: one axis whose window
covers the whole axis, padded by n-1 on one side) longer than SCAN_BASE are computed the way
XLA's ReduceWindowRewriter rewrites them: scans of SCAN_BASE-long tiles, an exclusive scan of
the tile totals (itself rewritten the same way when long), and `body(tile_scan, carry)`. That
is O(n) work, and bit for bit XLA's association order.

A general body over a window of more than SEQUENTIAL_BODY_LIMIT positions uses the ordered
pairwise tree of `reduction.tree_reduce_last` over the materialised windows instead.
"""
from __future__ import annotations

import itertools
from typing import Any, Optional, Sequence

import numpy as np

from .reduction import SEQUENTIAL_BODY_LIMIT, combine, run_body, tree_reduce_last
from .registry import OpCall, op

# XLA CPU's ReduceWindowRewriter base length: scans longer than this are tiled.
SCAN_BASE = 16


class Geometry:
    """Window attributes normalised to per-axis tuples, plus the derived result shape."""

    __slots__ = ("window", "strides", "base_dilations", "window_dilations", "padding", "shape", "out_shape")

    def __init__(self, shape: tuple[int, ...], window: Sequence[int], strides: Optional[Sequence[int]] = None,
                 base_dilations: Optional[Sequence[int]] = None, window_dilations: Optional[Sequence[int]] = None,
                 padding: Optional[Sequence[tuple[int, int]]] = None):
        rank = len(shape)
        self.shape = tuple(shape)
        self.window = tuple(window)
        self.strides = tuple(strides) if strides is not None else (1,) * rank
        self.base_dilations = tuple(base_dilations) if base_dilations is not None else (1,) * rank
        self.window_dilations = tuple(window_dilations) if window_dilations is not None else (1,) * rank
        self.padding = tuple(padding) if padding is not None else ((0, 0),) * rank
        out = []
        for d in range(rank):
            padded = self.padded_size(d)
            span = (self.window[d] - 1) * self.window_dilations[d] + 1
            out.append(0 if padded <= 0 or span > padded else (padded - span) // self.strides[d] + 1)
        self.out_shape = tuple(out)

    @classmethod
    def from_call(cls, call: OpCall, shape: tuple[int, ...], dilations: bool = True) -> "Geometry":
        rank = len(shape)
        window = _int_tuple(call, "window_dimensions", rank, None)
        strides = _int_tuple(call, "window_strides", rank, 1)
        base = _int_tuple(call, "base_dilations", rank, 1) if dilations else (1,) * rank
        dilation = _int_tuple(call, "window_dilations", rank, 1) if dilations else (1,) * rank
        padding = call.attr("padding")
        if padding is None:
            pairs = ((0, 0),) * rank
        else:
            array = np.asarray(getattr(padding, "array", padding), dtype=np.int64).reshape(-1, 2)
            if array.shape[0] != rank:
                raise call.error(f"padding has {array.shape[0]} rows for an operand of rank {rank}")
            pairs = tuple((int(lo), int(hi)) for lo, hi in array)
        for name, values in (("window_dimensions", window), ("window_strides", strides),
                             ("base_dilations", base), ("window_dilations", dilation)):
            if any(v <= 0 for v in values):
                raise call.error(f"{name} must be positive, got {list(values)}")
        return cls(shape, window, strides, base, dilation, pairs)

    def dilated_size(self, d: int) -> int:
        n = self.shape[d]
        return 0 if n == 0 else (n - 1) * self.base_dilations[d] + 1

    def padded_size(self, d: int) -> int:
        lo, hi = self.padding[d]
        return lo + self.dilated_size(d) + hi

    def offsets(self):
        return itertools.product(*(range(w) for w in self.window))

    def position_count(self) -> int:
        return int(np.prod(self.window, dtype=np.int64))

    def window_view(self, padded: np.ndarray, offset: Sequence[int]) -> np.ndarray:
        """Element `offset` of every window of the padded operand, shaped like the result."""
        index = []
        for d, o in enumerate(offset):
            start = o * self.window_dilations[d]
            count = self.out_shape[d]
            stop = start + (count - 1) * self.strides[d] + 1 if count else start
            index.append(slice(start, stop, self.strides[d]))
        return padded[tuple(index)]

    def scan(self) -> Optional[tuple[int, bool, bool]]:
        """(axis, forward, exclusive) when XLA's ReduceWindowRewriter tiles this window as a scan.

        Its conditions: exactly one non-trivial window dimension, longer than SCAN_BASE, with
        stride 1, no dilations, a window as long as the axis and padding (n-1 or n, 0) for a
        forward scan or (0, n-1 or n) for a reverse one (n: an exclusive scan).
        """
        found = None
        for d in range(len(self.shape)):
            trivial = (self.window[d] == 1 and self.strides[d] == 1 and self.padding[d] == (0, 0)
                       and self.base_dilations[d] == 1 and self.window_dilations[d] == 1)
            if trivial:
                continue
            if found is not None:
                return None
            found = d
        if found is None:
            return None
        d, n = found, self.shape[found]
        if n <= SCAN_BASE or self.strides[d] != 1 or self.window[d] != n:
            return None
        if self.base_dilations[d] != 1 or self.window_dilations[d] != 1:
            return None
        lo, hi = self.padding[d]
        if hi == 0 and lo in (n - 1, n):
            return d, True, lo == n
        if lo == 0 and hi in (n - 1, n):
            return d, False, hi == n
        return None


def _int_tuple(call: OpCall, name: str, rank: int, default: Optional[int]) -> tuple[int, ...]:
    value = call.attr(name)
    if value is None:
        if default is None:
            raise call.error(f"missing attribute {name}")
        return (default,) * rank
    values = tuple(int(v) for v in np.asarray(getattr(value, "array", value)).reshape(-1))
    if len(values) != rank:
        raise call.error(f"{name} has {len(values)} entries for an operand of rank {rank}")
    return values


def pad_with(array: np.ndarray, value: np.ndarray, geometry: Geometry) -> np.ndarray:
    """`array` dilated by base_dilations and padded (negative padding crops) with `value`."""
    rank = array.ndim
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in geometry.padding]
    full_shape = tuple(grow[d][0] + geometry.dilated_size(d) + grow[d][1] for d in range(rank))
    if all(g == (0, 0) for g in grow) and all(b == 1 for b in geometry.base_dilations) and \
            all(lo >= 0 and hi >= 0 for lo, hi in geometry.padding):
        return array
    out = np.full(full_shape, value, dtype=array.dtype)
    place = tuple(slice(grow[d][0], grow[d][0] + geometry.dilated_size(d), geometry.base_dilations[d])
                  for d in range(rank))
    out[place] = array
    crop = tuple(slice(-min(lo, 0), full_shape[d] - (-min(hi, 0))) for d, (lo, hi) in enumerate(geometry.padding))
    return out[crop]


@op("stablehlo.reduce_window")
def reduce_window(call: OpCall, *operands: np.ndarray) -> Any:
    count = len(operands) // 2
    inputs, inits = list(operands[:count]), [np.asarray(i) for i in operands[count:]]
    shape = inputs[0].shape
    for x in inputs[1:]:
        if x.shape != shape:
            raise call.error(f"inputs have different shapes: {shape} vs {x.shape}")
    geometry = call.cached(("geometry", shape), lambda: Geometry.from_call(call, shape))
    kind = call.body_kind(0)
    results = reduce_windows(call, kind, inputs, inits, geometry)
    return call.results([np.array(r) for r in results])


def reduce_windows(call: OpCall, kind: Optional[str], inputs: list, inits: list, geometry: Geometry) -> list:
    """Every window of `inputs` reduced from `inits` (see the module docstring for the order)."""
    out_shape = geometry.out_shape
    if int(np.prod(out_shape, dtype=np.int64)) == 0:
        return [np.full(out_shape, i, dtype=i.dtype) for i in inits]
    scan = geometry.scan()
    if scan is not None and _init_is_idempotent(call, kind, inits):
        return _tiled_scan(call, kind, inputs, inits, *scan)
    padded = [pad_with(x, i, geometry) for x, i in zip(inputs, inits)]
    if kind is not None:
        return [_window_fold(kind, p, i, geometry) for p, i in zip(padded, inits)]
    if geometry.position_count() <= SEQUENTIAL_BODY_LIMIT:
        return _window_fold_body(call, padded, inits, geometry)
    return _window_tree(call, padded, inits, geometry)


def _window_fold(kind: str, padded: np.ndarray, init: np.ndarray, geometry: Geometry) -> np.ndarray:
    # One combine per window position keeps XLA's order and its per-step rounding of narrow floats.
    acc = np.full(geometry.out_shape, init, dtype=padded.dtype)
    for offset in geometry.offsets():
        acc = combine(None, kind, acc, geometry.window_view(padded, offset))
    return acc


def _window_fold_body(call: OpCall, padded: list, inits: list, geometry: Geometry) -> list:
    shape = geometry.out_shape
    dtypes = [i.dtype for i in inits]
    acc = [np.broadcast_to(i, shape) for i in inits]
    for offset in geometry.offsets():
        acc = run_body(call, 0, [*acc, *(geometry.window_view(p, offset) for p in padded)], shape, dtypes)
    return acc


def _window_tree(call: OpCall, padded: list, inits: list, geometry: Geometry) -> list:
    shape = geometry.out_shape
    dtypes = [i.dtype for i in inits]
    positions = [np.stack([geometry.window_view(p, o) for o in geometry.offsets()], axis=-1) for p in padded]
    reduced = tree_reduce_last(call, 0, positions)
    return run_body(call, 0, [*inits, *reduced], shape, dtypes)


def _init_is_idempotent(call: OpCall, kind: Optional[str], inits: list) -> bool:
    """body(init, init) == init bit for bit, so extra init values in a tiled scan change nothing."""
    if kind is not None:
        outs = [combine(None, kind, i, i) for i in inits]
    else:
        outs = run_body(call, 0, [*inits, *inits], (), [i.dtype for i in inits])
    return all(np.asarray(o).tobytes() == i.tobytes() for o, i in zip(outs, inits))


def _tiled_scan(call: OpCall, kind: Optional[str], inputs: list, inits: list, axis: int, forward: bool,
                exclusive: bool) -> list:
    """XLA's tree rewrite of a long scan along `axis` (see the module docstring)."""
    moved = [np.moveaxis(x, axis, -1) for x in inputs]
    batch = moved[0].shape[:-1]
    n = moved[0].shape[-1]
    tiles_count = -(-n // SCAN_BASE)
    length = tiles_count * SCAN_BASE
    tiled = [np.concatenate([x, np.full(batch + (length - n,), i, dtype=x.dtype)], axis=-1)
             .reshape(batch + (tiles_count, SCAN_BASE)) for x, i in zip(moved, inits)]
    unit = (1,) * (len(batch) + 1)
    flat = ((0, 0),) * (len(batch) + 1)
    row_padding = (SCAN_BASE - 1, 0) if forward else (0, SCAN_BASE - 1)
    rows = reduce_windows(call, kind, tiled, inits,
                          Geometry(tiled[0].shape, unit + (SCAN_BASE,), padding=flat + (row_padding,)))
    totals = [r[..., -1] if forward else r[..., 0] for r in rows]
    total_padding = (tiles_count, 0) if forward else (0, tiles_count)
    total_geometry = Geometry(totals[0].shape, unit[:-1] + (tiles_count,), padding=flat[:-1] + (total_padding,))
    carried = reduce_windows(call, kind, totals, inits, total_geometry)
    carry = [np.broadcast_to((c[..., :tiles_count] if forward else c[..., 1:])[..., None], rows[0].shape)
             for c in carried]
    if kind is not None:
        combined = [combine(None, kind, r, c) for r, c in zip(rows, carry)]
    else:
        combined = run_body(call, 0, [*rows, *carry], rows[0].shape, [i.dtype for i in inits])
    scans = [c.reshape(batch + (length,))[..., :n] for c in combined]
    if exclusive:
        edge = [np.full(batch + (1,), i, dtype=i.dtype) for i in inits]
        scans = [np.concatenate([e, s] if forward else [s, e], axis=-1) for e, s in zip(edge, scans)]
    return [np.moveaxis(s, -1, axis) for s in scans]


@op("stablehlo.select_and_scatter")
def select_and_scatter(call: OpCall, operand: np.ndarray, source: np.ndarray, init: np.ndarray) -> np.ndarray:
    shape = operand.shape
    geometry = call.cached(("geometry", shape), lambda: Geometry.from_call(call, shape, dilations=False))
    if source.shape != geometry.out_shape:
        raise call.error(f"source has shape {source.shape}, but the windows give {geometry.out_shape}")
    init = np.asarray(init)
    result = np.full(operand.size, init, dtype=operand.dtype)
    if source.size == 0 or operand.size == 0:
        return result.reshape(shape)
    selected = _select(call, operand, geometry)
    chosen = selected >= 0
    _scatter_rounds(call, result, selected[chosen], source.reshape(-1)[chosen])
    return result.reshape(shape)


def _select(call: OpCall, operand: np.ndarray, geometry: Geometry) -> np.ndarray:
    """Flat operand index each window selects (-1 for a window lying wholly in the padding).

    As XLA: the first in-bounds position starts the selection and each later one replaces it
    unless `select(current, candidate)` holds. Padding positions never take part.
    """
    out_shape = geometry.out_shape
    rank = operand.ndim
    grids = np.indices(out_shape, sparse=True) if rank else ()
    flat_operand = operand.reshape(-1)
    count = int(np.prod(out_shape, dtype=np.int64))
    current = np.zeros(count, dtype=operand.dtype)
    index = np.full(count, -1, dtype=np.int64)
    for offset in geometry.offsets():
        valid = np.ones(out_shape, dtype=bool)
        coords = []
        for d in range(rank):
            c = grids[d] * geometry.strides[d] + offset[d] - geometry.padding[d][0]
            valid = valid & (c >= 0) & (c < geometry.shape[d])
            coords.append(np.clip(c, 0, geometry.shape[d] - 1))
        valid = valid.reshape(-1)
        if not valid.any():
            continue
        flat = np.ravel_multi_index([np.broadcast_to(c, out_shape) for c in coords], geometry.shape).reshape(-1) \
            if rank else np.zeros(count, dtype=np.int64)
        candidate = flat_operand[flat]
        fresh = valid & (index < 0)
        contest = valid & (index >= 0)
        take = fresh
        if contest.any():
            (keep,) = run_body(call, 0, [current, candidate], (count,), [np.dtype(np.bool_)])
            take = fresh | (contest & ~keep)
        current = np.where(take, candidate, current)
        index = np.where(take, flat, index)
    return index


def _scatter_rounds(call: OpCall, result: np.ndarray, targets: np.ndarray, values: np.ndarray) -> None:
    """result[t] = scatter(result[t], v) for each (t, v) in source order, in rounds of distinct targets.

    Round r applies the r-th value sent to each target, so every target sees its values in
    row-major source order (XLA's order) while each round is one vectorised body application.
    """
    if targets.size == 0:
        return
    order = np.argsort(targets, kind="stable")
    sorted_targets = targets[order]
    positions = np.arange(targets.size)
    starts = np.concatenate([[True], sorted_targets[1:] != sorted_targets[:-1]])
    first = np.maximum.accumulate(np.where(starts, positions, 0))
    rank = np.empty(targets.size, dtype=np.int64)
    rank[order] = positions - first
    kind = call.body_kind(1)
    for r in range(int(rank.max()) + 1):
        pick = rank == r
        t = targets[pick]
        v = values[pick]
        if kind is not None:
            result[t] = combine(call, kind, result[t], v)
        else:
            (result[t],) = run_body(call, 1, [result[t], v], t.shape, [result.dtype])
