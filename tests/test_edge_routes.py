"""Edges drawn like a diagram, checked on the drawing's structure rather than its pixels.

For a shared program with calls, an optimized HLO module (fusions drawn as clusters) and a
generated one, the SVG is parsed back and, as the terminal scene, checked: every run of every edge
is horizontal or vertical; no run crosses a box its edge does not join; a data edge crosses a
cluster's border only through a port on its top or bottom side, and only into or out of a
cluster that holds one of its ends (a call edge only out of or into clusters holding its ends).
Then the layout's stability: the same program laid out in two processes lands in the same place,
and opening or closing a cluster leaves the boxes around it in their layers and order.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from hlodbg.layouts.export import graph_view
from hlodbg.layouts.layout import compute_layout
from hlodbg.layouts.scene import SceneBuilder, segment_cells
from hlodbg.layouts.svg import render_svg
from hlodbg.program import load

from .helpers import PROGRAMS, REPO

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from scale_programs import layered_program  # noqa: E402

pytestmark = pytest.mark.usefixtures("private_layout_cache")
OPTIMIZED_HLO = REPO / "tests" / "data" / "transformer_block_optimized.hlo"
EPS = 0.05
SVG = "{http://www.w3.org/2000/svg}"


# --- the drawing read back from the SVG ------------------------------------------------------
def svg_drawing(text: str):
    """Boxes {node: (x0, y0, x1, y1)}, clusters {id: rect} and edges [(source, target, kind,
    runs)], each run ((x, y), (x, y)), the arrowhead's last. A cubic segment counts as a straight
    run only when its control points lie on it; otherwise the run is the diagonal it bends around."""
    root = ET.fromstring(text)
    boxes, clusters, edges = {}, {}, []
    for group in root.iter(f"{SVG}g"):
        classes = group.get("class", "").split()
        if "node" in classes:
            shape = next(child for child in group if child.get("class") == "shape")
            if shape.tag == f"{SVG}ellipse":
                cx, cy, rx, ry = (float(shape.get(k)) for k in ("cx", "cy", "rx", "ry"))
                boxes[group.get("data-node")] = (cx - rx, cy - ry, cx + rx, cy + ry)
            else:
                x, y, w, h = (float(shape.get(k)) for k in ("x", "y", "width", "height"))
                boxes[group.get("data-node")] = (x, y, x + w, y + h)
        elif "cluster" in classes:
            rect = group.find(f"{SVG}rect")
            x, y, w, h = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
            clusters[group.get("data-cluster")] = (x, y, x + w, y + h)
        elif "edge" in classes:
            kind = next(c[len("edge-"):] for c in classes if c.startswith("edge-"))
            edges.append((group.get("data-source"), group.get("data-target"), kind, _runs(group)))
    return boxes, clusters, edges


def _runs(group) -> list:
    path, arrow = group.find(f"{SVG}path"), group.find(f"{SVG}polygon")
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", path.get("d"))]
    points = list(zip(numbers[::2], numbers[1::2]))
    command = re.search(r"[CL]", path.get("d")).group()
    runs = []
    if command == "C":
        for k in range(0, len(points) - 1, 3):
            p, c1, c2, q = points[k:k + 4]
            straight = all(abs(a[0] - p[0]) < EPS for a in (c1, c2, q)) or all(abs(a[1] - p[1]) < EPS for a in (c1, c2, q))
            runs.append((p, q) if straight else (p, (p[0] + 1.0, p[1] + 1.0)))  # a curve: stands as a diagonal
    else:
        runs += list(zip(points, points[1:]))
    if arrow is not None:
        coords = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", arrow.get("points"))]
        tip, (ax, ay), (bx, by) = (coords[0], coords[1]), (coords[2], coords[3]), (coords[4], coords[5])
        runs.append((((ax + bx) / 2, (ay + by) / 2), tip))
    return runs


def crosses(run, rect) -> bool:
    """Whether an axis-parallel run passes through the inside of a rectangle."""
    (px, py), (qx, qy) = run
    x0, y0, x1, y1 = rect
    return min(px, qx) < x1 - EPS and max(px, qx) > x0 + EPS and min(py, qy) < y1 - EPS and max(py, qy) > y0 + EPS


def check_routes(boxes: dict, clusters: dict, edges: list) -> int:
    """The three rules of the module's docstring; the number of runs checked."""
    node_names = list(boxes)
    rects = np.array([boxes[n] for n in node_names])
    runs_checked = 0
    for source, target, kind, runs in edges:
        assert runs, (source, target)
        for run in runs:
            (px, py), (qx, qy) = run
            assert abs(px - qx) < EPS or abs(py - qy) < EPS, f"{source} -> {target}: a diagonal run {run}"
            lo_x, hi_x, lo_y, hi_y = min(px, qx), max(px, qx), min(py, qy), max(py, qy)
            hit = (lo_x < rects[:, 2] - EPS) & (hi_x > rects[:, 0] + EPS) & (lo_y < rects[:, 3] - EPS) & (hi_y > rects[:, 1] + EPS)
            others = [node_names[i] for i in np.flatnonzero(hit) if node_names[i] not in (source, target)]
            assert others == [], f"{source} -> {target} runs across {others}"
            runs_checked += 1
        ends = [boxes[source], boxes[target]]
        for cid, (x0, y0, x1, y1) in clusters.items():
            holds = [e[0] >= x0 - EPS and e[2] <= x1 + EPS and e[1] >= y0 - EPS and e[3] <= y1 + EPS for e in ends]
            for (px, py), (qx, qy) in runs:
                vertical = abs(px - qx) < EPS
                through_top_or_bottom = vertical and x0 + EPS < px < x1 - EPS and any(min(py, qy) < y + 0 - EPS and max(py, qy) > y + EPS for y in (y0, y1))
                through_side = not vertical and y0 + EPS < py < y1 - EPS and any(min(px, qx) < x - EPS and max(px, qx) > x + EPS for x in (x0, x1))
                if not (through_top_or_bottom or through_side):
                    continue
                assert any(holds), f"{source} -> {target} passes through cluster {cid}, which holds neither end"
                if kind == "data":
                    assert through_top_or_bottom, f"{source} -> {target} crosses the side of cluster {cid}"
    return runs_checked


