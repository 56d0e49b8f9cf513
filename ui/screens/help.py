"""`?`: every key of the debugger, read from the live bindings (so a remapped key shows as it is)."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..commands import HELP


class HelpScreen(ModalScreen):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; height: 90%; border: round $accent; background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close help", id="help.close")]

    def __init__(self, bindings: list[tuple[str, str, str]], **kwargs):
        super().__init__(**kwargs)
        self.rows = bindings  # (keys, description, binding id)

    def compose(self) -> ComposeResult:
        table = Table(title="hlodbg keys (remap them in keys.toml by id)", expand=True, show_edge=False)
        table.add_column("keys", style="bold cyan", no_wrap=True)
        table.add_column("does")
        table.add_column("id", style="dim")
        for keys, description, binding_id in self.rows:
            table.add_row(keys, description, binding_id)
        with VerticalScroll():
            yield Static(table, id="help-keys")
            yield Static(Text(HELP), id="help-commands")
            yield Static("Escape, q or ? closes this.", classes="dim")
