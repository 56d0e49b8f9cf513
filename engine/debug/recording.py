"""Recording execution for the debugger: a run that keeps every value and can pause before any op.

`RecordingInterpreter` is the interpreter listening to its own observed loop: it appends each event
(op instance, and block terminator) to a `Trace` (op, frame, result, start time) and asks a `Gate`
whether to pause before an op starts or after it finishes. `Execution` runs it in a greenlet that parks at those pauses, so
the session can step forward lazily through a program of any length (including one that never
ends) while every value it has seen stays recorded.
"""
from __future__ import annotations

import threading
import traceback
import weakref
from time import perf_counter
from typing import Any, Literal, Optional, Sequence

import greenlet
import numpy as np

from ..ir.errors import ExecutionError, HlodbgError
from ..ir.opset import has_aliasing_regions
from ..run.deep_stack import StackThread, stack_thread_for
from ..run.interpreter import Frame, Interpreter, Listener
from .trace import FrameRecord, ResultRef, Trace

NEVER = float("inf")

# How often (in events) the recording asks the value store whether its history still fits: often
# enough that a loop of small ops passes its budget by under a megabyte, rarely enough to cost
# nothing per op.
HISTORY_CHECK_EVENTS = 4096

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
    before the next event starts. Which events it is asked about: every one, terminators
    included, unless `watched` or `skip_output` is set. `watched`: the ops whose breakpoints
    look at results (an op breakpoint's ops, where an expression's values are visible); only
    their events are asked about, so other ops pay one set lookup. `skip_output(out)`: an op
    whose output it clears is not asked about, nor is a terminator (when NaN/Inf breakpoints
    look at every result: a cheap screen in the loop itself).
    """

    __slots__ = ("pause_at", "stop_ops", "check_before", "check_after", "watched", "skip_output")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.pause_at: float = NEVER
        self.stop_ops: frozenset = frozenset()
        self.check_before = None
        self.check_after = None
        self.watched: Optional[frozenset] = None
        self.skip_output = None


class RecordingInterpreter(Interpreter, Listener):
    """An interpreter that records every event into `self.trace` and pauses at the gate: the
    observed loop (Interpreter._run_observed) with itself as its one listener, so the events it
    records are the loop's own, numbered by the loop's clock. Every call and region body is
    recorded as a frame; it takes no other listeners."""

    def __init__(self, module, store, execution: Optional["Execution"] = None, **kwargs):
        super().__init__(module, **kwargs)
        self.listeners = [self]
        self._aliasing_ops: dict = {}  # op -> whether its regions alias its operands (no frame args kept)
        self.trace: Trace = store.trace
        self.store = store
        self.gate = Gate()
        self.execution = execution
        self.expand_bodies = False
        self._record: Optional[FrameRecord] = None
        self._running: list[int] = []  # events whose evaluators are running, innermost last
        self._last_child: dict[int, FrameRecord] = {}
        # Time spent parked, left out of the clock events are timed with.
        self.parked_seconds = 0.0
        # The frames running, outermost first, each with the values it holds (a region's frame
        # shares its function's): what a checkpoint keeps (ValueStore.checkpoint).
        self._stack: list[tuple[FrameRecord, dict]] = []
        self.next_checkpoint = store.checkpoint_seconds
        self.next_history_check = HISTORY_CHECK_EVENTS
        # Set when the run parked because its history filled the store's budget; the session
        # reads and clears it (Session._forward: a "memory" stop).
        self.history_full = False

    def reset_recording(self, store) -> None:
        """Record a new run into `store`, keeping the compiled program (the previous run must
        have ended or been abandoned)."""
        self.trace = store.trace
        self.store = store
        self.gate.reset()
        self.execution = None
        self.frame = None
        self.events = 0
        self._record = None
        self._running = []
        self._last_child = {}
        self.parked_seconds = 0.0
        self._stack = []
        self.next_checkpoint = store.checkpoint_seconds
        self.next_history_check = HISTORY_CHECK_EVENTS
        self.history_full = False

    def release(self) -> None:
        """Forget the run recorded last (its trace, values, execution and printed lines), keeping
        the prepared steps."""
        self.trace = self.store = None
        self.execution = None
        self.frame = None
        self.gate.reset()
        self.printed = []
        self._record = None
        self._running = []
        self._last_child = {}
        self._stack = []

    def now(self) -> float:
        return perf_counter() - self.parked_seconds

    def _aliasing(self, op) -> bool:
        known = self._aliasing_ops.get(op)
        if known is None:
            known = self._aliasing_ops[op] = has_aliasing_regions(op.name)
        return known

    # -- recording: the loop's events, one per op instance and terminator -------------------------
    def enter_frame(self, frame: Frame, args: list) -> None:
        running = self._running
        owner = running[-1] if running else None
        trace = self.trace
        owner_op = frame.owner
        keep_args = owner is None or owner_op is None or not self._aliasing(owner_op)
        previous = self._last_child.get(owner) if owner is not None else None
        records = trace.frame_records
        record = FrameRecord(len(records), frame.kind, frame.function, frame.block, owner, frame.iteration,
                             self._record, previous, len(trace.ops), list(args) if keep_args else None)
        records.append(record)
        if owner is not None:
            self._last_child[owner] = record
        if keep_args:
            self.store.add_frame_args(record)
        self._record = record
        self._stack.append((record, frame.env))

    def exit_frame(self, frame: Frame, results: Optional[list]) -> None:
        record, _ = self._stack.pop()
        self._record = record.parent

    def before_op(self, event: int, frame: Frame, op, operands: list) -> None:
        """An op is about to run: it becomes event `event` of the trace; the gate may park here."""
        trace = self.trace
        trace.ops.append(op)
        trace.frames.append(self._record)
        trace.ends.append(-1)
        trace.results.append(None)
        gate = self.gate
        if event >= self.next_history_check:
            self._check_history(event)
        if event >= gate.pause_at or op in gate.stop_ops:
            self._arrive(event, operands)
        self._running.append(event)
        now = perf_counter() - self.parked_seconds
        trace.starts.append(now)
        if now >= self.next_checkpoint:
            self._checkpoint(now)

    def after_op(self, event: int, frame: Frame, op, operands: list, results: list) -> None:
        """The op of event `event` has its results: record them (as the evaluator gave them: the
        value for one result, the list for several), count their memory, ask the gate."""
        self._running.pop()
        trace = self.trace
        out = results[0] if len(results) == 1 else results
        trace.results[event] = out
        trace.ends[event] = len(trace.ops) - 1
        trace.completed.append(event)
        self.store.account(event, out, operands)
        gate = self.gate
        check = gate.check_after
        if check is not None:
            watched, skip = gate.watched, gate.skip_output
            if watched is not None and op in watched:
                if check(event):
                    gate.pause_at = len(trace.ops)
            elif (skip is None or not skip(out)) and (watched is None or skip is not None) and check(event):
                gate.pause_at = len(trace.ops)

    def returning(self, event: int, frame: Frame, op, values: list) -> None:
        """A block's terminator is an event of its own: the place to stop before leaving it."""
        trace = self.trace
        trace.ops.append(op)
        record = self._record
        trace.frames.append(record)
        trace.ends.append(event)
        trace.results.append(None)
        gate = self.gate
        if event >= gate.pause_at or op in gate.stop_ops:
            self._arrive(event, values)
        trace.starts.append(perf_counter() - self.parked_seconds)
        record.last = event
        trace.completed.append(event)
        if record.kind == "while.body":
            self.store.frame_finished(record)
        elif record.owner is None and record.parent is None:
            # The run's results: kept (the caller holds them anyway), so the end is never recomputed.
            self._checkpoint(perf_counter() - self.parked_seconds, final=True)
        if gate.check_after is not None and gate.skip_output is None and gate.watched is None and gate.check_after(event):
            gate.pause_at = len(trace.ops)

    def _checkpoint(self, now: float, final: bool = False) -> None:
        """Hand the store the values every running frame holds now (ValueStore.checkpoint)."""
        trace = self.trace
        transparent = self.backend.transparent_storage
        live, seen = [], set()
        for record, env in reversed(self._stack):  # innermost first: the frame that sees a value
            if id(env) in seen:
                continue
            seen.add(id(env))
            for value, held in env.items():
                ref = trace.ref(record, value)
                if isinstance(ref, ResultRef):
                    single = len(trace.ops[ref.event].results) == 1
                    live.append((ref.event, held if transparent and single else None))
        self.store.checkpoint(live, final)
        self.next_checkpoint = now + self.store.checkpoint_seconds

    def _check_history(self, event: int) -> None:
        """Every HISTORY_CHECK_EVENTS events: when the history no longer fits the store's budget,
        park before this event (the session reports a "memory" stop), so that a run that never
        ends holds bounded memory under `continue`."""
        self.next_history_check = event + HISTORY_CHECK_EVENTS
        if self.store.history_grew():
            self.history_full = True
            self.gate.pause_at = min(self.gate.pause_at, event)

    def _arrive(self, eid: int, operands: list) -> None:
        gate = self.gate
        if eid < gate.pause_at:
            # Only an op breakpoint brought us here: its condition decides.
            if gate.check_before is None or not gate.check_before(eid, operands):
                return
        if self.execution is not None:
            self.execution.park(eid)


