"""A graph view and its Graphviz layout drawn as a standalone SVG 1.1 document.

Drawn by hand rather than by Graphviz's own SVG writer so that styles live in one `<style>`
block (files stay small), every node and edge carries data-* attributes and a full tooltip,
overlays recolour nodes without a new layout, and the legend sits beside the drawing.

Coordinates are the layout's points with y growing downward; the document's width and height are
given in pt, so a 10-unit font is the 10 pt font Graphviz measured the boxes with.
"""
from __future__ import annotations

import math
import re
from typing import Iterable, Optional

from .graph import DataflowGraph, GraphError
from .labels import node_tooltip
from .layout import CLUSTER_FONT_SIZE, EDGE_FONT_SIZE, FONT, NODE_FONT_SIZE, Layout
from .overlay import Overlay
from .palette import CATEGORIES, CLUSTER_FILLS, style_of
from .svg_text import escape_attribute, escape_text, number

FONT_FAMILY = f"{FONT}, Arial, Helvetica, sans-serif"
MARGIN = 8.0
TITLE_FONT_SIZE = 14.0
TITLE_HEIGHT = 26.0
LINE_HEIGHT = 1.2  # times the font size, as Graphviz spaces label lines
BASELINE = 0.95  # a line's baseline below its top, times the font size (Arimo's ascent plus half the leading)
CHAR_WIDTH = 0.6  # generous average glyph width (em) for sizing the legend, title and badges
ARROW_HALF_WIDTH = 0.35  # of the arrow's length, Graphviz's "normal" arrowhead
COLLAPSED_INSET = 3.0
BADGE_FONT_SIZE = 8.0
BADGE_HEIGHT = 11.0
LEGEND_GAP = 24.0
LEGEND_FONT_SIZE = 10.0
LEGEND_HEADING_SIZE = 11.0
LEGEND_ROW = 16.0
SWATCH_WIDTH = 16.0
SWATCH_HEIGHT = 10.0
EDGE_COLOUR = "#555555"
CLUSTER_BORDER = "#b8b8b8"

_NOT_ID_CHAR = re.compile(r"[^A-Za-z0-9_.-]")


def _class_name(text: str) -> str:
    return _NOT_ID_CHAR.sub("_", text)


