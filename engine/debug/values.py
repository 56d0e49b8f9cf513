"""The value store: every recorded value, a memory budget, and recomputation of dropped values.

Recording keeps what each op returned. When the values kept pass the budget, the oldest ones are
dropped; asking for a dropped value recomputes it by replaying the op that produced it on its
operands (recomputing those first if they were dropped too). Ops are deterministic given their
operands, so a replayed value is bit-identical to the recorded one. What cannot be replayed is
never dropped: the entry arguments, random numbers, queues and collectives (and ops whose regions
or callees hold such ops). The state a while loop carries is kept at every K-th iteration as a
checkpoint, so replaying a value late in a long loop starts from a nearby iteration instead of
the beginning; K doubles whenever checkpoints would take more than half the budget. Each running
loop also keeps its latest FIRST_CHECKPOINT_STRIDE-th iteration's state (the *frontier*, one loop
state per loop, whatever the budget): a breakpoint tested at every op reads values near the end of
the run, and without it a budget smaller than one loop state (`--memory 1K`) thinned every
checkpoint away, so each such read replayed the loop from its start (quadratic in the iterations).
"""
from __future__ import annotations

from collections import deque
from typing import Any, NamedTuple, Optional

import numpy as np

from ..ir.core import Module, Operation, Value, symbol_name
from ..ir.errors import ExecutionError
from ..ir.opset import callee_attribute, is_replayable, results_from
from ..machine.xla.device_values import device_bytes, is_device_array
from ..run.interpreter import Frame, Interpreter, Listener
from .budget import (
    ARRAY_OVERHEAD,
    FIRST_CHECKPOINT_SECONDS,
    SMALLEST_HISTORY_BUDGET,
    default_budget,
    default_history_budget,
    memory_owner,
)
from .trace import EVICTED, FrameRecord, ResultRef, Trace, ValueRef

FIRST_CHECKPOINT_STRIDE = 8


class FrameArgs(NamedTuple):
    """The store's key for the block arguments a frame record keeps (events are keyed by id)."""

    frame: int


class _Captured(BaseException):
    """Stops a replay once the frame arguments it was run for have been seen."""


class _CaptureFrameArgs(Listener):
    def __init__(self, top: Frame, index: int):
        self.top = top
        self.index = index
        self.seen = -1
        self.args: Optional[list] = None

    def enter_frame(self, frame: Frame, args: list) -> None:
        if frame.parent is self.top:
            self.seen += 1
            if self.seen == self.index:
                self.args = list(args)
                raise _Captured


