"""SVG export: a well-formed document whose nodes, edges, clusters, tooltips and legend match the view."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import networkx as nx
import pytest

from hlodbg.layouts.graph import GraphError, build_graph
from hlodbg.layouts.layout import ClusterBox, EdgeRoute, Layout, NodeBox, compute_layout
from hlodbg.layouts.overlay import LegendEntry, Overlay
from hlodbg.layouts.palette import CATEGORIES, style_of
from hlodbg.layouts.svg import escape_attribute, escape_text, number, render_svg
from hlodbg.program import load

REPO = Path(__file__).resolve().parents[1]
TINY_MODEL = REPO / "sample_programs" / "tiny_model.mlir"
SHARED_PROGRAMS = Path(__file__).resolve().parents[1].parent / "shared" / "programs"
SVG = "{http://www.w3.org/2000/svg}"

ESCAPING_PROGRAM = """
func.func @main(%arg0: tensor<4xf32> loc("x<&>\\"y'")) -> tensor<4xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.custom_call @"a&b<c>'q"(%arg0, %c) {backend_config = "<&>\\""} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HLODBG_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def tiny_view():
    return build_graph(load(TINY_MODEL).module)


def shared_programs() -> list[Path]:
    return sorted(SHARED_PROGRAMS.glob("*.mlir")) if SHARED_PROGRAMS.is_dir() else []


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode("utf-8"))


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if cls in g.get("class", "").split()]


def title_of(element: ET.Element) -> str:
    return element.find(f"{SVG}title").text or ""


def node_group(root: ET.Element, node: str) -> ET.Element:
    (found,) = [g for g in groups(root, "node") if g.get("data-node") == node]
    return found


def node_named(view, name: str, function: str = "main") -> str:
    (found,) = [n for n, d in view.graph.nodes(data=True) if d["name"] == name and d["function"] == function and d["kind"] == "op"]
    return found


def check_structure(view, layout, svg: str) -> ET.Element:
    root = parse(svg)
    assert root.tag == f"{SVG}svg"
    assert root.find(f"{SVG}style") is not None
    assert len(groups(root, "node")) == view.node_count
    assert len(groups(root, "edge")) == len(layout.edges)
    clusters = groups(root, "cluster")
    assert [g.get("data-cluster") for g in clusters] == [c for c in view.clusters if c in layout.clusters]
    ids = [e.get("id") for e in root.iter() if e.get("id") is not None]
    assert len(ids) == len(set(ids)) == view.node_count
    assert all(i[0].isalpha() and all(ch.isalnum() or ch in "_.-" for ch in i) for i in ids)
    return root


def test_tiny_model_structure(tiny_view):
    layout = compute_layout(tiny_view)
    root = check_structure(tiny_view, layout, render_svg(tiny_view, layout))
    edge_nodes = {(g.get("data-source"), g.get("data-target")) for g in groups(root, "edge")}
    assert edge_nodes == {(u, v) for u, v in tiny_view.graph.edges()}
    call_edges = groups(root, "edge-call")
    assert call_edges and all(g.get("data-target").startswith("closed_call#") for g in call_edges)
    for g in groups(root, "edge"):
        path = g.find(f"{SVG}path")
        assert path.get("d").startswith("M") and " C" in path.get("d")


@pytest.mark.parametrize("path", shared_programs(), ids=lambda p: p.stem)
def test_shared_programs_render(path):
    view = build_graph(load(path).module)
    layout = compute_layout(view)
    check_structure(view, layout, render_svg(view, layout, title=path.name))


def test_shared_programs_present():
    if not SHARED_PROGRAMS.is_dir():
        pytest.skip("../shared/programs is not present")
    assert shared_programs()


def test_tooltip_of_known_op_has_type_and_location(tiny_view):
    layout = compute_layout(tiny_view)
    root = parse(render_svg(tiny_view, layout))
    node = node_named(tiny_view, "%7")
    data = tiny_view.graph.nodes[node]
    assert data["mnemonic"] == "stablehlo.exponential" and data["location"]
    g = node_group(root, node)
    tooltip = title_of(g)
    assert "exponential" in tooltip and "results: 4x8xf32" in tooltip
    assert data["location"] in tooltip and f":{data['line']}:" in tooltip
    assert g.get("data-name") == "%7" and g.get("data-function") == "main"
    assert "cat-elementwise" in g.get("class").split()
    labels = [t.text for t in g.iter(f"{SVG}text")]
    assert labels == data["label"]

    argument = node_group(root, "main#arg1")
    assert argument.find(f"{SVG}ellipse") is not None
    assert title_of(argument).splitlines()[:2] == ["%arg1: 8x16xf32 (argument of @main)", "from w1"]


