"""Terminal scenes: layouts snapped to cells, painting windows, lazily built cluster scenes."""
from __future__ import annotations

from pathlib import Path

import pytest

from hlodbg.layouts.graph import build_graph
from hlodbg.layouts.layout import compute_layout, terminal_box
from hlodbg.layouts import canvas
from hlodbg.layouts.canvas import paint, raster_of
from hlodbg.layouts.scene import Scene, SceneBox, SceneBuilder, SceneCluster, SceneEdge, SceneError, scene_from_layout
from hlodbg.program import load

from .helpers import count_calls

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "sample_programs" / "tiny_model.mlir"
PROGRAMS = REPO.parent / "shared" / "programs"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HLODBG_CACHE_DIR", str(tmp_path))


@pytest.fixture
def tiny_graph():
    return build_graph(load(TINY).module)


@pytest.fixture
def tiny(tiny_graph):
    return SceneBuilder(tiny_graph)


def shared_programs() -> list[Path]:
    if not PROGRAMS.is_dir():
        pytest.skip("../shared/programs is not present")
    files = sorted(PROGRAMS.glob("*.mlir"))
    if not files:
        pytest.skip("../shared/programs has no programs")
    return files


def all_scenes(builder: SceneBuilder) -> list[Scene]:
    return [builder.scene(cid) for cid in [None, *builder.graph.clusters]]


def touches_side(box: SceneBox, cell: tuple[int, int]) -> bool:
    """The cell is outside the box and shares a side with one of its cells."""
    x, y = cell
    within_columns = box.x <= x < box.x + box.width
    within_rows = box.y <= y < box.y + box.height
    return (within_columns and y in (box.y - 1, box.y + box.height)) or (within_rows and x in (box.x - 1, box.x + box.width))


def on_border(cluster, cell: tuple[int, int]) -> bool:
    """The cell is on the cluster's border or right outside it."""
    x, y = cell
    return cluster.x - 1 <= x <= cluster.x + cluster.width and cluster.y - 1 <= y <= cluster.y + cluster.height and not (
        cluster.x < x < cluster.x + cluster.width - 1 and cluster.y < y < cluster.y + cluster.height - 1)


def check_scene(scene: Scene) -> None:
    boxes = list(scene.boxes.values())
    for box in boxes:
        assert (box.width, box.height) == terminal_box(box.lines), box.node
        assert 0 <= box.x and box.x + box.width <= scene.width and 0 <= box.y and box.y + box.height <= scene.height
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            overlap = a.x < b.x + b.width and b.x < a.x + a.width and a.y < b.y + b.height and b.y < a.y + a.height
            assert not overlap, (a.node, b.node)
    for edge in scene.edges:
        assert touches_side(scene.boxes[edge.source], edge.points[0]), edge
        if edge.kind == "call" and not touches_side(scene.boxes[edge.target], edge.points[-1]):
            assert any(on_border(cluster, edge.points[-1]) for cluster in scene.clusters.values()), edge  # of the function it calls
        else:
            assert touches_side(scene.boxes[edge.target], edge.points[-1]), edge
        assert all(p != q for p, q in zip(edge.points, edge.points[1:])), edge


# --- scenes of a real program ---------------------------------------------------------------
def test_boxes_have_label_size_do_not_overlap_and_edges_join_them(tiny):
    for scene in all_scenes(tiny):
        check_scene(scene)
    check_scene(tiny.neighbourhood("main#13", 3))


def test_box_at_finds_every_box_and_nothing_elsewhere(tiny):
    scene = tiny.scene("fn:main")
    covered = set()
    for node, box in scene.boxes.items():
        assert scene.box_at(box.x, box.y) == node
        assert scene.box_at(box.x + box.width - 1, box.y + box.height - 1) == node
        covered |= {(x, y) for x in range(box.x, box.x + box.width) for y in range(box.y, box.y + box.height)}
    empty = [(x, y) for x in range(scene.width) for y in range(scene.height) if (x, y) not in covered]
    assert empty and all(scene.box_at(x, y) is None for x, y in empty[::7])
    assert scene.box_at(-1, -1) is None
    ret = scene.boxes["main#27"]
    assert scene.bounds_of("main#27") == (ret.x, ret.y, ret.width, ret.height)
    with pytest.raises(SceneError, match="not in this scene"):
        scene.bounds_of("closed_call#0")


