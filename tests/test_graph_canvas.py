"""GraphCanvas: the dataflow graph widget follows the current op, selects, zooms, focuses, drills."""
from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult

from hlodbg.layouts.graph import build_graph
from hlodbg.layouts.canvas import paint
from hlodbg.layouts.scene import SceneBuilder
from hlodbg.program import load
from hlodbg.layouts.zoom import zoomed_scene
from hlodbg.ui.widgets.graph_canvas import GraphCanvas

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "sample_programs" / "tiny_model.mlir"
NAN_IN_LOOP = REPO / "tests" / "data" / "nan_in_loop.mlir"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HLODBG_CACHE_DIR", str(tmp_path))


class CanvasApp(App):
    def __init__(self, program):
        super().__init__()
        self.program = program
        self.graph = build_graph(program.module)
        self.picked: list[GraphCanvas.NodeSelected] = []

    def compose(self) -> ComposeResult:
        yield GraphCanvas(self.graph)

    def on_graph_canvas_node_selected(self, message: GraphCanvas.NodeSelected) -> None:
        self.picked.append(message)


async def settle(app, pilot) -> GraphCanvas:
    await app.workers.wait_for_complete()
    await pilot.pause()
    return app.query_one(GraphCanvas)


def _find(program, result: str, function: str):
    """The op of `@function` (nested regions included) that defines `result`."""
    stack = list(program.function(function).body.operations)
    while stack:
        op = stack.pop(0)
        if any(v.name == result for v in op.results):
            return op
        for region in op.regions:
            for block in region.blocks:
                stack.extend(block.operations)
    raise AssertionError(f"no op {result} in @{function}")


def text_of(canvas: GraphCanvas) -> str:
    return "\n".join(canvas.visible_text())


async def test_opens_on_the_entry_function_and_follows_the_current_op_into_the_loop():
    program = load(TINY)
    app = CanvasApp(program)
    async with app.run_test(size=(120, 40)) as pilot:
        canvas = await settle(app, pilot)
        assert "%0:4 = while" in text_of(canvas) and "%3 = maximum" in text_of(canvas)
        assert canvas.border_title.startswith("@main  (zoom 1/3, follow on)")

        add = _find(program, "%13", "main")  # inside the while body
        canvas.show_current(add)
        assert canvas.border_subtitle == "laying out…"
        canvas = await settle(app, pilot)
        node = canvas.current_node
        assert node in canvas.shown_scene.boxes
        assert {"op:main#1", "region:main#1.1"} <= canvas.shown_scene.expanded
        assert "region:main#1.0" not in canvas.shown_scene.expanded  # cond stays folded
        assert "%13 = add" in text_of(canvas) and "%12 = func.call" in text_of(canvas)
        assert canvas.border_title.startswith("@main > while %0:4 > body")

        for result, label in (("%6", "%6 = subtract"), ("%11", "%11 = divide")):  # further down: scroll
            canvas.show_current(_find(program, result, "main"))
            canvas = await settle(app, pilot)
            region = canvas.scrollable_content_region
            x, y, width, height = canvas.shown_scene.bounds_of(canvas.current_node)
            centred = min(max(y + height / 2 - region.height / 2, 0), canvas.max_scroll_y)
            assert canvas.scroll_y > 0 and abs(canvas.scroll_y - centred) <= 1
            assert label in text_of(canvas)


async def test_current_op_in_a_called_function_switches_to_that_function():
    program = load(NAN_IN_LOOP)
    app = CanvasApp(program)
    async with app.run_test(size=(120, 40)) as pilot:
        canvas = await settle(app, pilot)
        sqrt = _find(program, "%s", "update")
        canvas.show_current(sqrt)
        canvas = await settle(app, pilot)
        assert canvas.border_title.startswith("@update")
        assert "%s = sqrt" in text_of(canvas) and "%d = subtract" in text_of(canvas)

        canvas.toggle_follow()
        canvas.show_current(_find(program, "%sum", "main"))  # follow off: the view stays
        canvas = await settle(app, pilot)
        assert canvas.border_title.startswith("@update") and "follow off" in canvas.border_title
        canvas.toggle_follow()  # back on: jumps to the current op
        canvas = await settle(app, pilot)
        assert canvas.border_title.startswith("@main") and "%sum = reduce" in text_of(canvas)


