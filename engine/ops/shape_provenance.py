"""Element provenance of the data-movement ops of shape.py (transpose's is beside its evaluator).

Each result element of these ops is one operand element moved by index arithmetic (or the padding
value, or — for iota — nothing at all), and the steps show that arithmetic with the op's numbers:
reshape's row-major position, slice's start + i·stride, pad's low edge and interior gaps,
concatenate's offsets, dynamic_slice's clamped starts. The ops whose starts or padding amounts
are operands (dynamic_slice, dynamic_update_slice, real_dynamic_slice, dynamic_pad) report those
operand elements too; operands that only fix the result's shape (dynamic_reshape's output_shape,
dynamic_broadcast_in_dim's output_dimensions, dynamic_iota's output_shape, real_dynamic_slice's
limit_indices) determine no element and are not reported.

Direct inverses (`@reaches`) are given where the arithmetic inverts in closed form.
"""
from __future__ import annotations

import itertools
from typing import Optional, Sequence

import numpy as np

from ..ir.phrases import Phrase
from .provenance import ProvenanceQuery, Reached, Source, explains, reaches
from .shape import COPIED, RESULT_IS_OPERAND, _clamped_starts

START_INDEX = Phrase("start index")
STRIDE = Phrase("stride")
UPDATE_ELEMENT = Phrase("update element")
PADDING_VALUE = Phrase("padding value")
PADDING_AMOUNT = Phrase("padding amount")

ROW_MAJOR_POSITION = Phrase("result{result} is at row-major position {formula} = {position} of the result shape {shape}")
POSITION_IN_OPERAND = Phrase("position {position} of the operand shape {shape} is operand{operand}")
MAPPED_DIMENSION = Phrase("operand dimension {dim} is result dimension {result_dim}: index {value}")
STRETCHED_DIMENSION = Phrase("operand dimension {dim} has size 1 and is stretched along result dimension {result_dim}: index 0")
NEW_DIMENSION = Phrase("result dimension {dim} is new: every index along it reads the same operand element")
REVERSED_DIMENSION = Phrase("dimension {dim} is reversed: {size} - 1 - {index} = {value}")
STRIDED_DIMENSION = Phrase("dimension {dim}: start {start} + {index}·{stride} = {value}")
SHIFTED_DIMENSION = Phrase("dimension {dim}: {index} - low {low} = {value}")
PADDED_DIMENSION = Phrase("dimension {dim}: {index} - low {low} = {offset}, divided by interior {interior} + 1 gives {value}")
EDGE_PADDING = Phrase("dimension {dim}: {index} - low {low} = {offset} is outside the operand's {size} elements: edge padding")
INTERIOR_PADDING = Phrase("dimension {dim}: {index} - low {low} = {offset} falls between operand elements "
                          "(interior padding {interior})")
IS_PADDING = Phrase("result{result} is the padding value")
CONCATENATED_INPUT = Phrase("along dimension {dim} the inputs start at {offsets}: index {index} is in input {input}, "
                            "{index} - {offset} = {value}")
RESULT_IS_INPUT = Phrase("result{result} = input {input}{element}")
CLAMPED_START = Phrase("start of dimension {dim}: clamp({start}, 0, {size}-{window}) → {clamped}")
START_PLUS_INDEX = Phrase("operand index = start {start} + result index {index} = {operand}")
INSIDE_UPDATE = Phrase("result{result} is inside the update window starting at {start}: update{update}")
OUTSIDE_UPDATE = Phrase("result{result} is outside the update window {start} .. {end}: it keeps operand{result}")
IOTA_VALUE = Phrase("iota counts along dimension {dim}: result{result} = index {value}")


# -- reshape -----------------------------------------------------------------------------------


def _row_major(index: Sequence[int], shape: Sequence[int]) -> tuple[int, str]:
    """(flat position, the arithmetic as text: 1·12 + 0·4 + 2)."""
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    position = sum(i * s for i, s in zip(index, strides))
    terms = [f"{i}·{s}" if s != 1 else f"{i}" for i, s in zip(index, strides)]
    return position, " + ".join(terms) or "0"


@explains("stablehlo.reshape", "stablehlo.dynamic_reshape")
def reshape_provenance(q: ProvenanceQuery):
    """Both shapes number their elements in row-major order; result[i] = operand[same position]."""
    shape, operand_shape = q.result_shape(q.result), q.operand_shape(0)
    position, formula = _row_major(q.index, shape)
    source = tuple(int(i) for i in np.unravel_index(position, operand_shape)) if operand_shape else ()
    steps = [(ROW_MAJOR_POSITION, {"result": q.index, "formula": formula, "position": position, "shape": shape}),
             (POSITION_IN_OPERAND, {"position": position, "shape": operand_shape, "operand": source})]
    return q.answer([Source(0, source, COPIED)], steps)