def test_edge_title_and_label(tiny_view):
    layout = compute_layout(tiny_view)
    root = parse(render_svg(tiny_view, layout))
    exponential = node_named(tiny_view, "%7")
    (edge,) = [g for g in groups(root, "edge-data") if g.get("data-target") == exponential]
    assert edge.get("data-source") == node_named(tiny_view, "%6") and edge.get("data-value") == "%6"
    assert title_of(edge) == "%6 : 4x8xf32 → operand 0 of %7"
    assert edge.find(f"{SVG}text").text == "4x8xf32"
    assert len(edge.find(f"{SVG}polygon").get("points").split()) == 3


def test_collapsed_ops_have_double_outline(tiny_view):
    view = tiny_view.collapse_kind("op")
    layout = compute_layout(view)
    root = check_structure(view, layout, render_svg(view, layout))
    folded = [n for n, d in view.graph.nodes(data=True) if d.get("collapsed")]
    assert len(folded) == 3
    for node in folded:
        g = node_group(root, node)
        assert g.find(f"{SVG}rect[@class='shape']") is not None and g.find(f"{SVG}rect[@class='inner']") is not None
        assert "ops inside" in title_of(g)
    plain = node_group(root, node_named(view, "%7"))
    assert plain.find(f"{SVG}rect[@class='inner']") is None
    captured = groups(root, "captured")
    assert captured and all(g.get("data-target") in folded for g in captured)


def test_collapsed_regions_are_collapsed_nodes(tiny_view):
    view = tiny_view.collapse_kind("region")
    layout = compute_layout(view)
    root = check_structure(view, layout, render_svg(view, layout))
    collapsed = [n for n, d in view.graph.nodes(data=True) if d["kind"] == "collapsed"]
    assert collapsed
    for node in collapsed:
        g = node_group(root, node)
        assert "node-collapsed" in g.get("class").split()
        assert g.find(f"{SVG}rect[@class='inner']") is not None
        count = view.graph.nodes[node]["count"]
        assert f"{count} ops inside" in title_of(g)
    entries = [g.get("data-category") for g in groups(root, "legend-entry")]
    assert "collapsed" in entries


def test_overlay_fills_badges_tooltips_and_legend(tiny_view):
    layout = compute_layout(tiny_view)
    hot, cold = node_named(tiny_view, "%6"), node_named(tiny_view, "%7")
    overlay = Overlay(
        "NaN / Inf",
        fills={hot: "#ff5050"},
        badges={hot: "NaN 3/64"},
        tooltips={hot: ["NaN in 3 of 64 elements", "first at [0, 2]"]},
        legend=[LegendEntry("has NaN", "#ff5050"), LegendEntry("finite <1e3 & \"ok\"", "#ffffff")],
    )
    svg = render_svg(tiny_view, layout, overlay)
    root = check_structure(tiny_view, layout, svg)
    hot_group = node_group(root, hot)
    assert "fill:#ff5050" in hot_group.find(f"{SVG}rect[@class='shape']").get("style")
    assert title_of(hot_group).splitlines()[-2:] == ["NaN in 3 of 64 elements", "first at [0, 2]"]
    (badge,) = groups(hot_group, "badge")
    assert badge.find(f"{SVG}text").text == "NaN 3/64"
    cold_group = node_group(root, cold)
    assert cold_group.find(f"{SVG}rect[@class='shape']").get("style") is None
    assert not groups(cold_group, "badge")
    (legend,) = groups(root, "legend")
    headings = [t.text for t in legend.iter(f"{SVG}text") if t.get("class") == "legend-heading"]
    assert headings == ["op categories", "NaN / Inf"]
    overlay_entries = groups(legend, "legend-overlay")
    assert [g.find(f"{SVG}text").text for g in overlay_entries] == ["has NaN", "finite <1e3 & \"ok\""]
    assert "fill:#ff5050" in overlay_entries[0].find(f"{SVG}rect").get("style")


def test_legend_lists_exactly_the_categories_present(tiny_view):
    layout = compute_layout(tiny_view)
    root = parse(render_svg(tiny_view, layout))
    present = {d["category"] for _, d in tiny_view.graph.nodes(data=True)}
    entries = groups(root, "legend-entry")
    assert [g.get("data-category") for g in entries] == [c for c in CATEGORIES if c in present]
    assert [g.find(f"{SVG}text").text for g in entries] == [style_of(c).title for c in CATEGORIES if c in present]
    (legend,) = groups(root, "legend")
    headings = [t.text for t in legend.iter(f"{SVG}text") if t.get("class") == "legend-heading"]
    assert headings == ["op categories"]
    # The legend sits right of the drawing, inside the document.
    legend_x = float(entries[0].find(f"{SVG}rect").get("x"))
    assert legend_x > layout.width
    assert float(root.get("viewBox").split()[2]) > legend_x


