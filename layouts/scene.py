"""Terminal scenes: a Graphviz layout snapped to character cells, and painted a window at a time.

A Scene is plain data in integer cells (x to the right, y down, (0, 0) top-left): a box per node
exactly `terminal_box(label)` in size, an edge as a polyline from the cell next to its source box
to the cell next to its target box (where the arrowhead goes), clusters as rectangles. `canvas.paint`
turns the part of a scene inside a window into characters plus a tag per cell, so a UI can style
runs by what they show and map mouse clicks back to nodes.

SceneBuilder lays out one cluster at a time with its child clusters folded into single boxes:
opening a while-loop, a function or a layer costs a layout of what is directly inside it, never
the whole program, and every scene is kept so going back is free.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Optional

import numpy as np

from .cluster_view import ClusterViews
from .graph import DataflowGraph, GraphError
from .graphviz import LayoutLimitError
from .layout import CELL_HEIGHT, CELL_WIDTH, MAX_LAYOUT_NODES, Layout, compute_layout, layout_engine, terminal_box

MAX_SCENE_NODES = MAX_LAYOUT_NODES  # beyond this one scene takes Graphviz too long (the layered layout has no limit)
SCENE_TIMEOUT = 20.0  # seconds one scene's layout may take before the debugger draws less instead
COLLAPSED_PREFIX = "collapsed:"
Cell = tuple[int, int]

DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}




class SceneError(GraphError):
    """A scene request that cannot be met: unknown node or cluster, a scene too large to lay out."""


class SceneTooBig(SceneError, LayoutLimitError):
    """A scene with more nodes than a layout may have: a smaller view of the same part may work."""


@dataclass
class SceneBox:
    node: str
    x: int  # top-left cell
    y: int
    width: int
    height: int
    lines: list[str]  # label lines; the first is the title
    kind: str  # "op", "return", "argument" or "collapsed"
    category: str  # palette category, for styling
    name: str
    cluster: Optional[str] = None  # the cluster this box stands for when it is a folded one

    def contains(self, x: int, y: int) -> bool:
        return self.x <= x < self.x + self.width and self.y <= y < self.y + self.height

    def side_of(self, cell: Cell) -> Optional[str]:
        """Where a cell lies around this box ("above", "below", "left", "right"), None inside."""
        x, y = cell
        if y < self.y or y >= self.y + self.height:
            return "above" if y < self.y else "below"
        if x < self.x or x >= self.x + self.width:
            return "left" if x < self.x else "right"
        return None

    def cell_beside(self, toward: Cell) -> Cell:
        """The cell touching a side of this box nearest to `toward` (above/below preferred)."""
        x, y = toward
        column = min(max(x, self.x), self.x + self.width - 1)
        row = min(max(y, self.y), self.y + self.height - 1)
        side = self.side_of(toward)
        if side == "above" or (side is None and y < self.y + self.height / 2):
            return column, self.y - 1
        if side == "below" or side is None:
            return column, self.y + self.height
        return (self.x - 1, row) if side == "left" else (self.x + self.width, row)


@dataclass
class SceneEdge:
    source: str
    target: str
    value: str  # the SSA value it carries ("" for call edges)
    kind: str  # "data" or "call"
    points: list[Cell]  # from the cell next to the source box to the cell of the arrowhead
    captured: bool = False  # a value a folded region uses from outside it


@dataclass
class SceneCluster:
    id: str
    label: str
    kind: str
    x: int
    y: int
    width: int
    height: int


@dataclass(frozen=True)
class BoxIndex:
    """A scene's boxes as arrays in the order of `Scene.boxes`: rectangles and centres."""

    box_nodes: list[str]
    box_x: np.ndarray
    box_y: np.ndarray
    box_w: np.ndarray
    box_h: np.ndarray
    centre_x: np.ndarray
    centre_y: np.ndarray

    @classmethod
    def of(cls, boxes: Iterable[SceneBox]) -> "BoxIndex":
        boxes = list(boxes)
        x, y, w, h = (np.array([getattr(b, f) for b in boxes], dtype=np.int64) for f in ("x", "y", "width", "height"))
        return cls([b.node for b in boxes], x, y, w, h, x + w / 2.0, y + h / 2.0)


