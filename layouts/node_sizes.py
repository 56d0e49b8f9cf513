"""Node box sizes as Graphviz gives them for `dot_source`'s nodes, without running Graphviz.

A layout made without Graphviz (layered.py) must draw each box exactly as large as the Graphviz
path would, so that labels fit the same and either engine's layout renders the same. Graphviz
sizes a label from per-character advance widths of the font (Arimo is metric-compatible with
Arial); the table below was measured from the Graphviz that hlodbg runs (a node of one character
repeated 40 times, margin 0), in thousandths of the font size. Then, for dot_source's attributes
(fontsize 10, margin 0.08 x 0.03 in, height 0.3 in, default width 0.75 in): a box is the label plus
the margins, at least 0.75 x 0.3 in; an ellipse (an argument) is that box scaled by sqrt(2) so the
label fits inside the curve.
"""
from __future__ import annotations

import math

from .layout import CELL_HEIGHT, CELL_WIDTH, NODE_FONT_SIZE, terminal_box

_WIDTHS_BY_GROUP = {
    190.93: "'", 222.17: "ijl", 259.76: "|", 277.83: " !,./:;I[\\]ft", 333.0: "()-`r", 333.99: "{}",
    354.98: '"', 389.16: "*", 469.24: "^", 500.0: "Jcksvxyz", 555.66: "·×", 556.15: "#$0123456789?L_abdeghnopqu",
    583.99: "+<=>~", 610.85: "FTZ", 666.99: "&ABEKPSVXY", 722.16: "CDHNRUw", 777.83: "GOQ", 833.0: "Mm",
    889.16: "%", 943.85: "W", 1015.13: "@",
}
CHARACTER_WIDTH = {char: width / 1000 for width, chars in _WIDTHS_BY_GROUP.items() for char in chars}
OTHER_CHARACTER_WIDTH = 833.49 / 1000  # what Graphviz gives characters it has no width for (▸, …, →)
LINE_HEIGHT = 1.2  # times the font size
MARGIN_X = 0.08 * 72
MARGIN_Y = 0.03 * 72
MIN_WIDTH = 0.75 * 72
MIN_HEIGHT = 0.3 * 72


def text_width(text: str, font_size: float) -> float:
    """Points Graphviz allows for one line of text."""
    return font_size * sum(CHARACTER_WIDTH.get(char, OTHER_CHARACTER_WIDTH) for char in text)


def node_size(label: list[str], kind: str, terminal: bool = False) -> tuple[float, float]:
    """(width, height) in points of a node's box: character cells in a terminal scene, else
    what Graphviz makes of dot_source's node (an argument is an ellipse)."""
    if terminal:
        columns, rows = terminal_box(label)
        return columns * CELL_WIDTH, rows * CELL_HEIGHT
    width = max((text_width(line, NODE_FONT_SIZE) for line in label), default=0.0) + 2 * MARGIN_X
    height = max(1, len(label)) * NODE_FONT_SIZE * LINE_HEIGHT + 2 * MARGIN_Y
    if kind == "argument":
        width, height = width * math.sqrt(2), height * math.sqrt(2)
    return round(max(width, MIN_WIDTH), 2), round(max(height, MIN_HEIGHT), 2)


__all__ = ["node_size", "text_width"]