class _Ids:
    """Unique XML ids made from node ids (`main#3/closed_call#arg0` -> `node-main-3_closed_call-arg0`)."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def make(self, node: str) -> str:
        base = "node-" + _NOT_ID_CHAR.sub("-", node.replace("/", "_"))
        candidate, suffix = base, 1
        while candidate in self.taken:
            suffix += 1
            candidate = f"{base}-{suffix}"
        self.taken.add(candidate)
        return candidate


def _text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_WIDTH


def is_collapsed(data: dict) -> bool:
    """A node standing for a collapsed cluster: a "collapsed" node, or a region op drawn folded."""
    return data["kind"] == "collapsed" or bool(data.get("collapsed"))


def _stylesheet(categories: Iterable[str], cluster_kinds: Iterable[str]) -> str:
    rules = [
        f"svg{{font-family:{FONT_FAMILY}}}",
        ".background{fill:#ffffff}",
        f".title{{font-size:{number(TITLE_FONT_SIZE)}px;fill:#202020}}",
        f".cluster rect{{stroke:{CLUSTER_BORDER};stroke-width:0.8}}",
        f".cluster text{{font-size:{number(CLUSTER_FONT_SIZE)}px;fill:#404040;text-anchor:middle}}",
        f".edge path{{fill:none;stroke:{EDGE_COLOUR};stroke-width:1}}",
        f".edge polygon{{fill:{EDGE_COLOUR};stroke:{EDGE_COLOUR};stroke-width:0.6}}",
        ".edge-call path{stroke-dasharray:5,3}",
        ".captured path{stroke-dasharray:1.5,2.5}",
        f".edge text{{font-size:{number(EDGE_FONT_SIZE)}px;fill:#7a7a7a;text-anchor:middle}}",
        ".node .shape{stroke-width:1}",
        ".node .inner{fill:none;stroke-width:0.8}",
        f".node text{{font-size:{number(NODE_FONT_SIZE)}px;fill:#1a1a1a;text-anchor:middle}}",
        ".badge rect{fill:#2b2b2b;stroke:#ffffff;stroke-width:0.8}",
        f".node .badge text{{font-size:{number(BADGE_FONT_SIZE)}px;fill:#ffffff}}",
        f".legend text{{font-size:{number(LEGEND_FONT_SIZE)}px;fill:#202020}}",
        f".legend .legend-heading{{font-size:{number(LEGEND_HEADING_SIZE)}px;font-weight:bold}}",
        ".legend rect{stroke-width:0.8}",
        ".legend-overlay rect{stroke:#808080}",
    ]
    for kind in cluster_kinds:
        rules.append(f".cluster-{_class_name(kind)} rect{{fill:{CLUSTER_FILLS.get(kind, '#ffffff')}}}")
    for category in categories:
        style = style_of(category)
        name = _class_name(category)
        rules.append(f".cat-{name} .shape{{fill:{style.fill};stroke:{style.border}}}.cat-{name} .inner{{stroke:{style.border}}}")
    return "\n".join(rules)


def _draw_clusters(out: list[str], view: DataflowGraph, layout: Layout) -> None:
    for cid, cluster in view.clusters.items():
        box = layout.clusters.get(cid)
        if box is None:
            continue
        label = escape_text(cluster.label)
        if box.label_pos is not None:
            lx, ly = box.label_pos
            baseline = ly + CLUSTER_FONT_SIZE * (BASELINE - LINE_HEIGHT / 2)
        else:
            lx, baseline = (box.x0 + box.x1) / 2, box.y0 + 4 + CLUSTER_FONT_SIZE * BASELINE
        out.append(
            f'<g class="cluster cluster-{_class_name(cluster.kind)}" data-cluster="{escape_attribute(cid)}"><title>{label}</title>'
            f'<rect x="{number(box.x0)}" y="{number(box.y0)}" width="{number(box.x1 - box.x0)}" height="{number(box.y1 - box.y0)}" rx="4"/>'
            f'<text x="{number(lx)}" y="{number(baseline)}">{label}</text></g>\n'
        )


def _edge_title(view: DataflowGraph, head: str, data: dict) -> str:
    target = view.graph.nodes[head]
    target_name = target.get("name") or target.get("mnemonic") or head
    if data["kind"] == "call":
        return f"call of @{target['function']}"
    text = f"{data.get('value', '')} : {data.get('type', '')} → operand {data.get('operand')} of {target_name}"
    if data.get("captured"):
        text += " (used inside the collapsed region)"
    return text


def _draw_edges(out: list[str], view: DataflowGraph, layout: Layout) -> None:
    edges = view.graph.edges
    for route in layout.edges:
        try:
            data = edges[route.tail, route.head, route.key]
        except KeyError:
            raise GraphError(f"the layout has an edge {route.tail} -> {route.head} that the view lacks; lay out this view again") from None
        kind = data["kind"]
        classes = f"edge edge-{_class_name(kind)}" + (" captured" if data.get("captured") else "")
        title = escape_text(_edge_title(view, route.head, data))
        out.append(
            f'<g class="{classes}" data-source="{escape_attribute(route.tail)}" data-target="{escape_attribute(route.head)}" '
            f'data-value="{escape_attribute(data.get("value", ""))}"><title>{title}</title>'
        )
        points = route.points
        if len(points) > 1:
            start, rest = points[0], points[1:]
            command = "C" if len(rest) % 3 == 0 else "L"  # Graphviz gives Béziers; anything else as a polyline
            coordinates = " ".join(f"{number(x)},{number(y)}" for x, y in rest)
            out.append(f'<path d="M{number(start[0])},{number(start[1])} {command}{coordinates}"/>')
        if route.arrow is not None and points:
            out.append(_arrowhead(points[-1], route.arrow))
        if route.label_pos is not None and data.get("type") and kind == "data":
            lx, ly = route.label_pos
            out.append(f'<text x="{number(lx)}" y="{number(ly + EDGE_FONT_SIZE * (BASELINE - LINE_HEIGHT / 2))}">{escape_text(data["type"])}</text>')
        out.append("</g>\n")


def _arrowhead(base: tuple[float, float], tip: tuple[float, float]) -> str:
    dx, dy = tip[0] - base[0], tip[1] - base[1]
    if math.hypot(dx, dy) == 0:
        return ""
    # The perpendicular is the arrow's own direction turned a quarter, scaled like Graphviz's.
    nx, ny = -dy * ARROW_HALF_WIDTH, dx * ARROW_HALF_WIDTH
    corners = ((tip[0], tip[1]), (base[0] + nx, base[1] + ny), (base[0] - nx, base[1] - ny))
    return '<polygon points="' + " ".join(f"{number(x)},{number(y)}" for x, y in corners) + '"/>'


def _draw_nodes(out: list[str], view: DataflowGraph, layout: Layout, overlay: Optional[Overlay]) -> None:
    ids = _Ids()
    fills = overlay.fills if overlay else {}
    badges = overlay.badges if overlay else {}
    extras = overlay.tooltips if overlay else {}
    line_height = NODE_FONT_SIZE * LINE_HEIGHT
    for node, data in view.graph.nodes(data=True):
        box = layout.nodes.get(node)
        if box is None:
            raise GraphError(f"the layout has no position for node {node}; lay out this view again")
        kind = data["kind"]
        collapsed = is_collapsed(data)
        classes = f"node node-{_class_name(kind)} cat-{_class_name(data['category'])}" + (" collapsed" if collapsed and kind != "collapsed" else "")
        tooltip = escape_text("\n".join(node_tooltip(view, node, extras.get(node, ()))))
        out.append(
            f'<g class="{classes}" id="{ids.make(node)}" data-node="{escape_attribute(node)}" data-name="{escape_attribute(data.get("name", ""))}" '
            f'data-function="{escape_attribute(data.get("function", ""))}"><title>{tooltip}</title>'
        )
        fill = fills.get(node)
        paint = f' style="fill:{escape_attribute(fill)}"' if fill else ""
        x0, y0 = box.x - box.width / 2, box.y - box.height / 2
        if kind == "argument":
            out.append(f'<ellipse class="shape" cx="{number(box.x)}" cy="{number(box.y)}" rx="{number(box.width / 2)}" ry="{number(box.height / 2)}"{paint}/>')
        elif collapsed:
            out.append(f'<rect class="shape" x="{number(x0)}" y="{number(y0)}" width="{number(box.width)}" height="{number(box.height)}" rx="2"{paint}/>')
            inset = min(COLLAPSED_INSET, box.width / 4, box.height / 4)
            out.append(f'<rect class="inner" x="{number(x0 + inset)}" y="{number(y0 + inset)}" width="{number(box.width - 2 * inset)}" height="{number(box.height - 2 * inset)}" rx="1"/>')
        else:
            out.append(f'<rect class="shape" x="{number(x0)}" y="{number(y0)}" width="{number(box.width)}" height="{number(box.height)}" rx="4"{paint}/>')
        label = data.get("label") or []
        top = box.y - len(label) * line_height / 2
        cx = number(box.x)
        for i, line in enumerate(label):
            out.append(f'<text x="{cx}" y="{number(top + i * line_height + NODE_FONT_SIZE * BASELINE)}">{escape_text(line)}</text>')
        badge = badges.get(node)
        if badge:
            out.append(_badge(str(badge), box.x + box.width / 2, y0))
        out.append("</g>\n")


def _badge(text: str, right: float, top: float) -> str:
    """A pill centred on the box's top edge whose right end overhangs the corner a little."""
    width = _text_width(text, BADGE_FONT_SIZE) + 8
    x1 = right + 4
    x0 = x1 - width
    y0 = top - BADGE_HEIGHT / 2
    baseline = y0 + (BADGE_HEIGHT - BADGE_FONT_SIZE * LINE_HEIGHT) / 2 + BADGE_FONT_SIZE * BASELINE
    return (
        f'<g class="badge"><rect x="{number(x0)}" y="{number(y0)}" width="{number(width)}" height="{number(BADGE_HEIGHT)}" rx="{number(BADGE_HEIGHT / 2)}"/>'
        f'<text x="{number((x0 + x1) / 2)}" y="{number(baseline)}">{escape_text(text)}</text></g>'
    )


