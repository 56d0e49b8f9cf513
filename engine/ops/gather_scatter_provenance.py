"""Element provenance of gather, dynamic_gather, torch_index_select and scatter (beside gather_scatter.py).

Gather (the spec's `operand_index = full_start_index + full_batching_index + full_offset_index`):
the result index splits into a batch index (dimensions not in offset_dims) and an offset (those in
offset_dims); the batch index picks a row of start_indices, whose elements start_index_map sends
to operand dimensions, clamped so the whole slice fits; operand_batching_dims copy the batch
index; the offset fills every dimension not collapsed. The start-index elements and the gathered
operand element are the sources.

Scatter runs the other way: for a result element, every batch position of scatter_indices whose
window covers it contributes one update element, in row-major order of the batch positions (the
order the evaluator applies them). A window not wholly inside the operand is skipped, as XLA does.
Which sources matter depends on update_computation: an elementwise reducer (add, max...) on each
pair combines the original value with every update of the same input; a body that returns the
update keeps only the last one; any other body may mix every input, so all of them are reported.
"""
from __future__ import annotations

import itertools
from typing import Optional, Sequence

import numpy as np

from ..ir.phrases import Phrase, field_text
from .gather_scatter import _as_int64, _batch_position, _index_vectors, returns_updates
from .provenance import Provenance, ProvenanceQuery, Reached, Source, explains, reaches
from .registry import single_op_body
from .shape import RESULT_IS_OPERAND

START_INDEX = Phrase("start index")
GATHERED = Phrase("gathered element")
ORIGINAL = Phrase("original value")
UPDATE = Phrase("update")
SCATTER_INDEX = Phrase("scatter index")

BATCH_AND_OFFSET = Phrase("result{result}: batch index {batch} (result dimensions {batch_dims}), "
                          "offset {offset} (offset_dims {offset_dims})")
INDEX_ROW = Phrase("start_indices{row} = {values}: the index vector of batch index {batch} "
                   "(index_vector_dim = {dim})")
CLAMPED_START = Phrase("start_index_map[{position}] = {dim}: start along operand dimension {dim} = "
                       "clamp(idx{at} = {value}, 0, {limit}) → {clamped}")
BATCHING_START = Phrase("operand_batching_dims[{position}] = {dim} goes with start_indices_batching_dims[{position}] "
                        "= {indices_dim}: operand dimension {dim} takes the batch index {value}")
FULL_OFFSET = Phrase("offset {offset} → full offset {full}: 0 at collapsed_slice_dims {collapsed} "
                     "and operand_batching_dims {batching}")
GATHER_RESULT = Phrase("result{result} = operand[start={start} + offset {offset}] = operand{operand}")
INDEX_SELECT = Phrase("index{at} = {value}, clamped to the {size} positions of operand dimension {dim} → {clamped}")

SCATTER_START = Phrase("result #{result}{index} starts as the original value of input #{input}: {value}")
UPDATE_LANDS = Phrase("update{update} lands here: batch index {batch}, scatter_indices{row} = {start} "
                      "(window start {window_start}), window offset {offset}")
UPDATE_SKIPPED = Phrase("update{update} would land here, but its window (start {window_start}, size {window}) "
                        "does not fit in the operand shape {shape}: skipped")
NO_UPDATE = Phrase("no update lands here: the result keeps the original value")
COMBINED_BY_REDUCER = Phrase("{count} update(s) land here, combined with the original value in this order "
                             "by update_computation ({kind})")
COMBINED_BY_BODY = Phrase("{count} update(s) land here, combined with the original values in this order "
                          "by update_computation, whose body may mix every input")
LAST_UPDATE_WINS = Phrase("update_computation returns the update: the last one to land, update{update}, "
                          "replaces the others")
RESULT_VALUE = Phrase("result{result} = {value}")
FOLDED = Phrase("result{result} = {expression} = {value}")

FOLD_LIMIT = 12  # combines shown as one nested expression; longer folds show only the value


def _ints(values) -> tuple[int, ...]:
    return tuple(int(v) for v in np.asarray(values).reshape(-1))


