"""`:trace %v[i,j]`: where an element came from, as a list of steps to walk (engine/debug/lineage.py).

Each step of the path is an op instance of the run; Enter (or a click) on one closes the list and
moves the cursor to that event, so the graph, the source and the values show it. The leaves (the
arguments and constants the element depends on) and the notes on the bounds are listed below.
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from hlodbg.engine.debug.lineage import Lineage

WALK = "Enter goes to the step's event (:trace alone shows this list again); Escape closes."


class TraceScreen(ModalScreen):
    """Dismissed with the position of the chosen step in `lineage.steps`, or None."""

    DEFAULT_CSS = """
    TraceScreen { align: center middle; }
    TraceScreen > Vertical { width: 96%; height: 90%; border: round $accent; background: $surface; padding: 0 1; }
    TraceScreen #trace-steps { height: 1fr; }
    TraceScreen #trace-leaves { height: auto; max-height: 30%; }
    """
    BINDINGS = [Binding("escape,q", "dismiss_none", "close", id="trace.close")]

    def __init__(self, lineage: Lineage, highlighted: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.lineage = lineage
        self.highlighted = highlighted

    def compose(self) -> ComposeResult:
        found = self.lineage
        head = found.text().split("\npath:\n", 1)[0].strip()
        with Vertical():
            yield Static(Text(head, style="bold"), id="trace-title")
            yield Static(Text(WALK, style="dim"))
            options = []
            for i, step in enumerate(found.steps):
                label = Text()
                label.append(f"{i + 1:>3}. ", style="dim")
                label.append(step.describe(), style="bold red" if step.origin else "")
                if step.origin:
                    label.append("  <- origin", style="red")
                for line in ([step.note] if step.note else []) + [f"reads {f.describe()}" for f in step.fanin]:
                    label.append(f"\n       {line}", style="dim")
                options.append(Option(label, id=f"step-{i}", disabled=step.event is None))
            yield OptionList(*options, id="trace-steps")
            leaves = ["depends on:" if found.complete else "depends on (as far as the bounds let the search go):"]
            leaves += [f"  {leaf.describe()}" for leaf in found.leaves] + [f"note: {n}" for n in found.notes]
            yield Static(Text("\n".join(leaves)), id="trace-leaves")

    def on_mount(self) -> None:
        steps = self.query_one(OptionList)
        steps.focus()
        steps.highlighted = min(self.highlighted, max(0, steps.option_count - 1))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(int(event.option.id.split("-", 1)[1]))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
