"""Finding breakpoint hits in a session's recorded time, forward and backward, and counting them.

Time in a run is a sequence of points: event q starting (`(q, 1, 0)`) and event e finishing
(`(ends[e] + 1, 0, j)`, j its place in the completion list), so ops that open frames finish
after everything they ran. Breakpoints on ops are checked when the op starts, breakpoints that
look at results when it finishes; a breakpoint's ledger remembers where it was met, so hit
numbers count the whole run whichever way the session moved.
"""
from __future__ import annotations

import bisect
from typing import Optional

from .breakpoints import Breakpoint
from ..ir.errors import HlodbgError
from .session_views import Hit, View
from .trace import Trace


class BreakpointScanning:
    """Mixed into Session: needs `_main`, `_ledgers`, `_names` and `_lookup`."""

    def _scan_forward(self, view: View, p: int, to: int, breakpoints, extra_ops) -> Optional[tuple[int, list[Hit]]]:
        """The first breakpoint hit in the recorded time after event p started, up to event `to`."""
        if not breakpoints and not extra_ops:
            return None
        before = [bp for bp in breakpoints if not bp.after and bp.ops]
        after = [bp for bp in breakpoints if bp.after]
        for kind, index, time in points_forward(view.trace, p, to):
            if kind == "start":
                hits = self._hits_at_start(view, index, before, extra_ops, time)
                if hits:
                    return index, hits
            elif after:
                hits = self._hits_at_end(view, index, after, time)
                if hits:
                    return view.trace.ends[index] + 1, hits
        return None

    def _scan_backward(self, view: View, p: int, to: int, breakpoints) -> Optional[tuple[int, list[Hit]]]:
        if not breakpoints:
            return None
        before = [bp for bp in breakpoints if not bp.after and bp.ops]
        after = [bp for bp in breakpoints if bp.after]
        for kind, index, time in points_backward(view.trace, p, to):
            if kind == "start":
                hits = self._hits_at_start(view, index, before, frozenset(), time)
                if hits:
                    return index, hits
            elif after and view.trace.ends[index] + 1 < p:
                hits = self._hits_at_end(view, index, after, time)
                if hits:
                    return view.trace.ends[index] + 1, hits
        return None

    def _hits_at_start(self, view: View, e: int, before, extra_ops, time, operands=None) -> list[Hit]:
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

    def _hits_at_end(self, view: View, e: int, after, time) -> list[Hit]:
        trace = view.trace
        op = trace.ops[e]
        if not op.results:
            return []
        hits = []
        for bp in after:
            if bp.ops and op not in bp.ops:
                continue
            hit = self._met(view, bp, e, time, None, True)
            if hit is not None:
                hits.append(hit)
        return hits

    def _test(self, view: View, bp: Breakpoint, e: int, operands, at_end: bool) -> bool:
        """Whether `bp`'s own test (a value test or expression) holds at event e; a test that
        fails to evaluate does not hold."""
        if bp.test is None:
            return True
        try:
            names = self._names(view, e, include_results=at_end, operands=operands)
            return bool(bp.test(names, self._lookup_at(view, e, at_end)))
        except HlodbgError:
            return False

    def _lookup_at(self, view: View, e: int, at_end: bool):
        return lambda name: self._lookup(view, e, "%" + name, include_own=at_end)

    def _met(self, view: View, bp: Breakpoint, e: int, time: tuple, operands, at_end: bool) -> Optional[Hit]:
        """The hit if `bp` stops at event e; None if it is not met there, ignored or its
        condition is false. `hit` counts the times the op and test were met, condition aside."""
        if not self._test(view, bp, e, operands, at_end):
            return None
        number = self._hit_number(bp, time)
        ledger = self._ledgers[bp.id]
        if ledger[0] <= time:
            ledger[1].append(time)
            ledger[0] = time + (1,)
        if number <= bp.ignore:
            return None
        if bp.condition_test is not None:
            try:
                names = self._names(view, e, include_results=at_end, operands=operands, hit=number)
                if not bp.condition_test(names, self._lookup_at(view, e, at_end)):
                    return None
            except HlodbgError:
                return None
        return Hit(bp, e, at_end, number)

    def _hit_number(self, bp: Breakpoint, time: tuple) -> int:
        """1 + the number of times bp was met before `time` in the run (its ledger remembers the
        times it was met and how far the run has been checked for it)."""
        ledger = self._ledgers.get(bp.id)
        if ledger is None:
            ledger = self._ledgers[bp.id] = [(-1,), []]
        if ledger[0] < time:
            trace = self._main.trace
            begin = ledger[0][0] - 1 if ledger[0][0] > 0 else -1
            for kind, index, point in points_forward(trace, begin, min(time[0], len(trace))):
                if point < ledger[0]:
                    continue
                if point >= time:
                    break
                if kind == "start":
                    met = not bp.after and trace.ops[index] in bp.ops and \
                        self._test(self._main, bp, index, None, False)
                else:
                    op = trace.ops[index]
                    met = bp.after and bool(op.results) and (not bp.ops or op in bp.ops) and \
                        self._test(self._main, bp, index, None, True)
                if met:
                    ledger[1].append(point)
                ledger[0] = point + (1,)
            ledger[0] = max(ledger[0], time)
        return bisect.bisect_left(ledger[1], time) + 1


def points_forward(trace: Trace, p: int, to: int):
    """Recorded time after event p started, up to event `to` starting: ("end", e, time) when e
    finished, ("start", q, time) when q started; in time order."""
    ends, completed = trace.ends, trace.completed
    j = trace.first_completion_from(p) if p >= 0 else 0
    n = len(trace)
    for q in range(p + 1, to + 1):
        while j < len(completed) and ends[completed[j]] < q:
            e = completed[j]
            yield "end", e, (ends[e] + 1, 0, j)
            j += 1
        if q < n:
            yield "start", q, (q, 1, 0)


def points_backward(trace: Trace, p: int, to: int):
    """Recorded time before event p started, back to event `to` starting, newest first."""
    ends, completed = trace.ends, trace.completed
    j = trace.first_completion_from(p) - 1
    for q in range(p - 1, to - 1, -1):
        while j >= 0 and ends[completed[j]] >= q:
            e = completed[j]
            yield "end", e, (ends[e] + 1, 0, j)
            j -= 1
        yield "start", q, (q, 1, 0)
