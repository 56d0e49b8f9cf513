"""What the widgets show after each move: plain data gathered in the session's thread.

The session is driven from one thread (its recording runs in a greenlet bound to it), so the
controller collects everything a redraw needs — values, summaries, frames — there, and the UI
thread only reads these snapshots.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from hlodbg.engine.debug.summary import ValueSummary
from hlodbg.engine.ir.core import Operation


@dataclass(frozen=True)
class StorageView:
    """How the device holds a value: its layout (a TPU's tiled one, or row-major on the CPU), where
    that layout came from and the bytes it takes. Built in the session thread, read by the
    inspector's physical view."""

    target: str  # "tpu-v5e", "cpu"
    layout: Any  # hlodbg.engine.machine.layout.Layout
    source: str  # "given", "option", "default" (inferred by hlodbg: approximate), "" on the CPU
    shape: tuple[int, ...]
    dtype: Any  # numpy dtype
    logical_bytes: int
    physical_bytes: int

    @property
    def tiled(self) -> bool:
        return bool(self.layout.tiles)

    @property
    def waste(self) -> float:
        return self.physical_bytes / self.logical_bytes if self.logical_bytes else 1.0


@dataclass(frozen=True)
class ValueOrigin:
    """Which op instance a shown value belongs to, and as which of its results or operands: what
    the provenance view asks about when the element cursor is on the value."""

    op: Operation
    event: int  # the op instance, in the trace of the session that ran it
    kind: str  # "result" or "operand"
    position: int  # which result / operand (flat)
    device: Optional[int] = None  # on a grid: whose values (None: the focused device's)


@dataclass(frozen=True)
class ValueView:
    """One value for the tensor inspector."""

    label: str  # "%5", "operand 1: %3", "result 0"
    type_text: str  # "tensor<4x8xf32>"
    value: Any  # numpy array (0-d for scalars), tuple of values, Token, or None when not computed
    summary: Optional[ValueSummary] = None
    previous: Any = None  # the same value one loop iteration earlier, when there is one
    where: str = ""  # e.g. "event 41, iteration 3 of while %r"
    storage: Optional[StorageView] = None  # the device's layout of it (a static tensor of the program)
    origin: Optional[ValueOrigin] = None  # the op instance it is a result or operand of


@dataclass(frozen=True)
class FrameView:
    function: str
    description: str  # "while.body #3", "call @update", ...
    op_text: str  # "%s = stablehlo.sqrt"
    line: Optional[int]
    producer: str
    note: str = ""  # what to know about the frame (a body replayed or run on whole arrays); long


def short_note(note: str, limit: int = 60) -> str:
    """The first clause of a frame's note, for one line of the frames pane and the console (the
    whole note is one `:note` away)."""
    head = note.split(":", 1)[0].strip()
    return head if len(head) <= limit else head[: limit - 1] + "…"


@dataclass(frozen=True)
class GridCellView:
    """One device in the grid view: where it is and its side of the op being shown."""

    device: int
    replica: int
    partition: int
    focused: bool
    position: int
    op_text: str  # the op it is about to run
    before: str = ""  # summary of the shown op's operands on this device
    after: str = ""  # summary of its results
    group: tuple = ()  # devices of its process group (collectives)
    sends_to: Optional[int] = None
    receives_from: Optional[int] = None
    waiting: bool = False  # at a collective its group has not all reached
    coordinates: str = ""  # where it sits on the Shardy mesh: "x=1 y=0"
    memory: str = ""  # device memory in use at its op ("HBM 1.2 MiB"), once the memory profile is ready
    shard: str = ""  # the part of the shown op's result its mhlo.sharding gives this device ("[0:4, 8:16]")


@dataclass(frozen=True)
class BufferView:
    name: str  # "%3", "@_where:%3" in a callee
    type_text: str
    layout: str  # "{1,0:T(8,128)} default", "" on the CPU
    logical_bytes: int
    physical_bytes: int


@dataclass(frozen=True)
class MemoryView:
    """The focused device's memory at the current op (engine/run/memory_profile.py's profile)."""

    device: str  # "device 0", "device 3 (replica 1, partition 1)" on a grid
    target: str
    in_use: int  # physical bytes live now
    logical: int  # their logical bytes
    capacity: Optional[int]  # the device's memory (a TPU's HBM; this machine's RAM on the CPU)
    capacity_label: str  # "16 GiB HBM of tpu-v5e"
    peak: int
    peak_where: str  # "%3 = stablehlo.select in @_where (gpt_tiny.mlir:266)"
    buffers: list[BufferView] = field(default_factory=list)  # live now, largest first
    where: str = ""  # the op the figures are at
    kind: str = "mem"  # "HBM": the memory's short name (Backend.device_memory), "mem" for this machine's
    on_accelerator: bool = False  # an accelerator's own memory, which the status bar shows
    # Bytes live at every position of the entry function (FunctionMemory.timeline, shared, not
    # copied) and the position the run is at in it: the pane's chart and its cursor.
    curve: Any = None
    cursor: Optional[int] = None


@dataclass(frozen=True)
class MarkedTensor:
    """One tensor of the provenance view: a value with some of its elements marked."""

    label: str  # "operand 1: %idx", "result %r"
    type_text: str
    value: Any  # numpy array, or None when there is no value to show (the op has not run)
    marks: dict = field(default_factory=dict)  # element index -> role (its words, in the pane's language)
    selected: Optional[tuple] = None  # the element under the inspector's cursor


@dataclass(frozen=True)
class ProvenanceState:
    """Where one element comes from (or which result elements it reaches), for the provenance view."""

    title: str
    tensors: list[MarkedTensor] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # the index arithmetic with its numbers
    error: str = ""  # why there is no answer, in one line


@dataclass(frozen=True)
class ExplanationState:
    """The explain pane's content: an op's explanation in sections, or why there is none."""

    title: str
    sections: list[tuple[str, list[str]]] = field(default_factory=list)  # (heading, lines)
    error: str = ""


# --- the session state: one frozen view per concern -------------------------------------------------
# A move makes a new SessionState of new views; a change that touches one concern (the memory
# profile arriving) replaces only that view, so a pane that shows only other concerns is not
# redrawn (MainScreen compares the views a pane declares it shows by identity).


@dataclass(frozen=True)
class WhereView:
    """Where the run is: the event about to run, its op and the frames down to it."""

    position: int  # event about to run
    recorded: int  # events recorded so far
    finished: bool
    op: Optional[Operation]  # the op about to run (None at the end)
    frames: tuple[FrameView, ...] = ()
    changed: frozenset = frozenset()  # ops whose values the last move computed
    total: Optional[int] = None  # the run's events, once it has been seen to finish


@dataclass(frozen=True)
class StepValues:
    """The values around the op about to run: its operands, and what the last step made."""

    operands: tuple[ValueView, ...] = ()
    results: tuple[ValueView, ...] = ()


@dataclass(frozen=True)
class StopView:
    """Why the last move stopped and what it said."""

    reason: str = ""  # "breakpoint", "interrupted", "focus", ...
    note: str = ""  # the frame's note or the move's message
    error: str = ""  # the run's error, rendered
    message: str = ""  # what the move said of its stop (a "memory" stop's reason and ways on)


@dataclass(frozen=True)
class MachineView:
    """What the devices run on and which of them is in focus, for the status bar."""

    device: str = ""  # which device is in focus
    target: str = ""  # the machine every device runs on: "cpu", "tpu-v5e"
    numerics: str = ""  # the rounding in force on it (Backend.numerics_mode): excess precision or per-op rounding


@dataclass(frozen=True)
class RecordingView:
    """What the recording holds (values kept to step back, and the history of events) and may hold
    before the run stops with "memory" (engine/debug/values.py), not the device's memory."""

    used: int = 0
    budget: int = 0


@dataclass(frozen=True)
class MarksView:
    """Breakpoints and watches."""

    breakpoints: tuple = ()  # the focused device's Breakpoints, unresolved ones too
    watches: tuple[tuple[str, Any], ...] = ()  # (expression, value or error text)


@dataclass(frozen=True)
class DevicesView:
    """The grid's devices (a cell per device) and the op whose values the cells show."""

    cells: tuple[GridCellView, ...] = ()
    shape: tuple[int, int] = (1, 1)  # rows x columns to draw the devices in
    title: str = ""  # which op's values the cells show
    op: Optional[Operation] = None  # that op


@dataclass(frozen=True)
class CaughtView:
    """A breakpoint that looked at results (nan, inf, an expression) stopped after the op that made
    them: that op, its line, its results and its operands, shown instead of the op about to run."""

    op: Operation
    title: str
    values: tuple[ValueView, ...] = ()


@dataclass(frozen=True)
class MemoryState:
    """The memory pane's figures at the current op; None while the profile is computed (a worker
    does it) or when it cannot be counted (`error` says why)."""

    figures: Optional[MemoryView] = None
    error: str = ""

    @property
    def waiting(self) -> str:
        """Why there are no figures."""
        return f"cannot be counted: {self.error}" if self.error else "computing the memory profile…"


@dataclass(frozen=True)
class SessionState:
    """Everything the panes show after a move, one view per concern. Built once in the session
    thread and never changed: a change makes a new state (dataclasses.replace) with new views for
    what changed and the same ones for the rest."""

    where: WhereView
    values: StepValues = StepValues()
    stop: StopView = StopView()
    machine: MachineView = MachineView()
    recording: RecordingView = RecordingView()
    marks: MarksView = MarksView()
    memory: MemoryState = MemoryState()
    devices: Optional[DevicesView] = None  # on a grid
    caught: Optional[CaughtView] = None  # at a breakpoint on results

    @property
    def shown_op(self) -> Optional[Operation]:
        """The op the panes centre on: at a value breakpoint the op that made the value, else the
        op about to run."""
        return self.caught.op if self.caught is not None else self.where.op

    # Shorthands for what is asked most (tests, commands): the views hold them.
    @property
    def position(self) -> int:
        return self.where.position

    @property
    def recorded(self) -> int:
        return self.where.recorded

    @property
    def finished(self) -> bool:
        return self.where.finished

    @property
    def op(self) -> Optional[Operation]:
        return self.where.op

    @property
    def frames(self) -> tuple[FrameView, ...]:
        return self.where.frames

    @property
    def operands(self) -> tuple[ValueView, ...]:
        return self.values.operands

    @property
    def results(self) -> tuple[ValueView, ...]:
        return self.values.results

    @property
    def stop_reason(self) -> str:
        return self.stop.reason

    @property
    def note(self) -> str:
        return self.stop.note

    @property
    def error(self) -> str:
        return self.stop.error

    @property
    def breakpoints(self) -> tuple:
        return self.marks.breakpoints


__all__ = ["ExplanationState", "MarkedTensor", "ProvenanceState", "ValueOrigin", "BufferView", "MemoryView", "StorageView",
           "ValueView", "FrameView", "GridCellView", "CaughtView", "DevicesView", "MachineView", "MarksView", "MemoryState",
           "RecordingView", "SessionState", "StepValues", "StopView", "WhereView", "short_note"]
