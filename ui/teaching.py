"""What the provenance view and the explain pane show, worked out from one op instance's values.

The controller gathers an op instance's values in the session thread (`OpValues`, engine/debug/op_values.py,
as `hlodbg explain` does); the functions
here turn them into the panes' snapshots and only read them, so the screen runs them in a thread
of their own (`SessionController.work_out`): tracing an element back through a big op, or
explaining one, never holds up the session or the drawing.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from hlodbg.engine.debug.op_values import OpValues
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.ir.phrases import Phrase
from hlodbg.engine.ops.provenance import provenance, reach

from .state import ExplanationState, MarkedTensor, ProvenanceState

ELEMENT_COMES_FROM = Phrase("where {value}{index} comes from ({op})")
ELEMENT_REACHES = Phrase("which result elements {value}{index} reaches ({op})")
REACHES_COUNT = Phrase("{value}{index} helps make {count} result element(s): {elements}")
REACHES_NOTHING = Phrase("{value}{index} makes no element of the result")
REACHED = Phrase("result element it reaches")
RESULTS_NOT_RUN = Phrase("the op has not run yet: its result is shown once it has")
ON_DEVICE = Phrase("{label} on device {device}")

LISTED_REACHED = 12  # reached elements written out in the sentence; the rest are counted


def provenance_state(values: OpValues, kind: str, position: int, index: tuple, lang: str) -> ProvenanceState:
    """Where result `position`'s element `index` comes from (kind "result"), or which result
    elements operand `position`'s element `index` reaches (kind "operand")."""
    op = values.op
    label = values.result_labels[position] if kind == "result" else values.operand_labels[position]
    phrase = ELEMENT_COMES_FROM if kind == "result" else ELEMENT_REACHES
    title = phrase.say(lang, value=label, index=element_text(index), op=op.name)
    try:
        if kind == "result":
            return _sources_state(values, position, index, lang, title)
        return _reach_state(values, position, index, lang, title)
    except HlodbgError as e:
        return ProvenanceState(title, error=e.message.splitlines()[0])


def _sources_state(values: OpValues, position: int, index: tuple, lang: str, title: str) -> ProvenanceState:
    answer = provenance(values.op, index, result=position, operands=values.operands, results=values.results,
                        process=values.process, peer_values=values.peer_values)
    tensors = []
    devices = [None] + sorted({s.device for s in answer.sources if s.device not in (None, values.process)},
                              key=lambda p: values.device_names.get(p, 0))
    for device in devices:  # the focused device's operands first, then those of the devices it reads from
        operands = values.operands if device is None else values.peer_values(device)[0]
        for i in range(len(values.op.operands)):
            marks = {}
            for source in answer.sources:
                on_this_device = source.device in (None, values.process) if device is None else source.device == device
                if source.operand == i and on_this_device:
                    marks.setdefault(source.index, source.role.say(lang))
            if device is not None and not marks:
                continue
            label = values.operand_labels[i]
            if device is not None:
                label = ON_DEVICE.say(lang, label=label, device=values.device_names.get(device, device))
            tensors.append(MarkedTensor(label, values.operand_type(i), _value(operands, i), marks))
    tensors.append(MarkedTensor(values.result_labels[position], values.result_type(position),
                                _value(values.results, position), {}, index))
    return ProvenanceState(title, tensors, answer.lines(lang))


def _reach_state(values: OpValues, position: int, index: tuple, lang: str, title: str) -> ProvenanceState:
    reached = reach(values.op, position, index, operands=values.operands, results=values.results,
                    process=values.process, peer_values=values.peer_values, device=values.process)
    label = values.operand_labels[position]
    tensors = [MarkedTensor(label, values.operand_type(position), _value(values.operands, position), {}, index)]
    role = REACHED.say(lang)
    for k in range(len(values.op.results)):
        marks = {r.index: role for r in reached if r.result == k and r.device in (None, values.process)}
        if marks or len(values.op.results) == 1:
            tensors.append(MarkedTensor(values.result_labels[k], values.result_type(k), _value(values.results, k), marks))
    if not reached:
        lines = [REACHES_NOTHING.say(lang, value=label, index=element_text(index))]
    else:
        named = [f"{values.result_labels[r.result]}{element_text(r.index)}" for r in reached[:LISTED_REACHED]]
        more = f", … (+{len(reached) - LISTED_REACHED})" if len(reached) > LISTED_REACHED else ""
        lines = [REACHES_COUNT.say(lang, value=label, index=element_text(index), count=len(reached), elements=", ".join(named) + more)]
    if values.results is None:
        lines.append(RESULTS_NOT_RUN.say(lang))
    return ProvenanceState(title, tensors, lines)


def element_text(index: Sequence[int]) -> str:
    """An element as written after a value's name: `[1, 0, 2]`."""
    return f"[{', '.join(str(i) for i in index)}]"


def _value(values: Optional[list], i: int) -> Any:
    if values is None or i >= len(values):
        return None
    value = values[i]
    return value if isinstance(value, np.ndarray) or np.isscalar(value) else None


def explanation_state(values: OpValues, at: Optional[tuple], result: int, lang: str) -> ExplanationState:
    """The explain pane's content for `values.op` (with `at`: the provenance of that element)."""
    from hlodbg.engine.debug.explain import explain_op  # loads every op family's words: only when asked

    try:
        explanation = explain_op(values.op, lang=lang, operands=values.operands, results=values.results, at=at,
                                 result=result, process=values.process, peer_values=values.peer_values)
    except HlodbgError as e:
        return ExplanationState(values.op.name, error=e.message.splitlines()[0])
    return ExplanationState(explanation.title, [(section.heading, list(section.lines)) for section in explanation.sections])


__all__ = ["explanation_state", "provenance_state"]
