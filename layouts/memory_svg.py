"""Memory as a picture: `hlodbg memory PROG --svg OUT.svg`, drawn from the static profile
(engine/run/memory_profile.py) as XProf's Memory Viewer draws a profile taken on hardware.

One panel per distinct device profile (MemoryAnalysis.groups(): devices whose pictures would be
the same share one, and its heading names them). On the left, the bytes live against program
order, arguments / temporaries / outputs stacked, the peak marked with its op and where it comes
from, the device's memory as a line; on the right, the buffers live at the peak as bars by size,
their layout's padding (physical minus logical bytes) hatched. Every shape carries a <title>, the
tooltip a browser shows on hover: the buffer, its type, layout and source, or the op at that point.

Written by hand (no plotting library): a few hundred elements whatever the program's size, since
a long program is drawn in buckets of positions, each showing its fullest position (the peak's
own bucket shows the peak exactly).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from hlodbg.engine.ir.core import Operation, symbol_name
from hlodbg.engine.ir.locations import name_stack, user_frame
from hlodbg.engine.ir.opset import callee_attribute
from hlodbg.engine.machine.memory import format_bytes
from hlodbg.engine.run.memory_profile import ARGUMENTS, OUTPUTS, TEMPORARIES, Buffer, DeviceMemory, MemoryAnalysis

from .svg_text import escape_attribute, escape_text, number

# The stack from the bottom up: parameters are flat, outputs grow towards the end, temporaries
# come and go on top, so each band's outline stays readable.
STACK = (ARGUMENTS, OUTPUTS, TEMPORARIES)
KIND_FILLS = {ARGUMENTS: "#7aa6d9", TEMPORARIES: "#f2a65a", OUTPUTS: "#7dbf7f"}
KIND_EDGES = {ARGUMENTS: "#3f6fa8", TEMPORARIES: "#b86b1f", OUTPUTS: "#3f8a42"}
PEAK_COLOUR = "#c0392b"
CAPACITY_COLOUR = "#7b2d8b"
GRID_COLOUR = "#e2e2e2"
TEXT_COLOUR = "#222222"
FONT_FAMILY = "Arimo, Arial, Helvetica, sans-serif"
MONO_FAMILY = "'DejaVu Sans Mono', Menlo, Consolas, monospace"
CHAR_WIDTH = 0.6  # generous average glyph width, in ems, to size text columns
LEGEND_CHAR_WIDTH = 0.52  # nearer the true width, to space the legend's entries evenly

MARGIN = 16.0
TITLE_SIZE = 15.0
FONT_SIZE = 11.0
SMALL_SIZE = 10.0
AXIS_WIDTH = 64.0  # the y axis's labels, left of the chart
PLOT_WIDTH = 640.0
PLOT_HEIGHT = 240.0
HEADING_HEIGHT = 58.0  # a panel's heading lines above its chart (and an off-scale capacity's label)
BUCKET_PIXELS = 2.0  # a long program is drawn with at most one bucket of positions per this many pixels
BAR_GAP = 40.0  # between the chart and the bars
BAR_WIDTH = 220.0
BAR_ROW = 16.0
BAR_HEIGHT = 11.0
LABEL_CHARACTERS = 28  # a buffer's name beside its bar is cut at this length (the title has it whole)
PANEL_GAP = 28.0
CAPACITY_ON_SCALE = 4.0  # the capacity line is drawn to scale when at most this times the peak


def op_name(op: Operation) -> str:
    """`%1234`: the op by its first result, or by its op name when it has none."""
    return op.results[0].name if op.results and op.results[0].name else op.name


def op_sources(op: Operation) -> list[str]:
    """Where `op` comes from, most useful first: the producer's line (for JAX the user's Python,
    `model.py:42`), then the op's line in the program file (`step.mlir:1234`)."""
    return _sources(op.location, op.pos)


def _sources(location, pos) -> list[str]:
    found = []
    frame = user_frame(location)
    if frame is not None:
        found.append(frame.short())
    if pos is not None:
        found.append(f"{pos.filename.rsplit('/', 1)[-1]}:{pos.line}")
    return found