@dataclass(eq=False)
class Scene:
    """Boxes, edges and clusters in cells. Read-only once made: painting indexes it once."""

    width: int
    height: int
    boxes: dict[str, SceneBox]
    edges: list[SceneEdge]
    clusters: dict[str, SceneCluster]  # parents before children
    root: Optional[str] = None  # the cluster this scene shows, None for the whole program
    expanded: frozenset = frozenset()  # clusters drawn open inside the root
    _box_index: Optional["BoxIndex"] = field(default=None, init=False, repr=False)

    def box_index(self) -> "BoxIndex":
        """The boxes as arrays (built on first use), for hit tests, neighbours and painting."""
        if self._box_index is None:
            self._box_index = BoxIndex.of(self.boxes.values())
        return self._box_index

    def box_at(self, x: int, y: int) -> Optional[str]:
        """The node whose box covers cell (x, y), if any."""
        index = self.box_index()
        hits = np.flatnonzero((index.box_x <= x) & (x < index.box_x + index.box_w) & (index.box_y <= y) & (y < index.box_y + index.box_h))
        return index.box_nodes[hits[0]] if hits.size else None

    def bounds_of(self, node: str) -> tuple[int, int, int, int]:
        """(x, y, width, height) of a node's box."""
        box = self.boxes.get(node)
        if box is None:
            raise SceneError(f"node '{node}' is not in this scene")
        return box.x, box.y, box.width, box.height

    def neighbours_in_direction(self, node: str, direction: str) -> Optional[str]:
        """The nearest box that way from `node` ("up", "down", "left", "right"), for arrow keys.

        Boxes within 45° of the direction win over the rest; distance counts a row as two
        columns, since a cell is twice as tall as it is wide."""
        if direction not in DIRECTIONS:
            raise SceneError(f"unknown direction '{direction}' (use up, down, left or right)")
        self.bounds_of(node)
        dx_unit, dy_unit = DIRECTIONS[direction]
        index = self.box_index()
        here = index.box_nodes.index(node)
        dx = index.centre_x - index.centre_x[here]
        dy = (index.centre_y - index.centre_y[here]) * 2.0
        along = dx * dx_unit + dy * dy_unit
        across = np.abs(dx * dy_unit + dy * dx_unit)
        candidates = along > 0
        if not candidates.any():
            return None
        outside_cone = across > along
        distance = np.hypot(along, across)
        order = np.lexsort((distance, outside_cone, ~candidates))
        return index.box_nodes[order[0]]


# --- from a layout to a scene ----------------------------------------------------------------
def scene_from_layout(view: DataflowGraph, layout: Layout, root: Optional[str] = None, expanded: frozenset = frozenset()) -> Scene:
    """Snap a terminal layout (`compute_layout(view, terminal=True)`) to character cells."""
    boxes: dict[str, SceneBox] = {}
    for node, data in view.graph.nodes(data=True):
        placed = layout.nodes.get(node)
        if placed is None:
            raise SceneError(f"the layout has no position for node '{node}'; it was made for another view")
        columns, rows = terminal_box(data["label"])
        # Rounding the top-left corner (not both edges) keeps every box its exact size.
        x = round(placed.x / CELL_WIDTH - columns / 2)
        y = round(placed.y / CELL_HEIGHT - rows / 2)
        boxes[node] = SceneBox(node, x, y, columns, rows, list(data["label"]), data["kind"], data.get("category", ""), data.get("name", ""), data.get("collapsed"))
    _separate_boxes(boxes)
    to_column, to_row = _axis_maps(layout, boxes)
    rows = _boxes_by_row(boxes)
    routes = {(r.tail, r.head, r.key): r for r in layout.edges}
    edges = []
    for u, v, key, data in view.graph.edges(keys=True, data=True):
        route = routes.get((u, v, key if isinstance(key, (int, str)) else str(key)))
        points = _polyline_cells(route, to_column, to_row, rows) if route is not None else []
        ends_on_target = route is None or route.arrow is None or _near(layout.nodes[v], route.arrow)
        edges.append(SceneEdge(u, v, data.get("value", ""), data["kind"], fit_route(points, boxes[u], boxes[v], ends_on_target), bool(data.get("captured"))))
    clusters = _cluster_rects(view, layout, boxes)
    return _normalised_scene(boxes, edges, clusters, layout, root, expanded)


