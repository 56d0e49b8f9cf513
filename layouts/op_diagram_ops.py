"""The dedicated drawings: where each op puts its tensors and what it marks on them.

Each function lays out the op's panels the way its data flows (gather: indices → operand →
result; dot_general: rhs above the result, lhs to its left) and adds the structure that the op's
attributes give, with or without an element asked about: the slice a gather reads, the region a
slice keeps, the padding cells of a pad, the part of a concatenation each input fills. The
arithmetic here only places outlines and shades; which elements make the asked-about element
always comes from the provenance.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from hlodbg.engine.ir.phrases import Phrase

from .op_diagram_base import Scene, draws
from .op_diagram_canvas import LIGHT, PARTS, STRUCTURE, Block, Column, Row
from .op_diagram_grid import Mark, TensorPanel

GATHERED_SLICE = Phrase("the slice read for this index vector")
SLICE_START = Phrase("start")
WINDOW = Phrase("the window")
PADDING_CELLS = Phrase("padding (holds the padding value)")
KEPT = Phrase("elements the slice keeps")
SAME_SOURCE = Phrase("result elements copying the same operand element")
TAKEN_FROM = Phrase("taken from {name}")
LANDING = Phrase("{count} update(s) land here; the numbers give their order")


def _ints(value) -> list[int]:
    return [int(v) for v in value] if value is not None else []


def _settings(scene: Scene, *names: str) -> Optional[str]:
    """`name = value` for each attribute the op has, to write under the drawing."""
    parts = []
    for name in names:
        value = scene.op.attributes.get(name)
        if value is not None:
            parts.append(f"{name} = {_attribute_text(value)}")
    return ", ".join(parts) or None


def _attribute_text(value) -> str:
    """An integer attribute as its number, an array of them as a list; anything else as it prints."""
    try:
        return str(_ints(value))
    except TypeError:
        pass
    try:
        return str(int(value))
    except (TypeError, ValueError):
        return str(value)


def _note(scene: Scene, text: Optional[str]) -> None:
    if text:
        scene.notes.append(text)


def _connect_all(scene: Scene, panels: dict[int, TensorPanel], result: TensorPanel) -> None:
    for i, panel in panels.items():
        scene.connect_sources(panel, i, result)


def _outline_sources(scene: Scene, panel: TensorPanel, operand: int, label: Optional[Phrase] = None) -> None:
    sources = scene.sources(operand)
    if len(sources) > 1:
        colour = scene.colour_of(sources[0].role if label is None else label)
        scene.outline(panel, [s.index for s in sources], colour, scene.say(label) if label else None)


# -- indexed reads and writes ------------------------------------------------------------------


@draws("stablehlo.gather")
def gather(scene: Scene) -> Block:
    operand, indices, result = scene.operand_panel(0), scene.operand_panel(1), scene.result_panel(0)
    gathered = scene.sources(0)
    if result.selected is not None and gathered:
        dn = scene.op.attributes["dimension_numbers"]
        sizes = _ints(scene.op.attributes["slice_sizes"])
        element = tuple(gathered[0].index)
        start = _gather_slice_start(dn, element, result.selected)
        colour = scene.colour_of(GATHERED_SLICE)
        scene.outline(operand, [start, tuple(s + max(n, 1) - 1 for s, n in zip(start, sizes))], colour, scene.say(GATHERED_SLICE))
        # The same slice, as it lands in the result: every offset of this batch position.
        landed = [list(result.selected), list(result.selected)]
        for d in dn.offset_dims:
            landed[0][d], landed[1][d] = 0, result.shape[d] - 1
        scene.outline(result, landed, colour)
        starts = scene.sources(1)
        if starts:
            scene.connect(indices, [s.index for s in starts], operand, [start], scene.colour_of(starts[0].role), scene.say(SLICE_START))
        scene.connect(operand, [element], result, [result.selected], scene.colour_of(gathered[0].role))
    _note(scene, _dimension_numbers_text(scene))
    return Row([indices, operand, result], gap=70)


def _gather_slice_start(dn, element: tuple, result_index: tuple) -> tuple:
    """Where the slice holding `element` starts: the element minus its offset inside the slice,
    the offsets being the result index along offset_dims (one per operand dimension kept in the slice)."""
    kept = [d for d in range(len(element)) if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    start = list(element)
    for d, result_dim in zip(kept, dn.offset_dims):
        start[d] = element[d] - result_index[result_dim]
    return tuple(start)


def _dimension_numbers_text(scene: Scene) -> Optional[str]:
    dn = scene.op.attributes.get("dimension_numbers") or scene.op.attributes.get("scatter_dimension_numbers")
    if dn is None:
        return None
    fields = [f"{name} = {list(value) if isinstance(value, tuple) else value}" for name, value in vars(dn).items()
              if not (isinstance(value, tuple) and not value)]
    return ", ".join(fields)


@draws("stablehlo.scatter")
def scatter(scene: Scene) -> Block:
    names = scene.operand_names()
    panels = {i: scene.operand_panel(i, numbered=names[i].startswith("updates")) for i in range(len(names))}
    inputs = [i for i, n in enumerate(names) if n.startswith("inputs")]
    indices = [i for i, n in enumerate(names) if n == "scatter_indices"]
    updates = [i for i, n in enumerate(names) if n.startswith("updates")]
    results = [scene.result_panel(r) for r in range(len(scene.op.results))]
    for r, result in enumerate(results):
        if scene.asked_about(r):
            _connect_all(scene, panels, result)
            landing = sum(len(scene.sources(i)) for i in updates)
            if landing > 1:
                scene.notes.append(scene.say(LANDING, count=landing))
    _note(scene, _dimension_numbers_text(scene))
    return Row([Column([panels[i] for i in inputs + indices + updates]), Column(results)], gap=90)


# -- windows -----------------------------------------------------------------------------------


@draws("stablehlo.reduce_window")
def reduce_window(scene: Scene) -> Block:
    count = len(scene.op.operands) // 2
    panels = {i: scene.operand_panel(i) for i in range(len(scene.op.operands))}
    for i in range(count):
        _outline_sources(scene, panels[i], i, WINDOW)
    results = [scene.result_panel(r) for r in range(len(scene.op.results))]
    for r, result in enumerate(results):
        if scene.asked_about(r):
            _connect_all(scene, panels, result)
    _note(scene, _settings(scene, "window_dimensions", "window_strides", "base_dilations", "window_dilations"))
    _note(scene, _padding_text(scene))
    inputs = Column([panels[i] for i in range(count)])
    inits = Column([panels[i] for i in range(count, 2 * count)])
    return Row([Column([inputs, inits], gap=26), Column(results)], gap=80)


def _padding_text(scene: Scene) -> Optional[str]:
    padding = scene.op.attributes.get("padding")
    if padding is None:
        return None
    pairs = np.asarray(getattr(padding, "array", padding), dtype=np.int64).reshape(-1, 2).tolist()
    return f"padding = {pairs}" if any(p != [0, 0] for p in pairs) else None


@draws("stablehlo.convolution")
def convolution(scene: Scene) -> Block:
    dn = scene.op.attributes.get("dimension_numbers")
    lhs_dims = rhs_dims = out_dims = None
    if dn is not None and len(dn.input_spatial_dimensions) >= 2:
        lhs_dims = tuple(sorted(dn.input_spatial_dimensions[:2]))
        rhs_dims = tuple(sorted(dn.kernel_spatial_dimensions[:2]))
        out_dims = tuple(sorted(dn.output_spatial_dimensions[:2]))
    lhs = scene.operand_panel(0, dims=lhs_dims)
    rhs = scene.operand_panel(1, dims=rhs_dims)
    result = scene.result_panel(0, dims=out_dims)
    _outline_sources(scene, lhs, 0, WINDOW)
    if result.selected is not None:
        _connect_all(scene, {0: lhs, 1: rhs}, result)
    _note(scene, _settings(scene, "window_strides", "lhs_dilation", "rhs_dilation", "feature_group_count", "batch_group_count"))
    _note(scene, _padding_text(scene))
    return Row([Column([lhs, rhs], gap=26), result], gap=80)


# -- contraction -------------------------------------------------------------------------------


@draws("stablehlo.dot_general")
def dot_general(scene: Scene) -> Block:
    lhs, rhs, result = scene.operand_panel(0), scene.operand_panel(1), scene.result_panel(0)
    for i, panel in ((0, lhs), (1, rhs)):
        _outline_sources(scene, panel, i)
    if result.selected is not None:
        _connect_all(scene, {0: lhs, 1: rhs}, result)
    _note(scene, _dimension_numbers_text(scene) or _dot_text(scene))
    # As a matrix product is drawn on paper: the rhs above the result, the lhs to its left.
    return Row([lhs, Column([rhs, result], gap=30)], gap=50)


def _dot_text(scene: Scene) -> Optional[str]:
    dn = scene.op.attributes.get("dot_dimension_numbers")
    if dn is None:
        return None
    return ", ".join(f"{name} = {list(value)}" for name, value in vars(dn).items() if value)


# -- data movement -----------------------------------------------------------------------------


@draws("stablehlo.pad")
def pad(scene: Scene) -> Block:
    operand, padding_value, result = scene.operand_panel(0), scene.operand_panel(1), scene.result_panel(0)
    low = _ints(scene.op.attributes.get("edge_padding_low"))
    interior = _ints(scene.op.attributes.get("interior_padding"))
    sizes = operand.shape

    def is_padding(index):
        for d, r in enumerate(index):
            j = r - low[d]
            if j < 0 or j % (interior[d] + 1) or j // (interior[d] + 1) >= sizes[d]:
                return True
        return False

    result.shade = lambda index: STRUCTURE if is_padding(index) else None
    padding_value.shade = lambda index: STRUCTURE
    scene.add_legend(scene.say(PADDING_CELLS), STRUCTURE)
    if result.selected is not None:
        _connect_all(scene, {0: operand, 1: padding_value}, result)
    _note(scene, _settings(scene, "edge_padding_low", "edge_padding_high", "interior_padding"))
    return Row([Column([operand, padding_value], gap=26), result], gap=80)


@draws("stablehlo.slice")
def slice_(scene: Scene) -> Block:
    operand, result = scene.operand_panel(0), scene.result_panel(0)
    start = _ints(scene.op.attributes.get("start_indices"))
    limit = _ints(scene.op.attributes.get("limit_indices"))
    strides = _ints(scene.op.attributes.get("strides")) or [1] * len(start)
    kept = LIGHT[2]

    def is_kept(index):
        return all(s <= i < l and (i - s) % st == 0 for i, s, l, st in zip(index, start, limit, strides))

    operand.shade = lambda index: kept if is_kept(index) else None
    scene.add_legend(scene.say(KEPT), kept)
    if start and all(l > s for s, l in zip(start, limit)):
        operand.marks.append(Mark(tuple(start), tuple(l - 1 for l in limit), kept))
    if result.selected is not None:
        scene.connect_sources(operand, 0, result)
    _note(scene, _settings(scene, "start_indices", "limit_indices", "strides"))
    return Row([operand, result], gap=80)


@draws("stablehlo.broadcast_in_dim")
def broadcast_in_dim(scene: Scene) -> Block:
    operand, result = scene.operand_panel(0), scene.result_panel(0)
    dims = _ints(scene.op.attributes.get("broadcast_dimensions"))
    sources = scene.sources(0)
    if result.selected is not None and sources:
        source = tuple(sources[0].index)
        same = LIGHT[0]

        def reads_source(index):
            # Operand dimension i follows result dimension dims[i] (or stays 0 where it has size 1).
            return index != result.selected and all(
                (0 if operand.shape[i] == 1 else index[d]) == source[i] for i, d in enumerate(dims))

        result.shade = lambda index: same if reads_source(index) else None
        scene.add_legend(scene.say(SAME_SOURCE), same)
        scene.connect_sources(operand, 0, result)
    _note(scene, _settings(scene, "broadcast_dimensions"))
    return Row([operand, result], gap=80)


@draws("stablehlo.transpose")
def transpose(scene: Scene) -> Block:
    operand, result = scene.operand_panel(0), scene.result_panel(0)
    if result.selected is not None:
        scene.connect_sources(operand, 0, result)
    _note(scene, _settings(scene, "permutation"))
    return Row([operand, result], gap=80)


@draws("stablehlo.concatenate")
def concatenate(scene: Scene) -> Block:
    names = scene.operand_names()
    axis = int(scene.op.attributes.get("dimension", 0))
    panels = {i: scene.operand_panel(i) for i in range(len(names))}
    result = scene.result_panel(0)
    bounds, offset = [], 0
    for i, panel in panels.items():
        colour = PARTS[i % len(PARTS)]
        panel.shade = lambda index, colour=colour: colour
        scene.add_legend(scene.say(TAKEN_FROM, name=names[i]), colour)
        bounds.append((offset, offset + panel.shape[axis], colour))
        offset += panel.shape[axis]

    def part_of(index):
        return next((colour for lo, hi, colour in bounds if lo <= index[axis] < hi), None)

    result.shade = part_of
    if result.selected is not None:
        _connect_all(scene, panels, result)
    _note(scene, f"dimension = {axis}")
    return Row([Column(list(panels.values())), result], gap=80)


__all__ = ["gather", "scatter", "reduce_window", "convolution", "dot_general", "pad", "slice_", "broadcast_in_dim",
           "transpose", "concatenate"]
