"""The devices of a grid run: a cell per device with its side of the op being shown.

At a collective the cells of one process group share a colour, permute partners show as
arrows (→ d3, ← d1), a device whose partners have not reached the same collective says it waits
at the rendezvous, and each cell gives the operands (in) and results (out) on that device — the
values themselves when they are small. A cell's title gives its place on the Shardy mesh
(x=1 y=0) when the module has one.

The cells are drawn as one text (64 devices must not cost 64 widget updates a step) that never
wraps: cells shrink to fit the pane down to MIN_CELL_WIDTH, and past that the pane scrolls, as
it does when the rows are taller than the pane. A click is mapped back to its cell and posted as
DeviceSelected.
"""
from __future__ import annotations

from typing import Optional

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import ScrollableContainer
from textual.geometry import Offset
from textual.message import Message
from textual.widgets import Static

from ..state import GridCellView, SessionState

GROUP_COLOURS = ("cyan", "magenta", "green", "yellow", "blue", "red", "bright_cyan", "bright_magenta")
MIN_CELL_LINES = 2  # text lines inside a cell's border, at least
VALUE_LINES = 3  # lines an in / out value may wrap over inside a cell
MIN_CELL_WIDTH = 20
UNMOUNTED_WIDTH = 80


class _Cells(Static, can_focus=False):
    DEFAULT_CSS = "_Cells { width: auto; height: auto; }"


