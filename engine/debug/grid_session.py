"""Debugging a grid run: one Session per process, recorded together, stepped with one in focus.

The processes are recorded to the end (or to where the grid run stopped) under the grid
scheduler, so every later move is a cursor move in recorded traces: stepping the focused process
moves the others in lock-step (to the same op instance, when their control flow has it) or
leaves them where they are. Breakpoints are global (every process) or for one device; a continue
stops at the earliest hit of any process — by rendezvous epoch, then event — and focuses it.
"""
from __future__ import annotations

import bisect
from typing import Any, NamedTuple, Optional, Sequence, Union

from ..ir.core import Module, Operation
from ..ir.errors import ExecutionError, HlodbgError
from ..ir.opset import is_collective, process_groups_of
from ..machine.backend import CPU, Backend
from ..machine.process import ProcessId
from ..run.grid import GridError, GridScheduler, ScheduledGrid, grid_shape
from ..run.interpreter import entry_arguments, entry_function
from .breakpoints import BreakpointTable, Resolver
from .budget import argument_bytes, default_budget, default_history_budget, memory_full_message
from .session import Session
from .stops import Stop
from .target import MOVES, DeviceValue, TargetBase, TargetError


class GridSession(TargetBase):
    """A DebugTarget on R x P processes (see target.py)."""

    def __init__(self, module: Module, args: Union[Sequence[Any], dict], entry: str = "main",
                 num_replicas: Optional[int] = None, num_partitions: Optional[int] = None,
                 memory: Optional[int] = None, path: Optional[str] = None, focus: ProcessId = ProcessId(0, 0),
                 lockstep: bool = True, backend: Backend = CPU):
        replicas, partitions = grid_shape(module, num_replicas, num_partitions)
        self.module = module
        self.entry = entry
        self.grid = ScheduledGrid(replicas, partitions)
        self.processes = self.grid.processes()
        if focus not in self.processes:
            raise GridError(f"device {focus} is not on the {replicas}x{partitions} grid")
        function = entry_function(module, entry)
        arguments = {process: entry_arguments(function, args[process] if isinstance(args, dict) else args)
                     for process in self.processes}
        total = memory or default_budget(sum(argument_bytes(values) for values in arguments.values()))
        budget = total // len(self.processes)
        # Without --memory each device's history may take its share of a quarter of RAM, as one
        # process's may take all of it; with --memory everything counts against that.
        history = default_history_budget(len(self.processes)) if memory is None else None
        self.sessions: dict[ProcessId, Session] = {}
        for process, values in arguments.items():
            table = BreakpointTable(Resolver(module, entry, path))
            self.sessions[process] = Session(module, values, entry=entry, memory=budget, breakpoints=table,
                                             history_memory=history,
                                             process=process, grid=self.grid, path=path,
                                             backend=backend.for_device(process, self.grid))
        self.focus = focus
        self.lockstep = lockstep
        self.error: Optional[HlodbgError] = None
        self._partner_tables: dict[int, dict] = {}
        self._record()
        self._occurrences = {p: _occurrence_index(s) for p, s in self.sessions.items()}
        self._epochs = {p: _epochs(s) for p, s in self.sessions.items()}

    # --- recording ---------------------------------------------------------------------------
    def _record(self) -> None:
        tasks = {p: (lambda s=s: s.continue_()) for p, s in self.sessions.items()}
        try:
            GridScheduler(self.grid, tasks).run()
        except HlodbgError as e:
            self.error = e  # the traces up to the failure stay steppable
        for session in self.sessions.values():
            if session._recorder.history_full:
                # Recording every device up front: a device whose history filled its share of the
                # budget ends the recording there (its peers then wait for it at a collective).
                self.error = ExecutionError(f"device {session.process}: {memory_full_message(session.timeline.main.store)}")
                break
        for session in self.sessions.values():
            execution = session.execution
            if not execution.done:
                # Parked at a rendezvous that will never complete: the recording ends there.
                execution.fail(self.error)
            session.restart()

    # --- where we are ---------------------------------------------------------------------------
    def positions(self) -> dict[ProcessId, int]:
        return {p: s.position for p, s in self.sessions.items()}

    # --- moves ----------------------------------------------------------------------------------
    def move(self, name: str, *args) -> Stop:
        """A move of the focused process (target.MOVES); continue_ and reverse_continue stop at the
        earliest breakpoint hit of any process."""
        if name not in MOVES:
            raise TargetError(f"unknown move '{name}' ({', '.join(MOVES)})")
        if name in ("continue_", "reverse_continue"):
            return self._to_hit(forward=name == "continue_")
        stop = getattr(self.session, name)(*args)
        self._align()
        return stop

    def continue_(self) -> Stop:
        """To the earliest breakpoint hit of any process (focusing it), or every process's end."""
        return self._to_hit(forward=True)

    def reverse_continue(self) -> Stop:
        return self._to_hit(forward=False)

    def _to_hit(self, forward: bool) -> Stop:
        candidates = []
        for process, session in self.sessions.items():
            if process != self.focus and not session.breakpoints.breakpoints:
                continue
            start = session.position
            stop = session.continue_() if forward else session.reverse_continue()
            if stop.reason == "breakpoint":
                epoch = self._epochs[process][min(session.position, len(self._epochs[process]) - 1)]
                candidates.append(((epoch, session.position) if forward else (-epoch, -session.position), process, stop))
            if process != self.focus:
                session.goto(start)  # only looking: the others move when the winner is known
        if candidates:
            _, process, stop = min(candidates, key=lambda c: (c[0], self.device_id(c[1])))
            if process != self.focus:
                self.sessions[process].continue_() if forward else self.sessions[process].reverse_continue()
                self.focus = process
            self._align()
            return stop
        self._align()
        return Stop("end" if forward else "start", self.session.position)

    def _align(self) -> None:
        """Lock-step: every other process to the same op instance as the focused one."""
        if not self.lockstep:
            return
        focus = self.session
        position = focus.position
        trace = focus.trace
        if focus.in_replay:
            return  # a replayed body has no counterpart elsewhere
        if position >= len(trace):
            for process, session in self.sessions.items():
                if process != self.focus:
                    _goto_end(session)
            return
        key = (id(trace.ops[position]), self._occurrences[self.focus].occurrence[position])
        for process, session in self.sessions.items():
            if process == self.focus or session.in_replay:
                continue
            event = self._occurrences[process].event_of.get(key)
            if event is not None and event != session.position:
                session.goto(event)

    def instance(self, process: ProcessId) -> Optional[tuple]:
        """(op, occurrence) the process is about to run, None at its end."""
        session = self.sessions[process]
        if session.in_replay or session.position >= len(session.trace):
            return None
        position = session.position
        return session.trace.ops[position], self._occurrences[process].occurrence[position]

    def waiting(self) -> dict[ProcessId, bool]:
        """Per device: at a collective whose partners have not all reached the same instance."""
        instances = {p: self.instance(p) for p in self.processes}
        out = {}
        for process, here in instances.items():
            if here is None or not is_collective(here[0].name):
                out[process] = False
                continue
            group, sends_to, receives_from = self._partners(here[0], process)
            partners = set(group) | {d for d in (sends_to, receives_from) if d is not None}
            out[process] = any(instances[self.grid.process_of(d)] != here for d in partners if d != self.device_id(process))
        return out

    # --- values on every device -------------------------------------------------------------------
    def latest_event(self, process: ProcessId, op: Operation) -> Optional[int]:
        """The op's last finished run on `process` before its position (events are in order)."""
        session = self.sessions[process]
        events = self._occurrences[process].events_of.get(id(op), [])
        for k in range(bisect.bisect_left(events, session.position) - 1, -1, -1):
            if session.trace.done(events[k]):
                return events[k]
        return None

    def peer_values(self, op: Operation):
        """The op's values on every device that has run it, in the form a provenance question on a
        grid takes them (`provenance(op, at, process=p, peer_values=grid.peer_values(op))`)."""
        from ..ops.collectives_provenance import GridValues

        return GridValues(self.grid, {v.process: (v.inputs, v.outputs) for v in self.values_of(op) if v.outputs},
                          self.module)

    def values_of(self, op: Operation) -> list[DeviceValue]:
        """For each device: the op's latest run up to its position (the running one for the focused
        op itself), with its group and permute partners when the op is a collective."""
        out = []
        for process in self.processes:
            session = self.sessions[process]
            event = None
            if session.position < len(session.trace) and session.trace.ops[session.position] is op:
                event = session.position
            else:
                event = self.latest_event(process, op)
            inputs, outputs = [], []
            if event is not None:
                view = session.event(event)
                inputs = view.inputs
                outputs = view.outputs
            group, sends_to, receives_from = self._partners(op, process)
            out.append(DeviceValue(process, self.device_id(process), event, inputs, outputs, group, sends_to, receives_from))
        return out

    def _partners(self, op: Operation, process: ProcessId):
        """(group devices, device it sends to, device it receives from) of `process` at `op`."""
        if not is_collective(op.name):
            return (), None, None
        table = self._partner_tables.get(id(op))
        if table is None:
            table = self._partner_tables[id(op)] = self._partner_table(op)
        return table.get(process, ((), None, None))

    def _partner_table(self, op: Operation) -> dict:
        from ..ops import collectives

        table = {}
        form = process_groups_of(op.name)
        if form is None:
            return table
        try:
            if form == "pairs":
                pairs = collectives.permute_groups(self.focus, self.grid, op.attributes)
                for source, target in pairs:
                    before = table.get(source, ((), None, None))
                    table[source] = ((), self.device_id(target), before[2])
                    after = table.get(target, ((), None, None))
                    table[target] = ((), after[1], self.device_id(source))
                return table
            groups = collectives.GROUP_FORMS[form](self.focus, self.grid, op.attributes, self.module)
        except ValueError:
            return {}
        for group in groups:
            devices = tuple(self.device_id(p) for p in group)
            for p in group:
                table[p] = (devices, None, None)
        return table


