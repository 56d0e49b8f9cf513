"""Where two targets part: one program run on two backends, compared op by op (`hlodbg diff`,
`--break-on diverge`, `hlodbg export --overlay divergence --against TARGET`).

The runs go in lockstep (lockstep.py): each runs in a greenlet of its own and hands every
finished op instance (device, op, frames, operands, outputs) to the coordinator and waits; the
coordinator compares the two sides' outputs (difference.py), then lets both go on.
So at any moment memory holds what the two runs hold anyway (their live values) and one op's
outputs, never a history: per op the report keeps a few numbers (runs, divergent runs, worst
errors), and in full (summaries, operand differences, numerics notes) only a few instances:
the first divergence of each device and the worst. Running the reference first would have to keep its values (all
of them, or a window a long program outruns); lockstep needs neither, and stopping at the first
divergence stops both runs there.

What is aligned: every op instance outside reducer bodies (frames of kind "body": reduce, sort,
scatter, map ... bodies), counted per instance along its frames (iteration k of a while). How a
backend applies a body (one vectorised call, a tree schedule) is its own affair; the owning
op's results are compared. Runs that take different branches or trip counts are compared up to
where they part (`DiffReport.parted`), which comes after the predicate that decided it diverged.

On a grid every device runs, in the scheduler's fixed order; op instances are compared device
by device, and the report names the first divergence of each device. Event numbers and
instance counts are per device, those of the `target` run as a debugging session numbers them
(one event per op and one per block terminator, in the order they start, as scan.py), so
`--break-on diverge` can stop a session of that run at the op instance found here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

from ..ir.core import Module, Operation
from ..ir.errors import ExecutionError, HlodbgError
from ..ir.locations import describe as describe_location
from ..ir.opset import is_collective
from ..machine.backend import Backend
from ..machine.process import ProcessId
from ..run.deep_stack import run_with_room
from .breakpoints import Breakpoint, BreakpointError, compile_condition
from .difference import DEFAULT_ATOL, DEFAULT_RTOL, XLA_TOLERANCE, Difference, combine, compare_values
from .lockstep import FrameStep, Side, Step, describe_frames
from .stops import op_label
from .summary import ValueSummary, summarize


@dataclass
class Place:
    """One op instance of the target run."""

    process: ProcessId  # the device (ProcessId(0, 0) on one process)
    device: Optional[int]  # its number on a grid; None for one process
    op: Operation
    event: int  # the event a session of the target run gives it
    instance: int  # 1 for the op's first run, k for its k-th
    frames: tuple[FrameStep, ...]  # outermost first

    @property
    def label(self) -> str:
        return op_label(self.op)

    @property
    def line(self) -> Optional[int]:
        return self.op.pos.line if self.op.pos is not None else None

    @property
    def producer(self) -> str:
        return describe_location(self.op.location)

    def describe_frames(self) -> str:
        """`@main > while.body #3 (the while at line 7)`."""
        return describe_frames(self.frames)

    def describe_device(self) -> str:
        """`device 3 (replica 1, partition 1)`, or "" on one process."""
        if self.device is None:
            return ""
        return f"device {self.device} (replica {self.process.replica_id}, partition {self.process.partition_id})"


@dataclass
class Divergence:
    """An op instance whose results differ between the targets, in detail."""

    place: Place
    results: list[Difference]  # per result
    target_summaries: list[Optional[ValueSummary]]
    against_summaries: list[Optional[ValueSummary]]
    # Per operand: how far apart the targets' inputs already were, and the target run's values
    # (None when not looked at: the worst divergence after a device's first).
    operands: Optional[list[Difference]]
    operand_summaries: Optional[list[Optional[ValueSummary]]]
    notes: list[str]  # the backends' numerics notes for this op
    collective: bool = False  # on a grid, a collective: it also reads other devices' values

    @property
    def total(self) -> Difference:
        return combine(self.results)

    @property
    def operands_agree(self) -> bool:
        """No operand beyond the tolerance: this op is where the targets part (unless it is a
        collective, which also reads what other devices hold)."""
        return not any(d.diverged for d in self.operands or ())

    @property
    def operands_identical(self) -> bool:
        return all(d.max_abs == 0 for d in self.operands or ())


@dataclass
class OpTally:
    """What the comparison saw of one op over all its instances."""

    runs: int = 0
    diverged: int = 0
    max_rel: float = 0.0
    max_abs: float = 0.0


@dataclass
class DiffReport:
    target: str
    against: str
    rtol: Optional[float]  # None: XLA's tolerances by element type (difference.py)
    atol: float
    compared: int = 0  # op instances compared
    diverged: int = 0  # of them, beyond the tolerance
    first: Optional[Divergence] = None
    worst: Optional[Divergence] = None
    ops: dict = field(default_factory=dict)  # Operation -> OpTally (over every device)
    first_by_device: dict = field(default_factory=dict)  # ProcessId -> its first Divergence
    devices: int = 1  # of the grid both runs ran on
    partitions: int = 1
    parted: str = ""  # where the runs stopped running the same ops, if they did
    finished: bool = False  # both runs reached the end (not stopped at the first divergence)
    results: Any = None  # the target run's results when it finished ({ProcessId: list} on a grid)
    printed: list = field(default_factory=list)  # what the target run's interpreter.print ops printed

    def device_of(self, process: ProcessId) -> int:
        """A device's number on the grid (replica-major, as the grid numbers them)."""
        return process.replica_id * self.partitions + process.partition_id

    @property
    def diverged_ops(self) -> int:
        return sum(1 for tally in self.ops.values() if tally.diverged)


