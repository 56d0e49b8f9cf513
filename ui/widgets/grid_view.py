"""The devices of a grid run: a cell per device with its side of the op being shown.

At a collective the cells of one process group share a colour, permute partners show as
arrows (→ d3, ← d1), a device whose partners have not reached the same collective says it waits
at the rendezvous, and each cell gives the operands (in) and results (out) on that device.
The cells are drawn as one text (64 devices must not cost 64 widget updates a step); a click is
mapped back to its cell and posted as DeviceSelected.
"""
from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.geometry import Offset
from textual.message import Message
from textual.widgets import Static

from ..state import GridCellView

GROUP_COLOURS = ("cyan", "magenta", "green", "yellow", "blue", "red", "bright_cyan", "bright_magenta")
CELL_LINES = 6  # text lines inside a cell's border
MIN_CELL_WIDTH = 26


class GridView(Static, can_focus=False):
    """R x P (or mesh-shaped) cells; `show_cells` after every move."""

    DEFAULT_CSS = "GridView { height: auto; }"

    class DeviceSelected(Message):
        def __init__(self, device: int) -> None:
            super().__init__()
            self.device = device

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.cells: list[GridCellView] = []
        self.shape: tuple[int, int] = (1, 1)
        self._cell_width = MIN_CELL_WIDTH

    def show_cells(self, cells: list[GridCellView], shape: tuple[int, int], title: str) -> None:
        self.cells = cells
        self.shape = shape
        self.border_title = f"devices · {title}" if title else "devices"
        self._draw()

    def on_resize(self, event: events.Resize) -> None:
        if self.cells:
            self._draw()

    def _draw(self) -> None:
        rows, columns = self.shape
        width = self.content_size.width or (MIN_CELL_WIDTH + 1) * columns
        self._cell_width = max(MIN_CELL_WIDTH, width // max(1, columns) - 1)
        groups = sorted({cell.group for cell in self.cells if cell.group})
        colours = {group: GROUP_COLOURS[i % len(GROUP_COLOURS)] for i, group in enumerate(groups)}
        out = Text()
        for row in range(rows):
            blocks = [self._cell_block(self.cells[i], colours.get(self.cells[i].group, ""))
                      for i in range(row * columns, min(len(self.cells), (row + 1) * columns))]
            for line in range(CELL_LINES + 2):
                for k, block in enumerate(blocks):
                    if k:
                        out.append(" ")
                    out.append_text(block[line])
                out.append("\n")
        out.rstrip()
        self.update(out)

    def _cell_block(self, cell: GridCellView, colour: str) -> list[Text]:
        """The cell's lines, border included, each exactly the cell width."""
        w = self._cell_width
        inner = w - 4
        border_style = "bold" if cell.focused else "dim"
        h, v, corners = ("═", "║", "╔╗╚╝") if cell.focused else ("─", "│", "╭╮╰╯")
        title = Text(f" d{cell.device} ", style=f"bold {colour}".strip())
        title.append(f"r{cell.replica} p{cell.partition} ", style="dim")
        if cell.focused:
            title.append("◆ ", style="bold")
        title.truncate(w - 3)
        top = Text(corners[0] + h, style=border_style)
        top.append_text(title)
        top.append(h * max(0, w - 3 - cell_len(title.plain)) + corners[1], style=border_style)
        lines = [Text(f"@ {cell.position}: {cell.op_text}", style="dim")]
        if cell.waiting:
            lines.append(Text("⏸ waits for its group", style="bold yellow"))
        if cell.group:
            lines.append(Text("group " + ",".join(str(d) for d in cell.group), style=colour))
        arrows = [f"→ d{cell.sends_to}"] if cell.sends_to is not None else []
        arrows += [f"← d{cell.receives_from}"] if cell.receives_from is not None else []
        if arrows:
            lines.append(Text("  ".join(arrows), style="bold"))
        if cell.before:
            lines.append(Text.assemble(("in  ", "dim"), cell.before))
        if cell.after:
            bad = "NaN" in cell.after or "Inf" in cell.after
            lines.append(Text.assemble(("out ", "dim"), (cell.after, "bold red" if bad else "bold")))
        lines = (lines + [Text("")] * CELL_LINES)[:CELL_LINES]
        block = [top]
        for line in lines:
            line.truncate(inner, overflow="ellipsis")
            row = Text(v + " ", style=border_style)
            row.append_text(line)
            row.append(" " * (inner - cell_len(line.plain)) + " " + v, style=border_style)
            block.append(row)
        block.append(Text(corners[2] + h * (w - 2) + corners[3], style=border_style))
        return block

    # --- mapping clicks and tests ------------------------------------------------------------------
    def offset_of(self, device: int) -> Offset:
        """Where a device's cell is inside the widget (its first text line)."""
        index = next(i for i, cell in enumerate(self.cells) if cell.device == device)
        row, column = divmod(index, self.shape[1])
        return Offset(column * (self._cell_width + 1) + 2, row * (CELL_LINES + 2) + 1)

    def device_at(self, x: int, y: int):
        row, column = y // (CELL_LINES + 2), x // (self._cell_width + 1)
        if column >= self.shape[1]:
            return None
        index = row * self.shape[1] + column
        return self.cells[index].device if 0 <= index < len(self.cells) else None

    def on_click(self, event: events.Click) -> None:
        device = self.device_at(event.x, event.y)
        if device is not None:
            self.post_message(self.DeviceSelected(device))

    def text_of(self, device: int) -> str:
        """A device's cell as plain text without its border (tests)."""
        index = next(i for i, cell in enumerate(self.cells) if cell.device == device)
        cell = self.cells[index]
        groups = sorted({c.group for c in self.cells if c.group})
        colours = {group: GROUP_COLOURS[i % len(GROUP_COLOURS)] for i, group in enumerate(groups)}
        block = self._cell_block(cell, colours.get(cell.group, ""))
        return "\n".join(line.plain.strip(" │║╭╮╰╯╔╗╚╝─═").strip() for line in block)


__all__ = ["GridView"]
