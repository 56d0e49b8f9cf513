"""The trace of a recorded run: every executed op instance (an event) and every frame it ran in.

Events are numbered in the order they start (pre-order), so the ops a while or a call runs get
the numbers between its own and the next op of its frame: stepping over event `e` goes to
`ends[e] + 1`, stepping in to `e + 1`. A frame's terminator (`func.return`, `stablehlo.return`) is
an event too: its operands are what the frame returns.

The trace is kept as parallel lists (one entry per event) because the recording loop appends to
them for every op and must stay cheap; `EventView` (views.py) gives a friendly face to one event.
Which event produced an operand is not stored: `operand_ref` works it out from the IR and the
frame records when someone asks.
"""
from __future__ import annotations

import bisect
from array import array
from typing import Any, NamedTuple, Optional, Union

from ..ir.core import Block, Function, Operation, Value
from ..ir.opset import has_aliasing_regions, results_from
from ..run.interpreter import describe_frame

# Marks a result that has not been computed yet, or that the value store dropped to stay under
# its memory budget (it is recomputed on demand).
PENDING = None


class Evicted:
    """A dropped value: `Trace.results[e]` holds this until the value store recomputes it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<evicted>"


EVICTED = Evicted()

# What the history of a run costs beyond its values, counted against the session's memory budget
# (ValueStore.limit): an event is six entries in the columns below (pointers and 8-byte numbers,
# with the lists' spare room); a frame record (one per call, branch and loop iteration) is its
# object, its event numbers and the list of its arguments. Measured with tracemalloc on a long
# loop (tests/test_history_memory.py keeps the estimate within a factor of 1.5 of the truth).
EVENT_BYTES = 64
FRAME_RECORD_BYTES = 256

class ResultRef(NamedTuple):
    """A recorded value that is result `index` of event `event`."""

    event: int
    index: int


class ArgRef(NamedTuple):
    """A recorded value that is block argument `index` of frame record `frame`."""

    frame: int
    index: int


ValueRef = Union[ResultRef, ArgRef]


class FrameRecord:
    """One frame instance: a call, a loop condition or body iteration, a branch, a region body."""

    __slots__ = ("id", "kind", "function", "block", "owner", "iteration", "parent", "previous", "first",
                 "last", "args", "depth", "_index", "_scanned")

    def __init__(self, id: int, kind: str, function: Function, block: Block, owner: Optional[int],
                 iteration: Optional[int], parent: Optional["FrameRecord"], previous: Optional["FrameRecord"],
                 first: int, args: Optional[list]):
        self.id = id
        self.kind = kind
        self.function = function
        self.block = block
        self.owner = owner  # event that opened the frame (None for the entry function)
        self.iteration = iteration
        self.parent = parent
        self.previous = previous  # the frame the same owner opened before this one (loop state)
        self.first = first  # id of the frame's first event
        self.last = -1  # id of its terminator event once the frame has finished
        self.args = args  # arrays of non-aliasing frames (entry arguments, body operands)
        self.depth: int = 0 if parent is None else parent.depth + 1
        self._index: Optional[dict[Operation, int]] = None  # made when first asked (event_of)
        self._scanned = first

    @property
    def is_vectorised_body(self) -> bool:
        return self.owner is not None and self.kind == "body"

    def describe(self, with_function: bool = True) -> str:
        return describe_frame(self.function.sym_name, self.kind, self.iteration, with_function)

    def chain(self) -> list["FrameRecord"]:
        """The frames from the entry function's down to this one (the stack a debugger shows and a
        stop report lists: the UI's frames pane and the CLI's `in:` line both read this walk)."""
        out: list[FrameRecord] = []
        frame: Optional[FrameRecord] = self
        while frame is not None:
            out.append(frame)
            frame = frame.parent
        out.reverse()
        return out

    def __repr__(self) -> str:
        return f"<FrameRecord {self.id} {self.describe()}>"


class Trace:
    """Parallel per-event lists, appended to by the recording interpreter."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []
        self.frames: list[FrameRecord] = []
        # Numbers are kept in arrays rather than lists (8 bytes an event instead of a pointer to
        # an int or float object of its own): a long loop records millions of events.
        self.ends = array("q")  # last event inside each event; -1 while it runs
        self.results: list[Any] = []  # what the evaluator returned (bare, or a list), or EVICTED
        # When each event started, on a clock that leaves out the time the run spent parked;
        # an event lasts until the next one after it starts (one clock reading per op).
        self.starts = array("d")
        self.clock_at_park = 0.0  # the clock when the run last parked or ended
        self.completed = array("q")  # event ids in the order they finished
        self.frame_records: list[FrameRecord] = []
        self.block_names: dict[Block, dict] = {}  # scope.find_ref's index of names each block defines

    def __len__(self) -> int:
        return len(self.ops)

    def history_bytes(self) -> int:
        """About what the trace itself holds (values aside): see EVENT_BYTES."""
        return EVENT_BYTES * len(self.ops) + FRAME_RECORD_BYTES * len(self.frame_records)

    def done(self, event: int) -> bool:
        return self.ends[event] >= 0

    def seconds(self, event: int) -> float:
        """How long `event` ran, nested events included (0 while it has not finished)."""
        end = self.ends[event]
        starts = self.starts
        if end < 0 or event >= len(starts):
            return 0.0
        after = starts[end + 1] if end + 1 < len(starts) else self.clock_at_park
        return max(0.0, after - starts[event])

    # -- structure ----------------------------------------------------------------------------
    def event_of(self, frame: FrameRecord, op: Operation) -> Optional[int]:
        """The event of `op` in `frame` (each op runs at most once per frame instance)."""
        index = frame._index
        if index is None:
            index = frame._index = {}
        found = index.get(op)
        if found is not None:
            return found
        ops, frames = self.ops, self.frames
        end = frame.last if frame.last >= 0 else len(ops) - 1
        e = frame._scanned
        while e <= end:
            if frames[e] is frame:
                index[ops[e]] = e
                e += 1
                continue
            # A nested frame's events: skip the whole op of this frame that opened it.
            owner = frames[e].owner
            while frames[owner] is not frame:
                owner = frames[owner].owner
            if self.ends[owner] < 0:
                break  # still running: look again later
            e = self.ends[owner] + 1
        frame._scanned = e
        return index.get(op)

    def frame_of_block(self, frame: FrameRecord, block: Block) -> Optional[FrameRecord]:
        """The frame among `frame` and its enclosing ones that runs `block`."""
        while frame is not None and frame.block is not block:
            if frame.kind == "function":
                return None  # values never cross a function boundary
            frame = frame.parent
        return frame

    def ref(self, frame: FrameRecord, value: Value) -> Optional["ValueRef"]:
        """Where `value`, as seen from `frame`, lives: result k of event e (ResultRef) or argument k
        of a frame record (ArgRef).

        None when it has not been produced (yet) in that frame instance.
        """
        owner = value.owner
        if isinstance(owner, Block):
            home = self.frame_of_block(frame, owner)
            return None if home is None else self.arg_ref(home, value.index)
        home = self.frame_of_block(frame, owner.parent)
        if home is None:
            return None
        e = self.event_of(home, owner)
        if e is None or self.ends[e] < 0:
            return None
        return ResultRef(e, value.index)

    def arg_ref(self, frame: FrameRecord, k: int) -> Optional["ArgRef"]:
        """Block argument `k` of `frame`, followed through calls and loop iterations (in a loop, not
        by recursion: state a loop passes on unchanged goes back through every iteration)."""
        while True:
            if frame.owner is None:
                return ArgRef(frame.id, k)
            owner_op = self.ops[frame.owner]
            if not has_aliasing_regions(owner_op.name):
                # Its own arguments, kept with the frame (or dropped and recomputed: values.py).
                return ArgRef(frame.id, k)
            previous = frame.previous
            if results_from(owner_op.name) == "carried" and previous is not None:
                if previous.kind == "while.cond":
                    frame = previous  # body #i starts from the state cond #i saw
                    continue
                event = previous.last  # cond #i+1 starts from what body #i returned
            else:
                event = frame.owner  # the call's (or first iteration's) operand k
            value = self.ops[event].operands[k]
            if not isinstance(value.owner, Block):
                return self.ref(self.frames[event], value)
            home = self.frame_of_block(self.frames[event], value.owner)
            if home is None:
                return None
            frame, k = home, value.index

    def operand_ref(self, event: int, k: int) -> Optional[tuple]:
        return self.ref(self.frames[event], self.ops[event].operands[k])

    # -- time ---------------------------------------------------------------------------------
    def first_completion_from(self, position: int) -> int:
        """Index in `completed` of the first event finishing after `position` started."""
        ends = self.ends
        return bisect.bisect_left(self.completed, position, key=lambda e: ends[e])

    def enclosing_iterations(self, event: int) -> tuple[int, ...]:
        """Loop iterations around `event`, outermost first."""
        return tuple(frame.iteration for frame in self.frames[event].chain() if frame.iteration is not None)