@reaches("stablehlo.reshape", "stablehlo.dynamic_reshape")
def reshape_reach(q: ProvenanceQuery, operand: int, index: tuple, device) -> list[Reached]:
    if operand != 0:
        return []
    position, _ = _row_major(index, q.operand_shape(0))
    shape = q.result_shape(0)
    return [Reached(0, tuple(int(i) for i in np.unravel_index(position, shape)) if shape else (), q.process)]


# -- broadcasts --------------------------------------------------------------------------------


def _broadcast_dims(q: ProvenanceQuery) -> tuple[int, ...]:
    if q.op.name == "stablehlo.broadcast":  # the legacy form puts broadcast_sizes in front
        sizes = len(q.attr("broadcast_sizes"))
        return tuple(range(sizes, sizes + len(q.operand_shape(0))))
    return tuple(int(d) for d in q.attr("broadcast_dimensions"))


@explains("stablehlo.broadcast_in_dim", "stablehlo.broadcast", "stablehlo.dynamic_broadcast_in_dim")
def broadcast_provenance(q: ProvenanceQuery):
    """Operand dimension k is result dimension dims[k] (size 1: index 0); other result dimensions replicate."""
    dims, shape = _broadcast_dims(q), q.operand_shape(0)
    source = tuple(0 if n == 1 else q.index[d] for n, d in zip(shape, dims))
    steps = [(STRETCHED_DIMENSION if n == 1 and q.result_shape(0)[d] != 1 else MAPPED_DIMENSION,
              {"dim": k, "result_dim": d, "value": source[k]}) for k, (n, d) in enumerate(zip(shape, dims))]
    steps += [(NEW_DIMENSION, {"dim": d}) for d in range(len(q.index)) if d not in dims]
    steps.append((RESULT_IS_OPERAND, {"result": q.index, "operand": source}))
    return q.answer([Source(0, source, COPIED)], steps)


@reaches("stablehlo.broadcast_in_dim", "stablehlo.broadcast", "stablehlo.dynamic_broadcast_in_dim")
def broadcast_reach(q: ProvenanceQuery, operand: int, index: tuple, device) -> list[Reached]:
    if operand != 0:
        return []
    dims, shape, result_shape = _broadcast_dims(q), q.operand_shape(0), q.result_shape(0)
    choices = [range(n) for n in result_shape]
    for k, d in enumerate(dims):
        if shape[k] != 1:
            choices[d] = [index[k]]
    return [Reached(0, at, q.process) for at in itertools.product(*choices)]


# -- reverse and slices ------------------------------------------------------------------------


@explains("stablehlo.reverse")
def reverse_provenance(q: ProvenanceQuery):
    dims, shape = {int(d) for d in q.attr("dimensions")}, q.operand_shape(0)
    source = tuple(n - 1 - i if d in dims else i for d, (i, n) in enumerate(zip(q.index, shape)))
    steps = [(REVERSED_DIMENSION, {"dim": d, "size": shape[d], "index": q.index[d], "value": source[d]})
             for d in sorted(dims)]
    steps.append((RESULT_IS_OPERAND, {"result": q.index, "operand": source}))
    return q.answer([Source(0, source, COPIED)], steps)


@reaches("stablehlo.reverse")
def reverse_reach(q: ProvenanceQuery, operand: int, index: tuple, device) -> list[Reached]:
    dims, shape = {int(d) for d in q.attr("dimensions")}, q.operand_shape(0)  # reversing is its own inverse
    return [Reached(0, tuple(n - 1 - i if d in dims else i for d, (i, n) in enumerate(zip(index, shape))), q.process)]


def _strided(q: ProvenanceQuery, starts: Sequence[int], strides: Sequence[int]) -> tuple[tuple, list]:
    source = tuple(s + i * st for s, i, st in zip(starts, q.index, strides))
    steps = [(STRIDED_DIMENSION, {"dim": d, "start": s, "index": i, "stride": st, "value": v})
             for d, (s, i, st, v) in enumerate(zip(starts, q.index, strides, source))]
    steps.append((RESULT_IS_OPERAND, {"result": q.index, "operand": source}))
    return source, steps