async def test_click_selects_and_posts_the_op_and_a_second_click_opens_a_folded_box():
    program = load(TINY)
    app = CanvasApp(program)
    async with app.run_test(size=(120, 40)) as pilot:
        canvas = await settle(app, pilot)
        maximum = _find(program, "%3", "main")
        node = canvas.graph.nodes_of(maximum)[0]
        await pilot.click(GraphCanvas, offset=canvas.offset_of(node))
        await pilot.pause()
        assert [(m.node, m.op) for m in app.picked] == [(node, maximum)]
        assert canvas.selected_node == node and canvas.selected_op is maximum

        loop = "collapsed:op:main#1"
        await pilot.click(GraphCanvas, offset=canvas.offset_of(loop))
        await pilot.pause()
        assert app.picked[-1].node == loop and app.picked[-1].op.name == "stablehlo.while"
        await pilot.click(GraphCanvas, offset=canvas.offset_of(loop))  # already selected: open it
        canvas = await settle(app, pilot)
        assert canvas.shown_scene.root == "op:main#1"
        assert "while %0:4" in canvas.border_title
        assert canvas.selected_node == "main#1"  # the loop's own op, drawn inside its cluster


async def test_select_neighbour_moves_the_selection_and_scrolls_it_into_view():
    program = load(TINY)
    app = CanvasApp(program)
    async with app.run_test(size=(120, 20)) as pilot:
        canvas = await settle(app, pilot)
        first = canvas.select(_find(program, "%3", "main"))
        below = canvas.select_neighbour("down")
        assert below is not None and below != first
        assert canvas.shown_scene.bounds_of(below)[1] > canvas.shown_scene.bounds_of(first)[1]
        await pilot.pause()
        assert app.picked[-1].node == below
        for _ in range(8):  # walk down past the bottom of a 20-row window
            canvas.select_neighbour("down")
        await pilot.pause()
        x, y, width, height = canvas.shown_scene.bounds_of(canvas.selected_node)
        region = canvas.scrollable_content_region
        assert canvas.scroll_y > 0
        assert canvas.scroll_y <= y and y + height <= canvas.scroll_y + region.height
        up = canvas.select_neighbour("up")
        assert canvas.shown_scene.bounds_of(up)[1] < y


async def test_zoom_levels_shrink_the_drawing_without_a_new_layout():
    program = load(TINY)
    app = CanvasApp(program)
    async with app.run_test(size=(120, 40)) as pilot:
        canvas = await settle(app, pilot)
        layouts = canvas.builder.layouts
        full = canvas.shown_scene
        canvas.zoom_out()
        canvas = await settle(app, pilot)
        compact = canvas.shown_scene
        assert compact.height < full.height / 2 and "zoom 2/3" in canvas.border_title
        assert "[%3 = maximum]" in text_of(canvas) and "[▸%0:4 = while]" in text_of(canvas)
        assert all(box.height == 1 for box in compact.boxes.values())
        canvas.zoom_out()
        canvas = await settle(app, pilot)
        dots = canvas.shown_scene
        assert dots.width * dots.height < full.width * full.height / 4
        assert "●" in text_of(canvas) and "maximum" not in text_of(canvas)
        canvas.zoom_out()  # no level beyond dots
        assert canvas.zoom == 2
        canvas.zoom_in()
        canvas.zoom_in()
        canvas = await settle(app, pilot)
        # full-size boxes again (around the centre the dots view had, so not necessarily %3)
        assert canvas.shown_scene is full and "╭" in text_of(canvas) and "●" not in text_of(canvas)
        assert canvas.builder.layouts == layouts


