"""The debugger UI driven by keys through Textual's pilot: every pane follows each move."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.errors import ParseError
from hlodbg.samples import default_sample_path
from hlodbg.ui.app import HlodbgApp
from hlodbg.ui.screens.error import ErrorScreen
from hlodbg.ui.screens.help import HelpScreen
from hlodbg.ui.widgets.graph_canvas import GraphCanvas
from hlodbg.ui.widgets.inspector import TensorInspector
from hlodbg.ui.widgets.source_view import SourceView

from .pilot import console_text, press, settle

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
SHARED = ROOT.parent / "shared" / "programs"
NAN_PROGRAM = DATA / "nan_in_loop.mlir"
SIZE = (140, 44)


pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")


def nan_app(**kwargs) -> HlodbgApp:
    program = hlodbg.load(NAN_PROGRAM)
    return HlodbgApp(program, args=[np.full(4, 100, np.float32)], memory="1G", persist=False, **kwargs)


def panes(app):
    screen = app.screen
    return screen, screen.query_one(GraphCanvas), screen.query_one(SourceView), screen.query_one(TensorInspector)


async def test_stepping_updates_graph_source_inspector_and_frames():
    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen, canvas, source, inspector = panes(app)
        assert screen.state.op.name == "stablehlo.constant" and source.current_line == 4
        await press(app, pilot, "n")
        assert screen.state.op.name == "stablehlo.while"
        assert source.current_line == 5
        assert canvas.current_node is not None and canvas.op_of(canvas.current_node) is screen.state.op
        assert "%c0" in inspector.render_text() and "just computed" in inspector.render_text()
        await press(app, pilot, "s", "s", "s")  # into the condition: %n, %lt, its return
        assert [f.description for f in screen.state.frames] == ["@main", "@main while.cond #0"]
        assert screen.state.op.name == "stablehlo.return" and source.current_line == 9
        await press(app, pilot, "s", "s", "s")  # the body's %one, %next, then the call
        assert screen.state.op.name == "func.call" and source.current_line == 13
        assert [f.description for f in screen.state.frames] == ["@main", "@main while.body #0"]
        await press(app, pilot, "s")
        assert [f.description for f in screen.state.frames][-1] == "@update"
        assert screen.state.op.name == "stablehlo.convert" and source.current_line == 22
        assert "@main while.body #0" in str(screen.query_one("#frames").render())
        await press(app, pilot, "f")  # just after the call: the body's return
        assert screen.state.frames[-1].description == "@main while.body #0" and source.current_line == 14
        await press(app, pilot, "N")
        assert screen.state.op.name == "func.call"
        await press(app, pilot, "F")  # just before the loop
        assert screen.state.op.name == "stablehlo.while" and screen.state.frames[-1].description == "@main"
        assert canvas.op_of(canvas.current_node) is screen.state.op


async def test_continue_to_a_nan_breakpoint_and_the_inspector_shows_it():
    app = nan_app(break_on="nan")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen, canvas, source, inspector = panes(app)
        assert screen.state.stop_reason == "breakpoint"
        assert source.current_line == 25  # stopped right after the sqrt: the sqrt is shown, the return is next
        text = inspector.render_text()
        assert "%s" in text and "NaN" in text and "iteration 3" in text
        assert any(f.description == "@main while.body #3" for f in screen.state.frames)
        console = console_text(screen)
        assert "breakpoint" in console
        await press(app, pilot, "C")  # back to the start: nothing earlier hits
        assert screen.state.position == 0


async def test_search_select_run_to_and_toggle_breakpoint():
    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen, canvas, source, inspector = panes(app)
        await pilot.press("slash")
        for ch in "sqrt":
            await pilot.press(ch)
        await pilot.press("enter")
        await settle(app, pilot)
        assert screen.selected_op.name == "stablehlo.sqrt"
        assert source.selected_line == 25
        assert canvas.selected_op is screen.selected_op
        assert "not run yet" in inspector.render_text()
        await press(app, pilot, "t")
        assert screen.state.op.name == "stablehlo.sqrt"
        await press(app, pilot, "b")
        assert source.breakpoint_lines == {25}
        await press(app, pilot, "c")
        assert screen.state.stop_reason == "breakpoint" and screen.state.op.name == "stablehlo.sqrt"
        assert screen.state.frames[1].description == "@main while.body #1"  # the first run of the loop body stopped at #0
        await press(app, pilot, "b")
        assert source.breakpoint_lines == set()


async def type_command(app, pilot, text: str) -> str:
    """Type `text` on the command line and press Enter; the console's text after it."""
    await pilot.press("colon")
    for ch in text:
        await pilot.press(ch if ch != " " else "space")
    await pilot.press("enter")
    await settle(app, pilot)
    return console_text(app.screen)


async def test_pin_keeps_a_value_and_unpin_lets_it_go():
    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await press(app, pilot, "n", "n")

        async def command(text: str) -> str:
            return (await type_command(app, pilot, text)).replace("\n", "")

        session = screen.controller.session
        assert "pinned %c0 (event 0)" in await command("pin %c0")
        assert session.pinned == [0]
        assert "pin takes the name of a value" in await command("pin c0")
        assert "%lt is not an op's result computed at this point" in await command("pin %lt")
        assert "is not pinned (pinned: 0)" in await command("unpin 7")
        assert "unpinned event 0" in await command("unpin 0")
        assert session.pinned == []