def _slice_attrs(q: ProvenanceQuery) -> tuple[list[int], list[int]]:
    starts = [int(s) for s in q.attr("start_indices")]
    strides = [int(s) for s in q.attr("strides", None) or [1] * len(starts)]
    return starts, strides


@explains("stablehlo.slice")
def slice_provenance(q: ProvenanceQuery):
    """operand index = start_indices + result index · strides."""
    source, steps = _strided(q, *_slice_attrs(q))
    return q.answer([Source(0, source, COPIED)], steps)


@reaches("stablehlo.slice")
def slice_reach(q: ProvenanceQuery, operand: int, index: tuple, device) -> list[Reached]:
    starts, strides = _slice_attrs(q)
    at = []
    for j, s, st, n in zip(index, starts, strides, q.result_shape(0)):
        i, off_grid = divmod(j - s, st)
        if off_grid or not 0 <= i < n:
            return []
        at.append(i)
    return [Reached(0, tuple(at), q.process)]


@explains("stablehlo.real_dynamic_slice")
def real_dynamic_slice_provenance(q: ProvenanceQuery):
    """As slice, with starts and strides read from operands (a stride matters from index 1 on)."""
    starts, strides = ([int(v) for v in q.operand_value(k).reshape(-1)] for k in (1, 3))
    source, steps = _strided(q, starts, strides)
    sources = [Source(1, (d,), START_INDEX) for d in range(len(starts))]
    sources += [Source(3, (d,), STRIDE) for d, i in enumerate(q.index) if i > 0]
    return q.answer(sources + [Source(0, source, COPIED)], steps)


# -- dynamic_slice and dynamic_update_slice ----------------------------------------------------


def _clamped(q: ProvenanceQuery, first_start: int, window: Sequence[int]) -> tuple[list[int], list]:
    """The starts (scalar operands from `first_start` on) clamped so the window fits, and the steps."""
    shape = q.operand_shape(0)
    given = [int(q.operand_value(first_start + d)) for d in range(len(shape))]
    starts = _clamped_starts(given, shape, window)  # the evaluator's own rule
    steps = [(CLAMPED_START, {"dim": d, "start": start, "size": n, "window": w, "clamped": clamped})
             for d, (start, n, w, clamped) in enumerate(zip(given, shape, window, starts))]
    return starts, steps


def _start_sources(q: ProvenanceQuery, first_start: int) -> list[Source]:
    return [Source(k, (), START_INDEX) for k in range(first_start, len(q.op.operands))]


@explains("stablehlo.dynamic_slice")
def dynamic_slice_provenance(q: ProvenanceQuery):
    """operand index = clamp(start, 0, dim - slice_size) + result index, per dimension."""
    starts, steps = _clamped(q, 1, [int(s) for s in q.attr("slice_sizes")])
    source = tuple(s + i for s, i in zip(starts, q.index))
    steps.append((START_PLUS_INDEX, {"start": starts, "index": q.index, "operand": source}))
    return q.answer(_start_sources(q, 1) + [Source(0, source, COPIED)], steps)


@explains("stablehlo.dynamic_update_slice")
def dynamic_update_slice_provenance(q: ProvenanceQuery):
    """Inside the (clamped) window: update[index - start]; outside: the operand's own element."""
    window = q.operand_shape(1)
    starts, steps = _clamped(q, 2, window)
    offset = tuple(i - s for i, s in zip(q.index, starts))
    if all(0 <= o < w for o, w in zip(offset, window)):
        steps.append((INSIDE_UPDATE, {"result": q.index, "start": starts, "update": offset}))
        element = Source(1, offset, UPDATE_ELEMENT)
    else:
        end = [s + w - 1 for s, w in zip(starts, window)]
        steps.append((OUTSIDE_UPDATE, {"result": q.index, "start": starts, "end": end}))
        element = Source(0, q.index, COPIED)
    return q.answer(_start_sources(q, 2) + [element], steps)


# -- concatenate -------------------------------------------------------------------------------


def _offsets(q: ProvenanceQuery, dim: int) -> list[int]:
    sizes = [q.operand_shape(k)[dim] for k in range(len(q.op.operands))]
    return [int(v) for v in np.cumsum([0] + sizes[:-1])]