def test_zoomed_scenes_keep_every_box_apart_and_every_edge_on_its_boxes():
    builder = SceneBuilder(build_graph(load(TINY).module))
    scenes = [builder.scene(cid) for cid in [None, *builder.graph.clusters]]
    scenes.append(builder.scene("fn:main", expanded=["op:main#1", "region:main#1.1", "region:main#1.0"]))
    for scene in scenes:
        for level in (1, 2):
            zoomed = zoomed_scene(scene, level)
            assert set(zoomed.boxes) == set(scene.boxes)
            cells = [(x, box.y) for box in zoomed.boxes.values() for x in range(box.x, box.x + box.width)]
            assert len(cells) == len(set(cells)), (scene.root, level)
            for box in zoomed.boxes.values():
                assert 0 <= box.x and box.x + box.width <= zoomed.width and 0 <= box.y < zoomed.height
            for edge in zoomed.edges:
                for end, node in ((edge.points[0], edge.source), (edge.points[-1], edge.target)):
                    box = zoomed.boxes[node]
                    assert box.side_of(end) is not None and box.x - 1 <= end[0] <= box.x + box.width and box.y - 1 <= end[1] <= box.y + 1
            paint(zoomed)  # paints without error


async def test_focus_mode_shows_only_the_neighbourhood_and_toggles_back():
    program = load(TINY)
    app = CanvasApp(program)
    async with app.run_test(size=(120, 40)) as pilot:
        canvas = await settle(app, pilot)
        before = canvas.shown_scene
        node = canvas.select(_find(program, "%6", "main"))
        assert canvas.toggle_focus(radius=1) is True
        canvas = await settle(app, pilot)
        assert canvas.focus_mode
        assert set(canvas.shown_scene.boxes) == canvas.graph.neighbourhood(node, 1)
        assert "1 hops around %6 = subtract" in canvas.border_title
        assert "%7 = exponential" in text_of(canvas) and "%3 = maximum" not in text_of(canvas)
        assert canvas.toggle_focus() is False
        canvas = await settle(app, pilot)
        assert canvas.shown_scene is before and not canvas.focus_mode
        assert canvas.selected_node == node


async def test_open_selected_and_go_up_drill_in_and_out():
    program = load(TINY)
    app = CanvasApp(program)
    async with app.run_test(size=(120, 40)) as pilot:
        canvas = await settle(app, pilot)
        assert canvas.open_selected() is False  # nothing selected
        canvas.select(_find(program, "%3", "main"))
        assert canvas.open_selected() is False  # not a folded box
        canvas.select("collapsed:op:main#1")
        assert canvas.open_selected() is True
        canvas = await settle(app, pilot)
        assert canvas.shown_scene.root == "op:main#1"
        canvas.select("collapsed:region:main#1.1")
        canvas.open_selected()
        canvas = await settle(app, pilot)
        assert canvas.shown_scene.root == "region:main#1.1"
        assert canvas.border_title.startswith("@main > while %0:4 > body")
        assert "%12 = func.call" in text_of(canvas)

        assert canvas.go_up() is True
        canvas = await settle(app, pilot)
        assert canvas.shown_scene.root == "op:main#1" and canvas.selected_node == "collapsed:region:main#1.1"
        assert canvas.go_up() is True
        canvas = await settle(app, pilot)
        assert canvas.shown_scene.root == "fn:main" and canvas.selected_node == "collapsed:op:main#1"
        assert canvas.go_up() is True
        canvas = await settle(app, pilot)
        assert set(canvas.shown_scene.boxes) == {"collapsed:fn:main", "collapsed:fn:closed_call"}
        assert canvas.border_title.startswith("program") and canvas.selected_node == "collapsed:fn:main"
        assert canvas.go_up() is False  # nothing above the program

        canvas.show_current(_find(program, "%13", "main"))  # follow opens the loop in place
        canvas = await settle(app, pilot)
        assert canvas.go_up() is True  # folds the innermost open cluster around the current op
        canvas = await settle(app, pilot)
        assert canvas.shown_scene.expanded == frozenset({"op:main#1"})


