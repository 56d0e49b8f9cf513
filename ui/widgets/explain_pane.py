"""The explain pane: what the op in view does, its attributes decoded, its result shape derived
with its numbers and, with the element cursor on one of its results, where that element comes from
(hlodbg.engine.debug.explain, in the language chosen with `:lang`)."""
from __future__ import annotations

from typing import Optional

from textual.app import ComposeResult
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from hlodbg.ui.state import ExplanationState

from .panels import PaneScroll
from .provenance_view import WORKING
from .tensor_text import MUTED


class ExplainPane(Widget, can_focus=False):
    DEFAULT_CSS = """
    ExplainPane { height: 1fr; }
    ExplainPane > VerticalScroll { height: 1fr; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._body = Static(markup=False)
        self._text = ""
        self._title = ""
        self.explained = None  # (op, element) shown, so a redraw asks again only when it changes

    def compose(self) -> ComposeResult:
        with PaneScroll():
            yield self._body

    def show(self, state: Optional[ExplanationState], lang: str = "en") -> None:
        """The explanation; None while it is being written."""
        lines = explanation_lines(state, lang)
        self._body.update(Content("\n").join(lines))
        self._text = "\n".join(line.plain for line in lines)
        if state is not None and state.title != self._title:  # another op: from its top; the same one stays where it was read
            self._title = state.title
            self.query_one(PaneScroll).scroll_home(animate=False)

    def render_text(self) -> str:
        return self._text


def explanation_lines(state: Optional[ExplanationState], lang: str = "en") -> list[Content]:
    if state is None:
        return [Content.styled(WORKING.say(lang), MUTED)]
    lines = [Content.styled(state.title, "bold")]
    if state.error:
        return lines + [Content.styled(state.error, "$text-warning")]
    for heading, body in state.sections:
        lines += [Content(""), Content.styled(heading, "bold underline")]
        lines += [Content(line) for line in body]
    return lines


__all__ = ["ExplainPane", "explanation_lines"]
