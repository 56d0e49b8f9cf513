"""Drawing pieces of the op diagrams: text metrics, role colours, boxes laid out in rows and columns, arrows.

The diagrams are plain SVG written by hand (no Graphviz: the drawing is a few grids, not a
graph). Every piece is a `Block` that knows its size, is placed once at an absolute position and
then writes its elements; containers (`Row`, `Column`, `Framed`) place their children. Numbers
are written with at most two decimals, so the same op and values always give the same bytes.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Optional, Sequence

from .svg import escape_text, number

# Latin first (DejaVu/Noto ship nearly everywhere), then the common Japanese and Devanagari faces
# of Linux, macOS and Windows, so that a caption in ja or hi finds a font wherever it is opened.
FONT_FAMILY = ("'DejaVu Sans', 'Noto Sans', 'Noto Sans CJK JP', 'Noto Sans JP', 'Hiragino Sans', "
               "'Hiragino Kaku Gothic ProN', 'Yu Gothic', 'Meiryo', 'IPAGothic', 'Noto Sans Devanagari', "
               "'Lohit Devanagari', 'Nirmala UI', 'Mangal', 'Kohinoor Devanagari', Arial, sans-serif")

FONT_SIZE = 11.0
SMALL_SIZE = 9.0
HEADING_SIZE = 12.0
TITLE_SIZE = 15.0
LINE = 1.35  # line height, times the font size


def text_width(text: str, size: float, mono: bool = False) -> float:
    """A generous estimate of how wide `text` renders: CJK glyphs are square, Devanagari a little wider than Latin."""
    em = 0.0
    for ch in text:
        code = ord(ch)
        if code >= 0x2E80:
            em += 1.0
        elif mono:
            em += 0.61
        elif 0x0900 <= code <= 0x097F:
            em += 0.62 if not 0x093E <= code <= 0x094D else 0.2  # vowel signs and virama sit on their consonant
        elif ch in "il.,:;'|!()[] ":
            em += 0.34
        else:
            em += 0.62
    return em * size


def bold_width(text: str, size: float) -> float:
    return text_width(text, size) * 1.1


def wrap(text: str, width: float, size: float, mono: bool = False) -> list[str]:
    """`text` broken at spaces (or anywhere, for scripts without them) into lines no wider than `width`."""
    if text_width(text, size, mono) <= width:
        return [text]
    lines, current = [], ""
    for word in _words(text):
        candidate = current + word
        if current and text_width(candidate.rstrip(), size, mono) > width:
            lines.append(current.rstrip())
            current = word.lstrip()
        else:
            current = candidate
    if current.strip():
        lines.append(current.rstrip())
    return lines


def _words(text: str) -> list[str]:
    """Pieces a line may break after: a word with its trailing space, or one wide (CJK) character."""
    pieces, current = [], ""
    for ch in text:
        current += ch
        if ch == " " or ord(ch) >= 0x2E80:
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces


# -- colours -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Colour:
    fill: str  # light, so black values stay readable on it
    stroke: str  # dark, for outlines and arrows


PALETTE = (
    Colour("#b6d7a8", "#38761d"),  # green
    Colour("#fce5cd", "#b45f06"),  # orange
    Colour("#cfe2f3", "#0b5394"),  # blue
    Colour("#d9d2e9", "#5b3f9e"),  # purple
    Colour("#fff2cc", "#9c7c00"),  # yellow
    Colour("#d0e0e3", "#134f5c"),  # teal
    Colour("#ead1dc", "#741b47"),  # rose
    Colour("#e6e6e6", "#555555"),  # grey
)
# Light versions of the palette, to shade whole parts of a tensor behind the role colours.
LIGHT = tuple(Colour(light, c.stroke) for light, c in zip(
    ("#e8f3e3", "#fdf2e6", "#e6f0f9", "#eeeaf5", "#fff9e6", "#e7f0f1", "#f5e8ee", "#f2f2f2"), PALETTE))
# The parts of a tensor (a concatenation's inputs, a collective's devices) take the light colours in
# an order that keeps them apart from the roles' first colours (green for the element copied or
# gathered, orange for indices), so that a painted source stands out of its part.
PARTS = tuple(LIGHT[i] for i in (2, 4, 5, 6, 3, 7, 1, 0))
PART_FRAMES = tuple(PALETTE[i] for i in (2, 4, 5, 6, 3, 7, 1, 0))
SELECTED = Colour("#f4cccc", "#cc0000")  # the result element asked about
STRUCTURE = Colour("#ebebeb", "#999999")  # cells the op fills by itself (padding), drawn without a role

# A role's preferred colour, by a word of its English name, so that the same kind of element has
# the same colour in every diagram (indices orange, updates blue...); the others take free colours.
_PREFERRED = (("index", 1), ("indices", 1), ("update", 2), ("init", 3), ("padding", 7), ("rhs", 6), ("kernel", 6),
              ("lhs", 5), ("window", 0), ("gathered", 0))


class RoleColours:
    """One colour per role, given in the order the roles are first met (deterministic)."""

    def __init__(self) -> None:
        self.colours: dict[str, Colour] = {}

    def of(self, role: str) -> Colour:
        colour = self.colours.get(role)
        if colour is not None:
            return colour
        taken = set(self.colours.values())
        words = role.lower().replace("_", " ").split()
        preferred = [PALETTE[i] for word, i in _PREFERRED if word in words]
        free = [c for c in preferred + list(PALETTE) if c not in taken]
        colour = free[0] if free else PALETTE[len(self.colours) % len(PALETTE)]
        self.colours[role] = colour
        return colour


# -- blocks ------------------------------------------------------------------------------------

Box = tuple[float, float, float, float]  # x0, y0, x1, y1


class Block(ABC):
    """Something drawn at one place: measure it (`size`), `place` it, then `draw` it."""

    x: float = 0.0
    y: float = 0.0

    @abstractmethod
    def size(self) -> tuple[float, float]:
        """Width and height."""

    def place(self, x: float, y: float) -> None:
        self.x, self.y = x, y

    @abstractmethod
    def draw(self, out: list[str]) -> None:
        """Append the SVG elements, at the placed position."""


class Row(Block):
    """Children side by side, centred vertically."""

    def __init__(self, children: Sequence[Block], gap: float = 56.0) -> None:
        self.children, self.gap = [c for c in children if c is not None], gap

    def size(self) -> tuple[float, float]:
        sizes = [c.size() for c in self.children]
        return (sum(w for w, _ in sizes) + self.gap * max(0, len(sizes) - 1), max((h for _, h in sizes), default=0.0))

    def place(self, x: float, y: float) -> None:
        super().place(x, y)
        height = self.size()[1]
        for child in self.children:
            w, h = child.size()
            child.place(x, y + (height - h) / 2)
            x += w + self.gap

    def draw(self, out: list[str]) -> None:
        for child in self.children:
            child.draw(out)


class Column(Block):
    """Children one above the other, left-aligned."""

    def __init__(self, children: Sequence[Block], gap: float = 22.0) -> None:
        self.children, self.gap = [c for c in children if c is not None], gap

    def size(self) -> tuple[float, float]:
        sizes = [c.size() for c in self.children]
        return (max((w for w, _ in sizes), default=0.0), sum(h for _, h in sizes) + self.gap * max(0, len(sizes) - 1))

    def place(self, x: float, y: float) -> None:
        super().place(x, y)
        for child in self.children:
            child.place(x, y)
            y += child.size()[1] + self.gap

    def draw(self, out: list[str]) -> None:
        for child in self.children:
            child.draw(out)


class Framed(Block):
    """A child in a rounded box with a heading band (a device of a collective)."""

    PAD = 10.0

    def __init__(self, child: Block, heading: str, colour: Colour) -> None:
        self.child, self.heading, self.colour = child, heading, colour

    def size(self) -> tuple[float, float]:
        w, h = self.child.size()
        head = HEADING_SIZE * LINE + 6
        return (max(w, bold_width(self.heading, HEADING_SIZE)) + 2 * self.PAD, h + head + 2 * self.PAD)

    def place(self, x: float, y: float) -> None:
        super().place(x, y)
        self.child.place(x + self.PAD, y + HEADING_SIZE * LINE + 6 + self.PAD)

    def draw(self, out: list[str]) -> None:
        w, h = self.size()
        head = HEADING_SIZE * LINE + 6
        out.append(f'<g class="device"><rect x="{number(self.x)}" y="{number(self.y)}" width="{number(w)}" height="{number(h)}" rx="8" '
                   f'style="fill:none;stroke:{self.colour.stroke};stroke-width:1.5"/>'
                   f'<path d="M{number(self.x)},{number(self.y + head)} v{number(-head + 8)} a8,8 0 0 1 8,-8 h{number(w - 16)} a8,8 0 0 1 8,8 v{number(head - 8)} z" '
                   f'style="fill:{self.colour.fill};stroke:{self.colour.stroke};stroke-width:1.5"/>'
                   f'<text class="heading" x="{number(self.x + self.PAD)}" y="{number(self.y + head - 7)}">{escape_text(self.heading)}</text></g>\n')
        self.child.draw(out)


class Lines(Block):
    """A few lines of text (a note, the caption), wrapped to `width`."""

    def __init__(self, lines: Sequence[str], width: float, size: float = FONT_SIZE, css: str = "note") -> None:
        self.size_px, self.css, self.mono = size, css, css == "caption"
        # Bold lines are about a tenth wider than the estimate: they wrap a tenth earlier.
        fit = width / 1.1 if css in ("title", "heading") else width
        self.lines = [piece for line in lines for piece in wrap(line, fit, size, self.mono)]

    def size(self) -> tuple[float, float]:
        widths = [text_width(line, self.size_px, self.mono) * (1.1 if self.css in ("title", "heading") else 1.0) for line in self.lines]
        return (max(widths, default=0.0), len(self.lines) * self.size_px * LINE)

    def draw(self, out: list[str]) -> None:
        for i, line in enumerate(self.lines):
            baseline = self.y + (i + 0.8) * self.size_px * LINE
            out.append(f'<text class="{self.css}" x="{number(self.x)}" y="{number(baseline)}">{escape_text(line)}</text>\n')


@dataclass(frozen=True)
class LegendEntry:
    label: str
    colour: Colour
    outline: bool = False  # drawn as a dashed outline (a window, a slice) rather than a filled cell


class Legend(Block):
    """Swatches with their labels, flowing over as many lines as `width` needs."""

    ROW = 18.0
    SWATCH = 14.0

    def __init__(self, entries: Sequence[LegendEntry], width: float) -> None:
        self.entries, self.width = list(entries), width
        self.spots: list[tuple[float, float]] = []
        x, y = 0.0, 0.0
        for entry in self.entries:
            w = self.SWATCH + 6 + text_width(entry.label, FONT_SIZE) + 18
            if x and x + w > width:
                x, y = 0.0, y + self.ROW
            self.spots.append((x, y))
            x += w
        self.height = (y + self.ROW) if self.entries else 0.0

    def size(self) -> tuple[float, float]:
        return (self.width if self.entries else 0.0, self.height)

    def draw(self, out: list[str]) -> None:
        out.append('<g class="legend">')
        for entry, (dx, dy) in zip(self.entries, self.spots):
            x, y = self.x + dx, self.y + dy
            style = (f"fill:none;stroke:{entry.colour.stroke};stroke-width:1.6;stroke-dasharray:4,2" if entry.outline
                     else f"fill:{entry.colour.fill};stroke:{entry.colour.stroke};stroke-width:1")
            out.append(f'<g class="legend-entry"><rect x="{number(x)}" y="{number(y + 2)}" width="{number(self.SWATCH)}" height="{number(self.SWATCH - 2)}" rx="2" style="{style}"/>'
                       f'<text x="{number(x + self.SWATCH + 6)}" y="{number(y + self.SWATCH - 1)}">{escape_text(entry.label)}</text></g>')
        out.append("</g>\n")


# -- arrows ------------------------------------------------------------------------------------


Point = tuple[float, float]


def arrow(out: list[str], start: Point, end: Point, colour: Colour, label: str = "", bend: float = 0.12,
          control: Optional[Point] = None) -> None:
    """A gently curved arrow from `start` to `end` (through `control`, when given), over a white halo."""
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    if length < 4:
        return
    # The control point sits off the straight line, always on the same side, so arrows bow alike.
    nx, ny = -(y1 - y0) / length, (x1 - x0) / length
    cx, cy = control or ((x0 + x1) / 2 + nx * length * bend, (y0 + y1) / 2 + ny * length * bend)
    # The head points along the curve's last tangent (from the control point to the tip).
    tx, ty = x1 - cx, y1 - cy
    tangent = math.hypot(tx, ty) or 1.0
    ux, uy = tx / tangent, ty / tangent
    head, half = 9.0, 4.0
    bx, by = x1 - ux * head, y1 - uy * head
    path = f"M{number(x0)},{number(y0)} Q{number(cx)},{number(cy)} {number(bx)},{number(by)}"
    corners = ((x1, y1), (bx - uy * half, by + ux * half), (bx + uy * half, by - ux * half))
    polygon = " ".join(f"{number(px)},{number(py)}" for px, py in corners)
    out.append(f'<g class="arrow"><path d="{path}" class="halo"/><path d="{path}" style="stroke:{colour.stroke}"/>'
               f'<polygon points="{polygon}" style="fill:{colour.stroke}"/>')
    if label:
        lx, ly = (x0 + 2 * cx + x1) / 4, (y0 + 2 * cy + y1) / 4  # the curve's midpoint
        out.append(f'<text class="arrow-label" x="{number(lx)}" y="{number(ly - 5)}" style="fill:{colour.stroke}">{escape_text(label)}</text>')
    out.append("</g>\n")


def link_under(start_grid: Box, start: Box, end_grid: Box, end: Box) -> tuple[Point, Point, Point]:
    """An arrow's start, end and control point for a link that dips under both grids (between the
    devices of a collective, where a straight link would cross the grids in between)."""
    sx, ex = (start[0] + start[2]) / 2, (end[0] + end[2]) / 2
    y0, y1 = start_grid[3] + 3, end_grid[3] + 3
    return (sx, y0), (ex, y1), ((sx + ex) / 2, max(y0, y1) + 26)


def link_ends(start_grid: Box, start: Box, end_grid: Box, end: Box, end_margin: float) -> tuple[Point, Point]:
    """Where an arrow from cells `start` (in grid `start_grid`) to cells `end` begins and ends: on
    the facing edges of the two grids, level with the cells, so that it crosses no cell of either;
    `end_margin` keeps the head clear of the row or column numbers beside the target grid."""
    def middle(box: Box) -> Point:
        return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2

    (sx, sy), (ex, ey) = middle(start), middle(end)
    if end_grid[0] >= start_grid[2]:  # target to the right
        return (start_grid[2] + 3, sy), (end_grid[0] - end_margin, ey)
    if end_grid[2] <= start_grid[0]:  # to the left
        return (start_grid[0] - end_margin, sy), (end_grid[2] + 3, ey)
    if end_grid[1] >= start_grid[3]:  # below
        return (sx, start_grid[3] + 3), (ex, end_grid[1] - end_margin)
    if end_grid[3] <= start_grid[1]:  # above
        return (sx, start_grid[1] - end_margin), (ex, end_grid[3] + 3)
    return (start[2] + 2, sy), (end[0] - 2, ey)  # overlapping grids (not laid out by our drawings)


def stylesheet() -> str:
    return "\n".join([
        f"svg{{font-family:{FONT_FAMILY};font-size:{number(FONT_SIZE)}px}}",
        ".background{fill:#ffffff}",
        f".title{{font-size:{number(TITLE_SIZE)}px;font-weight:bold;fill:#1a1a1a}}",
        f".heading{{font-size:{number(HEADING_SIZE)}px;font-weight:bold;fill:#1a1a1a}}",
        f".type{{font-size:{number(SMALL_SIZE + 1)}px;fill:#555555}}",
        # A white outline behind the glyphs of the labels an arrow may pass under.
        ".tensor .heading,.tensor .type,.number{paint-order:stroke;stroke:#ffffff;stroke-width:3px;stroke-linejoin:round}",
        ".cell rect{stroke:#444444;stroke-width:0.7}",
        ".cell text,.gap text{text-anchor:middle;fill:#1a1a1a}",
        ".gap text{fill:#777777}",
        f".number{{font-size:{number(SMALL_SIZE)}px;fill:#8a8a8a;text-anchor:middle}}",
        ".mark{fill:none;stroke-width:2}",
        ".mark-dashed{stroke-dasharray:5,3}",
        ".selected{fill:none;stroke-width:2.6}",
        f".badge{{font-size:{number(SMALL_SIZE - 1)}px;font-weight:bold}}",
        ".arrow path{fill:none;stroke-width:1.7}",
        ".arrow .halo{stroke:#ffffff;stroke-width:4;stroke-opacity:0.8}",
        f".arrow-label{{font-size:{number(SMALL_SIZE + 1)}px;text-anchor:middle;font-weight:bold}}",
        ".note{fill:#333333}",
        f".caption{{fill:#1a1a1a;font-family:'DejaVu Sans Mono', 'Noto Sans Mono', {FONT_FAMILY}}}",
        ".legend text{fill:#222222}",
    ])


def document(body: Sequence[str], width: float, height: float, title: str) -> str:
    """A standalone SVG 1.1 document around the drawn elements."""
    w, h = number(math.ceil(width)), number(math.ceil(height))
    return "".join([
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{w}" height="{h}" viewBox="0 0 {w} {h}">\n',
        f"<title>{escape_text(title)}</title>\n",
        f"<style>\n{stylesheet()}\n</style>\n",
        f'<rect class="background" x="0" y="0" width="{w}" height="{h}"/>\n',
        *body,
        "</svg>\n",
    ])


__all__ = ["FONT_FAMILY", "Block", "Row", "Column", "Framed", "Lines", "Legend", "LegendEntry", "Colour", "PALETTE",
           "SELECTED", "STRUCTURE", "LIGHT", "PARTS", "PART_FRAMES", "RoleColours", "arrow", "link_ends", "link_under", "document", "text_width", "bold_width", "wrap", "Box"]