def numerics_notes(backends: Sequence[Backend], op: Operation, values: Optional[Sequence[Any]] = None) -> list[str]:
    """What the backends say about how they compute `op` (Backend.numerics_notes), each note once;
    with `values` (the operands and results both runs saw), only the reasons that apply to them."""
    notes: list[str] = []
    for backend in backends:
        for note in backend.numerics_notes(op, values):
            if note not in notes:
                notes.append(note)
    return notes


@dataclass
class DivergeSpec:
    """`diverge [against TARGET] [rtol=R] [atol=A]`: a breakpoint at the first divergence."""

    against: Optional[str] = None  # None: cpu for a TPU run, tpu-v5e for a CPU run
    rtol: Optional[float] = None  # None (both): the target's default_tolerances
    atol: Optional[float] = None

    def tolerances(self, *targets: Backend) -> tuple[Optional[float], float]:
        """(rtol, atol) to compare the `targets`' runs with: as given, else their defaults."""
        if self.rtol is None and self.atol is None:
            return default_tolerances(*targets)
        return (self.rtol if self.rtol is not None else DEFAULT_RTOL, self.atol if self.atol is not None else DEFAULT_ATOL)


def default_tolerances(*targets: Backend) -> tuple[Optional[float], float]:
    """(rtol, atol) a comparison of the `targets`' runs uses unless told otherwise: XLA's
    tolerances by element type (difference.py) when XLA computed one side's values (a capture of a
    real run, an xla:* target: the backend's `from_xla`), else DEFAULT_RTOL and DEFAULT_ATOL."""
    if any(target.from_xla for target in targets):
        return XLA_TOLERANCE, 0.0
    return DEFAULT_RTOL, DEFAULT_ATOL


DIVERGE = "diverge"


def parse_diverge_spec(spec: str) -> Optional[DivergeSpec]:
    """The DivergeSpec of a breakpoint spec starting with the word `diverge`, else None."""
    words = spec.split()
    if not words or words[0].lower() != DIVERGE:
        return None
    wanted = DivergeSpec()
    rest = words[1:]
    while rest:
        word = rest.pop(0)
        key, sep, value = word.partition("=")
        if word.lower() == "against" and rest:
            wanted.against = rest.pop(0)
        elif sep and key.lower() in ("rtol", "atol"):
            try:
                number = float(value)
            except ValueError:
                number = -1.0
            if not number >= 0:
                raise BreakpointError(f"{spec!r}: {key} must be a number, 0 or more (got {value!r})")
            setattr(wanted, key.lower(), number)
        else:
            raise BreakpointError(f"cannot read {spec!r} as a breakpoint: expected "
                                  f"'diverge [against TARGET] [rtol=R] [atol=A]', e.g. 'diverge against cpu'")
    return wanted


def default_against(target: Backend) -> str:
    """The target a run is compared with when none is named (Backend.default_against): the CPU
    for an accelerator, the default TPU for the CPU."""
    return target.default_against()