def _index_text(batch: Sequence[int], index_vector_dim: int, indices_rank: int) -> str:
    """The start_indices row of a batch index, with ':' along the index vector dimension."""
    parts = [str(b) for b in batch]
    if index_vector_dim < indices_rank:
        parts.insert(index_vector_dim, ":")
    return "(" + ", ".join(parts) + ")"


def _vector_element(batch: Sequence[int], k: int, index_vector_dim: int, indices_rank: int) -> tuple[int, ...]:
    """The start_indices element holding component `k` of the index vector at `batch`."""
    if index_vector_dim == indices_rank:  # an implicit trailing dimension of size 1
        return tuple(batch)
    return tuple(batch[:index_vector_dim]) + (k,) + tuple(batch[index_vector_dim:])


def folded_step(q: ProvenanceQuery, name: str, start, combined: Sequence) -> tuple:
    """The result element as the body applied in order, `add(add(5, 40), 90) = 135`, with its numbers."""
    value = q.result_value(q.result)[q.index]
    if len(combined) > FOLD_LIMIT:
        return RESULT_VALUE, {"result": q.index, "value": value}
    expression = field_text(start)
    for v in combined:
        expression = f"{name}({expression}, {field_text(v)})"
    return FOLDED, {"result": q.index, "expression": expression, "value": value}


def reached_among(q: ProvenanceQuery, explainer, operand: int, index: tuple, candidates) -> list[Reached]:
    """The candidates (result, index) whose forward answer names operand `operand`'s element `index`.

    A direct inverse proposes the few result elements an operand element can reach and lets the
    forward function decide, so the two can never disagree.
    """
    reached = []
    for result, at in sorted(dict.fromkeys((r, tuple(at)) for r, at in candidates)):
        q.result, q.index = result, tuple(at)
        if any(s.operand == operand and s.index == index for s in explainer(q).sources):
            reached.append(Reached(result, tuple(at), q.process))
    return reached


# -- gather ------------------------------------------------------------------------------------


class _GatherPlan:
    """A gather's attributes and index vectors, derived once per query (kept in q.memo)."""

    def __init__(self, q: ProvenanceQuery, slice_sizes: Sequence[int]):
        dn = q.attr("dimension_numbers")
        self.dn = dn
        self.shape = q.operand_shape(0)
        self.slice_sizes = tuple(int(s) for s in slice_sizes)
        indices = q.operand_value(1)
        self.indices_rank = indices.ndim
        self.vectors = _index_vectors(indices, dn.index_vector_dim)
        self.batch_shape = self.vectors.shape[:-1]
        self.offset_dims = tuple(dn.offset_dims)
        out_rank = len(self.batch_shape) + len(self.offset_dims)
        self.batch_axes = [a for a in range(out_rank) if a not in self.offset_dims]
        self.window_dims = [d for d in range(len(self.shape))
                            if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]

    def start(self, batch: tuple[int, ...]) -> tuple[list[int], list[tuple], list[str]]:
        """The full start (clamped start + batching index) of `batch`, the steps that derive it, and
        each dimension's start as arithmetic ("clamp(idx(1, 0) = 5) → 3")."""
        dn, start, steps = self.dn, [0] * len(self.shape), []
        pieces = ["0"] * len(self.shape)
        vector = self.vectors[batch]
        for position, d in enumerate(dn.start_index_map):
            value = int(vector[position])
            limit = self.shape[d] - self.slice_sizes[d]
            clamped = min(max(value, 0), limit)
            start[d] += clamped
            at = _vector_element(batch, position, dn.index_vector_dim, self.indices_rank)
            read = f"idx{field_text(at)} = {value}"
            pieces[d] = read if clamped == value else f"clamp({read}) → {clamped}"
            steps.append((CLAMPED_START, {"position": position, "dim": d, "at": at, "value": value,
                                          "limit": limit, "clamped": clamped}))
        for position, d in enumerate(dn.operand_batching_dims):
            indices_dim = dn.start_indices_batching_dims[position]
            value = batch[_batch_position(indices_dim, dn.index_vector_dim)]
            start[d] += value
            pieces[d] = str(value)
            steps.append((BATCHING_START, {"position": position, "dim": d, "indices_dim": indices_dim,
                                           "value": value}))
        return start, steps, pieces

    def full_offset(self, offset: Sequence[int]) -> list[int]:
        full = [0] * len(self.shape)
        for d, o in zip(self.window_dims, offset):
            full[d] = o
        return full


