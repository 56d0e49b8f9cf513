"""Graph exports: SVG and JSON from the (cached) layout, DOT as text, PNG through Graphviz.

`graph_view` turns the command line's choices (function, collapse mode, focus) into the view to
draw; `export_graph` writes it in the format the file name asks for.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from hlodbg.engine.ir.core import Module
from hlodbg.engine.ir.opset import owns_callee

from .graph import DataflowGraph, GraphError, build_graph
from .labels import node_tooltip, short_type
from .layout import Layout, check_layout_size, compute_layout, dot_source, layout_engine, quote
from .overlay import Overlay
from .palette import CATEGORIES, CLUSTER_FILLS, style_of
from .svg_png import svg_converter_available

FORMATS = ("svg", "png", "dot", "json")
COLLAPSE_MODES = ("calls", "regions", "groups", "repeats", "none")
# Past this many nodes, ops that own their callee (fusions) are drawn folded by default: a
# compiled transformer has hundreds of fusions, and their insides drown the dataflow between them.
OPEN_OWNED_CALLS_MAX_NODES = 500


@dataclass
class ExportReport:
    path: str
    format: str
    nodes: int
    edges: int
    clusters: int
    seconds: float
    layout_cached: bool
    note: str = ""  # how it was made, when not the usual way (a PNG drawn by Graphviz)


def graph_view(module: Module, function: Optional[str] = None, collapse: str = "calls", focus: Optional[str] = None, radius: int = 2) -> DataflowGraph:
    """The view the export draws.

    collapse="calls": every function (or `function` and its callees) once, call ops as nodes,
    fusions open unless the graph is big; "regions": the same with ops' regions and fusions
    folded into their op; "groups": as "calls" with every group (name stack, repeat, chunk)
    folded, so a function shows its top groups as boxes; "repeats": as "calls" with each
    repeated group (layer i of n) folded to one box and the rest open; "none": `function`
    (default the entry) with every call expanded in place. `focus` keeps the `radius`-hop
    neighbourhood inside the focused node's function (no hop through a call); the groups around
    the focused node stay open, so it is drawn itself."""
    if collapse not in COLLAPSE_MODES:
        raise GraphError(f"--collapse must be one of {', '.join(COLLAPSE_MODES)}, not '{collapse}'")
    if focus is not None and radius < 0:
        raise GraphError("--radius must be 0 or more")
    view = build_graph(module, function=function, inline_calls=collapse == "none")
    target = view.resolve(focus) if focus is not None else None
    folded: list[str] = []
    if collapse == "regions":
        folded = [cid for cid, c in view.clusters.items() if c.kind == "op"]
    elif collapse != "none" and view.node_count > OPEN_OWNED_CALLS_MAX_NODES:
        folded = [cid for cid, c in view.clusters.items() if c.kind == "op" and c.op is not None and owns_callee(c.op.name)]
    if collapse == "groups":
        folded += [cid for cid, c in view.clusters.items() if c.kind == "group"]
    elif collapse == "repeats":
        folded += [cid for cid, c in view.clusters.items() if c.kind == "group" and c.fold == "repeat"]
    if target is not None:  # the focused op is drawn, not the layer or chunk folded around it
        around = _enclosing_clusters(view, target)  # (a region folded into its op stays folded)
        folded = [cid for cid in folded if cid not in around or view.clusters[cid].kind != "group"]
    if folded:
        view = view.collapse(*folded)
    if target is not None:
        view = view.focus(view.shown_as(target), radius)
    return view


def folded_view(module: Module, fold_above: int) -> tuple[DataflowGraph, str]:
    """(the view, its collapse mode) a picture of the whole program draws at a bounded size:
    `graph_view(collapse="calls")` up to `fold_above` nodes, else the same view with every group
    folded ("groups": a function's top groups as boxes, as `export --collapse groups` draws a 100k-op
    program), made from the first without building the graph again."""
    view = graph_view(module, collapse="calls")
    if view.node_count <= fold_above:
        return view, "calls"
    groups = [cid for cid, c in view.clusters.items() if c.kind == "group"]
    return (view.collapse(*groups) if groups else view), "groups"


def _enclosing_clusters(view: DataflowGraph, node: str) -> set[str]:
    cid = view.cluster_of(node)
    around = set()
    while cid is not None:
        around.add(cid)
        cid = view.clusters[cid].parent
    return around


def format_of(path: str, explicit: Optional[str] = None) -> str:
    fmt = (explicit or Path(path).suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise GraphError(f"cannot tell the format of '{path}': use a name ending in .svg, .png, .dot or .json (or --format)")
    return fmt


def export_graph(view: DataflowGraph, path: str, fmt: Optional[str] = None, overlay: Optional[Overlay] = None, title: Optional[str] = None, use_cache: bool = True, timeout: Optional[float] = None, engine: str = "auto") -> ExportReport:
    """Write the view to `path` ("-" for standard output) and say what was written. `engine`
    lays out SVG, PNG and JSON (layout.compute_layout); a PNG is the SVG converted by
    rsvg-convert (svg_png.py), or with the Graphviz engine Graphviz's own drawing."""
    fmt = format_of(path, fmt)
    started = time.perf_counter()
    cached = False
    note = ""
    if fmt == "dot":
        data: bytes = styled_dot(view, overlay).encode("utf-8")
    elif fmt == "png" and (layout_engine(view, engine) == "graphviz" or not svg_converter_available()):
        # Without rsvg-convert a PNG is still made, by Graphviz (which hlodbg's dependencies bring):
        # its own drawing of the same graph, with Graphviz's edges rather than the SVG's.
        data = _graphviz_png(view, overlay, timeout)
        if layout_engine(view, engine) != "graphviz":
            note = ("drawn by Graphviz: rsvg-convert (librsvg), which turns hlodbg's own SVG into a PNG, "
                    "was not found; install it for the PNG of the SVG's drawing")
    else:
        layout = compute_layout(view, use_cache=use_cache, timeout=timeout, engine=engine)
        cached = layout.cached
        if fmt in ("svg", "png"):
            from .svg import render_svg

            data = render_svg(view, layout, overlay=overlay, title=title).encode("utf-8")
            if fmt == "png":
                from .svg_png import fitting_zoom, svg_to_png

                svg = data.decode("utf-8")
                data = svg_to_png(svg, zoom=fitting_zoom(svg), timeout=timeout)
        else:
            data = json.dumps(graph_json(view, layout, overlay, title), indent=1, ensure_ascii=False).encode("utf-8")
    if path == "-":
        import sys

        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        try:
            Path(path).write_bytes(data)
        except OSError as e:
            raise GraphError(f"cannot write {path}: {e.strerror or e}") from None
    return ExportReport(path, fmt, view.node_count, view.graph.number_of_edges(), len(view.clusters), time.perf_counter() - started, cached,
                        note)


