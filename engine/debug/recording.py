"""Recording execution for the debugger: a run that keeps every value and can pause before any op.

`RecordingInterpreter` is the interpreter listening to its own hooks: it appends each op instance
to a `Trace` (op, frame, result, duration) and asks a `Gate` whether to pause before an op
starts or after it finishes. `Execution` runs it in a greenlet that parks at those pauses, so the session can step forward lazily through a program of any length (including one
that never ends) while every value it has seen stays recorded.
"""
from __future__ import annotations

import threading
import traceback
from time import perf_counter
from typing import Any, Literal, Optional, Sequence

import greenlet
import numpy as np

from ..ir.errors import ExecutionError, HlodbgError
from ..run.interpreter import Frame, Interpreter, Listener
from ..ir.core import Block
from ..ir.opset import has_aliasing_regions
from .trace import FrameRecord, Trace


NEVER = float("inf")

# ready -> running <-> parked -> finished | failed | abandoned
ExecutionState = Literal["ready", "running", "parked", "finished", "failed", "abandoned"]


class Abandoned(BaseException):
    """Unwinds a parked run the session no longer wants (restart, close). Not an Exception, so
    evaluators' `except Exception` handlers cannot swallow it."""


class Gate:
    """What the recording loop asks before and after every op; the session sets it while paused.

    `pause_at`: pause before the event with this id starts. `stop_ops`: ops with a breakpoint,
    asked about (`check_before(event, operands)`) before they run. `check_after(event)`: asked
    after each event finishes (value breakpoints, "pause once this op is done"); True pauses
    before the next event starts. `skip_output(out)`: when set, an op whose output it clears
    is not asked about, nor is a block's terminator (when only NaN/Inf breakpoints look at
    results: a cheap screen in the loop itself).
    """

    __slots__ = ("pause_at", "stop_ops", "check_before", "check_after", "skip_output")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.pause_at: float = NEVER
        self.stop_ops: frozenset = frozenset()
        self.check_before = None
        self.check_after = None
        self.skip_output = None


class RecordingInterpreter(Interpreter, Listener):
    """An interpreter that records every event into `self.trace` and pauses at the gate.

    It listens to its own hooks (the interpreter's observed loop): an op is appended to the trace
    when it is about to run, finished when its results are there, and a block's terminator is an
    event of its own; frames are recorded around every call and region body."""

    def __init__(self, module, store, execution: Optional["Execution"] = None, **kwargs):
        super().__init__(module, **kwargs)
        self.listeners = [self]
        self.trace: Trace = store.trace
        self.store = store
        self.gate = Gate()
        self.execution = execution
        self.expand_bodies = False
        self._record: Optional[FrameRecord] = None
        self._running: list[int] = []  # events whose evaluators are running, innermost last
        self._last_child: dict[int, FrameRecord] = {}
        self._hooks = None  # the observed loop's hooks, made for the current trace and store
        # Time spent parked, left out of the clock events are timed with.
        self.parked_seconds = 0.0

    def reset_recording(self, store) -> None:
        """Record a new run into `store`, keeping the compiled program (the previous run must
        have ended or been abandoned)."""
        self.trace = store.trace
        self.store = store
        self.gate.reset()
        self.execution = None
        self.frame = None
        self._record = None
        self._running = []
        self._last_child = {}
        self._hooks = None
        self.parked_seconds = 0.0

    def now(self) -> float:
        return perf_counter() - self.parked_seconds

    def _run_frame(self, frame: Frame, block: Block, args: list[Any]) -> list[Any]:
        owner = self._running[-1] if self._running else None
        parent = self._record
        trace = self.trace
        owner_op = frame.owner
        keep_args = owner is None or owner_op is None or not has_aliasing_regions(owner_op.name)
        previous = self._last_child.get(owner) if owner is not None else None
        record = FrameRecord(len(trace.frame_records), frame.kind, frame.function, block, owner, frame.iteration,
                             parent, previous, len(trace.ops), list(args) if keep_args else None)
        trace.frame_records.append(record)
        if owner is not None:
            self._last_child[owner] = record
        if keep_args:
            self.store.add_frame_args(record)
        self._record = record
        try:
            return super()._run_frame(frame, block, args)
        finally:
            self._record = parent

    # -- the interpreter's hooks: one event per op instance --------------------------------------
    def observe(self, frame: Frame):
        """The hooks for a run of a block: closures over the trace's lists, made once per recording
        (they run once per op of the program, so every lookup they can do ahead is done here)."""
        if self._hooks is None:
            self._hooks = self._make_hooks()
        return self._hooks

    def _make_hooks(self):
        trace = self.trace
        ops, ends, results = trace.ops, trace.ends, trace.results
        add_op, add_frame, add_end, add_result = ops.append, trace.frames.append, ends.append, results.append
        add_start, add_completed = trace.starts.append, trace.completed.append
        gate = self.gate
        running = self._running
        push, pop = running.append, running.pop
        store = self.store
        sizes = store.sizes
        ndarray = np.ndarray
        frame_finished = store.frame_finished
        held_bytes = store.held_bytes
        arrive = self._arrive
        clock = perf_counter

        def before_op(frame: Frame, op, operands: list) -> None:
            eid = len(ops)
            add_op(op)
            add_frame(self._record)
            add_end(-1)
            add_result(None)
            if eid >= gate.pause_at or op in gate.stop_ops:
                arrive(eid, operands)
            push(eid)
            add_start(clock() - self.parked_seconds)

        def finished(frame: Frame, op, operands: list, out: Any) -> None:
            eid = pop()
            results[eid] = out  # as the evaluator gave it: the value for one result, a list for several
            ends[eid] = len(ops) - 1
            add_completed(eid)
            # ValueStore.account, inlined: this runs once per op of the program.
            if type(out) is ndarray and out.base is None:
                size = out.nbytes
            else:
                size = held_bytes(out, operands)
            if size:
                sizes[eid] = size
                store.bytes += size
                if store.bytes > store.budget:
                    store.evict()
            check = gate.check_after
            if check is not None:
                skip = gate.skip_output
                if (skip is None or not skip(out)) and check(eid):
                    gate.pause_at = len(ops)

        def returning(frame: Frame, op, values: list) -> None:
            # A block's terminator is an event of its own: the place to stop before leaving it.
            record = self._record
            eid = len(ops)
            add_op(op)
            add_frame(record)
            add_end(eid)
            add_result(None)
            if eid >= gate.pause_at or op in gate.stop_ops:
                arrive(eid, values)
            add_start(clock() - self.parked_seconds)
            record.last = eid
            add_completed(eid)
            frame_finished(record)
            if gate.check_after is not None and gate.skip_output is None and gate.check_after(eid):
                gate.pause_at = len(ops)

        return before_op, finished, returning

    def _arrive(self, eid: int, operands: list) -> None:
        gate = self.gate
        if eid < gate.pause_at:
            # Only an op breakpoint brought us here: its condition decides.
            if gate.check_before is None or not gate.check_before(eid, operands):
                return
        if self.execution is not None:
            self.execution.park(eid)


