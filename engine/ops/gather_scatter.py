"""Gather and scatter: indexed reads and read-modify-writes, plus the legacy torch_index_select.

Both are computed without a Python loop over elements. Gather builds one index array per operand
dimension (start + batch position + offset inside the slice, broadcast over the result) and reads
everything with a single fancy index. Scatter computes the flat target of every update element,
drops the windows that are not fully in bounds, and then combines: unbuffered ufuncs
(`np.add.at`) for the common reducer bodies, a last-one-wins write for bodies that return the
update, and otherwise rounds of whole-array region calls in which every target appears at most once.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..ir.attributes import GatherDimensionNumbers, ScatterDimensionNumbers
from ..ir.dtypes import element_dtype, is_narrow_int, narrow, widen
from .registry import OpCall, op

_INT64_MAX = np.iinfo(np.int64).max


def _as_int64(indices: np.ndarray) -> np.ndarray:
    """Index values as int64; huge unsigned values saturate instead of wrapping negative."""
    indices = np.asarray(indices)
    if indices.dtype.kind == "u" and indices.dtype.itemsize == 8:
        indices = np.minimum(indices, np.uint64(_INT64_MAX))
    return indices.astype(np.int64)


def _index_vectors(indices: np.ndarray, index_vector_dim: int) -> np.ndarray:
    """The index tensor with its index vectors along the last axis (a trailing 1 when implicit)."""
    indices = _as_int64(indices)
    if index_vector_dim == indices.ndim:
        return indices[..., None]
    return np.moveaxis(indices, index_vector_dim, -1)


def _batch_position(indices_dim: int, index_vector_dim: int) -> int:
    """Where a dimension of the index tensor lands once the index vector dimension is removed."""
    return indices_dim if indices_dim < index_vector_dim else indices_dim - 1


def _along(values: np.ndarray, axis: int, rank: int) -> np.ndarray:
    """A 1-d array laid along `axis` of a `rank`-d broadcastable shape."""
    shape = [1] * rank
    shape[axis] = values.shape[0]
    return values.reshape(shape)


# -- gather ------------------------------------------------------------------------------------


def _gather(call: OpCall, operand: np.ndarray, start_indices: np.ndarray, dn: GatherDimensionNumbers,
            slice_sizes: Sequence[int]) -> np.ndarray:
    rank = operand.ndim
    slice_sizes = [int(s) for s in slice_sizes]
    if len(slice_sizes) != rank:
        raise call.error(f"slice_sizes {slice_sizes} must have one entry per operand dimension ({rank})")
    for d, size in enumerate(slice_sizes):
        if not 0 <= size <= operand.shape[d]:
            raise call.error(f"slice size {size} of dimension {d} does not fit operand shape {list(operand.shape)}")
    vectors = _index_vectors(start_indices, dn.index_vector_dim)
    batch_shape = vectors.shape[:-1]
    offset_dims = tuple(dn.offset_dims)
    out_rank = len(batch_shape) + len(offset_dims)
    batch_axes = [a for a in range(out_rank) if a not in offset_dims]
    window_dims = [d for d in range(rank) if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    out_shape = [0] * out_rank
    for axis, n in zip(batch_axes, batch_shape):
        out_shape[axis] = n
    for axis, d in zip(offset_dims, window_dims):
        out_shape[axis] = slice_sizes[d]

    index = []
    for d in range(rank):
        term: Any = np.zeros((1,) * out_rank, dtype=np.int64)
        if d in dn.start_index_map:
            # Starts are clamped so the whole slice stays inside the operand.
            start = np.clip(vectors[..., dn.start_index_map.index(d)], 0, operand.shape[d] - slice_sizes[d])
            term = term + np.expand_dims(start, offset_dims)
        if d in dn.operand_batching_dims:
            indices_dim = dn.start_indices_batching_dims[dn.operand_batching_dims.index(d)]
            pos = _batch_position(indices_dim, dn.index_vector_dim)
            term = term + _along(np.arange(batch_shape[pos], dtype=np.int64), batch_axes[pos], out_rank)
        if d in window_dims:
            axis = offset_dims[window_dims.index(d)]
            term = term + _along(np.arange(slice_sizes[d], dtype=np.int64), axis, out_rank)
        index.append(term)
    result = np.asarray(operand[tuple(index)])
    if result.shape != tuple(out_shape):
        # Dimensions no index depends on (e.g. an empty index vector) still repeat the slice.
        result = np.ascontiguousarray(np.broadcast_to(result, out_shape))
    return result


@op("stablehlo.gather")
def gather(call: OpCall, operand: np.ndarray, start_indices: np.ndarray) -> np.ndarray:
    return _gather(call, operand, start_indices, call.attr("dimension_numbers"), call.attr("slice_sizes"))


@op("stablehlo.dynamic_gather")
def dynamic_gather(call: OpCall, operand: np.ndarray, start_indices: np.ndarray, slice_sizes: np.ndarray) -> np.ndarray:
    sizes = [int(s) for s in np.asarray(slice_sizes).reshape(-1)]
    return _gather(call, operand, start_indices, call.attr("dimension_numbers"), sizes)


@op("stablehlo.torch_index_select")
def torch_index_select(call: OpCall, operand: np.ndarray, index: np.ndarray) -> np.ndarray:
    # result[b..., pre..., i..., post...] = operand[b..., pre..., index[b..., i...], post...]: the
    # first batch_dims dimensions are shared by operand and index. Out-of-range indices clamp, as
    # in the gather this op lowers to.
    dim = int(call.attr("dim"))
    batch_dims = int(call.attr("batch_dims"))
    rank = operand.ndim
    if dim < 0:
        dim += rank
    if batch_dims < 0:
        batch_dims += index.ndim
    if not 0 <= batch_dims <= dim < rank or batch_dims > index.ndim:
        raise call.error(f"dim {dim} and batch_dims {batch_dims} do not fit operand rank {rank} and index rank {index.ndim}")
    if operand.shape[:batch_dims] != index.shape[:batch_dims]:
        raise call.error(f"batch dimensions differ: operand {list(operand.shape)} vs index {list(index.shape)}")
    own = index.ndim - batch_dims
    out_rank = rank - 1 + own
    positions = np.clip(_as_int64(index), 0, max(operand.shape[dim] - 1, 0))
    positions = positions.reshape(index.shape[:batch_dims] + (1,) * (dim - batch_dims) + index.shape[batch_dims:]
                                  + (1,) * (rank - dim - 1))
    terms = []
    for d in range(rank):
        if d == dim:
            terms.append(positions)
        else:
            axis = d if d < dim else d - 1 + own
            terms.append(_along(np.arange(operand.shape[d], dtype=np.int64), axis, out_rank))
    return np.asarray(operand[tuple(terms)])


# -- scatter -----------------------------------------------------------------------------------

# Reducer bodies applied with unbuffered ufuncs, in update order; i1 has its own logical forms
# (add on i1 is `or`, multiply is `and`, as for XLA's PRED).
_UFUNCS = {
    "add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
}
_BOOL_UFUNCS = {
    "add": np.logical_or, "multiply": np.logical_and, "maximum": np.logical_or, "minimum": np.logical_and,
    "and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor,
}


def _scatter_targets(call: OpCall, shape: tuple[int, ...], indices: np.ndarray, update_shape: tuple[int, ...],
                     dn: ScatterDimensionNumbers) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Flat result index of every in-bounds update element, in update order.

    Returns (targets, keep, order): `keep` masks the update elements (laid out scatter dimensions
    first, as `order` permutes them) whose window is in bounds, and `targets` their flat indices.
    """
    rank = len(shape)
    vectors = _index_vectors(indices, dn.index_vector_dim)
    batch_shape = vectors.shape[:-1]
    window_axes = list(dn.update_window_dims)
    scatter_axes = [a for a in range(len(update_shape)) if a not in window_axes]
    order = scatter_axes + window_axes
    window_shape = tuple(update_shape[a] for a in window_axes)
    if tuple(update_shape[a] for a in scatter_axes) != batch_shape:
        raise call.error(f"updates shape {list(update_shape)} does not match the scatter indices' "
                         f"batch shape {list(batch_shape)}")
    nb, nw = len(batch_shape), len(window_shape)
    window_dims = [d for d in range(rank) if d not in dn.inserted_window_dims and d not in dn.input_batching_dims]
    full_window = [1] * rank
    for d, size in zip(window_dims, window_shape):
        full_window[d] = size
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(rank)]

    # XLA drops an update window unless all of it lands inside the result (the spec checks each
    # element on its own; the two agree whenever windows are fully in or fully out of bounds).
    in_bounds = np.ones(batch_shape, dtype=bool)
    flat: Any = np.zeros((1,) * (nb + nw), dtype=np.int64)
    for d in range(rank):
        if d in dn.scatter_dims_to_operand_dims:
            start = vectors[..., dn.scatter_dims_to_operand_dims.index(d)]
            ok = (start >= 0) & (start <= shape[d] - full_window[d])
            in_bounds &= ok
            flat = flat + np.where(ok, start, 0).reshape(batch_shape + (1,) * nw) * strides[d]
        if d in dn.input_batching_dims:
            indices_dim = dn.scatter_indices_batching_dims[dn.input_batching_dims.index(d)]
            pos = _batch_position(indices_dim, dn.index_vector_dim)
            flat = flat + _along(np.arange(batch_shape[pos], dtype=np.int64), pos, nb + nw) * strides[d]
        if d in window_dims:
            axis = nb + window_dims.index(d)
            flat = flat + _along(np.arange(full_window[d], dtype=np.int64), axis, nb + nw) * strides[d]
    full_shape = batch_shape + window_shape
    keep = np.broadcast_to(in_bounds.reshape(batch_shape + (1,) * nw), full_shape)
    targets = np.broadcast_to(flat, full_shape)[keep]
    return targets, keep, order


