"""One value of the inspector's list: the array, which 2-D slice of it is shown, where the window
and the element cursor are, and the caches of its summary and histogram. Tuples expand into an
entry per element (`expand`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from textual.content import Content

from hlodbg.engine.debug.summary import ValueSummary
from hlodbg.ui.state import ValueView

from .tensor_text import as_tensor, element_type_text, split_tuple_type


@dataclass
class SliceEntry:
    """One row of the value list with the slice position and caches of its own."""

    view: ValueView
    array: Optional[np.ndarray]
    row_axis: int = 0
    col_axis: int = 1
    fixed: list[int] = field(default_factory=list)  # index along every axis (used when not displayed)
    fixed_axis: Optional[int] = None  # the axis index_next / index_previous move
    row0: int = 0
    col0: int = 0
    rows_shown: int = 1
    cols_shown: int = 1
    diff: bool = False
    note: str = ""
    summary: Optional[ValueSummary] = None
    summary_error: str = ""
    summarizing: bool = False
    exact: bool = False  # statistics over every element asked for (E), not from a sample
    histogram: Optional[tuple[int, Content]] = None  # (the width it was drawn for, the line)
    changed: Optional[int] = None
    cursor_row: int = 0  # the element cursor, in the slice shown (a vector's: cursor_col)
    cursor_col: int = 0
    cursor_shown: bool = False  # once moved (or in the physical view)
    row_lines: tuple[int, list] = (0, [])  # where the table's rows start and its columns' (x0, x1, column)

    def __post_init__(self) -> None:
        self.summary = self.view.summary
        if self.array is not None:
            ndim = self.array.ndim
            self.fixed = [0] * ndim
            self.row_axis, self.col_axis = max(0, ndim - 2), max(0, ndim - 1)
            self._choose_fixed_axis()

    def free_axes(self) -> list[int]:
        return [axis for axis in range(self.array.ndim) if axis not in (self.row_axis, self.col_axis)]

    def _choose_fixed_axis(self) -> None:
        free = self.free_axes() if self.array is not None and self.array.ndim > 2 else []
        if self.fixed_axis not in free:
            self.fixed_axis = free[0] if free else None

    def shown_axes(self) -> list[int]:
        """The axes of the slice shown: (rows, columns), one for a vector, none for a scalar."""
        ndim = self.array.ndim
        return [self.row_axis, self.col_axis] if ndim >= 2 else [0] if ndim == 1 else []

    def cursor_index(self) -> tuple[int, ...]:
        """The logical index under the element cursor (the fixed index along the other axes)."""
        index = list(self.fixed)
        axes = self.shown_axes()
        if len(axes) == 2:
            index[axes[0]], index[axes[1]] = self.cursor_row, self.cursor_col
        elif axes:
            index[0] = self.cursor_col
        return tuple(index)

    def previous_array(self) -> Optional[np.ndarray]:
        previous = as_tensor(self.view.previous)
        if previous is None or self.array is None or previous.shape != self.array.shape:
            return None
        return previous


def expand(view: ValueView) -> list[SliceEntry]:
    """The entry of `view`, followed by entries of its elements when it is a tuple (recursively)."""
    entries = [SliceEntry(view, as_tensor(view.value))]
    value = view.value
    if isinstance(value, tuple):
        types = split_tuple_type(view.type_text, len(value)) or [element_type_text(v) for v in value]
        previous = view.previous if isinstance(view.previous, tuple) and len(view.previous) == len(value) else None
        summary = view.summary
        summaries = summary.elements if summary is not None and len(summary.elements) == len(value) else None
        for index, element in enumerate(value):
            entries.extend(expand(ValueView(
                label=f"{view.label}[{index}]", type_text=types[index], value=element,
                summary=summaries[index] if summaries else None,
                previous=previous[index] if previous else None, where=view.where)))
    return entries