class Execution:
    """Runs a RecordingInterpreter in a greenlet that parks at the gate's pauses.

    `advance()` lets the run go on until its next pause, the end or an error, and returns. A
    greenlet (not a thread) keeps parking and resuming to a switch of stacks: stepping costs
    microseconds and a run to the end costs what the run costs. States: ready -> running <->
    parked -> finished | failed | abandoned. A run belongs to the thread that started it;
    `interrupt()` may come from any thread.
    """

    def __init__(self, interpreter: RecordingInterpreter, entry: str, args: Sequence[Any]):
        self.interpreter = interpreter
        interpreter.execution = self
        self.entry = entry
        self.args = list(args)
        self.state: ExecutionState = "ready"
        self.parked_at: Optional[int] = None
        self.results: Optional[list] = None
        self.error: Optional[HlodbgError] = None
        self._greenlet: Optional[greenlet.greenlet] = None
        self._thread: Optional[int] = None  # the thread the run started in

    @property
    def done(self) -> bool:
        return self.state in ("finished", "failed", "abandoned")

    def advance(self) -> None:
        """Let the run go on until it parks again or ends (the gate says where to park)."""
        if self.done:
            return
        if self.state == "ready":
            self._thread = threading.get_ident()
            self._greenlet = greenlet.greenlet(self._main)
        self._check_thread()
        self._greenlet.parent = greenlet.getcurrent()
        self.state = "running"
        self._greenlet.switch()

    def fail(self, error: Optional[HlodbgError]) -> None:
        """End a run that cannot go on (a grid's process parked at a rendezvous that will never
        complete): it stays failed where it stopped, with `error` as the reason."""
        self.state = "failed"
        self.error = error

    def interrupt(self) -> None:
        """Make a running execution park before its next op (safe from any thread)."""
        self.interpreter.gate.pause_at = 0

    def abandon(self) -> None:
        """End the run for good; a parked one is unwound (its frames' cleanup runs)."""
        if self.state == "ready":
            self.state = "abandoned"
        elif self.state == "parked":
            self._check_thread()
            self.state = "abandoned"
            self._greenlet.parent = greenlet.getcurrent()
            self._greenlet.switch()

    def _check_thread(self) -> None:
        if threading.get_ident() != self._thread:
            raise ExecutionError("a debugging session is driven from the thread that created it; "
                                 "call it from one thread (interrupt() is the exception)")

    # -- inside the run -----------------------------------------------------------------------
    def park(self, eid: int) -> None:
        interpreter = self.interpreter
        interpreter.trace.clock_at_park = interpreter.now()
        parked = perf_counter()
        self.parked_at = eid
        self.state = "parked"
        self._greenlet.parent.switch()
        if self.state == "abandoned":
            raise Abandoned
        self.parked_at = None
        interpreter.parked_seconds += perf_counter() - parked

    def _main(self) -> None:
        results, error = None, None
        try:
            with np.errstate(all="ignore"):
                results = self.interpreter.run(self.entry, self.args)
        except Abandoned:
            self.state = "abandoned"
            return
        except (KeyboardInterrupt, greenlet.GreenletExit):
            self.state = "abandoned"  # the run cannot go on; the caller sees the interrupt
            raise
        except HlodbgError as e:
            error = e
        except RecursionError:
            error = ExecutionError("the program nests calls or regions too deeply to run")
        except Exception as e:  # noqa: BLE001 - a bug in hlodbg: keep the session alive and say so
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            error = ExecutionError(f"internal error in hlodbg while running the program: {detail}")
        self.interpreter.trace.clock_at_park = self.interpreter.now()
        self.results = results
        self.error = error
        self.state = "finished" if error is None else "failed"
