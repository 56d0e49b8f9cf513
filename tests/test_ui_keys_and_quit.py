"""Leaving the debugger (`q`, `:quit`, `:q`), the user's keys.toml read with every problem said,
and command lines the user got wrong answered in words, driven through Textual's pilot."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.cli_lesson import open_lesson
from hlodbg.ui.app import HlodbgApp
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
