"""The memory pane's chart (ui/widgets/memory_pane.py memory_chart): bytes live along the entry in
block characters, each column the most its positions hold, ▲ under the position the run is at."""
from __future__ import annotations

import numpy as np

from hlodbg.ui.widgets.memory_pane import CHART_ROWS, memory_chart


def test_every_position_has_a_column_when_there_is_room():
    lines = memory_chart([0, 4, 8, 2], cursor=2, width=10)
    assert len(lines) == CHART_ROWS + 1
    bars, marker = lines[:-1], lines[-1]
    assert all(len(line) == 4 for line in bars)
    assert [line[2] for line in bars] == ["█"] * CHART_ROWS  # the peak fills its column
    assert all(line[0] == " " for line in bars)  # nothing live: an empty column
    assert marker == "  ▲"


def test_a_long_program_keeps_its_peak_and_puts_the_cursor_in_the_right_column():
    curve = np.ones(10_000)
    curve[7_777] = 50.0  # one position's peak, narrower than any column
    lines = memory_chart(curve, cursor=9_999, width=40)
    assert all(len(line) == 40 for line in lines[:-1])
    peak_column = 7_777 * 40 // 10_000
    assert lines[0][peak_column] == "█" and lines[0].count("█") == 1
    assert lines[-1] == " " * 39 + "▲"


def test_no_curve_no_chart():
    assert memory_chart([], cursor=None, width=20) == []
    assert memory_chart([0, 0, 0], cursor=None, width=20)[:-1] == [" " * 3] * CHART_ROWS