def test_painted_scene_shows_every_label_line_inside_its_box(tiny):
    scene = tiny.scene("fn:main")
    canvas = paint(scene)
    lines = canvas.lines()
    assert len(lines) == scene.height and {len(line) for line in lines} == {scene.width}
    for node, box in scene.boxes.items():
        assert lines[box.y][box.x] == "╭" and lines[box.y + box.height - 1][box.x + box.width - 1] == "╯"
        for k, text in enumerate(box.lines):
            row = lines[box.y + 1 + k][box.x:box.x + box.width]
            assert text in row and row[0] == row[-1] == "│", (node, row)
        assert canvas.tag_at(box.x + 1, box.y + 1) == ("box", node)
    assert "func @main" in lines[scene.clusters["fn:main"].y]
    assert sum(line.count("▼") + line.count("▲") + line.count("▶") + line.count("◀") for line in lines) >= 1


def test_painting_a_window_crops_the_whole_picture(tiny):
    scene = tiny.scene("fn:main")
    whole = paint(scene)
    lines = whole.lines()
    for x0, y0, width, height in [(0, 0, 20, 10), (7, 13, 30, 25), (scene.width - 5, scene.height - 3, 5, 3), (3, 40, 1, 1)]:
        window = paint(scene, x0, y0, width, height)
        assert window.lines() == [line[x0:x0 + width] for line in lines[y0:y0 + height]]
        assert (window.tag_ids == whole.tag_ids[y0:y0 + height, x0:x0 + width]).all()
    hanging = paint(scene, -4, -2, 10, 6).lines()
    assert hanging[:2] == [" " * 10] * 2 and all(line[:4] == "    " for line in hanging)
    assert [line[4:] for line in hanging[2:]] == [line[:6] for line in lines[:4]]
    outside = paint(scene, scene.width + 3, 0, 8, 2).lines()
    assert outside == [" " * 8] * 2


def test_spans_rebuild_each_row_with_its_tags(tiny):
    scene = tiny.scene("fn:main")
    canvas = paint(scene, 0, 0, 60, 30)
    for y, (line, runs) in enumerate(zip(canvas.lines(), canvas.spans())):
        assert "".join(text for text, _ in runs) == line
        x = 0
        for text, tag in runs:
            assert all(canvas.tag_at(x + k, y) == tag for k in range(len(text)))
            x += len(text)
    tags = {tag for runs in canvas.spans() for _, tag in runs}
    assert {kind for kind, _ in filter(None, tags)} == {"box", "edge", "cluster"}


def test_program_scene_has_one_box_per_function(tiny):
    scene = tiny.scene()
    assert scene.root is None
    assert set(scene.boxes) == {"collapsed:fn:main", "collapsed:fn:closed_call"}
    assert {box.cluster for box in scene.boxes.values()} == {"fn:main", "fn:closed_call"}
    assert [(e.source, e.target, e.kind) for e in scene.edges] == [("collapsed:fn:main", "collapsed:fn:closed_call", "call")]
    check_scene(scene)


def test_a_single_function_is_opened_at_the_top():
    graph = build_graph(load(TINY).module, inline_calls=True)
    builder = SceneBuilder(graph)
    scene = builder.scene()
    assert scene is builder.scene("fn:main") and scene.root == "fn:main"
    assert "main#27" in scene.boxes and builder.layouts == 1


def test_while_scene_shows_the_op_with_cond_and_body_folded(tiny):
    scene = tiny.scene("op:main#1")
    assert set(scene.boxes) == {"main#1", "collapsed:region:main#1.0", "collapsed:region:main#1.1"}
    assert [scene.boxes[f"collapsed:region:main#1.{r}"].lines[0] for r in (0, 1)] == ["cond", "body"]
    assert scene.boxes["collapsed:region:main#1.1"].cluster == "region:main#1.1"
    assert tiny.scene("collapsed:op:main#1") is scene  # a folded box opens its cluster
    body = tiny.scene("region:main#1.1")
    assert {"main#5", "main#6", "main#7", "main#8"} <= set(body.boxes)
    assert tiny.parent("region:main#1.1") == "op:main#1" and tiny.parent("fn:main") is None


def test_neighbourhood_of_radius_two(tiny, tiny_graph):
    scene = tiny.neighbourhood("main#17", 2)  # %5 = broadcast_in_dim, two hops either way
    expected = {"main#15", "main#16", "main#17", "main#18", "main#19", "main#1"}
    assert set(scene.boxes) == expected == tiny_graph.neighbourhood("main#17", 2)
    assert {"fn:main", "op:main#1"} <= set(scene.clusters)  # the while keeps its frame
    check_scene(scene)
    folded = tiny.neighbourhood("collapsed:op:main#1", 1)
    assert {"collapsed:op:main#1", "main#0", "main#18"} <= set(folded.boxes)
    with pytest.raises(SceneError, match="no node"):
        tiny.neighbourhood("main#999", 1)


