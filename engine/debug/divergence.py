"""Where two targets part: one program run on two backends, compared op by op (`hlodbg diff`,
`--break-on diverge`, `hlodbg export --overlay divergence --against TARGET`).

The runs go in lockstep. Each is a plain Interpreter in a greenlet of its own, with a listener
that hands every finished op instance (op, frames, operands, outputs) to the coordinator and
waits; the coordinator compares the two sides' outputs (difference.py), then lets both go on.
So at any moment memory holds what the two runs hold anyway (their live values) and one op's
outputs, never a history: per op the report keeps a few numbers (runs, divergent runs, worst
errors), and in full (summaries, operand differences, numerics notes) only two instances, the
first divergence and the worst. Running the reference first would have to keep its values (all
of them, or a window a long program outruns); lockstep needs neither, and stopping at the first
divergence stops both runs there.

What is aligned: every op instance outside reducer bodies (frames of kind "body": reduce, sort,
scatter, map ... bodies), counted per instance along its frames (iteration k of a while). How a
backend applies a body (one vectorised call, a tree schedule) is its own affair; the owning
op's results are compared. Runs that take different branches or trip counts are compared up to
where they part (`DiffReport.parted`), which comes after the predicate that decided it diverged.

Event numbers and instance counts are those of the `target` run as a debugging session numbers
them (one event per op and one per block terminator, in the order they start, as scan.py), so
`--break-on diverge` can stop a session of that run at the op instance found here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import greenlet

from ..ir.core import Module, Operation
from ..ir.errors import ExecutionError, HlodbgError
from ..ir.locations import describe as describe_location
from ..machine.backend import Backend
from ..run.interpreter import Frame, Interpreter, Listener, describe_frame
from .breakpoints import Breakpoint, BreakpointError
from .difference import DEFAULT_ATOL, DEFAULT_RTOL, Difference, combine, compare_values
from .stops import op_label
from .summary import ValueSummary, summarize


@dataclass(frozen=True)
class FrameStep:
    """One frame of an op instance's stack, kept without the frame's values."""

    function: str
    kind: str
    iteration: Optional[int]
    owner: Optional[Operation]  # the while/if/call that opened it

    def describe(self, first: bool) -> str:
        text = describe_frame(self.function, self.kind, self.iteration, with_function=first or self.kind == "function")
        if self.owner is not None and self.kind != "function" and self.owner.pos is not None:
            text += f" (the {self.owner.name.split('.')[-1]} at line {self.owner.pos.line})"
        return text


@dataclass
class Place:
    """One op instance of the target run."""

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
        return " > ".join(step.describe(i == 0) for i, step in enumerate(self.frames))


@dataclass
class Divergence:
    """An op instance whose results differ between the targets, in detail."""

    place: Place
    results: list[Difference]  # per result
    target_summaries: list[Optional[ValueSummary]]
    against_summaries: list[Optional[ValueSummary]]
    operands: list[Difference]  # per operand: how far apart the targets' inputs already were
    operand_summaries: list[Optional[ValueSummary]]  # the target run's operands
    notes: list[str]  # the backends' numerics notes for this op

    @property
    def total(self) -> Difference:
        return combine(self.results)

    @property
    def operands_agree(self) -> bool:
        """No operand beyond the tolerance: this op is where the targets part."""
        return not any(d.diverged for d in self.operands)

    @property
    def operands_identical(self) -> bool:
        return all(d.max_abs == 0 for d in self.operands)


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
    rtol: float
    atol: float
    compared: int = 0  # op instances compared
    diverged: int = 0  # of them, beyond the tolerance
    first: Optional[Divergence] = None
    worst: Optional[Divergence] = None
    ops: dict = field(default_factory=dict)  # Operation -> OpTally
    parted: str = ""  # where the runs stopped running the same ops, if they did
    finished: bool = False  # both runs reached the end (not stopped at the first divergence)
    results: Optional[list] = None  # the target run's results, when it finished
    printed: list = field(default_factory=list)  # what the target run's interpreter.print ops printed

    @property
    def diverged_ops(self) -> int:
        return sum(1 for tally in self.ops.values() if tally.diverged)


class _Stopped(BaseException):
    """Unwinds a run the comparison no longer needs: not an Exception, so no evaluator turns it
    into an op failure."""


_STOP = object()


@dataclass
class _Step:
    """A finished op instance, as one side hands it over."""

    op: Operation
    frames: tuple[FrameStep, ...]
    event: int
    instance: int
    operands: list
    outputs: list


class _Side(Listener):
    """One target's run, parked after every compared op instance until the coordinator resumes it."""

    def __init__(self, name: str, module: Module, backend: Backend, entry: str, args: Sequence[Any]):
        self.name = name
        self.interpreter = Interpreter(module, backend=backend, listeners=[self])
        self.entry = entry
        self.args = list(args)
        self.home: Optional[greenlet.greenlet] = None  # the coordinator
        self.waiting: Optional[greenlet.greenlet] = None  # where the run parked
        self.run = greenlet.greenlet(self._main)
        self.events = 0
        self.instances: dict[Operation, int] = {}
        self._hooks: dict[bool, tuple] = {}

    def resume(self) -> Any:
        """Let the run go to its next compared op: a _Step, or ("done", results) / ("error", e)."""
        self.home = greenlet.getcurrent()
        self.run.parent = self.home
        parked, self.waiting = self.waiting, None
        return (parked or self.run).switch()

    def stop(self) -> None:
        """Unwind a parked run."""
        if self.waiting is not None:
            self.home = greenlet.getcurrent()
            self.run.parent = self.home
            parked, self.waiting = self.waiting, None
            parked.switch(_STOP)

    def _main(self) -> Any:
        try:
            return ("done", self.interpreter.run(self.entry, self.args))
        except _Stopped:
            return ("stopped", None)
        except HlodbgError as e:
            return ("error", e)

    def observe(self, frame: Frame):
        in_body = _in_body(frame)
        hooks = self._hooks.get(in_body)
        if hooks is None:
            hooks = self._hooks[in_body] = self._make_hooks(in_body)
        return hooks

    def _make_hooks(self, in_body: bool):
        running: list[int] = []  # event numbers of the ops whose evaluators are running
        instances = self.instances

        def before_op(frame: Frame, op: Operation, operands: list) -> None:
            running.append(self.events)
            self.events += 1

        def finished(frame: Frame, op: Operation, operands: list, out: Any) -> None:
            event = running.pop()
            instance = instances[op] = instances.get(op, 0) + 1
            count = len(op.results)
            if in_body or not count:
                return
            outputs = [out] if count == 1 else list(out)
            self.waiting = greenlet.getcurrent()
            reply = self.home.switch(_Step(op, _frames(frame), event, instance, list(operands), outputs))
            if reply is _STOP:
                raise _Stopped()

        def returning(frame: Frame, op: Operation, values: list) -> None:
            self.events += 1

        return before_op, finished, returning


