"""The layered layout: boxes never overlap, clusters nest, data edges run down from producer to
consumer, arguments sit above their first use, and its work grows linearly with the graph."""
from __future__ import annotations

import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from hlodbg.cli import main
from hlodbg.layouts import layered as layered_module
from hlodbg.layouts import layout as layout_module
from hlodbg.layouts.export import graph_view
from hlodbg.layouts.graph import GraphError, build_graph
from hlodbg.layouts.layered import SVG_SPACING, TERMINAL_SPACING, layered_layout
from hlodbg.layouts.layout import CELL_HEIGHT, CELL_WIDTH, MAX_LAYOUT_NODES, Layout, compute_layout, terminal_box
from hlodbg.layouts.node_sizes import node_size
from hlodbg.layouts.scene import scene_from_layout
from hlodbg.layouts.svg import render_svg
from hlodbg.program import load

from .helpers import PROGRAMS, SAMPLES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from scale_programs import layered_program  # noqa: E402

pytestmark = pytest.mark.usefixtures("private_layout_cache")
EPS = 0.02


# --- the checks ------------------------------------------------------------------------------
def node_rect(layout: Layout, node: str) -> tuple[float, float, float, float]:
    box = layout.nodes[node]
    return box.x - box.width / 2, box.y - box.height / 2, box.x + box.width / 2, box.y + box.height / 2


def overlap(a, b) -> bool:
    return a[0] < b[2] - EPS and b[0] < a[2] - EPS and a[1] < b[3] - EPS and b[1] < a[3] - EPS


def inside(inner, outer) -> bool:
    return outer[0] - EPS <= inner[0] and inner[2] <= outer[2] + EPS and outer[1] - EPS <= inner[1] and inner[3] <= outer[3] + EPS


