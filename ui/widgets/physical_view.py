"""The inspector's physical view: how the device holds the selected value.

Its XLA shape and layout (`bf16[16,32]{1,0:T(8,128)(2,1)}`) and where the layout came from, its
logical and physical bytes, the first tiling's tiles over the 2-D slice shown (padding marked),
and for the element under the cursor where it lives in the buffer (engine/machine/layout.py's
`Layout.locate`): its tile, the offset in it, byte, bit and 32-bit word, and the elements packed
into the same word. On the CPU, the dense row-major buffer the value is.

Plain functions from a StorageView and the slice being shown to lines of Content; the inspector
widget draws them.
"""
from __future__ import annotations

from math import ceil
from typing import Optional, Sequence

import numpy as np
from textual.content import Content

from hlodbg.engine.machine.layout import COMBINE, LayoutError, format_shape
from hlodbg.engine.machine.memory import format_bytes
from hlodbg.ui.state import StorageView

from .tensor_text import MUTED, format_cells

FULL_TILE = "██"
# A tile drawn by where its padding is: (padding rows at its bottom, padding columns at its right)
# -> (glyph, legend); padding along a dim the slice does not show is in every tile.
TILE_GLYPHS = {
    (False, False): (FULL_TILE, "full tile"),
    (True, False): ("▀▀", "padding rows below"),
    (False, True): ("█░", "padding columns right"),
    (True, True): ("▀░", "padding rows and columns"),
}
HIDDEN_PADDING = ("▒▒", "padded along a dim not shown")
CURSOR_TILE = "bold reverse $text-accent"
WASTE = "bold $text-warning"
ERROR = "bold $text-error"
MAX_TILE_ROWS = 4  # lines of the tile grid at most (a window around the cursor's tile)
LABEL = 10  # width of the line labels ("physical  ")

SOURCES = {
    "given": "given in the program",
    "option": "given by --layout",
    "default": "default: inferred by hlodbg (approximate)",
}


def physical_lines(storage: Optional[StorageView], array: Optional[np.ndarray], axes: Sequence[int],
                   cursor: Optional[tuple[int, ...]], width: int) -> list[Content]:
    """The physical view. `axes`: the logical axes shown as (rows, columns) of the slice (one
    axis for a vector, none for a scalar); `cursor`: the logical index under the element cursor."""
    if storage is None:
        return [_line("physical", "this value has no buffer of its own (a token, a tuple, or a body's "
                                  "values run on whole arrays)", MUTED)]
    try:
        lines = [_shape_line(storage), _bytes_line(storage)]
        if cursor is not None and array is not None and array.size:  # first: a small pane shows it still
            lines += _cursor_lines(storage, array, cursor)
        if storage.tiled:
            lines += _tile_lines(storage, axes, cursor, width)
    except LayoutError as e:  # a layout the program gave that this shape cannot take: said, not raised
        lines = [_line("physical", f"{format_shape(storage.dtype, storage.shape)}: {e}", ERROR)]
    return lines


def _line(label: str, text, style: str = "") -> Content:
    body = text if isinstance(text, Content) else Content.styled(text, style) if style else Content(text)
    return Content.assemble((label.ljust(LABEL), "bold"), body)


def _shape_line(storage: StorageView) -> Content:
    shape = format_shape(storage.dtype, storage.shape, storage.layout)
    if not storage.source:  # the CPU
        return _line("physical", Content.assemble(
            (shape, "bold"), f"  {storage.target} keeps values row-major, unpadded: dense {format_bytes(storage.physical_bytes)}"))
    return _line("physical", Content.assemble((shape, "bold"), "  ", (SOURCES.get(storage.source, storage.source), MUTED)))


def _bytes_line(storage: StorageView) -> Content:
    waste = storage.waste
    tiled = storage.layout.physical_shape(storage.shape)
    return _line("bytes", Content.assemble(
        f"logical {format_bytes(storage.logical_bytes)}  physical {format_bytes(storage.physical_bytes)}  ",
        (f"waste {waste:.2f}x", WASTE if waste > 1 else ""),
        (f"  tiled shape [{','.join(map(str, tiled))}]" if storage.tiled else "", MUTED)))


