"""Painting a window of a terminal scene into Textual strips, with the debugger's highlights.

layouts/canvas.py turns the part of a scene inside a window into characters and a tag per cell;
this module adds what only the debugger knows (breakpoint marks, the note saying why a smaller
view is shown, the op about to run, the selection, fresh values, an overlay's fills) and styles
each run of equal tags once. GraphCanvas (graph_canvas.py) keeps the state and the widget's own
styles; everything here is a plain function of them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from hlodbg.layouts.canvas import paint
from hlodbg.layouts.palette import style_of
from hlodbg.layouts.scene import Scene

BREAKPOINT_MARK = "●"
MARKER_TAG = -1  # tag id of a breakpoint marker cell (canvas tag ids are never negative)
NOTE_TAG = -2  # tag id of the cells of the note saying why a smaller view is shown
WHITE_NAMES = {"white", "bright_white"}  # palette text colours unreadable on a light theme


@dataclass
class Highlights:
    """What the debugger marks in a scene, each as the box that draws it in that scene."""

    current: Optional[str] = None  # the op about to run
    selected: Optional[str] = None
    changed: set = field(default_factory=set)  # ops whose value the last move computed
    breakpoints: set = field(default_factory=set)
    fills: dict = field(default_factory=dict)  # box -> (rank, colour) of an overlay


def category_style(category: str) -> Style:
    """The palette's terminal style for an op category, without a white text colour (the theme's
    own text colour reads on light and dark backgrounds)."""
    style = Style.parse(style_of(category).terminal)
    if style.color is not None and style.color.name in WHITE_NAMES:
        style = style.without_color
    return style


def message_rows(message: str, width: int, height: int, style: Style) -> tuple[list[Strip], list[str]]:
    """A window showing one line of text in its middle (building, laying out, an error)."""
    lines = [""] * height
    if height:
        lines[height // 2] = message.center(width)[:width]
    return [Strip([Segment(line.ljust(width), style)], width) for line in lines], lines


def scene_rows(scene: Scene, x0: int, y0: int, width: int, height: int, highlights: Highlights, note: Optional[str],
               component_style: Callable[[str], Style], base: Style, category: Callable[[str], Style]) -> tuple[list[Strip], list[str]]:
    """The window (x0, y0, width, height) of `scene` as styled strips and plain lines."""
    canvas = paint(scene, x0, y0, width, height)
    chars, tag_ids = canvas.chars.copy(), canvas.tag_ids.copy()
    for node in highlights.breakpoints:
        box = scene.boxes[node]
        column, row = box.x - x0, box.y - y0
        if 0 <= column < width and 0 <= row < height:
            chars[row, column], tag_ids[row, column] = ord(BREAKPOINT_MARK), MARKER_TAG
    if note and height and width:  # the pane says why it shows less than was asked for
        text = f" {note} "[:width]
        chars[0, :len(text)], tag_ids[0, :len(text)] = [ord(c) for c in text], NOTE_TAG
    lines = np.ascontiguousarray(chars).view(f"<U{width}").ravel().tolist() if width else [""] * height
    styles = tag_styles(canvas.tags, scene, highlights, component_style, base, category)
    rows = []
    for text, tags in zip(lines, tag_ids):
        cuts = [0, *(np.flatnonzero(tags[1:] != tags[:-1]) + 1).tolist(), width] if width else [0]
        rows.append(Strip([Segment(text[a:b], styles(int(tags[a]))) for a, b in zip(cuts, cuts[1:])], width))
    return rows, lines


def tag_styles(tags: list, scene: Scene, highlights: Highlights, component_style: Callable[[str], Style], base: Style,
               category: Callable[[str], Style]) -> Callable[[int], Style]:
    """tag id -> Rich style for one paint (each tag styled once)."""
    cache: dict[int, Style] = {}

    def style(tag_id: int) -> Style:
        if tag_id in cache:
            return cache[tag_id]
        tag = {MARKER_TAG: ("marker", ""), NOTE_TAG: ("note", "")}.get(tag_id) or tags[tag_id]
        result = base
        if tag is None:
            pass
        elif tag[0] == "note":
            result = base + component_style("graph-canvas--message")
        elif tag[0] == "marker":
            result = base + component_style("graph-canvas--breakpoint")
        elif tag[0] == "edge":
            result = base + component_style("graph-canvas--edge-selected" if tag[1] == highlights.selected else "graph-canvas--edge")
        elif tag[0] == "cluster":
            result = base + component_style("graph-canvas--cluster")
        else:
            node = tag[1]
            box = scene.boxes[node]
            result = base + category(box.category)
            if node in highlights.fills:
                result += Style(color="black", bgcolor=highlights.fills[node][1])
            if node in highlights.breakpoints and box.height == 1:
                result += component_style("graph-canvas--breakpoint")
            if node in highlights.changed:
                result += component_style("graph-canvas--changed")
            if node == highlights.selected:
                result += component_style("graph-canvas--selected")
            if node == highlights.current:
                result += component_style("graph-canvas--current")
        cache[tag_id] = result
        return result

    return style


__all__ = ["BREAKPOINT_MARK", "Highlights", "category_style", "message_rows", "scene_rows", "tag_styles"]