async def test_breakpoint_markers_current_and_changed_highlights():
    program = load(TINY)
    app = CanvasApp(program)
    async with app.run_test(size=(120, 40)) as pilot:
        canvas = await settle(app, pilot)
        maximum, call, subtract = (_find(program, name, "main") for name in ("%3", "%12", "%6"))
        node = canvas.graph.nodes_of(maximum)[0]
        canvas.set_breakpoints({maximum, call})
        await pilot.pause()
        lines = canvas.visible_text()
        for box in (node, "collapsed:op:main#1"):  # the call is folded inside the loop's box
            x, y, _, _ = canvas.shown_scene.bounds_of(box)
            assert lines[y][x] == "●", box
        canvas.set_breakpoints(set())
        x, y, _, _ = canvas.shown_scene.bounds_of(node)
        assert canvas.visible_text()[y][x] == "╭"

        def title_styles(op):
            x, y, _, _ = canvas.shown_scene.bounds_of(canvas.graph.nodes_of(op)[0])
            row = canvas._window().rows[y + 1 - round(canvas.scroll_y)]
            return {str(segment.style) for segment in row if op.mnemonic in segment.text}

        plain = title_styles(maximum)
        canvas.set_changed({maximum})
        changed = title_styles(maximum)
        assert changed and changed != plain and all("bold" in style for style in changed)
        canvas.show_current(maximum)
        canvas = await settle(app, pilot)
        assert all("reverse" in style for style in title_styles(maximum))
        assert title_styles(subtract) and not any("reverse" in style for style in title_styles(subtract))


async def test_a_program_without_functions_shows_a_message_and_ignores_navigation():
    program = load("module {}")
    app = CanvasApp(program)
    async with app.run_test(size=(80, 20)) as pilot:
        canvas = await settle(app, pilot)
        assert "nothing to draw" in text_of(canvas)
        canvas.show_current(None)
        canvas.pan(5, 5)
        canvas.zoom_out()
        canvas.zoom_in()
        assert canvas.select_neighbour("down") is None
        assert canvas.toggle_focus() is False
        assert canvas.open_selected() is False and canvas.go_up() is False
        assert canvas.select("no-such-node") is None
        canvas = await settle(app, pilot)
        assert "nothing to draw" in text_of(canvas)


async def test_pan_scrolls_the_view():
    program = load(TINY)
    app = CanvasApp(program)
    async with app.run_test(size=(60, 20)) as pilot:
        canvas = await settle(app, pilot)
        top = canvas.visible_text()
        canvas.pan(3, 10)
        await pilot.pause()
        assert (canvas.scroll_x, canvas.scroll_y) == (3, 10)
        assert canvas.visible_text()[0].startswith(top[10][3:])


async def test_a_view_too_large_to_lay_out_falls_back_to_a_smaller_one_or_says_why(monkeypatch):
    monkeypatch.setenv("HLODBG_LAYOUT_ENGINE", "graphviz")  # the node cap is Graphviz's; the layered layout has none
    program = load(TINY)
    app = CanvasApp(program)
    async with app.run_test(size=(120, 40)) as pilot:
        canvas = await settle(app, pilot)
        first = canvas.shown_scene
        canvas.builder.max_nodes = 12  # @main with the loop open is bigger; the loop body alone fits
        add = _find(program, "%13", "main")
        canvas.show_current(add)
        canvas = await settle(app, pilot)
        assert canvas.shown_scene.root == "region:main#1.1" and canvas.current_node in canvas.shown_scene.boxes
        canvas.builder.max_nodes = 1  # nothing new fits: keep the last scene, say why
        canvas.show_current(_find(program, "%2", "closed_call"))
        canvas = await settle(app, pilot)
        assert canvas.shown_scene.root == "region:main#1.1" and "more than 1 can be laid out" in canvas.border_subtitle
        assert canvas.current_node not in canvas.shown_scene.boxes
        canvas.show_current(_find(program, "%6", "main"))  # @main was laid out before: shown again
        canvas = await settle(app, pilot)
        assert canvas.shown_scene is first and canvas.border_subtitle == ""


