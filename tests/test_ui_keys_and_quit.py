"""Leaving the debugger (`q`, `:quit`, `:q`), the user's keys.toml read with every problem said,
and command lines the user got wrong answered in words, driven through Textual's pilot."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.cli_lesson import open_lesson
from hlodbg.ui.app import HlodbgApp
from hlodbg.ui.keymap import load_keymap
from hlodbg.ui.widgets.lesson_panel import LessonPanel
from hlodbg.ui.widgets.panels import CommandLine

from .pilot import console_text, press, settle, type_command

DATA = Path(__file__).resolve().parent / "data"
SIZE = (120, 36)

pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")


def nan_app(**kwargs) -> HlodbgApp:
    return HlodbgApp(hlodbg.load(DATA / "nan_in_loop.mlir"), args=[np.full(4, 100, np.float32)], memory="1G",
                     persist=False, **kwargs)


def no_failed_workers(app) -> bool:
    return not [w for w in app.workers if w.error]


# -- quitting ------------------------------------------------------------------------------------

async def test_q_quits_the_debugger():
    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 0


@pytest.mark.parametrize("command", ["quit", "q"])
async def test_the_quit_command_quits(command):
    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await type_command(app, pilot, command)
        assert app.return_code == 0


async def test_quit_with_words_after_it_is_refused_and_q_in_the_command_line_is_typed():
    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await type_command(app, pilot, "quit now")
        assert app.return_code is None
        assert "quit: quit takes nothing after it, not 'now'" in console_text(app.screen)
        await pilot.press("colon", "q")
        await pilot.pause()
        assert app.return_code is None and app.screen.query_one(CommandLine).value == "q"
        await pilot.press("escape", "q")
        await pilot.pause()
        assert app.return_code == 0


async def test_q_quits_a_lesson_but_is_typed_into_its_answer():
    program, run, inputs = open_lesson("dynamic_slice")
    app = HlodbgApp(program, args=inputs, explain=True, lesson=run, persist=False, memory="1G")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        answer = app.screen.query_one(LessonPanel).query_one("#lesson-answer")
        await pilot.press("A", "q")
        await pilot.pause()
        assert app.return_code is None and answer.value == "q"
        await pilot.press("escape", "q")
        await pilot.pause()
        assert app.return_code == 0


# -- commands the user got wrong, and engine calls that fail --------------------------------------

@pytest.mark.parametrize("command,said", [
    ('export "unterminated', "export: no closing quotation in '\"unterminated': close the quote"),
    ("export graph.svg 'x", "export: no closing quotation in"),
    ("export \\", "export: no escaped character in"),
])
async def test_a_command_line_that_does_not_split_is_answered_in_words(command, said):
    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("colon")
        app.screen.query_one(CommandLine).value = command  # as pasted: quotes and backslashes as they are
        await press(app, pilot, "enter")
        assert said in console_text(app.screen)
        assert app.return_code is None and "internal error" not in console_text(app.screen)
        await press(app, pilot, "n")
        assert app.screen.state.position == 1  # the session goes on


async def test_a_failing_memory_profile_is_said_in_the_pane_and_the_session_goes_on(monkeypatch):
    def fails(target):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr("hlodbg.ui.controller.memory_analysis", fails)
    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "m")
        pane = str(app.screen.query_one("#memory").render())
        assert "cannot be counted: RecursionError: maximum recursion depth exceeded" in pane
        assert "internal error in compute_memory: RecursionError" in console_text(app.screen)
        await press(app, pilot, "n")
        assert app.return_code is None and app.screen.state.position == 1


def deep_call_chain(depth: int) -> str:
    """@main calls @f1, which calls @f2, ... down to @f{depth}, which adds."""
    text = ["func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = func.call @f1(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
            "  return %0 : tensor<4xf32>\n}"]
    for i in range(1, depth + 1):
        body = (f"func.call @f{i + 1}(%x) : (tensor<4xf32>) -> tensor<4xf32>" if i < depth
                else "stablehlo.add %x, %x : tensor<4xf32>")
        text.append(f"func.func private @f{i}(%x: tensor<4xf32>) -> tensor<4xf32> {{\n  %0 = {body}\n  return %0 : tensor<4xf32>\n}}")
    return "\n".join(text) + "\n"


async def test_the_memory_pane_on_a_1000_deep_call_chain_never_takes_the_debugger_down():
    app = HlodbgApp(hlodbg.load(deep_call_chain(1000)), memory="256M", persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "m")
        pane = str(app.screen.query_one("#memory").render())
        assert "cannot be counted" in pane or "peak" in pane  # the figures, or why there are none
        assert app.return_code is None


# -- keys.toml -----------------------------------------------------------------------------------

def write_keys(tmp_path, text) -> Path:
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    path = config / "keys.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_every_problem_of_a_keys_file_is_said_with_its_line_and_entry(tmp_path):
    path = write_keys(tmp_path, '[keys]\nstep = ",,,"\nstep_in = "m"\nnot_a_binding = "x"\ncontinue = "ctrl+bogus, hyper+y"\n'
                                'restart = "n"\nzoom_in = 5\nback = "nxt"\nback_out = ["B", "f13"]\n')
    keymap, problems = load_keymap(path)
    assert keymap == {"step_in": "m", "restart": "n", "back_out": "B,f13"}
    assert [str(p) for p in problems] == [
        f"{path}:2: step = \",,,\": an empty key (a comma with no key before or after it); step keeps its default keys",
        f"{path}:3: step_in = \"m\": m is also memory's key: it does step_in, no longer memory (it has no key left: give it one in [keys])",
        f"{path}:4: not_a_binding = \"x\": no binding has the id 'not_a_binding' (? lists the ids)",
        f"{path}:5: continue = \"ctrl+bogus, hyper+y\": 'ctrl+bogus' is not a key name (a character such as n or ?, f1-f24, up, "
        "pageup, escape, space, ctrl+n, ...); continue keeps its default keys",
        f"{path}:6: restart = \"n\": n is also step's key: it does restart, no longer step (it has no key left: give it one in [keys])",
        f"{path}:7: zoom_in = 5: the keys must be a string like \"n,f10\"",
        f"{path}:8: back = \"nxt\": 'nxt' is not a key name (a character such as n or ?, f1-f24, up, pageup, escape, space, "
        "ctrl+n, ...); back keeps its default keys",
    ]


def test_two_remapped_bindings_on_one_key_and_a_key_taken_from_a_binding_with_others_left(tmp_path):
    path = write_keys(tmp_path, '[keys]\nhelp = "h"\nback = "X"\nback_in = "X"\n')
    keymap, problems = load_keymap(path)
    assert keymap == {"help": "h", "back": "X", "back_in": "X"}
    assert [p.short() for p in problems] == [
        "line 2: help = \"h\": h is also pan_left's key: it does help, no longer pan_left (still on ←)",
        "line 3: back = \"X\": X is also back_in's key: it does back, no longer back_in (it has no key left: give it one in [keys])",
    ]


@pytest.mark.parametrize("text,said", [
    (b'[keys]\nstep = "\xff"\n', "line 2: not UTF-8 text (byte 0xff at column 9); using the default keys"),
    (b'[keys\nstep = "n"\n', "cannot read it (Expected ']' at the end of a table declaration (at line 1, column 6)); using the default keys"),
    (b'keys = 5\n', '[keys] must be a table of binding id = "keys"; using the default keys'),
])
async def test_an_unreadable_keys_file_is_said_and_the_default_keys_work(tmp_path, text, said):
    path = write_keys(tmp_path, text)
    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        (notice,) = [n for n in app._notifications if n.severity == "warning"]
        assert notice.title == f"{path}: not as written" and notice.message == said
        await press(app, pilot, "n")
        assert app.screen.state.position == 1


async def test_the_problems_of_a_keys_file_are_one_notice_and_the_good_entries_apply(tmp_path):
    path = write_keys(tmp_path, '[keys]\nstep = ",,,"\nstep_in = "m"\n')
    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        (notice,) = [n for n in app._notifications if n.severity == "warning"]
        assert notice.title == f"{path}: not as written"
        assert notice.message.splitlines() == [
            'line 2: step = ",,,": an empty key (a comma with no key before or after it); step keeps its default keys',
            "line 3: step_in = \"m\": m is also memory's key: it does step_in, no longer memory (it has no key left: give it one in [keys])"]
        await press(app, pilot, "n")  # step kept n
        assert app.screen.state.position == 1


async def test_the_full_stop_key_toggles_follow():
    """A terminal's "." reaches Textual as "full_stop" (its Unicode name), never as "period"."""
    from hlodbg.ui.widgets.graph_canvas import GraphCanvas

    app = nan_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        canvas = app.screen.query_one(GraphCanvas)
        assert canvas.follow
        await press(app, pilot, ".")
        assert not canvas.follow
        await press(app, pilot, "question_mark")
        rows = {binding_id: keys for keys, _, binding_id in app.screen.rows}
        assert rows["follow"] == "."


async def test_keys_typed_right_after_A_go_to_the_lesson_answer_not_to_quit():
    """`A` then `q2x` in one burst (fast typing, a paste): the answer box has focus only once A's
    binding has run, and the keys after it must be typed there, not lost or taken as bindings."""
    from textual import events

    program, run, inputs = open_lesson("dynamic_slice")
    app = HlodbgApp(program, args=inputs, explain=True, lesson=run, persist=False, memory="1G")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        for ch in "Aq2x":  # all queued at once, as a terminal delivers them
            event = events.Key(ch, ch)
            event.set_sender(app)
            app._driver.send_message(event)
        await settle(app, pilot)
        assert app.return_code is None
        assert app.screen.query_one(LessonPanel).query_one("#lesson-answer").value == "q2x"
