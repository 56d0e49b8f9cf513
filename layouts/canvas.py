"""Painting a terminal Scene: characters and a tag per cell for a window of it.

Edges are painted first (box-drawing strokes merged where they meet or cross), then cluster
borders where no edge runs, then boxes on top. A tag says what a cell shows (("box", node),
("edge", source), ("cluster", id)) so a UI can style runs and map clicks back to nodes.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .scene import Cell, Scene, SceneBox, SceneCluster, SceneEdge, polyline_cells

# Edge cells carry a 6-bit mask: arms toward the neighbouring cells and diagonal strokes. Merging
# the masks of every edge through a cell gives junctions (├ ┬) and crossings (┼ ╳) for free.
UP, DOWN, LEFT, RIGHT, BACKSLASH, SLASH = 1, 2, 4, 8, 16, 32
ARM_GLYPHS = {0: " ", UP: "│", DOWN: "│", UP | DOWN: "│", LEFT: "─", RIGHT: "─", LEFT | RIGHT: "─", UP | RIGHT: "╰", UP | LEFT: "╯", DOWN | RIGHT: "╭", DOWN | LEFT: "╮", UP | DOWN | RIGHT: "├", UP | DOWN | LEFT: "┤", UP | LEFT | RIGHT: "┴", DOWN | LEFT | RIGHT: "┬", UP | DOWN | LEFT | RIGHT: "┼"}


DIAGONAL_GLYPHS = {BACKSLASH: "╲", SLASH: "╱", BACKSLASH | SLASH: "╳"}
GLYPHS = np.array([ord("┼" if mask & 15 and mask & 48 else DIAGONAL_GLYPHS[mask & 48] if mask & 48 else ARM_GLYPHS[mask]) for mask in range(64)], dtype=np.uint32)
# Steps between neighbouring cells, indexed by (dx + 1) * 3 + (dy + 1).
_STEPS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
_ARM_NEXT = np.array([{(0, -1): UP, (0, 1): DOWN, (-1, 0): LEFT, (1, 0): RIGHT}.get(s, 0) for s in _STEPS], dtype=np.uint8)
_ARM_PREV = np.array([{(0, 1): UP, (0, -1): DOWN, (1, 0): LEFT, (-1, 0): RIGHT}.get(s, 0) for s in _STEPS], dtype=np.uint8)
_IS_DIAGONAL = np.array([dx != 0 and dy != 0 for dx, dy in _STEPS])
_STRAIGHT = np.array([UP | DOWN if dx == 0 else LEFT | RIGHT if dy == 0 else BACKSLASH if dx == dy else SLASH for dx, dy in _STEPS], dtype=np.uint8)
ARROWS = {"above": "▼", "below": "▲", "left": "▶", "right": "◀"}
CLUSTER_GLYPHS = {"top_left": "┌", "top_right": "┐", "bottom_left": "└", "bottom_right": "┘", "horizontal": "┄", "vertical": "┆"}


# ----------------------------------------------------------------------------------
def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


class Raster:
    """Everything painting needs, computed once per scene: every edge cell with its merged glyph
    (sorted by row, so a window takes one slice), box rectangles as arrays, box glyphs on demand."""

    def __init__(self, scene: Scene):
        self.tags: list[Optional[tuple[str, str]]] = [None]
        self._tag_ids: dict[tuple[str, str], int] = {}
        index = scene.box_index()
        self.box_nodes = index.box_nodes
        self.box_x, self.box_y, self.box_w, self.box_h = index.box_x, index.box_y, index.box_w, index.box_h
        self.box_tags = np.array([self.tag_id(("box", n)) for n in self.box_nodes], dtype=np.int32)
        self.cluster_tags = {cid: self.tag_id(("cluster", cid)) for cid in scene.clusters}
        self._box_glyphs: dict[str, np.ndarray] = {}
        self._index_edges(scene)

    def tag_id(self, tag: tuple[str, str]) -> int:
        if tag not in self._tag_ids:
            self._tag_ids[tag] = len(self.tags)
            self.tags.append(tag)
        return self._tag_ids[tag]

    def _index_edges(self, scene: Scene) -> None:
        parts_x, parts_y, parts_mask, parts_tag = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0, np.uint8)], [np.zeros(0, np.int32)]
        arrows = []
        for edge in scene.edges:
            xs, ys, masks = _trace(edge.points, scene.boxes[edge.source])
            tag = self.tag_id(("edge", edge.source))
            parts_x.append(xs)
            parts_y.append(ys)
            parts_mask.append(masks)
            parts_tag.append(np.full(xs.size, tag, dtype=np.int32))
            arrows.append((ys[-1] * (scene.width + 1) + xs[-1], ord(_arrow(edge, scene.boxes[edge.target])), tag))
        stride = scene.width + 1
        keys, inverse = np.unique(np.concatenate(parts_y) * stride + np.concatenate(parts_x), return_inverse=True)
        merged = np.zeros(keys.size, dtype=np.uint8)
        np.bitwise_or.at(merged, inverse, np.concatenate(parts_mask))
        self.edge_tag = np.full(keys.size, np.iinfo(np.int32).max, dtype=np.int32)
        np.minimum.at(self.edge_tag, inverse, np.concatenate(parts_tag))  # the first edge's tag
        self.edge_x, self.edge_y = keys % stride, keys // stride
        self.edge_glyph = GLYPHS[merged]
        for key, glyph, tag in arrows:  # arrowheads win over lines through the same cell
            where = np.searchsorted(keys, key)
            self.edge_glyph[where], self.edge_tag[where] = glyph, tag
        self.row_start = np.searchsorted(self.edge_y, np.arange(scene.height + 2))

    def box_glyphs(self, box: SceneBox) -> np.ndarray:
        glyphs = self._box_glyphs.get(box.node)
        if glyphs is None:
            inner = box.width - 2
            rows = ["╭" + "─" * inner + "╮"]
            rows += ["│" + line.center(inner)[:inner] + "│" for line in box.lines[:box.height - 2]]
            rows += ["│" + " " * inner + "│"] * (box.height - 2 - len(box.lines))
            rows.append("╰" + "─" * inner + "╯")
            glyphs = _codes("".join(rows)).reshape(box.height, box.width)
            self._box_glyphs[box.node] = glyphs
        return glyphs


def _trace(points: list[Cell], source: SceneBox) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every cell of a polyline with its stroke mask."""
    xs, ys = polyline_cells(points)
    masks = np.zeros(xs.size, dtype=np.uint8)
    side = source.side_of(points[0])
    toward_source = {"below": UP, "above": DOWN, "right": LEFT, "left": RIGHT}.get(side, 0)
    if xs.size == 1:
        masks[0] = toward_source | (UP | DOWN if toward_source in (UP, DOWN) else LEFT | RIGHT)
        return xs, ys, masks
    steps = (np.diff(xs) + 1) * 3 + (np.diff(ys) + 1)
    incoming, outgoing = steps[:-1], steps[1:]
    # A bend between a straight and a diagonal step keeps the incoming stroke: a corner glyph
    # would suggest a branch where there is none.
    middle = np.where(_IS_DIAGONAL[incoming] | _IS_DIAGONAL[outgoing], _STRAIGHT[incoming], _ARM_PREV[incoming] | _ARM_NEXT[outgoing])
    masks[1:-1] = middle
    masks[0] = _STRAIGHT[steps[0]] if _IS_DIAGONAL[steps[0]] else toward_source | _ARM_NEXT[steps[0]]
    masks[-1] = _STRAIGHT[steps[-1]]
    return xs, ys, masks