@explains("stablehlo.concatenate")
def concatenate_provenance(q: ProvenanceQuery):
    dim = int(q.attr("dimension"))
    offsets = _offsets(q, dim)
    k = max(j for j, o in enumerate(offsets) if o <= q.index[dim] and q.operand_shape(j)[dim] > q.index[dim] - o)
    source = q.index[:dim] + (q.index[dim] - offsets[k],) + q.index[dim + 1:]
    steps = [(CONCATENATED_INPUT, {"dim": dim, "offsets": offsets, "index": q.index[dim], "input": k,
                                   "offset": offsets[k], "value": source[dim]}),
             (RESULT_IS_INPUT, {"result": q.index, "input": k, "element": source})]
    return q.answer([Source(k, source, COPIED)], steps)


@reaches("stablehlo.concatenate")
def concatenate_reach(q: ProvenanceQuery, operand: int, index: tuple, device) -> list[Reached]:
    dim = int(q.attr("dimension"))
    shifted = index[:dim] + (index[dim] + _offsets(q, dim)[operand],) + index[dim + 1:]
    return [Reached(0, shifted, q.process)]


# -- pad ---------------------------------------------------------------------------------------


def _pad_amounts(q: ProvenanceQuery) -> tuple[list[int], list[int]]:
    """(edge_padding_low, interior_padding): attributes of pad, operands of dynamic_pad."""
    if q.op.name == "stablehlo.dynamic_pad":
        return [[int(v) for v in q.operand_value(k).reshape(-1)] for k in (2, 4)]
    return [int(v) for v in q.attr("edge_padding_low")], [int(v) for v in q.attr("interior_padding")]


def _unpadded(q: ProvenanceQuery, low: Sequence[int], interior: Sequence[int]) -> tuple[Optional[tuple], list]:
    """The operand element at the result index (None: padding) and the steps that find it."""
    source, steps = [], []
    for d, (i, lo, gap, n) in enumerate(zip(q.index, low, interior, q.operand_shape(0))):
        offset = i - lo
        j, between = divmod(offset, gap + 1)
        fields = {"dim": d, "index": i, "low": lo, "offset": offset}
        if offset < 0 or j >= n:
            steps.append((EDGE_PADDING, {**fields, "size": n}))
            return None, steps
        if between:
            steps.append((INTERIOR_PADDING, {**fields, "interior": gap}))
            return None, steps
        steps.append((PADDED_DIMENSION, {**fields, "interior": gap, "value": j}) if gap else
                     (SHIFTED_DIMENSION, {"dim": d, "index": i, "low": lo, "value": j}))
        source.append(j)
    return tuple(source), steps


@explains("stablehlo.pad", "stablehlo.dynamic_pad")
def pad_provenance(q: ProvenanceQuery):
    """Undo the low edge (negative: elements cut off) and the interior gaps; what is left over is padding."""
    low, interior = _pad_amounts(q)
    source, steps = _unpadded(q, low, interior)
    amounts = []
    if q.op.name == "stablehlo.dynamic_pad":  # where the element lands depends on the low and interior amounts
        amounts = [Source(2, (d,), PADDING_AMOUNT) for d in range(len(low))]
        amounts += [Source(4, (d,), PADDING_AMOUNT) for d, n in enumerate(q.operand_shape(0)) if n > 1]
    if source is None:
        steps.append((IS_PADDING, {"result": q.index}))
        return q.answer(amounts + [Source(1, (), PADDING_VALUE)], steps)
    steps.append((RESULT_IS_OPERAND, {"result": q.index, "operand": source}))
    return q.answer(amounts + [Source(0, source, COPIED)], steps)


@reaches("stablehlo.pad")
def pad_reach(q: ProvenanceQuery, operand: int, index: tuple, device) -> list[Reached]:
    low, interior = _pad_amounts(q)
    shape = q.result_shape(0)
    if operand == 0:
        at = tuple(lo + j * (gap + 1) for j, lo, gap in zip(index, low, interior))
        return [Reached(0, at, q.process)] if all(0 <= i < n for i, n in zip(at, shape)) else []
    padding = []  # the padding value reaches every result element no operand element lands on
    for at in itertools.product(*(range(n) for n in shape)):
        q.index = at
        if _unpadded(q, low, interior)[0] is None:
            padding.append(Reached(0, at, q.process))
    return padding


# -- iota --------------------------------------------------------------------------------------


@explains("stablehlo.iota", "stablehlo.dynamic_iota")
def iota_provenance(q: ProvenanceQuery):
    """No operand element: the value is the index along iota_dimension."""
    dim = int(q.attr("iota_dimension"))
    return q.answer([], [(IOTA_VALUE, {"dim": dim, "result": q.index, "value": q.index[dim]})])