def check_scene_routes(scene) -> None:
    """The same rules on a terminal scene's cells."""
    for edge in scene.edges:
        for (ax, ay), (bx, by) in zip(edge.points, edge.points[1:]):
            assert ax == bx or ay == by, f"{edge.source} -> {edge.target}: a diagonal step"
        cells = [edge.points[0]]
        for a, b in zip(edge.points, edge.points[1:]):
            cells += segment_cells(a, b)
        for x, y in cells:
            inside = [n for n, box in scene.boxes.items() if box.contains(x, y)]
            assert inside == [], f"{edge.source} -> {edge.target} runs across {inside}"
        ends = [scene.boxes[edge.source], scene.boxes[edge.target]]
        for cid, c in scene.clusters.items():
            holds = [c.x <= e.x and e.x + e.width <= c.x + c.width and c.y <= e.y and e.y + e.height <= c.y + c.height for e in ends]
            on_border = [(x, y) for x, y in cells if (x in (c.x, c.x + c.width - 1) and c.y <= y < c.y + c.height) or (y in (c.y, c.y + c.height - 1) and c.x <= x < c.x + c.width)]
            if not on_border:
                continue
            assert any(holds), f"{edge.source} -> {edge.target} passes through cluster {cid}, which holds neither end"
            if edge.kind == "data":
                sides = [(x, y) for x, y in on_border if x in (c.x, c.x + c.width - 1) and y not in (c.y, c.y + c.height - 1)]
                assert sides == [], f"{edge.source} -> {edge.target} crosses the side of cluster {cid} at {sides}"


# --- the programs ---------------------------------------------------------------------------------
def shared_program(name: str):
    path = PROGRAMS / name
    if not path.exists():
        pytest.skip(f"{path} is not here (../shared)")
    return load(str(path))


def generated_program(tmp_path):
    path = tmp_path / "generated.mlir"
    path.write_text(layered_program(600))
    return load(str(path))


