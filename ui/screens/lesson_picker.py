"""The lesson picker (`hlodbg lesson --pick`, what `hlodbg serve --lessons` runs per browser tab):
the list of lessons; Enter or a click opens one in the debugger."""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from hlodbg.engine.ir.phrases import Phrase

PICK = Phrase("Pick a lesson: each one is a small program with questions. Enter opens it; q quits.")


class LessonPickerScreen(Screen):
    DEFAULT_CSS = """
    LessonPickerScreen { align: center middle; }
    LessonPickerScreen > OptionList { width: 90%; height: auto; max-height: 80%; border: round $accent; }
    LessonPickerScreen > Static { width: 90%; height: auto; }
    """
    BINDINGS = [Binding("q,escape", "app.quit", "quit", id="lessons.quit")]

    def __init__(self, entries, lang: str = "en", **kwargs):
        """`entries`: (name, family, title) of every lesson."""
        super().__init__(**kwargs)
        self.entries = list(entries)
        self.lang = lang

    def compose(self) -> ComposeResult:
        yield Static(Text(PICK.say(self.lang), style="bold"))
        options = []
        name_width = max((len(name) for name, _, _ in self.entries), default=0) + 2
        family_width = max((len(family) for _, family, _ in self.entries), default=0) + 2
        for name, family, title in self.entries:
            label = Text()
            label.append(f"{name:<{name_width}}", style="bold")
            label.append(f"{family:<{family_width}}", style="cyan")
            label.append(title)
            options.append(Option(label, id=name))
        yield OptionList(*options, id="lesson-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.app.open_lesson(event.option.id)
