"""The devices of a grid run: a cell per device with its side of the op being shown.

At a collective the cells of one process group share a colour, permute partners show as
arrows (→ d3, ← d1), and each cell gives the operands (in) and results (out) on that device.
Clicking a cell posts DeviceSelected so the app can open that device's values in the inspector.
"""
from __future__ import annotations

from rich.text import Text
from textual.containers import Grid, VerticalScroll
from textual.message import Message
from textual.widgets import Static

from ..state import GridCellView

GROUP_COLOURS = ("cyan", "magenta", "green", "yellow", "blue", "red", "bright_cyan", "bright_magenta")


class DeviceCell(Static, can_focus=False):
    DEFAULT_CSS = """
    DeviceCell { border: round $panel; height: auto; min-height: 4; padding: 0 1; }
    DeviceCell.-focused { border: double $accent; }
    """

    def __init__(self, device: int, **kwargs):
        super().__init__(**kwargs)
        self.device = device
        self.cell: GridCellView | None = None

    def show(self, cell: GridCellView, colour: str) -> None:
        self.cell = cell
        self.set_class(cell.focused, "-focused")
        text = Text()
        text.append(f"d{cell.device} ", style=f"bold {colour}" if colour else "bold")
        text.append(f"r{cell.replica} p{cell.partition}", style="dim")
        if cell.focused:
            text.append("  ◆ focus", style="bold")
        text.append(f"\n@ {cell.position}: {cell.op_text}", style="dim")
        if cell.waiting:
            text.append("\n⏸ waiting at the rendezvous", style="bold yellow")
        if cell.group:
            text.append("\ngroup " + ",".join(str(d) for d in cell.group), style=colour)
        if cell.sends_to is not None or cell.receives_from is not None:
            arrows = []
            if cell.sends_to is not None:
                arrows.append(f"→ d{cell.sends_to}")
            if cell.receives_from is not None:
                arrows.append(f"← d{cell.receives_from}")
            text.append("\n" + "  ".join(arrows), style="bold")
        if cell.before:
            text.append("\nin  ", style="dim")
            text.append(cell.before)
        if cell.after:
            text.append("\nout ", style="dim")
            text.append(cell.after, style="bold" if "NaN" not in cell.after and "Inf" not in cell.after else "bold red")
        self.update(text)

    def on_click(self) -> None:
        self.post_message(GridView.DeviceSelected(self.device))


class GridView(VerticalScroll, can_focus=False):
    """R x P (or mesh-shaped) cells; `show_cells` after every move."""

    DEFAULT_CSS = """
    GridView > Grid { grid-gutter: 0 1; height: auto; }
    """

    class DeviceSelected(Message):
        def __init__(self, device: int) -> None:
            super().__init__()
            self.device = device

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._shape: tuple[int, int] = (0, 0)
        self.cells: list[GridCellView] = []

    def show_cells(self, cells: list[GridCellView], shape: tuple[int, int], title: str) -> None:
        self.cells = cells
        self.border_title = f"devices · {title}" if title else "devices"
        if shape != self._shape or len(self.query(DeviceCell)) != len(cells):
            self._shape = shape
            self.remove_children()
            grid = Grid(*[DeviceCell(cell.device, id=f"device-{cell.device}") for cell in cells])
            grid.styles.grid_size_columns = shape[1]
            grid.styles.grid_size_rows = shape[0]
            self.mount(grid)
            self.call_after_refresh(self._fill)
        else:
            self._fill()

    def _fill(self) -> None:
        groups = sorted({cell.group for cell in self.cells if cell.group})
        colours = {group: GROUP_COLOURS[i % len(GROUP_COLOURS)] for i, group in enumerate(groups)}
        for widget in self.query(DeviceCell):
            cell = next(c for c in self.cells if c.device == widget.device)
            widget.show(cell, colours.get(cell.group, ""))

    def text_of(self, device: int) -> str:
        """A device's cell as plain text (tests)."""
        widget = self.query_one(f"#device-{device}", DeviceCell)
        return str(widget.render())


__all__ = ["GridView", "DeviceCell"]