def divergence_breakpoint(session: Any, wanted: DivergeSpec, condition: Optional[str] = None) -> Breakpoint:
    """A session-only breakpoint right after the first op instance of `session`'s run whose
    results differ from a run on `wanted.against` (found now, by running both to there). When
    nothing differs, the breakpoint stays and never stops; its note says why."""
    if condition:
        raise BreakpointError("a diverge breakpoint takes no condition: it stops at one op instance")
    against, ops, event, note = _first_divergence(session, wanted)
    return session.breakpoints.add_found(f"{DIVERGE} against {against}", DIVERGE, ops, condition=event,
                                         after=bool(ops), note=note)


def refresh_divergence_breakpoints(session: Any) -> None:
    """After a restart on new arguments: find each diverge breakpoint's op instance again (the
    breakpoint keeps its number and its place in the table)."""
    for bp in session.breakpoints.breakpoints:
        if bp.kind != DIVERGE:
            continue
        _, bp.ops, bp.condition, bp.note = _first_divergence(session, parse_diverge_spec(bp.spec))
        bp.after = bool(bp.ops)
        bp.condition_test = compile_condition(bp.condition) if bp.condition else None


def _first_divergence(session: Any, wanted: DivergeSpec) -> tuple[str, frozenset, Optional[str], str]:
    """(the against target's name, the op, the condition naming its one instance, a note) of
    the session run's first divergence; no op and no condition when nothing diverges."""
    from ..machine.targets import backend_for

    grid = session.grid
    if grid is not None and grid.num_replicas * grid.num_partitions > 1:
        raise BreakpointError(f"diverge compares runs of one process; this session is one device of a "
                              f"{grid.num_replicas}x{grid.num_partitions} grid (run 'hlodbg diff' on the program: "
                              f"it names the first divergence of every device)")
    against = backend_for(wanted.against or default_against(session.backend))
    rtol, atol = wanted.tolerances(session.backend, against)
    report = compare_runs(session.module, session.args, session.backend, against, session.entry,
                          rtol, atol, stop_at_first=True)
    first = report.first
    if first is None:
        why = report.parted or f"no op diverges from {report.against} ({report.compared} op instance(s) compared)"
        return report.against, frozenset(), None, why
    place = first.place
    note = (f"first divergence from {report.against}: {place.label}, run {place.instance} (event {place.event}), "
            f"max rel {first.total.max_rel:.3g}")
    # The op's one instance: the event this run gives it (an op breakpoint on that event).
    return report.against, frozenset([place.op]), f"event == {place.event}", note


def compare_runs(module: Module, args: Union[Sequence[Any], dict], target: Backend, against: Backend,
                 entry: str = "main", rtol: Optional[float] = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
                 stop_at_first: bool = False, grid: tuple[int, int] = (1, 1)) -> DiffReport:
    """Run `entry` on `args` on both backends in lockstep and compare every op instance.

    `grid` (replicas, partitions): more than one device runs every device of that grid (with
    `args` for all, or {ProcessId: args}). With `stop_at_first`, both runs stop at the first op
    instance beyond the tolerance (`rtol=None`: XLA's tolerances by element type, difference.py).
    A run that fails raises its error, naming the target."""
    if (rtol is not None and rtol < 0) or atol < 0:
        raise ExecutionError(f"tolerances must be 0 or more (rtol {rtol}, atol {atol})")
    # Both runs' greenlets live on one thread with room for the program's deepest calls.
    return run_with_room(module, lambda: _compare_runs(module, args, target, against, entry, rtol, atol,
                                                       stop_at_first, grid))


def _compare_runs(module: Module, args: Union[Sequence[Any], dict], target: Backend, against: Backend,
                  entry: str, rtol: Optional[float], atol: float, stop_at_first: bool,
                  grid: tuple[int, int]) -> DiffReport:
    report = DiffReport(target.describe(), against.describe(), rtol, atol, devices=grid[0] * grid[1], partitions=grid[1])
    ours = Side(report.target, module, target, entry, args, grid)
    theirs = Side(report.against, module, against, entry, args, grid)
    report.printed = ours.printed
    if ours.name == theirs.name:  # one target against itself (other options): name them by role
        ours.name, theirs.name = f"{report.target} (target)", f"{report.against} (against)"
    try:
        mine, other = ours.resume(), theirs.resume()
        while isinstance(mine, Step) and isinstance(other, Step):
            if mine.op is not other.op or mine.path != other.path:
                report.parted = (f"the runs part after {report.compared} op instance(s): {ours.name} runs "
                                 f"{_where(mine, report)} while {theirs.name} runs {_where(other, report)}")
                return report
            _compare(report, mine, other, (target, against))
            if stop_at_first and report.first is not None:
                return report
            mine, other = ours.resume(), theirs.resume()
        _finish(report, ours, mine, theirs, other)
        return report
    finally:
        ours.stop()
        theirs.stop()


