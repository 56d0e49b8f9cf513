"""The program text: highlighted once, drawn a line at a time, with a breakpoint gutter.

A JAX dump can be 2 MB; highlighting it whole, or again on every step, would make opening and
stepping slow, so a line is highlighted once per theme when first drawn and only the visible ones
are drawn (Textual's Line API). A line
longer than MAX_LINE_CHARS (a 33-million-character hex constant) is shown clipped, with a marker
saying how much is hidden: neither the highlighter nor the drawing ever sees the whole of it.
"""
from __future__ import annotations

from typing import Optional

from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Span, Text
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from hlodbg.engine.ir.locations import describe

from ..lexer import lexer_for
from ..state import SessionState

BREAKPOINT_MARK = "●"
MAX_LINE_CHARS = 1000  # wider than any terminal; what is cut is only scrolled past


def clip_line(line: str, limit: int = MAX_LINE_CHARS) -> str:
    """`line` as the pane shows it: at most `limit` characters, then `… (+N chars)`."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]} … (+{len(line) - limit:,} chars)"


def _foreground(style) -> Style:
    style = Style.parse(style) if isinstance(style, str) else style
    return Style(color=style.color, bold=style.bold, italic=style.italic, underline=style.underline)


class SourceView(ScrollView, can_focus=False):
    """Source lines with line numbers, breakpoint marks and the current/selected line."""

    DEFAULT_CSS = """
    SourceView { background: $surface; }
    SourceView > .source--current { background: $accent 40%; text-style: bold; }
    SourceView > .source--selected { background: $primary 25%; }
    SourceView > .source--gutter { color: $text-muted; }
    SourceView > .source--breakpoint { color: $error; text-style: bold; }
    """
    COMPONENT_CLASSES = {"source--current", "source--selected", "source--gutter", "source--breakpoint"}

    class LineClicked(Message):
        def __init__(self, line: int) -> None:
            super().__init__()
            self.line = line

    def __init__(self, text: str, language: str = "mlir", **kwargs):
        super().__init__(**kwargs)
        self.text = text
        self.language = language  # the frontend's name: which highlighter reads the text
        self.source_lines = [clip_line(line) for line in text.split("\n")]
        self.current_line: Optional[int] = None
        self.selected_line: Optional[int] = None
        self.breakpoint_lines: set[int] = set()
        self._highlighted: dict[bool, dict[int, Text]] = {}  # per theme: line index -> highlighted
        self._syntax: dict[bool, Syntax] = {}
        self._gutter_width = len(str(len(self.source_lines))) + 3
        width = max((len(line) for line in self.source_lines), default=0) + self._gutter_width
        self.virtual_size = Size(width, len(self.source_lines))

    def _line(self, index: int) -> Text:
        """Line `index` highlighted, once per theme, when first drawn: opening a 2 MB program
        highlights the lines on screen, not all 20,000 of them."""
        dark = self.app.current_theme.dark if self.is_attached else True
        lines = self._highlighted.setdefault(dark, {})
        text = lines.get(index)
        if text is None:
            syntax = self._syntax.get(dark)
            if syntax is None:
                syntax = self._syntax[dark] = Syntax("", lexer_for(self.language), theme="monokai" if dark else "friendly")
            text = syntax.highlight(self.source_lines[index])
            text.rstrip()
            # Token colours only: the pane's own background shows through in either theme.
            text.style = ""
            text.spans = [Span(span.start, span.end, _foreground(span.style)) for span in text.spans]
            lines[index] = text
        return text

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        if index >= len(self.source_lines):
            return Strip.blank(self.size.width)
        number = index + 1
        gutter_style = self.get_component_rich_style("source--gutter")
        mark = Segment(BREAKPOINT_MARK if number in self.breakpoint_lines else " ", self.get_component_rich_style("source--breakpoint"))
        digits = Segment(f"{number:>{self._gutter_width - 3}} ", gutter_style)
        text = self._line(index)
        segments = [mark, digits, Segment(" ")] + list(text.render(self.app.console, end=""))
        highlight = None
        if number == self.current_line:
            highlight = self.get_component_rich_style("source--current")
        elif number == self.selected_line:
            highlight = self.get_component_rich_style("source--selected")
        if highlight is not None:
            # The highlight goes on top: token colours from the theme must not hide the line.
            segments = [Segment(seg.text, (seg.style or Style()) + highlight) for seg in segments]
            width = sum(len(seg.text) for seg in segments)
            segments.append(Segment(" " * max(0, self.virtual_size.width - width), highlight))
        strip = Strip(segments).apply_style(self.rich_style)  # the pane's colours under the tokens
        return strip.crop_extend(self.scroll_offset.x, self.scroll_offset.x + self.size.width, self.rich_style)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self.refresh()

    # --- what the app tells it -----------------------------------------------------------------
    shows = ("where", "caught", "marks")

    def show_state(self, state: SessionState) -> None:
        """The line of the op in view (its place under the pane) and the lines with a breakpoint."""
        shown = state.shown_op
        self.show_current(shown.pos.line if shown is not None and shown.pos is not None else None)
        self.set_breakpoint_lines({op.pos.line for bp in state.marks.breakpoints if bp.enabled for op in bp.ops
                                   if op.pos is not None})
        self.border_subtitle = describe(shown.location) if shown is not None else ""

    def show_current(self, line: Optional[int]) -> None:
        self.current_line = line
        if line is not None:
            self._scroll_to_line(line)
        self.refresh()

    def select_line(self, line: Optional[int]) -> None:
        self.selected_line = line
        if line is not None:
            self._scroll_to_line(line)
        self.refresh()

    def set_breakpoint_lines(self, lines: set[int]) -> None:
        self.breakpoint_lines = set(lines)
        self.refresh()

    def _scroll_to_line(self, line: int) -> None:
        top = self.scroll_offset.y
        height = max(1, self.size.height)
        if not top + 1 <= line - 1 < top + height - 1:
            self.scroll_to(y=max(0, line - 1 - height // 3), animate=False)

    def line_text(self, line: int) -> str:
        """The line as shown (clipped)."""
        return self.source_lines[line - 1] if 0 < line <= len(self.source_lines) else ""

    def on_click(self, event: Click) -> None:
        line = self.scroll_offset.y + event.y + 1
        if 0 < line <= len(self.source_lines):
            self.post_message(self.LineClicked(line))


__all__ = ["SourceView"]
