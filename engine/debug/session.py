"""A debugging session: a cursor in a recorded run that moves forward and back, op by op.

The cursor is an event (an op instance, see trace.py) about to run, like a debugger's current
line; `position == len(trace)` once the program has finished. Going forward runs the program
lazily in a greenlet (recording.py) only as far as needed; going back just moves the
cursor, because every value is recorded (or recomputed, values.py). Each control moves at one
granularity forward and the same backward:

    step / back                next / previous op at this level (calls and regions run whole)
    step_in / back_in          into the call, loop iteration, branch or body (the next / previous
                               op in time, at any depth)
    step_out / back_out        to just after / just before the op that opened this frame
    continue_ / reverse_continue   to the next / previous breakpoint hit
    run_to(op), goto(event), restart()

Forward and backward moves stop early at breakpoints met on the way, as gdb's `next` does.
Which values a position sees by name is scope.py's to say.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from ..ir.core import Module, Operation
from ..ir.errors import ExecutionError, HlodbgError
from ..ir.opset import has_expandable_body
from ..machine.backend import CPU, Backend
from ..machine.process import Grid, ProcessId
from ..run.interpreter import Interpreter, entry_arguments, entry_function
from .breakpoints import Breakpoint, BreakpointError, BreakpointTable, Resolver
from .budget import argument_bytes, memory_full_message
from .expression_bounds import interrupt as interrupt_expressions
from .expressions import ExpressionError, compile_expression
from .recording import NEVER, Execution, RecordingInterpreter, give_back_recorder, take_idle_recorder
from .scan import literal_constant
from .scope import expression_names, lookup_value, ops_seeing, visible_refs
from .stops import FrameInfo, Hit, Stop
from .summary import ValueSummary, summarize
from .timeline import Timeline, TimePoint
from .trace import FrameRecord, ResultRef, Trace
from .values import ValueStore
from .views import EventView, OpStatistics, View, expanded_view, vectorised_note


class Session:
    """Step through one run of `entry` on `args`. Build one with `Program.session()`."""

    def __init__(self, module: Module, args: Sequence[Any], entry: str = "main", memory: Optional[int] = None,
                 breakpoints: Optional[BreakpointTable] = None, backend: Backend = CPU,
                 process: ProcessId = ProcessId(0, 0), grid: Optional[Grid] = None, path: Optional[str] = None,
                 history_memory: Optional[int] = None):
        self.module = module
        self.entry = entry
        self.args = list(args)
        self.budget = memory
        self.history_budget = history_memory  # what its history may hold, when not from `memory` (a grid's device)
        self.backend = backend
        self.process = process
        self.grid = grid
        self.breakpoints = breakpoints if breakpoints is not None else BreakpointTable(Resolver(module, entry, path))
        self._recorder: Optional[RecordingInterpreter] = None
        self._printed: list[str] = []  # the run's `interpreter.print` output (kept past close())
        self.timeline = Timeline(expression_names, lookup_value, lambda names: ops_seeing(module.functions.values(), names),
                                 self._literal)
        self._stats: dict[tuple, ValueSummary] = {}
        # Arguments are checked now, in the caller, not when the run first moves.
        self.args = entry_arguments(entry_function(module, entry), self.args)
        self._start()

    def _literal(self, op: Operation) -> bool:
        """Whether the run's value of `op` is a constant of the program as written (literal_constant)."""
        return self._recorder is not None and literal_constant(self._recorder.plan, op)

    # -- lifecycle ----------------------------------------------------------------------------
    def _interpreter(self) -> Interpreter:
        return Interpreter(self.module, backend=self.backend, process=self.process, grid=self.grid)

    def _start(self) -> None:
        store = ValueStore(self.module, self._interpreter, self.budget, arguments_bytes=argument_bytes(self.args),
                           history_budget=self.history_budget)
        recorder = self._recorder
        if recorder is None and self.grid is None:
            recorder = take_idle_recorder(self.module, self.backend, self.process)
        if recorder is None:
            recorder = RecordingInterpreter(self.module, store, backend=self.backend, process=self.process, grid=self.grid)
        self._recorder = recorder
        self._printed = recorder.printed
        recorder.reset_recording(store)
        execution = Execution(recorder, self.entry, self.args)
        self.timeline.reset(View(store, execution))
        self._stats.clear()
        # The run starts with the first control or question: `continue_()` right away runs
        # straight through without parking at the first op.

    def restart(self, args: Optional[Sequence[Any]] = None) -> Stop:
        """Back to the first op; with `args`, a fresh run on new arguments. Breakpoints stay."""
        if args is None and self.timeline.main.execution.state != "abandoned":
            self.timeline.view = self.timeline.main
            self.timeline.main.position = 0
            return Stop("start", 0)
        self.close()
        if args is not None:
            self.args = list(args)
        self._start()
        if args is not None:
            from .divergence import refresh_divergence_breakpoints

            refresh_divergence_breakpoints(self)  # new arguments may part two targets elsewhere
        return Stop("start", 0)

    def close(self) -> None:
        """Stop the background run (a parked one is unwound); restart() can start another. The
        recorded run stays to be looked at; the recorder, with every op's prepared step, goes to
        the next session of this program (recording.give_back_recorder)."""
        self.timeline.main.execution.abandon()
        recorder = self._recorder
        if recorder is not None and self.grid is None and self.timeline.main.execution.done:
            self._recorder = None
            give_back_recorder(recorder)

    def interrupt(self) -> None:
        """From another thread: make a running control stop before the next op (and an expression
        being evaluated, a `print` or a condition, stop at its next step)."""
        self.timeline.main.execution.interrupt()
        interrupt_expressions()

    @property
    def execution(self) -> Execution:
        """The background run of the program (not of a replayed body)."""
        return self.timeline.main.execution

    @property
    def in_replay(self) -> bool:
        """Whether the cursor is inside an op's bodies replayed for display."""
        return self.timeline.in_replay

    @property
    def printed(self) -> list[str]:
        """What `interpreter.print` ops of this run printed so far, in order."""
        return self._printed

    # -- where we are -------------------------------------------------------------------------
    @property
    def trace(self) -> Trace:
        """The trace being navigated (an expanded op's replay while inside one)."""
        return self.timeline.view.trace

    @property
    def expanded(self) -> Optional[int]:
        """While inside an op's body replayed for display: that op's event in the run."""
        return self.timeline.view.base

    @property
    def position(self) -> int:
        return self.timeline.view.position

    @property
    def finished(self) -> bool:
        return self.timeline.view is self.timeline.main and self.timeline.main.done and self.position >= len(self.timeline.main.trace)

    @property
    def error(self) -> Optional[HlodbgError]:
        return self.timeline.main.execution.error

    @property
    def results(self) -> Optional[list]:
        """The entry function's results once the run has finished."""
        return self.timeline.main.execution.results

    @property
    def op(self) -> Optional[Operation]:
        p = self._here()
        return self.trace.ops[p] if p < len(self.trace) else None

    @property
    def frame(self) -> Optional[FrameRecord]:
        p = self._here()
        trace = self.trace
        if p < len(trace):
            return trace.frames[p]
        return trace.frame_records[0] if trace.frame_records else None

    @property
    def note(self) -> str:
        """What to know about the current frame (a vectorised body, a replayed expansion)."""
        frame = self.frame
        if frame is not None and frame.is_vectorised_body and frame.args:
            return vectorised_note(self.trace, frame)
        return self.timeline.view.note

    def event(self, index: Optional[int] = None) -> "EventView":
        return EventView(self.timeline.view, self.position if index is None else index)

    @property
    def events(self) -> list["EventView"]:
        """Every recorded event (the trace), in the order they started."""
        view = self.timeline.view
        return [EventView(view, i) for i in range(len(view.trace))]

    def events_of(self, op: Operation) -> list["EventView"]:
        view = self.timeline.view
        return [EventView(view, i) for i, o in enumerate(view.trace.ops) if o is op]

    @property
    def stack(self) -> list[FrameInfo]:
        """Frames from the entry function (first) to the current one (last)."""
        out: list[FrameInfo] = []
        view: Optional[View] = self.timeline.view
        position = self._here()
        while view is not None:
            trace = view.trace
            if position < len(trace):
                frame: Optional[FrameRecord] = trace.frames[position]
                event: Optional[int] = position
            else:
                frame, event = (trace.frame_records[0] if trace.frame_records else None), None
            frames = frame.chain() if frame is not None else []
            # Each frame is at the op that opened the next one; the innermost at `event`.
            events = [inner.owner for inner in frames[1:]] + [event]
            chain = [FrameInfo(f.function.sym_name, f.kind, f.iteration, trace.ops[e] if e is not None else None, e,
                               vectorised_note(trace, f) if f.is_vectorised_body and f.args else "", view)
                     for f, e in zip(frames, events)]
            if view.parent is not None:
                chain[0].note = view.note
            out = chain + out
            if view.parent is None:
                break
            position = view.base
            view = view.parent
        return out

    def __repr__(self) -> str:
        """Where the cursor is, in one line (asking does not start the run)."""
        view = self.timeline.view
        if self.finished:
            where = "finished" if self.error is None else f"failed: {self.error}"
        elif view.position < len(view.trace):
            where = "at " + EventView(view, view.position).describe()
            if self.error is not None:
                where += " (the run failed)"
        else:
            where = "not started"
        return f"<Session of @{self.entry}: {where}>"

    def where(self) -> str:
        lines = [("  " * i) + info.describe() + (f"\n{'  ' * i}  note: {info.note}" if info.note else "")
                 for i, info in enumerate(self.stack)]
        if self.finished:
            lines.append("finished" if self.error is None else f"failed: {self.error}")
        return "\n".join(lines)

    # -- values -------------------------------------------------------------------------------
    def value(self, name: str) -> Any:
        """The value of `%name` as the current op sees it (inner frames first)."""
        return lookup_value(self.timeline.view, self._here(), name, include_own=False)

    def values(self) -> dict[str, Any]:
        """Every value visible at the current op, by SSA name (inner frames hide outer names)."""
        view, position = self.timeline.view, self._here()
        out: dict[str, Any] = {}
        for name, ref in visible_refs(view, position, include_own=False).items():
            out[name] = view.store.value(ref)
        return out

    def operands(self, event: Optional[int] = None) -> list:
        return self.event(event).inputs

    def outputs(self, event: Optional[int] = None) -> list:
        return self.event(event).outputs

    def evaluate(self, text: str) -> Any:
        """An expression over the values visible here (`%5`, `iteration`, numpy functions)."""
        try:
            expression = compile_expression(text)
        except ExpressionError as e:
            raise BreakpointError(e.message, e.text, e.column) from None
        view, p = self.timeline.view, self._here()
        names = expression_names(view, p, include_results=False)
        return expression.evaluate(names, lambda n: lookup_value(view, p, "%" + n, include_own=False))

    def watch(self, text: str) -> None:
        self.breakpoints.add_watch(text)

    def pin(self, name: Optional[str] = None) -> int:
        """Keep the value of `name` (`%x` as seen here; the current op's first result without
        one) recorded however far the run goes, so that reading it never recomputes it; it
        counts against `--memory`. Returns the event whose value is pinned."""
        event = self._pinned_event(name)
        self.timeline.main.store.pin(event)
        return event

    def unpin(self, event: int) -> None:
        """Let the value `pin` kept (its event) be dropped again when the budget needs room."""
        self.timeline.main.store.unpin(event)

    @property
    def pinned(self) -> list[int]:
        """The events whose values are pinned."""
        return sorted(self.timeline.main.store.user_pins)

    def _pinned_event(self, name: Optional[str]) -> int:
        view = self.timeline.view
        if view is not self.timeline.main:
            raise ExecutionError("values inside a replayed body cannot be pinned; step out of it first")
        here = self._here()
        if name is None:
            if not self.trace.done(here):
                raise ExecutionError("the current op has not run yet: step over it, or name a value (pin %x)")
            return here
        ref = visible_refs(view, here, include_own=False).get(name)
        if not isinstance(ref, ResultRef):
            raise ExecutionError(f"{name} is not an op's result computed at this point (an argument is always kept)")
        return ref.event

    def unwatch(self, index: int) -> None:
        self.breakpoints.remove_watch(index)

    def watches(self) -> list[tuple[str, Any]]:
        """Each watch expression and its value here (or the message saying why it has none)."""
        out = []
        for text in self.breakpoints.watches:
            try:
                out.append((text, self.evaluate(text)))
            except HlodbgError as e:
                out.append((text, f"<{e}>"))
        return out

    # -- statistics ---------------------------------------------------------------------------
    def summary(self, event: Optional[int] = None, index: int = 0, exact: bool = False) -> ValueSummary:
        """min/max/mean/NaN/Inf of result `index` of an event, computed once and cached. A value of
        more than summary.SAMPLE_ABOVE elements gets mean/std from a sample unless `exact` (min,
        max and the NaN/Inf counts are exact either way)."""
        view = self.timeline.view
        e = self.position if event is None else event
        key = (id(view), e, index)
        found = self._stats.get(key)
        if found is None or (exact and not found.exact):
            outputs = EventView(view, e).outputs
            if index >= len(outputs):
                raise ExecutionError(f"event {e} has {len(outputs)} result(s), not {index + 1}")
            found = self._stats[key] = summarize(outputs[index], exact=exact)
        return found

    def op_statistics(self) -> dict[Operation, "OpStatistics"]:
        """Per op of the program: how often it ran so far, its time and bytes, its last value."""
        view = self.timeline.view
        trace = view.trace
        table: dict[Operation, OpStatistics] = {}
        for e, op in enumerate(trace.ops):
            if trace.ends[e] < 0 or not op.results:
                continue
            stats = table.get(op)
            if stats is None:
                stats = table[op] = OpStatistics(view, op, self.summary)
            stats.events.append(e)
            stats.seconds += trace.seconds(e)
        return table

    @property
    def memory_used(self) -> int:
        """What the recording's values hold (recording_bytes adds its history)."""
        return self.timeline.main.store.bytes

    @property
    def memory_budget(self) -> int:
        return self.timeline.main.store.budget

    @property
    def recording_bytes(self) -> int:
        """What the recording holds: its values and its history (the trace)."""
        store = self.timeline.main.store
        return store.bytes + store.trace.history_bytes()

    @property
    def recording_budget(self) -> int:
        """What the recording may hold before the run stops with "memory" (values.py)."""
        store = self.timeline.main.store
        return store.history_budget + store.allowance

    # -- breakpoints --------------------------------------------------------------------------
    def break_at(self, spec: str, condition: Optional[str] = None, ignore: int = 0, saved: bool = True) -> Breakpoint:
        """Add a breakpoint (see breakpoints.py for the forms); it is saved with the program
        unless `saved` is False (a launch option's breakpoint lives for this session only).
        `diverge [against TARGET]` compares this run with one on another target first
        (divergence.py) and stops right after the first op instance that differs."""
        from .divergence import divergence_breakpoint, parse_diverge_spec

        wanted = parse_diverge_spec(spec)
        if wanted is not None:
            return divergence_breakpoint(self, wanted, condition)
        return self.breakpoints.add(spec, condition, ignore, saved=saved)

    def hits(self, bp: Breakpoint) -> int:
        """How many times `bp` has been met from the start up to the current position."""
        return self.timeline.hit_number(bp, TimePoint.before(self._main_position())) - 1

    # -- controls -----------------------------------------------------------------------------
    def step(self) -> Stop:
        """Run the current op whole (calls and regions included) and stop at the next one."""
        view = self.timeline.view
        p = self._here()
        if p >= view.end:
            return self._at_end(view)
        if view.trace.done(p):
            return self._forward(target=view.trace.ends[p] + 1)
        return self._forward(after_event=p)

    def step_in(self) -> Stop:
        """Into the call, loop, branch or body the current op runs; else like step()."""
        view = self.timeline.view
        p = self._here()
        if p >= view.end:
            return self._at_end(view)
        self._ensure(p + 1)
        if self._expandable(p):
            expanded = self._expand(p)
            if expanded is not None:
                return expanded
        return self._forward(target=p + 1)

    def _expandable(self, p: int) -> bool:
        """An op with a body that the run computed without running the body as a region."""
        trace = self.timeline.view.trace
        return (p < len(trace) and trace.done(p) and trace.ends[p] == p and bool(trace.ops[p].regions)
                and has_expandable_body(trace.ops[p].name))

    def step_out(self) -> Stop:
        """Finish the current frame and stop just after the op that opened it."""
        view = self.timeline.view
        p = self._here()
        if p >= view.end:
            return self._at_end(view)
        owner = view.trace.frames[p].owner
        if owner is None:
            if view.parent is not None:
                return self._leave_view(forward=True)
            return self._forward(target=None)
        if view.trace.done(owner):
            return self._forward(target=view.trace.ends[owner] + 1)
        return self._forward(after_event=owner)

    def continue_(self) -> Stop:
        """Run to the next breakpoint hit, or the end."""
        return self._forward(target=None)

    def run_to(self, where: Union[str, Operation, int]) -> Stop:
        """Run to the next time an op runs (an Operation, an event id, or a breakpoint-style
        spec such as `%12` or `line 40`); breakpoints on the way still stop."""
        if isinstance(where, int):
            if where <= self.position:
                raise BreakpointError(f"event {where} is not ahead of the current position {self.position}")
            return self._forward(target=where)
        if isinstance(where, Operation):
            ops = frozenset([where])
        else:
            _, ops, _ = self.breakpoints.resolver.resolve(where)
        return self._forward(target=None, extra_ops=ops)

    def back(self) -> Stop:
        """Back to the previous op at this level (the reverse of step)."""
        view = self.timeline.view
        p = self._here()
        if p == 0:
            return self._leave_view(forward=False) if view.parent is not None else Stop("start", 0)
        trace = view.trace
        q = p - 1
        if trace.ends[q] < p:
            while True:
                owner = trace.frames[q].owner
                if owner is None or trace.ends[owner] != p - 1:
                    break
                q = owner
        return self._backward(q)

    def back_in(self) -> Stop:
        """Back to the op that ran just before, at any depth (the reverse of step_in)."""
        view = self.timeline.view
        p = self._here()
        if p == 0:
            return self._leave_view(forward=False) if view.parent is not None else Stop("start", 0)
        stop = self._backward(p - 1)
        if stop.reason == "step" and self._expandable(view.position):
            return self._expand(view.position, at_end=True) or stop
        return stop

    def back_out(self) -> Stop:
        """Back to just before the op that opened this frame (the reverse of step_out)."""
        view = self.timeline.view
        frame = self.frame
        if frame is None or (frame.owner is None and view.parent is not None):
            return self._leave_view(forward=False)
        return self._backward(frame.owner if frame.owner is not None else 0)

    def reverse_continue(self) -> Stop:
        """Back to the previous breakpoint hit, or the first op."""
        return self._backward(0, through_views=True)

    def goto(self, event: int) -> Stop:
        """Jump to an event (an op instance of the trace), running forward if it is ahead."""
        view = self.timeline.view
        if event < 0:
            raise BreakpointError(f"event {event} does not exist")
        self._ensure(event)
        if event > view.end or (event == view.end and not view.done):
            raise BreakpointError(f"event {event} does not exist: the run has {view.end} events")
        view.position = event
        return Stop("goto", event)

    # -- machinery ----------------------------------------------------------------------------
    def _here(self) -> int:
        """The current position, once its event has started (the run begins lazily)."""
        view = self.timeline.view
        self._ensure(view.position)
        return view.position

    def _ensure(self, position: int) -> None:
        """Run (without breakpoints) until event `position` has started, or the run is over."""
        view = self.timeline.view
        while view.execution is not None and position >= len(view.trace) and not view.execution.done:
            self._run(view, pause_at=position, breakpoints=())

    def _at_end(self, view: View) -> Stop:
        if view.parent is not None:
            return self._leave_view(forward=True)
        return self._end_stop(view)

    def _end_stop(self, view: View) -> Stop:
        error = view.execution.error if view.execution is not None else None
        if error is not None:
            view.position = max(0, len(view.trace) - 1)
            return Stop("error", view.position, message=str(error))
        view.position = view.end
        return Stop("end", view.position)

    def _run(self, view: View, pause_at: float = NEVER, after_event: Optional[int] = None,
             breakpoints: Sequence[Breakpoint] = (), extra_ops: frozenset = frozenset()) -> list[Hit]:
        """Let the background run go until it parks; returns the breakpoint hits that parked it."""
        recorder = self._recorder
        if recorder.history_full:
            recorder.history_full = False  # a move past a "memory" stop: its history may grow a little
            view.store.grant_more_history()
        gate = recorder.gate
        timeline = self.timeline
        hits, carried = timeline.arm_gate(gate, view, pause_at, after_event, breakpoints, extra_ops)
        try:
            view.execution.advance()
        finally:
            gate.reset()
            timeline.carry_ledgers(view.trace, carried, view.execution.state == "parked")
        return hits

    def _forward(self, target: Optional[int] = None, after_event: Optional[int] = None,
                 extra_ops: frozenset = frozenset()) -> Stop:
        view = self.timeline.view
        trace = view.trace
        p = view.position
        breakpoints = self.breakpoints.active if view.parent is None else []
        if target is None and after_event is not None and trace.done(after_event):
            target = trace.ends[after_event] + 1
        limit = len(trace) if view.done else len(trace) - 1
        scan_to = limit if target is None else min(target, limit)
        found = self.timeline.scan_forward(view, p, scan_to, breakpoints, extra_ops)
        if found is not None:
            view.position, hits = found
            return Stop("breakpoint" if any(h.breakpoint for h in hits) else "step", view.position, tuple(hits))
        if target is not None and target <= scan_to:
            view.position = target
            if target >= view.end and view.parent is not None:
                return self._leave_view(forward=True)
            return Stop("step", target) if target < view.end else self._end_stop(view)
        if view.done:
            if view.parent is not None:
                stop = self._leave_view(forward=True)
                if target is None and after_event is None and not stop.hits and stop.reason == "step":
                    # continue_ / run_to(op) from inside a replayed body go on in the run itself.
                    return self._forward(target=None, extra_ops=extra_ops)
                return stop
            return self._end_stop(view)
        hits = self._run(view, NEVER if target is None else target, after_event, breakpoints, extra_ops)
        execution = view.execution
        if execution.done:
            return self._end_stop(view)
        view.position = execution.parked_at
        if hits:
            return Stop("breakpoint" if any(h.breakpoint for h in hits) else "step", view.position, tuple(hits))
        reached = target is not None and view.position >= target
        if self._recorder.history_full and not reached:
            return Stop("memory", view.position, message=memory_full_message(view.store))
        return Stop("step" if reached or after_event is not None else "interrupted", view.position)

    def _backward(self, target: int, through_views: bool = False) -> Stop:
        view = self.timeline.view
        p = view.position
        breakpoints = self.breakpoints.active if view.parent is None else []
        found = self.timeline.scan_backward(view, p, target, breakpoints)
        if found is not None:
            view.position, hits = found
            return Stop("breakpoint", view.position, tuple(hits))
        if through_views and view.parent is not None:
            # reverse_continue from inside a replayed body goes on back through the run itself.
            self.timeline.view = view.parent
            self.timeline.view.position = view.base
            return self._backward(0, through_views=True)
        view.position = target
        return Stop("start" if target == 0 else "step", target)

    # -- expanded bodies ----------------------------------------------------------------------
    def _expand(self, event: int, at_end: bool = False) -> Optional[Stop]:
        """Step into an op whose body the run computed without running it as a region
        (views.expanded_view), showing that replay."""
        recorder = RecordingInterpreter(self.module, ValueStore(self.module, self._interpreter, self.budget),
                                        backend=self.backend, process=self.process, grid=self.grid)
        detail = expanded_view(self.timeline.view, event, recorder, at_end)
        if detail is None:
            return None
        self.timeline.view = detail
        return Stop("step", detail.position, message=detail.note)

    def _leave_view(self, forward: bool) -> Stop:
        view = self.timeline.view
        self.timeline.view = view.parent
        self.timeline.view.position = view.base
        if forward:
            return self.step()
        return Stop("step", view.base)

    def _main_position(self) -> int:
        view, position = self.timeline.view, self.timeline.view.position
        while view.parent is not None:
            view, position = view.parent, view.base
        return position
