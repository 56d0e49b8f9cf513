"""The tensor inspector: statistics, a histogram and a scrollable 2-D slice of one value at a time.

Values can be far larger than a terminal (8x512x512x64 elements), so nothing here ever turns a whole
array into text: statistics come from the controller's summary (or are computed once per value and
cached), the histogram reads at most HISTOGRAM_SAMPLE elements picked with a stride, and the table
indexes out only the window of rows and columns that fits the widget.

The app owns the keyboard; it calls the plain navigation methods (`next_value`, `cycle_row_axis`,
`index_next`, `scroll_slice`, `toggle_diff`, ...), so the inspector never takes focus.
"""
from __future__ import annotations

import math
from functools import partial
from typing import Optional, Sequence

import numpy as np
from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from hlodbg.engine.debug.summary import ValueSummary, summarize
from hlodbg.engine.ir.dtypes import Token, compute_dtype, is_float_dtype, widen
from hlodbg.engine.machine.layout import LayoutError
from hlodbg.layouts.labels import op_display
from hlodbg.layouts.op_facts import fact_lines
from hlodbg.ui.state import SessionState, ValueView

from .panels import PaneScroll
from .physical_view import physical_lines
from .slice_entry import SliceEntry, expand
from .tensor_text import MUTED, changed_mask, count_changed, element_count, format_cells, format_float, histogram_line

SUMMARY_IN_THREAD = 1 << 20  # larger values are summarized in a worker thread (16M f32: ~0.2 s)
SUMMARY_GROUP = "tensor-inspector-summary"
MIN_TABLE_ROWS = 3
UNMOUNTED_SIZE = (100, 30)  # layout assumed before the widget has a size of its own
WHEEL_STEPS = {events.MouseScrollDown: (3, 0), events.MouseScrollUp: (-3, 0),
               events.MouseScrollRight: (0, 2), events.MouseScrollLeft: (0, -2)}

NON_FINITE = "bold $text-error"
CHANGED = "bold $text-warning"
SELECTED = "bold reverse $text-accent"
CURSOR = "bold reverse"
WORD_MATE = "underline $text-accent"


class _SliceView(Static):
    """The table; the mouse wheel over it moves the slice window (shift+wheel: columns)."""

    def __init__(self, inspector: "TensorInspector", **kwargs) -> None:
        super().__init__(**kwargs)
        self.inspector = inspector

    def _wheel(self, event: events.MouseEvent) -> None:
        rows, cols = WHEEL_STEPS[type(event)]
        if event.shift:
            rows, cols = 0, rows or cols
        if self.inspector.scroll_slice(rows, cols):
            event.stop()  # otherwise the enclosing VerticalScroll scrolls the pane

    on_mouse_scroll_down = on_mouse_scroll_up = on_mouse_scroll_right = on_mouse_scroll_left = _wheel

    def on_click(self, event: events.Click) -> None:
        if self.inspector.cursor_at(event.x, event.y):
            event.stop()


