"""A session's timeline: the views it navigates, recorded time as typed points, and finding and
counting breakpoint hits in it, forward and backward.

Time in a run is a sequence of points (TimePoint): event q starting (`TimePoint.start(q)`) and
event e finishing (`TimePoint.finish(trace, e, j)`, at ends[e] + 1 with j its place in the
completion list), so ops that open frames finish after everything they ran. Breakpoints on ops
are checked when the op starts, breakpoints that look at results when it finishes; a
breakpoint's Ledger remembers where it was met, so hit numbers count the whole run whichever way
the session moved.
"""
from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Optional, Sequence

from ..ir.errors import HlodbgError
from .breakpoints import Breakpoint, surely_finite
from .expressions import NotComputedHere
from .stops import Hit
from .trace import Trace
from .views import View


class TimePoint(NamedTuple):
    """A point of recorded time; points compare in time order. `phase` 1 is event `event`
    starting; phase 0 is the completions that happen just before it, the `completion`-th of the
    trace's completion list (-1: before any of them)."""

    event: int
    phase: int
    completion: int

    @classmethod
    def start(cls, event: int) -> "TimePoint":
        return cls(event, 1, 0)

    @classmethod
    def finish(cls, trace: Trace, event: int, completion: int) -> "TimePoint":
        return cls(trace.ends[event] + 1, 0, completion)

    @classmethod
    def before(cls, event: int) -> "TimePoint":
        """Before anything that happens at `event`: its start and the completions just before."""
        return cls(event, 0, -1)

    def just_after(self) -> tuple:
        """A bound between this point and the next one (longer tuples sort after their prefix)."""
        return (*self, 1)


BEFORE_ALL_TIME = (-1,)


class TimeList:
    """TimePoints in time order, appended at the end, kept as three arrays: an op breakpoint with
    a condition is met at every iteration of a loop (8 + 1 + 8 bytes a point, not a tuple)."""

    __slots__ = ("_events", "_phases", "_completions", "_last")

    def __init__(self) -> None:
        self._events, self._phases, self._completions = array("q"), array("b"), array("q")
        self._last: Optional[TimePoint] = None

    def append(self, time: TimePoint) -> None:
        self._events.append(time.event)
        self._phases.append(time.phase)
        self._completions.append(time.completion)
        self._last = time

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, i: int) -> TimePoint:
        return TimePoint(self._events[i], self._phases[i], self._completions[i])

    def count_before(self, time: tuple) -> int:
        """How many points come before `time`."""
        if self._last is None or self._last < time:
            return len(self._events)  # the usual case while recording: met only before now
        return bisect.bisect_left(self, time)


@dataclass
class Ledger:
    """Where a breakpoint was met, in time order, and how far the run was checked for it
    (`checked_until`, exclusive)."""

    checked_until: tuple = BEFORE_ALL_TIME
    met: TimeList = field(default_factory=TimeList)


# The session's own names for values at an event: (view, event, include_results, operands, hit)
# -> names for breakpoint tests, and (view, event, name, include_own) -> one value.
NamesAt = Callable[..., dict]
LookupAt = Callable[[View, int, str, bool], Any]


