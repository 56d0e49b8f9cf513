"""`?`: every key of the debugger, read from the live bindings (so a remapped key shows as it is),
each as it is printed on the keyboard, in groups laid out side by side when the terminal is wide
(200x55 shows everything at once) and one under the other, scrollable, when it is not."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..commands import HELP

SIDE_BY_SIDE_WIDTH = 150  # narrower terminals stack the columns


class HelpScreen(ModalScreen):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 96%; height: 96%; border: round $accent; background: $surface; padding: 0 1; }
    HelpScreen #help-columns { height: auto; }
    HelpScreen #help-columns > Vertical { width: 1fr; height: auto; padding: 0 1; }
    HelpScreen #help-columns.stacked { layout: vertical; }
    """
    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss", "close help", id="help.close"),
        Binding("down,j", "scroll(1)", "scroll down", id="help.down", show=False),
        Binding("up,k", "scroll(-1)", "scroll up", id="help.up", show=False),
        Binding("pagedown,space", "scroll(10)", "page down", id="help.page_down", show=False),
        Binding("pageup", "scroll(-10)", "page up", id="help.page_up", show=False),
    ]

    def __init__(self, groups: list[tuple[str, list[tuple[str, str, str]]]], **kwargs):
        super().__init__(**kwargs)
        self.groups = groups  # (title, [(keys, description, binding id)])
        self.rows = [row for _, rows in groups for row in rows]

    def compose(self) -> ComposeResult:
        # The first group (the run's keys) opens the left column, the second one the right column
        # above the commands; every other group goes where the columns stay shortest.
        first, second, *others = self.groups
        left, right = [first], [second]
        heights = [len(first[1]) + 2, len(second[1]) + 2 + len(HELP.splitlines())]
        for group in others:
            shorter = 0 if heights[0] <= heights[1] else 1
            (left, right)[shorter].append(group)
            heights[shorter] += len(group[1]) + 2
        with VerticalScroll(id="help-scroll"):
            yield Static(Text("hlodbg keys (remap them in keys.toml by id) · Escape, q or ? closes this", style="bold"))
            with Horizontal(id="help-columns"):
                with Vertical():
                    for title, rows in left:
                        yield Static(_table(title, rows))
                with Vertical():
                    for title, rows in right:
                        yield Static(_table(title, rows))
                    yield Static(Text(HELP), id="help-commands")

    def on_resize(self, event: events.Resize) -> None:
        self.query_one("#help-columns").set_class(event.size.width < SIDE_BY_SIDE_WIDTH, "stacked")

    def action_scroll(self, lines: int) -> None:
        scroll = self.query_one("#help-scroll", VerticalScroll)
        scroll.scroll_to(y=scroll.scroll_y + lines, animate=False)


def _table(title: str, rows: list[tuple[str, str, str]]) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold", expand=True, show_edge=False, pad_edge=False)
    table.add_column("keys", style="bold cyan", no_wrap=True)
    table.add_column("does")
    table.add_column("id", style="dim", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    return table
