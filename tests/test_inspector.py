"""The tensor inspector pane: statistics, histogram, N-D slices, number formatting and diffs."""
from __future__ import annotations

import threading
from contextlib import asynccontextmanager

import ml_dtypes
import numpy as np
from textual import events
from textual.app import App, ComposeResult

from hlodbg.engine.ir.dtypes import TOKEN
from hlodbg.ui.state import ValueView
from hlodbg.ui.widgets import inspector as inspector_module
from hlodbg.ui.widgets.inspector import TensorInspector


class InspectorApp(App):
    def compose(self) -> ComposeResult:
        yield TensorInspector()


@asynccontextmanager
async def inspector_in_app(size=(100, 30)):
    app = InspectorApp()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        yield app.query_one(TensorInspector), pilot


def count_cells_formatted(monkeypatch) -> list[int]:
    """The number of elements of each window the inspector formats into text, as it does so."""
    original, sizes = inspector_module.format_cells, []

    def counted(window, *args, **kwargs):
        sizes.append(window.size)
        return original(window, *args, **kwargs)

    monkeypatch.setattr(inspector_module, "format_cells", counted)
    return sizes


def count_calls_on_this_thread(monkeypatch, module, name: str) -> list:
    """Calls of `module.name` made on the calling thread (a worker's calls are not counted)."""
    original, calls, here = getattr(module, name), [], threading.get_ident()

    def counted(*args, **kwargs):
        if threading.get_ident() == here:
            calls.append(None)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def slice_table(text: str) -> tuple[str, list[int], dict[int, list[str]]]:
    """The slice header, the column indices and the cells of each row label of a 2-D slice."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("slice ["))
    columns = [int(label) for label in lines[start + 1].split()]
    rows = {}
    for line in lines[start + 2:]:
        label, *cells = line.split()
        rows[int(label)] = cells
    return lines[start], columns, rows


def vector_cells(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("elements "))
    return [cell for line in lines[start + 1:] for cell in line.split(":", 1)[1].split()]


def cube() -> np.ndarray:
    return (np.arange(24, dtype=np.float32) * 0.5).reshape(2, 3, 4)


async def test_3d_tensor_shows_stats_header_and_the_chosen_slice():
    async with inspector_in_app() as (inspector, pilot):
        inspector.show_values("operands and results of %5 = stablehlo.add", [
            ValueView("operand 0: %a", "tensor<2x3x4xf32>", cube(), where="event 7"),
            ValueView("result 0", "tensor<2x3x4xf32>", None),
        ])
        await pilot.pause()
        text = inspector.render_text()
        assert "operands and results of %5 = stablehlo.add" in text
        assert "[operand 0: %a]  result 0" in text
        assert "operand 0: %a  tensor<2x3x4xf32>  event 7" in text
        assert "size 24  min 0  max 11.5  mean 5.75  std 3.46109  zeros 1  NaN 0  +Inf 0  -Inf 0" in text
        assert "histogram 0 ▕" in text and "▏ 11.5" in text
        header, columns, rows = slice_table(text)
        assert header.startswith("slice [0, :, :]  rows: axis 1 (0-2 of 3)  cols: axis 2 (0-3 of 4)")
        assert columns == [0, 1, 2, 3]
        assert rows == {0: ["0", "0.5", "1", "1.5"], 1: ["2", "2.5", "3", "3.5"], 2: ["4", "4.5", "5", "5.5"]}
        assert inspector.selected.label == "operand 0: %a"


async def test_moving_the_index_and_cycling_axes_change_the_slice():
    values = cube()
    async with inspector_in_app() as (inspector, pilot):
        inspector.show_values("t", [ValueView("%a", "tensor<2x3x4xf32>", values)])
        inspector.index_next()
        header, _, rows = slice_table(inspector.render_text())
        assert header.startswith("slice [1, :, :]")
        assert rows[1] == [f"{x:g}" for x in values[1, 1]]
        inspector.index_next()  # wraps around
        assert slice_table(inspector.render_text())[0].startswith("slice [0, :, :]")
        inspector.index_previous()
        assert slice_table(inspector.render_text())[0].startswith("slice [1, :, :]")

        inspector.cycle_row_axis()  # rows: axis 1 -> 2 is the column axis -> 0
        header, columns, rows = slice_table(inspector.render_text())
        assert header.startswith("slice [:, 0, :]  rows: axis 0 (0-1 of 2)  cols: axis 2 (0-3 of 4)")
        assert rows[1] == [f"{x:g}" for x in values[1, 0]]
        inspector.cycle_col_axis()  # columns: axis 2 -> 0 is the row axis -> 1
        header, columns, rows = slice_table(inspector.render_text())
        assert header.startswith("slice [:, :, 0]  rows: axis 0 (0-1 of 2)  cols: axis 1 (0-2 of 3)")
        assert rows[1] == [f"{x:g}" for x in values[1, :, 0]]
        inspector.cycle_row_axis()  # rows: axis 2, columns: axis 1 -> shown transposed
        header, columns, rows = slice_table(inspector.render_text())
        assert header.startswith("slice [1, :, :]  rows: axis 2 (0-3 of 4)  cols: axis 1 (0-2 of 3)")
        assert rows[3] == [f"{x:g}" for x in values[1, :, 3]]


async def test_fixed_axis_choice_and_2d_axis_swap():
    values = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)
    async with inspector_in_app() as (inspector, pilot):
        inspector.show_values("t", [ValueView("%a", "tensor<2x3x4x5xi32>", values),
                                    ValueView("%m", "tensor<2x3xi32>", values[0, 0, :2, :3])])
        inspector.index_next()
        assert slice_table(inspector.render_text())[0].startswith("slice [1, 0, :, :]")
        inspector.cycle_fixed_axis()
        inspector.index_next()
        inspector.index_next()
        header, _, rows = slice_table(inspector.render_text())
        assert header.startswith("slice [1, 2, :, :]") and "index keys move axis 1" in header
        assert rows[3] == [str(x) for x in values[1, 2, 3]]
        inspector.next_value()
        inspector.cycle_row_axis()  # a matrix has no third axis: rows and columns trade places
        header, _, rows = slice_table(inspector.render_text())
        assert "rows: axis 1 (0-2 of 3)  cols: axis 0 (0-1 of 2)" in header
        assert rows[2] == ["2", "7"]
        inspector.index_next()  # nothing to move; must not fail
        assert slice_table(inspector.render_text())[0] == header


async def test_huge_tensor_shows_only_the_visible_window_and_summarizes_aside(monkeypatch):
    big = np.arange(4096 * 4096, dtype=np.float32).reshape(4096, 4096)
    formatted = count_cells_formatted(monkeypatch)
    summarized_here = count_calls_on_this_thread(monkeypatch, inspector_module, "summarize")
    async with inspector_in_app() as (inspector, pilot):
        inspector.show_values("t", [ValueView("%big", "tensor<4096x4096xf32>", big)])
        # The UI thread formats a screenful and leaves the statistics of 16M elements to a worker.
        assert 0 < sum(formatted) <= 100 * 30 and summarized_here == []  # at most one per cell of the screen
        text = inspector.render_text()
        assert len(text.splitlines()) <= 30 and len(text) < 4000
        header, columns, rows = slice_table(text)
        assert "rows: axis 0 (0-" in header and "of 4096)" in header
        assert 10 <= len(rows) < 30 and 3 <= len(columns) < 20
        assert rows[1][2] == "4098"

        inspector.scroll_slice(100, 3)
        _, columns, rows = slice_table(inspector.render_text())
        assert min(rows) == 100 and columns[0] == 3 and rows[100][0] == "409603"
        inspector.scroll_slice(10**9, 10**9)  # clamps at the last row and column
        _, columns, rows = slice_table(inspector.render_text())
        assert max(rows) == 4095 and columns[-1] == 4095

        await inspector.app.workers.wait_for_complete()  # statistics of big values come from a thread
        await pilot.pause()
        assert "size 16777216  min 0  max 1.67772e+07" in inspector.render_text()


async def test_nan_and_inf_are_counted_and_highlighted():
    values = np.array([[np.nan, 1.0, np.inf], [-np.inf, np.nan, 0.0]], dtype=np.float32)
    async with inspector_in_app() as (inspector, pilot):
        inspector.show_values("t", [ValueView("%x", "tensor<2x3xf32>", values)])
        await pilot.pause()
        text = inspector.render_text()
        assert "min 0  max 1  mean 0.5  std 0.5  zeros 1  NaN 2  +Inf 1  -Inf 1" in text
        assert slice_table(text)[2] == {0: ["nan", "1", "inf"], 1: ["-inf", "nan", "0"]}
        table = inspector.query_one(".inspector-slice")
        styles = {segment.text.strip(): segment.style
                  for y in range(table.size.height) for segment in table.render_line(y) if segment.text.strip()}
        assert styles["nan"].bold and styles["-inf"].bold
        assert styles["nan"].color != styles["1"].color


async def test_narrow_complex_and_bool_dtypes_render_readably():
    async with inspector_in_app() as (inspector, pilot):
        inspector.show_values("t", [
            ValueView("bf", "tensor<3xbf16>", np.array([1.5, -2.25, 0.1], dtype=ml_dtypes.bfloat16)),
            ValueView("f8", "tensor<3xf8E4M3FN>", np.array([0.1, 448, -2], dtype=ml_dtypes.float8_e4m3fn)),
            ValueView("i4", "tensor<2x2xi4>", np.array([[-8, 7], [0, 3]], dtype=ml_dtypes.int4)),
            ValueView("c", "tensor<2xcomplex<f32>>", np.array([1.5 + 2j, 3 - 1j], dtype=np.complex64)),
            ValueView("b", "tensor<1x2xi1>", np.array([[True, False]])),
        ])
        assert vector_cells(inspector.render_text()) == ["1.5", "-2.25", "0.100098"]
        inspector.next_value()
        assert vector_cells(inspector.render_text()) == ["0.101562", "448", "-2"]
        inspector.next_value()
        text = inspector.render_text()
        assert "min -8  max 7" in text and "NaN" not in text
        assert slice_table(text)[2] == {0: ["-8", "7"], 1: ["0", "3"]}
        inspector.next_value()
        text = inspector.render_text()
        assert "|z| min 2.5  max 3.16228" in text
        assert vector_cells(text) == ["1.5+2j", "3-1j"]
        inspector.next_value()
        text = inspector.render_text()
        assert "true 1  false 1" in text and slice_table(text)[2] == {0: ["T", "F"]}
        inspector.next_value()  # wraps to the first value
        assert inspector.selected.label == "bf"
        inspector.previous_value()
        assert inspector.selected.label == "b"


async def test_diff_against_the_previous_iteration_marks_and_counts_changes():
    previous = np.array([[1.0, 2.0, np.nan], [4.0, 5.0, 6.0]], dtype=np.float32)
    current = previous.copy()
    current[0, 1], current[1, 2] = 2.5, 3.0
    counts = np.array([[1, 2], [3, 4]], dtype=np.int32)
    async with inspector_in_app() as (inspector, pilot):
        inspector.show_values("t", [
            ValueView("%f", "tensor<2x3xf32>", current, previous=previous),
            ValueView("%i", "tensor<2x2xi32>", counts, previous=np.array([[1, 0], [3, 4]], dtype=np.int32)),
            ValueView("%b", "tensor<2xi1>", np.array([True, True]), previous=np.array([True, False])),
            ValueView("%n", "tensor<2x2xi32>", counts),
            ValueView("%s", "tensor<3xi32>", np.arange(3, dtype=np.int32), previous=np.arange(4, dtype=np.int32)),
        ])
        inspector.toggle_diff()
        text = inspector.render_text()
        assert "diff vs previous iteration: 2 of 6 elements changed" in text  # NaN staying NaN is no change
        assert slice_table(text)[2] == {0: ["0", "0.5", "0"], 1: ["0", "0", "-3"]}
        inspector.toggle_diff()
        text = inspector.render_text()
        assert "diff vs" not in text and slice_table(text)[2][1] == ["4", "5", "3"]

        inspector.next_value()
        inspector.toggle_diff()
        text = inspector.render_text()
        assert "1 of 4 elements changed" in text
        assert slice_table(text)[2] == {0: ["1", "2*"], 1: ["3", "4"]}
        inspector.next_value()
        inspector.toggle_diff()
        text = inspector.render_text()
        assert "1 of 2 elements changed" in text and vector_cells(text) == ["T", "T*"]

        for _ in range(2):  # no previous value, then one of another shape
            inspector.next_value()
            inspector.toggle_diff()
            text = inspector.render_text()
            assert "diff vs" not in text and "no value from a previous iteration" in text


async def test_tuple_token_none_scalar_and_empty_values():
    pair = (np.array([1.0, 2.0], dtype=np.float32), TOKEN)
    async with inspector_in_app() as (inspector, pilot):
        inspector.show_values("t", [
            ValueView("result 0", "tuple<tensor<2xf32>, !stablehlo.token>", pair),
            ValueView("%tok", "!stablehlo.token", TOKEN),
            ValueView("%later", "tensor<4xf32>", None),
            ValueView("%s", "tensor<f32>", np.array(2.5, dtype=np.float32), previous=np.array(2.0, dtype=np.float32)),
            ValueView("%e", "tensor<0x3xf32>", np.zeros((0, 3), dtype=np.float32)),
        ])
        text = inspector.render_text()
        assert "[result 0]  result 0[0]  result 0[1]  %tok" in text
        assert "tuple of 2 elements" in text and "[0] 2xf32 min 1 max 2" in text and "[1] token" in text
        inspector.next_value()
        assert inspector.selected.type_text == "tensor<2xf32>"
        assert vector_cells(inspector.render_text()) == ["1", "2"]
        inspector.next_value()
        assert inspector.selected.type_text == "!stablehlo.token"
        inspector.next_value()
        assert inspector.render_text().endswith("%tok  !stablehlo.token\ntoken")
        inspector.toggle_diff()  # nothing to diff; must not fail
        inspector.next_value()
        assert "not computed yet" in inspector.render_text()
        inspector.next_value()
        assert inspector.render_text().endswith("value 2.5")
        inspector.toggle_diff()
        assert inspector.render_text().endswith("1 of 1 elements changed\nvalue 0.5")
        inspector.next_value()
        assert "empty tensor, shape (0, 3)" in inspector.render_text()
        inspector.show_values("nothing", [])
        assert inspector.selected is None and "no values" in inspector.render_text()
        inspector.next_value()  # all navigation is harmless without values
        inspector.scroll_slice(1, 1)


async def test_long_vector_wraps_into_labelled_lines_and_scrolls():
    values = np.arange(1000, dtype=np.int64)
    async with inspector_in_app() as (inspector, pilot):
        inspector.show_values("t", [ValueView("%v", "tensor<1000xi64>", values)])
        text = inspector.render_text()
        lines = text.splitlines()
        first = next(i for i, line in enumerate(lines) if line.startswith("elements 0-"))
        per_line = len(lines[first + 1].split(":", 1)[1].split())
        assert lines[first + 2].split(":")[0].strip() == str(per_line)
        assert len(lines) <= 30 and "999" not in vector_cells(text)
        inspector.scroll_slice(2, 1)
        assert vector_cells(inspector.render_text())[0] == str(2 * per_line + 1)


async def test_mouse_wheel_over_the_table_moves_the_slice_window():
    values = np.arange(200 * 200, dtype=np.int32).reshape(200, 200)
    async with inspector_in_app() as (inspector, pilot):
        inspector.show_values("t", [ValueView("%m", "tensor<200x200xi32>", values)])
        table = inspector.query_one(".inspector-slice")
        for wheel, shift in ((events.MouseScrollDown, False), (events.MouseScrollDown, True)):
            table.post_message(wheel(table, 5, 5, 0, 1, 0, shift=shift, meta=False, ctrl=False))
            await pilot.pause()
        _, columns, rows = slice_table(inspector.render_text())
        assert min(rows) == 3 and columns[0] == 3 and rows[3][0] == str(values[3, 3])


async def test_inspector_never_takes_focus():
    async with inspector_in_app() as (inspector, pilot):
        inspector.show_values("t", [ValueView("%a", "tensor<2x3x4xf32>", cube())])
        await pilot.press("tab")
        assert inspector.app.focused is None
        assert not inspector.can_focus


async def test_the_histogram_line_fits_a_narrow_pane():
    """A 100x30 terminal gives the values pane ~58 columns: 40 bins plus both ends wrapped."""
    values = np.random.default_rng(0).standard_normal(50_000).astype(np.float32) * 3.21987
    async with inspector_in_app(size=(58, 30)) as (inspector, pilot):
        inspector.show_values("%0", [ValueView("%0", "tensor<50000xf32>", values)])
        await pilot.pause()
        line = next(line for line in inspector.render_text().splitlines() if line.startswith("histogram"))
        assert "▏" in line and len(line) <= inspector.size.width, line  # one row, both ends on it