def device_label(devices: Sequence[DeviceMemory]) -> str:
    """`device 3 (replica 0, partition 3)`, `devices 0-7`, `devices 0-3, 6`."""
    ids = [d.device for d in devices]
    if len(ids) == 1:
        return f"device {ids[0]} (replica {devices[0].process.replica_id}, partition {devices[0].process.partition_id})"
    runs: list[list[int]] = []
    for i in ids:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return "devices " + ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs)


def describe_op(op: Operation) -> str:
    """`%114 = stablehlo.transpose`, `%7 = func.call @block_2`."""
    text = f"{op_name(op)} = {op.name}" if op.results and op.results[0].name else op.name
    attribute = callee_attribute(op.name)
    if attribute is not None and attribute in op.attributes:
        text += f" @{symbol_name(op.attributes[attribute])}"
    return text


def _with_sources(op: Operation) -> str:
    sources = op_sources(op)
    return f"{describe_op(op)} ({', '.join(sources)})" if sources else describe_op(op)


# -- the document ----------------------------------------------------------------------------------


def memory_svg(analysis: MemoryAnalysis, name: str, top: int = 10) -> str:
    """The picture of `analysis` as a standalone SVG document; `top` bars per panel (0: every
    buffer live at the peak)."""
    groups = analysis.groups()
    scale = max(max(group[0].peak_bytes for group in groups), 1)
    panels = [_Panel(group, top, scale) for group in groups]
    width = MARGIN * 2 + max(p.width for p in panels)
    out: list[str] = []
    y = MARGIN
    title = (f"{name} @{analysis.entry} on {analysis.target}: bytes live in program order, "
             f"{len(analysis.devices)} device{'s' if len(analysis.devices) != 1 else ''} "
             f"({analysis.replicas}x{analysis.partitions})")
    out.append(_text(MARGIN, y + TITLE_SIZE, title, TITLE_SIZE, weight="bold"))
    y += TITLE_SIZE + 10
    any_padding = any(p.has_padding for p in panels)
    legend, legend_width = _legend(MARGIN, y, any_padding, any(p.capacity is not None for p in panels))
    out.append(legend)
    width = max(width, MARGIN * 2 + legend_width, MARGIN * 2 + len(title) * TITLE_SIZE * CHAR_WIDTH)
    y += FONT_SIZE + 14
    for index, panel in enumerate(panels):
        out.append(panel.draw(index, MARGIN, y))
        y += panel.height + PANEL_GAP
    note = ("static: op by op, every result in its own buffer (no fusion), an upper bound on what XLA needs"
            + ("; a sharded program's values outside manual computations are counted whole" if analysis.global_program else ""))
    out.append(_text(MARGIN, y, note, SMALL_SIZE, colour="#666666"))
    height = y + MARGIN
    width = max(width, MARGIN * 2 + len(note) * SMALL_SIZE * CHAR_WIDTH)
    return "\n".join([
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{number(width)}" height="{number(height)}" '
        f'viewBox="0 0 {number(width)} {number(height)}" font-family="{FONT_FAMILY}" font-size="{number(FONT_SIZE)}" fill="{TEXT_COLOUR}">',
        f"<title>{escape_text(title)}</title>",
        _DEFS,
        f'<rect class="background" width="100%" height="100%" fill="#ffffff"><title>{escape_text(title)}</title></rect>',
        *out,
        "</svg>",
        "",
    ])


PADDING_TINTS = {ARGUMENTS: "#e4edf8", TEMPORARIES: "#fcecdc", OUTPUTS: "#e4f2e4", None: "#f4f4f4"}


def _padding_pattern(kind: Optional[str]) -> str:
    """Hatching in the kind's colours (`url(#padding-arguments)`), or grey for the legend."""
    stripe = KIND_EDGES.get(kind, "#8c8c8c")
    return (f'<pattern id="{_padding_id(kind)}" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
            f'<rect width="5" height="5" fill="{PADDING_TINTS[kind]}"/>'
            f'<line x1="0" y1="0" x2="0" y2="5" stroke="{stripe}" stroke-width="1.6"/></pattern>')


def _padding_id(kind: Optional[str]) -> str:
    return f"padding-{kind}" if kind else "padding"


_DEFS = "<defs>" + "".join(_padding_pattern(kind) for kind in PADDING_TINTS) + "</defs>"