def _arrow(edge: SceneEdge, target: SceneBox) -> str:
    """The arrowhead pointing from the edge's last cell into its target box."""
    side = target.side_of(edge.points[-1])
    x, y = edge.points[-1]
    touching = (target.x - 1 <= x <= target.x + target.width) and (target.y - 1 <= y <= target.y + target.height)
    if side is not None and (touching or len(edge.points) == 1):
        return ARROWS[side]
    if len(edge.points) > 1:  # inside the box (boxes that touch): follow the last segment
        (ax, ay), (bx, by) = edge.points[-2], edge.points[-1]
        if abs(bx - ax) > 2 * abs(by - ay):
            return "▶" if bx > ax else "◀"
        return "▼" if by >= ay else "▲"
    return "▼"


@dataclass
class Canvas:
    """A painted window: `chars` and `tag_ids` are (height, width) arrays; `tags[tag_id]` is
    None or ("box", node) / ("edge", source node) / ("cluster", cluster id)."""

    x0: int  # the scene cell shown at the canvas's top-left
    y0: int
    chars: np.ndarray
    tag_ids: np.ndarray
    tags: list

    @property
    def width(self) -> int:
        return self.chars.shape[1]

    @property
    def height(self) -> int:
        return self.chars.shape[0]

    def lines(self) -> list[str]:
        if self.width == 0:
            return [""] * self.height
        return np.ascontiguousarray(self.chars).view(f"<U{self.width}").ravel().tolist()

    def text(self) -> str:
        return "\n".join(self.lines())

    def tag_at(self, x: int, y: int) -> Optional[tuple[str, str]]:
        """The tag of canvas cell (x, y), counted from the canvas's top-left (scene cell x0+x, y0+y)."""
        if not (0 <= x < self.width and 0 <= y < self.height):
            return None
        return self.tags[self.tag_ids[y, x]]

    def spans(self) -> list[list[tuple[str, Optional[tuple[str, str]]]]]:
        """Per row, runs of (text, tag) with one tag each, left to right."""
        out = []
        for text, row in zip(self.lines(), self.tag_ids):
            if row.size == 0:
                out.append([])
                continue
            cuts = [0, *(np.flatnonzero(row[1:] != row[:-1]) + 1).tolist(), row.size]
            out.append([(text[a:b], self.tags[row[a]]) for a, b in zip(cuts, cuts[1:])])
        return out