def _in_body(frame: Optional[Frame]) -> bool:
    while frame is not None:
        if frame.kind == "body":
            return True
        frame = frame.parent
    return False


def _frames(frame: Optional[Frame]) -> tuple[FrameStep, ...]:
    steps = []
    while frame is not None:
        steps.append(FrameStep(frame.function.sym_name, frame.kind, frame.iteration, frame.owner))
        frame = frame.parent
    return tuple(reversed(steps))


def numerics_notes(backends: Sequence[Backend], op: Operation) -> list[str]:
    """What the backends say about how they compute `op` (Backend.numerics_notes; a backend
    without it says nothing), each note once."""
    notes: list[str] = []
    for backend in backends:
        notes_of = getattr(backend, "numerics_notes", None)
        for note in (notes_of(op) if callable(notes_of) else []):
            if note not in notes:
                notes.append(note)
    return notes


@dataclass
class DivergeSpec:
    """`diverge [against TARGET] [rtol=R] [atol=A]`: a breakpoint at the first divergence."""

    against: Optional[str] = None  # None: cpu for a TPU run, tpu-v5e for a CPU run
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL


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
    """The target a run is compared with when none is named: the CPU for an accelerator, the
    default TPU for the CPU."""
    return "tpu-v5e" if target.describe() == "cpu" else "cpu"