def tile_extents(storage: StorageView) -> Optional[list[int]]:
    """The first tile's size along each logical axis (1 where it does not tile), or None when it
    folds dims together (`*`), which a grid over two axes cannot draw."""
    tile = storage.layout.tiles[0]
    if COMBINE in tile:
        return None
    minor_to_major = storage.layout.minor_to_major
    extents = []
    for axis in range(len(storage.shape)):
        from_minor = minor_to_major.index(axis)  # 0: the most minor dim, tiled by the tile's last size
        extents.append(tile[len(tile) - 1 - from_minor] if from_minor < len(tile) else 1)
    return extents


def _tile_lines(storage: StorageView, axes: Sequence[int], cursor: Optional[tuple[int, ...]], width: int) -> list[Content]:
    tile = storage.layout.tiles[0]
    tile_text = "(" + ",".join("*" if d == COMBINE else str(d) for d in tile) + ")"
    shape = storage.shape
    if not shape:
        return [_line("tiles", f"a scalar fills a whole {tile_text} tile")]
    extents = tile_extents(storage)
    if extents is None:
        return [_line("tiles", f"{tile_text} folds dims together (*): no grid drawn")]
    notes = []
    padded_hidden = [f"axis {a} pads {shape[a]} to {ceil(shape[a] / extents[a]) * extents[a]}"
                     for a in range(len(shape)) if a not in axes and shape[a] % extents[a]]
    short = len(tile) - len(shape)
    if short > 0:  # the tile reaches past the shape's major end: those dims count as 1
        notes.append(f"{short} more major tile dim{'s' * (short > 1)} pad 1 to {', '.join(map(str, tile[:short]))}")
    rows_axis, cols_axis = (axes[0], axes[1]) if len(axes) == 2 else (None, axes[-1])
    n_rows, t_rows = (shape[rows_axis], extents[rows_axis]) if rows_axis is not None else (1, 1)
    n_cols, t_cols = shape[cols_axis], extents[cols_axis]
    grid_rows, grid_cols = ceil(n_rows / t_rows), ceil(n_cols / t_cols)
    used_rows, used_cols = n_rows - (grid_rows - 1) * t_rows, n_cols - (grid_cols - 1) * t_cols
    # The axes each tile dim runs along, major to minor: a {0,1} layout tiles axis 1 by 8 and
    # axis 0 by 128, drawn below as tiles of 128 rows (axis 0) by 8 columns (axis 1).
    tiled = [axis for axis in reversed(storage.layout.minor_to_major[:len(tile)])]
    on = f"axes {'×'.join(map(str, tiled))}" if len(tiled) > 1 else f"axis {tiled[0]}"
    head = [f"{tile_text} on {on}: " + (f"{grid_rows}×{grid_cols} tiles of {t_rows}×{t_cols}" if rows_axis is not None
                                        else f"{grid_cols} tile{'s' * (grid_cols > 1)} of {t_cols}")]
    if used_rows < t_rows:
        head.append(f"last tile row: {used_rows} of {t_rows} rows used")
    if used_cols < t_cols:
        head.append(f"last tile column: {used_cols} of {t_cols} columns used")
    lines = [_line("tiles", "; ".join(head + padded_hidden + notes))]
    cursor_tile = ((cursor[rows_axis] // t_rows) if rows_axis is not None else 0, cursor[cols_axis] // t_cols) if cursor else (0, 0)
    grid, glyphs = _tile_grid(grid_rows, grid_cols, bool(padded_hidden) or short > 0, used_rows < t_rows,
                              used_cols < t_cols, cursor_tile if cursor else None, width)
    legend = [Content.styled(f"{glyph} {meaning}  ", MUTED) for glyph, meaning in glyphs]
    if cursor:
        legend += [Content.styled("██", CURSOR_TILE), Content.styled(" the cursor's tile", MUTED)]
    return lines + grid + [Content.assemble(" " * LABEL, *legend)]


def _tile_grid(grid_rows: int, grid_cols: int, every_tile_padded: bool, last_row_padded: bool, last_col_padded: bool,
               cursor_tile: Optional[tuple[int, int]], width: int) -> tuple[list[Content], list[tuple[str, str]]]:
    """Tiles as blocks, a window around the cursor's tile when they do not all fit, and the
    (glyph, meaning) of those drawn. A tile holds padding rows when it is in the last tile row and
    that row is short, padding columns likewise; a dim the slice does not show pads every tile."""
    fits_cols = max(1, (width - LABEL - 8) // len(FULL_TILE))
    focus_row, focus_col = cursor_tile or (0, 0)
    row0 = max(0, min(focus_row - MAX_TILE_ROWS // 2, grid_rows - MAX_TILE_ROWS))
    col0 = max(0, min(focus_col - fits_cols // 2, grid_cols - fits_cols))
    lines, used = [], []
    for row in range(row0, min(grid_rows, row0 + MAX_TILE_ROWS)):
        parts: list = [(f"{row:>{LABEL - 2}}  " if row == row0 or row == grid_rows - 1 else " " * LABEL, MUTED)]
        for col in range(col0, min(grid_cols, col0 + fits_cols)):
            glyph = HIDDEN_PADDING if every_tile_padded else TILE_GLYPHS[
                (last_row_padded and row == grid_rows - 1, last_col_padded and col == grid_cols - 1)]
            if glyph not in used:
                used.append(glyph)
            parts.append((glyph[0], CURSOR_TILE if (row, col) == cursor_tile else "" if glyph[0] == FULL_TILE else MUTED))
        if col0 + fits_cols < grid_cols:
            parts.append((f" … {grid_cols - col0 - fits_cols} more", MUTED))
        lines.append(Content.assemble(*parts))
    if row0 + MAX_TILE_ROWS < grid_rows:
        lines.append(Content.styled(" " * LABEL + f"… {grid_rows - row0 - MAX_TILE_ROWS} more tile rows", MUTED))
    return lines, sorted(used, key=[*TILE_GLYPHS.values(), HIDDEN_PADDING].index)


def _cursor_lines(storage: StorageView, array: np.ndarray, cursor: tuple[int, ...]) -> list[Content]:
    location = storage.layout.locate(cursor, storage.shape, storage.dtype)
    tile = ""
    if storage.tiled:
        tile = (f"tile ({','.join(map(str, location.tile_index))}) #{location.tile_number}, "
                f"offset ({','.join(map(str, location.tile_offset))})  ")
    bit = f" bit {location.bit_offset}" if location.bits < 8 else ""
    lines = [_line("cursor", Content.assemble(
        (_index_text(cursor), "bold reverse"), f" = {_value_text(array, cursor)}  ", tile,
        f"byte {location.byte_offset:,}{bit}  word {location.word_index:,}  ({location.bits}-bit element)"))]
    if location.word_mates:
        members = sorted((*location.word_mates, location.index))
        shown = "  ".join(f"{_index_text(m)} = {_value_text(array, m)}" for m in members)
        lines.append(_line("word", Content.assemble(
            (f"{len(members)} elements share 32-bit word {location.word_index:,}: ", ""), (shown, "bold"),
            (f"  ({_packing(storage, members)})", MUTED))))
    return lines


def _packing(storage: StorageView, members: list[tuple[int, ...]]) -> str:
    """Which way the word's elements run: down a column (a (2,1)/(4,1) sub-tile packs rows) or
    along the minor dim."""
    differing = [axis for axis in range(len(members[0])) if len({m[axis] for m in members}) > 1]
    tiles = "".join("(" + ",".join(map(str, t)) + ")" for t in storage.layout.tiles[1:])
    if len(differing) == 1:
        axis = differing[0]
        steps = {b[axis] - a[axis] for a, b in zip(members, members[1:])}
        run = "consecutive" if steps == {1} else f"{steps.pop()} apart" if len(steps) == 1 else "spread"
        return f"{run} along axis {axis}" + (f", packed by {tiles}" if tiles else "")
    return f"packed by {tiles}" if tiles else "consecutive in memory"


def _index_text(index: Sequence[int]) -> str:
    return "[" + ", ".join(map(str, index)) + "]"


def _value_text(array: np.ndarray, index: Sequence[int]) -> str:
    texts, _ = format_cells(np.asarray(array[tuple(index)]).reshape(1, 1))
    return texts[0][0]


__all__ = ["physical_lines", "tile_extents"]