_RASTERS: "weakref.WeakKeyDictionary[Scene, Raster]" = weakref.WeakKeyDictionary()


def raster_of(scene: Scene) -> Raster:
    """The scene's Raster, built on first use and kept as long as the scene lives."""
    raster = _RASTERS.get(scene)
    if raster is None:
        raster = _RASTERS[scene] = Raster(scene)
    return raster


def use_raster(scene: Scene, raster: Raster) -> None:
    """Paint `scene` with this raster (a zoomed scene draws its boxes its own way)."""
    _RASTERS[scene] = raster


def paint(scene: Scene, x0: int = 0, y0: int = 0, width: Optional[int] = None, height: Optional[int] = None) -> Canvas:
    """Characters and tags for the window of `width` x `height` cells at scene cell (x0, y0)
    (the rest of the scene by default). Edges first, then cluster borders where no edge runs,
    cluster labels, and boxes on top."""
    width = max(0, scene.width - x0 if width is None else width)
    height = max(0, scene.height - y0 if height is None else height)
    x1, y1 = x0 + width, y0 + height
    raster = raster_of(scene)
    chars = np.full((height, width), ord(" "), dtype=np.uint32)
    tag_ids = np.zeros((height, width), dtype=np.int32)
    lo = raster.row_start[min(max(y0, 0), raster.row_start.size - 1)]
    hi = raster.row_start[min(max(y1, 0), raster.row_start.size - 1)]
    xs, ys = raster.edge_x[lo:hi], raster.edge_y[lo:hi]
    inside = (xs >= x0) & (xs < x1)
    rows, columns = ys[inside] - y0, xs[inside] - x0
    chars[rows, columns] = raster.edge_glyph[lo:hi][inside]
    tag_ids[rows, columns] = raster.edge_tag[lo:hi][inside]
    has_edge = tag_ids != 0
    for cid, cluster in scene.clusters.items():
        if cluster.x < x1 and cluster.x + cluster.width > x0 and cluster.y < y1 and cluster.y + cluster.height > y0:
            _paint_cluster(chars, tag_ids, has_edge, cluster, raster.cluster_tags[cid], x0, y0)
    visible = np.flatnonzero((raster.box_x < x1) & (raster.box_x + raster.box_w > x0) & (raster.box_y < y1) & (raster.box_y + raster.box_h > y0))
    for index in visible.tolist():
        box = scene.boxes[raster.box_nodes[index]]
        left, right = max(box.x, x0), min(box.x + box.width, x1)
        top, bottom = max(box.y, y0), min(box.y + box.height, y1)
        chars[top - y0:bottom - y0, left - x0:right - x0] = raster.box_glyphs(box)[top - box.y:bottom - box.y, left - box.x:right - box.x]
        tag_ids[top - y0:bottom - y0, left - x0:right - x0] = raster.box_tags[index]
    return Canvas(x0, y0, chars, tag_ids, raster.tags)


def _paint_cluster(chars: np.ndarray, tag_ids: np.ndarray, has_edge: np.ndarray, cluster: SceneCluster, tag: int, x0: int, y0: int) -> None:
    """A dashed border (left open where edges cross it) with the label on the top border."""
    height, width = chars.shape
    left, top = cluster.x - x0, cluster.y - y0
    right, bottom = left + cluster.width - 1, top + cluster.height - 1
    cols, rows = slice(max(left, 0), min(right + 1, width)), slice(max(top, 0), min(bottom + 1, height))
    border = np.zeros((rows.stop - rows.start, cols.stop - cols.start), dtype=np.uint32)
    g = {k: ord(v) for k, v in CLUSTER_GLYPHS.items()}
    for col, glyph in ((left, g["vertical"]), (right, g["vertical"])):
        if 0 <= col < width:
            border[:, col - cols.start] = glyph
    for row, ends in ((top, ("top_left", "top_right")), (bottom, ("bottom_left", "bottom_right"))):
        if 0 <= row < height:
            border[row - rows.start, :] = g["horizontal"]
            for col, corner in zip((left, right), ends):
                if 0 <= col < width:
                    border[row - rows.start, col - cols.start] = g[corner]
    write = (border != 0) & ~has_edge[rows, cols]
    chars[rows, cols][write] = border[write]
    tag_ids[rows, cols][write] = tag
    label = f" {cluster.label} "[:max(0, cluster.width - 4)]
    start, stop = max(left + 2, 0), min(left + 2 + len(label), width)
    if label and 0 <= top < height and start < stop:
        chars[top, start:stop] = _codes(label)[start - left - 2:stop - left - 2]
        tag_ids[top, start:stop] = tag


__all__ = ["Canvas", "Raster", "paint", "raster_of", "use_raster"]
