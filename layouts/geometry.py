"""A layout as plain data, whichever engine made it: node boxes, edge routes, cluster rectangles.

Coordinates are points (1/72 in) with the origin at the top-left and y growing downward, as SVG
and terminals count. Graphviz (layout.py) and the layered layout (layered.py) both give a Layout;
the SVG writer and terminal scenes draw either the same way.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

FONT = "Arimo"  # metric-compatible with Arial; bundled with graphviz-pure
NODE_FONT_SIZE = 10.0
EDGE_FONT_SIZE = 8.0
CLUSTER_FONT_SIZE = 11.0
# Terminal scenes: one character cell in points. Boxes are sized in cells so the layout scales
# to the character grid exactly.
CELL_WIDTH = 7.0
CELL_HEIGHT = 14.0
LAYOUT_FORMAT_VERSION = 2

Point = tuple[float, float]


@dataclass
class NodeBox:
    x: float  # centre
    y: float
    width: float
    height: float


@dataclass
class EdgeRoute:
    tail: str
    head: str
    key: object
    points: list[Point]  # cubic Bézier: start, then (control, control, end) per segment
    arrow: Optional[Point] = None  # the arrow's tip; the last point is where its base is
    label_pos: Optional[Point] = None


@dataclass
class ClusterBox:
    x0: float
    y0: float
    x1: float
    y1: float
    label_pos: Optional[Point] = None


@dataclass
class Layout:
    width: float
    height: float
    nodes: dict[str, NodeBox] = field(default_factory=dict)
    edges: list[EdgeRoute] = field(default_factory=list)
    clusters: dict[str, ClusterBox] = field(default_factory=dict)
    cached: bool = False  # came from the cache rather than from the layout engine
    engine: str = "graphviz"  # "graphviz" or "layered" (layered.py)

    def to_json(self) -> dict:
        return {
            "version": LAYOUT_FORMAT_VERSION,
            "width": self.width,
            "height": self.height,
            "nodes": {k: [b.x, b.y, b.width, b.height] for k, b in self.nodes.items()},
            "edges": [[e.tail, e.head, e.key, e.points, e.arrow, e.label_pos] for e in self.edges],
            "clusters": {k: [c.x0, c.y0, c.x1, c.y1, c.label_pos] for k, c in self.clusters.items()},
            "engine": self.engine,
        }

    @classmethod
    def from_json(cls, data: dict) -> "Layout":
        if data.get("version") != LAYOUT_FORMAT_VERSION:
            raise ValueError("layout format version")
        out = cls(data["width"], data["height"], engine=data.get("engine", "graphviz"))
        out.nodes = {k: NodeBox(*v) for k, v in data["nodes"].items()}
        out.edges = [EdgeRoute(t, h, k, [tuple(p) for p in pts], tuple(a) if a else None, tuple(lp) if lp else None) for t, h, k, pts, a, lp in data["edges"]]
        out.clusters = {k: ClusterBox(x0, y0, x1, y1, tuple(lp) if lp else None) for k, (x0, y0, x1, y1, lp) in data["clusters"].items()}
        return out


def terminal_box(label: list[str]) -> tuple[int, int]:
    """(columns, rows) of a node's box in a terminal scene: the text plus a border."""
    return max((len(line) for line in label), default=1) + 4, len(label) + 2


__all__ = ["CELL_HEIGHT", "CELL_WIDTH", "CLUSTER_FONT_SIZE", "ClusterBox", "EDGE_FONT_SIZE", "EdgeRoute", "FONT", "LAYOUT_FORMAT_VERSION", "Layout", "NODE_FONT_SIZE", "NodeBox", "Point", "terminal_box"]