def returns_updates(region) -> bool:
    """True when a scatter body returns its update arguments unchanged (`^bb(a.., b..): return b..`)."""
    block = region.blocks[0]
    args = block.arguments
    n = len(args) // 2
    ops = block.operations
    return len(ops) == 1 and list(ops[0].operands) == list(args[n:])


def _overwrites(call: OpCall) -> bool:
    return call.cached("overwrites", lambda: returns_updates(call.regions[0]))


def _ranks_among_duplicates(targets: np.ndarray) -> np.ndarray:
    """For each target, how many earlier entries share it (0 for its first occurrence)."""
    order = np.argsort(targets, kind="stable")
    ordered = targets[order]
    n = len(targets)
    first = np.ones(n, dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    positions = np.arange(n, dtype=np.int64)
    group_start = np.maximum.accumulate(np.where(first, positions, 0))
    ranks = np.empty(n, dtype=np.int64)
    ranks[order] = positions - group_start
    return ranks


def _combine_in_rounds(call: OpCall, results: list[np.ndarray], targets: np.ndarray, values: list[np.ndarray]) -> None:
    """Apply a general body in update order: round k applies every target's k-th update at once."""
    ranks = _ranks_among_duplicates(targets)
    by_round = np.argsort(ranks, kind="stable")
    bounds = np.cumsum(np.bincount(ranks))
    start = 0
    for stop in bounds:
        chosen = by_round[start:stop]
        start = stop
        where = targets[chosen]
        current = [r[where] for r in results]
        new = call.run_region(0, *current, *[v[chosen] for v in values])
        for r, value in zip(results, new):
            r[where] = np.broadcast_to(np.asarray(value).astype(r.dtype, copy=False), where.shape)


def _overwrite_last(results: list[np.ndarray], targets: np.ndarray, values: list[np.ndarray]) -> None:
    # numpy does not promise which duplicate wins a fancy assignment, so keep only the last one.
    reversed_targets = targets[::-1]
    unique, first_in_reversed = np.unique(reversed_targets, return_index=True)
    last = len(targets) - 1 - first_in_reversed
    for r, v in zip(results, values):
        r[unique] = v[last]


def _combine_with_ufunc(kind: str, results: list[np.ndarray], targets: np.ndarray, values: list[np.ndarray]) -> list[np.ndarray]:
    combined = []
    for r, v in zip(results, values):
        dtype = r.dtype
        if dtype.kind == "b":
            _BOOL_UFUNCS[kind].at(r, targets, v)
            combined.append(r)
        elif is_narrow_int(dtype):
            # Wrap-around commutes with these ops, so compute wide and wrap once at the end.
            wide = widen(r)
            _UFUNCS[kind].at(wide, targets, widen(v))
            combined.append(narrow(wide, dtype))
        else:
            # Narrow floats stay in their own type: XLA rounds after every update, and so does
            # ml_dtypes' (or numpy's f16) ufunc on each element it combines.
            _UFUNCS[kind].at(r, targets, v)
            combined.append(r)
    return combined


@op("stablehlo.scatter")
def scatter(call: OpCall, *operands: np.ndarray) -> Any:
    n = (len(operands) - 1) // 2
    inputs, indices, updates = operands[:n], operands[n], operands[n + 1:]
    dn: ScatterDimensionNumbers = call.attr("scatter_dimension_numbers")
    shape = inputs[0].shape
    dtypes = [element_dtype(t) for t in call.result_types]
    targets, keep, order = _scatter_targets(call, shape, indices, updates[0].shape, dn)
    results = [np.array(x, dtype=dt, copy=True).reshape(-1) for x, dt in zip(inputs, dtypes)]
    if targets.size:
        values = [np.transpose(u, order)[keep].astype(dt, copy=False) for u, dt in zip(updates, dtypes)]
        kind: Optional[str] = call.body_kind(0)
        if kind is not None and kind in _UFUNCS:
            results = _combine_with_ufunc(kind, results, targets, values)
        elif _overwrites(call):
            _overwrite_last(results, targets, values)
        else:
            _combine_in_rounds(call, results, targets, values)
    return call.results([r.reshape(shape) for r in results])