async def test_theme_colours_keep_labels_readable_in_light_and_dark_themes():
    program = load(TINY)
    app = CanvasApp(program)
    async with app.run_test(size=(120, 40)) as pilot:
        canvas = await settle(app, pilot)
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            await pilot.pause()
            x, y, _, _ = canvas.shown_scene.bounds_of("main#arg0")  # "argument" boxes are white in the palette
            styles = {segment.style for segment in canvas._window().rows[y + 1] if "%arg0" in segment.text}
            assert styles and all(style.color.name != "white" and style.bgcolor is not None for style in styles)
            assert all(style.color == canvas.rich_style.color for style in styles)


class BuildingCanvasApp(App):
    """A canvas given no graph but a way to build it, which waits until the test lets it."""

    def __init__(self, program, fails: bool = False):
        super().__init__()
        import threading

        self.program = program
        self.release = threading.Event()
        self.fails = fails
        self.built: list = []

    def _build(self):
        from hlodbg.layouts.graph import GraphError

        self.release.wait(30)
        if self.fails:
            raise GraphError("the graph would have more than 200,000 nodes")
        return build_graph(self.program.module)

    def compose(self) -> ComposeResult:
        yield GraphCanvas(build=self._build)

    def on_graph_canvas_graph_built(self, message: GraphCanvas.GraphBuilt) -> None:
        self.built.append(message.graph)


async def test_the_graph_is_built_on_the_layout_thread_and_marks_wait_for_it():
    import asyncio

    program = load(NAN_IN_LOOP)
    app = BuildingCanvasApp(program)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        canvas = app.query_one(GraphCanvas)
        op = program.function("main").body.operations[0]
        canvas.show_current(op)  # the debugger's first state comes before the graph
        canvas.set_breakpoints([op])
        assert canvas.graph is None and canvas.current_node is None
        assert "building the graph…" in text_of(canvas)
        app.release.set()
        for _ in range(600):
            if app.built and canvas.shown_scene is not None and not canvas.laying_out:
                break
            await asyncio.sleep(0.05)
        canvas = await settle(app, pilot)
        node = canvas.graph.nodes_of(op)[0]
        assert app.built and canvas.current_node == node and canvas._breakpoints == {node}
        assert canvas._box_for(node, canvas.shown_scene) is not None


async def test_a_graph_that_cannot_be_built_is_said_in_the_pane():
    app = BuildingCanvasApp(load(TINY), fails=True)
    async with app.run_test(size=(120, 40)) as pilot:
        app.release.set()
        canvas = await settle(app, pilot)
        assert canvas.graph is None and not app.built
        assert "cannot draw the graph: the graph would have more than 200,000 nodes" in text_of(canvas)


# The debugger builds its graph once the first state is drawn (GraphCanvas(build_on_mount=False)):
# the build waits for start_building(), and asking again does nothing.
class DeferredCanvasApp(App):
    def __init__(self, program):
        super().__init__()
        self.program = program
        self.builds = 0

    def _build(self):
        self.builds += 1
        return build_graph(self.program.module)

    def compose(self) -> ComposeResult:
        yield GraphCanvas(build=self._build, build_on_mount=False)


async def test_the_graph_is_built_only_when_asked_and_once():
    program = load(NAN_IN_LOOP)
    app = DeferredCanvasApp(program)
    async with app.run_test(size=(120, 40)) as pilot:
        canvas = await settle(app, pilot)
        assert app.builds == 0 and canvas.graph is None and not canvas.laying_out
        assert "building the graph…" in text_of(canvas)
        op = program.function("main").body.operations[0]
        canvas.show_current(op)
        canvas.start_building()
        canvas.start_building()
        canvas = await settle(app, pilot)
        for _ in range(100):
            if canvas.shown_scene is not None and not canvas.laying_out:
                break
            await pilot.pause(0.05)
        canvas.start_building()
        canvas = await settle(app, pilot)
        assert app.builds == 1 and canvas.graph is not None
        assert canvas.current_node == canvas.graph.nodes_of(op)[0]
        assert canvas._box_for(canvas.current_node, canvas.shown_scene) is not None