def divergence_breakpoint(session: Any, wanted: DivergeSpec, condition: Optional[str] = None) -> Breakpoint:
    """A session-only breakpoint right after the first op instance of `session`'s run whose
    results differ from a run on `wanted.against` (found now, by running both to there). When
    nothing differs, the breakpoint stays and never stops; its note says why."""
    from ..machine.targets import backend_for

    if condition:
        raise BreakpointError("a diverge breakpoint takes no condition: it stops at one op instance")
    grid = session.grid
    if grid is not None and grid.num_replicas * grid.num_partitions > 1:
        raise BreakpointError(f"diverge compares runs of one process; this session is one device of a "
                              f"{grid.num_replicas}x{grid.num_partitions} grid (run 'hlodbg diff' on the program instead)")
    against = backend_for(wanted.against or default_against(session.backend))
    report = compare_runs(session.module, session.args, session.backend, against, session.entry,
                          wanted.rtol, wanted.atol, stop_at_first=True)
    spec = f"{DIVERGE} against {report.against}"
    table = session.breakpoints
    first = report.first
    if first is None:
        why = report.parted or f"no op diverges from {report.against} ({report.compared} op instance(s) compared)"
        return table.add_found(spec, DIVERGE, frozenset(), note=why)
    place = first.place
    note = (f"first divergence from {report.against}: {place.label}, run {place.instance} (event {place.event}), "
            f"max rel {first.total.max_rel:.3g}")
    # The op's one instance: the event this run gives it (an op breakpoint on that event).
    return table.add_found(spec, DIVERGE, frozenset([place.op]), condition=f"event == {place.event}", after=True,
                           note=note)


def compare_runs(module: Module, args: Sequence[Any], target: Backend, against: Backend, entry: str = "main",
                 rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL, stop_at_first: bool = False) -> DiffReport:
    """Run `entry` on `args` on both backends in lockstep and compare every op instance.

    With `stop_at_first`, both runs stop at the first op instance beyond the tolerance. A run
    that fails raises its error, naming the target it failed on."""
    if rtol < 0 or atol < 0:
        raise ExecutionError(f"tolerances must be 0 or more (rtol {rtol}, atol {atol})")
    report = DiffReport(target.describe(), against.describe(), rtol, atol)
    ours = _Side(report.target, module, target, entry, args)
    report.printed = ours.interpreter.printed
    theirs = _Side(report.against, module, against, entry, args)
    if ours.name == theirs.name:  # one target against itself (other options): name them by role
        ours.name, theirs.name = f"{report.target} (target)", f"{report.against} (against)"
    try:
        mine, other = ours.resume(), theirs.resume()
        while isinstance(mine, _Step) and isinstance(other, _Step):
            if mine.op is not other.op or _path(mine) != _path(other):
                report.parted = (f"the runs part after {report.compared} op instance(s): {ours.name} runs "
                                 f"{_where(mine)} while {theirs.name} runs {_where(other)}")
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


def _path(step: _Step) -> tuple:
    return tuple((f.function, f.kind, f.iteration) for f in step.frames)


def _where(step: _Step) -> str:
    text = op_label(step.op)
    if step.op.pos is not None:
        text += f" (line {step.op.pos.line})"
    return f"{text} in {' > '.join(f.describe(i == 0) for i, f in enumerate(step.frames))}"


def _finish(report: DiffReport, ours: _Side, mine: Any, theirs: _Side, other: Any) -> None:
    """Both runs ended, or one did while the other went on."""
    for side, message in ((ours, mine), (theirs, other)):
        if isinstance(message, tuple) and message[0] == "error":
            error: HlodbgError = message[1]
            raise ExecutionError(f"the {side.name} run failed: {error.message}", error.pos, error.notes) from error
    if isinstance(mine, _Step) or isinstance(other, _Step):
        running, ended, step = (ours, theirs, mine) if isinstance(mine, _Step) else (theirs, ours, other)
        report.parted = (f"the runs part after {report.compared} op instance(s): {ended.name} finished while "
                         f"{running.name} runs {_where(step)}")
        return
    report.finished = True
    report.results = mine[1]


def _compare(report: DiffReport, mine: _Step, other: _Step, backends: tuple) -> None:
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
    if report.first is None or worst is None or total.max_rel > worst.total.max_rel:
        detail = _detail(mine, other, differences, backends, rtol, atol)
        if report.first is None:
            report.first = detail
        report.worst = detail


def _detail(mine: _Step, other: _Step, differences: list[Difference], backends: tuple, rtol: float,
            atol: float) -> Divergence:
    place = Place(mine.op, mine.event, mine.instance, mine.frames)
    operands = [compare_values(a, b, rtol, atol) for a, b in zip(mine.operands, other.operands)]
    return Divergence(place, differences, [_summary(v) for v in mine.outputs], [_summary(v) for v in other.outputs],
                      operands, [_summary(v) for v in mine.operands], numerics_notes(backends, mine.op))


def _summary(value: Any) -> Optional[ValueSummary]:
    try:
        return summarize(value)
    except TypeError:
        return None


__all__ = ["DIVERGE", "DiffReport", "DivergeSpec", "Divergence", "FrameStep", "OpTally", "Place", "compare_runs",
           "default_against", "divergence_breakpoint", "numerics_notes", "parse_diverge_spec"]