# The prepared recorder of a session that has ended, per program (module), backend and process:
# the next session of the same program takes it (Session._start), so it does not prepare every op's
# step again (on a 12-layer transformer that was most of what a new session's run to its end cost).
_IDLE_RECORDERS: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def give_back_recorder(recorder: RecordingInterpreter) -> None:
    """`recorder`'s run has ended and its session will not run it again: keep it, without the
    run it recorded, for the next session of its program."""
    recorder.release()
    _IDLE_RECORDERS.setdefault(recorder.module, {})[recorder.process] = recorder


def take_idle_recorder(module: Any, backend: Any, process: Any) -> Optional[RecordingInterpreter]:
    """A recorder a closed session of `module` gave back, on this very backend and process."""
    idle = _IDLE_RECORDERS.get(module)
    recorder = idle.get(process) if idle is not None else None
    if recorder is None or recorder.backend is not backend:
        return None
    del idle[process]
    return recorder


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
        # Where the greenlet lives when the program nests calls deeper than that thread has room
        # for (engine/run/deep_stack.py): every switch to it happens there.
        self._stack: Optional[StackThread] = None

    @property
    def done(self) -> bool:
        return self.state in ("finished", "failed", "abandoned")

    def advance(self) -> None:
        """Let the run go on until it parks again or ends (the gate says where to park)."""
        if self.done:
            return
        if self.state == "ready":
            self._thread = threading.get_ident()
            self._stack = stack_thread_for(self.interpreter.module)
        self._check_thread()
        self._on_stack(self._advance)

    def _advance(self) -> None:
        if self._greenlet is None:
            self._greenlet = greenlet.greenlet(self._main)
        self._greenlet.parent = greenlet.getcurrent()
        self.state = "running"
        self._greenlet.switch()

    def _on_stack(self, work) -> None:
        """`work()` where the greenlet lives; the stack thread ends with the run."""
        stack = self._stack
        if stack is None:
            work()
            return
        try:
            stack.call(work)
        finally:
            if self.done:
                stack.close()

    def fail(self, error: Optional[HlodbgError]) -> None:
        """End a run that cannot go on (a grid's process parked at a rendezvous that will never
        complete): it stays failed where it stopped, with `error` as the reason."""
        self.state = "failed"
        self.error = error

    def interrupt(self) -> None:
        """Make a running execution park before its next op (safe from any thread); nothing once
        it has ended (its recorder may record another session's run by then)."""
        if not self.done:
            self.interpreter.gate.pause_at = 0

    def abandon(self) -> None:
        """End the run for good; a parked one is unwound (its frames' cleanup runs)."""
        if self.state == "ready":
            self.state = "abandoned"
        elif self.state == "parked":
            self._check_thread()
            self.state = "abandoned"
            self._on_stack(self._unwind)

    def _unwind(self) -> None:
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
