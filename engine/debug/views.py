"""Navigating recordings: a View (the run, or one op's bodies replayed for display), the events
of its trace, and per-op statistics."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..ir.core import Operation
from ..ir.errors import HlodbgError
from ..ir.locations import describe as describe_location
from .breakpoints import BreakpointError
from .budget import nbytes
from .recording import Execution
from .stops import op_label
from .summary import ValueSummary
from .trace import FrameRecord, Trace
from .values import ValueStore, replay_frame_of


class View:
    """One navigable recording: the run itself, or one op's bodies replayed for display."""

    def __init__(self, store: ValueStore, execution: Optional[Execution], base: Optional[int] = None,
                 parent: Optional["View"] = None, note: str = ""):
        self.store = store
        self.trace: Trace = store.trace
        self.execution = execution
        self.base = base
        self.parent = parent
        self.note = note
        self.position = 0

    @property
    def done(self) -> bool:
        return self.execution is None or self.execution.done

    @property
    def end(self) -> int:
        return len(self.trace)



class EventView:
    """One event of the trace: an op instance, its frame, loop iterations, inputs and outputs."""

    def __init__(self, view: View, index: int):
        trace = view.trace
        if not 0 <= index < len(trace):
            raise BreakpointError(f"event {index} does not exist: the trace holds {len(trace)} events")
        self._view = view
        self.id = index
        self.op: Operation = trace.ops[index]
        self.frame: FrameRecord = trace.frames[index]

    @property
    def done(self) -> bool:
        return self._view.trace.done(self.id)

    @property
    def completion_key(self) -> tuple[int, int]:
        """Sorts events by when they finished: after the last event inside them, inner first."""
        return (self._view.trace.ends[self.id], -self.id)

    @property
    def iteration(self) -> Optional[int]:
        its = self.iterations
        return its[-1] if its else None

    @property
    def iterations(self) -> tuple[int, ...]:
        return self._view.trace.enclosing_iterations(self.id)

    @property
    def seconds(self) -> float:
        return self._view.trace.seconds(self.id)

    @property
    def inputs(self) -> list:
        trace, store = self._view.trace, self._view.store
        return [store.value(trace.operand_ref(self.id, k)) for k in range(len(self.op.operands))]

    @property
    def outputs(self) -> list:
        trace = self._view.trace
        if not trace.done(self.id) or not self.op.results:
            return []
        return as_list(self._view.store.output(self.id), len(self.op.results))

    @property
    def bytes(self) -> int:
        return sum(nbytes(o) for o in self.outputs)

    @property
    def line(self) -> Optional[int]:
        return self.op.pos.line if self.op.pos is not None else None

    @property
    def producer(self) -> str:
        return describe_location(self.op.location)

    def describe(self) -> str:
        its = self.iterations
        loop = f" (iteration {', '.join(map(str, its))})" if its and self.frame.iteration is None else ""
        line = f" line {self.line}" if self.line else ""
        return f"[{self.id}] {self.frame.describe()}{loop}: {op_label(self.op)}{line}"

    def __repr__(self) -> str:
        return f"<Event {self.describe()}>"


class OpStatistics:
    """An op's runs so far in a view: count, total time, bytes of its last results and their
    summary (`summary_of(event, k)`, the session's cached summaries)."""

    def __init__(self, view: View, op: Operation, summary_of: Callable[[int, int], ValueSummary]):
        self._view = view
        self._summary_of = summary_of
        self.op = op
        self.events: list[int] = []
        self.seconds = 0.0

    @property
    def count(self) -> int:
        return len(self.events)

    @property
    def last(self) -> int:
        return self.events[-1]

    def event(self, index: int) -> EventView:
        return EventView(self._view, index)

    def summary(self, event: int, index: int) -> ValueSummary:
        return self._summary_of(event, index)

    @property
    def bytes(self) -> int:
        return self.event(self.last).bytes

    @property
    def summaries(self) -> list[ValueSummary]:
        event = self.event(self.last)
        return [self._summary_of(self.last, k) for k in range(len(event.outputs))]

    @property
    def nan(self) -> int:
        return sum(s.nan for s in self.summaries)

    @property
    def inf(self) -> int:
        return sum(s.inf for s in self.summaries)



def as_list(out: Any, count: int) -> list:
    return [out] if count == 1 else list(out)


def same_outputs(a: Any, b: Any) -> bool:
    a_list = a if isinstance(a, list) else [a]
    b_list = b if isinstance(b, list) else [b]
    return len(a_list) == len(b_list) and all(
        np.asarray(x).shape == np.asarray(y).shape and np.asarray(x).tobytes() == np.asarray(y).tobytes()
        for x, y in zip(a_list, b_list))


def vectorised_note(trace: Trace, frame: FrameRecord) -> str:
    args = frame.args or []
    shapes = {tuple(np.shape(a)) for a in args}
    declared = [str(v.type) for v in frame.block.arguments]
    shape = next(iter(shapes)) if len(shapes) == 1 else None
    count = int(np.prod(shape)) if shape else 1
    owner = trace.ops[frame.owner].name
    return (f"this {owner} body ran once on whole arrays: {count} pair(s) at once"
            f" (arguments of shape {shape if shape is not None else sorted(shapes)}; the body declares "
            f"{', '.join(declared)})")




def expanded_view(view: View, event: int, recorder: Any, at_end: bool = False) -> Optional[View]:
    """The view of `event`'s op replayed with its bodies run as regions on whole arrays, by
    `recorder` (a fresh RecordingInterpreter with its own store), for an op the run computed
    without running its body as a region (a reducer applied with numpy); None when the replay
    fails or runs no body."""
    trace, store = view.trace, view.store
    op, frame = trace.ops[event], trace.frames[event]
    operands = [store.value(trace.ref(frame, v)) for v in op.operands]
    env = {v: store.value(trace.ref(frame, v)) for v in store.free_values(op)}
    recorder.expand_bodies = True
    step = recorder.step_for(op)
    recorder.frame = replay_frame_of(trace, frame, env)
    try:
        with np.errstate(all="ignore"):
            replayed = step.evaluator(step.call, *operands)
    except HlodbgError:
        return None
    detail_store = recorder.store
    if not detail_store.trace.ops:
        return None
    same = same_outputs(replayed, store.output(event))
    calls = len(detail_store.trace.frame_records)
    note = (f"{op.name}'s body replayed as a region for display: {calls} call(s), each on whole arrays "
            f"(all pairs at once). The run itself applied the body's single op with numpy; "
            + ("the replay's results are identical." if same else "the replay rounds differently from the run (values here may differ in the last bits)."))
    detail = View(detail_store, None, base=event, parent=view, note=note)
    detail.position = len(detail.trace) - 1 if at_end else 0
    return detail


__all__ = ["EventView", "OpStatistics", "View", "as_list", "expanded_view", "same_outputs", "vectorised_note"]
