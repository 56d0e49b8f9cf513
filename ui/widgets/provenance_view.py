"""The provenance view: the operands side by side with the result, the elements that make the
element under the inspector's cursor marked (a colour per role, with a legend), and the index
arithmetic that led there with its numbers.

Small tensors are shown whole; a larger one as the window of a 2-D slice around the marked
elements (the slice holding the first of them), with how many marks lie outside it. Nothing here
turns a whole big array into text.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
from rich.cells import cell_len
from textual.app import ComposeResult
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from hlodbg.engine.ir.phrases import Phrase
from hlodbg.ui.state import MarkedTensor, ProvenanceState

from .panels import PaneScroll
from .tensor_text import MUTED, format_cells

WORKING = Phrase("working it out…")
NO_VALUE = Phrase("no value yet")
MARKS_ELSEWHERE = Phrase("{count} marked element(s) outside the window shown")
UNDER_CURSOR = Phrase("the element under the cursor")

SMALL_TENSOR = 64  # elements up to which every slice of a tensor is shown
WINDOW = 8  # rows and columns of a larger tensor's window
MARKED_SLICES = 4  # 2-D slices of a larger tensor shown at most (those holding marks)
GAP = "   "
SELECTED_STYLE = "bold reverse $text-accent"
ROLE_STYLES = ("bold reverse $text-success", "bold reverse $text-warning", "bold reverse $text-primary",
               "bold reverse $text-error", "bold reverse $text-secondary", "bold underline $text-success",
               "bold underline $text-warning")


class ProvenanceView(Widget, can_focus=False):
    """Shows one ProvenanceState; `render_text()` gives its plain text (tests, copying)."""

    DEFAULT_CSS = """
    ProvenanceView { height: 1fr; }
    ProvenanceView > VerticalScroll { height: 1fr; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._body = Static(markup=False)
        self._state: Optional[ProvenanceState] = None
        self._lang = "en"
        self._text = ""

    def compose(self) -> ComposeResult:
        with PaneScroll():
            yield self._body

    def show(self, state: Optional[ProvenanceState], lang: str = "en") -> None:
        """The answer to show; None while it is being worked out."""
        self._state, self._lang = state, lang
        self._refresh()

    @property
    def state(self) -> Optional[ProvenanceState]:
        return self._state

    def render_text(self) -> str:
        return self._text

    def on_resize(self) -> None:
        self._refresh()

    def _refresh(self) -> None:
        width = max(20, self.size.width - 2 if self.size.width else 60)
        lines = provenance_lines(self._state, width, self._lang)
        self._body.update(Content("\n").join(lines))
        self._text = "\n".join(line.plain for line in lines)


def provenance_lines(state: Optional[ProvenanceState], width: int, lang: str = "en") -> list[Content]:
    """The view as lines: title, the arithmetic, the legend, then the tensors side by side."""
    if state is None:
        return [Content.styled(WORKING.say(lang), MUTED)]
    lines = [Content.styled(state.title, "bold")]
    if state.error:
        return lines + [Content.styled(state.error, "$text-warning")]
    lines += [Content(line) for line in state.lines]
    styles = role_styles(state.tensors)
    legend: list = [(" ■ ", SELECTED_STYLE), " ", UNDER_CURSOR.say(lang)]
    for role, style in styles.items():
        legend += ["  ", (" ■ ", style), " ", role]
    lines.append(Content.assemble(*legend))
    blocks = [tensor_block(tensor, styles, lang) for tensor in state.tensors]
    return lines + side_by_side(blocks, width)


def role_styles(tensors: list[MarkedTensor]) -> dict[str, str]:
    """A style per role, in the order the roles first appear."""
    styles: dict[str, str] = {}
    for tensor in tensors:
        for role in tensor.marks.values():
            if role not in styles:
                styles[role] = ROLE_STYLES[len(styles) % len(ROLE_STYLES)]
    return styles


def tensor_block(tensor: MarkedTensor, styles: dict[str, str], lang: str = "en") -> list[Content]:
    """One tensor's lines: its name and type, then its cells (a window of them when it is big)."""
    head = [Content.styled(tensor.label, "bold"), Content.styled(tensor.type_text, MUTED)]
    value = tensor.value
    if value is None:
        return [*head, Content.styled(NO_VALUE.say(lang), MUTED)]
    array = np.asarray(value)
    if array.ndim == 0:
        style = SELECTED_STYLE if tensor.selected == () else styles.get(tensor.marks.get(()), "")
        return [*head, Content.assemble((format_cells(array.reshape(1))[0][0], style))]
    matrix = array.reshape(1, -1) if array.ndim == 1 else array
    lead = matrix.shape[:-2]

    def as_matrix_index(index: tuple) -> tuple:
        return (0, *index) if array.ndim == 1 else index

    marks = {as_matrix_index(i): role for i, role in tensor.marks.items()}
    selected = as_matrix_index(tensor.selected) if tensor.selected is not None else None
    focus = selected if selected is not None else next(iter(marks), (0,) * matrix.ndim)
    if array.size <= SMALL_TENSOR:  # whole: every slice, up to SMALL_TENSOR rows or columns
        slices, limit = ([tuple(i) for i in np.ndindex(*lead)] if lead else [()]), SMALL_TENSOR
    else:  # the slices holding marks, the cursor's (or the first mark's) first
        slices, limit = list(dict.fromkeys(tuple(i[:-2]) for i in [focus, *marks]))[:MARKED_SLICES], WINDOW
    lines = list(head)
    shown = 0
    for fixed in slices:
        in_slice = [i for i in [*marks, *([selected] if selected else [])] if tuple(i[:-2]) == fixed]
        anchor = focus if tuple(focus[:-2]) == fixed else in_slice[0] if in_slice else (0,) * matrix.ndim
        rows = _window(matrix.shape[-2], [i[-2] for i in in_slice], limit, anchor[-2])
        cols = _window(matrix.shape[-1], [i[-1] for i in in_slice], limit, anchor[-1])
        shown += sum(1 for i in marks if tuple(i[:-2]) == fixed and i[-2] in rows and i[-1] in cols)
        lines += _slice_lines(matrix, fixed, rows, cols, marks, selected, styles, array.ndim)
    if len(marks) > shown:
        lines.append(Content.styled(MARKS_ELSEWHERE.say(lang, count=len(marks) - shown), MUTED))
    return lines


def _window(n: int, wanted: list[int], limit: int, focus: int) -> range:
    """Up to `limit` consecutive positions of `n` holding as many `wanted` ones as fit, around `focus`."""
    if n <= limit:
        return range(n)
    low, high = (min(wanted), max(wanted) + 1) if wanted else (focus, focus + 1)
    if high - low <= limit:
        start = low - (limit - (high - low)) // 2
    else:
        start = focus - limit // 2
    start = max(0, min(start, n - limit))
    return range(start, start + limit)


def _slice_lines(matrix: np.ndarray, fixed: tuple, rows: range, cols: range, marks: dict, selected: Optional[tuple],
                 styles: dict[str, str], ndim: int) -> list[Content]:
    window = matrix[fixed + (slice(rows.start, rows.stop), slice(cols.start, cols.stop))]
    texts, _ = format_cells(window)
    lines = []
    if ndim > 2 or len(rows) < matrix.shape[-2] or len(cols) < matrix.shape[-1]:
        spelled = [str(i) for i in fixed] + [_span(rows, matrix.shape[-2]), _span(cols, matrix.shape[-1])]
        if ndim == 1:
            spelled = spelled[-1:]
        lines.append(Content.styled(f"[{', '.join(spelled)}]", MUTED))
    label_width = len(str(rows.stop - 1)) if ndim > 1 else 0
    widths = [max(len(str(c)), *(cell_len(row[k]) for row in texts)) for k, c in enumerate(cols)]
    header: list = [" " * label_width]
    for c, w in zip(cols, widths):
        header += [" ", (str(c).rjust(w), MUTED)]
    lines.append(Content.assemble(*header))
    for r, row in zip(rows, texts):
        parts: list = [(str(r).rjust(label_width), MUTED)] if ndim > 1 else [""]
        for c, w, text in zip(cols, widths, row):
            at = fixed + (r, c)
            style = SELECTED_STYLE if at == selected else styles.get(marks.get(at), "")
            parts += [" ", (text.rjust(w), style)]
        lines.append(Content.assemble(*parts))
    return lines


def _span(positions: range, n: int) -> str:
    return ":" if len(positions) == n else f"{positions.start}:{positions.stop}"


def side_by_side(blocks: list[list[Content]], width: int) -> list[Content]:
    """Blocks of lines placed left to right while they fit in `width`, then on below."""
    lines: list[Content] = []
    band: list[list[Content]] = []
    used = 0
    for block in blocks:
        block_width = max(line.cell_length for line in block)
        if band and used + len(GAP) + block_width > width:
            lines += _join(band)
            band, used = [], 0
        band.append(block)
        used += (len(GAP) if used else 0) + block_width
    if band:
        lines += _join(band)
    return lines


def _join(band: list[list[Content]]) -> list[Content]:
    height = max(len(block) for block in band)
    widths = [max(line.cell_length for line in block) for block in band]
    joined = [Content("")]  # a blank line above each band
    for row in range(height):
        parts: list = []
        for k, (block, block_width) in enumerate(zip(band, widths)):
            line = block[row] if row < len(block) else Content("")
            if k:
                parts.append(GAP)
            parts.append(line)
            if k < len(band) - 1:
                parts.append(" " * (block_width - line.cell_length))
        joined.append(Content.assemble(*parts))
    return joined


__all__ = ["ProvenanceView", "provenance_lines", "side_by_side", "tensor_block"]
