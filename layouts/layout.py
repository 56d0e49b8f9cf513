"""DOT for a graph view, Graphviz layout as plain data, and the layout cache.

The layout depends only on structure and label text, never on colours, tooltips or overlays, so
the DOT handed to Graphviz for layout leaves those out and its hash is the cache key: recolouring
a graph by NaNs or re-exporting it costs no layout. Coordinates are points (1/72 in) with the
origin at the top-left and y growing downward, as SVG and terminals count.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Optional

from .geometry import (
    CELL_HEIGHT,
    CELL_WIDTH,
    CLUSTER_FONT_SIZE,
    EDGE_FONT_SIZE,
    FONT,
    LAYOUT_FORMAT_VERSION,
    NODE_FONT_SIZE,
    ClusterBox,
    EdgeRoute,
    Layout,
    NodeBox,
    Point,
    terminal_box,
)
from .graph import DataflowGraph, GraphError
from .graphviz import GIVE_UP_NOTE, LayoutLimitError, find_graphviz, graphviz_version, run_graphviz
from .layered import layered_layout

BIG_GRAPH_NODES = 800  # above this, cheaper crossing minimisation keeps dot's time near-linear
# No Graphviz layout of more nodes is started: dot's time and memory grow much faster than the
# graph (a 24,000-node graph took it past 21 GB). The layered layout (layered.py) takes any size.
MAX_LAYOUT_NODES = 5000
ENGINES = ("auto", "graphviz", "layered")
# "auto" is the layered layout, at every size: its edges run in lanes between layers, leave and
# enter boxes vertically and cross cluster borders only through ports (layered.py), where
# Graphviz's splines run diagonally across clusters and boxes and its `splines=ortho` leaves and
# enters boxes sideways, through any cluster border (an optimized HLO module, fusions as clusters).
# It is also faster (benchmarks/layout_crossover.py, CPU seconds, Graphviz | layered): gpt_tiny
# 331 nodes 0.20 | 0.03; a 12-layer transformer inlined (1,821 nodes) 3.4 | 0.12; a flat
# function of 1,102 boxes > 60 | 0.43. Graphviz stays available by name (`--engine graphviz`).
LAYERED_VERSION = 5  # part of a layered layout's cache key: bump when its output changes
# Bigger layered layouts are not cached: making the cache key (the layout DOT's hash) and writing
# the layout cost half as much as laying the view out again (at 150,000 nodes: 7 s against 12 s).
CACHED_LAYERED_MAX_NODES = 20_000

def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(items: dict) -> str:
    return "[" + ", ".join(f"{k}={v if isinstance(v, (int, float)) else quote(str(v))}" for k, v in items.items()) + "]"


def edge_list(view: DataflowGraph) -> list[tuple[str, str, object, dict]]:
    """The view's edges in the order DOT numbers them (`id=e<i>`)."""
    return [(u, v, k, d) for u, v, k, d in view.graph.edges(keys=True, data=True)]


def cluster_names(view: DataflowGraph) -> dict[str, str]:
    return {cid: f"cluster_{i}" for i, cid in enumerate(view.clusters)}


# Nesting levels of DOT text indented; deeper clusters (a long chain of calls drawn inline) are
# indented no further.
MAX_INDENT = 32