def test_scenes_are_laid_out_once(tiny):
    first = tiny.scene("fn:main")
    count = tiny.layouts
    raster_of(first)
    assert tiny.scene("fn:main") is first and tiny.scene("collapsed:fn:main") is first
    assert tiny.neighbourhood("main#16", 2) is tiny.neighbourhood("main#16", 2)
    assert tiny.layouts == count + 1
    assert raster_of(tiny.scene("fn:main")) is raster_of(first)


def test_expand_and_collapse_in_place(tiny):
    program = tiny.scene()
    opened = tiny.expand("fn:main", program)
    assert opened.expanded == {"fn:main"} and opened.root is None
    assert "main#27" in opened.boxes and "collapsed:fn:closed_call" in opened.boxes
    assert "collapsed:op:main#1" in opened.boxes  # what is inside the opened cluster stays folded
    deeper = tiny.expand("op:main#1", opened)
    assert {"collapsed:region:main#1.0", "main#1"} <= set(deeper.boxes)
    assert tiny.collapse("fn:main", deeper) is program
    check_scene(deeper)


def test_bad_requests_say_what_is_wrong(tiny, monkeypatch):
    with pytest.raises(SceneError, match="no cluster 'fn:nope'"):
        tiny.scene("fn:nope")
    with pytest.raises(SceneError, match="direction"):
        tiny.scene("fn:main").neighbours_in_direction("main#0", "north")
    monkeypatch.setenv("HLODBG_LAYOUT_ENGINE", "graphviz")  # the cap is Graphviz's: the layered layout takes any size
    with pytest.raises(SceneError, match="more than 5"):
        SceneBuilder(tiny.graph, max_nodes=5).scene("fn:main")


# --- painting, on scenes drawn by hand --------------------------------------------------------
def box(node: str, x: int, y: int, lines: list[str]) -> SceneBox:
    width, height = terminal_box(lines)
    return SceneBox(node, x, y, width, height, lines, "op", "elementwise", node)


def test_glyphs_for_crossings_arrows_and_diagonals():
    boxes = {
        "top": box("top", 4, 0, ["t"]),  # 5 x 3 cells: columns 4..8, rows 0..2
        "bottom": box("bottom", 4, 8, ["b"]),
        "left": box("left", 0, 4, ["l"]),
        "right": box("right", 14, 4, ["r"]),
        "corner": box("corner", 20, 0, ["c"]),
        "low": box("low", 23, 7, ["d"]),
    }
    edges = [
        SceneEdge("top", "bottom", "%0", "data", [(6, 3), (6, 7)]),
        SceneEdge("left", "right", "%1", "data", [(5, 5), (13, 5)]),
        SceneEdge("right", "left", "%2", "data", [(13, 6), (5, 6)]),
        SceneEdge("corner", "low", "%3", "data", [(21, 3), (24, 6)]),
    ]
    scene = Scene(30, 11, boxes, edges, {})
    check_scene(scene)
    lines = paint(scene).lines()
    assert lines[3][6] == lines[4][6] == "│" and lines[7][6] == "▼"
    assert lines[5][6] == lines[6][6] == "┼" and lines[5][5] == lines[5][7] == "─"
    assert lines[5][13] == "▶" and lines[6][5] == "◀"
    assert [lines[3 + k][21 + k] for k in range(3)] == ["╲"] * 3 and lines[6][24] == "▼"
    assert lines[8][4:9] == "╭───╮" and lines[9][4:9] == "│ b │" and lines[10][4:9] == "╰───╯"
    canvas = paint(scene)
    assert canvas.tag_at(6, 4) == ("edge", "top") and canvas.tag_at(6, 7) == ("edge", "top")
    assert canvas.tag_at(13, 5) == ("edge", "left") and canvas.tag_at(0, 10) is None
    assert canvas.tag_at(5, 1) == ("box", "top") and canvas.tag_at(99, 0) is None


def test_branches_join_and_clusters_frame_their_label():
    boxes = {"a": box("a", 2, 2, ["source"]), "b": box("b", 0, 8, ["x"]), "c": box("c", 8, 8, ["y"])}
    edges = [
        SceneEdge("a", "b", "%0", "data", [(4, 5), (4, 6), (2, 6), (2, 7)]),
        SceneEdge("a", "c", "%0", "data", [(4, 5), (4, 6), (10, 6), (10, 7)]),
    ]
    clusters = {"fn:f": SceneCluster("fn:f", "func @f", "function", 0, 0, 16, 12)}
    scene = Scene(16, 12, boxes, edges, clusters)
    lines = paint(scene).lines()
    assert lines[5][4] == "│" and lines[6][4] == "┴" and lines[6][2] == "╭" and lines[6][10] == "╮"
    assert lines[7][2] == "▼" and lines[7][10] == "▼"
    assert lines[0].startswith("┌┄ func @f ┄") and lines[0].endswith("┐")
    assert lines[11] == "└" + "┄" * 14 + "┘" and lines[3][0] == "┆" and lines[3][15] == "┆"
    assert paint(scene).tag_at(5, 0) == ("cluster", "fn:f")