def _gather_plan(q: ProvenanceQuery) -> _GatherPlan:
    plan = q.memo.get("gather")
    if plan is None:
        sizes = q.attr("slice_sizes") if q.op.name == "stablehlo.gather" else _ints(q.operand_value(2))
        plan = q.memo["gather"] = _GatherPlan(q, sizes)
    return plan


@explains("stablehlo.gather", "stablehlo.dynamic_gather")
def gather_provenance(q: ProvenanceQuery) -> Provenance:
    """result[i] = operand[clamped start of i's batch row + batching index + i's offset]."""
    plan = _gather_plan(q)
    dn = plan.dn
    batch = tuple(q.index[a] for a in plan.batch_axes)
    offset = tuple(q.index[a] for a in plan.offset_dims)
    steps: list[tuple] = [(BATCH_AND_OFFSET, {"result": q.index, "batch": batch, "batch_dims": plan.batch_axes,
                                              "offset": offset, "offset_dims": plan.offset_dims})]
    steps.append((INDEX_ROW, {"row": _index_text(batch, dn.index_vector_dim, plan.indices_rank),
                              "values": _ints(plan.vectors[batch]), "batch": batch, "dim": dn.index_vector_dim}))
    start, start_steps, pieces = plan.start(batch)
    steps += start_steps
    full = plan.full_offset(offset)
    steps.append((FULL_OFFSET, {"offset": offset, "full": full, "collapsed": tuple(dn.collapsed_slice_dims),
                                "batching": tuple(dn.operand_batching_dims)}))
    element = tuple(s + o for s, o in zip(start, full))
    steps.append((GATHER_RESULT, {"result": q.index, "start": "(" + ", ".join(pieces) + ")", "offset": full,
                                  "operand": element}))
    sources = [Source(1, _vector_element(batch, k, dn.index_vector_dim, plan.indices_rank), START_INDEX)
               for k in range(len(dn.start_index_map))]
    sources.append(Source(0, element, GATHERED))
    return q.answer(sources, steps)


@reaches("stablehlo.gather", "stablehlo.dynamic_gather")
def gather_reach(q: ProvenanceQuery, operand: int, index: tuple, device=None) -> list[Reached]:
    plan = _gather_plan(q)
    offsets = [range(plan.slice_sizes[d]) for d in plan.window_dims]
    if operand == 0:
        candidates = []
        for batch in np.ndindex(*plan.batch_shape):
            start, _, _ = plan.start(batch)
            offset = [i - s for i, s in zip(index, start)]
            if all(offset[d] == 0 for d in range(len(offset)) if d not in plan.window_dims) and \
                    all(0 <= offset[d] < plan.slice_sizes[d] for d in plan.window_dims):
                candidates.append(_gather_result_index(plan, batch, [offset[d] for d in plan.window_dims]))
    elif operand == 1:
        ivd = plan.dn.index_vector_dim
        batch = index[:ivd] + index[ivd + 1:] if ivd < plan.indices_rank else index
        candidates = [_gather_result_index(plan, batch, o) for o in itertools.product(*offsets)]
    else:
        return []  # dynamic_gather's slice_sizes shape the result; no element reads them
    return reached_among(q, gather_provenance, operand, index, [(0, c) for c in candidates])


def _gather_result_index(plan: _GatherPlan, batch: Sequence[int], offset: Sequence[int]) -> tuple[int, ...]:
    index = [0] * (len(plan.batch_axes) + len(plan.offset_dims))
    for axis, b in zip(plan.batch_axes, batch):
        index[axis] = b
    for axis, o in zip(plan.offset_dims, offset):
        index[axis] = o
    return tuple(index)