class GridView(ScrollableContainer, can_focus=False):
    """R x P (or mesh-shaped) cells; `show_cells` after every move."""

    DEFAULT_CSS = "GridView { height: 1fr; }"

    class DeviceSelected(Message):
        def __init__(self, device: int) -> None:
            super().__init__()
            self.device = device

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.cells: list[GridCellView] = []
        self.shape: tuple[int, int] = (1, 1)
        self._cell_width = MIN_CELL_WIDTH
        self._row_tops: list[int] = [0]  # first text line of each row of cells, then the end
        self._body = _Cells()

    def compose(self) -> ComposeResult:
        yield self._body

    shows = ("devices",)

    def show_state(self, state: SessionState) -> None:
        devices = state.devices
        if devices is not None and devices.cells:
            self.show_cells(list(devices.cells), devices.shape, devices.title)

    def show_cells(self, cells: list[GridCellView], shape: tuple[int, int], title: str) -> None:
        self.cells = cells
        self.shape = shape
        self.border_title = f"devices · {title}" if title else "devices"
        self._draw()

    def on_resize(self, event: events.Resize) -> None:
        if self.cells:
            self._draw()

    def rendered_text(self) -> str:
        """Everything drawn, as plain lines (tests)."""
        return self._text.plain if self.cells else ""

    def _draw(self) -> None:
        rows, columns = self.shape
        # The pane's width less its border and a vertical scrollbar, kept free whether or not one
        # shows (cells sized before it appears would be pushed past the edge).
        width = self.size.width - 2 - self.styles.scrollbar_size_vertical if self.size.width else UNMOUNTED_WIDTH
        self._cell_width = max(MIN_CELL_WIDTH, (width - (columns - 1)) // max(1, columns))
        colours = self._colours()
        out = Text(no_wrap=True, overflow="ignore")
        self._row_tops = [0]
        for row in range(rows):
            members = self.cells[row * columns:(row + 1) * columns]
            contents = [self._content(cell, colours.get(cell.group, "")) for cell in members]
            height = max([MIN_CELL_LINES, *(len(lines) for lines in contents)])
            blocks = [self._cell_block(cell, colours.get(cell.group, ""), lines, height) for cell, lines in zip(members, contents)]
            for line in range(height + 2):
                for k, block in enumerate(blocks):
                    if k:
                        out.append(" ")
                    out.append_text(block[line])
                out.append("\n")
            self._row_tops.append(self._row_tops[-1] + height + 2)
        out.rstrip()
        self._text = out
        self._body.update(out)

    def _colours(self) -> dict:
        groups = sorted({cell.group for cell in self.cells if cell.group})
        return {group: GROUP_COLOURS[i % len(GROUP_COLOURS)] for i, group in enumerate(groups)}

    def _content(self, cell: GridCellView, colour: str) -> list[Text]:
        """The lines inside a cell, each at most the inner width (long values wrap)."""
        inner = self._cell_width - 4
        lines = [Text(f"@ {cell.position}: {cell.op_text}", style="dim")]
        if cell.memory:  # what the device holds at its op (the memory profile's)
            lines.append(Text(cell.memory, style="cyan"))
        if cell.shard:  # what the op's sharding says this device holds
            lines.append(Text(f"shard {cell.shard}", style="green"))
        if cell.waiting:
            lines.append(Text("⏸ waits for its group", style="bold yellow"))
        if cell.group:
            lines.append(Text("group " + ",".join(str(d) for d in cell.group), style=colour))
        arrows = [f"→ d{cell.sends_to}"] if cell.sends_to is not None else []
        arrows += [f"← d{cell.receives_from}"] if cell.receives_from is not None else []
        if arrows:
            lines.append(Text("  ".join(arrows), style="bold"))
        if cell.before:
            lines += _fitted("in  ", cell.before, "", inner)
        if cell.after:
            bad = "NaN" in cell.after or "Inf" in cell.after or "nan" in cell.after or "inf" in cell.after
            lines += _fitted("out ", cell.after, "bold red" if bad else "bold", inner)
        for line in lines:
            line.truncate(inner, overflow="ellipsis")
        return lines

    def _cell_block(self, cell: GridCellView, colour: str, lines: list[Text], height: int) -> list[Text]:
        """The cell's lines, border included, each exactly the cell width."""
        w = self._cell_width
        inner = w - 4
        border_style = "bold" if cell.focused else "dim"
        h, v, corners = ("═", "║", "╔╗╚╝") if cell.focused else ("─", "│", "╭╮╰╯")
        title = Text(f" d{cell.device} ", style=f"bold {colour}".strip())
        if cell.coordinates:
            title.append(f"{cell.coordinates} ", style="bold")
        title.append(f"r{cell.replica} p{cell.partition} ", style="dim")
        if cell.focused:
            title.append("◆ ", style="bold")
        title.truncate(w - 3)
        top = Text(corners[0] + h, style=border_style)
        top.append_text(title)
        top.append(h * max(0, w - 3 - cell_len(title.plain)) + corners[1], style=border_style)
        block = [top]
        for line in lines + [Text("")] * (height - len(lines)):
            row = Text(v + " ", style=border_style)
            row.append_text(line)
            row.append(" " * (inner - cell_len(line.plain)) + " " + v, style=border_style)
            block.append(row)
        block.append(Text(corners[2] + h * (w - 2) + corners[3], style=border_style))
        return block

    # --- mapping clicks and tests ------------------------------------------------------------------
    def offset_of(self, device: int) -> Offset:
        """Where a device's cell is inside the widget (its first text line), as scrolled now."""
        index = next(i for i, cell in enumerate(self.cells) if cell.device == device)
        row, column = divmod(index, self.shape[1])
        region = self.scrollable_content_region
        x = column * (self._cell_width + 1) + 2 - round(self.scroll_x)
        y = self._row_tops[row] + 1 - round(self.scroll_y)
        return Offset(region.x - self.region.x + x, region.y - self.region.y + y)

    def device_at(self, x: int, y: int) -> Optional[int]:
        """The device drawn at (x, y) of the cells' text."""
        column = x // (self._cell_width + 1)
        row = next((r for r in range(len(self._row_tops) - 1) if self._row_tops[r] <= y < self._row_tops[r + 1]), None)
        if row is None or column >= self.shape[1]:
            return None
        index = row * self.shape[1] + column
        return self.cells[index].device if 0 <= index < len(self.cells) else None

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self._body)
        device = self.device_at(offset.x, offset.y) if offset is not None else None
        if device is not None:
            self.post_message(self.DeviceSelected(device))

    def text_of(self, device: int) -> str:
        """A device's cell as plain text without its border (tests)."""
        cell = next(cell for cell in self.cells if cell.device == device)
        colour = self._colours().get(cell.group, "")
        lines = self._content(cell, colour)
        block = self._cell_block(cell, colour, lines, len(lines))
        return "\n".join(line.plain.strip(" │║╭╮╰╯╔╗╚╝─═").strip() for line in block)


def _fitted(label: str, value: str, style: str, width: int) -> list[Text]:
    """A summary in one line (cut by the caller); a value listed in full (`2xf32 [1 2]`: the
    controller lists small values) wrapped between its numbers, at most VALUE_LINES lines, the
    later ones indented under the value."""
    if len(label) + cell_len(value) <= width or not value.endswith("]"):
        return [Text.assemble((label, "dim"), (value, style))]
    rows = [""]
    for word in value.split(" "):
        if rows[-1] and len(label) + cell_len(rows[-1]) + 1 + cell_len(word) > width:
            rows.append("")
        rows[-1] = f"{rows[-1]} {word}" if rows[-1] else word
    if len(rows) > VALUE_LINES:
        rows = rows[:VALUE_LINES]
        rows[-1] += " …"
    return [Text.assemble((label if i == 0 else " " * len(label), "dim"), (row, style)) for i, row in enumerate(rows)]


__all__ = ["GridView"]