class ValueStore:
    """Recorded values of one run, within `budget` bytes, recomputed on demand when dropped."""

    def __init__(self, module: Module, interpreter_factory, budget: Optional[int] = None, arguments_bytes: int = 0,
                 history_budget: Optional[int] = None):
        self._module = module
        self.trace = Trace()
        self.budget = default_budget(arguments_bytes) if budget is None else max(0, int(budget))
        if history_budget is not None:  # a device's share of a grid's (GridSession)
            self.history_budget = max(self.budget, history_budget)
        elif budget is None:
            self.history_budget = max(self.budget, default_history_budget())
        else:
            self.history_budget = max(self.budget, SMALLEST_HISTORY_BUDGET)
        # What values may keep now: the budget, less what the history takes of it (history_grew).
        self.limit = self.budget
        self.allowance = 0  # history_budget's growth granted by moves after a "memory" stop
        self.bytes = 0  # bytes of recorded values currently kept (the recording loop adds to it)
        self.evicted = 0  # values dropped so far
        self.recomputed = 0  # values recomputed so far
        self.sizes: dict[Any, int] = {}  # event id, or FrameArgs, -> bytes it holds
        self._cursor = 0  # eviction has considered trace.completed[:_cursor]
        self._later: deque = deque()  # recomputed values, frame arguments, unpinned checkpoints
        self._pinned: set = set()
        self._hold: set = set()
        self.user_pins: set = set()  # events whose values the user asked to keep (pin)
        self._checkpoint_stride = FIRST_CHECKPOINT_STRIDE
        self._checkpoints: dict[int, list[int]] = {}  # body frame id -> events kept for it
        self._checkpointed: set = set()  # the events of _checkpoints
        self._frontier: dict[int, list[int]] = {}  # while event -> the events of its latest loop state kept
        self._checkpoint_bytes = 0
        # Checkpoints of the live state (ValueStore.checkpoint), oldest first, and how many of them
        # hold each event.
        self.checkpoint_seconds = FIRST_CHECKPOINT_SECONDS
        self._live_checkpoints: list[list[int]] = []
        self._held_live: dict[int, int] = {}
        self._make_interpreter = interpreter_factory
        self._quiet: Optional[Interpreter] = None
        self._replayable: dict[int, bool] = {}
        self._free: dict[Operation, list[Value]] = {}
        self._external: dict[int, Any] = {}  # id -> what holds the entry arguments' memory

    # -- recording side (called by the recording loop) ----------------------------------------
    def held_bytes(self, out: Any, operands: Optional[list] = None) -> int:
        """The memory keeping `out` holds that nothing else accounts for.

        An array owning its data holds its bytes. A view holds nothing when what it views is held
        anyway: an entry argument (the caller keeps it), a memory-mapped file (its pages belong to
        the file; an argument mapped from a 1 GB file costs no recorded bytes), or, given the op's
        `operands`, one of them (recorded where it was made). A view of anything else (a
        contraction's transposed temporary) keeps that whole array alive: it holds its bytes.
        Without `operands` (frame arguments, which are values recorded elsewhere) views hold nothing."""
        if isinstance(out, (list, tuple)):
            return sum(self.held_bytes(element, operands) for element in out)
        if not isinstance(out, np.ndarray):
            # A device array owns its buffer (the XLA backend's values; entry arguments stay numpy).
            return device_bytes(out) + ARRAY_OVERHEAD if is_device_array(out) else 0
        if out.base is None:
            return 0 if id(out) in self._external else out.nbytes + ARRAY_OVERHEAD
        owner = memory_owner(out)
        if operands is None or not isinstance(owner, np.ndarray) or id(owner) in self._external:
            return 0
        for operand in operands:
            if isinstance(operand, np.ndarray) and memory_owner(operand) is owner:
                return 0
            if isinstance(operand, tuple) and any(isinstance(o, np.ndarray) and memory_owner(o) is owner
                                                  for o in operand):
                return 0
        return owner.nbytes + ARRAY_OVERHEAD

    def account(self, eid: int, out: Any, operands: Optional[list] = None) -> None:
        """An event finished with `out`: count the memory it holds, and drop older values when
        the budget is passed. Runs once per op of the program, so it stays small."""
        if type(out) is np.ndarray and out.base is None:
            size = out.nbytes + ARRAY_OVERHEAD
        else:
            size = self.held_bytes(out, operands)
        if size:
            self.sizes[eid] = size
            self.bytes += size
            if self.bytes > self.limit:
                self.evict()

    def history_grew(self) -> bool:
        """The trace has grown (the recording loop says so every few thousand events): values
        may keep less (`limit`: never under a quarter of the budget, so that stepping back near
        the end is not all recomputation). True when the history and what values must keep pass
        the history budget: the recording is full and the run should stop."""
        history = self.trace.history_bytes()
        room = self.history_budget + self.allowance - history
        self.limit = max(self.budget // 4, min(self.budget, room))
        if self.bytes > self.limit:
            self.evict()
        return history + self.bytes > self.history_budget + self.allowance

    def grant_more_history(self) -> None:
        """A move asked to go on past a "memory" stop: let the history grow by an eighth of its
        budget more (each such move is the user's choice; the run stops again after that)."""
        self.allowance += max(1, self.history_budget // 8)

    def add_frame_args(self, record: FrameRecord) -> None:
        key = FrameArgs(record.id)
        if record.owner is None or not self._op_replayable(self.trace.ops[record.owner]):
            self._pinned.add(key)
        if record.owner is None:  # the entry's arguments: the caller holds them, recording adds nothing
            for value in record.args:
                for array in value if isinstance(value, tuple) else (value,):
                    if isinstance(array, np.ndarray):
                        owner = memory_owner(array)
                        self._external[id(owner)] = owner  # kept, so that its id is not reused
            return
        size = self.held_bytes(record.args)
        if size:
            self.sizes[key] = size
            self._later.append(key)
            self.bytes += size

    def frame_finished(self, record: FrameRecord) -> None:
        """Keep the state a loop carries at every K-th iteration (a replay checkpoint), and at
        every FIRST_CHECKPOINT_STRIDE-th as the loop's frontier."""
        if record.kind != "while.body" or record.iteration % FIRST_CHECKPOINT_STRIDE:
            return
        state = []
        for k in range(len(self.trace.ops[record.last].operands)):
            ref = self.trace.operand_ref(record.last, k)
            if isinstance(ref, ResultRef):
                state.append(ref.event)
        self._advance_frontier(record.owner, state)
        if record.iteration % self._checkpoint_stride:
            return
        kept = [e for e in state if e not in self._checkpointed]
        self._checkpointed.update(kept)
        self._pinned.update(kept)
        self._checkpoint_bytes += sum(self.sizes.get(e, 0) for e in kept)
        self._checkpoints[record.id] = kept
        if self._checkpoint_bytes > self.budget // 2:
            self._thin_checkpoints()

    def checkpoint(self, live: list[tuple[int, Any]], final: bool = False) -> None:
        """Keep the values live at this point of the run (`live`: each one's event, and its array
        when the run still holds it): a checkpoint of the run's state.

        Why it bounds going back: a value computed after this point reads only values computed
        after it or values live at it, so recomputing any later value (values.py's replay) stops
        at this checkpoint's values instead of running back to the program's start. A value the
        budget dropped while the run still held it is kept again from the run's own array (no
        recomputation). The values are shared with the run (arrays are never written once made),
        so a checkpoint costs only what it keeps alive after the run lets it go; when checkpoints
        would hold more than half the budget, every other one is let go and they are taken half
        as often. `final`: the values the run ends with."""
        results, sizes, held = self.trace.results, self.sizes, self._held_live
        kept = []
        live_now = {event for event, _ in live}
        for event, array in live:
            if results[event] is EVICTED:
                if array is None:
                    continue
                results[event] = array
                self._requeue(event, self.held_bytes(array))
            held[event] = held.get(event, 0) + 1
            kept.append(event)
        self._pinned.update(kept)
        self._live_checkpoints.append(kept)
        if final:
            # The caller holds the run's results from now on, as it holds its arguments: keeping
            # them costs the recording nothing.
            for event in kept:
                self.bytes -= sizes.pop(event, 0)
        # What checkpoints cost is what they keep that the run no longer holds itself. The run's
        # results (`final`) are held by its caller: their checkpoint costs nothing, and the ones
        # before it are what going back needs.
        while not final and len(self._live_checkpoints) > 1 and self._kept_beyond(live_now) > self.budget // 2:
            self._thin_live_checkpoints()

    def _kept_beyond(self, live_now: set) -> int:
        """Bytes the checkpoints of the live state keep beyond `live_now`, the run's own values."""
        sizes = self.sizes
        return sum(sizes.get(event, 0) for event in self._held_live if event not in live_now)

    def _thin_live_checkpoints(self) -> None:
        """Let every other checkpoint of the live state go (the newest stays) and take them half as
        often from now on."""
        self.checkpoint_seconds = max(2 * self.checkpoint_seconds, 1e-4)
        checkpoints = self._live_checkpoints
        let_go = [events for i, events in enumerate(checkpoints) if i % 2 == len(checkpoints) % 2]
        self._live_checkpoints = [events for i, events in enumerate(checkpoints) if i % 2 != len(checkpoints) % 2]
        held, released = self._held_live, []
        for events in let_go:
            for event in events:
                held[event] -= 1
                if held[event] == 0:
                    del held[event]
                    released.append(event)
        self._release(released)

    def _advance_frontier(self, loop: int, state: list[int]) -> None:
        """`state` becomes the frontier of the while op at event `loop`; the one it replaces, and
        those of loops that have finished, are let go (unless a checkpoint keeps them)."""
        ends = self.trace.ends
        for other in [o for o in self._frontier if o == loop or ends[o] >= 0]:
            self._release(self._frontier.pop(other))
        self._frontier[loop] = state
        self._pinned.update(state)

    def _release(self, events: list[int]) -> None:
        """Unpin `events` that no checkpoint or frontier keeps, so eviction may drop them."""
        kept = self._checkpointed.union(*self._frontier.values()) if self._frontier else self._checkpointed
        held = self._held_live
        for e in events:
            if e in self._pinned and e not in kept and e not in held:
                self._pinned.discard(e)
                self._later.append(e)

    def _thin_checkpoints(self) -> None:
        self._checkpoint_stride *= 2
        records = self.trace.frame_records
        for frame_id in list(self._checkpoints):
            if records[frame_id].iteration % self._checkpoint_stride:
                events = self._checkpoints.pop(frame_id)
                self._checkpointed.difference_update(events)
                self._checkpoint_bytes -= sum(self.sizes.get(e, 0) for e in events)
                self._release(events)

    def evict(self, target: Optional[int] = None) -> None:
        """Drop the oldest droppable values until at most `target` bytes (¾ budget) are kept.

        Oldest means first finished: the trace's completion list is the queue, so recording
        needs no queue of its own; recomputed values and frame arguments wait in `_later`.
        """
        target = self.limit * 3 // 4 if target is None else target
        sizes, trace, completed, later = self.sizes, self.trace, self.trace.completed, self._later
        skipped = []
        while self.bytes > target:
            if self._cursor < len(completed):
                key = completed[self._cursor]
                self._cursor += 1
            elif later:
                key = later.popleft()
            else:
                break
            size = sizes.get(key)
            if size is None:
                continue
            if key in self._pinned or key in self._hold or key in self.user_pins or not self._droppable(key):
                if key not in self._pinned:
                    skipped.append(key)  # held for now: droppable later
                continue
            del sizes[key]
            self.bytes -= size
            self.evicted += 1
            if isinstance(key, FrameArgs):
                trace.frame_records[key.frame].args = None
            else:
                trace.results[key] = EVICTED
        later.extend(skipped)

    def _droppable(self, key: Any) -> bool:
        trace = self.trace
        if isinstance(key, FrameArgs):
            record = trace.frame_records[key.frame]
            return record.owner is not None and trace.ends[record.owner] >= 0
        return trace.ends[key] >= 0 and self._op_replayable(trace.ops[key])

    # -- reading side -------------------------------------------------------------------------
    def pin(self, eid: int) -> None:
        """Keep event `eid`'s value from now on (recomputed first if it had been dropped): a value
        the user watches is read at once however far the run goes. It counts against the budget."""
        self.output(eid)
        self.user_pins.add(eid)

    def unpin(self, eid: int) -> None:
        """Let a pinned value be dropped again, oldest first, when the budget needs room."""
        if eid in self.user_pins:
            self.user_pins.discard(eid)
            if eid in self.sizes:
                self._later.append(eid)

    def output(self, eid: int) -> Any:
        """What event `eid`'s evaluator returned (recomputed if it had been dropped)."""
        out = self.trace.results[eid]
        if out is EVICTED:
            self._materialise([eid])
            out = self.trace.results[eid]
        return out

    def value(self, ref: ValueRef) -> Any:
        if isinstance(ref, ResultRef):
            out = self.output(ref.event)
            return out if len(self.trace.ops[ref.event].results) == 1 else out[ref.index]
        record = self.trace.frame_records[ref.frame]
        if record.args is None:
            self._materialise([FrameArgs(ref.frame)])
        return record.args[ref.index]

    def _available(self, item: Any) -> bool:
        if isinstance(item, FrameArgs):
            return self.trace.frame_records[item.frame].args is not None
        return self.trace.results[item] is not EVICTED

    def _dependencies(self, item: Any) -> list:
        trace = self.trace
        if isinstance(item, FrameArgs):
            # Frame arguments come from replaying the op that opened the frame: its inputs.
            return self._replay_dependencies(trace.frame_records[item.frame].owner)
        inner = self._inner_refs(item)
        if inner is not None:
            return [ref.event if isinstance(ref, ResultRef) else FrameArgs(ref.frame) for ref in inner]
        return self._replay_dependencies(item)

    def _inner_refs(self, event: int) -> Optional[list]:
        """Where the results of a call, branch or loop event live inside the last frame it ran
        (opdefs `results_from`), or None for any other event: recomputing such a result recomputes
        those values, from the checkpoints inside that frame, rather than running the op whole."""
        trace = self.trace
        op = trace.ops[event]
        kind = results_from(op.name)
        end = trace.ends[event]
        if not kind or end <= event:
            return None
        frame = trace.frames[end]
        while frame is not None and frame.owner != event:
            frame = frame.parent
        if frame is None or frame.last < 0:
            return None
        if kind == "returned":
            refs = [trace.operand_ref(frame.last, k) for k in range(len(op.results))]
        else:
            refs = [trace.arg_ref(frame, k) for k in range(len(op.results))]
        return None if any(ref is None for ref in refs) else refs

    def _replay_dependencies(self, item: int) -> list:
        """The values replaying event `item`'s op needs: its operands and its regions' free values."""
        trace = self.trace
        op, frame = trace.ops[item], trace.frames[item]
        refs = [trace.ref(frame, v) for v in op.operands] + [trace.ref(frame, v) for v in self.free_values(op)]
        deps = []
        for ref in refs:
            if ref is None:
                raise ExecutionError(f"cannot replay {op.name}: an operand was never recorded", op.pos)
            deps.append(ref.event if isinstance(ref, ResultRef) else FrameArgs(ref.frame))
        return deps

    def _materialise(self, targets: list) -> None:
        """Recompute `targets` and whatever dropped values they need, oldest first, iteratively."""
        # Make room first: what this call recomputes stays until the next one, so callers can
        # read it even when the budget is smaller than the value.
        if self.bytes > self.limit:
            self.evict()
        stack = list(targets)
        hold = self._hold
        try:
            while stack:
                item = stack[-1]
                if self._available(item):
                    stack.pop()
                    continue
                missing = [d for d in self._dependencies(item) if not self._available(d)]
                if missing:
                    stack.extend(missing)
                    continue
                self._recompute(item)
                hold.add(item)
                stack.pop()
        finally:
            hold.clear()

    def _recompute(self, item: Any) -> None:
        trace = self.trace
        inner = None if isinstance(item, FrameArgs) else self._inner_refs(item)
        if inner is not None:
            values = [self.value(ref) for ref in inner]
            out = values[0] if len(values) == 1 else values
            trace.results[item] = out
            self._requeue(item, self.held_bytes(out))
            self.recomputed += 1
            return
        event = trace.frame_records[item.frame].owner if isinstance(item, FrameArgs) else item
        op, frame = trace.ops[event], trace.frames[event]
        operands = [self.value(trace.ref(frame, v)) for v in op.operands]
        env = {v: self.value(trace.ref(frame, v)) for v in self.free_values(op)}
        interpreter = self._interpreter()
        step = interpreter.step_for(op)
        replay_frame = replay_frame_of(trace, frame, env)
        interpreter.frame = replay_frame
        try:
            with np.errstate(all="ignore"):
                if isinstance(item, FrameArgs):
                    record = trace.frame_records[item.frame]
                    capture = _CaptureFrameArgs(replay_frame, _sibling_index(record))
                    interpreter.listeners = [capture]
                    try:
                        step.evaluator(step.call, *operands)
                    except _Captured:
                        pass
                    if capture.args is None:
                        raise ExecutionError(f"replaying {op.name} did not reach {record.describe()}", op.pos)
                    record.args = capture.args
                    self._requeue(item, self.held_bytes(record.args))
                else:
                    out = step.folded if step.folded is not None else step.evaluator(step.call, *operands)
                    trace.results[event] = out
                    self._requeue(event, self.held_bytes(out, operands))
        finally:
            interpreter.listeners = []
            interpreter.frame = None
        self.recomputed += 1

    def _requeue(self, key: Any, size: int) -> None:
        if size:
            self.sizes[key] = size
            self._later.append(key)
            self.bytes += size

    def _interpreter(self) -> Interpreter:
        if self._quiet is None:
            self._quiet = self._make_interpreter()
        return self._quiet


    # -- static facts about ops -----------------------------------------------------------------
    def free_values(self, op: Operation) -> list[Value]:
        """Values an op's regions use that are defined outside the op (in visiting order)."""
        found = self._free.get(op)
        if found is None:
            inside: set = set()
            used: dict = {}
            for region in op.regions:
                for block in region.blocks:
                    inside.update(block.arguments)
                    for nested in block.operations:
                        for inner in nested.walk():
                            inside.update(inner.results)
                            for region2 in inner.regions:
                                for block2 in region2.blocks:
                                    inside.update(block2.arguments)
                            for v in inner.operands:
                                used.setdefault(v, None)
            found = self._free[op] = [v for v in used if v not in inside]
        return found

    def _op_replayable(self, op: Operation, visiting: Optional[set] = None) -> bool:
        known = self._replayable.get(id(op))
        if known is not None:
            return known
        visiting = set() if visiting is None else visiting
        if id(op) in visiting:
            return True  # recursion: decided by the other ops
        visiting.add(id(op))
        # An op whose results depend on more than its operands would not reproduce what the run
        # saw; a call is as replayable as the function it calls.
        ok = is_replayable(op.name)
        callee_attr = callee_attribute(op.name)
        if ok and callee_attr is not None:
            attr = op.attributes.get(callee_attr)
            callee = self._module.functions.get(symbol_name(attr)) if attr is not None else None
            ok = callee is not None and all(self._op_replayable(inner, visiting) for inner in callee.ops)
        if ok:
            for region in op.regions:
                for block in region.blocks:
                    if not all(self._op_replayable(inner, visiting) for inner in block.operations):
                        ok = False
                        break
        self._replayable[id(op)] = ok
        return ok


def replay_frame_of(trace: Trace, record: FrameRecord, env: dict) -> Frame:
    """The frame an op of `record` is replayed in, seeing `env`: its owners and iterations are
    those of the recorded frames, so an evaluator that asks where it runs (a capture's, by
    capture_format.frame_context) gets the answer the recorded run got."""

    def mirrored(record: Optional[FrameRecord]) -> Optional[Frame]:
        if record is None:
            return None
        owner = trace.ops[record.owner] if record.owner is not None else None
        return Frame(record.function, record.kind, owner, record.iteration, mirrored(record.parent), {})

    owner = trace.ops[record.owner] if record.owner is not None else None
    return Frame(record.function, "replay", owner, record.iteration, mirrored(record.parent), env)


def _sibling_index(record: FrameRecord) -> int:
    index = 0
    previous = record.previous
    while previous is not None:
        index += 1
        previous = previous.previous
    return index