def _graphviz_png(view: DataflowGraph, overlay: Optional[Overlay], timeout: Optional[float]) -> bytes:
    """The PNG Graphviz draws of the styled DOT (`--engine graphviz`)."""
    from .graphviz import run_graphviz

    check_layout_size(view)
    return run_graphviz(styled_dot(view, overlay), "png", timeout=timeout)


def styled_dot(view: DataflowGraph, overlay: Optional[Overlay] = None) -> str:
    """DOT with colours, tooltips and a legend: renders like our SVG with any Graphviz."""

    def decorate(kind: str, key, data) -> dict:
        if kind == "node":
            category = data["category"]
            style = style_of(category)
            fill = overlay.fills.get(key, style.fill) if overlay else style.fill
            attrs = {"style": "filled" if data["kind"] == "argument" else "rounded,filled", "fillcolor": fill, "color": style.border, "tooltip": "\n".join(node_tooltip(view, key, overlay.tooltips.get(key, ()) if overlay else ()))}
            if data["kind"] == "collapsed":
                attrs["peripheries"] = 2
            if overlay and key in overlay.badges:
                attrs["xlabel"] = overlay.badges[key]
            return attrs
        if kind == "cluster":
            return {"style": "rounded,filled", "fillcolor": CLUSTER_FILLS.get(data.kind, "#ffffff"), "color": "#b8b8b8"}
        u, v, _ = key
        if data["kind"] == "call":
            return {"color": "#7a7a7a", "tooltip": f"call of @{view.graph.nodes[v]['function']}"}
        target = view.graph.nodes[v]
        return {"color": "#5a5a5a", "fontcolor": "#6a6a6a", "tooltip": f"{data['value']} : {data['type']} → operand {data['operand']} of {target['name'] or target['mnemonic']}"}

    text = dot_source(view, decorate=decorate)
    legend = _legend_entries(view, overlay)
    lines = ["  subgraph cluster_legend {", f"    graph {_legend_graph_attrs()};"]
    for i, (label, fill) in enumerate(legend):
        lines.append(f"    legend_{i} [label={quote(label)}, style=\"rounded,filled\", fillcolor={quote(fill)}, color=\"#808080\"];")
    lines += [f"    legend_{i} -> legend_{i + 1} [style=invis];" for i in range(len(legend) - 1)]
    lines.append("  }")
    closing = text.rstrip().rfind("}")
    return text[:closing] + "\n".join(lines) + "\n}\n"


