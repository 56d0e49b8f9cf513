"""The memory pane: what the focused device holds at the current op (live buffers, bytes in use
against its memory, the peak and where it happens), from the run's static memory profile."""
from __future__ import annotations

from typing import Optional

from rich.text import Text
from textual.widgets import Static

from hlodbg.engine.machine.memory import format_bytes

from ..state import MemoryView, SessionState

GAUGE_WIDTH = 20


def gauge(fraction: float, width: int = GAUGE_WIDTH) -> str:
    """`[████░░░░]`; any use at all shows at least a sliver."""
    filled = max(0.0, min(1.0, fraction)) * width
    cells = int(filled)
    partial = "▏" if 0 < filled - cells and cells < width else ""
    if fraction > 0 and cells == 0 and not partial:
        partial = "▏"
    return "[" + "█" * cells + partial + "░" * (width - cells - len(partial)) + "]"


class MemoryPanel(Static, can_focus=False):
    DEFAULT_CSS = "MemoryPanel { height: auto; }"

    _shown: tuple = (None, "")
    shows = ("memory",)

    def show_state(self, state: SessionState) -> None:
        """The figures at the state's op; hidden, nothing (the screen draws the state it is at when `m`
        shows the pane)."""
        if self.display:
            self.show_memory(state.memory.figures, state.memory.waiting)

    def on_resize(self) -> None:
        self.show_memory(*self._shown)

    def show_memory(self, memory: Optional[MemoryView], waiting: str = "") -> None:
        """`waiting`: why there are no figures yet (the profile is being computed, or failed)."""
        self._shown = (memory, waiting)
        text = Text()
        text.append("memory", style="bold")
        if memory is None:
            text.append(f"  {waiting or 'm shows it'}", style="dim")
            self.update(text)
            return
        text.append(f"  {memory.device} · {memory.target}\n", style="dim")
        kind = memory.kind
        width = max(8, min(GAUGE_WIDTH, (self.size.width or 60) - 34))
        if memory.capacity:
            share = memory.in_use / memory.capacity
            text.append(f"{kind} {gauge(share, width)} ")
            text.append(format_bytes(memory.in_use), style="bold")
            text.append(f" of {format_bytes(memory.capacity)} ({100 * share:.1f}%)\n")
        else:
            text.append(f"{kind} {format_bytes(memory.in_use)} in use ({memory.capacity_label} is unknown)\n")
        if memory.peak:
            text.append(f"now {100 * memory.in_use / memory.peak:.0f}% of the peak")
            if memory.logical and memory.in_use > memory.logical:
                text.append(f" · padding {100 * (1 - memory.logical / memory.in_use):.0f}%", style="yellow")
            text.append("\n")
        text.append(f"peak {format_bytes(memory.peak)}", style="bold")
        text.append(f" at {memory.peak_where}\n")
        if memory.where:
            text.append(f"{memory.where}\n", style="dim")
        text.append(f"live buffers ({len(memory.buffers)}, largest first)\n" if memory.buffers else "no live buffers\n", style="bold")
        for buffer in memory.buffers:
            waste = buffer.physical_bytes / buffer.logical_bytes if buffer.logical_bytes else 1.0
            text.append(f"  {buffer.name} {buffer.type_text} {format_bytes(buffer.physical_bytes)}")
            if waste > 1:
                text.append(f" {waste:.1f}x", style="yellow")
            if buffer.layout:
                text.append(f" {buffer.layout}", style="dim")
            text.append("\n")
        self.update(text)


__all__ = ["MemoryPanel", "gauge"]
