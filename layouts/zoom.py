"""Zoomed-out scenes: the same layout squeezed, with one-line boxes or one cell per node.

Zooming needs no new Graphviz layout: runs of columns and rows that hold no box are squeezed,
boxes shrink to their title (compact) or to a dot, and edges are re-fitted between them.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .canvas import Raster, use_raster
from .scene import Scene, SceneBox, SceneCluster, SceneEdge, fit_route

ZOOM_LEVELS = ("full", "compact", "dots")
DOTS_COLUMN_SCALE = 6  # scene columns per overview cell: boxes in a rank stay a cell or more apart
DOT_GLYPHS = {"op": "●", "return": "◉", "argument": "○", "collapsed": "◆"}


# ----------------------------------------------------------------------------------
def _axis_map(runs: list[tuple[int, int, bool]], size: int, squeeze: Callable[[int], float]) -> Callable[[np.ndarray], np.ndarray]:
    """A monotone map of one axis (to whole cells) that shrinks every stretch of `length` cells
    outside `runs` to `squeeze(length)`; a run (start, end, collapse) keeps its length, or
    becomes one cell when `collapse` is set or it overlaps a run that has it."""
    merged: list[list] = []
    for start, end, collapse in sorted(runs):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            merged[-1][2] |= collapse
        else:
            merged.append([start, end, collapse])
    points, values = [0.0], [0.0]
    position, previous_end = 0.0, 0
    for start, end, collapse in merged:
        position += squeeze(start - previous_end)
        points.append(float(start))
        values.append(position)
        position += 1 if collapse else end - start
        points.append(float(end))
        values.append(position)
        previous_end = end
    points.append(float(max(size, previous_end) + 1))
    values.append(position + squeeze(max(size, previous_end) + 1 - previous_end))
    xp, fp = np.array(points), np.array(values)
    return lambda coordinates: np.floor(np.interp(np.asarray(coordinates, dtype=np.float64), xp, fp)).astype(np.int64)


def _compact_text(box: SceneBox) -> str:
    return "[" + ("▸" if box.cluster else "") + (box.lines[0] if box.lines else box.name) + "]"


class _GlyphRaster(Raster):
    """A Raster whose boxes are one-line texts (compact zoom) or single glyphs (dots zoom)."""

    def __init__(self, scene: Scene, texts: dict[str, str]):
        self._texts = texts
        super().__init__(scene)

    def box_glyphs(self, box: SceneBox) -> np.ndarray:
        glyphs = self._box_glyphs.get(box.node)
        if glyphs is None:
            glyphs = np.frombuffer(self._texts[box.node].encode("utf-32-le"), dtype=np.uint32).reshape(1, -1)
            self._box_glyphs[box.node] = glyphs
        return glyphs


def zoomed_scene(scene: Scene, level: int) -> Scene:
    """`scene` at zoom `level` (0 full, 1 compact, 2 dots), from its cell coordinates alone."""
    if level <= 0 or not scene.boxes:
        return scene
    compact = level == 1
    texts = {node: _compact_text(box) if compact else DOT_GLYPHS.get(box.kind, "●") for node, box in scene.boxes.items()}
    border_rows = [(y, y + 1, False) for c in scene.clusters.values() for y in (c.y, c.y + c.height - 1)]
    map_y = _axis_map([(b.y, b.y + b.height, True) for b in scene.boxes.values()] + border_rows, scene.height, lambda length: min(length, 1))
    border_columns = [(x, x + 1, False) for c in scene.clusters.values() for x in (c.x, c.x + c.width - 1)]
    if compact:  # boxes keep their columns (as wide as their text), empty columns go
        map_x = _axis_map([(b.x, b.x + len(texts[n]), False) for n, b in scene.boxes.items()] + border_columns, scene.width, lambda length: min(length, 2))
        starts = {n: int(map_x([b.x])[0]) for n, b in scene.boxes.items()}
    else:  # everything scaled down but cluster borders, so nested clusters stay apart
        map_x = _axis_map(border_columns, scene.width, lambda length: length / DOTS_COLUMN_SCALE)
        starts = {n: int(map_x([b.x + b.width / 2])[0]) for n, b in scene.boxes.items()}
    boxes: dict[str, SceneBox] = {}
    taken: dict[int, list[tuple[int, int]]] = {}  # row -> occupied column spans
    for node, box in sorted(scene.boxes.items(), key=lambda item: (item[1].y, item[1].x)):
        row, column, width = int(map_y([box.y])[0]), starts[node], len(texts[node])
        spans = taken.setdefault(row, [])
        while True:  # boxes of overlapping rows can meet on one line; push right past them
            blockers = [end for start, end in spans if start < column + width and column < end]
            if not blockers:
                break
            column = max(blockers)
        spans.append((column, column + width))
        boxes[node] = SceneBox(node, column, row, width, 1, [texts[node]], box.kind, box.category, box.name, box.cluster)
    clusters = {}
    for cid, c in scene.clusters.items():
        x0, y0 = int(map_x([c.x])[0]), int(map_y([c.y])[0])
        x1, y1 = int(map_x([c.x + c.width - 1])[0]) + 1, int(map_y([c.y + c.height - 1])[0]) + 1
        clusters[cid] = SceneCluster(cid, c.label, c.kind, x0, y0, max(x1 - x0, 2), max(y1 - y0, 2))
    edges = []
    for edge in scene.edges:
        xs, ys = map_x([p[0] for p in edge.points]), map_y([p[1] for p in edge.points])
        points = list(dict.fromkeys(zip(xs.tolist(), ys.tolist())))
        edges.append(SceneEdge(edge.source, edge.target, edge.value, edge.kind, fit_route(points, boxes[edge.source], boxes[edge.target]), edge.captured))
    return _shifted_scene(scene, boxes, edges, clusters, texts)


def _shifted_scene(scene: Scene, boxes, edges, clusters, texts) -> Scene:
    """The zoomed parts moved so that no coordinate is negative, in a Scene sized to hold them."""
    extents = [(b.x, b.y, b.x + b.width, b.y + b.height) for b in boxes.values()]
    extents += [(c.x, c.y, c.x + c.width, c.y + c.height) for c in clusters.values()]
    extents += [(x, y, x + 1, y + 1) for e in edges for x, y in e.points]
    dx, dy = -min(0, *(e[0] for e in extents)), -min(0, *(e[1] for e in extents))
    for item in (*boxes.values(), *clusters.values()):
        item.x, item.y = item.x + dx, item.y + dy
    for edge in edges:
        edge.points = [(x + dx, y + dy) for x, y in edge.points]
    width, height = max(e[2] for e in extents) + dx, max(e[3] for e in extents) + dy
    zoomed = Scene(width, height, boxes, edges, clusters, scene.root, scene.expanded)
    use_raster(zoomed, _GlyphRaster(zoomed, texts))  # it draws the short boxes
    return zoomed


__all__ = ["ZOOM_LEVELS", "DOT_GLYPHS", "zoomed_scene"]