def _axis_maps(layout: Layout, boxes: dict[str, SceneBox]):
    """Point -> fractional cell maps for x and y that send every box side exactly to the cell
    line its rounded box has, and interpolate in between. Plain division would leave a route
    that leaves a box's bottom side half a cell off, on the box's own border row."""
    maps = []
    for axis, cell in ((0, CELL_WIDTH), (1, CELL_HEIGHT)):
        anchors: dict[float, float] = {}
        for node, box in boxes.items():
            start, size = (box.x, box.width) if axis == 0 else (box.y, box.height)
            low = (layout.nodes[node].x if axis == 0 else layout.nodes[node].y) / cell - size / 2
            anchors.setdefault(low, start)
            anchors.setdefault(low + size, start + size)
        known = sorted(anchors.items()) or [(0.0, 0.0)]
        points = np.array([p for p, _ in known], dtype=np.float64)
        cells = np.maximum.accumulate(np.array([c for _, c in known], dtype=np.float64))
        far = 1e9  # past the outermost anchors, one cell per cell
        points = np.concatenate([[points[0] - far], points, [points[-1] + far]])
        cells = np.concatenate([[cells[0] - far], cells, [cells[-1] + far]])
        maps.append(lambda values, p=points, c=cells, size=cell: np.interp(np.asarray(values, dtype=np.float64) / size, p, c))
    return maps


def _boxes_by_row(boxes: dict[str, SceneBox]) -> dict[int, list[SceneBox]]:
    rows: dict[int, list[SceneBox]] = {}
    for box in boxes.values():
        for row in (box.y, box.y + box.height - 1):
            rows.setdefault(row, []).append(box)
    return rows


def _polyline_cells(route, to_column, to_row, border_rows: dict[int, list[SceneBox]]) -> list[Cell]:
    """Graphviz polyline route (start, then control, control, end per segment) in cells.

    Graphviz bends routes on the top and bottom lines of a rank; a bend that lands on a box's
    border row moves to the free row beyond it, so the run does not merge with the border."""
    corners = route.points[::3] + ([route.arrow] if route.arrow is not None else [])
    columns = np.floor(to_column([p[0] for p in corners])).astype(np.int64).tolist()
    rows = np.floor(to_row([p[1] for p in corners])).astype(np.int64).tolist()
    cells = list(zip(columns, rows))
    for k in range(1, len(cells) - 1):
        x, y = cells[k]
        for box in border_rows.get(y, ()):
            if box.x <= x < box.x + box.width:
                cells[k] = (x, box.y - 1 if y == box.y else box.y + box.height)
                break
    return _dedupe(cells)


def _dedupe(points: Iterable[Cell]) -> list[Cell]:
    out: list[Cell] = []
    for point in points:
        if not out or out[-1] != point:
            out.append(point)
    return out


def segment_cells(a: Cell, b: Cell) -> list[Cell]:
    """Cells on the segment a -> b after a, ending at b (one per step, diagonal steps allowed)."""
    steps = max(abs(b[0] - a[0]), abs(b[1] - a[1]))
    return [(a[0] + round((b[0] - a[0]) * t / steps), a[1] + round((b[1] - a[1]) * t / steps)) for t in range(1, steps + 1)]


def polyline_cells(points: list[Cell]) -> tuple[np.ndarray, np.ndarray]:
    """(columns, rows) of every cell of a polyline: its first point, then each segment's cells as
    `segment_cells` gives them, computed as arrays (a scene's edges run to hundreds of thousands
    of cells). numpy rounds halves to even, as Python's `round` does."""
    corners = np.asarray(points, dtype=np.int64).reshape(-1, 2)
    deltas = np.diff(corners, axis=0)
    steps = np.abs(deltas).max(axis=1) if len(deltas) else np.zeros(0, np.int64)
    keep = steps > 0
    corners_from, deltas, steps = corners[:-1][keep], deltas[keep], steps[keep]
    segment = np.repeat(np.arange(steps.size), steps)  # which segment each cell is on
    offsets = np.cumsum(steps) - steps
    t = np.arange(int(steps.sum())) - np.repeat(offsets, steps) + 1  # 1..steps within its segment
    length = np.repeat(steps, steps)  # (delta * t) / steps, in segment_cells' order of rounding
    columns = corners_from[segment, 0] + np.round(deltas[segment, 0] * t / length).astype(np.int64)
    rows = corners_from[segment, 1] + np.round(deltas[segment, 1] * t / length).astype(np.int64)
    return np.concatenate([corners[:1, 0], columns]), np.concatenate([corners[:1, 1], rows])