def _legend_graph_attrs() -> str:
    return '[label="legend", style="rounded", color="#b8b8b8"]'


def _legend_entries(view: DataflowGraph, overlay: Optional[Overlay]) -> list[tuple[str, str]]:
    present = {data["category"] for _, data in view.graph.nodes(data=True)}
    entries = [(style.title, style.fill) for name, style in CATEGORIES.items() if name in present]
    if overlay is not None:
        entries += [(f"{overlay.title}: {entry.label}", entry.fill) for entry in overlay.legend]
    return entries


def graph_json(view: DataflowGraph, layout: Layout, overlay: Optional[Overlay] = None, title: Optional[str] = None) -> dict:
    """The graph with its layout for other tools (points, origin top-left, y down)."""
    nodes = []
    for node, data in view.graph.nodes(data=True):
        box = layout.nodes.get(node)
        op = data.get("op")
        entry = {
            "id": node,
            "kind": data["kind"],
            "name": data["name"],
            "op": data["mnemonic"],
            "category": data["category"],
            "label": data["label"],
            "function": data["function"],
            "cluster": data.get("cluster"),
            "location": data.get("location") or None,
            "line": data.get("line"),
            "types": [short_type(v.type) for v in op.results] if op is not None else [short_type(data["value"].type)] if data.get("value") is not None else [],
            "fill": (overlay.fills.get(node) if overlay else None) or style_of(data["category"]).fill,
            "tooltip": node_tooltip(view, node, overlay.tooltips.get(node, ()) if overlay else ()),
        }
        if data["kind"] == "collapsed" or data.get("collapsed"):
            entry["collapsed"] = data["collapsed"]
            entry["count"] = data["count"]
        if overlay is not None and node in overlay.badges:
            entry["badge"] = overlay.badges[node]
        if box is not None:
            entry.update(x=box.x, y=box.y, width=box.width, height=box.height)
        nodes.append(entry)
    edges = []
    for route in layout.edges:
        data = view.graph.edges[route.tail, route.head, route.key]
        edges.append({"source": route.tail, "target": route.head, "kind": data["kind"], "operand": data["operand"], "value": data["value"], "type": data["type"], "captured": bool(data.get("captured")), "points": route.points, "arrow": route.arrow, "label_pos": route.label_pos})
    clusters = []
    for cid, cluster in view.clusters.items():
        entry = {"id": cid, "kind": cluster.kind, "label": cluster.label, "parent": cluster.parent, "function": cluster.function}
        if cluster.fold is not None:
            entry["fold"] = cluster.fold  # a group's kind: names, repeat or chunk
        box = layout.clusters.get(cid)
        if box is not None:
            entry.update(x0=box.x0, y0=box.y0, x1=box.x1, y1=box.y1)
        clusters.append(entry)
    calls = view.call_graph()
    return {
        "format": "hlodbg.graph",
        "version": 1,
        "title": title,
        "root": view.root,
        "inline_calls": view.inline,
        "units": "pt",
        "width": layout.width,
        "height": layout.height,
        "nodes": nodes,
        "edges": edges,
        "clusters": clusters,
        "legend": [{"label": label, "fill": fill} for label, fill in _legend_entries(view, None)],
        "overlay": None if overlay is None else {"title": overlay.title, "legend": [{"label": e.label, "fill": e.fill} for e in overlay.legend]},
        "call_graph": [{"caller": u, "callee": v, "count": d["count"]} for u, v, d in calls.edges(data=True)],
    }


__all__ = ["ExportReport", "FORMATS", "COLLAPSE_MODES", "graph_view", "folded_view", "export_graph", "styled_dot", "graph_json", "format_of"]
