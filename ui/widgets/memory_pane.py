"""The memory pane: what the focused device holds at the current op (live buffers, bytes in use
against its memory, the peak and where it happens), from the run's static memory profile."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from rich.text import Text
from textual.widgets import Static

from hlodbg.engine.machine.memory import format_bytes

from ..state import MemoryView, SessionState

GAUGE_WIDTH = 20
CHART_ROWS = 3  # the bytes-live chart's height in lines
_EIGHTHS = " ▁▂▃▄▅▆▇█"  # a cell filled to 0..8 eighths of its height
NO_BREAK_SPACE = "\u00a0"


def gauge(fraction: float, width: int = GAUGE_WIDTH) -> str:
    """`[████░░░░]`; any use at all shows at least a sliver."""
    filled = max(0.0, min(1.0, fraction)) * width
    cells = int(filled)
    partial = "▏" if 0 < filled - cells and cells < width else ""
    if fraction > 0 and cells == 0 and not partial:
        partial = "▏"
    return "[" + "█" * cells + partial + "░" * (width - cells - len(partial)) + "]"


def memory_chart(curve: Any, cursor: Optional[int], width: int, rows: int = CHART_ROWS) -> list[str]:
    """The bytes-live curve (one number per program position) as `rows` lines of block characters
    at most `width` wide — each column the most any of its positions holds, so the peak always
    shows — and a line with ▲ under the column of position `cursor`."""
    values = np.asarray(curve, dtype=np.float64)
    positions = len(values)
    if not positions or width < 1:
        return []
    columns = min(width, positions)
    # Column c covers positions [c * positions // columns, (c + 1) * positions // columns).
    starts = np.arange(columns) * positions // columns
    tallest = np.maximum.reduceat(values, starts)
    top = float(values.max())
    eighths = np.zeros(columns, int) if top <= 0 else np.ceil(tallest / top * rows * 8).astype(int)
    lines = []
    for row in range(rows - 1, -1, -1):
        filled = np.clip(eighths - row * 8, 0, 8)
        lines.append("".join(_EIGHTHS[k] for k in filled))
    marker = [" "] * columns
    if cursor is not None and 0 <= cursor < positions:
        marker[int(np.searchsorted(starts, cursor, side="right")) - 1] = "▲"
    lines.append("".join(marker).rstrip())
    return lines


def _chart_lines(text: Text, memory: MemoryView, width: int) -> None:
    lines = memory_chart(memory.curve, memory.cursor, width)
    if not lines:
        return
    text.append("bytes live in program order (▲ here)\n", style="bold")
    # Empty cells as no-break spaces: a row of spaces would be folded into the line before it
    # when the pane wraps its text.
    for line in lines[:-1]:
        text.append(f"{line.replace(' ', NO_BREAK_SPACE)}\n", style="cyan")
    text.append(f"{lines[-1].replace(' ', NO_BREAK_SPACE)}\n", style="bold yellow")


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
        if memory.curve is not None:
            _chart_lines(text, memory, max(8, (self.content_size.width or 60) - 1))
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


__all__ = ["CHART_ROWS", "MemoryPanel", "gauge", "memory_chart"]