def test_markup_in_labels_is_escaped():
    view = build_graph(load(ESCAPING_PROGRAM).module)
    layout = compute_layout(view)
    svg = render_svg(view, layout, title='graph of <"a&b">')
    assert "a&b<c>" not in svg and "a&amp;b&lt;c&gt;'q" in svg
    root = check_structure(view, layout, svg)
    call = node_group(root, node_named(view, "%0"))
    assert [t.text for t in call.iter(f"{SVG}text")] == ["%0 = custom_call", "@a&b<c>'q"]
    assert 'call_target_name = "a&b<c>\'q"' in title_of(call)
    assert 'backend_config = "<&>\\22"' in title_of(call)  # a quote escaped as MLIR prints it
    argument = node_group(root, "main#arg0")
    assert "from x<&>\"y'" in title_of(argument)
    assert root.find(f"{SVG}title").text == 'graph of <"a&b">'
    assert root.find(f"{SVG}text[@class='title']").text == 'graph of <"a&b">'


def test_escaping_helpers():
    assert escape_text('<a & "b">') == '&lt;a &amp; "b"&gt;'
    assert escape_attribute('x"<\n') == "x&quot;&lt;&#10;"
    attribute, text = escape_attribute("one\ntwo \x00"), escape_text("bad \x01 char")
    element = ET.fromstring(f'<e a="{attribute}">{text}</e>')
    assert element.get("a") == "one\ntwo \ufffd" and element.text == "bad \ufffd char"
    assert [number(v) for v in (12.0, 3.5, -0.004, 1234567.891, 0.125)] == ["12", "3.5", "0", "1234567.89", "0.12"]


def test_ids_are_unique_for_colliding_node_ids():
    # Distinct node ids that sanitise alike still get distinct XML ids.
    view = build_graph(load(ESCAPING_PROGRAM).module)
    layout = compute_layout(view)
    renamed = {"main#arg0": "a#b", "main#0": "a/b", "main#1": "a-b", "main#2": "main#3/closed_call#arg0"}
    view.graph = nx.relabel_nodes(view.graph, renamed)
    layout.nodes = {renamed[k]: v for k, v in layout.nodes.items()}
    layout.edges = [EdgeRoute(renamed[e.tail], renamed[e.head], e.key, e.points, e.arrow, e.label_pos) for e in layout.edges]
    root = parse(render_svg(view, layout))
    ids = [g.get("id") for g in groups(root, "node")]
    assert len(set(ids)) == 4
    assert "node-main-3_closed_call-arg0" in ids


def test_mismatched_layout_is_a_clear_error(tiny_view):
    layout = compute_layout(tiny_view)
    other = build_graph(load(ESCAPING_PROGRAM).module)
    with pytest.raises(GraphError, match="lay out this view again"):
        render_svg(other, layout)


def large_program(ops: int) -> str:
    lines = ["func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {"]
    previous = "%arg0"
    for k in range(ops):
        operation = "stablehlo.add" if k % 3 else "stablehlo.multiply"
        lines.append(f"  %{k} = {operation} {previous}, {'%arg1' if k % 2 else previous} : tensor<8x8xf32>")
        previous = f"%{k}"
    lines += [f"  return {previous} : tensor<8x8xf32>", "}"]
    return "\n".join(lines)


def grid_layout(view) -> Layout:
    """Positions on a grid and straight one-segment Béziers: what Graphviz gives, without its time."""
    layout = Layout(0.0, 0.0)
    for k, node in enumerate(view.graph.nodes):
        layout.nodes[node] = NodeBox(60.0 + (k % 40) * 120.0, 20.0 + (k // 40) * 50.0, 110.0, 36.0)
    for u, v, key in view.graph.edges(keys=True):
        a, b = layout.nodes[u], layout.nodes[v]
        start, end = (a.x, a.y + 18), (b.x, b.y - 24)
        points = [start, (start[0], start[1] + 10), (end[0], end[1] - 10), end]
        layout.edges.append(EdgeRoute(u, v, key, points, (b.x, b.y - 18), ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)))
    for cid in view.clusters:
        layout.clusters[cid] = ClusterBox(4.0, 4.0, 4900.0, 2000.0, None)
    layout.width, layout.height = 4900.0, 2000.0
    return layout


def test_large_graph_renders_whole():
    # How long it takes is benchmarks/export.py's figure (its cached re-export is rendering alone).
    view = build_graph(load(large_program(1500)).module, grouping=False)
    assert view.node_count >= 1500 and view.graph.number_of_edges() >= 2000
    layout = grid_layout(view)
    svg = render_svg(view, layout, title="large")
    root = check_structure(view, layout, svg)
    assert root.find(f".//{SVG}g[@class='cluster cluster-function']/{SVG}text").text == "func @main"