async def test_command_line_print_watch_goto_and_errors(tmp_path):
    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await press(app, pilot, "n", "n")

        async def command(text: str) -> str:
            return await type_command(app, pilot, text)

        console = await command("print %r#1[0]")
        assert "%r#1[0] = nan" in console
        console = await command("watch %x.sum()")
        assert "watching %x.sum()" in console
        assert "400" in str(screen.query_one("#breakpoints").render())
        console = await command("goto 3")
        assert screen.state.position == 3
        console = await command("frobnicate")
        assert "unknown command 'frobnicate'" in console
        console = await command("print %nope")
        assert "print:" in console.splitlines()[-1]
        # Keys typed into the command line are text, not debugger keys.
        assert screen.state.position == 3
        await pilot.press("g", "y", "enter")  # g opens "show %": the op making %y
        await settle(app, pilot)
        assert screen.selected_op.name == "func.call"
        console = await command("break @update:%s if nan")
        assert "breakpoint #1 @update:%s if nan" in console
        await press(app, pilot, "c")
        assert screen.state.op.name == "func.return" and screen.state.frames[-1].description == "@update"
        out = tmp_path / "graph.svg"
        console = await command(f"export {out} --overlay nan")
        assert f"wrote {out}" in console.replace("\n", "") and "first NaN" in out.read_text()  # a long path wraps


