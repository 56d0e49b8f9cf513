"""Data movement: broadcast, reshape, transpose, slices, concatenate, pad, reverse, iota.

Every op here only moves or replicates elements, so evaluators work on the stored values as they
are (storage integers for quantized tensors) and never do arithmetic on them. Results may be numpy
views of their operands (reshape, transpose, slice): evaluators never write into operands, so
sharing memory is safe and saves a copy per op. The `dynamic_*` legacy ops take their shapes from
runtime tensors; their result types may have `?` dimensions, so those shapes are checked at run time.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..ir.dtypes import element_dtype
from ..ir.phrases import Phrase
from ..ir.types import TensorType
from .provenance import ProvenanceQuery, Source, explains
from .registry import OpCall, op


def _ints(values: np.ndarray) -> tuple[int, ...]:
    """A 1-d shape or index tensor as plain Python ints."""
    return tuple(int(v) for v in np.asarray(values).reshape(-1))


def _dtype(call: OpCall, index: int = 0) -> np.dtype:
    return element_dtype(call.result_types[index])


def _check_shape(call: OpCall, shape: Sequence[int], what: str) -> tuple[int, ...]:
    """A runtime shape, validated against the result type's static dimensions."""
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise call.error(f"{what} {list(shape)} has a negative dimension")
    t = call.result_type
    if isinstance(t, TensorType) and t.shape is not None:
        if len(t.shape) != len(shape) or any(s is not None and s >= 0 and s != d for s, d in zip(t.shape, shape)):
            raise call.error(f"{what} {list(shape)} does not match the result type {t}")
    return shape


# -- broadcasts --------------------------------------------------------------------------------


def _broadcast_plan(call: OpCall, operand_shape: tuple[int, ...], dims: Sequence[int], shape: tuple[int, ...]):
    """(axis order or None, expanded shape) taking an operand to `shape`, after checking dims."""
    dims = tuple(int(d) for d in dims)
    if len(dims) != len(operand_shape):
        raise call.error(f"broadcast_dimensions {list(dims)} do not match the operand rank {len(operand_shape)}")
    for axis, d in enumerate(dims):
        if not 0 <= d < len(shape) or operand_shape[axis] not in (1, shape[d]):
            raise call.error(f"operand dimension {axis} of size {operand_shape[axis]} cannot broadcast to "
                             f"result dimension {d} of {list(shape)}")
    # broadcast_dimensions need not be increasing: order the operand's axes as they appear in the
    # result first, then insert the new unit axes and let numpy replicate.
    order = tuple(sorted(range(len(operand_shape)), key=lambda axis: dims[axis]))
    expanded = tuple(operand_shape[dims.index(d)] if d in dims else 1 for d in range(len(shape)))
    return (None if order == tuple(range(len(order))) else order), expanded


def _broadcast_in_dim(call: OpCall, operand: np.ndarray, dims: Sequence[int], shape: tuple[int, ...]) -> np.ndarray:
    order, expanded = _broadcast_plan(call, operand.shape, dims, shape)
    arranged = operand if order is None else np.transpose(operand, order)
    # A read-only broadcast view: values are immutable, so replicating costs no memory or time.
    return np.broadcast_to(arranged.reshape(expanded), shape)


@op("stablehlo.broadcast_in_dim")
def broadcast_in_dim(call: OpCall, operand: np.ndarray) -> np.ndarray:
    plan = call.memo.get("plan")
    if plan is None or plan[0] != operand.shape or plan[1] != operand.dtype:
        shape = call.result_shape
        dims = call.attr("broadcast_dimensions")
        order, expanded = _broadcast_plan(call, operand.shape, dims, shape)
        plan = call.memo["plan"] = (operand.shape, operand.dtype, shape, order, expanded,
                                    _view_strides(operand, dims, shape))
    _, _, shape, order, expanded, strides = plan
    if strides is not None and type(operand) is np.ndarray and operand.flags.c_contiguous:
        # The same read-only view np.broadcast_to makes, built straight from the strides: a
        # contiguous operand's element i along dims[i] steps by its stride, new axes by 0.
        view = np.ndarray(shape, operand.dtype, operand, 0, strides)
        view.flags.writeable = False
        return view
    arranged = operand if order is None else np.transpose(operand, order)
    return np.broadcast_to(arranged.reshape(expanded), shape)


def _view_strides(operand: np.ndarray, dims: Sequence[int], shape: tuple[int, ...]):
    """The result strides of a broadcast view of a C-contiguous `operand`, or None when the
    direct construction does not apply (empty arrays, dtypes numpy cannot share as a buffer)."""
    if not isinstance(operand, np.ndarray) or not operand.dtype.isbuiltin or operand.size == 0 or 0 in shape:
        return None
    contiguous = np.empty(operand.shape, operand.dtype).strides  # the strides a C-contiguous operand has
    strides = [0] * len(shape)
    for axis, d in enumerate(dims):
        if operand.shape[axis] == shape[int(d)] and operand.shape[axis] != 1:
            strides[int(d)] = contiguous[axis]
    return tuple(strides)