def _legend(x: float, y: float, padding: bool, capacity: bool) -> tuple[str, float]:
    entries = [(kind, f'fill="{KIND_FILLS[kind]}" stroke="{KIND_EDGES[kind]}"') for kind in reversed(STACK)]
    if padding:
        entries.append(("padding (physical minus logical bytes)", 'fill="url(#padding)" stroke="#8c8c8c"'))
    parts = ['<g class="legend">']
    for label, paint in entries:
        parts.append(f'<rect x="{number(x)}" y="{number(y)}" width="14" height="10" {paint}><title>{escape_text(label)}</title></rect>')
        parts.append(_text(x + 18, y + 9, label, FONT_SIZE))
        x += 18 + len(label) * FONT_SIZE * LEGEND_CHAR_WIDTH + 16
    for label, colour, dash in (("peak", PEAK_COLOUR, "4 3"), ("device memory", CAPACITY_COLOUR, "8 4"))[:2 if capacity else 1]:
        parts.append(f'<path d="M{number(x)},{number(y + 5)}h18" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}">'
                     f'<title>{label}</title></path>')
        parts.append(_text(x + 22, y + 9, label, FONT_SIZE))
        x += 22 + len(label) * FONT_SIZE * LEGEND_CHAR_WIDTH + 16
    parts.append("</g>")
    return "\n".join(parts), x


# -- one panel: a chart and its bars ---------------------------------------------------------------


@dataclass
class _Bucket:
    first: int  # positions first..last of the entry function, drawn as one step
    last: int
    position: int  # the fullest of them, whose stack is drawn