async def test_interrupting_an_endless_loop_keeps_the_session():
    program = hlodbg.load(DATA / "endless.mlir")
    app = HlodbgApp(program, memory="256M", persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await pilot.press("c")
        await pilot.pause(0.5)
        assert screen.busy == "continue"  # as the status bar says it: "running continue: ..."
        status = str(screen.query_one("#status").render())
        assert "running continue:" in status and "continue_" not in status
        await pilot.press("escape")
        await settle(app, pilot)
        assert "interrupting continue…" in console_text(screen)
        assert screen.busy == "" and screen.state.stop_reason == "interrupted"
        position = screen.state.position
        assert position > 10
        await press(app, pilot, "n")
        assert screen.state.position > position


async def test_help_lists_live_bindings_and_keymap_file_remaps(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    (config / "keys.toml").write_text('[keys]\nstep = "m"\nnot_a_binding = "x"\n')
    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await press(app, pilot, "m")
        assert screen.state.position == 1
        await press(app, pilot, "n")
        assert screen.state.position == 1  # n no longer steps
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = {binding_id: keys for keys, _, binding_id in app.screen.rows}
        assert rows["step"] == "m" and rows["step_in"] == "s" and rows["reverse_continue"] == "C"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


async def test_error_screen_for_a_bad_program():
    try:
        hlodbg.load("func.func @main() {\n  %0 = stablehlo.add %a, %b : tensor<f32>\n}\n")
    except ParseError as e:
        error = e
    app = HlodbgApp(error=error)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ErrorScreen)
        assert "use of undefined SSA value %a" in app.screen.message
        await pilot.press("q")


@pytest.mark.skipif(not (SHARED / "gpt_tiny.mlir").exists(), reason="../shared/programs absent")
async def test_a_shared_program_runs_to_the_end_and_reports_results():
    program = hlodbg.load(SHARED / "gpt_tiny.mlir")
    inputs = np.load(SHARED / "gpt_tiny.inputs.npz")
    app = HlodbgApp(program, args=[inputs[f"arg{i}"] for i in range(len(inputs.files))], memory="1G", persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen, canvas, source, inspector = panes(app)
        await press(app, pilot, "s", "s", "s")
        assert screen.state.position == 3
        call = next(op for op in program.module.entry.ops if op.name == "func.call")
        screen.select_op(call)
        await settle(app, pilot)
        await press(app, pilot, "t")
        assert screen.state.op is call
        await press(app, pilot, "s")
        assert screen.state.frames[-1].description.startswith("@") and len(screen.state.frames) == 2
        await press(app, pilot, "c")
        assert screen.state.finished and screen.total == screen.state.recorded
        status = str(screen.query_one("#status").render())
        assert f"/{screen.total:,}" in status and "finished" in status


def test_default_sample_is_packaged_and_opens():
    assert default_sample_path().is_file()
    program = hlodbg.load(default_sample_path())
    assert {op.name for op in program.ops} >= {"stablehlo.while", "stablehlo.reduce", "func.call"}


def test_open_without_a_terminal_prints_the_diagnostic(tmp_path, capsys):
    from hlodbg.cli import main

    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main() {\n  %0 = stablehlo.add %a, %b : tensor<f32>\n}\n")
    assert main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.mlir:2:22: error: use of undefined SSA value %a" in err and "Traceback" not in err


def test_open_builds_the_app_with_arguments_and_breakpoint(tmp_path):
    from hlodbg.cli import _parser
    from hlodbg.ui_entry import build_app

    values = tmp_path / "x.npz"
    np.savez(values, arg0=np.full(4, 100, np.float32))
    args = _parser().parse_args(["open", str(NAN_PROGRAM), "--args", str(values), "--break-on", "nan", "--seed", "3"])
    app = build_app(args)
    assert app.error is None and app.break_on == "nan" and app.options["seed"] == 3
    assert np.array_equal(app.options["args"]()[0], np.full(4, 100, np.float32))  # read while the app starts
    missing = _parser().parse_args(["open", str(tmp_path / "nope.mlir")])
    assert "no such file" in build_app(missing).error.render()


def test_open_refuses_a_wrong_arguments_file_before_reading_it(tmp_path):
    """The arguments are read on a thread while the debugger starts, but a file whose keys or
    headers do not fit the program is refused at once, on the error screen, as before."""
    from hlodbg.cli import _parser
    from hlodbg.ui_entry import build_app

    values = tmp_path / "x.npz"
    np.savez(values, arg0=np.zeros((3, 3), np.float32))
    app = build_app(_parser().parse_args(["open", str(NAN_PROGRAM), "--args", str(values)]))
    assert app.error is not None and "key 'arg0'" in app.error.render() and "expected tensor<4xf32>" in app.error.render()
    np.savez(values, nonsense=np.zeros(4, np.float32))
    app = build_app(_parser().parse_args(["open", str(NAN_PROGRAM), "--args", str(values)]))
    assert app.error is not None and "nonsense" in app.error.render()


def test_serve_runs_the_same_app_per_browser_tab(monkeypatch):
    import hlodbg.serve as serve_module
    import hlodbg.serve_zygote as zygote_module
    from hlodbg.cli import main

    served = {}

    class FakeServer:
        def __init__(self, command, host, port, title, public_url=None, token=None, max_sessions=None, zygote=None):
            served.update(command=command, host=host, port=port, title=title)
            self.link = public_url

        def serve(self):
            served["serving"] = True

    class FakeZygote:
        @classmethod
        def start(cls, warm, run):
            return cls()

        def close(self):
            pass

    monkeypatch.setattr(serve_module, "WorkshopServer", FakeServer)
    monkeypatch.setattr(zygote_module, "Zygote", FakeZygote)
    assert main(["serve", str(NAN_PROGRAM), "--port", "8123", "--break-on", "nan"]) == 0
    assert served["serving"] and served["port"] == 8123 and served["title"] == "hlodbg"
    assert "-m hlodbg open" in served["command"] and str(NAN_PROGRAM) in served["command"] and "--break-on nan" in served["command"]


def _shared(name: str):
    path = SHARED / f"{name}.mlir"
    return pytest.param(path, marks=pytest.mark.skipif(not path.exists(), reason="../shared/programs absent"), id=name)


@pytest.mark.parametrize("path", [_shared(n) for n in ("mlp", "rnn_scan", "sort_topk", "cnn", "embed_update", "mixed_bf16")])
async def test_shared_programs_step_search_run_to_and_finish(path):
    program = hlodbg.load(path)
    inputs = np.load(path.with_suffix(".inputs.npz"))
    expected = np.load(path.with_name(path.stem + ".expected.npz"))
    app = HlodbgApp(program, args=[inputs[f"arg{i}"] for i in range(len(inputs.files))], memory="1G", persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen, canvas, source, inspector = panes(app)
        for _ in range(4):
            before = (screen.state.position, screen.state.op)
            await press(app, pilot, "s")
            op = screen.state.op
            # Stepping into a reducer body opens a replay of it, whose events count from 0.
            assert (screen.state.position, op) != before
            assert canvas.op_of(canvas.current_node) is op
            assert source.current_line == op.pos.line
            from hlodbg.engine.debug.stops import op_label

            assert inspector.render_text().startswith(f"next: {op_label(op)}")
            assert ("just computed" in inspector.render_text()) == bool(screen.state.results)
            assert screen.state.frames[0].description == "@main"
        await press(app, pilot, "N")
        assert (screen.state.position, screen.state.op) == before
        await press(app, pilot, "C")  # back to the start of the run
        assert screen.state.position == 0 and len(screen.state.frames) == 1
        # Search for the last op of @main and run to it.
        target = [op for op in program.module.entry.body.operations][-2]
        await pilot.press("colon")
        for ch in f"/{target.results[0].name}" if target.results else "/return":
            await pilot.press(ch)
        await pilot.press("enter")
        await settle(app, pilot)
        assert screen.selected_op is target and source.selected_line == target.pos.line
        await press(app, pilot, "t")
        assert screen.state.op is target
        await press(app, pilot, "c")
        assert screen.state.finished and not screen.state.error
        results = app.controller.submit(lambda: app.controller.session.results).result()
        for i, value in enumerate(results):
            want = expected[f"result{i}"]
            np.testing.assert_allclose(np.asarray(value, dtype=np.float64), want.astype(np.float64), rtol=2e-2 if "bf16" in path.stem else 1e-4, atol=1e-5)