def dot_source(view: DataflowGraph, terminal: bool = False, decorate=None, extra_graph: Optional[dict] = None) -> str:
    """DOT text for the view. `decorate(kind, id, data) -> dict` adds style attributes (colours,
    tooltips) for exports; layout DOT leaves it None. `terminal` sizes boxes in character cells."""
    big = view.node_count > BIG_GRAPH_NODES
    graph_attrs = {"rankdir": "TB", "compound": "true", "newrank": "true", "fontname": FONT, "fontsize": CLUSTER_FONT_SIZE}
    if terminal:
        graph_attrs.update(nodesep=CELL_WIDTH * 2 / 72, ranksep=CELL_HEIGHT * 1.5 / 72, splines="polyline")
    else:
        graph_attrs.update(nodesep=0.22, ranksep=0.32)
    if big:
        graph_attrs.update(mclimit=0.2, nslimit=2.0, nslimit1=2.0, searchsize=20, forcelabels="true")
    graph_attrs.update(extra_graph or {})
    lines = ["digraph hlodbg {", f"  graph {_attrs(graph_attrs)};", f"  node {_attrs({'shape': 'box', 'fontname': FONT, 'fontsize': NODE_FONT_SIZE, 'margin': '0.08,0.03', 'height': 0.3})};", f"  edge {_attrs({'fontname': FONT, 'fontsize': EDGE_FONT_SIZE, 'arrowsize': 0.6})};"]
    names = cluster_names(view)

    def node_line(node: str, indent: str) -> str:
        data = view.graph.nodes[node]
        attrs: dict = {"label": "\n".join(data["label"])}
        if data["kind"] == "argument":
            attrs["shape"] = "ellipse"
        if terminal:
            columns, rows = terminal_box(data["label"])
            attrs.update(shape="box", fixedsize="true", width=columns * CELL_WIDTH / 72, height=rows * CELL_HEIGHT / 72)
        if decorate is not None:
            attrs.update(decorate("node", node, data))
        return f"{indent}{quote(node)} {_attrs(attrs)};"

    def cluster_lines(top: str) -> None:
        # Clusters nest as deep as calls do (`--collapse none`): a stack of our own, and an indent
        # that stops growing where nobody reads it any more.
        pending: list[tuple[str, int, bool]] = [(top, 1, False)]
        while pending:
            cid, depth, closing = pending.pop()
            indent = "  " * min(depth, MAX_INDENT)
            if closing:
                lines.append(f"{indent}}}")
                continue
            cluster = view.clusters[cid]
            lines.append(f"{indent}subgraph {names[cid]} {{")
            attrs: dict = {"label": cluster.label}
            if decorate is not None:
                attrs.update(decorate("cluster", cid, cluster))
            lines.append(f"{indent}  graph {_attrs(attrs)};")
            for node in cluster.nodes:
                lines.append(node_line(node, indent + "  "))
            pending.append((cid, depth, True))
            pending.extend((child, depth + 1, False) for child in reversed(cluster.children))

    for cid in view.top_clusters():
        cluster_lines(cid)
    for node, data in view.graph.nodes(data=True):
        if data.get("cluster") not in view.clusters:
            lines.append(node_line(node, "  "))
    for i, (u, v, _, data) in enumerate(edge_list(view)):
        attrs = {"id": f"e{i}"}
        if data["kind"] == "call":
            attrs.update(style="dashed", constraint="false")
            head_cluster = view.graph.nodes[v].get("cluster")
            while head_cluster is not None and view.clusters[head_cluster].kind != "function":
                head_cluster = view.clusters[head_cluster].parent
            if head_cluster is not None:
                attrs["lhead"] = names[head_cluster]
        elif not terminal and data.get("type"):
            # A label is a virtual node in every rank its edge crosses, which makes dot ~10x
            # slower on a thousand-op function; big graphs get xlabels, placed after ranking.
            attrs["xlabel" if big else "label"] = data["type"]
        if data.get("captured"):
            attrs["style"] = "dotted"
        if decorate is not None:
            attrs.update(decorate("edge", (u, v, i), data))
        lines.append(f"  {quote(u)} -> {quote(v)} {_attrs(attrs)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _point(text: str) -> Point:
    x, y = text.split(",")[:2]
    return float(x), float(y)


def parse_graphviz_json(data: dict, view_edges: list[tuple[str, str, object, dict]], cluster_ids: dict[str, str]) -> Layout:
    """Graphviz `-Tjson` output as a Layout (y flipped to grow downward)."""
    _, _, width, height = (float(v) for v in data["bb"].split(","))

    def flip(p: Point) -> Point:
        return (round(p[0], 2), round(height - p[1], 2))

    layout = Layout(width, height)
    by_name = {name: cid for cid, name in cluster_ids.items()}
    gvid_to_name = {}
    for obj in data.get("objects", []):
        name = obj.get("name", "")
        if name in by_name:
            x0, y0, x1, y1 = (float(v) for v in obj["bb"].split(","))
            lp = flip(_point(obj["lp"])) if "lp" in obj else None
            layout.clusters[by_name[name]] = ClusterBox(round(x0, 2), round(height - y1, 2), round(x1, 2), round(height - y0, 2), lp)
        elif "pos" in obj:
            x, y = flip(_point(obj["pos"]))
            layout.nodes[name] = NodeBox(x, y, round(float(obj["width"]) * 72, 2), round(float(obj["height"]) * 72, 2))
        gvid_to_name[obj.get("_gvid")] = name
    for edge in data.get("edges", []):
        if "pos" not in edge or "id" not in edge:
            continue
        index = int(edge["id"][1:])
        tail, head, key, _ = view_edges[index]
        points: list[Point] = []
        arrow = None
        for part in edge["pos"].split():
            if part.startswith("e,"):
                arrow = flip(_point(part[2:]))
            elif part.startswith("s,"):
                continue
            else:
                points.append(flip(_point(part)))
        lp = edge.get("xlp") or edge.get("lp")
        lp = flip(_point(lp)) if lp else None
        layout.edges.append(EdgeRoute(tail, head, key if isinstance(key, (int, str)) else str(key), points, arrow, lp))
    return layout


def cache_dir() -> Optional[Path]:
    root = os.environ.get("HLODBG_CACHE_DIR")
    if root:
        return Path(root) / "layouts"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hlodbg" / "layouts"


_memory_cache: dict[str, Layout] = {}


def check_layout_size(view: DataflowGraph) -> None:
    """LayoutLimitError for a view of more nodes than one Graphviz run may lay out."""
    if view.node_count > MAX_LAYOUT_NODES:
        raise LayoutLimitError(f"the graph has {view.node_count:,} nodes, more than the {MAX_LAYOUT_NODES:,} one layout may have", notes=(GIVE_UP_NOTE,))


def layout_engine(view: DataflowGraph, engine: str = "auto") -> str:
    """"graphviz" or "layered": `engine`, or for "auto" HLODBG_LAYOUT_ENGINE when set, else the
    layered layout."""
    if engine == "auto":
        engine = os.environ.get("HLODBG_LAYOUT_ENGINE", "").strip().lower() or "auto"
        if engine not in ENGINES:
            raise GraphError(f"HLODBG_LAYOUT_ENGINE={engine} is not one of {', '.join(ENGINES)}")
    elif engine not in ENGINES:
        raise GraphError(f"the layout engine must be one of {', '.join(ENGINES)}, not '{engine}'")
    return "layered" if engine == "auto" else engine


def compute_layout(view: DataflowGraph, terminal: bool = False, use_cache: bool = True, timeout: Optional[float] = None, engine: str = "auto") -> Layout:
    """Positions and edge routes for the view, from the cache when the same layout was done.
    `engine` picks Graphviz or the layered layout (see layout_engine). Raises LayoutLimitError when Graphviz, asked for by name, is given a view of more than
    MAX_LAYOUT_NODES nodes or cannot lay it out within its time and memory limits (graphviz.py)."""
    chosen = layout_engine(view, engine)
    if chosen == "graphviz":
        check_layout_size(view)
    elif view.node_count > CACHED_LAYERED_MAX_NODES:
        return layered_layout(view, terminal=terminal)
    source = dot_source(view, terminal=terminal)
    if chosen == "graphviz":
        executable = find_graphviz()
        maker = f"{graphviz_version(executable)}"
    else:
        maker = f"layered {LAYERED_VERSION}"
    key = hashlib.sha256(f"{LAYOUT_FORMAT_VERSION}\n{maker}\n{source}".encode("utf-8")).hexdigest()
    if use_cache:
        found = _memory_cache.get(key) or _read_cache(key)
        if found is not None and not all(node in found.nodes for node in view.graph.nodes):
            found = None  # a file of the right form that is not this view's layout: damaged too
        if found is not None:
            _memory_cache[key] = found
            found.cached = True
            return found
    if chosen == "graphviz":
        raw = run_graphviz(source, "json", executable=executable, timeout=timeout)
        layout = parse_graphviz_json(json.loads(raw), edge_list(view), cluster_names(view))
    else:
        layout = layered_layout(view, terminal=terminal)
    if use_cache:
        _memory_cache[key] = layout
        _write_cache(key, layout)
    return layout


def _read_cache(key: str) -> Optional[Layout]:
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / f"{key}.json"
    try:
        if not path.is_file():  # missing, or not a file to read (a FIFO would block)
            return None
        return Layout.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, RecursionError):
        return None  # missing or damaged (from_json checks every field): lay out again and overwrite


def _write_cache(key: str, layout: Layout) -> None:
    folder = cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False) as handle:
            # dumps, not dump: json.dump streams through the pure-Python encoder (5x slower)
            handle.write(json.dumps(layout.to_json(), separators=(",", ":")))
        os.replace(handle.name, folder / f"{key}.json")
    except OSError:
        pass  # a read-only cache only costs speed


def clear_memory_cache() -> None:
    _memory_cache.clear()


__all__ = [
    "CELL_HEIGHT",
    "CELL_WIDTH",
    "ClusterBox",
    "EdgeRoute",
    "Layout",
    "NodeBox",
    "FONT",
    "MAX_LAYOUT_NODES",
    "ENGINES",
    "layout_engine",
    "check_layout_size",
    "compute_layout",
    "dot_source",
    "edge_list",
    "cluster_names",
    "terminal_box",
    "parse_graphviz_json",
    "cache_dir",
    "clear_memory_cache",
    "quote",
]