VIEWS = {
    "gpt_tiny (calls)": lambda tmp_path: graph_view(shared_program("gpt_tiny.mlir").module),
    "mlp (calls expanded)": lambda tmp_path: graph_view(shared_program("mlp.mlir").module, collapse="none"),
    "optimized HLO (fusions as clusters)": lambda tmp_path: graph_view(load(str(OPTIMIZED_HLO)).module),
    "optimized HLO (regions folded)": lambda tmp_path: graph_view(load(str(OPTIMIZED_HLO)).module, collapse="regions"),
    "generated (groups folded)": lambda tmp_path: graph_view(generated_program(tmp_path).module, collapse="groups"),
    "generated (open)": lambda tmp_path: graph_view(generated_program(tmp_path).module),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_svg_edges_run_square_around_boxes_and_through_ports(tmp_path, name):
    view = VIEWS[name](tmp_path)
    boxes, clusters, edges = svg_drawing(render_svg(view, compute_layout(view, use_cache=False)))
    assert len(boxes) == view.node_count and len(edges) == view.graph.number_of_edges()
    assert check_routes(boxes, clusters, edges) > len(edges)


def test_the_checks_catch_what_graphviz_draws(tmp_path):
    """The checks are not empty: Graphviz's own splines of the optimized module break them."""
    from hlodbg.layouts.graphviz import GraphvizError

    view = VIEWS["optimized HLO (fusions as clusters)"](tmp_path)
    try:
        layout = compute_layout(view, use_cache=False, engine="graphviz")
    except GraphvizError:
        pytest.skip("no Graphviz here")
    with pytest.raises(AssertionError, match="diagonal|runs across|passes through|crosses the side"):
        check_routes(*svg_drawing(render_svg(view, layout)))


@pytest.mark.parametrize("name", ["optimized HLO (fusions as clusters)", "gpt_tiny (calls)", "generated (open)"])
def test_terminal_scenes_route_square_through_ports(tmp_path, name):
    builder = SceneBuilder(VIEWS[name](tmp_path))
    scene = builder.scene()
    check_scene_routes(scene)
    opened = scene
    for box in [b for b in scene.boxes.values() if b.cluster][:4]:  # and with clusters drawn open
        opened = builder.expand(box.cluster, opened)
        check_scene_routes(opened)


# --- stability ------------------------------------------------------------------------------------
POSITIONS = """
import json, sys
from hlodbg.layouts.export import graph_view
from hlodbg.layouts.layout import compute_layout
from hlodbg.program import load
view = graph_view(load(sys.argv[1]).module)
layout = compute_layout(view, use_cache=False)
print(json.dumps({"nodes": {n: [b.x, b.y] for n, b in layout.nodes.items()}, "edges": [[r.tail, r.head, r.points] for r in layout.edges]}))
"""


def test_a_program_opened_twice_lands_in_the_same_place(tmp_path):
    """Two processes with different hash seeds (set and dict orders that leak into a layout
    would show) draw every box and every edge of the optimized module in the same place."""
    drawings = []
    for seed in ("1", "2"):
        done = subprocess.run([sys.executable, "-c", POSITIONS, str(OPTIMIZED_HLO)], capture_output=True, text=True, timeout=300,
                              env={**__import__("os").environ, "PYTHONHASHSEED": seed, "HLODBG_CACHE_DIR": str(tmp_path / seed)})
        assert done.returncode == 0, done.stderr
        drawings.append(json.loads(done.stdout))
    assert drawings[0] == drawings[1]


def relations(scene, nodes: list) -> dict:
    """For each pair of boxes: which is above the other, and, for boxes sharing rows, which is
    left of the other."""
    out = {}
    for k, a in enumerate(nodes):
        for c in nodes[k + 1:]:
            A, C = scene.boxes[a], scene.boxes[c]
            vertical = -1 if A.y + A.height <= C.y else 1 if C.y + C.height <= A.y else 0
            beside = -1 if A.x + A.width <= C.x else 1 if C.x + C.width <= A.x else 0
            out[(a, c)] = (vertical, beside if vertical == 0 else None)
    return out


@pytest.mark.parametrize("name", ["optimized HLO (fusions as clusters)", "gpt_tiny (calls)"])
def test_opening_and_closing_a_cluster_keeps_the_other_boxes_in_their_layers_and_order(tmp_path, name):
    """Opening a folded box leaves every other box in the same layers and order (what is above
    stays above, left stays left among boxes of one row); closing it again gives back the very
    same positions, from a builder that has not seen the scene before too."""
    view = VIEWS[name](tmp_path)
    builder = SceneBuilder(view)
    scene = builder.scene()
    positions = {n: (b.x, b.y) for n, b in scene.boxes.items()}
    folded = [b for b in scene.boxes.values() if b.cluster]
    assert folded
    for box in folded[:6]:
        opened = builder.expand(box.cluster, scene)
        others = [n for n in scene.boxes if n in opened.boxes]
        assert len(others) == len(scene.boxes) - 1
        before, after = relations(scene, others), relations(opened, others)
        for pair, relation in before.items():
            vertical, beside = relation
            if vertical:
                assert after[pair][0] == vertical, f"{pair} swapped above/below when {box.cluster} opened"
            elif after[pair][0] == 0:
                assert after[pair][1] == beside, f"{pair} swapped left/right when {box.cluster} opened"
        fresh = SceneBuilder(VIEWS[name](tmp_path))
        closed = fresh.collapse(box.cluster, fresh.expand(box.cluster, fresh.scene()))
        assert {n: (b.x, b.y) for n, b in closed.boxes.items()} == positions