class _Panel:
    def __init__(self, devices: list[DeviceMemory], top: int, scale: int):
        self.devices = devices
        device = self.device = devices[0]
        self.memory = device.entry
        self.site = device.peak_site()
        self.buffers = [b for b in self.site.buffers() if b.physical_bytes > 0]
        self.shown = self.buffers if top == 0 else self.buffers[:top]
        self.kinds = self.memory.kind_timelines()
        self.data = self.memory.kind_timelines(logical=True)  # the same without the layouts' padding
        self.capacity = device.capacity_bytes
        self.capacity_on_scale = self.capacity is not None and self.capacity <= CAPACITY_ON_SCALE * scale
        self.top_bytes = max(scale, self.capacity if self.capacity_on_scale else 0) * 1.08
        self.has_padding = any(b.physical_bytes > b.logical_bytes for b in self.shown) or any(
            (self.kinds[kind] > self.data[kind]).any() for kind in STACK)
        self.label_width = max([len(self._bar_label(b)) for b in self.shown] + [8]) * SMALL_SIZE * CHAR_WIDTH
        self.size_width = max([len(self._bar_size(b)) + 2 + len(b.type) for b in self.shown] + [10]) * SMALL_SIZE * CHAR_WIDTH
        self.bars_x = AXIS_WIDTH + PLOT_WIDTH + BAR_GAP
        self.width = self.bars_x + self.label_width + 6 + BAR_WIDTH + 6 + self.size_width
        bars_height = HEADING_HEIGHT + BAR_ROW * (len(self.shown) + 2)
        self.height = max(HEADING_HEIGHT + PLOT_HEIGHT + 36, bars_height)

    # layout helpers
    def _x(self, position: float) -> float:
        return AXIS_WIDTH + PLOT_WIDTH * position / max(self.memory.liveness.size, 1)

    def _y(self, count: float) -> float:
        return HEADING_HEIGHT + PLOT_HEIGHT * (1 - count / self.top_bytes)

    def draw(self, index: int, x: float, y: float) -> str:
        ids = ",".join(str(d.device) for d in self.devices)
        heading = self._heading()
        parts = [f'<g class="panel" id="panel-{index}" data-devices="{ids}" transform="translate({number(x)},{number(y)})">',
                 f"<title>{escape_text(heading)}</title>",
                 _text(0, FONT_SIZE + 1, heading, FONT_SIZE + 1, weight="bold"),
                 _text(0, FONT_SIZE * 2 + 8, self._peak_text(), FONT_SIZE, colour=PEAK_COLOUR)]
        parts += self._axes()
        if self.memory.liveness.size:
            parts += self._areas()
        parts += self._capacity()
        parts += self._peak_marker()
        parts += self._bars()
        parts.append("</g>")
        return "\n".join(parts)

    def _heading(self) -> str:
        shared = " (the same picture for each)" if len(self.devices) > 1 else ""
        return (f"{device_label(self.devices)}{shared}: peak {format_bytes(self.device.peak_bytes)}, "
                f"arguments {format_bytes(self.memory.argument_bytes)}, outputs {format_bytes(self.memory.output_bytes)}"
                + (f"; {self.device.capacity_label}: {_capacity_share(self.device)}" if self.capacity is not None else ""))

    def _peak_text(self) -> str:
        op = self.site.op
        inside = f" in @{self.site.function.sym_name}" if self.site.function is not self.memory.function else ""
        return f"peak at {describe_op(op)}{inside}" + (f" ({', '.join(op_sources(op))})" if op_sources(op) else "")

    # the chart
    def _axes(self) -> list[str]:
        size = self.memory.liveness.size
        parts = [f'<rect class="plot" x="{number(AXIS_WIDTH)}" y="{number(HEADING_HEIGHT)}" width="{number(PLOT_WIDTH)}" '
                 f'height="{number(PLOT_HEIGHT)}" fill="#fbfbfb" stroke="#9a9a9a">'
                 f"<title>bytes live at each op of @{escape_text(self.memory.function.sym_name)} ({size} positions, "
                 f"regions inline, a call counting its callee's peak)</title></rect>"]
        grid = ['<g class="grid"><title>bytes live</title>']
        for value, label in _byte_ticks(self.top_bytes / 1.08):
            y = self._y(value)
            grid.append(f'<line x1="{number(AXIS_WIDTH)}" y1="{number(y)}" x2="{number(AXIS_WIDTH + PLOT_WIDTH)}" y2="{number(y)}" stroke="{GRID_COLOUR}"/>')
            grid.append(_text(AXIS_WIDTH - 6, y + 3.5, label, SMALL_SIZE, anchor="end"))
        for position in _position_ticks(size):
            x = self._x(position)
            grid.append(f'<line x1="{number(x)}" y1="{number(HEADING_HEIGHT + PLOT_HEIGHT)}" x2="{number(x)}" '
                        f'y2="{number(HEADING_HEIGHT + PLOT_HEIGHT + 4)}" stroke="#9a9a9a"/>')
            grid.append(_text(x, HEADING_HEIGHT + PLOT_HEIGHT + 15, str(int(position)), SMALL_SIZE, anchor="middle"))
        grid.append(_text(AXIS_WIDTH + PLOT_WIDTH / 2, HEADING_HEIGHT + PLOT_HEIGHT + 30,
                          f"program order: op position in @{self.memory.function.sym_name}", SMALL_SIZE,
                          anchor="middle", colour="#555555"))
        grid.append("</g>")
        return parts + grid

    def _buckets(self) -> list[_Bucket]:
        size = self.memory.liveness.size
        count = min(size, int(PLOT_WIDTH / BUCKET_PIXELS))
        edges = np.linspace(0, size, count + 1).astype(np.int64)
        timeline = self.memory.timeline
        return [_Bucket(int(a), int(b) - 1, int(a + np.argmax(timeline[a:b]))) for a, b in zip(edges[:-1], edges[1:]) if b > a]

    def _areas(self) -> list[str]:
        """Each kind's band: its data solid, its layouts' padding hatched above it."""
        buckets = self._buckets()
        positions = [b.position for b in buckets]
        peak = self.memory.peak_position
        below = np.zeros(len(buckets), np.int64)
        parts = ['<g class="areas">']
        for kind in STACK:
            data = below + self.data[kind][positions]
            above = below + self.kinds[kind][positions]
            if (above > below).any() or kind == ARGUMENTS:
                parts.append(f'<path class="area {kind}" d="{self._band(buckets, below, data)}" fill="{KIND_FILLS[kind]}" '
                             f'stroke="{KIND_EDGES[kind]}" stroke-width="0.8"><title>{kind}: '
                             f"{format_bytes(int(self.kinds[kind][peak]))} at the peak, at most "
                             f"{format_bytes(int(self.kinds[kind].max()))}</title></path>")
            if (above > data).any():
                padding = self.kinds[kind] - self.data[kind]
                parts.append(f'<path class="padding {kind}" d="{self._band(buckets, data, above)}" fill="url(#{_padding_id(kind)})" '
                             f'stroke="{KIND_EDGES[kind]}" stroke-width="0.6"><title>padding of the {kind}: '
                             f"{format_bytes(int(padding[peak]))} at the peak, at most {format_bytes(int(padding.max()))}"
                             "</title></path>")
            below = above
        parts.append("</g>")
        parts += self._hover_strips(buckets)
        return parts

    def _band(self, buckets: list[_Bucket], below: np.ndarray, above: np.ndarray) -> str:
        """A step outline along `above`, back along `below`: one closed path per band."""
        forward = [f"M{number(self._x(buckets[0].first))},{number(self._y(below[0]))}"]
        for bucket, top in zip(buckets, above):
            forward.append(f"V{number(self._y(top))}H{number(self._x(bucket.last + 1))}")
        backward = []
        for bucket, bottom in zip(reversed(buckets), below[::-1]):
            backward.append(f"V{number(self._y(bottom))}H{number(self._x(bucket.first))}")
        return "".join(forward + backward) + "Z"

    def _hover_strips(self, buckets: list[_Bucket]) -> list[str]:
        """An invisible strip over each bucket whose title names its fullest op and what is live."""
        parts = ['<g class="hover">']
        ops = self.memory.liveness.ops
        for bucket in buckets:
            op = ops[bucket.position]
            where = f"positions {bucket.first}-{bucket.last}, the fullest: " if bucket.last > bucket.first else f"position {bucket.first}: "
            split = ", ".join(f"{kind} {format_bytes(int(self.kinds[kind][bucket.position]))}" for kind in STACK)
            title = (f"{where}{_with_sources(op)}\n{format_bytes(self.memory.bytes_at(bucket.position))} live ({split})")
            x0, x1 = self._x(bucket.first), self._x(bucket.last + 1)
            parts.append(f'<rect x="{number(x0)}" y="{number(HEADING_HEIGHT)}" width="{number(x1 - x0)}" height="{number(PLOT_HEIGHT)}" '
                         f'fill="#000000" fill-opacity="0"><title>{escape_text(title)}</title></rect>')
        parts.append("</g>")
        return parts

    def _capacity(self) -> list[str]:
        if self.capacity is None:
            return []
        label = self.device.capacity_label
        title = f"{label}: {_capacity_share(self.device)}"
        if self.capacity_on_scale:
            y, text = self._y(self.capacity), label
            text_y = y - 4 if y > HEADING_HEIGHT + 14 else y + 12
        else:  # drawn on the chart's top edge, its label above it
            y, text, text_y = HEADING_HEIGHT, f"↑ {label}, off the scale: {_capacity_share(self.device)}", HEADING_HEIGHT - 5
        return [f'<g class="capacity"><title>{escape_text(title)}</title>',
                f'<path d="M{number(AXIS_WIDTH)},{number(y)}H{number(AXIS_WIDTH + PLOT_WIDTH)}" stroke="{CAPACITY_COLOUR}" '
                f'stroke-width="1.6" stroke-dasharray="8 4" fill="none"><title>{escape_text(title)}</title></path>',
                _text(AXIS_WIDTH + PLOT_WIDTH, text_y, text, SMALL_SIZE,
                      anchor="end", colour=CAPACITY_COLOUR, halo=True),
                "</g>"]

    def _peak_marker(self) -> list[str]:
        if not self.memory.liveness.size:
            return []
        position = self.memory.peak_position
        x = (self._x(position) + self._x(position + 1)) / 2
        y = self._y(self.device.peak_bytes)
        op = self.site.op
        title = f"peak {format_bytes(self.device.peak_bytes)} at {_with_sources(op)}"
        if self.site.function is not self.memory.function:
            title += f" in @{self.site.function.sym_name}, during {_with_sources(self.memory.liveness.ops[position])}"
        label = f"peak {format_bytes(self.device.peak_bytes)}"
        right = x < AXIS_WIDTH + PLOT_WIDTH * 0.75
        return [f'<g class="peak" data-op="{escape_attribute(op_name(op))}"><title>{escape_text(title)}</title>',
                f'<path d="M{number(x)},{number(HEADING_HEIGHT)}V{number(HEADING_HEIGHT + PLOT_HEIGHT)}" stroke="{PEAK_COLOUR}" '
                f'stroke-width="1.4" stroke-dasharray="4 3" fill="none"><title>{escape_text(title)}</title></path>',
                f'<circle cx="{number(x)}" cy="{number(y)}" r="3.5" fill="{PEAK_COLOUR}"><title>{escape_text(title)}</title></circle>',
                _text(x + 6 if right else x - 6, max(y - 6, HEADING_HEIGHT + 12), label, FONT_SIZE,
                      anchor="start" if right else "end", colour=PEAK_COLOUR, weight="bold", halo=True),
                "</g>"]

    # the bars
    def _bar_label(self, buffer: Buffer) -> str:
        name = buffer.name if buffer.function == self.memory.function.sym_name else f"{buffer.name} in @{buffer.function}"
        return name if len(name) <= LABEL_CHARACTERS else name[:LABEL_CHARACTERS - 1] + "…"

    def _bar_size(self, buffer: Buffer) -> str:
        text = format_bytes(buffer.physical_bytes)
        if buffer.physical_bytes > buffer.logical_bytes:
            text += f" ({buffer.waste:.1f}x)"
        if not buffer.in_main_memory:  # listed, but not counted in the peak
            text += f" in {self.device.backend.memory_space_label(buffer.memory_space)}"
        return text

    def _bars(self) -> list[str]:
        x0 = self.bars_x
        bar_x = x0 + self.label_width + 6
        more = len(self.buffers) - len(self.shown)
        heading = (f"buffers live at the peak, by size: {'the largest ' + str(len(self.shown)) + ' of ' if more else 'all '}"
                   f"{len(self.buffers)}")
        parts = [f'<g class="bars" data-count="{len(self.buffers)}"><title>{escape_text(heading)}</title>',
                 _text(x0, HEADING_HEIGHT - 4, heading, FONT_SIZE, weight="bold")]
        largest = max((b.physical_bytes for b in self.shown), default=1) or 1
        for row, buffer in enumerate(self.shown):
            y = HEADING_HEIGHT + 6 + row * BAR_ROW
            kind = self.device.functions[buffer.function].kind_of(buffer.value)
            title = escape_text(self._buffer_title(buffer, kind))
            logical = BAR_WIDTH * min(buffer.logical_bytes, buffer.physical_bytes) / largest
            physical = BAR_WIDTH * buffer.physical_bytes / largest
            parts.append(f'<g class="bar {kind}" data-name="{escape_attribute(buffer.name)}" data-bytes="{buffer.physical_bytes}">'
                         f"<title>{title}</title>")
            parts.append(_text(bar_x - 6, y + BAR_HEIGHT - 2, self._bar_label(buffer), SMALL_SIZE, anchor="end", mono=True))
            parts.append(f'<rect class="logical" x="{number(bar_x)}" y="{number(y)}" width="{number(max(logical, 0.5))}" '
                         f'height="{number(BAR_HEIGHT)}" fill="{KIND_FILLS[kind]}" stroke="{KIND_EDGES[kind]}" stroke-width="0.6">'
                         f"<title>{title}</title></rect>")
            if physical - logical > 0:
                parts.append(f'<rect class="padding" x="{number(bar_x + logical)}" y="{number(y)}" width="{number(physical - logical)}" '
                             f'height="{number(BAR_HEIGHT)}" fill="url(#{_padding_id(kind)})" stroke="{KIND_EDGES[kind]}" stroke-width="0.6">'
                             f"<title>{title}</title></rect>")
            parts.append(_text(bar_x + max(physical, 0.5) + 5, y + BAR_HEIGHT - 2, self._bar_size(buffer), SMALL_SIZE,
                               after=(buffer.type, "#777777")))
            parts.append("</g>")
        if more:
            rest = sum(b.physical_bytes for b in self.buffers[len(self.shown):])
            parts.append(_text(bar_x, HEADING_HEIGHT + 6 + len(self.shown) * BAR_ROW + BAR_HEIGHT,
                               f"and {more} smaller ({format_bytes(rest)}): --top 0 draws them all", SMALL_SIZE, colour="#666666"))
        parts.append("</g>")
        return parts

    def _buffer_title(self, buffer: Buffer, kind: str) -> str:
        value = buffer.value
        lines = [f"{buffer.name}: {buffer.type}, {kind[:-1]}" + (f" of @{buffer.function}" if buffer.function != self.memory.function.sym_name else "")]
        if buffer.layout is not None:
            lines.append(f"layout {buffer.layout} ({buffer.layout_origin or buffer.layout_source})")
        padding = buffer.physical_bytes - buffer.logical_bytes
        lines.append(f"{format_bytes(buffer.physical_bytes)} on the device, {format_bytes(buffer.logical_bytes)} of data"
                     + (f", {format_bytes(padding)} of padding ({buffer.waste:.1f}x)" if padding > 0 else ""))
        if not buffer.in_main_memory:
            lines.append(f"in {self.device.backend.memory_space_label(buffer.memory_space)}, not counted in the peak")
        op = value.defining_op
        named = name_stack(value.location if op is None else op.location)
        sources = _sources(value.location, value.pos) if op is None else op_sources(op)
        if op is not None:
            lines.append(f"made by {describe_op(op)}")
        if named:
            lines.append(named)
        if sources:
            lines.append("source " + ", ".join(sources))
        return "\n".join(lines)