def _where(step: Step, report: DiffReport) -> str:
    text = op_label(step.op)
    if step.op.pos is not None:
        text += f" (line {step.op.pos.line})"
    where = f"{text} in {describe_frames(step.frames)}"
    return where if report.devices == 1 else f"{where} on {step.process}"


def _finish(report: DiffReport, ours: Side, mine: Any, theirs: Side, other: Any) -> None:
    """Both runs ended, or one did while the other went on."""
    for side, message in ((ours, mine), (theirs, other)):
        if isinstance(message, tuple) and message[0] == "error":
            error: HlodbgError = message[1]
            raise ExecutionError(f"the {side.name} run failed: {error.message}", error.pos, error.notes) from error
    if isinstance(mine, Step) or isinstance(other, Step):
        running, ended, step = (ours, theirs, mine) if isinstance(mine, Step) else (theirs, ours, other)
        report.parted = (f"the runs part after {report.compared} op instance(s): {ended.name} finished while "
                         f"{running.name} runs {_where(step, report)}")
        return
    report.finished = True
    report.results = mine[1]


def _compare(report: DiffReport, mine: Step, other: Step, backends: tuple) -> None:
    rtol, atol = report.rtol, report.atol
    differences = [compare_values(a, b, rtol, atol) for a, b in zip(mine.outputs, other.outputs)]
    total = combine(differences)
    report.compared += 1
    tally = report.ops.get(mine.op)
    if tally is None:
        tally = report.ops[mine.op] = OpTally()
    tally.runs += 1
    tally.max_rel = max(tally.max_rel, total.max_rel)
    tally.max_abs = max(tally.max_abs, total.max_abs)
    if not total.diverged:
        return
    report.diverged += 1
    tally.diverged += 1
    worst = report.worst
    worse = worst is None or total.max_rel > worst.total.max_rel
    if mine.process not in report.first_by_device:
        detail = _detail(report, mine, other, differences, backends, with_operands=True)
        report.first_by_device[mine.process] = detail
        if report.first is None:
            report.first = detail
        if worse:
            report.worst = detail
    elif worse:
        # The worst so far changes often in a long run: its operands are not looked at (the
        # first divergence is where they matter), which keeps each change to two summaries.
        report.worst = _detail(report, mine, other, differences, backends, with_operands=False)


def _detail(report: DiffReport, mine: Step, other: Step, differences: list[Difference], backends: tuple,
            with_operands: bool) -> Divergence:
    device = None if report.devices == 1 else report.device_of(mine.process)
    place = Place(mine.process, device, mine.op, mine.event, mine.instance, mine.frames)
    operands, operand_summaries = None, None
    if with_operands:
        operands = [compare_values(a, b, report.rtol, report.atol) for a, b in zip(mine.operands, other.operands)]
        operand_summaries = [_summary(v) for v in mine.operands]
    return Divergence(place, differences, [_summary(v) for v in mine.outputs], [_summary(v) for v in other.outputs],
                      operands, operand_summaries,
                      numerics_notes(backends, mine.op, [*mine.operands, *mine.outputs, *other.operands, *other.outputs]),
                      collective=report.devices > 1 and is_collective(mine.op.name))


def _summary(value: Any) -> Optional[ValueSummary]:
    try:
        return summarize(value)
    except TypeError:
        return None


__all__ = ["DIVERGE", "DiffReport", "DivergeSpec", "Divergence", "FrameStep", "OpTally", "Place",
           "compare_runs",
           "default_against", "default_tolerances", "divergence_breakpoint", "numerics_notes", "parse_diverge_spec",
           "refresh_divergence_breakpoints"]