class TensorInspector(Widget, can_focus=False):
    """Statistics, histogram and a 2-D slice of the selected value among a list of values."""

    class CursorMoved(Message):
        """The element under the cursor changed: `index` of `view`, or None (no cursor shown)."""

        def __init__(self, view: Optional[ValueView], index: Optional[tuple[int, ...]]) -> None:
            super().__init__()
            self.view = view
            self.index = index

    DEFAULT_CSS = """
    TensorInspector { height: 1fr; }
    TensorInspector > VerticalScroll { height: 1fr; }
    TensorInspector Static { color: $text; }
    TensorInspector .inspector-head { background: $boost; }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._title = ""
        self._facts: list[str] = []
        self._entries: list[SliceEntry] = []
        self._index = 0
        self._head = Static(classes="inspector-head", markup=False)
        self._body = Static(classes="inspector-body", markup=False)
        self._slice = _SliceView(self, classes="inspector-slice", markup=False)
        self._texts = ("", "", "")
        self.physical = False  # the physical view (layout, tiles, where the cursor's element lives)
        self._pointed: tuple = (None, None)  # (value, element) last said in a CursorMoved

    def compose(self) -> ComposeResult:
        with PaneScroll():
            yield self._head
            yield self._body
            yield self._slice

    # -- public API -----------------------------------------------------------------------------
    shows = ("where", "values", "caught", "stop")

    def show_state(self, state: SessionState) -> None:
        """The values a breakpoint caught, else those around the op about to run (past the end: the
        program's results), with the facts of the op in view."""
        caught, op = state.caught, state.op
        if caught is not None:
            title, values = caught.title, list(caught.values)
        elif op is not None:
            title, values = f"next: {op_display(op)}", [*state.results, *state.operands]
        else:
            title, values = ("finished: the program's results" if not state.error else "failed"), [*state.results, *state.operands]
        self.show_values(title, values, fact_lines(state.shown_op))

    def show_values(self, title: str, values: list[ValueView], facts: Sequence[str] = ()) -> None:
        """Replace the content; the first value is selected. Cheap: nothing is computed until shown.
        `facts` are lines about the op under the title (its layout, sharding, fusion kind...)."""
        self._title = title
        self._facts = list(facts)
        if self.is_attached:  # results of summaries still running would land on discarded entries
            self.workers.cancel_group(self, SUMMARY_GROUP)
        self._entries = [entry for view in values for entry in expand(view)]
        self._index = 0
        self._refresh()

    @property
    def pointed(self) -> tuple[Optional[ValueView], Optional[tuple[int, ...]]]:
        """The value shown and the element under its cursor (None when no cursor is shown)."""
        return self._pointed

    @property
    def selected(self) -> Optional[ValueView]:
        return self._entries[self._index].view if self._entries else None

    def render_text(self) -> str:
        """The plain text of everything shown (for tests and copying)."""
        return "\n".join(text for text in self._texts if text)

    def next_value(self) -> None:
        self._select(self._index + 1)

    def previous_value(self) -> None:
        self._select(self._index - 1)

    def cycle_row_axis(self) -> None:
        """Show the next axis as rows (2-D: swap rows and columns)."""
        self._cycle_axis(rows=True)

    def cycle_col_axis(self) -> None:
        """Show the next axis as columns (2-D: swap rows and columns)."""
        self._cycle_axis(rows=False)

    def cycle_fixed_axis(self) -> None:
        """Choose which non-displayed axis `index_next` / `index_previous` move."""
        entry = self._sliceable()
        if entry is not None and entry.fixed_axis is not None:
            free = entry.free_axes()
            entry.fixed_axis = free[(free.index(entry.fixed_axis) + 1) % len(free)]
            self._refresh()

    def index_next(self) -> None:
        self._move_index(1)

    def index_previous(self) -> None:
        self._move_index(-1)

    def scroll_slice(self, d_rows: int, d_cols: int) -> bool:
        """Move the visible window; returns whether it moved."""
        entry = self._current()
        if entry is None or entry.array is None or entry.array.ndim == 0:
            return False
        array = entry.array
        before = (entry.row0, entry.col0)
        if array.ndim == 1:  # one flat run of elements: rows are lines of `cols_shown` elements
            last = max(0, array.shape[0] - entry.cols_shown * entry.rows_shown)
            entry.col0 = max(0, min(entry.col0 + d_rows * entry.cols_shown + d_cols, last))
        else:  # past the last column: the table fills its width leftwards from the end
            last_row = max(0, array.shape[entry.row_axis] - entry.rows_shown)
            entry.row0 = max(0, min(entry.row0 + d_rows, last_row))
            entry.col0 = max(0, min(entry.col0 + d_cols, array.shape[entry.col_axis] - 1))
        if (entry.row0, entry.col0) == before:
            return False
        self._refresh()
        return (entry.row0, entry.col0) != before

    def toggle_physical(self) -> None:
        """Show how the device holds the value (and the element cursor), or hide it."""
        self.physical = not self.physical
        self._refresh()

    def move_cursor(self, d_rows: int, d_cols: int) -> None:
        """Move the element cursor within the slice; the window follows it."""
        entry = self._current()
        if entry is None or entry.array is None or entry.array.ndim == 0 or entry.array.size == 0:
            return
        array = entry.array
        entry.cursor_shown = True
        if array.ndim == 1:
            length = array.shape[0]
            entry.cursor_col = max(0, min(entry.cursor_col + d_cols + d_rows * max(1, entry.cols_shown), length - 1))
            per_screen = max(1, entry.cols_shown * entry.rows_shown)
            if not entry.col0 <= entry.cursor_col < entry.col0 + per_screen:
                entry.col0 = entry.cursor_col - entry.cursor_col % max(1, entry.cols_shown)
        else:
            entry.cursor_row = max(0, min(entry.cursor_row + d_rows, array.shape[entry.row_axis] - 1))
            entry.cursor_col = max(0, min(entry.cursor_col + d_cols, array.shape[entry.col_axis] - 1))
            entry.row0 = min(entry.row0, entry.cursor_row)
            entry.row0 = max(entry.row0, entry.cursor_row - entry.rows_shown + 1)
            entry.col0 = min(entry.col0, entry.cursor_col)
            entry.col0 = max(entry.col0, entry.cursor_col - entry.cols_shown + 1)
        self._refresh()

    def place_cursor(self, op, index: Sequence[int], result: int = 0) -> bool:
        """Select the value that is result `result` of `op` and put the cursor on its element
        `index`, showing the slice that holds it; whether there was such an element."""
        for position, entry in enumerate(self._entries):
            origin = entry.view.origin
            if origin is None or origin.op is not op or origin.kind != "result" or origin.position != result or entry.array is None:
                continue
            index = tuple(int(i) for i in index)
            if len(index) != entry.array.ndim or any(not 0 <= i < n for i, n in zip(index, entry.array.shape)):
                return False
            self._index = position
            entry.cursor_shown = True
            entry.fixed = list(index)
            axes = entry.shown_axes()
            if len(axes) == 2:
                entry.cursor_row, entry.cursor_col = index[axes[0]], index[axes[1]]
                entry.row0, entry.col0 = max(0, entry.cursor_row - 1), max(0, entry.cursor_col - 1)
            elif axes:
                entry.cursor_col = index[0]
                entry.col0 = index[0] - index[0] % max(1, entry.cols_shown)
            self._refresh()
            return True
        return False

    def cursor_at(self, x: int, y: int) -> bool:
        """Put the element cursor on the table cell at (x, y) of the table; whether one is there."""
        entry = self._current()
        if entry is None or entry.array is None or entry.array.ndim < 2:
            return False
        first, columns = entry.row_lines
        row = entry.row0 + y - first
        column = next((c for x0, x1, c in columns if x0 <= x < x1), None)
        if column is None or not entry.row0 <= row < entry.row0 + entry.rows_shown:
            return False
        entry.cursor_row, entry.cursor_col, entry.cursor_shown = row, column, True
        self._refresh()
        return True

    def toggle_diff(self) -> None:
        """Show `value - previous iteration` (changed cells marked) or the value again."""
        entry = self._current()
        if entry is None:
            return
        if not entry.diff and (entry.array is None or entry.previous_array() is None):
            entry.note = "no value from a previous iteration with the same shape to compare with"
            if self.is_attached:
                self.notify(entry.note, severity="warning")
        else:
            entry.diff = not entry.diff
            entry.note = ""
        self._refresh()

    def _current(self) -> Optional[SliceEntry]:
        return self._entries[self._index] if self._entries else None

    def _sliceable(self) -> Optional[SliceEntry]:
        entry = self._current()
        return entry if entry is not None and entry.array is not None and entry.array.ndim >= 2 else None

    def _select(self, index: int) -> None:
        if self._entries:
            self._entries[self._index].note = ""
            self._index = index % len(self._entries)
            self._refresh()

    def _cycle_axis(self, rows: bool) -> None:
        entry = self._sliceable()
        if entry is None:
            return
        ndim, axis, other = entry.array.ndim, entry.row_axis, entry.col_axis
        if not rows:
            axis, other = other, axis
        following = (axis + 1) % ndim
        if following == other:
            following = (following + 1) % ndim
        if following == axis:  # two axes only: trade places
            axis, other = other, axis
        else:
            axis = following
        entry.row_axis, entry.col_axis = (axis, other) if rows else (other, axis)
        entry.row0 = entry.col0 = entry.cursor_row = entry.cursor_col = 0
        entry._choose_fixed_axis()
        self._refresh()

    def _move_index(self, step: int) -> None:
        entry = self._sliceable()
        if entry is None or entry.fixed_axis is None:
            return
        axis = entry.fixed_axis
        entry.fixed[axis] = (entry.fixed[axis] + step) % entry.array.shape[axis]
        self._refresh()

    def on_resize(self, event: events.Resize) -> None:
        self._refresh()

    def _viewport(self) -> tuple[int, int]:
        width, height = self.size
        if width <= 0 or height <= 0:
            width, height = UNMOUNTED_SIZE
        return max(24, width - 2), max(8, height)  # -2: room for a vertical scrollbar

    def _refresh(self) -> None:
        width, height = self._viewport()
        head = self._head_lines()
        body = self._body_lines()
        used = sum(max(1, math.ceil(cell_len(line.plain) / width)) for line in head + body)
        table = self._slice_lines(width, max(MIN_TABLE_ROWS, height - used - 2))
        newline = Content("\n")
        for static, lines in ((self._head, head), (self._body, body), (self._slice, table)):
            static.update(newline.join(lines))
            static.display = bool(lines)
        self._texts = tuple("\n".join(line.plain for line in lines) for lines in (head, body, table))
        self._say_pointed()

    def _say_pointed(self) -> None:
        """Post a CursorMoved when the value or the element under the cursor is not the one said last."""
        entry = self._current()
        pointed = (None, None)
        if entry is not None:
            shown = entry.cursor_shown and entry.array is not None and entry.array.size > 0
            pointed = (entry.view, entry.cursor_index() if shown else None)
        if pointed[0] is not self._pointed[0] or pointed[1] != self._pointed[1]:
            self._pointed = pointed
            if self.is_attached:
                self.post_message(self.CursorMoved(*pointed))

    def _head_lines(self) -> list[Content]:
        lines = [Content.styled(line, "bold") for line in self._title.splitlines()]
        lines += [Content.styled(line, MUTED) for line in self._facts]
        if not self._entries:
            return lines + [Content("no values")]
        parts: list = []
        for index, entry in enumerate(self._entries):
            if parts:
                parts.append("  ")
            label = entry.view.label
            parts.append((f"[{label}]", SELECTED) if index == self._index else label)
        return lines + [Content.assemble(*parts)]

    def _body_lines(self) -> list[Content]:
        entry = self._current()
        if entry is None:
            return []
        view = entry.view
        lines = [Content.assemble((view.label, "bold"), "  ", view.type_text,
                                  ("  " + view.where if view.where else "", MUTED))]
        value = view.value
        if value is None:
            return lines + [Content("not computed yet")]
        if isinstance(value, Token):
            return lines + [Content("token")]
        if isinstance(value, tuple):
            if self.physical:
                lines += physical_lines(None, None, [], None, self._viewport()[0])
            lines.append(Content(f"tuple of {len(value)} element{'s' * (len(value) != 1)} (next value shows each one)"))
            summary = self._summary(entry)
            if entry.summarizing:
                lines.append(Content.styled("statistics: computing...", MUTED))
            for index, element in enumerate(summary.elements if summary else ()):
                lines.append(Content(f"  [{index}] {element.describe()}"))
            return lines
        if entry.array is None:
            return lines + [Content(f"cannot show a value of type {type(value).__name__}")]
        lines.append(self._stats_line(entry))
        if entry.array.size > 1 and entry.array.dtype != np.bool_ and not self.physical:  # room for the bytes
            width = self._viewport()[0]
            if entry.histogram is None or entry.histogram[0] != width:
                with np.errstate(all="ignore"):
                    entry.histogram = (width, histogram_line(entry.array, width))
            lines.append(entry.histogram[1])
        if entry.note:
            lines.append(Content.styled(entry.note, CHANGED))
        if self.physical:
            lines += physical_lines(view.storage, entry.array, entry.shown_axes(), entry.cursor_index(), self._viewport()[0])
        return lines

    def _summary(self, entry: SliceEntry) -> Optional[ValueSummary]:
        if entry.summary is not None or entry.summary_error or entry.summarizing:
            return entry.summary
        if element_count(entry.view.value) > SUMMARY_IN_THREAD and self.is_attached:  # keep the UI responsive: summarize in a thread, redraw after
            entry.summarizing = True
            self.run_worker(partial(self._summarize, entry), thread=True, group=SUMMARY_GROUP,
                            exit_on_error=False)
            return None
        entry.summary, entry.summary_error = self._summarize(entry)[1:]
        return entry.summary

    def exact_statistics(self) -> None:
        """Recompute statistics summarised from a sample (values over summary.SAMPLE_ABOVE
        elements) over every element, in a thread as any large summary."""
        entry = self._current()
        if entry is None or entry.summarizing or entry.exact:
            return
        if entry.summary is not None and entry.summary.exact:
            if self.is_attached:
                self.notify("these statistics are exact already")
            return
        entry.exact, entry.summary, entry.summary_error = True, None, ""
        self._refresh()

    @staticmethod
    def _summarize(entry: SliceEntry) -> tuple[SliceEntry, Optional[ValueSummary], str]:
        try:
            return entry, summarize(entry.view.value, exact=entry.exact), ""
        except Exception as error:  # noqa: BLE001 - shown in place of the statistics rather than ending the app
            return entry, None, str(error) or type(error).__name__

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != SUMMARY_GROUP or worker.state != WorkerState.SUCCESS:
            return
        event.stop()
        entry, entry.summary, entry.summary_error = worker.result
        entry.summarizing = False
        if entry is self._current():
            self._refresh()

    def _stats_line(self, entry: SliceEntry) -> Content:
        summary = self._summary(entry)
        if entry.summarizing:
            return Content.styled(f"size {entry.array.size}  statistics: computing...", MUTED)
        if summary is None:
            return Content(f"no statistics: {entry.summary_error}")
        if summary.size == 0:
            return Content(f"empty tensor, shape {tuple(summary.shape)}")
        if summary.dtype == "bool":
            true = summary.size - summary.zeros
            return Content(f"size {summary.size}  true {true}  false {summary.zeros}")
        parts: list = [f"size {summary.size}  "]
        if summary.dtype.startswith("complex"):
            parts.append("|z| ")
        for name, number in (("min", summary.min), ("max", summary.max),
                             ("mean", summary.mean), ("std", summary.std)):
            shown = "-" if number is None else str(number) if isinstance(number, int) else format_float(number)
            estimated = "≈" if summary.sampled and name in ("mean", "std") and number is not None else ""
            parts.append(f"{name} {estimated}{shown}  ")
        parts.append(f"zeros {'≈' if summary.sampled else ''}{summary.zeros}")
        dtype = entry.array.dtype
        if is_float_dtype(dtype) or dtype.kind == "c":
            for name, count in (("NaN", summary.nan), ("+Inf", summary.posinf), ("-Inf", summary.neginf)):
                parts.append("  ")
                parts.append((f"{name} {count}", NON_FINITE) if count else f"{name} {count}")
        if summary.sampled:  # mean, std and zeros are estimates: say so, and how to get them exact
            parts.append((f"  ({summary.sample_text}; E: exact)", MUTED))
        return Content.assemble(*parts)

    def _slice_lines(self, width: int, rows: int) -> list[Content]:
        entry = self._current()
        if entry is None or entry.array is None or entry.array.size == 0:
            return []
        array = entry.array
        previous = entry.previous_array() if entry.diff else None
        header: list = []
        if previous is not None:
            if entry.changed is None:
                entry.changed = count_changed(array, previous)
            header = [(f"diff vs previous iteration: {entry.changed} of {array.size} elements changed", CHANGED)]
        if array.ndim == 0:
            cell = self._cells(array.reshape(1, 1), None if previous is None else previous.reshape(1, 1))[0][0]
            lines = [Content.assemble("value ", cell)]
        elif array.ndim == 1:
            lines = self._vector_lines(entry, previous, width, rows)
        else:
            lines = self._matrix_lines(entry, previous, width, rows)
        return ([Content.assemble(*header)] if header else []) + lines

    def _cells(self, window: np.ndarray, previous: Optional[np.ndarray]) -> list[list[tuple[str, str]]]:
        """(text, style) for each element of a 2-D window; in diff mode the change instead."""
        if previous is None:
            texts, bad = format_cells(window)
            bad = bad.tolist()
            return [[(text, NON_FINITE if flag else "") for text, flag in zip(row, flags)]
                    for row, flags in zip(texts, bad)]
        changed = changed_mask(window, previous)
        if compute_dtype(window.dtype).kind in "fc":  # numbers: show the difference, 0 where unchanged
            with np.errstate(all="ignore"):
                difference = np.where(changed, widen(window) - widen(previous), 0)
            texts, bad = format_cells(difference)
            return [[(text, NON_FINITE if flag else CHANGED if moved else MUTED)
                     for text, flag, moved in zip(row, flags, moves)]
                    for row, flags, moves in zip(texts, bad.tolist(), changed.tolist())]
        texts, _ = format_cells(window)  # bool / integers: the new value, changed cells starred
        return [[(text + "*", CHANGED) if moved else (text + " ", "") for text, moved in zip(row, moves)]
                for row, moves in zip(texts, changed.tolist())]

    def _marks(self, entry: SliceEntry) -> dict[tuple[int, int], str]:
        """(row, column) of the slice -> style: the element cursor and, in the physical view, the
        elements sharing its 32-bit word."""
        if not (entry.cursor_shown or self.physical) or entry.array.ndim == 0:
            return {}
        axes = entry.shown_axes()
        cursor = entry.cursor_index()
        found = [(cursor, CURSOR)]
        storage = entry.view.storage
        if self.physical and storage is not None:
            try:
                found += [(mate, WORD_MATE) for mate in storage.layout.locate(cursor, storage.shape, storage.dtype).word_mates]
            except LayoutError:
                pass  # the physical view says what is wrong with the layout
        marks = {}
        for index, style in found:
            if all(index[a] == entry.fixed[a] for a in range(len(index)) if a not in axes):
                marks[(index[axes[0]], index[axes[1]]) if len(axes) == 2 else (0, index[0])] = style
        return marks

    def _vector_lines(self, entry: SliceEntry, previous: Optional[np.ndarray], width: int, rows: int) -> list[Content]:
        array = entry.array
        length = array.shape[0]
        start = entry.col0 = max(0, min(entry.col0, length - 1))
        stop = min(length, start + rows * max(1, width // 2))
        window = array[start:stop].reshape(1, -1)
        cells = self._cells(window, None if previous is None else previous[start:stop].reshape(1, -1))[0]
        label_width = len(str(stop - 1))
        cell_width = max(cell_len(text) for text, _ in cells)
        per_line = min(len(cells), max(1, (width - label_width - 1) // (cell_width + 1)))
        cells = cells[:per_line * rows]
        entry.cols_shown, entry.rows_shown = per_line, rows
        last = start + len(cells) - 1
        marks = self._marks(entry)
        lines = [Content(f"elements {start}-{last} of {length}  ({per_line} per line)")]
        for offset in range(0, len(cells), per_line):
            parts: list = [(str(start + offset).rjust(label_width) + ":", MUTED)]
            for k, (text, style) in enumerate(cells[offset:offset + per_line]):
                parts.extend([" ", (text.rjust(cell_width), marks.get((0, start + offset + k), style))])
            lines.append(Content.assemble(*parts))
        return lines

    def _matrix_lines(self, entry: SliceEntry, previous: Optional[np.ndarray], width: int, rows: int) -> list[Content]:
        array = entry.array
        row_axis, col_axis = entry.row_axis, entry.col_axis
        n_rows, n_cols = array.shape[row_axis], array.shape[col_axis]
        rows = min(rows, n_rows)
        entry.row0 = max(0, min(entry.row0, n_rows - rows))
        entry.col0 = max(0, min(entry.col0, n_cols - 1))
        row0, col0, most = entry.row0, entry.col0, max(1, width // 2)
        # Near the end, also format columns before col0 so a short last window can fill leftwards.
        col_start = col0 if col0 + most < n_cols else max(0, col0 - most)
        col_stop = min(n_cols, col0 + most)
        index: list = list(entry.fixed)
        index[row_axis], index[col_axis] = slice(row0, row0 + rows), slice(col_start, col_stop)
        window = array[tuple(index)]
        previous_window = None if previous is None else previous[tuple(index)]
        if row_axis > col_axis:
            window = window.T
            previous_window = None if previous_window is None else previous_window.T
        cells = self._cells(window, previous_window)
        label_width = len(str(row0 + rows - 1))

        def column_width(column: int) -> int:
            return max(len(str(column)), max(cell_len(row[column - col_start][0]) for row in cells))

        used, shown = label_width + 1, []
        for column in range(col0, col_stop):
            if shown and used + column_width(column) + 1 > width:
                break
            shown.append(column)
            used += column_width(column) + 1
        while shown[-1] == n_cols - 1 and shown[0] > col_start and used + column_width(shown[0] - 1) < width:
            shown.insert(0, shown[0] - 1)
            used += column_width(shown[0]) + 1
        col0 = entry.col0 = shown[0]
        widths = [column_width(column) for column in shown]
        cells = [row[col0 - col_start:] for row in cells]
        entry.rows_shown, entry.cols_shown = rows, len(widths)
        spelled = [":" if axis in (row_axis, col_axis) else str(entry.fixed[axis]) for axis in range(array.ndim)]
        stepping = f"  index keys move axis {entry.fixed_axis}" if entry.fixed_axis is not None else ""
        header = (f"slice [{', '.join(spelled)}]  rows: axis {row_axis} ({row0}-{row0 + rows - 1} of {n_rows})"
                  f"  cols: axis {col_axis} ({col0}-{col0 + len(widths) - 1} of {n_cols}){stepping}")
        column_labels: list = [" " * label_width]
        for column, column_width in enumerate(widths):
            column_labels.extend([" ", (str(col0 + column).rjust(column_width), MUTED)])
        lines = [Content(header), Content.assemble(*column_labels)]
        marks = self._marks(entry)
        for row_index, row in enumerate(cells):
            parts: list = [(str(row0 + row_index).rjust(label_width), MUTED)]
            for column, ((text, style), column_width) in enumerate(zip(row, widths)):
                parts.extend([" ", (text.rjust(column_width), marks.get((row0 + row_index, col0 + column), style))])
            lines.append(Content.assemble(*parts))
        spans, x = [], label_width + 1
        for column, column_width in enumerate(widths):
            spans.append((x, x + column_width, col0 + column))
            x += column_width + 1
        entry.row_lines = (len(lines) - len(cells) + (1 if entry.diff and previous is not None else 0), spans)
        return lines


__all__ = ["TensorInspector", "format_cells", "changed_mask", "count_changed", "histogram_line"]