@explains("stablehlo.torch_index_select")
def torch_index_select_provenance(q: ProvenanceQuery) -> Provenance:
    """result[b..., pre..., i..., post...] = operand[b..., pre..., clamp(index[b..., i...]), post...]."""
    shape, index_shape = q.operand_shape(0), q.operand_shape(1)
    dim, batch_dims = int(q.attr("dim")), int(q.attr("batch_dims"))
    dim += len(shape) if dim < 0 else 0
    batch_dims += len(index_shape) if batch_dims < 0 else 0
    own = len(index_shape) - batch_dims
    at = q.index[:batch_dims] + q.index[dim:dim + own]
    value = int(_as_int64(q.operand_value(1)[at]))
    clamped = min(max(value, 0), max(shape[dim] - 1, 0))
    element = q.index[:dim] + (clamped,) + q.index[dim + own:]
    steps = [(INDEX_SELECT, {"at": at, "value": value, "size": shape[dim], "dim": dim, "clamped": clamped}),
             (RESULT_IS_OPERAND, {"result": q.index, "operand": element})]
    return q.answer([Source(1, at, START_INDEX), Source(0, element, GATHERED)], steps)


# -- scatter -----------------------------------------------------------------------------------


class _ScatterPlan:
    """A scatter's attributes and index vectors, derived once per query (kept in q.memo)."""

    def __init__(self, q: ProvenanceQuery):
        self.count = (len(q.op.operands) - 1) // 2
        dn = self.dn = q.attr("scatter_dimension_numbers")
        self.shape = q.operand_shape(0)
        update_shape = q.operand_shape(self.count + 1)
        indices = q.operand_value(self.count)
        self.indices_rank = indices.ndim
        self.vectors = _index_vectors(indices, dn.index_vector_dim)
        self.batch_shape = self.vectors.shape[:-1]
        self.window_axes = list(dn.update_window_dims)
        self.scatter_axes = [a for a in range(len(update_shape)) if a not in self.window_axes]
        self.window_dims = [d for d in range(len(self.shape))
                            if d not in dn.inserted_window_dims and d not in dn.input_batching_dims]
        self.window = [1] * len(self.shape)
        for d, a in zip(self.window_dims, self.window_axes):
            self.window[d] = update_shape[a]
        region = q.op.regions[0]
        self.kind: Optional[str] = single_op_body(region)
        self.overwrites = self.kind is None and returns_updates(region)

    def window_start(self, batch: tuple[int, ...]) -> list[int]:
        """Where the window of `batch` starts in the result (no clamping: scatter skips instead)."""
        dn, start = self.dn, [0] * len(self.shape)
        for position, d in enumerate(dn.scatter_dims_to_operand_dims):
            start[d] += int(self.vectors[batch][position])
        for position, d in enumerate(dn.input_batching_dims):
            start[d] += batch[_batch_position(dn.scatter_indices_batching_dims[position], dn.index_vector_dim)]
        return start

    def fits(self, start: Sequence[int]) -> bool:
        return all(0 <= s <= n - w for s, n, w in zip(start, self.shape, self.window))

    def update_index(self, batch: Sequence[int], offset: Sequence[int]) -> tuple[int, ...]:
        index = [0] * (len(self.scatter_axes) + len(self.window_axes))
        for axis, b in zip(self.scatter_axes, batch):
            index[axis] = b
        for axis, d in zip(self.window_axes, self.window_dims):
            index[axis] = offset[d]
        return tuple(index)

    def index_elements(self, batch: tuple[int, ...]) -> list[tuple[int, ...]]:
        return [_vector_element(batch, k, self.dn.index_vector_dim, self.indices_rank)
                for k in range(len(self.dn.scatter_dims_to_operand_dims))]


def _scatter_plan(q: ProvenanceQuery) -> _ScatterPlan:
    plan = q.memo.get("scatter")
    if plan is None:
        plan = q.memo["scatter"] = _ScatterPlan(q)
    return plan


