"""Element provenance of reduce_window and select_and_scatter (beside windows.py).

reduce_window: the window of result[i] starts at padded position i * window_strides and takes
position o at + o * window_dilations. A padded position left of the low padding or past the
dilated operand is padding; one between two elements spread by base_dilations is a hole; both
read the init value, as the evaluator's padded array does. The other positions are operand
elements. The init value is always a source (the accumulator starts from it).

select_and_scatter: result[i] starts as the init value and takes source[w] for every window w
that selects operand element i, in source order. Which window selects i depends on the operand
elements compared by select. For one single perturbed element (what the provenance contract asks
about) that is: every element of a window that selects i (any of them could outbid i), and, in a
window that covers i but selects k, i itself (it could outbid k) and k when i is the runner-up
(k falling back would hand the window to i).
"""
from __future__ import annotations

import itertools
from typing import Callable, Optional, Sequence

import numpy as np

from ..ir.phrases import Phrase
from .elementwise import _COMPARISONS, _comparable
from .gather_scatter_provenance import folded_step, reached_among
from .provenance import REACH_SEARCH_LIMIT, Provenance, ProvenanceQuery, Reached, Source, explains, reaches
from .registry import single_op_body
from .windows import Geometry

INIT_VALUE = Phrase("init value")
WINDOW_ELEMENT = Phrase("window element")
COMPARED_BY_SELECT = Phrase("compared by select")
SCATTERED_SOURCE = Phrase("scattered source element")

WINDOW_OF = Phrase("window of result{result}: starts at padded position {start} = {result} × window_strides {strides}; "
                   "window_dimensions {window}, each position o at {start} + o × window_dilations {dilations}")
POSITION_ELEMENT = Phrase("window position {offset} → padded position {padded} → operand{operand} "
                          "(minus low padding {low}, divided by base_dilations {base})")
POSITION_PADDING = Phrase("window position {offset} → padded position {padded}: padding {padding}, "
                          "reads the init value")
POSITION_HOLE = Phrase("window position {offset} → padded position {padded}: a hole between the elements "
                       "spread by base_dilations {base}, reads the init value")
REDUCED_BY_REDUCER = Phrase("the init value and the window's {count} operand element(s) are combined "
                            "in row-major order by the body ({kind})")
REDUCED_BY_BODY = Phrase("the init values and the window's {count} operand element(s) of every input are "
                         "combined in row-major order by the body, which may mix the inputs")

STARTS_AS_INIT = Phrase("result{result} starts as the init value {value}")
WINDOW_SELECTS = Phrase("the window of source{window} covers operand{positions}; select picks operand{selected}, "
                        "this element: source{window} = {value} is scattered here")
WINDOW_PASSES = Phrase("the window of source{window} covers this element, but select picks operand{selected}")
WINDOW_RUNNER_UP = Phrase("the window of source{window} covers this element, but select picks operand{selected}; "
                          "without it, select would pick this element")
SCATTERED_BY_REDUCER = Phrase("{count} window(s) select this element; their source elements are combined with "
                              "the init value in source order by scatter ({kind})")
SCATTERED_BY_BODY = Phrase("{count} window(s) select this element; their source elements are combined with "
                           "the init value in source order by the scatter body")


def _geometry(q: ProvenanceQuery, dilations: bool) -> Geometry:
    geometry = q.memo.get("geometry")
    if geometry is None:
        # Geometry reads attributes through attr()/error(), which a query offers as an OpCall does.
        geometry = q.memo["geometry"] = Geometry.from_call(q, q.operand_shape(0), dilations=dilations)
    return geometry


# -- reduce_window -----------------------------------------------------------------------------