def present_categories(view: DataflowGraph) -> list[str]:
    """Palette categories drawn in the view, in palette order (unknown ones count as structural)."""
    found = {data["category"] if data["category"] in CATEGORIES else "structural" for _, data in view.graph.nodes(data=True)}
    return [category for category in CATEGORIES if category in found]


def _legend(x: float, y: float, categories: list[str], overlay: Optional[Overlay]) -> tuple[list[str], float, float]:
    """The legend's elements, its width and its height."""
    out = ['<g class="legend">']
    width = 0.0
    cursor = y + LEGEND_HEADING_SIZE

    def heading(text: str) -> None:
        nonlocal cursor, width
        out.append(f'<text class="legend-heading" x="{number(x)}" y="{number(cursor)}">{escape_text(text)}</text>')
        width = max(width, _text_width(text, LEGEND_HEADING_SIZE))
        cursor += LEGEND_ROW - 2

    def entry(label: str, swatch: str, attributes: str, classes: str) -> None:
        nonlocal cursor, width
        top = cursor - SWATCH_HEIGHT / 2 - LEGEND_FONT_SIZE * 0.35
        out.append(
            f'<g class="{classes}"{attributes}><rect x="{number(x)}" y="{number(top)}" width="{number(SWATCH_WIDTH)}" height="{number(SWATCH_HEIGHT)}" rx="2" {swatch}/>'
            f'<text x="{number(x + SWATCH_WIDTH + 6)}" y="{number(cursor)}">{escape_text(label)}</text></g>'
        )
        width = max(width, SWATCH_WIDTH + 6 + _text_width(label, LEGEND_FONT_SIZE))
        cursor += LEGEND_ROW

    heading("op categories")
    for category in categories:
        style = CATEGORIES[category]
        entry(style.title, f'style="fill:{style.fill};stroke:{style.border}"', f' data-category="{escape_attribute(category)}"', "legend-entry")
    if overlay is not None:
        cursor += LEGEND_ROW / 2
        heading(overlay.title)
        for item in overlay.legend:
            entry(item.label, f'style="fill:{escape_attribute(item.fill)}"', "", "legend-entry legend-overlay")
    out.append("</g>")
    return out, width, cursor - y


