"""Explain one op to a student, in English, Japanese or Hindi.

`explain_op(op, ...)` answers, for this op with this op's numbers: what the op does (the plain
words of engine/debug/explain/words/, read by words.py), what each operand and result is, every
attribute decoded (attributes.py), how the result shape follows from the operands and attributes
(shapes.py) and, given an element `at`, where that element comes from (the op family's
provenance, engine/ops/provenance.py), with values when the op has run. Every sentence is a
translated Phrase (engine/ir/phrasebook/<lang>/explain*.toml); `Explanation.text()` lays them out
as plain text and `to_dict()` as JSON.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from ...ir.core import Operation
from ...ir.errors import HlodbgError
from ...ir.opdefs import lookup
from ...ir.phrases import Phrase, check_language
from ...machine.process import ProcessId
from ...ops.provenance import Provenance, ProvenanceError, ValuesNeeded, has_provenance, provenance
from .attributes import attribute_lines
from .shapes import derive_shape
from .text import columns, paragraphs, wrap

WHAT = Phrase("What it does")
OPERANDS_AND_RESULTS = Phrase("Operands and results")
ATTRIBUTES = Phrase("Attributes")
RESULT_SHAPE = Phrase("How the result shape follows")
ELEMENT = Phrase("Where result #{result} element {index} comes from")
TITLE = Phrase("{values} = {op} (line {line})")
TITLE_NO_RESULTS = Phrase("{op} (line {line})")
TITLE_HLO = Phrase("{values} = {opcode} (line {line}), read as {op}")
TITLE_HLO_NO_RESULTS = Phrase("{opcode} (line {line}), read as {op}")
NO_WORDS = Phrase("hlodbg has no plain-words description of {op}; the sections below still decode it")
NO_ATTRIBUTES = Phrase("the op has no attributes")
NO_OPERANDS = Phrase("the op has no operands")
OPERAND = Phrase("operand #{i} {name} ({value}): {type}")
OPERAND_MEANING = Phrase("operand #{i} {name} ({value}): {type}: {meaning}")
RESULT = Phrase("result #{i} ({value}): {type}")
RESULT_MEANING = Phrase("result #{i} ({value}): {type}: {meaning}")
VALUE = Phrase("value: {value}")
VALUE_SUMMARY = Phrase("value: {count} elements from {low} to {high}")
NO_PROVENANCE = Phrase("no provenance: {reason}")
STEPS = Phrase("the index arithmetic:")
SOURCES = Phrase("the operand elements that make it, in the order the op combines them:")
SOURCE = Phrase("{role}: operand #{operand} {name} at {index}")
SOURCE_VALUE = Phrase("{role}: operand #{operand} {name} at {index} = {value}")
SOURCE_DEVICE = Phrase("{role}: operand #{operand} {name} at {index} of device (replica {replica}, partition {partition})")
SOURCE_DEVICE_VALUE = Phrase("{role}: operand #{operand} {name} at {index} of device (replica {replica}, partition {partition}) = {value}")
ELEMENT_VALUE = Phrase("result #{result} at {index} = {value}")
MORE_STEPS = Phrase("… {count} more steps like these …")  # the diagrams' phrase (layouts/op_diagram.py) too
MORE_SOURCES = Phrase("… and {count} more operand elements like these")
NO_FAMILY = Phrase("hlodbg does not trace {op}'s result elements back to its operands; the sections above still "
                   "hold")
VALUES_NEEDED = Phrase("which elements make it depends on the values {op} sees, and this op has no values here")
NOTHING_TO_TRACE = Phrase("{op} has no operands: its elements do not come from another tensor")
NO_SOURCES = Phrase("no operand element makes it: the value does not depend on the operands' values")

SMALL_VALUE = 24  # elements printed whole; larger values are summarised
SHOWN_STEPS = 24  # index-arithmetic lines; a longer one (2,000 updates landing on one element) keeps its ends
SHOWN_SOURCES = 32  # operand elements listed one per line; a big window or contraction is counted after them


@dataclass
class Section:
    heading: str
    lines: list[str]


@dataclass
class Explanation:
    op: Operation
    title: str
    sections: list[Section]
    provenance: Optional[Provenance] = None
    lang: str = "en"
    hlo_opcode: Optional[str] = None  # the XLA HLO opcode the op was written as, for an op read from HLO
    # The values of the execution explained (None: the op had not run), and for a collective on a
    # grid every device's (operands, results): what its diagram (layouts/op_diagram.py) draws.
    operands: Optional[Sequence[Any]] = field(default=None, repr=False)
    results: Optional[Sequence[Any]] = field(default=None, repr=False)
    devices: Optional[dict] = field(default=None, repr=False)

    def __repr__(self) -> str:
        return f"<Explanation {self.title}: {', '.join(s.heading for s in self.sections)}>"

    def text(self, width: int = 100) -> str:
        """Plain text: the title, then each section's heading and its lines wrapped to `width`
        (a line's continuation indented under it; decoded lines, given with a leading "  ",
        one step further)."""
        out = [self.title, "=" * min(columns(self.title), width)]
        for section in self.sections:
            out += ["", section.heading]
            for line in section.lines:
                extra = len(line) - len(line.lstrip(" "))
                indent = "  " + " " * extra
                out += wrap(line.strip(), max(width, 20), indent, indent + "  ")
        return "\n".join(out) + "\n"

    def to_dict(self) -> dict:
        out: dict[str, Any] = {
            "op": self.op.name,
            "hlo_opcode": self.hlo_opcode,
            "line": self.op.pos.line if self.op.pos is not None else None,
            "lang": self.lang,
            "title": self.title,
            "sections": [{"heading": s.heading, "lines": list(s.lines)} for s in self.sections],
            "provenance": None,
        }
        if self.provenance is not None:
            p = self.provenance
            out["provenance"] = {
                "result": p.result,
                "index": list(p.index),
                "device": [p.device.replica_id, p.device.partition_id] if p.device is not None else None,
                "steps": p.lines(self.lang),
                "sources": [{"operand": s.operand, "index": list(s.index), "role": s.role.say(self.lang),
                             "device": [s.device.replica_id, s.device.partition_id] if s.device is not None else None} for s in p.sources],
            }
        return out


def explain_op(op: Operation, *, lang: str = "en", operands: Optional[Sequence[Any]] = None,
               results: Optional[Sequence[Any]] = None, at: Optional[Sequence[int]] = None, result: int = 0,
               process: Optional[ProcessId] = None, peer_values=None, values_note: Optional[str | Sequence[str]] = None,
               hlo_opcode: Optional[str] = None, devices: Optional[dict] = None) -> Explanation:
    """The explanation of `op` (see the module docstring). `operands`/`results` are the values of
    one execution (None when unknown); `devices`, on a grid, each device's (operands, results) of a
    collective, kept for its diagram; `values_note` is a sentence (or several) saying why there are none,
    or which execution they are of. `hlo_opcode`: the XLA HLO opcode the op was written as, for an op
    read from HLO text (the caller knows it: layouts.labels.hlo_opcode), named in the title."""
    check_language(lang)
    words = _words(op.name, lang)
    what = paragraphs(words.what) if words is not None else []
    sections = [
        Section(WHAT.say(lang), what or [NO_WORDS.say(lang, op=op.name)]),
        Section(OPERANDS_AND_RESULTS.say(lang), _operand_lines(op, lang, words, operands, results, values_note)),
        Section(ATTRIBUTES.say(lang), _attribute_lines(op, lang, words)),
        Section(RESULT_SHAPE.say(lang), derive_shape(op, lang)),
    ]
    found = None
    if at is not None:
        found, lines = _provenance_lines(op, lang, tuple(int(i) for i in at), result, operands, results, process,
                                         peer_values)
        sections.append(Section(ELEMENT.say(lang, result=result, index=tuple(int(i) for i in at)), lines))
    return Explanation(op, _title(op, lang, hlo_opcode), sections, found, lang, hlo_opcode, operands, results, devices)


def _words(op_name: str, lang: str):
    from .words import words_for  # the plain words, owned by engine/debug/explain/words.py

    try:
        return words_for(op_name, lang)
    except LookupError:
        return None


def _title(op: Operation, lang: str, hlo_opcode: Optional[str] = None) -> str:
    line = op.pos.line if op.pos is not None else "?"
    values = ", ".join(r.name for r in op.results)
    if hlo_opcode:
        if op.results:
            return TITLE_HLO.say(lang, values=values, opcode=hlo_opcode, op=op.name, line=line)
        return TITLE_HLO_NO_RESULTS.say(lang, opcode=hlo_opcode, op=op.name, line=line)
    if op.results:
        return TITLE.say(lang, values=values, op=op.name, line=line)
    return TITLE_NO_RESULTS.say(lang, op=op.name, line=line)


def operand_names(op: Operation) -> list[str]:
    """Each operand's name in the op's definition (`inputs[1]` inside a variadic group)."""
    definition = lookup(op.name)
    groups = definition.operand_groups(len(op.operands)) if definition is not None else None
    names = [f"#{i}" for i in range(len(op.operands))]
    for name, (start, stop) in (groups or {}).items():
        variadic = dict(definition.operands).get(name) == "*"
        for i in range(start, stop):
            names[i] = f"{name}[{i - start}]" if variadic else name
    return names


def _operand_lines(op, lang, words, operands, results, values_note) -> list[str]:
    meanings = dict(words.operands) if words is not None else {}
    names = operand_names(op)
    lines = [] if op.operands else [NO_OPERANDS.say(lang)]
    for i, value in enumerate(op.operands):
        meaning = meanings.get(names[i].split("[")[0], "")
        fields = dict(i=i, name=names[i], value=value.name, type=str(value.type))
        lines.append(OPERAND_MEANING.say(lang, meaning=meaning, **fields) if meaning else OPERAND.say(lang, **fields))
        if operands is not None and i < len(operands):
            lines.append("  " + _value_text(operands[i], lang))
    meaning = words.results.strip() if words is not None else ""
    for i, value in enumerate(op.results):
        fields = dict(i=i, value=value.name, type=str(value.type))
        lines.append(RESULT_MEANING.say(lang, meaning=meaning, **fields) if meaning else RESULT.say(lang, **fields))
        if results is not None and i < len(results):
            lines.append("  " + _value_text(results[i], lang))
    if values_note:
        lines += [values_note] if isinstance(values_note, str) else list(values_note)
    return lines


def _value_text(value: Any, lang: str) -> str:
    if isinstance(value, tuple) or (getattr(value, "dtype", None) is None and not np.isscalar(value)):
        return VALUE.say(lang, value=type(value).__name__)
    array = np.asarray(value)
    if array.size <= SMALL_VALUE:
        return VALUE.say(lang, value=np.array2string(array, separator=", ", precision=4).replace("\n", ""))
    flat = array.reshape(-1)
    if array.dtype.kind in "biuf":
        return VALUE_SUMMARY.say(lang, count=array.size, low=flat.min(), high=flat.max())
    return VALUE.say(lang, value=np.array2string(array, separator=", ", precision=4, threshold=SMALL_VALUE)
                     .replace("\n", ""))


def _attribute_lines(op, lang, words) -> list[str]:
    meanings = dict(words.attributes) if words is not None else {}
    lines = []
    for line, decoded in attribute_lines(op, lang, meanings):
        lines.append(line)
        lines += ["  " + d for d in decoded]
    return lines or [NO_ATTRIBUTES.say(lang)]


def _provenance_lines(op, lang, at, result, operands, results, process, peer_values):
    lines = []
    if results is not None and result < len(results) and _element(results[result], at) is not None:
        lines.append(ELEMENT_VALUE.say(lang, result=result, index=list(at), value=_element(results[result], at)))
    if not has_provenance(op.name):  # said in the student's language, not as the engine's English error
        return None, lines + [(NOTHING_TO_TRACE if not op.operands else NO_FAMILY).say(lang, op=op.name)]
    try:
        found = provenance(op, at, result=result, operands=operands, results=results, process=process,
                           peer_values=peer_values)
    except ValuesNeeded:
        return None, lines + [VALUES_NEEDED.say(lang, op=op.name)]
    except HlodbgError as why:  # a ProvenanceError, or a value that cannot be read (an elided constant)
        return None, lines + [NO_PROVENANCE.say(lang, reason=why.message if hasattr(why, "message") else str(why))]
    if found.steps:
        lines.append(STEPS.say(lang))
        lines += ["  " + line for line in _shortened(found.lines(lang), lang)]
    names = operand_names(op)
    lines.append(SOURCES.say(lang) if found.sources else NO_SOURCES.say(lang))
    for s in found.sources[:SHOWN_SOURCES]:
        value = _source_value(s, operands, process, peer_values)
        fields = dict(role=s.role.say(lang), operand=s.operand, name=names[s.operand] if s.operand < len(names) else "",
                      index=list(s.index))
        if s.device is not None and s.device != process:
            fields["replica"], fields["partition"] = s.device.replica_id, s.device.partition_id
            phrase = SOURCE_DEVICE if value is None else SOURCE_DEVICE_VALUE
        else:
            phrase = SOURCE if value is None else SOURCE_VALUE
        lines.append("  " + (phrase.say(lang, value=value, **fields) if value is not None else phrase.say(lang, **fields)))
    if len(found.sources) > SHOWN_SOURCES:
        lines.append("  " + MORE_SOURCES.say(lang, count=len(found.sources) - SHOWN_SOURCES))
    return found, lines


def _shortened(steps: list[str], lang: str) -> list[str]:
    """The first steps and the last two (the conclusion), the ones between counted."""
    if len(steps) <= SHOWN_STEPS:
        return steps
    head, tail = steps[:SHOWN_STEPS - 3], steps[-2:]
    return head + [MORE_STEPS.say(lang, count=len(steps) - len(head) - len(tail))] + tail


def _element(value: Any, index: tuple) -> Any:
    array = np.asarray(value)
    return array[index] if array.ndim == len(index) else None


def _source_value(s, operands, process, peer_values) -> Optional[Any]:
    values = operands
    if s.device is not None and s.device != process:
        if peer_values is None:
            return None
        try:
            values = peer_values(s.device)[0]
        except (KeyError, LookupError, ProvenanceError):
            return None
    if values is None or s.operand >= len(values):
        return None
    return _element(values[s.operand], tuple(s.index))


__all__ = ["Explanation", "Section", "explain_op", "operand_names"]