def _window_position(geometry: Geometry, index: Sequence[int], offset: Sequence[int]):
    """("element", operand index) | ("padding", None) | ("hole", None), and the padded position."""
    padded = tuple(i * s + o * w for i, s, o, w in zip(index, geometry.strides, offset, geometry.window_dilations))
    dilated = [p - lo for p, (lo, _) in zip(padded, geometry.padding)]
    if any(not 0 <= c < geometry.dilated_size(d) for d, c in enumerate(dilated)):
        return "padding", None, padded
    if any(c % b for c, b in zip(dilated, geometry.base_dilations)):
        return "hole", None, padded
    return "element", tuple(c // b for c, b in zip(dilated, geometry.base_dilations)), padded


@explains("stablehlo.reduce_window")
def reduce_window_provenance(q: ProvenanceQuery) -> Provenance:
    """The init value, then the window's operand elements in row-major window order."""
    count = len(q.op.operands) // 2
    geometry = _geometry(q, dilations=True)
    kind = single_op_body(q.op.regions[0])
    inputs = [q.result] if kind is not None else list(range(count))  # an elementwise reducer keeps inputs apart
    start = tuple(i * s for i, s in zip(q.index, geometry.strides))
    steps: list[tuple] = [(WINDOW_OF, {"result": q.index, "start": start, "strides": geometry.strides,
                                       "window": geometry.window, "dilations": geometry.window_dilations})]
    sources = [Source(count + k, (), INIT_VALUE) for k in inputs]
    elements = 0
    read = []  # what each window position reads: an operand element, or None for the init value
    for offset in geometry.offsets():
        what, element, padded = _window_position(geometry, q.index, offset)
        read.append(element)
        if what == "padding":
            steps.append((POSITION_PADDING, {"offset": offset, "padded": padded, "padding": geometry.padding}))
        elif what == "hole":
            steps.append((POSITION_HOLE, {"offset": offset, "padded": padded, "base": geometry.base_dilations}))
        else:
            elements += 1
            steps.append((POSITION_ELEMENT, {"offset": offset, "padded": padded, "operand": element,
                                             "low": tuple(lo for lo, _ in geometry.padding),
                                             "base": geometry.base_dilations}))
            sources += [Source(k, element, WINDOW_ELEMENT) for k in inputs]
    if kind is not None:
        steps.append((REDUCED_BY_REDUCER, {"count": elements, "kind": kind}))
    else:
        steps.append((REDUCED_BY_BODY, {"count": elements}))
    if q.results is not None and q.operands is not None:
        def value(operands, index):
            values = [q.operand_value(k)[index] for k in operands]
            return values[0] if len(values) == 1 else tuple(values)

        init = value([count + k for k in inputs], ())
        combined = [init if e is None else value(inputs, e) for e in read]
        steps.append(folded_step(q, kind or "body", init, combined))
    return q.answer(sources, steps)


@reaches("stablehlo.reduce_window")
def reduce_window_reach(q: ProvenanceQuery, operand: int, index: tuple, device=None) -> list[Reached]:
    count = len(q.op.operands) // 2
    geometry = _geometry(q, dilations=True)
    if operand >= count:  # an init value starts every window: of its own result, or of all (general body)
        size = int(np.prod(geometry.out_shape, dtype=np.int64))
        results = [operand - count] if single_op_body(q.op.regions[0]) is not None else range(count)
        if size * len(results) > REACH_SEARCH_LIMIT:
            raise q.error(f"the init value reaches every one of the {size * len(results):,} result elements; "
                          "ask about one result element instead")
        return [Reached(r, at, q.process) for r in results for at in np.ndindex(*geometry.out_shape)]
    # The operand element sits at padded position e * base_dilation + low padding; window i covers it
    # at position o when i * stride + o * window_dilation is that position.
    per_dim = []
    for d, e in enumerate(index):
        padded = e * geometry.base_dilations[d] + geometry.padding[d][0]
        starts = [padded - o * geometry.window_dilations[d] for o in range(geometry.window[d])]
        per_dim.append([p // geometry.strides[d] for p in starts
                        if p % geometry.strides[d] == 0 and 0 <= p // geometry.strides[d] < geometry.out_shape[d]])
    candidates = list(itertools.product(*per_dim))
    return reached_among(q, reduce_window_provenance, operand, index,
                         [(r, c) for r in range(count) for c in candidates])


# -- select_and_scatter ------------------------------------------------------------------------


def _select_rule(q: ProvenanceQuery) -> Callable[[object, object], bool]:
    """select(current, candidate) of a body that is one comparison of its two arguments.

    Running an arbitrary body needs the interpreter, which the engine's op layer cannot reach;
    the select bodies programs use (max and min pooling: compare GE/GT/LE/LT) are one comparison.
    """
    rule = q.memo.get("select")
    if rule is not None:
        return rule
    block = q.op.regions[0].blocks[0]
    ops = block.operations
    args = list(block.arguments)
    # An order (not EQ/NE) is what makes "any element of the window could outbid the selected one" true.
    swapped = {"GE": "LE", "GT": "LT", "LE": "GE", "LT": "GT"}
    if len(ops) == 2 and ops[0].name == "stablehlo.compare" and list(ops[-1].operands) == [ops[0].results[0]] \
            and sorted(map(id, ops[0].operands)) == sorted(map(id, args)) and len(args) == 2:
        direction = str(ops[0].attributes.get("comparison_direction"))
        if ops[0].operands[0] is args[1]:
            direction = swapped.get(direction, direction)
        compare_type = ops[0].attributes.get("compare_type")
        ufunc = _COMPARISONS.get(direction) if direction in swapped else None
        if ufunc is not None:
            def rule(current, candidate):
                return bool(ufunc(_comparable(np.asarray(current), compare_type),
                                  _comparable(np.asarray(candidate), compare_type)))
            q.memo["select"] = rule
            return rule
    raise q.error("hlodbg traces select_and_scatter through a select body that is one comparison of its two "
                  "arguments (stablehlo.compare GE, GT, LE or LT); this body is not")


def _selected(positions: Sequence[tuple], operand: np.ndarray, select) -> Optional[tuple]:
    """XLA's choice: the first position starts, a later one replaces it unless select(current, candidate)."""
    chosen = None
    for p in positions:
        if chosen is None or not select(operand[chosen], operand[p]):
            chosen = p
    return chosen


def _covering_windows(geometry: Geometry, index: Sequence[int]) -> list[tuple]:
    """The source positions whose window covers operand element `index`, in source order."""
    per_dim = []
    for d, i in enumerate(index):
        lo, s, w = geometry.padding[d][0], geometry.strides[d], geometry.window[d]
        per_dim.append([k for k in range(geometry.out_shape[d]) if 0 <= i + lo - k * s < w])
    return list(itertools.product(*per_dim))


def _window_positions(geometry: Geometry, window: Sequence[int]) -> list[tuple]:
    """The operand elements of a window, in row-major window order (padding takes no part)."""
    positions = []
    for offset in geometry.offsets():
        p = tuple(k * s + o - lo for k, s, o, (lo, _) in zip(window, geometry.strides, offset, geometry.padding))
        if all(0 <= c < n for c, n in zip(p, geometry.shape)):
            positions.append(p)
    return positions


@explains("stablehlo.select_and_scatter")
def select_and_scatter_provenance(q: ProvenanceQuery) -> Provenance:
    """The init value, then per covering window the elements select compares and, if it picks this one, its source."""
    geometry = _geometry(q, dilations=False)
    operand, source = q.operand_value(0), q.operand_value(1)
    select = _select_rule(q)
    here = q.index
    steps: list[tuple] = [(STARTS_AS_INIT, {"result": here, "value": q.operand_value(2)})]
    sources = [Source(2, (), INIT_VALUE)]
    listed = set()

    def compared(elements):
        for e in elements:
            if e not in listed:
                listed.add(e)
                sources.append(Source(0, e, COMPARED_BY_SELECT))

    scattered = []
    for window in _covering_windows(geometry, here):
        positions = _window_positions(geometry, window)
        chosen = _selected(positions, operand, select)
        if chosen == here:
            scattered.append(source[window])
            steps.append((WINDOW_SELECTS, {"window": window, "positions": positions, "selected": chosen,
                                           "value": source[window]}))
            compared(positions if len(positions) > 1 else [])
            sources.append(Source(1, window, SCATTERED_SOURCE))
        elif _selected([p for p in positions if p != chosen], operand, select) == here:
            steps.append((WINDOW_RUNNER_UP, {"window": window, "selected": chosen}))
            compared([here, chosen])
        else:
            steps.append((WINDOW_PASSES, {"window": window, "selected": chosen}))
            compared([here])
    kind = single_op_body(q.op.regions[1])
    if kind is not None:
        steps.append((SCATTERED_BY_REDUCER, {"count": len(scattered), "kind": kind}))
    else:
        steps.append((SCATTERED_BY_BODY, {"count": len(scattered)}))
    if q.results is not None:
        steps.append(folded_step(q, kind or "scatter", q.operand_value(2), scattered))
    return q.answer(sources, steps)
