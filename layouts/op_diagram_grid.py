"""One tensor drawn as a grid of cells with its values: a 2-D slice, windowed around what matters.

A tensor of rank 3 or more is shown as the 2-D slice through the elements the diagram points at
(the other indices fixed and written in the heading, `operand[1, :, :]`). The two dimensions drawn
are those along which the highlighted elements differ most (the last two when nothing is
highlighted). A dimension longer than `MAX_CELLS` shows the neighbourhood of the highlighted
elements, with an ellipsis for the rows or columns left out; row and column numbers are always
written, so a student can read every element's index off the drawing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np

from .op_diagram_canvas import (
    FONT_SIZE,
    HEADING_SIZE,
    LINE,
    SELECTED,
    SMALL_SIZE,
    Block,
    Box,
    Colour,
    bold_width,
    text_width,
)
from .svg import escape_text, number

MAX_CELLS = 8  # per dimension; longer ones are windowed
WINDOW = 6  # cells shown around the highlighted ones in a windowed dimension
CELL_HEIGHT = 22.0
MIN_CELL_WIDTH = 26.0
GAP_CELL = 16.0  # the ellipsis row or column
NUMBER_BAND = 16.0  # room for the row numbers on the left and the column numbers on top

Index = tuple[int, ...]


def value_text(value) -> str:
    """A short rendering of one element: ints whole, floats to 4 significant digits, booleans T/F."""
    if isinstance(value, (bool, np.bool_)):
        return "T" if value else "F"
    if isinstance(value, (np.integer, int)):
        return str(int(value))
    if isinstance(value, (np.complexfloating, complex)):
        return f"{value.real:.3g}{value.imag:+.3g}i"
    number_ = float(value)
    if not np.isfinite(number_):
        return "nan" if np.isnan(number_) else ("inf" if number_ > 0 else "-inf")
    if number_ == int(number_) and abs(number_) < 1e6:
        return str(int(number_)) if number_ or not np.signbit(number_) else "-0"
    return f"{number_:.4g}"


def window(size: int, interesting: Sequence[int]) -> list[Optional[int]]:
    """The positions of a dimension to draw (None = an ellipsis): all of a short one, else about
    WINDOW around the interesting positions (the first ones when they spread wider)."""
    if size <= MAX_CELLS:
        return list(range(size))
    if interesting:
        lo, hi = min(interesting), max(interesting)
        start = lo if hi - lo + 1 > WINDOW else max(hi - WINDOW + 1, (lo + hi) // 2 - (WINDOW - 1) // 2)
        start = min(max(start, 0), size - WINDOW)
    else:
        start = 0
    end = start + WINDOW
    start = 0 if start == 1 else start  # an ellipsis standing for one row is longer than the row
    end = size if end == size - 1 else end
    return ([None] if start > 0 else []) + list(range(start, end)) + ([None] if end < size else [])


@dataclass
class Mark:
    """An outline around a block of elements (a window, a slice, a row of the lhs): from `low` to
    `high` (inclusive) in every dimension."""

    low: Index
    high: Index
    colour: Colour
    dashed: bool = True

    @classmethod
    def around(cls, cells, colour: Colour, dashed: bool = True) -> "Mark":
        cells = [tuple(c) for c in cells]
        low = tuple(min(column) for column in zip(*cells))
        high = tuple(max(column) for column in zip(*cells))
        return cls(low, high, colour, dashed)


@dataclass(eq=False)
class TensorPanel(Block):
    """A tensor's grid. `paint` fills cells with a role's colour, `shade` colours the others lightly
    (structure the op gives, like padding), `marks` outline sets of cells, `badges` number them (scatter order)."""

    heading: str
    name: str  # how the tooltips name the tensor: operand, start_indices, result
    type_text: str
    shape: tuple[int, ...]
    values: Optional[np.ndarray] = None
    paint: dict = field(default_factory=dict)  # index -> Colour
    shade: Optional[Callable[[Index], Optional[Colour]]] = None  # a light colour the op gives a cell (padding...)
    marks: list = field(default_factory=list)
    badges: dict = field(default_factory=dict)  # index -> short text
    selected: Optional[Index] = None
    dims: Optional[tuple[int, int]] = None  # the two dimensions drawn (rank >= 3), chosen when None

    def __post_init__(self) -> None:
        self._laid_out = False

    # -- which cells ---------------------------------------------------------------------------
    def _interesting(self) -> list[Index]:
        cells = ([self.selected] if self.selected is not None else []) + list(self.paint)
        if not cells and self.marks:
            cells = [self.marks[0].low, self.marks[0].high]
        return cells

    def _layout(self) -> None:
        if self._laid_out:
            return
        self._laid_out = True
        rank = len(self.shape)
        interesting = self._interesting()
        if rank == 0:
            self.row_dim = self.col_dim = None
        elif rank == 1:
            self.row_dim, self.col_dim = None, 0
        elif rank == 2:
            self.row_dim, self.col_dim = 0, 1
        else:
            self.row_dim, self.col_dim = self.dims if self.dims is not None else self._chosen_dims(interesting)
        shown = {self.row_dim, self.col_dim}
        anchor = interesting[0] if interesting else (0,) * rank
        self.fixed = {d: anchor[d] for d in range(rank) if d not in shown}
        in_slice = [i for i in interesting if all(i[d] == v for d, v in self.fixed.items())]
        # A missing row or column dimension (rank 0 or 1) is drawn as the one row or column 0.
        self.rows = [0] if self.row_dim is None else window(self.shape[self.row_dim], [i[self.row_dim] for i in in_slice])
        self.cols = [0] if self.col_dim is None else window(self.shape[self.col_dim], [i[self.col_dim] for i in in_slice])
        texts = [value_text(self.values[self.index_of(r, c)]) for r in self.rows for c in self.cols
                 if self.values is not None and r is not None and c is not None]
        self.cell_width = max([MIN_CELL_WIDTH] + [text_width(t, FONT_SIZE) + 10 for t in texts])
        self.header_lines = [self.heading + self._slice_text(), self.type_text]
        self.header_height = HEADING_SIZE * LINE + (SMALL_SIZE + 1) * LINE + 4

    def _chosen_dims(self, interesting: list[Index]) -> tuple[int, int]:
        rank = len(self.shape)
        spread = [len({i[d] for i in interesting}) for d in range(rank)]
        # The most varied dimensions; among equals the later ones (rows and columns of the innermost matrix).
        best = sorted(range(rank), key=lambda d: (spread[d] > 1, spread[d], self.shape[d] > 1, d), reverse=True)[:2]
        return tuple(sorted(best))

    def _slice_text(self) -> str:
        if len(self.shape) < 3:
            return ""
        return "[" + ", ".join(str(self.fixed[d]) if d in self.fixed else ":" for d in range(len(self.shape))) + "]"

    def index_of(self, row: Optional[int], col: Optional[int]) -> Index:
        index = [0] * len(self.shape)
        for d, v in self.fixed.items():
            index[d] = v
        if self.row_dim is not None:
            index[self.row_dim] = row
        if self.col_dim is not None:
            index[self.col_dim] = col
        return tuple(index)

    # -- geometry ------------------------------------------------------------------------------
    def _col_widths(self) -> list[float]:
        return [self.cell_width if c is not None else GAP_CELL for c in self.cols]

    def _row_heights(self) -> list[float]:
        return [CELL_HEIGHT if r is not None else GAP_CELL for r in self.rows]

    def _numbers_left(self) -> float:
        """Room for the row numbers: wider when they have many digits (row 4000 of a big tensor)."""
        if self.row_dim is None:
            return 0.0
        widest = max((text_width(str(r), SMALL_SIZE) for r in self.rows if r is not None), default=0.0)
        return max(NUMBER_BAND, widest + 6.0)

    def _numbers_top(self) -> float:
        return NUMBER_BAND if self.col_dim is not None else 0.0

    def size(self) -> tuple[float, float]:
        self._layout()
        grid_w = self._numbers_left() + sum(self._col_widths())
        header_w = max(bold_width(self.header_lines[0], HEADING_SIZE), text_width(self.header_lines[1], SMALL_SIZE + 1))
        return (max(grid_w, header_w), self.header_height + self._numbers_top() + sum(self._row_heights()))

    def _grid_origin(self) -> tuple[float, float]:
        return self.x + self._numbers_left(), self.y + self.header_height + self._numbers_top()

    def cell_box(self, index: Index) -> Optional[Box]:
        """Where element `index` is drawn, or None when it is outside the slice or window shown."""
        self._layout()
        index = tuple(index)
        if len(index) != len(self.shape) or any(index[d] != v for d, v in self.fixed.items()):
            return None
        row = index[self.row_dim] if self.row_dim is not None else 0
        col = index[self.col_dim] if self.col_dim is not None else 0
        if row not in self.rows or col not in self.cols:
            return None
        x0, y0 = self._grid_origin()
        x = x0 + sum(self._col_widths()[: self.cols.index(col)])
        y = y0 + sum(self._row_heights()[: self.rows.index(row)])
        return (x, y, x + self.cell_width, y + CELL_HEIGHT)

    def cells_box(self, cells) -> Optional[Box]:
        """The bounding box of the drawn ones among `cells`."""
        boxes = [b for b in (self.cell_box(c) for c in cells) if b is not None]
        if not boxes:
            return None
        return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))

    def visible_indices(self) -> list[Index]:
        self._layout()
        return [self.index_of(r, c) for r in self.rows for c in self.cols if r is not None and c is not None]

    def grid_box(self) -> Box:
        """Where the cells are drawn (without the numbers around them)."""
        self._layout()
        x0, y0 = self._grid_origin()
        return (x0, y0, x0 + sum(self._col_widths()), y0 + sum(self._row_heights()))

    def region_box(self, low: Index, high: Index) -> Optional[Box]:
        """The bounding box of the drawn elements between `low` and `high` (inclusive)."""
        self._layout()
        if any(not low[d] <= v <= high[d] for d, v in self.fixed.items()):
            return None
        rows = [r for r in self.rows if r is not None and (self.row_dim is None or low[self.row_dim] <= r <= high[self.row_dim])]
        cols = [c for c in self.cols if c is not None and (self.col_dim is None or low[self.col_dim] <= c <= high[self.col_dim])]
        if not rows or not cols:
            return None
        first, last = self.cell_box(self.index_of(rows[0], cols[0])), self.cell_box(self.index_of(rows[-1], cols[-1]))
        return (first[0], first[1], last[2], last[3])

    def visible(self, index: Index) -> bool:
        return self.cell_box(index) is not None

    # -- drawing -------------------------------------------------------------------------------
    def draw(self, out: list[str]) -> None:
        self._layout()
        out.append('<g class="tensor">')
        out.append(f'<text class="heading" x="{number(self.x)}" y="{number(self.y + HEADING_SIZE)}">{escape_text(self.header_lines[0])}</text>')
        out.append(f'<text class="type" x="{number(self.x)}" y="{number(self.y + HEADING_SIZE * LINE + SMALL_SIZE + 1)}">{escape_text(self.header_lines[1])}</text>')
        x0, y0 = self._grid_origin()
        widths, heights = self._col_widths(), self._row_heights()
        if self.col_dim is not None:
            x = x0
            for c, w in zip(self.cols, widths):
                if c is not None:
                    out.append(f'<text class="number" x="{number(x + w / 2)}" y="{number(y0 - 5)}">{c}</text>')
                x += w
        if self.row_dim is not None:
            y = y0
            for r, h in zip(self.rows, heights):
                if r is not None:
                    out.append(f'<text class="number" x="{number(x0 - self._numbers_left() / 2)}" y="{number(y + h / 2 + 3)}">{r}</text>')
                y += h
        y = y0
        for r, h in zip(self.rows, heights):
            x = x0
            for c, w in zip(self.cols, widths):
                out.append(self._cell(r, c, x, y, w, h))
                x += w
            y += h
        for mark in self.marks:
            box = self.region_box(mark.low, mark.high)
            if box is not None:
                css = "mark mark-dashed" if mark.dashed else "mark"
                out.append(f'<rect class="{css}" x="{number(box[0] - 2)}" y="{number(box[1] - 2)}" width="{number(box[2] - box[0] + 4)}" '
                           f'height="{number(box[3] - box[1] + 4)}" rx="3" style="stroke:{mark.colour.stroke}"/>')
        if self.selected is not None:
            box = self.cell_box(self.selected)
            if box is not None:
                out.append(f'<rect class="selected" x="{number(box[0])}" y="{number(box[1])}" width="{number(box[2] - box[0])}" '
                           f'height="{number(box[3] - box[1])}" style="stroke:{SELECTED.stroke}"/>')
        out.append("</g>\n")

    def _cell(self, r: Optional[int], c: Optional[int], x: float, y: float, w: float, h: float) -> str:
        if r is None or c is None:
            glyph = "⋱" if r is None and c is None else ("⋮" if r is None else "⋯")
            return f'<g class="gap"><text x="{number(x + w / 2)}" y="{number(y + h / 2 + 4)}">{glyph}</text></g>'
        index = self.index_of(r, c)
        colour = self.paint.get(index) or (SELECTED if index == self.selected else None)
        if colour is None and self.shade is not None:
            colour = self.shade(index)
        fill = colour.fill if colour is not None else "#ffffff"
        text = value_text(self.values[index]) if self.values is not None else ""
        # A tooltip with the element's full index: a browser shows it under the pointer.
        tip = f"{self.name}[{', '.join(str(i) for i in index)}]" + (f" = {text}" if text else "")
        parts = [f'<g class="cell"><title>{escape_text(tip)}</title>'
                 f'<rect x="{number(x)}" y="{number(y)}" width="{number(w)}" height="{number(h)}" style="fill:{fill}"/>']
        if text:
            parts.append(f'<text x="{number(x + w / 2)}" y="{number(y + h / 2 + 4)}">{escape_text(text)}</text>')
        badge = self.badges.get(index)
        if badge:
            stroke = (self.paint.get(index) or SELECTED).stroke
            parts.append(f'<text class="badge" x="{number(x + 2)}" y="{number(y + 8)}" style="fill:{stroke}">{escape_text(badge)}</text>')
        parts.append("</g>")
        return "".join(parts)


__all__ = ["TensorPanel", "Mark", "window", "value_text", "MAX_CELLS"]