def _capacity_share(device: DeviceMemory) -> str:
    peak, capacity = device.peak_bytes, device.capacity_bytes
    if peak > capacity:
        return f"over by {format_bytes(peak - capacity)}: the peak needs {100 * peak / capacity:.0f}% of it"
    share = 100 * peak / capacity
    return f"the peak uses {share:.1f}% of it" if share >= 0.1 else "the peak uses under 0.1% of it"


# -- small pieces ----------------------------------------------------------------------------------


BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def _round_steps(top: float) -> list[float]:
    """0 and round values up to `top`, at most 6: steps of 1, 2, 2.5 or 5 times a power of ten."""
    if top <= 0:
        return [0.0]
    magnitude = 10 ** np.floor(np.log10(top))
    step = next(magnitude * f for f in (0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10) if top / (magnitude * f) <= 5)
    return [i * step for i in range(int(top // step) + 1)]


def _position_ticks(size: int) -> list[int]:
    """Whole positions from 0 to `size` at a round step."""
    steps = _round_steps(size)
    step = max(1, round(steps[1] - steps[0])) if len(steps) > 1 else 1
    return list(range(0, size + 1, step))


def _byte_ticks(top: float) -> list[tuple[float, str]]:
    """(bytes, label) of round values up to `top`, all in one unit chosen so that there are at
    least 3 of it: 0, 250 KiB, 500 KiB, ... 1000 KiB rather than 0.2 MiB steps."""
    power = 0
    while power + 1 < len(BYTE_UNITS) and top / 1024 ** (power + 1) >= 3:
        power += 1
    unit = 1024 ** power
    return [(value * unit, f"{number(value)} {BYTE_UNITS[power]}") for value in _round_steps(top / unit)]


def _text(x: float, y: float, text: str, size: float, anchor: str = "start", colour: Optional[str] = None,
          weight: Optional[str] = None, mono: bool = False, halo: bool = False,
          after: Optional[tuple[str, str]] = None) -> str:
    """A <text>; `after`: (text, colour) following it in another colour."""
    attributes = [f'x="{number(x)}"', f'y="{number(y)}"', f'font-size="{number(size)}"']
    if anchor != "start":
        attributes.append(f'text-anchor="{anchor}"')
    if colour:
        attributes.append(f'fill="{colour}"')
    if weight:
        attributes.append(f'font-weight="{weight}"')
    if mono:
        attributes.append(f'font-family="{MONO_FAMILY}"')
    if halo:  # legible over the areas
        attributes.append('stroke="#ffffff" stroke-width="3" paint-order="stroke" stroke-linejoin="round"')
    tail = f'<tspan fill="{after[1]}" dx="6">{escape_text(after[0])}</tspan>' if after else ""
    return f"<text {' '.join(attributes)}>{escape_text(text)}{tail}</text>"


__all__ = ["describe_op", "device_label", "memory_svg", "op_name", "op_sources"]