class Timeline:
    """The views a session navigates (`main`, the run; `view`, where the cursor is: the run or
    an op's replayed bodies) and the breakpoint ledgers of the run."""

    def __init__(self, names: NamesAt, lookup: LookupAt, reach: Optional[Callable[[tuple], frozenset]] = None,
                 constant: Callable[[Any], bool] = lambda op: False):
        self._names = names
        self._lookup = lookup
        self._reach_of = reach
        # Whether an op's value is folded from the program's constants alone (no run computes it):
        # NaN/Inf value breakpoints look at what the run computes, not at a JAX program's NaN fill
        # values or a reduction's -inf start, which every such program holds.
        self._constant = constant
        self._reach: dict[int, Optional[frozenset]] = {}
        self.main: Optional[View] = None
        self.view: Optional[View] = None
        self.ledgers: dict[int, Ledger] = {}

    def reset(self, main: View) -> None:
        """A new run: its view in front, no breakpoint counted yet."""
        self.main = self.view = main
        self.ledgers.clear()

    @property
    def in_replay(self) -> bool:
        """Whether the cursor is inside an op's bodies replayed for display."""
        return self.view is not self.main

    def scan_forward(self, view: View, p: int, to: int, breakpoints, extra_ops) -> Optional[tuple[int, list[Hit]]]:
        """The first breakpoint hit in the recorded time after event p started, up to event `to`."""
        if not breakpoints and not extra_ops:
            return None
        before = [bp for bp in breakpoints if not bp.after and bp.ops]
        after = [bp for bp in breakpoints if bp.after]
        for kind, index, time in points_forward(view.trace, p, to):
            if kind == "start":
                hits = self.hits_at_start(view, index, before, extra_ops, time)
                if hits:
                    return index, hits
            elif after:
                hits = self.hits_at_end(view, index, after, time)
                if hits:
                    return view.trace.ends[index] + 1, hits
        return None

    def scan_backward(self, view: View, p: int, to: int, breakpoints) -> Optional[tuple[int, list[Hit]]]:
        if not breakpoints:
            return None
        before = [bp for bp in breakpoints if not bp.after and bp.ops]
        after = [bp for bp in breakpoints if bp.after]
        for kind, index, time in points_backward(view.trace, p, to):
            if kind == "start":
                hits = self.hits_at_start(view, index, before, frozenset(), time)
                if hits:
                    return index, hits
            elif after and view.trace.ends[index] + 1 < p:
                hits = self.hits_at_end(view, index, after, time)
                if hits:
                    return view.trace.ends[index] + 1, hits
        return None

    def hits_at_start(self, view: View, e: int, before, extra_ops, time, operands=None) -> list[Hit]:
        op = view.trace.ops[e]
        hits = []
        for bp in before:
            if op in bp.ops:
                hit = self._met(view, bp, e, time, operands, False)
                if hit is not None:
                    hits.append(hit)
        if op in extra_ops:
            hits.append(Hit(None, e, False))
        return hits

    def hits_at_end(self, view: View, e: int, after, time) -> list[Hit]:
        trace = view.trace
        op = trace.ops[e]
        if not op.results:
            return []
        hits = []
        for bp in after:
            reach = self.reach(bp)
            if reach is not None and op not in reach:
                continue
            hit = self._met(view, bp, e, time, None, True)
            if hit is not None:
                hits.append(hit)
        return hits

    def reach(self, bp: Breakpoint) -> Optional[frozenset]:
        """The ops `bp` can be met at (None: any op): its own ops, or for an expression whose
        every evaluation fetches its SSA values, the ops where all of them are visible (at any
        other op the lookup fails and the expression does not hold)."""
        if bp.ops:
            return bp.ops
        expression = bp.expression
        if expression is None or not expression.strict or not expression.values or self._reach_of is None:
            return None
        if bp.id not in self._reach:
            self._reach[bp.id] = self._reach_of(expression.values)
        return self._reach[bp.id]

    def watch_plan(self, after) -> tuple[Optional[frozenset], bool]:
        """How the recording loop picks the outputs to test `after` (breakpoints looking at
        results) on: (ops always tested, or None for every op; whether any other op whose output
        breakpoints.surely_finite does not clear is tested too, for NaN/Inf breakpoints)."""
        watched: set = set()
        screen = False
        for bp in after:
            reach = self.reach(bp)
            if reach is not None:
                watched |= reach
            elif bp.nonfinite_only:
                screen = True
            else:
                return None, False
        return frozenset(watched), screen

    def _test(self, view: View, bp: Breakpoint, e: int, operands, at_end: bool) -> bool:
        """Whether `bp`'s own test (a value test or expression) holds at event e; it does not
        where a value it names is not computed. Any other failure to evaluate is raised."""
        if bp.test is None:
            return True
        if bp.nonfinite_only and at_end and (self._constant(view.trace.ops[e]) or surely_finite(view.store.output(e))):
            return False
        try:
            names = self._names(view, e, include_results=at_end, operands=operands)
            return bool(bp.test(names, self._lookup_at(view, e, at_end)))
        except NotComputedHere:
            return False

    def _holds(self, view: View, bp: Breakpoint, e: int, at_end: bool) -> bool:
        """`_test` for counting hits: a failure counts as not met (the scan that reaches it says so)."""
        try:
            return self._test(view, bp, e, None, at_end)
        except HlodbgError:
            return False

    @staticmethod
    def _failed(bp: Breakpoint, what: str, error: HlodbgError, e: int, at_end: bool) -> Optional[Hit]:
        """The stop for `bp`'s `what` ("test" or "condition") failing to evaluate at event e: the
        first failure stops the run and says why; later ones say nothing more (the breakpoint
        keeps the reason, and its note shows it)."""
        if bp.failure:
            return None
        message = getattr(error, "message", None) or str(error)
        bp.failure = f"its {what} could not be evaluated: {message}"
        bp.note = f"{bp.note}; " if bp.note else ""
        bp.note += f"{bp.failure} (event {e}); not tested again until it is changed"
        return Hit(bp, e, at_end, 0, failure=bp.failure)

    def _lookup_at(self, view: View, e: int, at_end: bool):
        return lambda name: self._lookup(view, e, "%" + name, at_end)  # the last: include_own

    def _met(self, view: View, bp: Breakpoint, e: int, time: TimePoint, operands, at_end: bool) -> Optional[Hit]:
        """The hit if `bp` stops at event e; None if it is not met there, ignored or its
        condition is false. `hit` counts the times the op and test were met, condition aside."""
        if bp.failure:
            return None  # said once already (Timeline._failed)
        try:
            if not self._test(view, bp, e, operands, at_end):
                return None
        except HlodbgError as error:
            return self._failed(bp, "test", error, e, at_end)
        number = self.hit_number(bp, time)
        ledger = self.ledgers[bp.id]
        if ledger.checked_until <= time:
            ledger.met.append(time)
            ledger.checked_until = time.just_after()
        if number <= bp.ignore:
            return None
        if bp.condition_test is not None:
            try:
                names = self._names(view, e, include_results=at_end, operands=operands, hit=number)
                if not bp.condition_test(names, self._lookup_at(view, e, at_end)):
                    return None
            except NotComputedHere:
                return None
            except HlodbgError as error:
                return self._failed(bp, "condition", error, e, at_end)
        return Hit(bp, e, at_end, number)

    def arm_gate(self, gate: Any, view: View, pause_at: float, after_event: Optional[int],
                 breakpoints: Sequence[Breakpoint], extra_ops: frozenset) -> tuple[list, list]:
        """Set the recorder's `gate` for a run of `view` that parks at `pause_at`, after
        `after_event` finishes, or where `breakpoints` (and a run_to's `extra_ops`) are met:
        (the list the hits that park it are added to, the ledgers carried along it)."""
        gate.reset()
        gate.pause_at = pause_at
        hits: list[Hit] = []
        before = [bp for bp in breakpoints if not bp.after and bp.ops]
        after = [bp for bp in breakpoints if bp.after]
        carried = self.ledgers_at_frontier(breakpoints) if view is self.main else []
        reached = self.reached
        stop_ops = frozenset().union(*(bp.ops for bp in before)) | extra_ops
        if stop_ops:
            gate.stop_ops = stop_ops

            def check_before(e: int, operands: list) -> bool:
                time = TimePoint.start(e)
                reached(carried, time)
                found = self.hits_at_start(view, e, before, extra_ops, time, operands)
                hits.extend(found)
                return bool(found)

            gate.check_before = check_before
        if after or after_event is not None:
            trace = view.trace
            completed = trace.completed

            def check_after(e: int) -> bool:
                if after:
                    time = TimePoint.finish(trace, e, len(completed) - 1)
                    reached(carried, time)
                    found = self.hits_at_end(view, e, after, time)
                    hits.extend(found)
                    if found:
                        return True
                return e == after_event

            gate.check_after = check_after
            if after_event is None:
                watched, screen = self.watch_plan(after)
                if watched is not None:
                    gate.watched, gate.skip_output = watched, surely_finite if screen else None
        return hits, carried

    def ledgers_at_frontier(self, breakpoints) -> list[Ledger]:
        """The ledgers of `breakpoints` checked up to the end of the recorded run (a short gap
        since the run last parked is checked now). The recording loop then asks about every point
        where these breakpoints can be met (Gate), so they go on being checked as it runs and a
        hit far into a long run needs no scan of the run to be numbered."""
        trace = self.main.trace
        frontier = TimePoint(len(trace), 0, len(trace.completed))
        recent = TimePoint.before(len(trace) - 1) if len(trace) else BEFORE_ALL_TIME
        carried = []
        for bp in breakpoints:
            ledger = self.ledgers.get(bp.id)
            if ledger is None:
                ledger = self.ledgers[bp.id] = Ledger()
            if ledger.checked_until >= recent or not len(trace):
                self.hit_number(bp, frontier)
                carried.append(ledger)
        return carried

    @staticmethod
    def reached(carried: list[Ledger], time: TimePoint) -> None:
        """The recording loop is at `time`: every earlier point was looked at."""
        for ledger in carried:
            if ledger.checked_until < time:
                ledger.checked_until = time

    @staticmethod
    def carry_ledgers(trace: Trace, carried: list[Ledger], parked: bool) -> None:
        """The recording loop looked at every point up to the run's current end: when `parked`,
        all before the last event starts (the park comes first), else everything."""
        if parked:
            frontier = TimePoint.start(len(trace) - 1)
        else:
            frontier = TimePoint(len(trace), 0, len(trace.completed))
        Timeline.reached(carried, frontier)

    def hit_number(self, bp: Breakpoint, time: TimePoint) -> int:
        """1 + the number of times bp was met before `time` in the run (its ledger remembers the
        times it was met and how far the run has been checked for it)."""
        ledger = self.ledgers.get(bp.id)
        if ledger is None:
            ledger = self.ledgers[bp.id] = Ledger()
        if ledger.checked_until < time:
            reach = self.reach(bp)
            main = self.main
            trace = main.trace
            checked = ledger.checked_until
            begin = checked[0] - 1 if checked[0] > 0 else -1
            for kind, index, point in points_forward(trace, begin, min(time.event, len(trace))):
                if point < ledger.checked_until:
                    continue
                if point >= time:
                    break
                if kind == "start":
                    met = not bp.after and trace.ops[index] in bp.ops and self._holds(main, bp, index, False)
                else:
                    op = trace.ops[index]
                    met = bp.after and bool(op.results) and (reach is None or op in reach) and \
                        self._holds(main, bp, index, True)
                if met:
                    ledger.met.append(point)
                ledger.checked_until = point.just_after()
            ledger.checked_until = max(ledger.checked_until, time)
        return ledger.met.count_before(time) + 1


def points_forward(trace: Trace, p: int, to: int):
    """Recorded time after event p started, up to event `to` starting: ("end", e, time) when e
    finished, ("start", q, time) when q started; in time order."""
    ends, completed = trace.ends, trace.completed
    j = trace.first_completion_from(p) if p >= 0 else 0
    n = len(trace)
    for q in range(p + 1, to + 1):
        while j < len(completed) and ends[completed[j]] < q:
            e = completed[j]
            yield "end", e, TimePoint(ends[e] + 1, 0, j)
            j += 1
        if q < n:
            yield "start", q, TimePoint(q, 1, 0)


def points_backward(trace: Trace, p: int, to: int):
    """Recorded time before event p started, back to event `to` starting, newest first."""
    ends, completed = trace.ends, trace.completed
    j = trace.first_completion_from(p) - 1
    for q in range(p - 1, to - 1, -1):
        while j >= 0 and ends[completed[j]] >= q:
            e = completed[j]
            yield "end", e, TimePoint(ends[e] + 1, 0, j)
            j -= 1
        yield "start", q, TimePoint(q, 1, 0)


__all__ = ["BEFORE_ALL_TIME", "Ledger", "TimePoint", "Timeline", "points_backward", "points_forward"]
