"""The provenance view (the inspector's element cursor traced to the operands' elements, and back)
and the explain pane (`i`, `:explain [%op] [--at i,j]`, `:lang`), driven through Textual's pilot."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.phrases import translations
from hlodbg.ui.app import HlodbgApp
from hlodbg.ui.commands import CommandError, CommandRunner, parse_element
from hlodbg.ui.state import MarkedTensor
from hlodbg.ui.widgets.explain_pane import ExplainPane
from hlodbg.ui.widgets.inspector import TensorInspector
from hlodbg.ui.widgets.provenance_view import MARKS_ELSEWHERE, ROLE_STYLES, SELECTED_STYLE, ProvenanceView, tensor_block

from .pilot import console_text, press, settle, type_command

PROGRAM = Path(__file__).resolve().parent / "data" / "teaching.mlir"
OPERAND = np.arange(12, dtype=np.float32).reshape(3, 4)
INDICES = np.array([[2], [5]], np.int32)  # 5 is clamped to 3, the last row of %t
SPD = np.array([[4, 2], [2, 3]], np.float32)

pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")


def teaching_app(**kwargs) -> HlodbgApp:
    return HlodbgApp(hlodbg.load(PROGRAM), args=[OPERAND, INDICES, SPD], memory="1G", persist=False, **kwargs)


def panes(app):
    screen = app.screen
    return screen.query_one(TensorInspector), screen.query_one(ProvenanceView), screen.query_one(ExplainPane)


async def cursor_to(app, pilot, row: int, col: int) -> None:
    """The element cursor from where it starts (shown once moved) to (row, col)."""
    await press(app, pilot, "shift+right", "shift+left")
    await press(app, pilot, *["shift+down"] * row, *["shift+right"] * col)


async def test_the_cursor_on_a_transpose_result_marks_the_operand_element_and_says_the_arithmetic():
    app = teaching_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        inspector, view, _ = panes(app)
        assert not view.display  # nothing pointed at yet
        await press(app, pilot, "n")  # over the transpose: %t is the value just computed
        await cursor_to(app, pilot, 3, 2)
        assert inspector.pointed[1] == (3, 2)
        assert view.display
        state = view.state
        operand, result = state.tensors
        assert operand.label == "operand 0: %operand" and operand.marks == {(2, 3): "copied element"}
        assert result.label == "%t" and result.selected == (3, 2)
        text = view.render_text()
        assert "where %t[3, 2] comes from (stablehlo.transpose)" in text
        assert "result(3, 2) = operand(2, 3)" in text
        assert "result dimension 0 reads operand dimension 1 (permutation[0] = 1), index 3" in text
        await press(app, pilot, "shift+up")
        assert view.state.tensors[0].marks == {(2, 2): "copied element"}


async def test_the_cursor_on_an_operand_marks_the_result_elements_it_reaches():
    app = teaching_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        inspector, view, _ = panes(app)
        assert app.screen.state.op.name == "stablehlo.transpose"  # about to run: its operand is shown
        assert inspector.selected.label == "operand 0: %operand"
        await cursor_to(app, pilot, 1, 3)
        state = view.state
        assert state.title == "which result elements operand 0: %operand[1, 3] reaches (stablehlo.transpose)"
        reached = state.tensors[1]
        assert reached.marks == {(3, 1): "result element it reaches"} and reached.value is None
        assert "operand 0: %operand[1, 3] helps make 1 result element(s): %t[3, 1]" in view.render_text()
        assert "the op has not run yet" in view.render_text()


async def test_the_cursor_on_a_gather_result_marks_its_start_index_and_the_clamped_row():
    app = teaching_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        inspector, view, _ = panes(app)
        await press(app, pilot, "n", "n")  # over the gather: %g just computed
        assert inspector.selected.label == "%g"
        await cursor_to(app, pilot, 1, 2)
        state = view.state
        assert not state.error, state.error
        operand, indices, result = state.tensors
        assert list(operand.marks) == [(3, 2)]  # index 5 clamped to row 3 of %t
        assert list(indices.marks) == [(1, 0)]
        assert result.selected == (1, 2)
        assert state.lines  # the index arithmetic, with its numbers
        assert any("5" in line and "3" in line for line in state.lines)


async def test_an_op_without_provenance_says_why_in_one_line():
    app = teaching_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        inspector, view, _ = panes(app)
        await press(app, pilot, "n", "n", "n")  # over the while loop
        assert inspector.selected.label == "%c"
        await cursor_to(app, pilot, 1, 0)
        state = view.state
        assert "stablehlo.while: hlodbg cannot trace its result elements" in state.error
        assert "\n" not in state.error and not state.tensors


async def test_lang_ja_speaks_japanese_and_a_bad_language_is_refused():
    app = teaching_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        _, view, _ = panes(app)
        await press(app, pilot, "n")
        await cursor_to(app, pilot, 0, 1)
        await type_command(app, pilot, "lang ja")
        text = view.render_text()
        assert translations("ja")["copied element"] in text
        assert "結果の次元 0 はオペランドの次元 1 を読む" in text
        assert app.screen.lang == "ja"
        await press(app, pilot, "i")  # the explain pane speaks it too
        heading = translations("ja")["What it does"]
        assert heading != "What it does" and heading in panes(app)[2].render_text()
        await type_command(app, pilot, "lang xx")
        assert "lang takes one of en, ja, hi, not 'xx'" in console_text(app.screen)
        assert app.screen.lang == "ja"


async def test_explain_opens_the_pane_on_the_op_and_the_element():
    app = teaching_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        inspector, view, pane = panes(app)
        assert not pane.display
        await press(app, pilot, "n", "n")
        await type_command(app, pilot, "explain %g --at 1,2")
        assert pane.display
        assert inspector.pointed[0].label == "%g" and inspector.pointed[1] == (1, 2)
        text = pane.render_text()
        assert "gather" in text.splitlines()[0]
        assert len([line for line in text.splitlines() if line and not line.startswith(" ")]) > 3  # its sections
        assert list(view.state.tensors[0].marks) == [(3, 2)]
        await press(app, pilot, "i")
        assert not pane.display
        await type_command(app, pilot, "explain %t --at 9,9")
        assert "has no result element [9, 9]" in console_text(app.screen)


async def test_explain_without_an_op_explains_the_op_about_to_run_not_the_value_just_computed():
    app = teaching_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        inspector, _, pane = panes(app)
        await press(app, pilot, "n")  # %t just computed, the gather next
        await type_command(app, pilot, "explain --at 1,2")
        assert inspector.pointed[1] is None  # the gather has no result yet to put the cursor on
        assert "%g = stablehlo.gather has no result element [1, 2] to point at here" in console_text(app.screen)
        text = pane.render_text()
        assert "gather" in text.splitlines()[0] and "(1, 2)" in text  # its provenance, from its operands


async def test_the_app_opens_with_the_explain_pane_and_toggle_explain_closes_it():
    app = teaching_app(explain=True)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        _, _, pane = panes(app)
        assert pane.display and "transpose" in pane.render_text()
        await app.run_action("toggle_explain")
        await settle(app, pilot)
        assert not pane.display


@pytest.mark.parametrize("size", [(100, 30), (200, 55)])
async def test_the_panes_fit_small_and_large_screens(size):
    app = teaching_app(explain=True)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        screen = app.screen
        inspector, view, pane = panes(app)
        await press(app, pilot, "n")
        await cursor_to(app, pilot, 1, 1)
        for widget in (inspector, view, pane, screen.query_one("#graph")):
            region = widget.region
            assert widget.display and region.width >= 20 and region.height >= 5, (widget, region)
            assert region.right <= size[0] and region.bottom <= size[1]
        narrow = size[0] < 150
        assert screen.query_one("#source").display is not narrow
        assert screen.query_one("#side").display is not narrow
        assert "result(1, 1) = operand(1, 1)" in view.render_text()


def test_a_big_tensor_shows_the_window_around_its_marks_and_counts_the_others():
    value = np.arange(40 * 30, dtype=np.int32).reshape(40, 30)
    tensor = MarkedTensor("operand 0: %x", "tensor<40x30xi32>", value, {(20, 10): "start", (21, 11): "start", (0, 29): "start"}, None)
    styles = {"start": ROLE_STYLES[0]}
    lines = tensor_block(tensor, styles)
    text = "\n".join(line.plain for line in lines)
    assert "[16:24, 6:14]" in text  # 8 rows and 8 columns around the first mark (the marks span more)
    assert MARKS_ELSEWHERE.say("en", count=1) in text
    marked = {span.style for line in lines for span in line.spans if line.plain[span.start:span.end].strip() == str(value[20, 10])}
    assert ROLE_STYLES[0] in marked
    selected = tensor_block(MarkedTensor("r", "tensor<2x2xf32>", np.eye(2, dtype=np.float32), {}, (1, 1)), {})
    assert any(span.style == SELECTED_STYLE for line in selected for span in line.spans)


def test_explain_and_lang_commands_are_parsed_with_clear_errors():
    assert parse_element("1,0,2") == (1, 0, 2) and parse_element("[3, 4]") == (3, 4) and parse_element("()") == ()
    with pytest.raises(CommandError, match="numbers separated by commas"):
        parse_element("1,x")

    class Finder:
        def find_ops(self, text):
            return []

    runner = CommandRunner.__new__(CommandRunner)
    runner.find_ops = Finder().find_ops
    assert "no op makes %zz" in runner.run("explain %zz").output
    assert "--at needs an element" in runner.run("explain --at").output
    result = runner.run("explain --at 1,2")
    assert result.explain.op is None and result.explain.at == (1, 2)


async def test_a_collective_on_a_grid_marks_the_operand_elements_of_every_device_it_reads():
    ring = Path(__file__).resolve().parent / "data" / "grid_ring.mlir"
    x = np.array([1.0, 2.0], np.float32)
    app = HlodbgApp(hlodbg.load(ring), args=[x], memory="256M", persist=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        inspector, view, _ = panes(app)
        await press(app, pilot, "n", "n", "n", "n", "n", "D")  # over the all_reduce; focus on device 1
        assert inspector.selected.label == "%sum"
        await press(app, pilot, "shift+right")
        own, peer, result = view.state.tensors
        assert own.label == "operand 0: %y" and list(own.marks) == [(1,)]
        assert peer.label == "operand 0: %y on device 0" and list(peer.marks) == [(1,)]
        assert list(peer.value) == list(x) and list(own.value) == list(x + 1)  # each device's own %y
        assert result.selected == (1,) and result.value[1] == (x + x + 1)[1]


def test_a_big_tensor_shows_each_slice_holding_marks_up_to_four():
    value = np.arange(6 * 10 * 10, dtype=np.int32).reshape(6, 10, 10)
    marks = {(k, 2, 3): "reduced" for k in range(6)}  # a reduction along the leading axis
    lines = tensor_block(MarkedTensor("operand 0: %x", "tensor<6x10x10xi32>", value, marks, None), {"reduced": ROLE_STYLES[1]})
    text = "\n".join(line.plain for line in lines)
    assert [line for line in text.splitlines() if line.startswith("[")] == [f"[{k}, 0:8, 0:8]" for k in range(4)]
    assert MARKS_ELSEWHERE.say("en", count=2) in text
    styled = [line.plain[span.start:span.end].strip() for line in lines for span in line.spans if span.style == ROLE_STYLES[1]]
    assert styled == [str(value[k, 2, 3]) for k in range(4)]