def _trim_start(points: list[Cell], box: SceneBox) -> Optional[list[Cell]]:
    """The polyline from its first cell outside `box` on; None when it never leaves the box."""
    if not box.contains(*points[0]):
        return points
    for k in range(len(points) - 1):
        for cell in segment_cells(points[k], points[k + 1]):
            if not box.contains(*cell):
                return _dedupe([cell, *points[k + 1:]])
    return None


def _near(box, point) -> bool:
    """Whether a layout point lies on or within a cell of a node's box."""
    return abs(point[0] - box.x) <= box.width / 2 + CELL_WIDTH and abs(point[1] - box.y) <= box.height / 2 + CELL_HEIGHT


def fit_route(points: list[Cell], source: SceneBox, target: SceneBox, ends_on_target: bool = True) -> list[Cell]:
    """Clip a route to the boxes it joins and make it start and end on cells touching them.

    Rounding moves boxes by up to half a cell, so Graphviz's ends can land inside a box or one
    cell short of it; a step to the nearest side cell closes the gap. A route that ends
    elsewhere (a call edge on the border of the function it calls) keeps its end."""
    trimmed = _trim_start(points, source) if points else None
    if trimmed is not None and not ends_on_target:
        return _dedupe([source.cell_beside(trimmed[0]), *trimmed])
    if trimmed is not None:
        reverse = _trim_start(trimmed[::-1], target)
        trimmed = reverse[::-1] if reverse is not None else None
    if trimmed is None:
        target_centre = (target.x + target.width // 2, target.y + target.height // 2)
        source_centre = (source.x + source.width // 2, source.y + source.height // 2)
        trimmed = [source.cell_beside(target_centre), target.cell_beside(source_centre)]
    start = source.cell_beside(trimmed[0])
    end = target.cell_beside(trimmed[-1])
    return _dedupe([start, *trimmed, end])


def _separate_boxes(boxes: dict[str, SceneBox]) -> None:
    """Push a box right past any box it overlaps after rounding (Graphviz keeps two cells of
    space between nodes, so this almost never moves anything)."""
    occupied: dict[int, list[SceneBox]] = {}
    for box in sorted(boxes.values(), key=lambda b: (b.y, b.x)):
        while True:
            blockers = [other for row in range(box.y, box.y + box.height) for other in occupied.get(row, ()) if other.x < box.x + box.width and box.x < other.x + other.width]
            if not blockers:
                break
            box.x = max(other.x + other.width for other in blockers)
        for row in range(box.y, box.y + box.height):
            occupied.setdefault(row, []).append(box)


def _cluster_rects(view: DataflowGraph, layout: Layout, boxes: dict[str, SceneBox]) -> dict[str, SceneCluster]:
    """Cluster rectangles in cells, grown where needed so each keeps a cell of room around its
    boxes and child clusters (children first, so parents grow around grown children)."""
    rects: dict[str, list[int]] = {}
    for cid in view.clusters:
        placed = layout.clusters.get(cid)
        if placed is not None:
            rects[cid] = [math.floor(placed.x0 / CELL_WIDTH), math.floor(placed.y0 / CELL_HEIGHT), math.ceil(placed.x1 / CELL_WIDTH), math.ceil(placed.y1 / CELL_HEIGHT)]
    for cid in reversed(list(view.clusters)):
        if cid not in rects:
            continue
        cluster = view.clusters[cid]
        inner = [(b.x, b.y, b.x + b.width, b.y + b.height) for b in (boxes[n] for n in cluster.nodes if n in boxes)]
        inner += [tuple(rects[c]) for c in cluster.children if c in rects]
        rect = rects[cid]
        for x0, y0, x1, y1 in inner:
            rect[0], rect[1] = min(rect[0], x0 - 1), min(rect[1], y0 - 1)
            rect[2], rect[3] = max(rect[2], x1 + 1), max(rect[3], y1 + 1)
    return {cid: SceneCluster(cid, view.clusters[cid].label, view.clusters[cid].kind, x0, y0, x1 - x0, y1 - y0) for cid, (x0, y0, x1, y1) in rects.items()}


def _normalised_scene(boxes, edges, clusters, layout: Layout, root, expanded) -> Scene:
    """The scene moved so that nothing has a negative coordinate, sized to hold everything."""
    rects = [(b.x, b.y, b.x + b.width, b.y + b.height) for b in boxes.values()] + [(c.x, c.y, c.x + c.width, c.y + c.height) for c in clusters.values()]
    rects += [(x, y, x + 1, y + 1) for e in edges for x, y in e.points]
    dx, dy = -min([0] + [r[0] for r in rects]), -min([0] + [r[1] for r in rects])
    if dx or dy:
        for item in (*boxes.values(), *clusters.values()):
            item.x, item.y = item.x + dx, item.y + dy
        for edge in edges:
            edge.points = [(x + dx, y + dy) for x, y in edge.points]
    width = max([math.ceil(layout.width / CELL_WIDTH)] + [r[2] + dx for r in rects])
    height = max([math.ceil(layout.height / CELL_HEIGHT)] + [r[3] + dy for r in rects])
    return Scene(width, height, boxes, edges, clusters, root, frozenset(expanded))


# --- lazily built scenes -------------------------------------------------------------------------
class SceneBuilder:
    """Scenes of one DataflowGraph, one cluster at a time, each laid out once and kept.

    `scene(cid)` shows what is directly inside cluster `cid`, each child cluster folded into one
    box; `scene()` shows the program: one box per function, or the only function opened."""

    def __init__(self, graph: DataflowGraph, max_nodes: Optional[int] = None, timeout: float = SCENE_TIMEOUT):
        self.graph = graph
        self.max_nodes = MAX_SCENE_NODES if max_nodes is None else max_nodes
        self.timeout = timeout  # per layout; past it Graphviz is stopped (LayoutLimitError)
        self.layouts = 0  # scenes laid out so far (cached scenes do not count)
        self._scenes: dict[tuple, Scene] = {}
        self._failed: dict[tuple, LayoutLimitError] = {}  # scenes Graphviz gave up on (time, memory)
        full = graph.base is graph and not graph.collapsed and graph.kept is None
        self._cluster_views = ClusterViews(graph) if full else None  # views in time of their size

    # --- which cluster ----------------------------------------------------------------------
    def cluster_id(self, cluster_id: Optional[str]) -> Optional[str]:
        """The cluster a request means: None is the program (or its only top cluster); a folded
        box's node id ("collapsed:<cluster>") means that cluster."""
        if cluster_id is None:
            top = self.graph.top_clusters()
            return top[0] if len(top) == 1 else None
        if cluster_id not in self.graph.clusters and cluster_id.startswith(COLLAPSED_PREFIX):
            cluster_id = cluster_id[len(COLLAPSED_PREFIX):]
        if cluster_id not in self.graph.clusters:
            raise SceneError(f"no cluster '{cluster_id}' in this graph")
        return cluster_id

    def parent(self, cluster_id: Optional[str]) -> Optional[str]:
        """The cluster whose scene shows `cluster_id` as a box (None: the program's scene)."""
        cluster_id = self.cluster_id(cluster_id)
        return None if cluster_id is None else self.cluster_id(self.graph.clusters[cluster_id].parent)

    def view(self, cluster_id: Optional[str] = None, expanded: Iterable[str] = ()) -> DataflowGraph:
        """The graph view `scene` lays out: the cluster's contents, children folded unless in
        `expanded` (their own children folded unless expanded too, and so on)."""
        root = self.cluster_id(cluster_id)
        open_ids = {self.cluster_id(c) for c in expanded}
        if self._cluster_views is not None:
            return self._cluster_views.view(root, open_ids)
        return self._derived_view(root, open_ids)

    def _derived_view(self, root: Optional[str], open_ids: set) -> DataflowGraph:
        """`view` by restricting and collapsing: for a graph that is itself a derived view."""
        graph = self.graph
        if root is None:
            base, starts = graph, graph.top_clusters()
        else:
            base, starts = graph.restrict(graph.cluster_nodes(root)), list(graph.clusters[root].children)
        folded, stack = [], list(starts)
        while stack:
            cid = stack.pop()
            if cid in open_ids:
                stack.extend(graph.clusters[cid].children)
            elif cid in base.clusters:
                folded.append(cid)
        return base.collapse(*folded) if folded else base

    # --- scenes --------------------------------------------------------------------------------
    def scene(self, cluster_id: Optional[str] = None, expanded: Iterable[str] = ()) -> Scene:
        root = self.cluster_id(cluster_id)
        open_ids = frozenset(self.cluster_id(c) for c in expanded) - {root}
        key = ("cluster", root, open_ids)
        if key not in self._scenes:
            self._scenes[key] = self._lay_out(self.view(root, open_ids), root, open_ids, key)
        return self._scenes[key]

    def expand(self, cluster_id: str, within: Optional[Scene] = None) -> Scene:
        """`within` (default: the scene holding the cluster's box) with that cluster drawn open."""
        cluster_id = self.cluster_id(cluster_id)
        if within is None:
            within = self.scene(self.parent(cluster_id))
        return self.scene(within.root, within.expanded | {cluster_id})

    def collapse(self, cluster_id: str, within: Scene) -> Scene:
        """`within` with an expanded cluster (and whatever was open inside it) folded again."""
        cluster_id = self.cluster_id(cluster_id)
        inside = self._descendants(cluster_id)
        return self.scene(within.root, within.expanded - inside - {cluster_id})

    def neighbourhood(self, node: str, radius: int, limit: Optional[int] = None) -> Scene:
        """The nodes at most `radius` edges from `node` across the whole graph, in their clusters
        (only the `limit` nearest, if given)."""
        if radius < 0:
            raise SceneError(f"radius must be 0 or more, not {radius}")
        key = ("neighbourhood", node, radius, limit)
        if key not in self._scenes:
            graph = self.graph
            if node not in graph.graph:
                folded = node[len(COLLAPSED_PREFIX):] if node.startswith(COLLAPSED_PREFIX) else None
                if folded not in graph.clusters:
                    raise SceneError(f"no node '{node}' in this graph")
                graph = graph.collapse(folded)
            self._scenes[key] = self._lay_out(graph.focus(node, radius, limit), None, frozenset(), key)
        return self._scenes[key]

    def scene_for_node(self, node: str) -> Scene:
        """The cluster scene in which `node` is drawn as its own box."""
        if node not in self.graph.graph:
            raise SceneError(f"no node '{node}' in this graph")
        return self.scene(self.graph.cluster_of(node))

    def _descendants(self, cluster_id: str) -> set[str]:
        out, stack = set(), list(self.graph.clusters[cluster_id].children)
        while stack:
            cid = stack.pop()
            out.add(cid)
            stack.extend(self.graph.clusters[cid].children)
        return out

    def _lay_out(self, view: DataflowGraph, root: Optional[str], expanded: frozenset, key: tuple) -> Scene:
        engine = layout_engine(view)
        if view.node_count > self.max_nodes and engine == "graphviz":  # the layered layout takes any size
            where = self.graph.clusters[root].label if root else "this view"
            raise SceneTooBig(f"{where} has {view.node_count:,} nodes, more than {self.max_nodes:,} can be laid out")
        if view.node_count == 0:
            return Scene(0, 0, {}, [], {}, root, expanded)
        failed = self._failed.get(key)
        if failed is not None:
            raise failed  # Graphviz gave up on this scene once: asking again costs the same time
        self.layouts += 1
        try:
            layout = compute_layout(view, terminal=True, timeout=self.timeout, engine=engine)
        except LayoutLimitError as e:
            self._failed[key] = e
            raise
        return scene_from_layout(view, layout, root, expanded)


__all__ = ["MAX_SCENE_NODES", "SCENE_TIMEOUT", "Scene", "SceneBox", "SceneBuilder", "SceneCluster", "SceneEdge", "SceneError", "SceneTooBig", "scene_from_layout", "segment_cells", "polyline_cells", "fit_route"]