def overlapping_pairs(rects: dict) -> list:
    """Pairs of keys whose rectangles overlap (bucketed by rows of 200 points: linear for layouts)."""
    rows: dict[int, list] = defaultdict(list)
    for key, rect in rects.items():
        for row in range(int(rect[1] // 200), int(rect[3] // 200) + 1):
            rows[row].append(key)
    found = set()
    for keys in rows.values():
        keys.sort(key=lambda k: rects[k][0])
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                if rects[b][0] >= rects[a][2] - EPS:
                    break
                if overlap(rects[a], rects[b]):
                    found.add((a, b))
    return sorted(found)


def check_geometry(view, layout: Layout, terminal: bool = False, climbing: int = 0) -> None:
    assert layout.engine == "layered"
    assert set(layout.nodes) == set(view.graph.nodes)
    assert set(layout.clusters) == set(view.clusters)
    rects = {node: node_rect(layout, node) for node in view.graph.nodes}
    for node, data in view.graph.nodes(data=True):  # sized as the Graphviz path sizes them
        box = layout.nodes[node]
        width, height = node_size(data["label"], data["kind"], terminal)
        assert (box.width, box.height) == pytest.approx((width, height), abs=EPS), node
        if terminal:
            columns, rows = terminal_box(data["label"])
            assert (box.width, box.height) == (columns * CELL_WIDTH, rows * CELL_HEIGHT)
            x0, y0, _, _ = rects[node]
            assert x0 / CELL_WIDTH == pytest.approx(round(x0 / CELL_WIDTH), abs=1e-6) and y0 / CELL_HEIGHT == pytest.approx(round(y0 / CELL_HEIGHT), abs=1e-6)
    assert overlapping_pairs(rects) == []
    clusters = {cid: (c.x0, c.y0, c.x1, c.y1) for cid, c in layout.clusters.items()}
    for cid, cluster in view.clusters.items():
        for node in cluster.nodes:
            assert inside(rects[node], clusters[cid]), (node, cid)
        for child in cluster.children:
            assert inside(clusters[child], clusters[cid]), (child, cid)
        siblings = {child: clusters[child] for child in cluster.children}
        assert overlapping_pairs(siblings) == []
        for node in cluster.nodes:  # a box is never under a cluster it is not in
            assert not any(overlap(rects[node], rect) for rect in siblings.values()), node
    top = {cid: clusters[cid] for cid in view.top_clusters()}
    assert overlapping_pairs(top) == []
    loose = [n for n, d in view.graph.nodes(data=True) if d.get("cluster") not in view.clusters]
    assert not any(overlap(rects[n], rect) for n in loose for rect in top.values())
    for cid, rect in clusters.items():
        assert 0 <= rect[0] and rect[2] <= layout.width + EPS and 0 <= rect[1] and rect[3] <= layout.height + EPS
    check_edges(view, layout, rects, climbing)


def check_edges(view, layout: Layout, rects: dict, climbing: int = 0) -> None:
    """Every data edge starts on its producer's bottom side and ends with its arrow's tip on its
    consumer's top side, the producer wholly above the consumer — but for `climbing` edges (a
    cycle between clusters), which go back up and still come into their consumer from above."""
    routes = {(r.tail, r.head, r.key): r for r in layout.edges}
    assert len(routes) == view.graph.number_of_edges()
    climbed = 0
    for u, v, key, data in view.graph.edges(keys=True, data=True):
        route = routes[(u, v, key)]
        assert route.arrow is not None and (len(route.points) - 1) % 3 == 0 and len(route.points) >= 4
        if data["kind"] != "data":
            continue
        tail, head = rects[u], rects[v]
        start, tip = route.points[0], route.arrow
        assert start[1] == pytest.approx(tail[3], abs=EPS) and tail[0] - EPS <= start[0] <= tail[2] + EPS, (u, v)
        assert tip[1] == pytest.approx(head[1], abs=EPS) and head[0] - EPS <= tip[0] <= head[2] + EPS, (u, v)
        assert route.points[-1][1] < tip[1], (u, v)  # the arrow points down into the box
        if tail[3] > head[1] + EPS:
            climbed += 1
            continue
        assert all(p[1] >= start[1] - EPS and p[1] <= tip[1] + EPS for p in route.points), (u, v)  # never climbs
    assert climbed == climbing


def check_arguments_near_first_use(view, layout: Layout) -> None:
    """No box or cluster of an argument's own cluster lies between it and its first use."""
    checked = 0
    for node, data in view.graph.nodes(data=True):
        if data["kind"] != "argument":
            continue
        home = data.get("cluster")
        siblings = [node_rect(layout, n) for n in view.clusters[home].nodes] if home in view.clusters else []
        siblings += [(c.x0, c.y0, c.x1, c.y1) for c in (layout.clusters[k] for k in view.clusters[home].children)] if home in view.clusters else []
        consumers = view.consumers(node)
        if not consumers:
            continue
        below = node_rect(layout, node)[3]
        first = min(item_top(view, layout, home, c) for c in consumers)
        between = [r for r in siblings if r[1] >= below - EPS and r[3] <= first + EPS]
        assert between == [], f"{node} is not right above its first use"
        checked += 1
    return checked


def item_top(view, layout: Layout, home, node) -> float:
    """Top of the box standing for `node` among the items of cluster `home`."""
    path = view.cluster_path(node)
    if home in path and path[-1] != home:
        child = path[path.index(home) + 1]
        return layout.clusters[child].y0
    if home not in path and home is not None:
        return float("inf")  # used from another cluster: its own first use does not count here
    return node_rect(layout, node)[1]


# --- the views ----------------------------------------------------------------------------------
def generated(tmp_path, ops: int, locations: bool = True) -> Path:
    path = tmp_path / f"p{ops}{'' if locations else 'n'}.mlir"
    path.write_text(layered_program(ops, locations=locations))
    return path


def fold_groups(view):
    """Every group directly inside a function folded (what `--collapse groups` draws)."""
    return view.collapse(*(cid for cid, c in view.clusters.items() if c.kind == "group" and view.clusters.get(c.parent) is not None and view.clusters[c.parent].kind == "function"))


@pytest.mark.parametrize("terminal", [False, True])
@pytest.mark.parametrize("locations", [True, False])
def test_generated_programs_expanded_and_folded(tmp_path, terminal, locations):
    module = load(str(generated(tmp_path, 600, locations))).module
    for view in (graph_view(module), graph_view(module, collapse="regions"), fold_groups(graph_view(module))):
        layout = layered_layout(view, terminal=terminal)
        check_geometry(view, layout, terminal)
        shown_arguments = sum(data["kind"] == "argument" for _, data in view.graph.nodes(data=True))
        # Folded groups hold their arguments (each sits in the group of its first use).
        assert check_arguments_near_first_use(view, layout) > 0 or shown_arguments == 0


@pytest.mark.parametrize("name", ["gpt_tiny", "rnn_scan", "sort_topk", "cnn", "sharded_mlp_4x2", "mixed_bf16", "embed_update", "mlp"])
def test_shared_programs(name):
    path = PROGRAMS / f"{name}.mlir"
    if not path.exists():
        pytest.skip("the shared corpus is not here")
    module = load(str(path)).module
    views = [graph_view(module), graph_view(module, collapse="regions"), graph_view(module, collapse="none")]
    for view in views:
        for terminal in (False, True):
            check_geometry(view, layered_layout(view, terminal=terminal), terminal)


def test_sample_programs_whose_regions_calls_and_loops_nest():
    for path in sorted(SAMPLES.glob("*.mlir")):
        module = load(str(path)).module
        for view in (graph_view(module), graph_view(module, collapse="none")):
            check_geometry(view, layered_layout(view))


WHILE_AND_CALLS = """
func.func private @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @main(%a: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %a) : tensor<i32>, tensor<4xf32>
  cond {
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %j = stablehlo.add %i, %c1 : tensor<i32>
    %w = func.call @step(%v) : (tensor<4xf32>) -> tensor<4xf32>
    %s = stablehlo.add %w, %v : tensor<4xf32>
    stablehlo.return %j, %s : tensor<i32>, tensor<4xf32>
  }
  %e = func.call @empty_use(%r#1) : (tensor<4xf32>) -> tensor<4xf32>
  %t = stablehlo.add %e, %e : tensor<4xf32>
  return %t : tensor<4xf32>
}
func.func private @empty_use(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
"""


def test_a_while_with_calls_inside_in_every_collapse_mode(tmp_path):
    path = tmp_path / "loop.mlir"
    path.write_text(WHILE_AND_CALLS)
    module = load(str(path)).module
    for collapse in ("calls", "regions", "none"):
        view = graph_view(module, collapse=collapse)
        for terminal in (False, True):
            layout = layered_layout(view, terminal=terminal)
            check_geometry(view, layout, terminal)
    calls = graph_view(module)
    assert any(d["kind"] == "call" for _, _, d in calls.graph.edges(data=True))  # drawn, dashed, any direction
    # A multi-edge (`add %e, %e`) gets two routes with their own arrow tips.
    inline = graph_view(module, collapse="none")
    add = next(n for n, d in inline.graph.nodes(data=True) if d.get("name") == "%t")
    layout = layered_layout(inline)
    tips = [r.arrow for r in layout.edges if r.head == add]
    assert len(tips) == 2 and tips[0] != tips[1]


INTERLEAVED_GROUPS = """
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %x, %x : tensor<f32> loc("jit(f)/a/add")
  %1 = stablehlo.multiply %0, %0 : tensor<f32> loc("jit(f)/a/mul")
  %2 = stablehlo.add %1, %x : tensor<f32> loc("jit(f)/b/add")
  %3 = stablehlo.multiply %2, %2 : tensor<f32> loc("jit(f)/b/mul")
  %4 = stablehlo.add %3, %1 : tensor<f32> loc("jit(f)/a/add2")
  %5 = stablehlo.multiply %4, %4 : tensor<f32> loc("jit(f)/a/mul2")
  %6 = stablehlo.add %5, %x : tensor<f32> loc("jit(f)/c/add")
  %7 = stablehlo.multiply %6, %6 : tensor<f32> loc("jit(f)/c/mul")
  return %7 : tensor<f32>
}
"""


def test_groups_that_feed_each_other_draw_the_edge_back_up_around_them(tmp_path):
    """Name-stack group a holds ops 0, 1, 4, 5 and group b ops 2, 3: a feeds b and b feeds a, so
    one of the two edges has to climb; it goes around the side and still arrives from above."""
    path = tmp_path / "interleaved.mlir"
    path.write_text(INTERLEAVED_GROUPS)
    view = build_graph(load(str(path)).module)
    assert {c.label for c in view.clusters.values() if c.kind == "group"} >= {"a", "b"}
    for terminal in (False, True):
        check_geometry(view, layered_layout(view, terminal=terminal), terminal, climbing=1)
    folded = view.collapse(*(cid for cid, c in view.clusters.items() if c.kind == "group"))
    check_geometry(folded, layered_layout(folded), climbing=1)


def test_empty_clusters_a_single_node_and_a_loop_edge():
    module = load(str(SAMPLES / "tiny_model.mlir")).module
    view = build_graph(module)
    single = view.restrict([next(iter(view.graph.nodes))])
    layout = layered_layout(single)
    check_geometry(single, layout)
    assert len(layout.nodes) == 1
    # An empty cluster (every node of it gone) still gets a rectangle of its own.
    empty = view.focus(next(iter(view.graph.nodes)), 1)
    empty.clusters["group:empty"] = type(next(iter(empty.clusters.values())))("group:empty", "group", "nothing here", None, "main")
    check_geometry(empty, layered_layout(empty))
    # A self-loop (no SSA program has one, a derived view could): drawn, never a crash.
    loop = build_graph(module)
    node = next(iter(loop.graph.nodes))
    loop.graph.add_edge(node, node, key="self", kind="data", operand=0, value="%x", type="f32", result=0)
    layout = layered_layout(loop)
    assert any(r.tail == r.head == node for r in layout.edges)


def test_scenes_and_svgs_take_layered_layouts(tmp_path):
    module = load(str(generated(tmp_path, 300))).module
    view = graph_view(module, collapse="regions")
    scene = scene_from_layout(view, layered_layout(view, terminal=True))
    assert set(scene.boxes) == set(view.graph.nodes)
    boxes = list(scene.boxes.values())
    cells = {}
    for box in boxes:  # snapped to cells, still no two boxes share a cell
        for x in range(box.x, box.x + box.width):
            for y in range(box.y, box.y + box.height):
                assert (x, y) not in cells, (box.node, cells.get((x, y)))
                cells[(x, y)] = box.node
    svg = render_svg(view, layered_layout(view), title="layered")
    assert svg.count('class="node ') == view.node_count
    if shutil.which("rsvg-convert"):
        (tmp_path / "g.svg").write_text(svg)
        done = subprocess.run(["rsvg-convert", "-w", "800", str(tmp_path / "g.svg"), "-o", str(tmp_path / "g.png")], capture_output=True)
        assert done.returncode == 0 and (tmp_path / "g.png").stat().st_size > 1000, done.stderr


def test_work_grows_linearly_with_far_apart_uses(monkeypatch):
    """Forty weights each used by every fortieth op of a 400-op chain: lanes through every layer
    between uses would be 40 x 400; side lanes keep the lane slots within a few per edge."""
    weights = 40
    lines = [f"  %v{i + 1} = stablehlo.add %v{i}, %w{i % weights} : tensor<f32>" for i in range(400)]
    params = ", ".join(f"%w{k}: tensor<f32>" for k in range(weights))
    text = f"func.func @main(%v0: tensor<f32>, {params}) -> tensor<f32> {{\n" + "\n".join(lines) + "\n  return %v400 : tensor<f32>\n}\n"
    from hlodbg.engine import parse_module

    view = build_graph(parse_module(text), grouping=False)
    added = []
    original = layered_module._Slots.add
    monkeypatch.setattr(layered_module._Slots, "add", lambda self, *args: added.append(args) or original(self, *args))
    check_geometry(view, layered_layout(view))
    lanes = sum(1 for args in added if args[2] == 0.0)  # lane and port slots have no height
    edges = view.graph.number_of_edges()
    assert lanes <= (layered_module.LONG_SPAN + 1) * edges / 4, (lanes, edges)


# --- the engine choice ---------------------------------------------------------------------------
def test_auto_is_the_layered_layout_at_every_size(monkeypatch):
    monkeypatch.delenv("HLODBG_LAYOUT_ENGINE", raising=False)
    view = graph_view(load(str(SAMPLES / "tiny_model.mlir")).module)
    assert compute_layout(view, use_cache=False).engine == "layered"
    if shutil.which("dot") or shutil.which("graphviz-pure") or (Path(sys.executable).parent / "graphviz-pure").exists():
        assert compute_layout(view, use_cache=False, engine="graphviz").engine == "graphviz"
        monkeypatch.setenv("HLODBG_LAYOUT_ENGINE", "graphviz")
        assert compute_layout(view, use_cache=False).engine == "graphviz"
    monkeypatch.setenv("HLODBG_LAYOUT_ENGINE", "fastest")
    with pytest.raises(GraphError, match="HLODBG_LAYOUT_ENGINE=fastest is not one of auto, graphviz, layered"):
        compute_layout(view, use_cache=False)


def test_a_layered_layout_comes_back_from_the_cache_as_layered():
    view = graph_view(load(str(SAMPLES / "tiny_model.mlir")).module)
    first = compute_layout(view, engine="layered")
    layout_module.clear_memory_cache()
    again = compute_layout(view, engine="layered")
    assert again.cached and again.engine == "layered" and again.nodes == first.nodes


def test_export_beyond_graphvizs_cap_uses_the_layered_layout(tmp_path, capsys):
    body = "\n".join(f"  %v{i + 1} = stablehlo.add %v{i}, %v{i} : tensor<f32>" for i in range(MAX_LAYOUT_NODES + 10))
    path = tmp_path / "chain.mlir"
    path.write_text(f"func.func @main(%v0: tensor<f32>) -> tensor<f32> {{\n{body}\n  return %v{MAX_LAYOUT_NODES + 10} : tensor<f32>\n}}\n")
    assert main(["export", str(path), "-o", str(tmp_path / "chain.svg")]) == 0
    assert (tmp_path / "chain.svg").stat().st_size > 100_000
    capsys.readouterr()
    assert main(["export", str(path), "-o", str(tmp_path / "gv.svg"), "--engine", "graphviz"]) == 2
    assert f"more than the {MAX_LAYOUT_NODES:,} one layout may have" in capsys.readouterr().err


def test_spacings_are_whole_cells_in_terminals():
    for name in ("node_gap", "lane_gap", "lane_width", "rank_gap", "pad_x", "pad_top", "pad_bottom"):
        assert float(getattr(TERMINAL_SPACING, name)).is_integer(), name
    assert SVG_SPACING.scale_x == 1.0 and TERMINAL_SPACING.scale_x == CELL_WIDTH


def _bezier_samples(points: list, steps: int = 12) -> list:
    out = []
    for k in range(0, len(points) - 1, 3):
        p0, c1, c2, p3 = points[k:k + 4]
        for i in range(steps + 1):
            t = i / steps
            a, b, c, d = (1 - t) ** 3, 3 * t * (1 - t) ** 2, 3 * t * t * (1 - t), t ** 3
            out.append((a * p0[0] + b * c1[0] + c * c2[0] + d * p3[0], a * p0[1] + b * c1[1] + c * c2[1] + d * p3[1]))
    return out


def test_call_edges_end_on_their_callee_and_cross_no_other_function():
    """A call edge ends on the border of the function it calls (as Graphviz's lhead does), not on
    an argument inside it, and goes over or under the functions drawn between the two, never
    across their ops (12 layers calling @tril and @_where crossed every box of @tril), leaving
    the caller's function box before it heads for the callee."""
    body = lambda name, op: (f"func.func private @{name}(%x: tensor<4xf32>) -> tensor<4xf32> {{\n"
                             + "".join(f"  %{i} = stablehlo.{op} {'%x' if i == 0 else f'%{i - 1}'} : tensor<4xf32>\n" for i in range(6))
                             + f"  return %5 : tensor<4xf32>\n}}\n")
    calls, x = [], "%arg0"
    for layer in range(8):
        calls.append(f"  %a{layer} = func.call @{'f' if layer % 2 else 'g'}({x}) : (tensor<4xf32>) -> tensor<4xf32>")
        calls.append(f"  %b{layer} = stablehlo.add %a{layer}, {x} : tensor<4xf32>")
        x = f"%b{layer}"
    text = ("func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n" + "\n".join(calls) + f"\n  return {x} : tensor<4xf32>\n}}\n"
            + body("f", "tanh") + body("g", "negate"))
    view = graph_view(load(text).module)
    layout = layered_layout(view)
    check_geometry(view, layout)
    rects = {n: node_rect(layout, n) for n in view.graph.nodes}
    call_routes = [r for r in layout.edges if view.graph.edges[r.tail, r.head, r.key]["kind"] == "call"]
    assert len(call_routes) == 8
    for route in call_routes:
        callee = view.graph.nodes[route.head]["function"]
        box = layout.clusters[f"fn:{callee}"]
        tip = route.arrow
        on_side = min(abs(tip[0] - box.x0), abs(tip[0] - box.x1)) < EPS and box.y0 - EPS <= tip[1] <= box.y1 + EPS
        on_top_or_bottom = min(abs(tip[1] - box.y0), abs(tip[1] - box.y1)) < EPS and box.x0 - EPS <= tip[0] <= box.x1 + EPS
        assert on_side or on_top_or_bottom, (route.tail, callee, tip, box)
        tail, main_box = rects[route.tail], layout.clusters["fn:main"]
        for point in _bezier_samples(route.points):
            if not tail[1] - EPS <= point[1] <= tail[3] + SVG_SPACING.rank_gap:  # past its row and the channel below: out of @main
                assert not main_box.x0 + EPS < point[0] < main_box.x1 - EPS, (route.tail, point)
            for node, rect in rects.items():
                if node != route.tail:
                    assert not (rect[0] + EPS < point[0] < rect[2] - EPS and rect[1] + EPS < point[1] < rect[3] - EPS), (route.tail, node)
