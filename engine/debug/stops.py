"""Plain values a session answers with: why and where a control stopped, the breakpoints it met,
the lines of the stack."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Optional

from ..ir.core import Operation
from ..ir.locations import describe as describe_location
from ..run.interpreter import describe_frame
from .breakpoints import Breakpoint

# step: a move ended where it meant to; breakpoint: a hit stopped it; start / end: the run's
# first op / past its last; error: the run failed there; interrupted: interrupt() stopped it;
# goto: a jump to an event; memory: the recording's history filled its budget (values.py).
StopReason = Literal["step", "breakpoint", "end", "error", "start", "interrupted", "goto", "memory"]


@dataclass
class Hit:
    """A breakpoint met at an event (`breakpoint` None: the op `run_to` was heading for)."""

    breakpoint: Optional[Breakpoint]
    event: int
    after: bool  # met when the event finished (it looked at results), not before it started
    hit: int = 0  # how many times this breakpoint has been met up to here (1 = first)
    # Not a hit but the breakpoint's test or condition failing to evaluate here: why (it stops
    # the run once, so that a condition that can never hold is not silently never met).
    failure: str = ""

    def describe(self) -> str:
        if self.breakpoint is None:
            return f"reached event {self.event}"
        when = "after" if self.after else "before"
        if self.failure:
            return f"breakpoint {self.breakpoint.describe()} {when} event {self.event}: {self.failure}"
        return f"breakpoint {self.breakpoint.describe()} (hit {self.hit}) {when} event {self.event}"


@dataclass
class Stop:
    """Why and where a control stopped."""

    reason: StopReason
    position: int
    hits: tuple[Hit, ...] = ()
    message: str = ""

    def __str__(self) -> str:
        text = f"{self.reason} at {self.position}"
        if self.hits:
            text += ": " + "; ".join(h.describe() for h in self.hits)
        if self.message:
            text += f" ({self.message})"
        return text


@dataclass
class FrameInfo:
    """One line of the stack: a frame and the op it is at."""

    function: str
    kind: str  # function | while.cond | while.body | if.true | case.1 | body | replay ...
    iteration: Optional[int]
    op: Optional[Operation]  # the current op in this frame (the op that opened the next one)
    event: Optional[int]
    note: str = ""
    # The view (views.View: the run, or an op's replayed body) whose trace `event` indexes, for a
    # front end that shows this frame's values (the DAP server's scopes of an outer frame).
    view: Any = field(default=None, repr=False, compare=False)

    @property
    def line(self) -> Optional[int]:
        return self.op.pos.line if self.op is not None and self.op.pos is not None else None

    @property
    def producer(self) -> str:
        return describe_location(self.op.location) if self.op is not None else ""

    def frame_text(self) -> str:
        """`@f while.body #3 (note)`: the frame alone."""
        return describe_frame(self.function, self.kind, self.iteration, note=self.note)

    def describe(self) -> str:
        where = describe_frame(self.function, self.kind, self.iteration)
        if self.op is not None:
            where += f"  {op_label(self.op)}"
            if self.line is not None:
                where += f"  line {self.line}"
            if self.producer:
                where += f"  [{self.producer}]"
        return where


def op_label(op: Operation) -> str:
    names = ", ".join(v.name for v in op.results)
    return f"{names} = {op.name}" if names else op.name


__all__ = ["FrameInfo", "Hit", "Stop", "StopReason", "op_label"]
