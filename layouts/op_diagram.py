"""Op diagrams: the student's own op drawn the way the StableHLO spec draws gather or reduce_window.

`op_diagram_svg(op, operands=..., results=..., provenance=...)` draws the op's operands and
results as grids of cells with their values; with a provenance (one result element asked about,
engine/ops/provenance.py) the element is outlined, the operand elements that make it are painted in
one colour per role (gathered element, start index, update, init value, padding value...), arrows
follow the index path, and the caption is the provenance's index arithmetic. Titles, legend and
notes are Phrases, so the diagram speaks English, Japanese or Hindi.

Ops with a drawing of their own (`has_diagram`) are registered in op_diagram_ops.py and, for the
collectives (devices as boxes, chunks coloured by the device they come from),
op_diagram_collective.py; every other tensor op gets the generic drawing: operands on the left,
results on the right, sources painted.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

from hlodbg.engine.ir.core import Operation
from hlodbg.engine.ir.phrases import Phrase, check_language
from hlodbg.engine.ops.provenance import Provenance

from . import op_diagram_ops  # noqa: F401  (its @draws registrations)
from .op_diagram_base import DRAWERS, HIDDEN_SOURCES, Scene, generic
from .op_diagram_canvas import (
    FONT_SIZE,
    HEADING_SIZE,
    TITLE_SIZE,
    Column,
    Legend,
    Lines,
    bold_width,
    document,
    text_width,
)
from .op_diagram_collective import collective, is_drawn_as_devices

if TYPE_CHECKING:
    from hlodbg.engine.debug.explain import Explanation

TITLE = Phrase("{op}: its operands and result")
TITLE_AT = Phrase("{op}: where result{index} comes from")
TITLE_AT_DEVICE = Phrase("{op}: where result{index} on replica {replica}, partition {partition} comes from")
INDEX_ARITHMETIC = Phrase("Index arithmetic")
NO_VALUES = Phrase("The values are not known yet: run the program to this op to see them.")
MORE_STEPS = Phrase("… {count} more steps like these …")

MARGIN = 16.0
MIN_WIDTH = 480.0
TEXT_WIDTH = 900.0  # the widest a diagram grows for its text alone
CAPTION_LINES = 14  # a longer index arithmetic (a big window) keeps its first steps and its conclusion


def has_diagram(op_name: str) -> bool:
    """Whether `op_name` has a drawing of its own (every other tensor op gets the generic one)."""
    return op_name in DRAWERS or is_drawn_as_devices(op_name)


def op_diagram_svg(op: Operation, *, operands: Optional[Sequence[Any]], results: Optional[Sequence[Any]],
                   provenance: Optional[Provenance] = None, lang: str = "en", devices: Optional[dict] = None) -> str:
    """The op drawn as a standalone SVG document (see the module docstring).

    `operands`/`results` are the op's values (None when it has not run: the grids are drawn empty);
    `devices` maps each ProcessId to its (operands, results), for a collective."""
    check_language(lang)
    if provenance is not None and provenance.op is not op:
        raise ValueError(f"the provenance given is of {provenance.op.name}, not of this {op.name}")
    scene = Scene(op, operands, results, provenance, lang, devices)
    draw = DRAWERS.get(op.name) or (collective if is_drawn_as_devices(op.name) else generic)
    drawing = draw(scene)

    title = _title(scene)
    body_w, body_h = drawing.size()  # lays the panels out, so the hidden sources can be counted
    notes = list(scene.notes)
    hidden = scene.hidden_sources()
    if hidden:
        notes.append(scene.say(HIDDEN_SOURCES, count=hidden))
    if operands is None and results is None and not devices:
        notes.append(scene.say(NO_VALUES))
    caption = _shortened(provenance.lines(lang), scene) if provenance is not None else []
    # As wide as the drawing, or as the text wants up to TEXT_WIDTH (longer lines wrap).
    wanted = [bold_width(title, TITLE_SIZE)] + [text_width(n, FONT_SIZE) for n in notes] + [text_width(c, FONT_SIZE, mono=True) for c in caption]
    inner = max(MIN_WIDTH, body_w, min(TEXT_WIDTH, max(wanted)))
    width = inner + 2 * MARGIN

    heading = Lines([title], inner, TITLE_SIZE, css="title")
    heading.place(MARGIN, MARGIN)
    y = MARGIN + heading.size()[1] + 10
    drawing.place(MARGIN, y)
    y += body_h + 18
    extras = [Legend(scene.legend, inner)]
    if notes:
        extras.append(Lines(notes, inner))
    if caption:
        extras.append(Lines([scene.say(INDEX_ARITHMETIC)], inner, HEADING_SIZE, css="heading"))
        extras.append(Lines(caption, inner, css="caption"))
    tail = Column([e for e in extras if e.size()[1] > 0], gap=10)
    tail.place(MARGIN, y)
    height = y + tail.size()[1] + MARGIN

    out: list[str] = []
    heading.draw(out)
    scene.draw_connections(out)  # under the grids: an arrow never hides a value, and headings mask it
    drawing.draw(out)
    tail.draw(out)
    return document(out, width, height, title)


def explanation_svg(explanation: Explanation) -> str:
    """The diagram of what `explain_op` explained: its op with the values and the provenance it
    was explained with (`hlodbg explain --svg`, an Explanation shown in a notebook)."""
    return op_diagram_svg(explanation.op, operands=explanation.operands, results=explanation.results,
                          provenance=explanation.provenance, lang=explanation.lang, devices=explanation.devices or None)


def _shortened(lines: list[str], scene: Scene) -> list[str]:
    if len(lines) <= CAPTION_LINES:
        return lines
    kept = CAPTION_LINES - 2
    return lines[:kept] + [scene.say(MORE_STEPS, count=len(lines) - kept - 1)] + lines[-1:]


def _title(scene: Scene) -> str:
    p = scene.provenance
    if p is None:
        return scene.say(TITLE, op=scene.op.name)
    index = bracket(p.index) if len(scene.op.results) == 1 else f" #{p.result}{bracket(p.index)}"
    if p.device is not None:
        return scene.say(TITLE_AT_DEVICE, op=scene.op.name, index=index, replica=p.device.replica_id,
                         partition=p.device.partition_id)
    return scene.say(TITLE_AT, op=scene.op.name, index=index)


def bracket(index) -> str:
    """An index as the spec writes it: [1, 0, 2]."""
    return "[" + ", ".join(str(int(i)) for i in index) + "]"


__all__ = ["op_diagram_svg", "explanation_svg", "has_diagram"]
