"""A layout as plain data, whichever engine made it: node boxes, edge routes, cluster rectangles.

Coordinates are points (1/72 in) with the origin at the top-left and y growing downward, as SVG
and terminals count. Graphviz (layout.py) and the layered layout (layered.py) both give a Layout;
the SVG writer and terminal scenes draw either the same way.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

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
    def from_json(cls, data: Any) -> "Layout":
        """The layout `to_json` gave; ValueError for anything else (a cache file of another
        version, truncated, edited or `null`): every field is checked, so a damaged file is a
        cache miss and never a layout that fails later, in the middle of drawing."""
        if not isinstance(data, dict) or data.get("version") != LAYOUT_FORMAT_VERSION:
            raise ValueError("not a layout of this format version")
        try:
            engine = data.get("engine", "graphviz")
            if engine not in ("graphviz", "layered"):
                raise ValueError(f"unknown layout engine {engine!r}")
            out = cls(_number(data["width"]), _number(data["height"]), engine=engine)
            out.nodes = {_name(k): NodeBox(*_numbers(v, 4)) for k, v in _table(data["nodes"]).items()}
            out.edges = [EdgeRoute(_name(t), _name(h), _edge_key(k), [_point(p) for p in _list(pts)], _optional_point(a), _optional_point(lp))
                         for t, h, k, pts, a, lp in (_list(e, 6) for e in _list(data["edges"]))]
            out.clusters = {_name(k): _cluster(v) for k, v in _table(data["clusters"]).items()}
        except (KeyError, TypeError) as e:
            raise ValueError(f"a damaged layout ({type(e).__name__}: {e})") from None
        return out


def _cluster(value: Any) -> ClusterBox:
    x0, y0, x1, y1, label_pos = _list(value, 5)
    x0, y0, x1, y1 = _numbers([x0, y0, x1, y1], 4)
    return ClusterBox(x0, y0, x1, y1, _optional_point(label_pos))


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"expected a coordinate, got {str(value)[:40]!r}")
    return value


def _numbers(values: Any, count: int) -> list[float]:
    return [_number(v) for v in _list(values, count)]


def _point(value: Any) -> Point:
    x, y = _numbers(value, 2)
    return (x, y)


def _optional_point(value: Any) -> Optional[Point]:
    return None if value is None else _point(value)


def _list(value: Any, count: Optional[int] = None) -> list:
    if not isinstance(value, list) or (count is not None and len(value) != count):
        raise ValueError(f"expected a list{f' of {count}' if count is not None else ''}, got {str(value)[:40]!r}")
    return value


def _table(value: Any) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"expected a table, got {str(value)[:40]!r}")
    return value


def _name(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a name, got {str(value)[:40]!r}")
    return value


def _edge_key(value: Any) -> object:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"expected an edge key, got {str(value)[:40]!r}")
    return value


def terminal_box(label: list[str]) -> tuple[int, int]:
    """(columns, rows) of a node's box in a terminal scene: the text plus a border."""
    return max((len(line) for line in label), default=1) + 4, len(label) + 2


__all__ = ["CELL_HEIGHT", "CELL_WIDTH", "CLUSTER_FONT_SIZE", "ClusterBox", "EDGE_FONT_SIZE", "EdgeRoute", "FONT", "LAYOUT_FORMAT_VERSION", "Layout", "NODE_FONT_SIZE", "NodeBox", "Point", "terminal_box"]