@explains("stablehlo.scatter")
def scatter_provenance(q: ProvenanceQuery) -> Provenance:
    """The original value, then every update that lands on the element, in the order applied."""
    plan = _scatter_plan(q)
    n, dn = plan.count, plan.dn
    # An elementwise reducer or an overwrite keeps each input to itself; another body may mix them.
    inputs = [q.result] if plan.kind is not None or plan.overwrites else list(range(n))
    steps: list[tuple] = [(SCATTER_START, {"result": q.result, "index": q.index, "input": i,
                                           "value": q.operand_value(i)[q.index]}) for i in inputs]
    landed = []  # (update index, scatter index elements)
    for batch in np.ndindex(*plan.batch_shape):
        start = plan.window_start(batch)
        offset = [i - s for i, s in zip(q.index, start)]
        if not all(0 <= o < w for o, w in zip(offset, plan.window)):
            continue
        update = plan.update_index(batch, offset)
        if not plan.fits(start):
            steps.append((UPDATE_SKIPPED, {"update": update, "window_start": start, "window": plan.window,
                                           "shape": plan.shape}))
            continue
        steps.append((UPDATE_LANDS, {"update": update, "batch": batch, "window_start": start,
                                     "row": _index_text(batch, dn.index_vector_dim, plan.indices_rank),
                                     "start": _ints(plan.vectors[batch]), "offset": offset}))
        landed.append((update, plan.index_elements(batch)))

    sources = [Source(i, q.index, ORIGINAL) for i in inputs]
    if not landed:
        steps.append((NO_UPDATE, {}))
    elif plan.overwrites:
        update, placed_by = landed[-1]
        steps.append((LAST_UPDATE_WINS, {"update": update}))
        sources = [Source(n, at, SCATTER_INDEX) for at in placed_by] + [Source(n + 1 + q.result, update, UPDATE)]
    else:
        if plan.kind is not None:
            steps.append((COMBINED_BY_REDUCER, {"count": len(landed), "kind": plan.kind}))
        else:
            steps.append((COMBINED_BY_BODY, {"count": len(landed)}))
        for update, placed_by in landed:
            sources += [Source(n, at, SCATTER_INDEX) for at in placed_by]
            sources += [Source(n + 1 + i, update, UPDATE) for i in inputs]
    if q.results is not None:
        steps.append(_scatter_fold(q, plan, inputs, [update for update, _ in landed]))
    return q.answer(sources, steps)


def _scatter_fold(q: ProvenanceQuery, plan: _ScatterPlan, inputs: list[int], updates: list[tuple]) -> tuple:
    """The result as update_computation applied in order, each argument the inputs' values (a tuple if several)."""
    n = plan.count

    def at(operands, index):
        values = [q.operand_value(i)[index] for i in operands]
        return values[0] if len(values) == 1 else tuple(values)

    return folded_step(q, plan.kind or "update_computation", at(inputs, q.index),
                       [at([n + 1 + i for i in inputs], u) for u in updates])


@reaches("stablehlo.scatter")
def scatter_reach(q: ProvenanceQuery, operand: int, index: tuple, device=None) -> list[Reached]:
    plan = _scatter_plan(q)
    n = plan.count
    results = range(n)
    if operand < n:
        targets = [index]
    elif operand == n:  # a scatter index element: every element its window covers
        ivd = plan.dn.index_vector_dim
        batch = index[:ivd] + index[ivd + 1:] if ivd < plan.indices_rank else index
        start = plan.window_start(batch)
        targets = [tuple(s + o for s, o in zip(start, offset))
                   for offset in itertools.product(*(range(w) for w in plan.window))]
    else:  # an update element lands on one result element, if its window fits
        batch = tuple(index[a] for a in plan.scatter_axes)
        start = plan.window_start(batch)
        offset = [0] * len(plan.shape)
        for axis, d in zip(plan.window_axes, plan.window_dims):
            offset[d] = index[axis]
        targets = [tuple(s + o for s, o in zip(start, offset))]
    inside = [t for t in targets if all(0 <= i < s for i, s in zip(t, plan.shape))]
    return reached_among(q, scatter_provenance, operand, index, [(r, t) for r in results for t in inside])