def test_neighbours_in_direction_prefer_the_box_straight_ahead():
    boxes = {
        "centre": box("centre", 20, 10, ["c"]),
        "above": box("above", 21, 2, ["a"]),
        "far_below": box("far_below", 20, 30, ["f"]),
        "below_right": box("below_right", 40, 16, ["b"]),
        "left": box("left", 2, 11, ["l"]),
    }
    scene = Scene(50, 40, boxes, [], {})
    assert scene.neighbours_in_direction("centre", "up") == "above"
    assert scene.neighbours_in_direction("centre", "down") == "far_below"
    assert scene.neighbours_in_direction("centre", "left") == "left"
    assert scene.neighbours_in_direction("centre", "right") == "below_right"
    assert scene.neighbours_in_direction("above", "up") is None
    assert scene.neighbours_in_direction("far_below", "up") == "below_right"


# --- the shared corpus ---------------------------------------------------------------------------
def test_every_cluster_scene_of_the_shared_programs_is_sound():
    for path in shared_programs():
        builder = SceneBuilder(build_graph(load(path).module))
        for scene in all_scenes(builder):
            check_scene(scene)
            canvas = paint(scene)
            text = canvas.text()
            for box_ in scene.boxes.values():
                assert all(line in text for line in box_.lines)
        top = builder.scene()
        functions = builder.graph.top_clusters()
        if len(functions) > 1:
            assert sorted(b.cluster for b in top.boxes.values()) == sorted(functions)


def test_painting_a_screenful_costs_the_window_not_the_scene(monkeypatch):
    path = next((p for p in shared_programs() if p.name == "gpt_tiny.mlir"), None)
    if path is None:
        pytest.skip("gpt_tiny.mlir is not in ../shared/programs")
    graph = build_graph(load(path).module, grouping=False)
    scene = scene_from_layout(graph, compute_layout(graph, terminal=True))  # every function at once
    check_scene(scene)
    assert scene.width > 200 and scene.height > 60
    raster = raster_of(scene)
    # Painting reuses the scene's raster and draws only the boxes the window shows.
    built = count_calls(monkeypatch, canvas, "Raster")
    drawn = count_calls(monkeypatch, raster, "box_glyphs")
    x0, y0, width, height = 50, 100, 200, 60
    shown = [b for b in scene.boxes.values()
             if b.x < x0 + width and b.x + b.width > x0 and b.y < y0 + height and b.y + b.height > y0]
    assert 0 < len(shown) < len(scene.boxes) / 4
    for _ in range(3):
        assert len(paint(scene, x0, y0, width, height).spans()) == height
    assert built == [] and len(drawn) == 3 * len(shown)


def test_auto_is_the_layered_layout_and_the_environment_may_pick_graphviz(monkeypatch):
    import networkx as nx

    from hlodbg.layouts.graph import DataflowGraph
    from hlodbg.layouts.layout import layout_engine

    monkeypatch.delenv("HLODBG_LAYOUT_ENGINE", raising=False)
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(["a", "b", "c"])
    small = DataflowGraph(graph, {}, None, None, False)
    assert layout_engine(small) == "layered"
    monkeypatch.setenv("HLODBG_LAYOUT_ENGINE", "graphviz")  # the user's choice decides alone
    assert layout_engine(small) == "graphviz"


def test_polyline_cells_are_the_cells_of_each_segment_in_turn():
    """The raster's array form of a polyline gives segment_cells' cells exactly, halves rounded
    as Python rounds them, repeated points and single points included."""
    import random

    from hlodbg.layouts.scene import polyline_cells, segment_cells

    rng = random.Random(7)
    for _ in range(2000):
        points = [(rng.randint(-40, 300), rng.randint(-40, 300)) for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.3:
            points.append(points[-1])
        cells = [points[0]]
        for a, b in zip(points, points[1:]):
            if a != b:
                cells += segment_cells(a, b)
        columns, rows = polyline_cells(points)
        assert list(zip(columns.tolist(), rows.tolist())) == cells, points