@op("stablehlo.dynamic_broadcast_in_dim")
def dynamic_broadcast_in_dim(call: OpCall, operand: np.ndarray, output_dimensions: np.ndarray) -> np.ndarray:
    shape = _check_shape(call, _ints(output_dimensions), "output_dimensions")
    return _broadcast_in_dim(call, operand, call.attr("broadcast_dimensions"), shape)


@op("stablehlo.broadcast")
def broadcast(call: OpCall, operand: np.ndarray) -> np.ndarray:
    # The legacy form prepends broadcast_sizes to the operand's shape.
    sizes = tuple(int(s) for s in call.attr("broadcast_sizes"))
    return np.broadcast_to(operand, sizes + operand.shape)


# -- reshapes and permutations -----------------------------------------------------------------


@op("stablehlo.reshape")
def reshape(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return operand.reshape(call.result_shape)


@op("tensor.cast")
def tensor_cast(call: OpCall, source: np.ndarray) -> np.ndarray:
    # Only what the type says of the shape changes; the elements are the source's.
    return source


@op("stablehlo.dynamic_reshape")
def dynamic_reshape(call: OpCall, operand: np.ndarray, output_shape: np.ndarray) -> np.ndarray:
    shape = _check_shape(call, _ints(output_shape), "output_shape")
    if int(np.prod(shape, dtype=np.int64)) != operand.size:
        raise call.error(f"cannot reshape {operand.size} elements of shape {list(operand.shape)} to {list(shape)}")
    return operand.reshape(shape)


@op("stablehlo.transpose")
def transpose(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return np.transpose(operand, tuple(int(p) for p in call.attr("permutation")))


COPIED = Phrase("copied element")
RESULT_IS_OPERAND = Phrase("result{result} = operand{operand}")
DIMENSION_READS = Phrase("result dimension {dim} reads operand dimension {source} (permutation[{dim}] = {source}), index {value}")


@explains("stablehlo.transpose")
def transpose_provenance(q: ProvenanceQuery):
    """result[i] = operand[j] with j[permutation[d]] = i[d]: each result dimension reads one operand dimension."""
    permutation = [int(p) for p in q.attr("permutation")]
    source = [0] * len(permutation)
    for d, p in enumerate(permutation):
        source[p] = q.index[d]
    steps = [(DIMENSION_READS, {"dim": d, "source": p, "value": q.index[d]}) for d, p in enumerate(permutation)]
    steps.append((RESULT_IS_OPERAND, {"result": list(q.index), "operand": source}))
    return q.answer([Source(0, tuple(source), COPIED)], steps)


@op("stablehlo.reverse")
def reverse(call: OpCall, operand: np.ndarray) -> np.ndarray:
    dims = tuple(int(d) for d in call.attr("dimensions"))
    return np.flip(operand, dims) if dims else operand


# -- slices ------------------------------------------------------------------------------------


@op("stablehlo.slice")
def slice_(call: OpCall, operand: np.ndarray) -> np.ndarray:
    index = call.cached("index", lambda: tuple(
        slice(int(s), int(l), int(st))
        for s, l, st in zip(call.attr("start_indices"), call.attr("limit_indices"), call.attr("strides"))
    ))
    return operand[index]


@op("stablehlo.real_dynamic_slice")
def real_dynamic_slice(call: OpCall, operand: np.ndarray, start_indices: np.ndarray,
                       limit_indices: np.ndarray, strides: np.ndarray) -> np.ndarray:
    starts, limits, steps = _ints(start_indices), _ints(limit_indices), _ints(strides)
    if not len(starts) == len(limits) == len(steps) == operand.ndim:
        raise call.error(f"start, limit and stride tensors must each have {operand.ndim} elements")
    for d, (s, l, st) in enumerate(zip(starts, limits, steps)):
        if st <= 0 or not 0 <= s <= l <= operand.shape[d]:
            raise call.error(f"slice [{s}:{l}:{st}] of dimension {d} is out of range for operand shape "
                             f"{list(operand.shape)}")
    result = operand[tuple(slice(s, l, st) for s, l, st in zip(starts, limits, steps))]
    _check_shape(call, result.shape, "slice shape")
    return result


def _clamped_starts(starts: Sequence[np.ndarray], shape: Sequence[int], sizes: Sequence[int]) -> list[int]:
    # The spec clamps every start so the whole window stays inside the operand.
    return [min(max(int(s), 0), dim - size) for s, dim, size in zip(starts, shape, sizes)]


@op("stablehlo.dynamic_slice")
def dynamic_slice(call: OpCall, operand: np.ndarray, *start_indices: np.ndarray) -> np.ndarray:
    sizes = tuple(int(s) for s in call.attr("slice_sizes"))
    starts = _clamped_starts(start_indices, operand.shape, sizes)
    return operand[tuple(slice(s, s + n) for s, n in zip(starts, sizes))]


@op("stablehlo.dynamic_update_slice")
def dynamic_update_slice(call: OpCall, operand: np.ndarray, update: np.ndarray, *start_indices: np.ndarray) -> np.ndarray:
    starts = _clamped_starts(start_indices, operand.shape, update.shape)
    result = np.array(operand, dtype=_dtype(call), copy=True)
    result[tuple(slice(s, s + n) for s, n in zip(starts, update.shape))] = update
    return result


@op("stablehlo.concatenate")
def concatenate(call: OpCall, *inputs: np.ndarray) -> np.ndarray:
    return np.concatenate(inputs, axis=int(call.attr("dimension"))).astype(_dtype(call), copy=False)


# -- padding -----------------------------------------------------------------------------------


def _pad(call: OpCall, operand: np.ndarray, padding_value: np.ndarray,
         low: Sequence[int], high: Sequence[int], interior: Sequence[int]) -> np.ndarray:
    if not len(low) == len(high) == len(interior) == operand.ndim:
        raise call.error(f"padding must have {operand.ndim} entries per kind, got "
                         f"low={list(low)} high={list(high)} interior={list(interior)}")
    if any(i < 0 for i in interior):
        raise call.error(f"interior padding {list(interior)} must be non-negative")
    # Lay the operand out on a grid with only the non-negative edge padding, then crop the
    # negative edges off: negative padding removes elements (padding or operand) at that end.
    spread = [d + (d - 1) * i if d > 0 else 0 for d, i in zip(operand.shape, interior)]
    grown = [max(lo, 0) + s + max(hi, 0) for lo, s, hi in zip(low, spread, high)]
    final = [lo + s + hi for lo, s, hi in zip(low, spread, high)]
    if any(n < 0 for n in final):
        raise call.error(f"padding low={list(low)} high={list(high)} leaves a negative dimension for "
                         f"operand shape {list(operand.shape)}")
    dtype = _dtype(call)
    result = np.full(grown, np.asarray(padding_value).astype(dtype), dtype=dtype)
    result[tuple(slice(max(lo, 0), max(lo, 0) + s, i + 1) for lo, s, i in zip(low, spread, interior))] = operand
    return result[tuple(slice(max(-lo, 0), g - max(-hi, 0)) for lo, g, hi in zip(low, grown, high))]


@op("stablehlo.pad")
def pad(call: OpCall, operand: np.ndarray, padding_value: np.ndarray) -> np.ndarray:
    return _pad(call, operand, padding_value,
                [int(v) for v in call.attr("edge_padding_low")],
                [int(v) for v in call.attr("edge_padding_high")],
                [int(v) for v in call.attr("interior_padding")])


@op("stablehlo.dynamic_pad")
def dynamic_pad(call: OpCall, operand: np.ndarray, padding_value: np.ndarray, edge_padding_low: np.ndarray,
                edge_padding_high: np.ndarray, interior_padding: np.ndarray) -> np.ndarray:
    result = _pad(call, operand, padding_value, _ints(edge_padding_low), _ints(edge_padding_high),
                  _ints(interior_padding))
    _check_shape(call, result.shape, "padded shape")
    return result


# -- generators and shape queries --------------------------------------------------------------


def _iota(call: OpCall, shape: tuple[int, ...], dimension: int) -> np.ndarray:
    if not 0 <= dimension < len(shape):
        raise call.error(f"iota_dimension {dimension} is out of range for shape {list(shape)}")
    dtype = _dtype(call)
    # Counting in int64 and converting once gives what XLA gives for narrow floats: each index
    # rounded to the nearest representable value.
    line = np.arange(shape[dimension], dtype=np.int64)
    if dtype.kind == "b":
        line = line != 0
    line = line.astype(dtype).reshape([n if d == dimension else 1 for d, n in enumerate(shape)])
    return np.ascontiguousarray(np.broadcast_to(line, shape))


@op("stablehlo.iota")
def iota(call: OpCall) -> np.ndarray:
    return call.cached("value", lambda: _readonly(_iota(call, call.result_shape, int(call.attr("iota_dimension")))))


def _readonly(array: np.ndarray) -> np.ndarray:
    # A cached iota is shared by every execution of the op, so nobody may write into it.
    array.flags.writeable = False
    return array


@op("stablehlo.dynamic_iota")
def dynamic_iota(call: OpCall, output_shape: np.ndarray) -> np.ndarray:
    shape = _check_shape(call, _ints(output_shape), "output_shape")
    return _iota(call, shape, int(call.attr("iota_dimension")))


@op("stablehlo.get_dimension_size")
def get_dimension_size(call: OpCall, operand: np.ndarray) -> np.ndarray:
    dimension = int(call.attr("dimension"))
    if not 0 <= dimension < operand.ndim:
        raise call.error(f"dimension {dimension} is out of range for an operand of rank {operand.ndim}")
    return np.asarray(operand.shape[dimension], dtype=_dtype(call))
