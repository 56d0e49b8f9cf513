"""What the debugger shows where it stops: values named as the current frame sees them, the op a
value breakpoint caught, `g` for a value, the replay note of a reducer body and errors at launch."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

import hlodbg
from hlodbg.ui.app import HlodbgApp
from hlodbg.ui.widgets.graph_canvas import GraphCanvas
from hlodbg.ui.widgets.inspector import TensorInspector
from hlodbg.ui.widgets.source_view import SourceView

from .pilot import console_text, press, settle, type_command

DATA = Path(__file__).resolve().parent / "data"
SIZE = (140, 44)

pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")


async def test_values_after_stepping_over_a_call_are_named_as_the_caller_sees_them():
    program = hlodbg.load(DATA / "call_names.mlir")
    app = HlodbgApp(program, args=[np.arange(4, dtype=np.float32)], memory="256M", persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen, inspector = app.screen, app.screen.query_one(TensorInspector)
        await type_command(app, pilot, "break func.call")
        await press(app, pilot, "c")
        assert screen.state.op.name == "func.call"
        await press(app, pilot, "n")
        assert screen.state.op.name == "stablehlo.concatenate" and screen.state.frames[-1].function == "main"
        just = [v for v in screen.state.results]
        assert [(v.label, v.type_text) for v in just] == [("%0", "tensor<2xf32>")]  # the call's, not @half's %1
        await press(app, pilot, "n", "n")
        assert screen.state.finished
        text = inspector.render_text()
        assert "result 0" in text and "tensor<4xf32>" in text and "-0 -1 -0 -1" in text.replace(".", "").replace("  ", " ")


def nan_app(**kwargs) -> HlodbgApp:
    program = hlodbg.load(DATA / "nan_in_loop.mlir")
    return HlodbgApp(program, args=[np.full(4, 100, np.float32)], memory="1G", persist=False, **kwargs)


@pytest.mark.parametrize("size", [(100, 30), (200, 55)])
async def test_a_nan_stop_shows_the_op_that_made_it_with_its_operands(size):
    app = nan_app(break_on="nan")
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        screen = app.screen
        source, canvas, inspector = screen.query_one(SourceView), screen.query_one(GraphCanvas), screen.query_one(TensorInspector)
        assert screen.state.stop_reason == "breakpoint" and screen.state.op.name == "func.return"
        assert source.current_line == 25  # the sqrt, not the return about to run
        assert canvas.op_of(canvas.current_node).name == "stablehlo.sqrt"
        for _ in range(400):  # the layout thread may still be drawing the function (a wait, not a timing)
            scene = canvas.shown_scene
            if not canvas.laying_out and scene is not None and canvas.current_node in scene.boxes:
                if canvas.offset_of(canvas.current_node) is not None:
                    break
            await pilot.pause(0.05)
        scene = canvas.shown_scene
        where = (canvas.scroll_x, canvas.scroll_y, canvas.scrollable_content_region, scene.bounds_of(canvas.current_node) if scene and canvas.current_node in scene.boxes else None)
        assert canvas.offset_of(canvas.current_node) is not None, where  # scrolled into view
        assert screen.selected_op.name == "stablehlo.sqrt"
        text = inspector.render_text()
        assert "stablehlo.sqrt at line 25" in text and "next: func.return" in text
        assert "operand 0: %d  4xf32 [-2 -2 -2 -2]" in text  # the negative operand, on the stop screen
        inspector.next_value()  # the operand: negative, finite
        assert "min -2" in inspector.render_text() and "NaN 0" in inspector.render_text()


@pytest.mark.parametrize("typed", ["d", "%d", "@update:%d", "@update:d"])
async def test_g_finds_a_value_typed_with_or_without_its_percent_sign(typed):
    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await type_command(app, pilot, typed, prefix="g")  # g pre-fills "show %"
        assert screen.selected_op is not None and screen.selected_op.name == "stablehlo.subtract", console_text(screen)
        assert "no op makes" not in console_text(screen)
        assert "%%" not in console_text(screen)  # the echo names the value as it is meant


async def test_a_bad_break_on_stays_readable_and_the_run_waits_at_its_start():
    app = nan_app(break_on="abs(%x")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert screen.state.position == 0 and not screen.state.finished
        shown = [n for n in app._notifications if n.severity == "error"]
        assert shown and "abs(%x" in shown[0].message and "--break-on" in shown[0].title
        assert shown[0].timeout >= 60
        await press(app, pilot, "n")
        assert [n for n in app._notifications if n.severity == "error"]  # still there after a move


@pytest.mark.parametrize("size", [(200, 55), (100, 30)])
async def test_help_shows_printed_keys_and_fits_or_scrolls(size):
    from textual.containers import VerticalScroll

    from hlodbg.ui.screens.help import HelpScreen

    app = nan_app()
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen)
        rows = {binding_id: keys for keys, _, binding_id in app.screen.rows}
        assert rows["search"] == "/" and rows["help"] == "?" and rows["index_next"] == "]" and rows["follow"] == "."
        assert rows["pan_left"] == "←, h" and rows["slice_down"] == "pgdn"  # no focused pane takes them
        console = Console(width=size[0], record=True, file=io.StringIO())
        for widget in app.screen.query("Static"):
            console.print(widget.content)
        shown = console.export_text()
        assert "step over backwards" in shown
        assert "question_mark" not in shown and "slash" not in shown and "right_square_bracket" not in shown
        scroll = app.screen.query_one("#help-scroll", VerticalScroll)
        if size == (200, 55):
            assert scroll.max_scroll_y == 0  # everything at once
        else:
            assert scroll.max_scroll_y > 0
            await press(app, pilot, "pagedown")
            assert scroll.scroll_y > 0


async def test_a_reducer_body_has_a_one_line_note_and_its_values_say_what_they_hold():
    program = hlodbg.load(DATA / "reduce_rows.mlir")
    app = HlodbgApp(program, args=[np.ones((32, 32), np.float32)], memory="256M", persist=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await press(app, pilot, "n", "s", "n", "n")
        assert screen.state.op.name == "stablehlo.add" and len(screen.state.frames) == 2
        frames = str(screen.query_one("#frames").render())
        assert "whole arrays" not in frames and "(:note)" in frames
        assert len(frames.splitlines()) <= 4  # two frames, one note line (a 38-column pane wrapped the note over 6)
        status = str(screen.query_one("#status").render())
        assert "replayed" not in status
        console = console_text(screen)
        assert console.count("replayed as a region") == 1 and "whole arrays" not in console
        assert "tensor<f32> × 32 pairs at once" in screen.query_one(TensorInspector).render_text()
        frames_pane = screen.query_one("#frames")
        note = [line for line in str(frames_pane.render()).splitlines() if "(:note)" in line]
        assert note and len(note[0]) <= frames_pane.size.width  # not wrapped over several rows
        await type_command(app, pilot, "note")
        assert "each on whole arrays" in console_text(screen)  # the details, on demand
        await press(app, pilot, "n")  # the add ran: its result has no name in the short form
        assert screen.state.op.name == "stablehlo.return"
        labels = [v.label for v in [*screen.state.results, *screen.state.operands]]
        assert labels == ["result 0", "operand 0"], labels
        assert "[]" not in screen.query_one(TensorInspector).render_text()


async def test_the_current_op_stays_in_view_when_the_graph_pane_shrinks():
    # A scroll made while the pane was tall (all of the scene in view, nothing to scroll) must not
    # leave the op off screen once the pane is smaller.
    app = nan_app(break_on="nan")
    async with app.run_test(size=(200, 90)) as pilot:
        await settle(app, pilot)
        canvas = app.screen.query_one(GraphCanvas)
        for _ in range(400):  # the layout thread may still be drawing the function (a wait, not a timing)
            if not canvas.laying_out and canvas.shown_scene is not None and canvas.current_node in canvas.shown_scene.boxes:
                break
            await pilot.pause(0.05)
        await pilot.resize_terminal(100, 30)
        await pilot.pause(0.2)
        assert canvas.offset_of(canvas.current_node) is not None


async def test_keys_typed_right_after_colon_go_to_the_command_line():
    """A burst of keys (fast typing, a paste, `tmux send-keys`) arrives before the command line
    has focus; none of it may reach the bindings (b: breakpoint on the selected op, c: continue)."""
    from textual import events

    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        for ch in ":break stablehlo.sqrt\r":  # all queued at once, as a terminal delivers them
            key = {":": "colon", " ": "space", ".": "full_stop", "\r": "enter"}.get(ch, ch)
            event = events.Key(key, "\r" if ch == "\r" else ch)
            event.set_sender(app)
            app._driver.send_message(event)
        await settle(app, pilot)
        assert [bp.spec for bp in screen.state.breakpoints] == ["stablehlo.sqrt"], console_text(screen)
        assert screen.state.position == 0 and not screen.state.finished  # no 'c' reached the run


@pytest.mark.parametrize("size", [(100, 30), (200, 55)])
async def test_a_stop_scrolls_its_op_into_view_when_its_scene_is_the_first_one_shown(size, monkeypatch):
    """A slow layout (a loaded machine) means the scene of the function that stopped is the first
    the pane shows: it has no scrollbars yet, and a scroll asked for then was dropped."""
    import threading

    from hlodbg.layouts.scene_views import SceneViews

    lay_out, request_scene = SceneViews.lay_out, GraphCanvas._request
    stop_asked = threading.Event()

    def ask(self, request):
        if request.reveal is not None:
            stop_asked.set()
        request_scene(self, request)

    def lay_out_until_the_stop_asks(self, request, current=None):
        if request.reveal is None:  # the opening view: finish only once the stop wants another
            stop_asked.wait(30)
        return lay_out(self, request, current)

    monkeypatch.setattr(GraphCanvas, "_request", ask)
    monkeypatch.setattr(SceneViews, "lay_out", lay_out_until_the_stop_asks)
    app = nan_app(break_on="nan")
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        canvas = app.screen.query_one(GraphCanvas)
        for _ in range(400):  # the layout thread may still be drawing (a wait, not a timing)
            if not canvas.laying_out and canvas.shown_scene is not None and canvas.current_node in canvas.shown_scene.boxes:
                break
            await pilot.pause(0.05)
        await settle(app, pilot)
        assert canvas.op_of(canvas.current_node).name == "stablehlo.sqrt"
        assert canvas.offset_of(canvas.current_node) is not None, (canvas.scroll_x, canvas.scroll_y)


async def test_a_condition_that_fails_to_evaluate_stops_and_says_why():
    program = hlodbg.load(DATA / "call_names.mlir")
    app = HlodbgApp(program, args=[np.arange(4, dtype=np.float32)], memory="256M", persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await type_command(app, pilot, "break func.call if result[100] > 0")
        await press(app, pilot, "c")
        assert screen.state.stop_reason == "breakpoint"  # right after the call (its condition reads results)
        shown = screen.state.note + console_text(screen)
        assert "condition could not be evaluated" in shown and "index 100" in shown, shown
        await press(app, pilot, "c")  # said once: the run goes on to its end
        assert screen.state.finished