def _goto_end(session: Session) -> None:
    end = len(session.trace)
    if session.position != end and end > 0:
        session.goto(end)


class Occurrences(NamedTuple):
    """Op instances of a recorded trace: the k-th run of an op is the same instance on every
    device whose control flow has it."""

    event_of: dict[tuple, int]  # (id(op), k) -> the event of the op's k-th run
    occurrence: list[int]  # event -> k
    events_of: dict[int, list[int]]  # id(op) -> its events, in order


def _occurrence_index(session: Session) -> Occurrences:
    """The op instances of a session's recorded trace."""
    seen: dict[int, int] = {}
    by_instance: dict[tuple, int] = {}
    occurrence: list[int] = []
    by_op: dict[int, list[int]] = {}
    for e, op in enumerate(session.trace.ops):
        k = seen.get(id(op), 0)
        seen[id(op)] = k + 1
        by_instance[(id(op), k)] = e
        occurrence.append(k)
        by_op.setdefault(id(op), []).append(e)
    return Occurrences(by_instance, occurrence, by_op)


def _epochs(session: Session) -> list[int]:
    """For each event, how many collectives the process finished before it (a shared clock)."""
    out, count = [], 0
    trace = session.trace
    for op in trace.ops:
        out.append(count)
        if is_collective(op.name):
            count += 1
    out.append(count)
    return out


__all__ = ["GridSession"]