def render_svg(view: DataflowGraph, layout: Layout, overlay: Optional[Overlay] = None, title: Optional[str] = None) -> str:
    """The view drawn at the layout's positions as an SVG 1.1 document, legend on the right.

    `overlay` recolours, badges and annotates nodes and adds its legend section; `title` is a
    heading line above the drawing. Raises GraphError when the layout was made for another view."""
    top = MARGIN + (TITLE_HEIGHT if title else 0.0)
    legend_x = MARGIN + layout.width + LEGEND_GAP
    legend, legend_width, legend_height = _legend(legend_x, top, present_categories(view), overlay)
    width = max(legend_x + legend_width + MARGIN, MARGIN * 2 + (_text_width(title, TITLE_FONT_SIZE) if title else 0.0))
    height = top + max(layout.height, legend_height) + MARGIN
    cluster_kinds = [kind for kind in CLUSTER_FILLS if any(c.kind == kind for c in view.clusters.values())]
    cluster_kinds += sorted({c.kind for c in view.clusters.values()} - set(cluster_kinds))
    categories = sorted({data["category"] for _, data in view.graph.nodes(data=True)})
    w, h = number(width), number(height)
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{w}pt" height="{h}pt" viewBox="0 0 {w} {h}">\n',
    ]
    if title:
        out.append(f"<title>{escape_text(title)}</title>\n")
    out.append(f"<style>\n{_stylesheet(categories, cluster_kinds)}\n</style>\n")
    out.append(f'<rect class="background" x="0" y="0" width="{w}" height="{h}"/>\n')
    if title:
        out.append(f'<text class="title" x="{number(MARGIN)}" y="{number(MARGIN + TITLE_FONT_SIZE)}">{escape_text(title)}</text>\n')
    out.append(f'<g class="drawing" transform="translate({number(MARGIN)},{number(top)})">\n')
    _draw_clusters(out, view, layout)
    _draw_edges(out, view, layout)
    _draw_nodes(out, view, layout, overlay)
    out.append("</g>\n")
    out.extend(legend)
    out.append("\n</svg>\n")
    return "".join(out)


__all__ = ["render_svg", "present_categories", "is_collapsed", "escape_text", "escape_attribute", "number"]
