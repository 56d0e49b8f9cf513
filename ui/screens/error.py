"""A program that does not parse or verify opens here: the diagnostic, never a traceback."""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static


class ErrorScreen(Screen):
    DEFAULT_CSS = """
    ErrorScreen { align: center middle; }
    ErrorScreen > VerticalScroll { width: 95%; height: auto; max-height: 90%; border: round $error; padding: 0 1; }
    """
    BINDINGS = [Binding("q,escape", "app.quit", "quit", id="error.quit")]

    def __init__(self, title: str, message: str, **kwargs):
        super().__init__(**kwargs)
        self.title_text = title
        self.message = message

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text(self.title_text, style="bold"), id="error-title")
            yield Static(Text(self.message), id="error-message")
            yield Static(Text("Fix the program or the option named above and open it again. q quits.", style="dim"))
